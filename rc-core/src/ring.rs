//! A ring of staged input planes (`distribution = planes(V)`, 3D): where a block's input planes
//! sit in shared memory and how its threads copy them there.
//!
//! The warps of a block stack along y (warp `w` computes output rows `w * rows_per_warp ..` of
//! the block's rows) over one x tile and one z range, and stream along z one output plane per
//! step. The `2rz + 1` input planes an output plane reads sit in the ring's slots, each plane
//! with the block's y halo and every lane's x window, copied once per block: a plane's rows are
//! read from global memory `(B * rows + 2ry) / (B * rows)` times where a warp of its own re-reads
//! `(rows + 2ry) / rows` (bench/results/HISTORY.md: 2026-11-24-h100-staged3d-probe). Box plane `z` of step
//! `k` is in slot `(k + z) mod slots`; the plane a step fetches ahead (box plane `slots` of step
//! `k`, box plane `slots - 1` of step `k + 1`) goes to slot `k mod slots`, the one step `k`'s
//! oldest plane leaves free.
//!
//! After the slots, each vector's first and last `side` elements again, vector after vector
//! (the heads and the tails): a lane's window row starts with the last `rx mod V` elements of
//! one vector and ends with the first of another, and read from the row those pieces, 4 or 8
//! bytes at a 16-byte lane stride, hit every bank four or two times (ncu on an H200: half the
//! shared-memory passes of a box r = 1 tile were such conflicts, and the L1 data pipe at 94%
//! bounded it; bench/results/HISTORY.md: 2026-11-24-h200-planes3d2). Read from the heads or tails the lanes'
//! pieces are consecutive, one pass per 128 bytes.

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
    /// Elements of each vector copied again into the heads (its first ones) and the tails (its
    /// last ones): `rx mod width` where that is a power of two up to a quarter of `width`, else
    /// 0 (none).
    pub side: u32,
}

/// Where a window read of the ring reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingPart {
    /// The slot's row.
    Row,
    /// The heads: each vector's first [`PlaneRing::side`] elements.
    Heads,
    /// The tails: each vector's last [`PlaneRing::side`] elements.
    Tails,
}

