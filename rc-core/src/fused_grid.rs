//! Fused time steps of a 2D stencil: `T` steps per launch, each warp streaming down a column
//! strip with every step's rows in registers (the AN5D/EBISU scheme).
//!
//! Along x the tile is the 1D fused tile ([`crate::time_steps`]): lane `l` owns the `k`
//! consecutive elements `l * k .. (l + 1) * k` of a row of `warp * k`, the neighbours' edges
//! come by shuffle, and the exact part shrinks by `rx` at each end per step. Along y the warp
//! walks its strip of `rows` output rows one input row per iteration, keeping for each step
//! `s < T` a window of the `2 * ry + 1` newest rows of step `s`: each iteration loads one input
//! row (step 0), then step `s` computes the row `ry` above the newest row of step `s - 1` from
//! that window, and step `T`'s row is stored. A row of step `s` thus comes `s * ry` rows after
//! the input row it started from, and the first `2 * T * ry` iterations of a strip only fill
//! the windows (their rows lie above the strip and are not stored). Only the strip's first
//! rows are computed twice (by the strip above too), so wide strips cost little.
//!
//! Boundary rules hold at the domain's edges in every step: along x as in 1D
//! ([`Op::StepRule`] after each step), along y by reading each step's rows through the rule
//! ([`Op::RowRule`]: rows outside the input read as zero under `zero`, as the nearest edge row
//! of the same step under `clamp`, which the window still holds). Under `wrap` the loads wrap
//! and a periodic domain needs no rule; under `valid` nothing outside is stored. Tiles whose
//! whole strip lies inside the input skip the rules.
//!
//! The other input fields (coefficients) stay as given: each step loads the coefficient rows
//! its row reads. Every element computes the body's operations in the body's order, so `T`
//! fused steps are bit for bit `T` applications of the stencil.

use crate::distribution::vector_access_elements;
use crate::geometry::Offset;
use crate::machine::{Op, Stmt};
use crate::pattern::{Boundary, Pattern};
use crate::program::Reg;
use crate::scalar::ScalarType;
use crate::time_steps::{Build, FusedTile, Owned};

/// Output rows each warp streams through: the strip's first `2 * T * ry` rows are computed
/// twice (by the strip above too), 1/16 of 128 rows for `T * ry = 4`.
pub const STRIP_ROWS: u32 = 128;

/// 32-bit words the windows of all steps may hold per lane: `T * (2 * ry + 1) * k` elements.
pub const WINDOW_WORDS: u32 = 96;

impl FusedTile {
    /// The 2D tile: along x the 1D tile with `k` as large as the windows' registers allow,
    /// along y strips of [`STRIP_ROWS`].
    pub(crate) fn fit_grid(pattern: &Pattern, element: ScalarType, steps: u32) -> Option<FusedTile> {
        let radius_y = pattern.radius().along(1);
        let rows_held = steps.checked_mul(2 * radius_y + 1)?;
        let width = vector_access_elements(16, element);
        let words = (WINDOW_WORDS / rows_held).max(1);
        // The widest rows the windows allow: the halo along x is spoilt per row of every step.
        let tile = FusedTile::fit_x(&pattern.along_x(), element, steps, words, true)?;
        // One vector per lane may take up to twice the words: narrower rows cannot be.
        let fits = tile.per_lane * element.words() * rows_held <= WINDOW_WORDS || tile.per_lane == width;
        (fits && tile.per_lane * element.words() * rows_held <= 2 * WINDOW_WORDS).then_some(FusedTile { radius_y, rows: STRIP_ROWS, ..tile })
    }

    /// Elements computed per output and step: the tile's row over its outputs, times the
    /// strip's rows over its outputs (the first `2 * T * ry` only fill the windows).
    pub fn recompute(&self) -> f64 {
        let strip = f64::from(self.rows + 2 * self.steps * self.radius_y) / f64::from(self.rows);
        f64::from(self.elements()) / f64::from(self.outputs()) * strip
    }
}

/// What the 2D fused program's `distribution` says.
pub(crate) fn distribution(tile: &FusedTile) -> String {
    format!(
        "fused time steps (2D): {} steps per launch, lane l owns row elements {k}l..{k}l + {k}, halo {} each side along x, strips of {} rows",
        tile.steps,
        tile.halo(),
        tile.rows,
        k = tile.per_lane
    )
}

/// One path of a strip: the tile moves `2 * T * ry` rows up, the iterations that fill the
/// windows, then one iteration per output row, each storing step `T`'s row.
///
/// A window's rows are not moved from register to register as the tile moves down: its
/// registers take the role of its rows in turn, so the loops' bodies are `2 * ry + 1`
/// iterations, each with the roles turned once more (the iterations left over run after the
/// loop). Each iteration loads the next one's input row, so the load's latency hides behind a
/// whole iteration's steps; the last iteration loads none (its row would lie past the strip).
pub(crate) fn strip(build: &mut Build, interior: bool) -> Vec<Stmt> {
    let tile = build.tile;
    let fill = 2 * tile.steps * tile.radius_y;
    let mut out = Vec::new();
    let invariant = build.invariants(&mut out);
    // windows[s][p]: the lane's elements of one of step s's window rows.
    let span = 2 * tile.radius_y + 1;
    let windows: Vec<Vec<Vec<Reg>>> = (0..tile.steps)
        .map(|_| (0..span).map(|_| (0..tile.per_lane).map(|_| build.reg(build.body.element())).collect()).collect())
        .collect();
    let ahead: Vec<Reg> = (0..tile.per_lane).map(|_| build.reg(build.body.element())).collect();
    if fill > 0 {
        out.push(Stmt::Op(Op::StreamRows(-(fill as i32))));
    }
    build.load_into(0, interior, fill, &ahead, &mut out);
    let strip = Strip { windows: &windows, ahead: &ahead, invariant: &invariant, interior };
    let mut turn = 0;
    for (times, store, next) in [(fill, false, true), (tile.rows - 1, true, true), (1, true, false)] {
        let mut run = |turn: u32| strip.iteration(build, store, next, turn % span);
        if times >= span {
            let body = (turn..turn + span).flat_map(&mut run).collect();
            out.push(Stmt::Loop { times: times / span, body });
        }
        out.extend((turn..turn + times % span).flat_map(&mut run));
        turn = (turn + times) % span;
    }
    out
}

