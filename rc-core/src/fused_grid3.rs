//! Fused time steps of a 3D stencil: `T` steps per launch, each warp streaming along z through
//! a column of planes with every step's planes in registers: the 2D scheme
//! ([`crate::fused_grid`]) one dimension up.
//!
//! Along x the tile is the 1D fused tile ([`crate::time_steps`]): lane `l` owns the `k`
//! consecutive elements `l * k .. (l + 1) * k` of a row of `warp * k`, the neighbours' edges
//! come by shuffle, and the exact part shrinks by `rx` at each end per step. A plane of the tile
//! is a few rows along y, whose exact part shrinks by `ry` at each end per step as x does: step
//! `s` holds `R + 2 * (T - s) * ry` rows of each plane for the `R` output rows. Along z the
//! warp walks its column of `planes` output planes one input plane per iteration, keeping for
//! each step `s < T` a window of the `2 * rz + 1` newest planes of step `s`: each iteration
//! loads one input plane (step 0), step `s` computes the plane `rz` behind the newest plane of
//! step `s - 1` from that window, and step `T`'s plane (its `R` rows) is stored. The first
//! `2 * T * rz` iterations of a column only fill the windows.
//!
//! Boundary rules hold at the domain's edges in every step: along x as in 1D ([`Op::StepRule`]
//! on each row a step computes), along y on each plane a step computes ([`Op::PlaneRowsRule`]: rows
//! outside the input become zero, or under `clamp` the plane's edge row, which it holds), along
//! z on each window a step reads ([`Op::PlaneRule`]: planes outside become zero, or under
//! `clamp` the window's edge plane). Under `wrap` the loads wrap and a periodic domain needs no
//! rule; under `valid` nothing outside is stored. Tiles whose whole column lies inside the input
//! skip the rules.
//!
//! The other input fields (coefficients) stay as given: each step loads the coefficient rows
//! its rows read. Every element computes the body's operations in the body's order, so `T`
//! fused steps are bit for bit `T` applications of the stencil.

use std::collections::BTreeMap;

use crate::boundary::Boundary;
use crate::distribution::vector_access_elements;
use crate::geometry::{Axis, Offset};
use crate::machine::{Op, Stmt};
use crate::pattern::Pattern;
use crate::program::Reg;
use crate::scalar::ScalarType;
use crate::terms::Computed;
use crate::time_steps::{Build, FusedTile, Owned};

/// 32-bit words the plane windows of all steps may hold per lane (twice that for one row of one
/// vector per lane): the budget the 3D kernels were fitted and measured with (7-point heat: 186
/// to 214 registers at `T = 2`, no spills; docs/gpu-runs/2026-11-24-h100-session3-fuse3d.log).
/// 2D's [`crate::fused_grid::WINDOW_WORDS`] is smaller: its windows hold 2 ry rows per step.
pub const PLANE_WINDOW_WORDS: u32 = 96;

impl FusedTile {
    /// The 3D tile: along x the 1D tile with `k` as large as the windows' registers allow, the
    /// most output rows per plane up to the pattern's `rows_per_warp` whose windows fit
    /// [`PLANE_WINDOW_WORDS`] (one row with one vector per lane may take up to twice that), and
    /// columns of the pattern's `planes_per_warp` planes.
    pub(crate) fn fit_volume(pattern: &Pattern, element: ScalarType, steps: u32) -> Option<FusedTile> {
        let (radius_z, radius_y) = (pattern.radius().along(2), pattern.radius().along(1));
        let width = vector_access_elements(16, element);
        for rows in (1..=pattern.rows_per_warp()).rev() {
            let held = rows_held(steps, radius_z, radius_y, rows)?;
            let tile = FusedTile::fit_x(&pattern.along_x(), element, steps, (PLANE_WINDOW_WORDS / held).max(1), true)?;
            let words = tile.per_lane.checked_mul(element.words() * held)?;
            if words <= PLANE_WINDOW_WORDS || (rows == 1 && tile.per_lane == width && words <= 2 * PLANE_WINDOW_WORDS) {
                return Some(FusedTile { radius_y, rows, radius_z, planes: pattern.planes_per_warp(), ..tile });
            }
        }
        None
    }

    /// Rows of each plane step `s` holds (`0..=T`): the output rows and `(T - s) * ry` more on
    /// each side.
    pub fn plane_rows(&self, s: u32) -> u32 {
        self.rows + 2 * (self.steps - s) * self.radius_y
    }

    /// Elements computed per output and step in 3D: the tile's row over its outputs, each
    /// step's plane rows over the output rows, and the column's planes over its outputs (the
    /// first `2 * T * rz` only fill the windows).
    pub fn recompute_volume(&self) -> f64 {
        let rows: u32 = (1..=self.steps).map(|s| self.plane_rows(s)).sum();
        let rows = f64::from(rows) / f64::from(self.steps * self.rows);
        let column = f64::from(self.planes + 2 * self.steps * self.radius_z) / f64::from(self.planes);
        f64::from(self.elements()) / f64::from(self.outputs()) * rows * column
    }
}