impl PlaneRing {
    /// The ring of a block of `pattern` whose lanes read tile elements `0..elements` of each
    /// row in runs of `vector`.
    pub fn new(pattern: &Pattern, vector: u32, element: ScalarType, elements: u32) -> PlaneRing {
        let width = vector_access_elements(vector, element);
        let warps = pattern.tiles_per_block();
        // One aligned piece at each end of a window row; at most a quarter vector, so the heads
        // and tails add at most half the slots' bytes (which bound the blocks per SM). Only for
        // warps of at most 2 rows: at 4 rows per warp and r = 1 they made the tiles slower on an
        // H200 (star 0.73 -> 0.61, box 0.64 -> 0.57 of copy, warps waiting on the plane fetch)
        // and made ptxas spill a box's sum (bench/results/HISTORY.md: 2026-11-24-h200-planes3d2): five
        // blocks' 44 KB rings take the 228 KB shared-memory configuration, leaving the fetch 28
        // KB of L1 (star at four blocks and 60 KB: 0.68; bench/results/HISTORY.md: 2026-11-24-h200-planes3d3).
        let partial = pattern.radius().along_x() % width;
        let side =
            if partial.is_power_of_two() && 4 * partial <= width && pattern.rows_per_warp() <= 2 { partial } else { 0 };
        PlaneRing {
            slots: 2 * pattern.radius().along(2) + 1,
            rows: warps * pattern.rows_per_warp() + 2 * pattern.radius().along(1),
            row_elements: elements.div_ceil(width) * width,
            width,
            rows_per_warp: pattern.rows_per_warp(),
            threads: pattern.threads_per_block(),
            element_bytes: element.bytes(),
            side,
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

    /// Elements of the slots (the heads and tails follow them).
    fn slot_elements(&self) -> u32 {
        self.slots * self.rows * self.row_elements
    }

    /// Elements of the heads (and as many of the tails): `side` per copy vector of each slot.
    fn side_elements(&self) -> u32 {
        self.slots * self.chunks() * self.side
    }

    /// Bytes of one field's ring: the slots, the heads and the tails, in whole 16 bytes.
    pub fn field_bytes(&self) -> u32 {
        ((self.slot_elements() + 2 * self.side_elements()) * self.element_bytes).next_multiple_of(16)
    }

    /// Where the heads (`Heads`) or tails (`Tails`) of row `row` of slot `slot` start, in
    /// elements from the field's ring start: copy vector `c` of the row has its `side` there
    /// from `c * side` on. `Row`: the row itself.
    pub fn part_start(&self, part: RingPart, slot: u32, row: u32) -> u32 {
        let entry = (slot * self.rows + row) * self.chunks_per_row() * self.side;
        match part {
            RingPart::Row => self.position(slot, row, 0),
            RingPart::Heads => self.slot_elements() + entry,
            RingPart::Tails => self.slot_elements() + self.side_elements() + entry,
        }
    }

    /// Whether `len` elements from element `e` of a row lie wholly in its `part`.
    fn holds(&self, part: RingPart, e: u32, len: u32) -> bool {
        let at = e % self.width;
        match part {
            RingPart::Row => true,
            RingPart::Heads => self.side > 0 && at + len <= self.side,
            RingPart::Tails => self.side > 0 && at >= self.width - self.side && at + len <= self.width,
        }
    }

    /// Where element `e` of a row sits within that row's `part` (which holds it): `e` itself
    /// in the row; in the heads or tails, `side` per copy vector before its own, plus its place
    /// in the vector's piece.
    pub fn part_offset(&self, part: RingPart, e: u32) -> u32 {
        let (vector, at) = (e / self.width, e % self.width);
        match part {
            RingPart::Row => e,
            RingPart::Heads => vector * self.side + at,
            RingPart::Tails => vector * self.side + (at + self.side).saturating_sub(self.width),
        }
    }

    /// Where the lanes' pieces of `len` elements from elements `e`, `e + stride`, ... are read:
    /// the heads or the tails where each lies wholly in one, a power of two no longer than
    /// `side` (so aligned there), and the lanes a whole number of copy vectors apart; else the row.
    pub fn part_for(&self, e: u32, stride: u32, len: u32) -> RingPart {
        let fits = |part| stride % self.width == 0 && len.is_power_of_two() && self.holds(part, e, len);
        [RingPart::Heads, RingPart::Tails].into_iter().find(|&part| fits(part)).unwrap_or(RingPart::Row)
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
    use crate::boundary::Boundary;
    use crate::geometry::Radius;

    #[test]
    fn the_probe_ring_of_a_star_r1_block_of_four_warps_is_29376_bytes() {
        // bench/probes/staged3d.cu: R = 1, RY = 4, 4 warps, rows of 136 floats.
        let pattern = Pattern::grid(Radius::zyx(1, 1, 1), 32, 4, 4, 32, Boundary::Clamp).expect("valid");
        let pattern = pattern.with_launch_bounds(128, None).expect("valid");
        let ring = PlaneRing::new(&pattern, 4, ScalarType::F32, 134);
        // Warps of 4 rows keep no heads and tails (see `PlaneRing::new`).
        assert_eq!((ring.slots, ring.rows, ring.row_elements, ring.width, ring.side), (3, 18, 136, 4, 0));
        assert_eq!(ring.field_bytes(), 29376);
        assert_eq!(ring.rounds(), (18 * 34u32).div_ceil(128));
        assert_eq!(ring.slot(2, 2), 1);
        assert_eq!(ring.position(1, 2, 3), (18 + 2) * 136 + 3);
    }

    #[test]
    fn window_pieces_at_a_vector_edge_read_from_the_heads_and_tails() {
        // Warps of 2 rows: rows of 4 * 2 + 2 * r.
        let ring = |r: u32| {
            let pattern = Pattern::grid(Radius::zyx(r, r, r), 32, 4, 2, 32, Boundary::Clamp).expect("valid");
            PlaneRing::new(&pattern.with_launch_bounds(128, None).expect("valid"), 4, ScalarType::F32, 136)
        };
        // f32: radius 1 and 5 leave one element at each end; 2 (half a vector) and 3 none.
        assert_eq!([1, 2, 3, 5].map(|r| ring(r).side), [1, 0, 0, 1]);
        let one = ring(1);
        // r = 1: element 3 (the last of vector 0) and 8 (the first of vector 2).
        assert_eq!(one.part_for(3, 4, 1), RingPart::Tails);
        assert_eq!(one.part_offset(RingPart::Tails, 3 + 4 * 5), 5);
        assert_eq!(one.part_for(8, 4, 1), RingPart::Heads);
        assert_eq!(one.part_offset(RingPart::Heads, 8), 2);
        assert_eq!(
            (one.part_for(4, 4, 4), one.part_for(4, 4, 1), one.part_for(3, 2, 1)),
            (RingPart::Row, RingPart::Heads, RingPart::Row)
        );
        assert_eq!(ring(2).part_for(2, 4, 2), RingPart::Row);
        // Vectors of 8 with two at each end: 6..8 the tails, 8..10 and 8 the heads.
        let wide = PlaneRing { width: 8, side: 2, row_elements: 272, ..one };
        assert_eq!((wide.part_for(6, 8, 2), wide.part_offset(RingPart::Tails, 6 + 8)), (RingPart::Tails, 2));
        assert_eq!(
            (wide.part_for(8, 8, 2), wide.part_for(9, 8, 1), wide.part_offset(RingPart::Heads, 9)),
            (RingPart::Heads, RingPart::Heads, 3)
        );
        assert_eq!((wide.part_for(5, 8, 2), wide.part_for(4, 8, 4)), (RingPart::Row, RingPart::Row));
        // The tails follow the heads, which follow the slots.
        assert_eq!(one.part_start(RingPart::Heads, 0, 0), 3 * 10 * 136);
        assert_eq!(one.part_start(RingPart::Tails, 1, 2), 3 * 10 * 136 + 3 * 10 * 34 + (10 + 2) * 34);
    }
}
