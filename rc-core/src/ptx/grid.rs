//! The outer dimensions of a 2D or 3D kernel: which tile a warp computes, where each input and
//! output row of the tile starts, and the row half of the tile tests and the boundary rule.
//!
//! Along x a 2D or 3D kernel is the 1D kernel: `N` and `N_OUT` hold the input's and the
//! output's row lengths (not their total lengths) and `TILE_START` the tile's first output
//! along x, so every x computation (lane starts, the boundary rule along x, the tile tests'
//! x halves) is printed by the 1D code. This file adds the rows: input row `k` of the tile
//! ([`Pattern::input_rows`]) and output row `k` ([`Pattern::output_rows`]).
//!
//! [`Pattern::input_rows`]: crate::pattern::Pattern::input_rows
//! [`Pattern::output_rows`]: crate::pattern::Pattern::output_rows

use std::collections::HashMap;

use super::rule::Last;
use super::{Buffer, Op, Printer, Stmt, CTAID, INPUT, LANE, N, N_MINUS_1, N_OUT, OUTPUT, TID, TILE_START};
use crate::abi::KernelParam;
use crate::geometry::{Axis, Dims};
use crate::machine::index::Given;

/// Registers a 2D or 3D kernel's prologue sets up.
#[derive(Clone, Debug)]
pub(super) struct Grid {
    /// Lengths along y and z of the input and the output (z's only in 3D).
    pub(super) in_y: String,
    pub(super) in_z: Option<String>,
    out_y: String,
    out_z: Option<String>,
    /// Where the input rows a tile reads with no test on its stores end along the outermost
    /// axis ([`crate::launch_map::Placement::input_end`]).
    input_end: String,
    /// The tile's first output row and plane.
    pub(super) tile_y: String,
    pub(super) tile_z: Option<String>,
    /// Input element index of the tile's input row 0 at x = 0, and output element index of its
    /// output row 0 at x = 0: where row addresses start on the paths that need no boundary
    /// rule (wrapping arithmetic elsewhere, where they are not used).
    row0_in: String,
    row0_out: String,
    /// The input's and the output's row lengths in 32 bits ([`Pattern::MAX_ROW`]), for
    /// [`Printer::next_row_start`].
    ///
    /// [`Pattern::MAX_ROW`]: crate::pattern::Pattern::MAX_ROW
    row_in: String,
    row_out: String,
    /// Bytes from one row (plane) to the next, input and output.
    pitch_in: String,
    plane_in: Option<String>,
    pitch_out: String,
    plane_out: Option<String>,
    /// Rows a whole number of vector accesses long (so each row's vectors are aligned).
    pub(super) in_aligned: Option<String>,
    out_aligned: Option<String>,
    /// A streaming tile's step along z in elements, input and output: what moving one plane
    /// adds to `row0_in` and `row0_out`.
    plane_elements: Option<(String, String)>,
    /// Staged planes: the ring's registers ([`super::ring`]).
    pub(super) ring: Option<RingRegs>,
}

/// The caches of a path ([`Printer::kept_across`]).
#[derive(Clone, Debug)]
pub(super) struct KeptPath {
    lane_starts: HashMap<(Buffer, u32, u32), String>,
    output_rows: HashMap<u32, String>,
}

/// Whether `stmt` moves the tile or loops (so what was computed before it no longer holds).
fn moves_tile(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Op(op) => matches!(op, Op::Advance | Op::Stream { .. } | Op::TurnRing),
        Stmt::Loop { .. } => true,
        Stmt::Branch { taken, fallback, .. } => taken.iter().chain(fallback).any(moves_tile),
    }
}

/// Registers of a kernel of staged planes.
#[derive(Clone, Debug)]
pub(super) struct RingRegs {
    /// The ring's phase: box plane `z` of the current step is in slot `(phase + z) mod slots`.
    pub phase: String,
    /// The warp's place in its block along y (u32).
    pub warp: String,
    /// The block's first input row along y (its first output row less the y shift; s64).
    pub first_row: String,
    /// The input x of a staged row's first element: the tile's start less the lead (s64).
    pub first_x: String,
    /// Per round of a plane's copy, the same at every plane: where the thread's vector lies.
    pub vectors: Vec<FetchVector>,
}