/// Rows a lane keeps: `2 * rz + 1` planes per step below `T`, each of its step's rows, and the
/// next input plane.
fn rows_held(steps: u32, radius_z: u32, radius_y: u32, rows: u32) -> Option<u32> {
    let plane = |s: u32| rows.checked_add(radius_y.checked_mul(2 * (steps - s))?);
    let windows = (0..steps).try_fold(0u32, |sum, s| sum.checked_add(plane(s)?))?;
    windows.checked_mul(2 * radius_z + 1)?.checked_add(plane(0)?)
}

/// What the 3D fused program's `distribution` says.
pub(crate) fn distribution(tile: &FusedTile) -> String {
    format!(
        "fused time steps (3D): {} steps per launch, lane l owns row elements {k}l..{k}l + {k}, halo {} each side along x, {} output rows per plane, columns of {} planes",
        tile.steps,
        tile.halo(),
        tile.rows,
        tile.planes,
        k = tile.per_lane
    )
}

/// One path of a column: the tile moves `2 * T * rz` planes back, the iterations that fill the
/// windows, then one iteration per output plane, each storing step `T`'s plane.
///
/// As in 2D, a window's planes are not moved from register to register: its registers take the
/// role of its planes in turn, so the loops' bodies are `2 * rz + 1` iterations, each with the
/// roles turned once more. Each iteration loads the next one's input plane, so the loads'
/// latency hides behind a whole iteration's steps; the last iteration loads none.
pub(crate) fn column(build: &mut Build, interior: bool) -> Vec<Stmt> {
    let tile = build.tile;
    let fill = 2 * tile.steps * tile.radius_z;
    let mut out = Vec::new();
    let invariant = build.invariants(&mut out);
    let span = 2 * tile.radius_z + 1;
    let element = build.body.element();
    let states = build.state_fields();
    let plane = |build: &mut Build, rows: u32| -> Vec<Vec<Reg>> {
        (0..rows).map(|_| (0..tile.per_lane).map(|_| build.reg(element)).collect()).collect()
    };
    // windows[f][s][p][y]: the lane's elements of row y of one of step s's window planes of
    // state field f.
    let windows: Vec<Vec<Vec<Vec<Vec<Reg>>>>> = (0..states)
        .map(|_| (0..tile.steps).map(|s| (0..span).map(|_| plane(build, tile.plane_rows(s))).collect()).collect())
        .collect();
    let ahead: Vec<Vec<Vec<Reg>>> = (0..states).map(|_| plane(build, tile.plane_rows(0))).collect();
    if fill > 0 {
        out.push(Stmt::Op(Op::Stream { axis: Axis::Z, by: -(fill as i32) }));
    }
    let column = Column { windows: &windows, ahead: &ahead, invariant: &invariant, interior };
    column.load(build, fill, &mut out);
    let mut turn = 0;
    for (times, store, next) in [(fill, false, true), (tile.planes - 1, true, true), (1, true, false)] {
        let mut run = |turn: u32| column.iteration(build, store, next, turn % span);
        if times >= span {
            let body = (turn..turn + span).flat_map(&mut run).collect();
            out.push(Stmt::Loop { times: times / span, body });
        }
        out.extend((turn..turn + times % span).flat_map(&mut run));
        turn = (turn + times) % span;
    }
    out
}

/// What every iteration of a column's path reads: the windows' registers and the next input
/// plane's, each per state field ([`Build::state_fields`]), the body's invariant values, and
/// whether the path is the interior one.
struct Column<'a> {
    windows: &'a [Vec<Vec<Vec<Vec<Reg>>>>],
    ahead: &'a [Vec<Vec<Reg>>],
    invariant: &'a [Option<Reg>],
    interior: bool,
}

