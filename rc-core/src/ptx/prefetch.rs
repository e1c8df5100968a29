//! The L2 prefetch of an interior 2D tile ([`crate::prefetch`]): the warp's lanes share the lines
//! of some of the tile's input rows, `prefetch_rows` rows below the tile's, in rounds of one line
//! each.

use super::{Printer, LANE, N, TILE_START};
use crate::abi::KernelParam;
use crate::prefetch::{lines_per_row, rounds, LINE_BYTES};

impl Printer<'_> {
    /// [`crate::machine::Op::PrefetchL2`]: line `k = lane + warp * round` is line `k mod lines`
    /// of input box row `first + k / lines`, prefetched where that is one of the `rows`, the
    /// distance is not 0 and the row, moved down by it, lies inside the input.
    pub(super) fn prefetch_l2(&mut self, field: u32, first_row: u32, rows: u32, elements: u32) {
        let pattern = self.program.pattern;
        let bytes = self.program.element.bytes();
        let lines = lines_per_row(elements, bytes);
        let (warp, slots) = (pattern.warp(), rows * lines);
        let Some(grid) = self.grid.clone() else { return };
        self.comment(&format!(
            "L2 prefetch{}: input box rows {first_row}..{} x {lines} lines of {LINE_BYTES} bytes (the tile's {elements} columns), prefetch_rows below",
            self.of_field(field),
            first_row + rows
        ));
        let name = self.param_name(&KernelParam::PrefetchRows.suffix());
        let (distance, first, on) = (self.a(), self.a(), self.q());
        self.line(&format!("ld.param.u64 {distance}, [{name}];"));
        self.line(&format!("setp.ne.u64 {on}, {distance}, 0;"));
        // The row `distance` below input box row `first_row` of the tile (never negative on the
        // interior path, where box row 0 is).
        self.line(&format!("add.s64 {first}, {}, {distance};", grid.tile_y));
        let offset = i64::from(first_row) - i64::from(pattern.shift_along(1));
        if offset != 0 {
            self.line(&format!("add.s64 {first}, {first}, {offset};"));
        }
        let input = self.input(field);
        for round in 0..rounds(rows, elements, bytes, warp) {
            let (row, line) = (self.t(), self.t());
            let k = match round {
                0 => LANE.to_string(),
                _ => {
                    let k = self.t();
                    self.line(&format!("add.u32 {k}, {LANE}, {};", round * warp));
                    k
                }
            };
            self.line(&format!("div.u32 {row}, {k}, {lines};"));
            self.line(&format!("rem.u32 {line}, {k}, {lines};"));
            let (y, q) = (self.a(), self.q());
            self.line(&format!("cvt.u64.u32 {y}, {row};"));
            self.line(&format!("add.u64 {y}, {y}, {first};"));
            self.line(&format!("setp.lt.and.u64 {q}, {y}, {}, {on};", grid.in_y));
            // The last round's lanes past the tile's lines.
            if (round + 1) * warp > slots {
                self.line(&format!("setp.lt.and.u32 {q}, {k}, {slots}, {q};"));
            }
            let (index, at, offset) = (self.a(), self.a(), self.a());
            self.line(&format!("mad.lo.u64 {index}, {y}, {N}, {TILE_START};"));
            self.line(&format!("mad.lo.u64 {at}, {index}, {bytes}, {input};"));
            self.line(&format!("mul.wide.u32 {offset}, {line}, {LINE_BYTES};"));
            self.line(&format!("add.u64 {at}, {at}, {offset};"));
            self.line(&format!("@{q} prefetch.global.L2 [{at}];"));
        }
    }
}