/// Where a thread's copy vector of one round of a plane's fetch lies ([`crate::ring`]).
#[derive(Clone, Debug)]
pub(super) struct FetchVector {
    /// Bytes from its plane's start under the rules along y and x, for rows of whole vectors
    /// (s64; [`Printer::fetch_vectors`]).
    pub offset: String,
    /// Under `clamp`, where rows have vectors of more than one element: a register and the
    /// bit from which two bits say whether the vector lies before its row's start or past its
    /// end ([`Printer::fetch_vectors`]).
    pub side: Option<(String, u32)>,
    /// Under `valid` and `zero`: whether it lies inside along y and x.
    pub live: Option<String>,
    /// Whether the thread copies one in that round (`None`: every thread does).
    pub guard: Option<String>,
}

impl Printer<'_> {
    /// The 2D/3D prologue: parameters, then the tile the launch map places the warp on
    /// ([`crate::launch_map`]), then where its rows start.
    pub(super) fn grid_prologue(&mut self) {
        let pattern = self.program.pattern;
        let warp = pattern.warp();
        let three = pattern.dims() == Dims::Three;
        let [input, output] =
            [KernelParam::Input { field: 0 }, KernelParam::Output { field: 0 }].map(|p| self.param_name(&p.suffix()));
        let extent = |p: &mut Self, axis: u32, output: bool| -> String {
            let reg = p.a();
            match p.program.declared_axis(axis) {
                Some(axis) => {
                    let name = p.param_name(&KernelParam::Extent { axis, output }.suffix());
                    p.line(&format!("ld.param.u64 {reg}, [{name}];"));
                }
                None => p.line(&format!("mov.u64 {reg}, 1;")),
            }
            reg
        };
        self.comment(
            "2D/3D: N and N_OUT are the input's and the output's row lengths; global warp t computes tile t, row-major",
        );
        self.line(&format!("ld.param.u64 {INPUT}, [{input}];"));
        self.line(&format!("ld.param.u64 {OUTPUT}, [{output}];"));
        let x_in = self.param_name(&KernelParam::Extent { axis: 0, output: false }.suffix());
        let x_out = self.param_name(&KernelParam::Extent { axis: 0, output: true }.suffix());
        self.line(&format!("ld.param.u64 {N}, [{x_in}];"));
        self.line(&format!("ld.param.u64 {N_OUT}, [{x_out}];"));
        let in_y = extent(self, 1, false);
        let out_y = extent(self, 1, true);
        let (in_z, out_z) =
            if three { (Some(extent(self, 2, false)), Some(extent(self, 2, true))) } else { (None, None) };
        self.line(&format!("cvta.to.global.u64 {INPUT}, {INPUT};"));
        self.line(&format!("cvta.to.global.u64 {OUTPUT}, {OUTPUT};"));
        self.other_fields();
        self.line(&format!("sub.u64 {N_MINUS_1}, {N}, 1;"));
        self.line(&format!("mov.u32 {TID}, %tid.x;"));
        self.line(&format!("mov.u32 {CTAID}, %ctaid.x;"));
        self.line(&format!("and.b32 {LANE}, {TID}, {};", warp - 1));
        let first_row = self.a();
        let name = self.param_name(&KernelParam::FirstRow.suffix());
        self.line(&format!("ld.param.u64 {first_row}, [{name}];"));
        let extents =
            [(in_y.clone(), out_y.clone()), (in_z.clone().unwrap_or_default(), out_z.clone().unwrap_or_default())];
        let placed = self.placement(&|given| match given {
            Given::Extent { axis, output } => match (extents.get(axis.index().wrapping_sub(1)), output) {
                (Some((_, out)), true) => out.clone(),
                (Some((input, _)), false) => input.clone(),
                (None, _) => String::new(),
            },
            Given::FirstRow => first_row.clone(),
            _ => String::new(),
        });
        let (tile_y, tile_z) = (placed.start[1].clone().unwrap_or_default(), placed.start[2].clone());
        let input_end = placed.input_end.clone().unwrap_or_default();
        let bytes = self.program.element.bytes();
        let (row_in, row_out) = (self.t(), self.t());
        self.line(&format!("cvt.u32.u64 {row_in}, {N};"));
        self.line(&format!("cvt.u32.u64 {row_out}, {N_OUT};"));
        let (pitch_in, pitch_out) = (self.a(), self.a());
        self.line(&format!("mul.lo.u64 {pitch_in}, {N}, {bytes};"));
        self.line(&format!("mul.lo.u64 {pitch_out}, {N_OUT}, {bytes};"));
        let (plane_in, plane_out) = match three {
            true => {
                let (pi, po) = (self.a(), self.a());
                self.line(&format!("mul.lo.u64 {pi}, {pitch_in}, {in_y};"));
                self.line(&format!("mul.lo.u64 {po}, {pitch_out}, {out_y};"));
                (Some(pi), Some(po))
            }
            false => (None, None),
        };
        // Row 0's element index: ((tile_z - shift_z) * in_y + tile_y - shift_y) * in_x.
        let row0_in = self.a();
        self.line(&format!("sub.s64 {row0_in}, {tile_y}, {};", pattern.shift_along(1)));
        if let Some(tile_z) = &tile_z {
            let z = self.a();
            self.line(&format!("sub.s64 {z}, {tile_z}, {};", pattern.shift_along(2)));
            self.line(&format!("mad.lo.s64 {row0_in}, {z}, {in_y}, {row0_in};"));
        }
        self.line(&format!("mul.lo.s64 {row0_in}, {row0_in}, {N};"));
        let row0_out = self.a();
        match &tile_z {
            Some(tile_z) => self.line(&format!("mad.lo.u64 {row0_out}, {tile_z}, {out_y}, {tile_y};")),
            None => self.line(&format!("mov.u64 {row0_out}, {tile_y};")),
        }
        self.line(&format!("mul.lo.u64 {row0_out}, {row0_out}, {N_OUT};"));
        let width = self.program.machine.width;
        let aligned = |p: &mut Self, len: &str| -> Option<String> {
            (width > 1).then(|| {
                let (rest, q) = (p.a(), p.q());
                p.line(&format!("and.b64 {rest}, {len}, {};", width - 1));
                p.line(&format!("setp.eq.u64 {q}, {rest}, 0;"));
                q
            })
        };
        let in_aligned = aligned(self, N);
        let out_aligned = aligned(self, N_OUT);
        let plane_elements = match (pattern.streams(), &in_z) {
            (true, Some(_)) => {
                let (step_in, step_out) = (self.a(), self.a());
                self.line(&format!("mul.lo.u64 {step_in}, {in_y}, {N};"));
                self.line(&format!("mul.lo.u64 {step_out}, {out_y}, {N_OUT};"));
                Some((step_in, step_out))
            }
            _ => None,
        };
        let ring = placed.warp_in_block.filter(|_| self.program.ring.is_some()).map(|warp| {
            let (phase, first_row) = (self.t(), self.a());
            self.line(&format!("mov.u32 {phase}, 0;"));
            self.line(&format!("mul.wide.u32 {first_row}, {warp}, {};", pattern.rows_per_warp()));
            self.line(&format!("sub.s64 {first_row}, {tile_y}, {first_row};"));
            self.line(&format!("sub.s64 {first_row}, {first_row}, {};", pattern.shift_along(1)));
            let first_x = self.a();
            self.line(&format!("sub.s64 {first_x}, {TILE_START}, {};", self.program.schedule.lead));
            let vectors = self.fetch_vectors(&first_row, &first_x, &in_y);
            RingRegs { phase, warp, first_row, first_x, vectors }
        });
        self.grid = Some(Grid {
            ring,
            input_end,
            in_y,
            in_z,
            out_y,
            out_z,
            tile_y,
            tile_z,
            row0_in,
            row0_out,
            row_in,
            row_out,
            pitch_in,
            plane_in,
            pitch_out,
            plane_out,
            in_aligned,
            out_aligned,
            plane_elements,
        });
    }

    /// What the path has computed, if both arms of a branch and the code after it may reuse it:
    /// in a one-step 2D/3D kernel whose arms do not move the tile. Each output row's stores are
    /// a branch, and dropping what was computed before it made every later row recompute its
    /// lanes' input and output starts (about 20 instructions per row of a 2D box r = 4 tile).
    /// Input rows under the boundary rule are not kept: kept (with the rows' tests), the
    /// boundary path held every row's index across the tile and 2D star r = 2 spilled 128 bytes
    /// against 48 and ran at 0.81 of copy against 0.88 (bench/results/HISTORY.md: 2026-11-24-h200-grid2d3).
    /// 1D and fused kernels forget at every branch, as they always did.
    pub(super) fn kept_across(&self, arms: &[&[Stmt]]) -> Option<KeptPath> {
        self.keeps_across(arms)
            .then(|| KeptPath { lane_starts: self.lane_starts.clone(), output_rows: self.output_rows.clone() })
    }

    /// Whether [`Printer::kept_across`] keeps anything across `arms`.
    fn keeps_across(&self, arms: &[&[Stmt]]) -> bool {
        let one_step = self.grid.is_some() && self.program.fused.is_none();
        one_step && !arms.iter().any(|arm| arm.iter().any(moves_tile))
    }

    /// Starts an arm of a branch (or the code after it) with what `kept` holds, or with nothing.
    pub(super) fn resume_path(&mut self, kept: &Option<KeptPath>) {
        match kept {
            Some(kept) => {
                self.lane_starts = kept.lane_starts.clone();
                self.rule_vectors.clear();
                self.input_rows.clear();
                self.output_rows = kept.output_rows.clone();
            }
            None => self.forget_path(),
        }
    }

    /// In a one-step 2D/3D kernel, the lane starts of the vector stores in `taken` (a row's
    /// stores), computed before the row's test so that every later row reuses output row 0's.
    pub(super) fn store_starts_before(&mut self, taken: &[Stmt]) {
        if !self.keeps_across(&[taken]) {
            return;
        }
        for stmt in taken {
            if let Stmt::Op(Op::StoreVector { field, at, row, .. }) = stmt {
                self.lane_start(Buffer::Output(*field), at.stride, 0, *row);
            }
        }
    }

    /// A streaming tile moves one plane along z: its plane and its rows' starts follow, and
    /// every address computed from them is recomputed.
    pub(super) fn advance(&mut self) {
        let Some(grid) = self.grid.clone() else { return };
        let (Some(tile_z), Some((step_in, step_out))) = (&grid.tile_z, &grid.plane_elements) else { return };
        self.comment("the tile moves one plane along z");
        self.line(&format!("add.u64 {tile_z}, {tile_z}, 1;"));
        self.line(&format!("add.s64 {}, {}, {step_in};", grid.row0_in, grid.row0_in));
        self.line(&format!("add.u64 {}, {}, {step_out};", grid.row0_out, grid.row0_out));
        self.forget_path();
    }

    /// Fused time steps: the tile moves `by` rows (y) or planes (z) along `axis`
    /// ([`Op::Stream`](crate::machine::Op::Stream)). The two differ in what a step along the
    /// axis spans in memory (a row, or a plane of `in_y` and `out_y` rows), so each has its own
    /// printer; x never streams.
    pub(super) fn stream(&mut self, axis: Axis, by: i32) {
        match axis {
            Axis::Y => self.stream_rows(by),
            Axis::Z => self.stream_planes(by),
            Axis::X => {}
        }
    }

    /// Fused time steps in 2D: the tile moves `rows` rows along y; its rows' starts follow, and
    /// every address computed from them is recomputed.
    fn stream_rows(&mut self, rows: i32) {
        let Some(grid) = self.grid.clone() else { return };
        self.comment(&format!("the tile moves {rows} rows along y"));
        self.line(&format!("add.s64 {}, {}, {rows};", grid.tile_y, grid.tile_y));
        let (step_in, step_out) = (self.a(), self.a());
        self.line(&format!("mul.lo.s64 {step_in}, {N}, {rows};"));
        self.line(&format!("mul.lo.s64 {step_out}, {N_OUT}, {rows};"));
        self.line(&format!("add.s64 {}, {}, {step_in};", grid.row0_in, grid.row0_in));
        self.line(&format!("add.s64 {}, {}, {step_out};", grid.row0_out, grid.row0_out));
        self.forget_path();
    }

    /// Fused time steps in 3D: the tile moves `planes` planes along z; its rows' starts follow,
    /// and every address computed from them is recomputed.
    fn stream_planes(&mut self, planes: i32) {
        let Some(grid) = self.grid.clone() else { return };
        let Some(tile_z) = &grid.tile_z else { return };
        self.comment(&format!("the tile moves {planes} planes along z"));
        self.line(&format!("add.s64 {tile_z}, {tile_z}, {planes};"));
        let (step_in, step_out) = (self.a(), self.a());
        self.line(&format!("mul.lo.s64 {step_in}, {N}, {};", grid.in_y));
        self.line(&format!("mul.lo.s64 {step_in}, {step_in}, {planes};"));
        self.line(&format!("mul.lo.s64 {step_out}, {N_OUT}, {};", grid.out_y));
        self.line(&format!("mul.lo.s64 {step_out}, {step_out}, {planes};"));
        self.line(&format!("add.s64 {}, {}, {step_in};", grid.row0_in, grid.row0_in));
        self.line(&format!("add.s64 {}, {}, {step_out};", grid.row0_out, grid.row0_out));
        self.forget_path();
    }

    /// Fused time steps in 2D and 3D: the y coordinate of input box row `row` of the tile (of
    /// its plane's rows in 3D; signed, not under any rule), and the input's rows.
    pub(super) fn box_row_y(&mut self, row: u32) -> (String, String) {
        let grid = self.grid.clone().expect("2D");
        let (y, _) = self.split_row(row, false);
        let at = self.a();
        self.line(&format!(
            "add.s64 {at}, {}, {};",
            grid.tile_y,
            y as i64 - self.program.pattern.shift_along(1) as i64
        ));
        (at, grid.in_y)
    }

    /// Fused time steps in 3D: the z coordinate of input box plane `plane` of the tile (signed,
    /// not under any rule), and the input's planes.
    pub(super) fn box_plane_z(&mut self, plane: u32) -> (String, String) {
        let grid = self.grid.clone().expect("3D");
        let (tile_z, in_z) = (grid.tile_z.expect("3D"), grid.in_z.expect("3D"));
        let at = self.a();
        self.line(&format!("add.s64 {at}, {tile_z}, {};", plane as i64 - self.program.pattern.shift_along(2) as i64));
        (at, in_z)
    }

    /// `(row, plane)` of input row `row` of the tile's input box, or of output row `row`.
    fn split_row(&self, row: u32, output: bool) -> (u32, u32) {
        let pattern = self.program.pattern;
        let rows = if output { pattern.rows_per_warp() } else { pattern.box_rows().1 };
        (row % rows, row / rows)
    }

    /// In 2D/3D, `inside` and-ed with: every input row of the tile lies inside the grid (and
    /// its output rows inside the launch's), and input rows are whole vectors long.
    pub(super) fn rows_inside(&mut self, inside: &str) {
        let Some(grid) = self.grid.clone() else { return };
        let pattern = self.program.pattern;
        let (planes, rows) = pattern.box_rows();
        let along = |p: &mut Self, start: &str, shift: u32, len: u32, n: &str| {
            let (lo, hi) = (p.a(), p.a());
            p.line(&format!("sub.s64 {lo}, {start}, {shift};"));
            p.line(&format!("add.s64 {hi}, {lo}, {len};"));
            p.line(&format!("setp.ge.and.s64 {inside}, {lo}, 0, {inside};"));
            p.line(&format!("setp.le.and.s64 {inside}, {hi}, {n}, {inside};"));
        };
        // Along the outermost axis the rows end where the launch's do (`input_end`).
        match &grid.tile_z {
            Some(tile_z) => {
                along(self, &grid.tile_y, pattern.shift_along(1), rows, &grid.in_y);
                along(self, tile_z, pattern.shift_along(2), planes, &grid.input_end);
            }
            None => along(self, &grid.tile_y, pattern.shift_along(1), rows, &grid.input_end),
        }
        if let Some(aligned) = &grid.in_aligned {
            self.line(&format!("and.pred {inside}, {inside}, {aligned};"));
        }
    }

    /// The predicate "the input is a whole number of vectors long" in 1D
    /// ([`crate::machine::TileTest::RowsInside`]; in 2D and 3D [`Printer::rows_inside`] tests it).
    pub(super) fn rows_aligned(&mut self) -> String {
        let (rest, q) = (self.a(), self.q());
        self.line(&format!("and.b64 {rest}, {N}, {};", self.program.machine.width.max(1) - 1));
        self.line(&format!("setp.eq.u64 {q}, {rest}, 0;"));
        q
    }

    /// In 2D/3D, `whole` and-ed with: output row `row` of the tile exists, and output rows are
    /// whole vectors long.
    pub(super) fn row_whole(&mut self, whole: &str, row: u32) {
        let Some(grid) = self.grid.clone() else { return };
        let exists = self.output_row_exists(row);
        self.line(&format!("and.pred {whole}, {whole}, {exists};"));
        if let Some(aligned) = &grid.out_aligned {
            self.line(&format!("and.pred {whole}, {whole}, {aligned};"));
        }
    }

    /// The predicate "output row `row` of the tile exists", once per path.
    fn output_row_exists(&mut self, row: u32) -> String {
        if let Some(q) = self.output_rows.get(&row) {
            return q.clone();
        }
        let grid = self.grid.clone().expect("2D/3D");
        let (y, z) = self.split_row(row, true);
        let (at, q) = (self.a(), self.q());
        self.line(&format!("add.u64 {at}, {}, {y};", grid.tile_y));
        self.line(&format!("setp.lt.u64 {q}, {at}, {};", grid.out_y));
        if let (Some(tile_z), Some(out_z)) = (&grid.tile_z, &grid.out_z) {
            self.line(&format!("add.u64 {at}, {tile_z}, {z};"));
            self.line(&format!("setp.lt.and.u64 {q}, {at}, {out_z}, {q};"));
        }
        self.output_rows.insert(row, q.clone());
        q
    }

    /// In 2D/3D, the byte offset from row 0 to row `row` of `buffer` added to a lane start of
    /// row 0 (`start`): the lane's start in that row, on paths with no boundary rule.
    pub(super) fn row_start(&mut self, buffer: Buffer, row: u32, start: &str) -> String {
        let Some(grid) = self.grid.clone() else { return start.to_string() };
        let output = matches!(buffer, Buffer::Output(_));
        let (y, z) = self.split_row(row, output);
        let (pitch, plane) = if output { (&grid.pitch_out, &grid.plane_out) } else { (&grid.pitch_in, &grid.plane_in) };
        let at = self.a();
        self.line(&format!("mad.lo.u64 {at}, {pitch}, {y}, {start};"));
        if let (Some(plane), true) = (plane, z > 0) {
            self.line(&format!("mad.lo.u64 {at}, {plane}, {z}, {at};"));
        }
        at
    }

    /// In a one-step kernel, a lane's start in row `row` of `buffer` as the previous row's
    /// start (if the path has it, in the same plane) plus the row's bytes: `mad.wide.u32` of
    /// the 32-bit row length, which ptxas prints as two integer adds, where adding the 64-bit
    /// pitch took an IMAD.WIDE on the FMA pipe (2D box r = 4: 0.699 -> 0.713 of its add bound).
    pub(super) fn next_row_start(&mut self, buffer: Buffer, stride: u32, row: u32) -> Option<String> {
        let grid = self.grid.clone().filter(|_| self.program.fused.is_none() && row > 0)?;
        let output = matches!(buffer, Buffer::Output(_));
        let (y, _) = self.split_row(row, output);
        let previous = self.lane_starts.get(&(buffer, stride, row - 1)).filter(|_| y > 0)?.clone();
        let len = if output { &grid.row_out } else { &grid.row_in };
        let at = self.a();
        self.line(&format!("mad.wide.u32 {at}, {len}, {}, {previous};", self.program.element.bytes()));
        Some(at)
    }

    /// In 2D/3D, the element index of row 0 of `buffer` added to `index` (an x index), on
    /// paths with no boundary rule.
    pub(super) fn add_row0(&mut self, buffer: Buffer, index: &str) {
        let Some(grid) = &self.grid else { return };
        let row0 = if matches!(buffer, Buffer::Output(_)) { grid.row0_out.clone() } else { grid.row0_in.clone() };
        self.line(&format!("add.s64 {index}, {index}, {row0};"));
    }

    /// Input row `row` of the tile under the boundary rule: its first element's index, and
    /// the predicate that it is inside (`valid` and `zero`; `None` under the other rules),
    /// once per path.
    pub(super) fn input_row_source(&mut self, row: u32) -> (String, Option<String>) {
        if let Some(found) = self.input_rows.get(&row) {
            return found.clone();
        }
        let grid = self.grid.clone().expect("2D/3D");
        let pattern = self.program.pattern;
        let (y, z) = self.split_row(row, false);
        let mut guard: Option<String> = None;
        // Each dimension's predicate (`valid`, `zero`) is and-ed into the one before it.
        let mut coordinate = |p: &mut Self, start: &str, offset: i64, n: &str| -> String {
            let c = p.a();
            p.line(&format!("add.s64 {c}, {start}, {offset};"));
            guard = p.rule_coordinate(&c, n, Last::Less(1), guard.take());
            c
        };
        self.comment(&format!("input row {row} of the tile (row {y}, plane {z} of its box) under the boundary rule"));
        let row_y = coordinate(self, &grid.tile_y, y as i64 - pattern.shift_along(1) as i64, &grid.in_y);
        let index = self.a();
        match (&grid.tile_z, &grid.in_z) {
            (Some(tile_z), Some(in_z)) => {
                let row_z = coordinate(self, tile_z, z as i64 - pattern.shift_along(2) as i64, in_z);
                self.line(&format!("mad.lo.s64 {index}, {row_z}, {}, {row_y};", grid.in_y));
            }
            _ => self.line(&format!("mov.s64 {index}, {row_y};")),
        }
        self.line(&format!("mul.lo.s64 {index}, {index}, {N};"));
        let found = (index, guard);
        self.input_rows.insert(row, found.clone());
        found
    }

    /// Output row `row` of the tile: its first element's index and whether it exists, once
    /// per path.
    pub(super) fn output_row_source(&mut self, row: u32) -> (String, String) {
        let grid = self.grid.clone().expect("2D/3D");
        let exists = self.output_row_exists(row);
        let (y, z) = self.split_row(row, true);
        let index = self.a();
        self.line(&format!("add.u64 {index}, {}, {y};", grid.tile_y));
        if let Some(tile_z) = &grid.tile_z {
            let plane = self.a();
            self.line(&format!("add.u64 {plane}, {tile_z}, {z};"));
            self.line(&format!("mad.lo.u64 {index}, {plane}, {}, {index};", grid.out_y));
        }
        self.line(&format!("mul.lo.u64 {index}, {index}, {N_OUT};"));
        (index, exists)
    }
}
