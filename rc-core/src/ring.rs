//! A ring of staged input planes (`distribution = planes(V)`, 3D): where a block's input planes
//! sit in shared memory and how its threads copy them there.
//!
//! The warps of a block stack along y (warp `w` computes output rows `w * rows_per_warp ..` of
//! the block's rows) over one x tile and one z range, and stream along z one output plane per
//! step. The `2rz + 1` input planes an output plane reads sit in the ring's slots, each plane
//! with the block's y halo and every lane's x window, copied once per block: a plane's rows are
//! read from global memory `(B * rows + 2ry) / (B * rows)` times where a warp of its own re-reads
//! `(rows + 2ry) / rows` (bench/results/2026-11-24-h100-staged3d-probe). Box plane `z` of step
//! `k` is in slot `(k + z) mod slots`; the plane a step fetches ahead (box plane `slots` of step
//! `k`, box plane `slots - 1` of step `k + 1`) goes to slot `k mod slots`, the one step `k`'s
//! oldest plane leaves free.

use crate::distribution::vector_access_elements;
use crate::pattern::Pattern;
use crate::scalar::ScalarType;

/// The ring of one input field; the fields' rings follow each other in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneRing {
    /// Slots: the `2rz + 1` input planes one output plane reads.
    pub slots: u32,
    /// Rows of a staged plane: the block's output rows and the y halo on both sides.
    pub rows: u32,
    /// Elements of a staged row: tile elements `0..row_elements` (input index `tile_start -
    /// lead` on), every lane's window, in whole copy vectors.
    pub row_elements: u32,
    /// Elements per copy vector (16 bytes, or the lane's run if shorter).
    pub width: u32,
    /// Output rows each warp of the block computes.
    pub rows_per_warp: u32,
    /// Threads of the block, which all copy.
    pub threads: u32,
    /// Bytes of one element.
    pub element_bytes: u32,
}

impl PlaneRing {
    /// The ring of a block of `pattern` whose lanes read tile elements `0..elements` of each
    /// row in runs of `vector`.
    pub fn new(pattern: &Pattern, vector: u32, element: ScalarType, elements: u32) -> PlaneRing {
        let width = vector_access_elements(vector, element);
        let warps = pattern.tiles_per_block();
        PlaneRing {
            slots: 2 * pattern.radius().along(2) + 1,
            rows: warps * pattern.rows_per_warp() + 2 * pattern.radius().along(1),
            row_elements: elements.div_ceil(width) * width,
            width,
            rows_per_warp: pattern.rows_per_warp(),
            threads: pattern.threads_per_block(),
            element_bytes: element.bytes(),
        }
    }

    /// Copy vectors of one staged row.
    pub fn chunks_per_row(&self) -> u32 {
        self.row_elements / self.width
    }

    /// Copy vectors of one staged plane: vector `c` is row `c / chunks_per_row`, elements
    /// `width * (c % chunks_per_row) ..` of it, at plane position `c * width`.
    pub fn chunks(&self) -> u32 {
        self.rows * self.chunks_per_row()
    }

    /// Rounds of a plane's copy: thread `t` copies vectors `t`, `t + threads`, ... below
    /// [`PlaneRing::chunks`], and holds `rounds * width` elements between fetch and put.
    pub fn rounds(&self) -> u32 {
        self.chunks().div_ceil(self.threads)
    }

    pub fn row_bytes(&self) -> u32 {
        self.row_elements * self.element_bytes
    }

    pub fn slot_bytes(&self) -> u32 {
        self.rows * self.row_bytes()
    }

    /// Bytes of one field's ring.
    pub fn field_bytes(&self) -> u32 {
        self.slots * self.slot_bytes()
    }

    /// The slot box plane `plane` of the step whose ring phase is `phase` sits in.
    pub fn slot(&self, phase: u32, plane: u32) -> u32 {
        (phase + plane) % self.slots
    }

    /// Where element `e` of row `row` of slot `slot` sits, in elements from the field's ring start.
    pub fn position(&self, slot: u32, row: u32, e: u32) -> u32 {
        (slot * self.rows + row) * self.row_elements + e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Radius;
    use crate::pattern::Boundary;

    #[test]
    fn the_probe_ring_of_a_star_r1_block_of_four_warps_is_29376_bytes() {
        // bench/probes/staged3d.cu: R = 1, RY = 4, 4 warps, rows of 136 floats.
        let pattern = Pattern::grid(Radius::zyx(1, 1, 1), 32, 4, 4, 32, Boundary::Clamp).expect("valid");
        let pattern = pattern.with_launch_bounds(128, None).expect("valid");
        let ring = PlaneRing::new(&pattern, 4, ScalarType::F32, 134);
        assert_eq!((ring.slots, ring.rows, ring.row_elements, ring.width), (3, 18, 136, 4));
        assert_eq!(ring.field_bytes(), 29376);
        assert_eq!(ring.rounds(), (18 * 34u32).div_ceil(128));
        assert_eq!(ring.slot(2, 2), 1);
        assert_eq!(ring.position(1, 2, 3), (18 + 2) * 136 + 3);
    }
}
