//! Fused time steps of a 2D stencil: `T` steps per launch, each warp streaming down a column
//! strip with every step's rows in registers (the AN5D/EBISU scheme).
//!
//! Along x the tile is the 1D fused tile ([`crate::time_steps`]): lane `l` owns the `k`
//! consecutive elements `l * k .. (l + 1) * k` of a row of `warp * k`, the neighbours' edges
//! come by shuffle, and the exact part shrinks by `rx` at each end per step. Along y the warp
//! walks its strip of `rows` output rows one input row per iteration, keeping for each step
//! `s < T` a window of the `2 * ry` rows of step `s` above its newest: each iteration loads one
//! input row (step 0), then step `s` computes the row `ry` above the newest row of step `s - 1`
//! from that window and that newest row, still in the registers it was computed in, and step
//! `T`'s row is stored. A row of step `s` thus comes `s * ry` rows after the input row it
//! started from, and the first `2 * T * ry` iterations of a strip only fill the windows (their
//! rows lie above the strip and are not stored; of those, each step runs only where its rows
//! reach an output). Only the strip's first rows are computed twice (by the strip above too),
//! so long strips cost little.
//!
//! Boundary rules hold at the domain's edges in every step: along x as in 1D
//! ([`Op::StepRule`] after each step), along y on each step's new row ([`Op::RowRule`]): rows
//! outside the input are zero under `zero`; under `clamp` a row below the input takes the
//! window's newest and the input's first row is copied into the window's rows above it, so
//! every row outside reads as the nearest edge row of the same step. Under `wrap` the loads
//! wrap and a periodic domain needs no rule; under `valid` nothing outside is stored. Tiles
//! whose whole strip lies inside the input skip the rules.
//!
//! The other input fields (coefficients) stay as given: each step loads the coefficient rows
//! its row reads. Every element computes the body's operations in the body's order, so `T`
//! fused steps are bit for bit `T` applications of the stencil.
//!
//! A tile stores every element still exact after its steps (rounded down to whole vectors, so
//! tiles start aligned): 112 of a row of 128 at `T = 8`, `k = 4`, not a whole number per lane
//! ([`crate::pattern::Pattern::with_tile_outputs_unchecked`]).
//!
//! A launch runs as two kernels over the same strips ([`FusedTile::splits`]): one printed with
//! only the interior path (strips whose input lies wholly inside the grid), one with only the
//! boundary path (the strips along the edges); each leaves the other's strips alone, so they may
//! run at once (rc's runtime runs the edge kernel on a second stream beside the interior's).
//! Both number the edge strips first, so each kernel's strips fill whole blocks (the PTX
//! launch map's [`crate::launch_map::TileOrder::EdgesFirst`]), and the edge path's rule along x selects by masks computed once
//! per strip (`step_rule_masked`): on an H200, 8192 x 8192 heat at T = 10 went from 2.75x to
//! 3.01x the copy per launch (bench/results/HISTORY.md: 2026-11-24-h200-fused2d3). The edges kernel is
//! launched over only its own blocks (the launch map's edge strips, [`crate::launch_map`]) and
//! the numbering divides in 32 bits (3.16x), and the interior path's windows take one register
//! row more, so no new row is copied (3.34x; bench/results/HISTORY.md: 2026-11-24-h200-heat2d4).

use crate::boundary::Boundary;
use crate::distribution::vector_access_elements;
use crate::geometry::{Axis, Offset};
use crate::machine::{Op, Stmt};
use crate::pattern::Pattern;
use crate::program::Reg;
use crate::scalar::ScalarType;
use crate::terms::Computed;
use crate::time_steps::{Build, FusedTile, Owned};

/// Output rows each warp streams through: filling its windows, a strip computes `ry * T * (T -
/// 1)` rows of steps besides its `T * rows` (11% for `T = 8`, `ry = 1`). Shorter strips are more
/// of them, so the launch's last wave leaves fewer SMs idle: 2D heat at T = 8 on 8192 x 8192 ran
/// 1.15x faster with 64 rows than with 128 and 1.06x faster than with 96 on an H200
/// (bench/results/HISTORY.md: 2026-11-24-h200-fused2d).
pub const STRIP_ROWS: u32 = 64;