impl Column<'_> {
    /// Loads input box plane `plane` (every row of the tile's input box) of each state field
    /// into the next plane's registers.
    fn load(&self, build: &mut Build, plane: u32, out: &mut Vec<Stmt>) {
        let rows = build.tile.plane_rows(0);
        for (field, ahead) in self.ahead.iter().enumerate() {
            for (y, own) in ahead.iter().enumerate() {
                build.load_into(field as u32, self.interior, plane * rows + y as u32, own, out);
            }
        }
    }

    /// One iteration, the tile's output plane 0 being its current plane: take the input plane
    /// `2 * T * rz` ahead of it (loaded the iteration before), load the next (if `next`), step
    /// each window's planes once, store step `T`'s plane (if `store`), and move the tile one
    /// plane along z. Window plane `j` (`2 * rz` the newest) is register plane `(j + turn) %
    /// (2 * rz + 1)`. Every state field steps alike.
    fn iteration(&self, build: &mut Build, store: bool, next: bool, turn: u32) -> Vec<Stmt> {
        let (tile, body) = (build.tile, build.body);
        let (t, rz, ry, k) = (tile.steps, tile.radius_z, tile.radius_y, tile.per_lane as i64);
        let span = (2 * rz + 1) as usize;
        let box_rows = tile.plane_rows(0);
        let states = build.state_fields();
        // windows[f][s][j]: window plane j of state field f of step s.
        let windows: Vec<Vec<Vec<Vec<Vec<Reg>>>>> = self
            .windows
            .iter()
            .map(|field| {
                field.iter().map(|w| (0..span).map(|j| w[(j + turn as usize) % span].clone()).collect()).collect()
            })
            .collect();
        let rules = !self.interior && matches!(build.boundary, Boundary::Zero | Boundary::Clamp);
        let mut out = Vec::new();
        // Input box plane of the newest step-0 plane: box planes count from `T * rz` before output plane 0.
        let newest = 2 * t * rz;
        for (field, ahead) in windows.iter().zip(self.ahead) {
            out.push(Stmt::Op(Op::Carry(field[0][span - 1].concat().into_iter().zip(ahead.concat()).collect())));
        }
        if next {
            self.load(build, newest + 1, &mut out);
        }
        let mut produced: Vec<Vec<Vec<Reg>>> = Vec::new();
        for s in 1..=t {
            // Step s computes box plane `centre` from step s - 1's window (planes centre - rz ..= centre + rz),
            // its rows from box row `s * ry` on, reading step s - 1's rows from `(s - 1) * ry` on.
            let centre = newest - s * rz;
            let first = centre - rz;
            if rules && s >= 2 {
                for field in &windows {
                    let planes = field[s as usize - 1].iter().map(|p| p.concat()).collect();
                    out.push(Stmt::Op(Op::PlaneRule { planes, first }));
                }
            }
            // Each row's edges, exchanged once per step for every row of the step that reads it.
            let mut state: BTreeMap<(u32, usize, usize), Owned> = BTreeMap::new();
            let mut coefficients: BTreeMap<(u32, usize, usize), Owned> = BTreeMap::new();
            // values[f][y]: row y of state field f's new plane.
            let mut values: Vec<Vec<Vec<Reg>>> = vec![Vec::new(); states as usize];
            let mut computed = Computed::default();
            for y in 0..tile.plane_rows(s) as usize {
                for (field, d) in body.used_field_taps() {
                    let (dz, j, i) =
                        (d.along(2), (d.along(2) + rz as i32) as usize, (y as i32 + d.along(1) + ry as i32) as usize);
                    let reads = |e: Offset| e.along(2) == dz;
                    if field < states && !state.contains_key(&(field, j, i)) {
                        let own = windows[field as usize][s as usize - 1][j][i].clone();
                        let owned = build.exchange_for(field, reads, own, &mut out);
                        state.insert((field, j, i), owned);
                    } else if field >= states && !coefficients.contains_key(&(field, j, i)) {
                        let own: Vec<Reg> = (0..k).map(|_| build.reg(body.element())).collect();
                        // Coefficients load element by element: see `Build::load_into`.
                        let row = (first + j as u32) * box_rows + (s - 1) * ry + i as u32;
                        build.load_into(field, false, row, &own, &mut out);
                        let owned = build.exchange_for(field, reads, own, &mut out);
                        coefficients.insert((field, j, i), owned);
                    }
                }
                let mut rows: Vec<Vec<Reg>> = vec![Vec::with_capacity(k as usize); states as usize];
                for e in 0..k {
                    let tap = |field: u32, d: Offset| {
                        let (j, i) = ((d.along(2) + rz as i32) as usize, (y as i32 + d.along(1) + ry as i32) as usize);
                        let owned = match field < states {
                            true => state.get(&(field, j, i)),
                            false => coefficients.get(&(field, j, i)),
                        };
                        owned.and_then(|o| o.at(e + d.along_x() as i64)).unwrap_or_default()
                    };
                    let results = build.element(self.invariant, [e, y as i64, 0], tap, &mut computed, &mut out);
                    for (row, result) in rows.iter_mut().zip(results) {
                        row.push(result);
                    }
                }
                for (field, mut row) in values.iter_mut().zip(rows) {
                    if rules && s < t {
                        let dsts: Vec<Reg> = (0..k).map(|_| build.reg(body.element())).collect();
                        out.push(Stmt::Op(Op::StepRule { values: row, dsts: dsts.clone() }));
                        row = dsts;
                    }
                    field.push(row);
                }
            }
            if rules && s < t {
                for field in values.iter_mut() {
                    let dsts: Vec<Vec<Reg>> =
                        field.iter().map(|row| row.iter().map(|_| build.reg(body.element())).collect()).collect();
                    let rows = std::mem::replace(field, dsts.clone());
                    out.push(Stmt::Op(Op::PlaneRowsRule { rows, first: centre * box_rows + s * ry, dsts }));
                }
            }
            if s < t {
                // The newest plane of step s's window, in the registers of its oldest plane.
                for (field, values) in windows.iter().zip(&values) {
                    let slot = field[s as usize][span - 1].concat();
                    out.push(Stmt::Op(Op::Carry(slot.into_iter().zip(values.concat()).collect())));
                }
            }
            produced = values;
        }
        if store {
            for (field, rows) in produced.into_iter().enumerate() {
                for (row, srcs) in rows.into_iter().enumerate() {
                    out.push(build.stores_row(field as u32, srcs, row as u32));
                }
            }
        }
        out.push(Stmt::Op(Op::Stream { axis: Axis::Z, by: 1 }));
        out
    }
}