/// What every iteration of a strip's path reads: the windows' registers, the next input row's,
/// the body's invariant values, and whether the path is the interior one.
struct Strip<'a> {
    windows: &'a [Vec<Vec<Reg>>],
    ahead: &'a [Reg],
    invariant: &'a [Option<Reg>],
    interior: bool,
}

impl Strip<'_> {
    /// One iteration, the tile's output row 0 being its current row: take the input row `2 *
    /// T * ry` below it (loaded the iteration before), load the next (if `next`), step each
    /// window's rows once, store step `T`'s row (if `store`), and move the tile one row down.
    /// Window row `j` (`2 * ry` the newest) is register row `(j + turn) % (2 * ry + 1)`.
    fn iteration(&self, build: &mut Build, store: bool, next: bool, turn: u32) -> Vec<Stmt> {
        let (tile, body) = (build.tile, build.body);
        let (invariant, interior) = (self.invariant, self.interior);
        let (t, ry, k) = (tile.steps, tile.radius_y, tile.per_lane as i64);
        let span = (2 * ry + 1) as usize;
        let windows: Vec<Vec<Vec<Reg>>> = self.windows.iter().map(|w| (0..span).map(|j| w[(j + turn as usize) % span].clone()).collect()).collect();
        let mut out = Vec::new();
        // Input box row of the newest step-0 row: box rows count from `T * ry` above output row 0.
        let newest = 2 * t * ry;
        out.push(Stmt::Op(Op::Carry(windows[0][span - 1].iter().copied().zip(self.ahead.iter().copied()).collect())));
        if next {
            build.load_into(0, interior, newest + 1, self.ahead, &mut out);
        }
        let mut produced: Vec<Reg> = Vec::new();
        for s in 1..=t {
            // Step s computes box row `centre` from step s - 1's window (box rows centre - ry ..= centre + ry).
            let centre = newest - s * ry;
            let first = centre - ry;
            let rows: Vec<Vec<Reg>> = match (interior, build.boundary, s) {
                (false, Boundary::Zero | Boundary::Clamp, 2..) => {
                    let dsts: Vec<Vec<Reg>> = (0..span).map(|_| (0..k).map(|_| build.reg(body.element())).collect()).collect();
                    out.push(Stmt::Op(Op::RowRule { rows: windows[s as usize - 1].clone(), first, dsts: dsts.clone() }));
                    dsts
                }
                _ => windows[s as usize - 1].clone(),
            };
            let mut state: Vec<Option<Owned>> = (0..span).map(|_| None).collect();
            let mut coefficients: Vec<Vec<Option<Owned>>> = (1..body.fields()).map(|_| (0..span).map(|_| None).collect()).collect();
            for (field, d) in body.used_field_taps() {
                let j = (d.along(1) + ry as i32) as usize;
                if field == 0 && state[j].is_none() {
                    state[j] = Some(build.exchange(0, Some(d.along(1)), rows[j].clone(), &mut out));
                } else if field > 0 && coefficients[field as usize - 1][j].is_none() {
                    let own: Vec<Reg> = (0..k).map(|_| build.reg(body.element())).collect();
                    // Coefficients load element by element: see `Build::load_into`.
                    build.load_into(field, false, first + j as u32, &own, &mut out);
                    coefficients[field as usize - 1][j] = Some(build.exchange(field, Some(d.along(1)), own, &mut out));
                }
            }
            let mut values = Vec::with_capacity(k as usize);
            for e in 0..k {
                let tap = |field: u32, d: Offset| {
                    let j = (d.along(1) + ry as i32) as usize;
                    let owned = match field {
                        0 => &state[j],
                        f => &coefficients[f as usize - 1][j],
                    };
                    owned.as_ref().and_then(|o| o.at(e + d.along_x() as i64)).unwrap_or_default()
                };
                values.push(build.element(invariant, tap, &mut out));
            }
            produced = match (interior, build.boundary) {
                (false, Boundary::Zero | Boundary::Clamp) => {
                    let dsts: Vec<Reg> = (0..k).map(|_| build.reg(body.element())).collect();
                    out.push(Stmt::Op(Op::StepRule { values, dsts: dsts.clone() }));
                    dsts
                }
                _ => values,
            };
            if s < t {
                // The newest row of step s's window, in the registers of its oldest row.
                let slot = &windows[s as usize][span - 1];
                out.push(Stmt::Op(Op::Carry(slot.iter().copied().zip(produced.iter().copied()).collect())));
            }
        }
        if store {
            out.push(build.stores(produced));
        }
        out.push(Stmt::Op(Op::StreamRows(1)));
        out
    }
}