/// 32-bit words the windows of all steps may hold per lane, as the tile's `k` is chosen:
/// `T * 2 * ry * k` elements (twice that where one vector per lane is too many; the cost
/// model's degree keeps to [`INTERIOR_WINDOW_WORDS`]). Before the launch split in two kernels,
/// ptxas (sm_90) gave 2D heat's kernel 167 registers at 64 words (T = 8): 12 warps per SM in
/// blocks of [`BLOCK_THREADS`]; at 96 words (T = 12) 229, 8 warps, and it ran slower
/// (bench/results/HISTORY.md: 2026-11-24-h100-fast2d).
pub const WINDOW_WORDS: u32 = 64;

/// 32-bit words of windows per lane the cost model lets a 2D launch's steps take
/// ([`crate::auto::steps_per_launch`]). The interior strips run in a kernel of their own
/// ([`FusedTile::splits`]), so only the interior path's registers count: ptxas (sm_90) gave 2D
/// heat's interior kernel (before its windows took `2 * ry + 1` register rows) 124 registers at T = 8 (64 words, 16 warps per SM in blocks of
/// [`BLOCK_THREADS`]), 146 at T = 10 (80 words) and 166 at T = 12 (96 words, 12 warps). Alone
/// the interior ran 1.15x faster at T = 12 than at T = 8 (bench/results/HISTORY.md: 2026-11-24-h200-fused2d),
/// but beside the edge kernel (whose strips grow with T) T = 10 ran 2.73x and 2.64x the copy in
/// two H200 runs against T = 12's 2.61x and 2.55x (bench/results/HISTORY.md: 2026-11-24-h200-overlap).
pub const INTERIOR_WINDOW_WORDS: u32 = 80;

/// Threads per block of a 2D fused launch at most: the registers a thread takes leave room for
/// few warps per SM, and smaller blocks waste fewer of them (T = 8 heat on an H100: 12 warps
/// per SM in blocks of 128 threads, 8 in blocks of 256, 2.83x the copy against 2.28x).
pub const BLOCK_THREADS: u32 = 128;

impl FusedTile {
    /// The 2D tile: along x the 1D tile with `k` as small as keeps the halo's share small (the
    /// windows' registers decide how many warps an SM holds, and the kernel is bound by their
    /// latency, not by the recomputed halo), at most what the windows allow; along y strips of
    /// [`STRIP_ROWS`].
    pub(crate) fn fit_grid(pattern: &Pattern, element: ScalarType, steps: u32) -> Option<FusedTile> {
        let radius_y = pattern.radius().along(1);
        let rows_held = steps.checked_mul(2 * radius_y)?.max(1);
        let width = vector_access_elements(16, element);
        let words = (WINDOW_WORDS / rows_held).max(1);
        let tile = FusedTile::fit_x(&pattern.along_x(), element, steps, words, false)?;
        // One vector per lane may take up to twice the words: narrower rows cannot be.
        let fits = tile.per_lane * element.words() * rows_held <= WINDOW_WORDS || tile.per_lane == width;
        // Every element exact after the steps is stored (in whole vectors, so tiles start
        // aligned), not a whole number per lane: 112 of 128 at T = 8, k = 4, not 96.
        let outputs = (tile.elements() - tile.lead - tile.halo()) / width * width;
        (fits && tile.per_lane * element.words() * rows_held <= 2 * WINDOW_WORDS).then_some(FusedTile {
            radius_y,
            rows: STRIP_ROWS,
            outputs,
            ..tile
        })
    }

    /// Elements computed per output and step: the tile's row over its outputs, times the
    /// strip's step rows over its outputs (filling, the iteration whose newest input is box row
    /// `f` runs `f / (2 * ry)` steps: `ry * T * (T - 1)` rows of steps before the first output).
    pub fn recompute(&self) -> f64 {
        let (t, rows) = (f64::from(self.steps), f64::from(self.rows));
        let strip = (rows * t + f64::from(self.radius_y) * t * (t - 1.0)) / (rows * t);
        f64::from(self.elements()) / f64::from(self.outputs()) * strip
    }

    /// Whether a launch runs as two kernels, the interior strips' and the edge strips'
    /// ([`crate::machine::Kernel`]): 2D, and 1D block tiles. In one kernel the boundary path's
    /// registers set the interior's too: ptxas gave 2D heat's kernel at T = 8 152 registers (12
    /// warps per SM), its interior path alone 124 (16), and that alone ran 1.26x faster on an
    /// H200, also missing the instruction cache less (bench/results/HISTORY.md: 2026-11-24-h200-fused2d);
    /// 1D heat's block tile 72 registers (3 blocks per SM), its interior alone 40 (6), the
    /// 9-tap's 115 and 56 (bench/results/HISTORY.md: 2026-11-24-h200-fused1d2).
    pub const fn splits(&self) -> bool {
        matches!(self.dims, crate::geometry::Dims::Two) || self.spans_block()
    }

    /// 32-bit registers of the windows of all steps per lane: `T * 2 * ry` rows of `k`
    /// elements (of 16 bytes per vector, at least one register each).
    pub const fn window_words(&self) -> u32 {
        self.steps * 2 * self.radius_y * self.per_lane * (16 / self.width).div_ceil(4)
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
/// windows (unrolled: each runs the steps whose rows reach an output), then one iteration per
/// output row, each storing step `T`'s row.
///
/// Each window holds the `2 * ry` rows above its step's newest row: step `s` reads them and
/// the row step `s - 1` has just produced (in 1D terms, the row is still in the registers it was
/// computed in), and then that row enters the window. On the interior path a window has
/// `2 * ry + 1` register rows, and the new row enters the one whose row the iteration before
/// read last (dead since), so ptxas computes it in place: entering the oldest, which the step
/// reads after the row is computed, every new row was copied (40 of the 373 SASS instructions
/// of an iteration of 8192 x 8192 heat at T = 10). With the extra row the interior loop runs
/// 11.9% fewer instructions, and on an H200 2D heat went from 3.16x to 3.34x the copy per
/// launch, a 5-point average from 4.06x to 4.24x (bench/results/HISTORY.md: 2026-11-24-h200-heat2d4),
/// although ptxas gives a 5-point sum's interior kernel 146 registers at T = 10 against 128.
/// The edge path keeps `2 * ry` register rows: with the extra one its kernel took 186 registers
/// against 174 for heat, and a 5-point sum's spilled under `zero`. The windows' rows are not
/// moved from register to register as the tile moves down: their registers take the role of
/// their rows in turn, so the loops' bodies are as many iterations as a window has register
/// rows, each with the roles turned once more (the iterations left over run after the loop).
/// Each iteration loads the next one's input row once its own has entered the window, so the
/// load's latency hides behind the other steps; the last iteration loads none (its row would
/// lie past the strip).
pub(crate) fn strip(build: &mut Build, interior: bool) -> Vec<Stmt> {
    let tile = build.tile;
    let fill = 2 * tile.steps * tile.radius_y;
    let mut out = Vec::new();
    let invariant = build.invariants(&mut out);
    // windows[f][s][p]: the lane's elements of one of the rows of state field f of step s (0:
    // the input) its next step reads, and on the interior path one more, which the row it
    // produces enters (none if ry = 0).
    let held = 2 * tile.radius_y;
    let sets = if held == 0 { 0 } else { held + u32::from(interior) };
    let states = build.state_fields();
    let element = build.body.element();
    let windows: Vec<Vec<Vec<Vec<Reg>>>> = (0..states)
        .map(|_| {
            (0..tile.steps)
                .map(|_| (0..sets).map(|_| (0..tile.per_lane).map(|_| build.reg(element)).collect()).collect())
                .collect()
        })
        .collect();
    let ahead: Vec<Vec<Reg>> = (0..states).map(|_| (0..tile.per_lane).map(|_| build.reg(element)).collect()).collect();
    if fill > 0 {
        out.push(Stmt::Op(Op::Stream { axis: Axis::Y, by: -(fill as i32) }));
    }
    for (field, ahead) in ahead.iter().enumerate() {
        build.load_into(field as u32, interior, fill, ahead, &mut out);
    }
    let strip = Strip { windows: &windows, ahead: &ahead, invariant: &invariant, interior };
    let period = sets.max(1);
    // Filling, step s's rows above box row s * ry lie outside every output's cone: an
    // iteration whose newest input is box row f runs the steps up to f / (2 * ry) only.
    for f in 0..fill {
        out.extend(strip.iteration(build, false, true, f % period, tile.steps.min(f / held)));
    }
    let mut turn = fill % period;
    for (times, store, next) in [(tile.rows - 1, true, true), (1, true, false)] {
        let mut run = |turn: u32| strip.iteration(build, store, next, turn % period, tile.steps);
        if times >= period {
            let body = (turn..turn + period).flat_map(&mut run).collect();
            out.push(Stmt::Loop { times: times / period, body });
        }
        out.extend((turn..turn + times % period).flat_map(&mut run));
        turn = (turn + times) % period;
    }
    out
}

/// What every iteration of a strip's path reads: the windows' registers and the next input
/// row's, each per state field ([`Build::state_fields`]), the body's invariant values, and
/// whether the path is the interior one.
struct Strip<'a> {
    windows: &'a [Vec<Vec<Vec<Reg>>>],
    ahead: &'a [Vec<Reg>],
    invariant: &'a [Option<Reg>],
    interior: bool,
}

impl Strip<'_> {
    /// One iteration, the tile's output row 0 being its current row: step each window once, the
    /// first from the input row `2 * T * ry` below output row 0 (loaded the iteration before),
    /// load the next (if `next`), store step `T`'s row (if `store`), and move the tile one row
    /// down. Of a window's `m` register rows, window row `j` (`0` the oldest) is register row
    /// `(j + turn) % m`, and the new row enters register row `(2 * ry + turn) % m` (the oldest
    /// where `m` is `2 * ry`). Every state field steps alike.
    fn iteration(&self, build: &mut Build, store: bool, next: bool, turn: u32, steps: u32) -> Vec<Stmt> {
        let (tile, body) = (build.tile, build.body);
        let (invariant, interior) = (self.invariant, self.interior);
        let (t, ry, k) = (tile.steps, tile.radius_y, tile.per_lane as i64);
        let (held, span) = ((2 * ry) as usize, (2 * ry + 1) as usize);
        let states = build.state_fields();
        let sets = self.windows.first().and_then(|field| field.first()).map_or(1, Vec::len).max(1);
        // windows[f][s][j]: window row j of state field f of step s; free[f][s]: the registers
        // its new row enters.
        let windows: Vec<Vec<Vec<Vec<Reg>>>> = self
            .windows
            .iter()
            .map(|field| {
                field.iter().map(|w| (0..held).map(|j| w[(j + turn as usize) % sets].clone()).collect()).collect()
            })
            .collect();
        let free: Vec<Vec<Option<&[Reg]>>> = self
            .windows
            .iter()
            .map(|field| field.iter().map(|w| w.get((held + turn as usize) % sets).map(Vec::as_slice)).collect())
            .collect();
        let mut out = Vec::new();
        // Input box row of the newest step-0 row: box rows count from `T * ry` above output row 0.
        let newest = 2 * t * ry;
        // The row step s - 1 produced this iteration (the input row for s = 1), per state field.
        let mut produced: Vec<Vec<Reg>> = self.ahead.to_vec();
        for s in 1..=steps {
            // Step s computes box row `centre` from step s - 1's rows (box rows centre - ry ..= centre + ry).
            let centre = newest - s * ry;
            let first = centre - ry;
            let rows: Vec<Vec<Vec<Reg>>> = windows
                .iter()
                .zip(&produced)
                .map(|(field, produced)| field[s as usize - 1].iter().cloned().chain([produced.clone()]).collect())
                .collect();
            let mut state: Vec<Vec<Option<Owned>>> = (0..states).map(|_| (0..span).map(|_| None).collect()).collect();
            let mut coefficients: Vec<Vec<Option<Owned>>> =
                (states..body.fields()).map(|_| (0..span).map(|_| None).collect()).collect();
            for (field, d) in body.used_field_taps() {
                let j = (d.along(1) + ry as i32) as usize;
                match field.checked_sub(states) {
                    None if state[field as usize][j].is_none() => {
                        let own = rows[field as usize][j].clone();
                        state[field as usize][j] = Some(build.exchange(field, Some(d.along(1)), own, &mut out));
                    }
                    Some(c) if coefficients[c as usize][j].is_none() => {
                        let own: Vec<Reg> = (0..k).map(|_| build.reg(body.element())).collect();
                        // Coefficients load element by element: see `Build::load_into`.
                        build.load_into(field, false, first + j as u32, &own, &mut out);
                        coefficients[c as usize][j] = Some(build.exchange(field, Some(d.along(1)), own, &mut out));
                    }
                    _ => {}
                }
            }
            let mut values: Vec<Vec<Reg>> = vec![Vec::with_capacity(k as usize); states as usize];
            let mut computed = Computed::default();
            for e in 0..k {
                let tap = |field: u32, d: Offset| {
                    let j = (d.along(1) + ry as i32) as usize;
                    let owned = match field.checked_sub(states) {
                        None => &state[field as usize][j],
                        Some(c) => &coefficients[c as usize][j],
                    };
                    owned.as_ref().and_then(|o| o.at(e + d.along_x() as i64)).unwrap_or_default()
                };
                let results = build.element(invariant, [e, 0, 0], tap, &mut computed, &mut out);
                for (field, result) in values.iter_mut().zip(results) {
                    field.push(result);
                }
            }
            for (field, field_values) in values.iter_mut().enumerate() {
                if let (false, Boundary::Zero | Boundary::Clamp) = (interior, build.boundary) {
                    let dsts: Vec<Reg> = (0..k).map(|_| build.reg(body.element())).collect();
                    let values = std::mem::replace(field_values, dsts.clone());
                    out.push(Stmt::Op(Op::StepRule { values, dsts }));
                }
                if s < t && !interior && matches!(build.boundary, Boundary::Zero | Boundary::Clamp) {
                    // Only while the strip fills can a step's new row be the input's first.
                    let first = !store;
                    out.push(Stmt::Op(Op::RowRule {
                        row: field_values.clone(),
                        window: windows[field][s as usize].clone(),
                        at: centre,
                        first,
                    }));
                }
            }
            // Step s - 1's new row enters its window's free registers (none if ry = 0), and the
            // input row's registers take the next row: a value of step s that is still one of
            // those registers, of any state field (a body returning a tap), is first copied aside.
            let slots: Vec<&[Reg]> = free.iter().map(|field| field[s as usize - 1].unwrap_or(&[])).collect();
            let overwritten: Vec<Reg> = match s == 1 && next {
                true => self.ahead.concat(),
                false => Vec::new(),
            };
            let flat = build.aside(
                values.concat(),
                |reg| slots.iter().any(|slot| slot.contains(&reg)) || overwritten.contains(&reg),
                &mut out,
            );
            let values: Vec<Vec<Reg>> = flat.chunks((k as usize).max(1)).map(<[Reg]>::to_vec).collect();
            for (slot, produced) in slots.iter().zip(&produced) {
                if !slot.is_empty() {
                    out.push(Stmt::Op(Op::Carry(slot.iter().copied().zip(produced.iter().copied()).collect())));
                }
            }
            if s == 1 && next {
                for (field, ahead) in self.ahead.iter().enumerate() {
                    build.load_into(field as u32, interior, newest + 1, ahead, &mut out);
                }
            }
            produced = values;
        }
        // The last step run's new row enters its window, which no step reads this iteration.
        if steps < t {
            for (free, produced) in free.iter().zip(&produced) {
                if let Some(slot) = free[steps as usize] {
                    out.push(Stmt::Op(Op::Carry(slot.iter().copied().zip(produced.iter().copied()).collect())));
                }
            }
            if steps == 0 && next {
                for (field, ahead) in self.ahead.iter().enumerate() {
                    build.load_into(field as u32, interior, newest + 1, ahead, &mut out);
                }
            }
        }
        if store {
            for (field, produced) in produced.into_iter().enumerate() {
                let field = field as u32;
                out.push(match (interior, build.boundary) {
                    // The interior's outputs all exist, in rows of whole vectors (as its input's).
                    (true, Boundary::Zero | Boundary::Clamp | Boundary::Wrap)
                        if tile.width > 1 && tile.lead % tile.width == 0 =>
                    {
                        let (lead, width) = (tile.lead, tile.width);
                        Stmt::Op(Op::StoreOwned { srcs: produced, field, lead, width, row: 0 })
                    }
                    _ => build.stores(field, produced),
                });
            }
        }
        out.push(Stmt::Op(Op::Stream { axis: Axis::Y, by: 1 }));
        out
    }
}
