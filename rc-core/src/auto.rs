//! `distribution = auto`: the distribution (and, unless the user fixed it, the outputs per
//! thread) from a cost model of each candidate's compiled warp program.
//!
//! A stencil kernel is limited by whichever of three throughputs of an SM it exhausts first
//! (`bench/results/*/ANALYSIS.md` has the profiles behind each term):
//! - DRAM: every output reads one element of each input field and writes one, wherever the
//!   cache keeps them;
//! - instruction issue: four warp instructions per clock, spent on the body's operations and on
//!   everything a distribution adds (shuffles and their selects, loads, staging, stores);
//! - the L1/shared-memory data pipe: one pass (wavefront) per clock, a 16-byte-per-lane global
//!   access costing one pass per 128-byte line it touches, a shuffle or a conflict-free shared
//!   access one pass per 128 bytes.
//!
//! Issue only reaches its peak with enough warps to hide latency, so its term is divided by an
//! efficiency that falls with the occupancy the registers and shared memory allow. Each
//! candidate is compiled and counted, so the model sees the actual schedule, not a formula.
//!
//! In 2D and 3D a tile's rows and planes multiply its registers, and ptxas, left alone, took up
//! to twice the estimate (it hoists the rows' loads), so each candidate also gets launch bounds
//! (`min_blocks_per_sm`) unless the user fixed them: the most blocks per SM, up to 4, whose
//! register cap is a quarter above the estimate, else 2 where ptxas can fit the registers to
//! two blocks without spilling much. There the model also weighs two vectors of outputs per
//! thread along x, and DRAM's term counts the loads each warp keeps in flight, not its warps
//! alone. A 3D stencil reaching along y or z gets staged planes instead (a rule from
//! measurements, not from the terms: see `staged_planes`).

use std::fmt;

use crate::body::{BinaryOp, Body, Node, UnaryOp};
use crate::error::{Error, PatternError, ScheduleError};
use crate::geometry::Dims;
use crate::layout::Layout;
use crate::machine::{LaunchBounds, Op};
use crate::pattern::Pattern;
use crate::program::{Instr, WarpProgram};
use crate::ring::RingPart;
use crate::scalar::ScalarType;
use crate::strategy::Strategy;
use crate::time_steps::FusedTile;

/// DRAM bytes an SM moves per clock (H100/H200: ~4.2 TB/s over 132 SMs at ~1.98 GHz).
const DRAM_BYTES_PER_CLOCK: f64 = 16.0;
/// Warp instructions an SM issues per clock (four schedulers).
const ISSUE_PER_CLOCK: f64 = 4.0;
/// The issue rate reached with enough warps per scheduler (measured 0.79 to 0.85 by ncu).
const ISSUE_EFFICIENCY: f64 = 0.85;
/// Warps per scheduler from which latency is hidden (fewer: issue efficiency falls in proportion).
const WARPS_TO_HIDE_LATENCY: f64 = 8.0;
/// Resident warps per SM from which a DRAM-bound kernel reaches the copy bandwidth (H200: at
/// r = 8, 64 and 48 warps ran at 0.97 to 0.99 of the roofline, 40 at 0.70 to 0.85, 24 at 0.47
/// to 0.50).
const WARPS_TO_FILL_DRAM: f64 = 48.0;
/// Loads per SM a 2D/3D tile keeps in flight (resident warps times the load instructions a lane
/// issues per step before it waits) from which it keeps DRAM busy. ncu on an H100
/// (bench/results/HISTORY.md: 2026-11-24-h100-grid-profile.txt): 3D star r = 1 with 24 warps of 9 loads
/// waited on L1TEX 60% of the time and ran at 0.78 of copy (216 loads), with 16 warps of 18
/// loads 40% and 0.92 (288); 2D tiles of 14 or more loads at 16 to 32 warps (448) ran at 0.93 to
/// 0.97. 1D tiles are modelled by their warps alone ([`WARPS_TO_FILL_DRAM`]).
const LOADS_TO_FILL_DRAM: f64 = 256.0;
/// The L1 cost of a global vector access whose lanes are farther apart than they read, per
/// pass (half-used sectors).
const STRIDED_ACCESS_COST: f64 = 1.15;
/// Registers ptxas allocates beyond [`WarpProgram::register_estimate`], about.
const REGISTER_SLACK: u32 = 8;
/// The same for a 3D tile streaming along z: ptxas issues each step's plane loads together and
/// keeps them live beside the carried partial sums, which the estimate (each load just before
/// its reader) does not see. Over the 3D tiles of bench/results/HISTORY.md: 2026-11-24-ptxas-3d-registers.txt
/// (stars and boxes r = 1, 2; 4 and 8 outputs per thread; 1, 2, 4 rows) the fewest registers
/// ptxas compiles them in without spilling run 31 to 72 above the estimate, median 53
/// (`tests/registers.rs` checks a few against ptxas).
pub const STREAMING_REGISTER_SLACK: u32 = 52;
/// The data pipe's reachable fraction of one wavefront per clock (measured 0.90 to 0.93).
const L1_EFFICIENCY: f64 = 0.9;
/// Instructions a thread spends once per tile, whatever it computes: parameters, indices,
/// the boundary test, branches.
const TILE_OVERHEAD: f64 = 25.0;
/// When the fastest candidate is DRAM-bound, those predicted within this fraction of it count
/// as equally fast; among them, the one with the most headroom below the DRAM bound wins (the
/// least busy issue or data pipe: at r = 12 and 16 that was the fastest measured).
const TIE: f64 = 0.03;
/// The margin a 2D/3D tile's estimated registers keep below the cap of the launch bounds chosen
/// for it. On an H100 (bench/results/HISTORY.md: 2026-11-24-h100-grid-bounds.*) the bounds so chosen ran
/// within 3% of the fastest bounds measured for the same tile, some spilling a few dozen bytes
/// (ptxas, unbounded, took up to twice the estimate: it hoists the rows' loads); twice the
/// estimate as the margin chose fewer blocks and ran up to 9% slower.
const BOUND_MARGIN: f64 = 1.25;
/// Blocks per SM the model asks for at most: more would cap registers below what ptxas needs
/// for the rows it keeps in flight.
const MAX_BOUND_BLOCKS: u32 = 4;
/// How far past two blocks' cap a tile's estimate may go and still be bounded to two: 2D box
/// r = 4 and the 3D r = 2 tiles ran faster so (0.31 -> 0.49, 0.46 -> 0.64, 0.24 -> 0.31 of
/// copy), spilling a few bytes.
const BOUNDED_REGISTER_EXCESS: f64 = 1.25;
/// Warps per SM a 2D tile of two vectors per thread is bounded to keep where it can
/// ([`wide_bounds`]). Two vectors are a candidate, not a preference: on an H200
/// (bench/results/HISTORY.md: 2026-11-24-h200-grid2d4, call 3, f32 8192^2), once interior tiles stored
/// without row tests, one vector under 4 blocks ran at 0.97 to 0.98 of the roofline for star
/// r = 1, box r = 1, star r = 2 against two vectors' 0.92 to 0.95, and f64 star r = 1 at 0.99
/// against 0.97 (with the tests, bench/results/HISTORY.md: 2026-11-24-h200-grid2d, two vectors had won).
const WIDE_2D_WARPS: f64 = 24.0;
/// The radius along y or z from which a 3D stencil gets staged planes ([`staged_planes`]): every
/// 3D stencil that reaches along y or z.
const STAGED_PLANES_FROM_RADIUS: u32 = 1;
/// Rows per warp of staged planes unless the attribute gives them: on an H200 (bench/results/
/// 2026-11-24-h200-planes3d, calls 1 and 2) 8 warps x 4 rows ran 3D box r = 2 at 0.29 and 0.32
/// of copy against 0.26 and 0.29 with 2 rows, star r = 2 at 0.63 and 0.61 against 0.58 and
/// 0.61 (each ring row read serves more output rows; the y halo is re-read less).
const STAGED_PLANES_ROWS: u32 = 4;
/// Rows per warp, threads per block and blocks per SM of staged planes at radius 1, unless the
/// attribute gives them: a box's (rows off the axes) and a star's. On an H200 (bench/results/
/// 2026-11-24-h200-planes3d2, call 2, with the ring's heads and tails) box r = 1 ran at 0.67 of
/// copy with 4 warps x 2 rows against 0.62 with 8 x 2, 0.57 and 0.61 with 4 and 8 warps x 4
/// rows, and the register tile's 0.61. Once warps no longer waited for their plane fetch
/// (2026-11-24-h200-planes3d4, call 2), box r = 1 4 x 2 ran at 0.82 and star r = 1 4 x 4 under
/// 4 blocks at 0.885 (113 registers; 0.81 at the 89 ptxas takes unbounded, 0.85 at 4 x 2)
/// against the register tile's 0.79.
const STAGED_BOX_AT_ONE: (u32, u32, Option<u32>) = (2, 128, None);
const STAGED_STAR_AT_ONE: (u32, u32, Option<u32>) = (4, 128, Some(4));
/// Threads per block of a 2D tile bound by issue, where the attribute gave no block: the
/// registers per thread stay (twice the blocks per SM). On an H200 (bench/results/
/// 2026-11-25-h200-box4) the 2D box r = 4 tile ran at 0.710 of its add bound in blocks of 4
/// warps against 0.699 in blocks of 8 (16: 0.69; 2 warps 0.72 against 4 warps' 0.72 with the
/// later changes): a block's warps start together and wait together for their first rows, and
/// smaller blocks spread those waits.
const ISSUE_BOUND_2D_THREADS: u32 = 128;
/// Registers, shared memory, threads and blocks of one SM (sm_80 and sm_90).
const REGISTERS_PER_SM: u32 = 65536;
const SHARED_BYTES_PER_SM: u32 = 228 * 1024;
const THREADS_PER_SM: u32 = 2048;
const BLOCKS_PER_SM: u32 = 32;

/// What the model predicts for one candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub layout: Layout,
    pub outputs_per_thread: u32,
    /// The launch bounds' blocks per SM the candidate was compiled with.
    pub min_blocks_per_sm: Option<u32>,
    /// Instructions a lane issues per output (f64 arithmetic counts twice: half rate).
    pub instructions: f64,
    /// Data-pipe wavefronts per output.
    pub wavefronts: f64,
    /// Estimated registers per thread.
    pub registers: u32,
    /// Registers the tile needs, about: its estimate plus ptxas' usual slack. Above
    /// `registers` (the cap of its launch bounds) ptxas spills.
    pub needed_registers: u32,
    pub warps_per_scheduler: f64,
    /// SM clocks per output for DRAM, issue (at the occupancy's efficiency) and the data pipe.
    pub dram: f64,
    pub issue: f64,
    pub l1: f64,
}

impl Estimate {
    /// Predicted SM clocks per output: the slowest of the three.
    pub fn cycles(&self) -> f64 {
        self.dram.max(self.issue).max(self.l1)
    }
    /// What limits it.
    pub fn bound(&self) -> Bound {
        if self.dram >= self.issue && self.dram >= self.l1 {
            Bound::Dram
        } else if self.issue >= self.l1 {
            Bound::Issue
        } else {
            Bound::L1
        }
    }
    /// Clocks per output of the busiest on-chip resource: the margin below DRAM.
    fn pressure(&self) -> f64 {
        self.issue.max(self.l1)
    }
}

/// The throughput that limits a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Dram,
    Issue,
    L1,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::Dram => "DRAM",
            Bound::Issue => "issue",
            Bound::L1 => "L1",
        })
    }
}

/// The chosen configuration and every candidate the model weighed.
#[derive(Clone, Debug)]
pub struct Choice {
    pub layout: Layout,
    pub pattern: Pattern,
    pub estimates: Vec<Estimate>,
}

/// What the attribute gave, which the cost model keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Given {
    /// `outputs_per_thread`: only distributions that divide it are weighed.
    pub outputs: bool,
    /// `rows_per_warp`: otherwise staged planes take the model's rows (4, or 2 for a box at
    /// radius 1; all measured).
    pub rows: bool,
    /// `max_threads_per_block` or `min_blocks_per_sm`: otherwise staged planes at radius 1 take
    /// the model's block and bounds (an explicit 256 threads is given, not the default).
    pub bounds: bool,
    /// `prefetch`: otherwise a 2D block tile bound by issue prefetches ([`choose_given`]).
    pub prefetch: bool,
}

/// Chooses the distribution for `pattern` and `body`. With `fixed_outputs`, the pattern's
/// outputs per thread stays and only distributions that divide it are weighed; otherwise
/// each candidate V comes with outputs_per_thread = V. The rows per warp stay as they are.
pub fn choose(pattern: Pattern, fixed_outputs: bool, body: &Body) -> Result<Choice, Error> {
    let given = Given {
        outputs: fixed_outputs,
        rows: true,
        bounds: LaunchBounds::of(&pattern).is_some(),
        prefetch: pattern.prefetches(),
    };
    choose_given(pattern, given, body)
}

/// [`choose`], keeping of the pattern's tile what `given` says the attribute gave.
pub fn choose_given(pattern: Pattern, given: Given, body: &Body) -> Result<Choice, Error> {
    let fixed_outputs = given.outputs;
    let mut candidates: Vec<(Layout, u32)> = Vec::new();
    // Granules of 16 bytes or more: narrower ones leave vector loads and stores half used. In
    // 2D and 3D exactly 16 bytes: a tile's rows multiply every other size's registers, and on
    // an H100 window(4) with 4 outputs per thread was the fastest f32 tile for every radius
    // measured (bench/results/HISTORY.md: 2026-11-23-h100-grid-tiles.csv); staged windows are 1D only.
    let one_vector = 16 / body.element().bytes();
    let grid = pattern.dims() != Dims::One;
    let sizes: &[u32] = if grid { &[one_vector] } else { &[4, 8, 16, 32] };
    for &v in sizes {
        for layout in [Layout::Window(v), Layout::Granule(v), Layout::Staged(v)]
            .into_iter()
            .filter(|l| !grid || !matches!(l, Layout::Staged(_)))
        {
            match fixed_outputs {
                true if pattern.outputs_per_thread() % v == 0 => {
                    candidates.push((layout, pattern.outputs_per_thread()))
                }
                true => {}
                // In 2D and 3D also two vectors per thread: twice the loads in flight per warp.
                false if grid => candidates.extend([(layout, v), (layout, 2 * v)]),
                false => candidates.push((layout, v)),
            }
        }
    }
    match fixed_outputs {
        true => candidates.push((Layout::RoundRobin, pattern.outputs_per_thread())),
        false => candidates.extend([1u32, 2, 4, 8].map(|p| (Layout::RoundRobin, p))),
    }
    let mut estimates = Vec::new();
    let mut refused: Option<Error> = None;
    for (layout, p) in candidates {
        let Ok(candidate) = with_outputs(pattern, p) else { continue };
        match WarpProgram::candidate_for(candidate, layout, body) {
            Ok(program) if !program.register_estimate().exceeds_limit() => {
                if bounded(&program).is_none() {
                    estimates.push(estimate(&program, layout));
                }
                for bounds in [bounded(&program), wide_bounds(&program, one_vector)].into_iter().flatten() {
                    match WarpProgram::candidate_for(bounds, layout, body) {
                        Ok(program) => estimates.push(estimate(&program, layout)),
                        Err(e) => refused = Some(e),
                    }
                }
            }
            Ok(_) => {}
            Err(e) => refused = Some(e),
        }
    }
    // Round-robin only where no granule fits the outputs per thread the user fixed: its model
    // misses the cost of its scalar loads, and it never measured fastest.
    if estimates.iter().any(|e| e.layout != Layout::RoundRobin) {
        estimates.retain(|e| e.layout != Layout::RoundRobin);
    }
    let fastest = estimates.iter().min_by(|a, b| a.cycles().total_cmp(&b.cycles())).cloned();
    let best = match fastest {
        // DRAM-bound: the candidates that are too differ by what the model does not see. In 2D
        // and 3D the fewest outputs per thread among them first: there the register estimate
        // runs short of ptxas' count, and the larger tile is the one that spills (3D star r = 2
        // with 8 outputs per thread under two blocks: 620 bytes, 0.45 of copy against 0.645;
        // 2D, [`WIDE_2D_WARPS`]).
        Some(f) if f.bound() == Bound::Dram => estimates
            .iter()
            .filter(|e| e.cycles() <= f.cycles() * (1.0 + TIE))
            .min_by(|a, b| {
                let (pressure, outputs) =
                    (a.pressure().total_cmp(&b.pressure()), a.outputs_per_thread.cmp(&b.outputs_per_thread));
                if grid {
                    outputs.then(pressure)
                } else {
                    pressure.then(outputs)
                }
            })
            .cloned(),
        other => other,
    };
    let Some(best) = best else {
        return Err(refused.unwrap_or(Error::Schedule(ScheduleError::NoCandidate)));
    };
    if let Some((staged, pattern)) = staged_planes(pattern, given, body, one_vector) {
        estimates.push(staged.clone());
        estimates.sort_by(|a, b| a.cycles().total_cmp(&b.cycles()));
        return Ok(Choice { layout: staged.layout, pattern, estimates });
    }
    // The candidate's pattern was built the same way, so this cannot fail.
    let pattern = with_outputs(pattern, best.outputs_per_thread).unwrap_or(pattern);
    let pattern = match (pattern.dims(), best.bound(), given.bounds) {
        (Dims::Two, Bound::Issue, false) if pattern.threads_per_block() > ISSUE_BOUND_2D_THREADS => {
            let per = pattern.threads_per_block() / ISSUE_BOUND_2D_THREADS;
            pattern.with_launch_bounds_unchecked(ISSUE_BOUND_2D_THREADS, best.min_blocks_per_sm.map(|b| b * per))
        }
        _ => pattern.with_launch_bounds_unchecked(pattern.threads_per_block(), best.min_blocks_per_sm),
    };
    // A 2D block tile bound by issue prefetches a later band's rows into L2 ([`crate::prefetch`])
    // unless the attribute says: on an H200 the 2D box r = 4 tile ran 0.8-3.1% faster at the four
    // grid widths of 64M elements tried (0.767 of its add bound against 0.744 at 8192^2;
    // bench/results/2026-11-25-h200-session10). Of two tiles bound by DRAM, star r = 4 lost 2.3%
    // with it and box r = 2 gained 2%: no rule for those yet.
    // (`Pattern::stacks_warps`: a straight-line 2D tile, which may prefetch.)
    let block_tile = pattern.stacks_warps() && best.layout.stacks_warps(Strategy::RegisterCache, &pattern);
    let pattern = match given.prefetch {
        false => pattern.with_prefetch_unchecked(best.bound() == Bound::Issue && block_tile),
        true => pattern,
    };
    estimates.sort_by(|a, b| a.cycles().total_cmp(&b.cycles()));
    Ok(Choice { layout: best.layout, pattern, estimates })
}

/// The staged-plane tile ([`Layout::Planes`]) for a 3D stencil that reaches
/// [`STAGED_PLANES_FROM_RADIUS`] or more along y or z (at radius 1 with the block of
/// [`STAGED_BOX_AT_ONE`] or [`STAGED_STAR_AT_ONE`]), with the rows, planes, threads and launch
/// bounds it was given, where it compiles (its ring fits a block). There a register tile
/// re-reads `(rows + 2 ry) / rows` of each plane's rows and holds them in registers beside the
/// carried sums; the staged planes' block reads each once into shared memory. Measured on an
/// H100 (bench/results/HISTORY.md: 2026-11-24-h100-staged-planes-dynamic), 512^3 f32: at radius 2 staged
/// planes of 8 warps x 2 rows ran at 0.70 (star) and 0.37 (box) of copy against the register
/// tiles' 0.62 and 0.29; at radius 1 the register tiles ran as fast or faster (0.92 and 0.82
/// against 0.86 and 0.82), so the model keeps them there. On an H200 (bench/results/
/// 2026-11-24-h200-planes3d, call 2) the same: radius 2 staged 0.61 and 0.32 against 0.50 and
/// 0.20, radius 1 the register tiles 0.80 and 0.61 against the best staged 0.75 and 0.64 (4
/// warps; 8 warps, the default block, 0.69 and 0.58). With the ring's heads and tails
/// (2026-11-24-h200-planes3d2) box r = 1 staged 0.67 against the register tile's 0.61, star
/// r = 1 at most 0.71 against 0.80. Those staged tiles made every warp of a block at an x edge
/// wait for its plane fetch before its taps; without that (2026-11-24-h200-planes3d4) staged
/// planes won at radius 1 too: star 0.885 and box 0.82 against 0.79 and 0.61.
fn staged_planes(pattern: Pattern, given: Given, body: &Body, vector: u32) -> Option<(Estimate, Pattern)> {
    let radius = pattern.radius();
    let reach = radius.along(1).max(radius.along(2));
    if pattern.dims() != Dims::Three || pattern.streams_rows() || reach < STAGED_PLANES_FROM_RADIUS {
        return None;
    }
    let at_one = (reach == 1).then(|| if reads_off_axis_rows(body) { STAGED_BOX_AT_ONE } else { STAGED_STAR_AT_ONE });
    let outputs = if given.outputs { pattern.outputs_per_thread() } else { vector };
    let layout = Layout::Planes(vector);
    let tile = with_outputs(pattern, outputs).ok()?;
    // At radius 1 the model's block and bounds too, where the attribute asked for no launch bounds.
    let tile = match at_one {
        Some((_, threads, blocks)) if !given.bounds => tile.with_launch_bounds(threads, blocks).ok()?,
        _ => tile,
    };
    let model_rows = at_one.map_or(STAGED_PLANES_ROWS, |(rows, ..)| rows);
    // The model's rows first where the attribute gave none; the pattern's where they do not fit.
    let rows = (!given.rows).then(|| with_tile(tile, outputs, model_rows).ok()).flatten();
    rows.into_iter().chain([tile]).find_map(|candidate| {
        let program = WarpProgram::candidate_for(candidate, layout, body).ok()?;
        (!program.register_estimate().exceeds_limit()).then(|| (estimate(&program, layout), candidate))
    })
}

/// Whether `body` reads input rows off its planes' axes (a tap with both `dy` and `dz` nonzero,
/// as a box's): a register tile holds each such row, staged planes read it from the ring.
fn reads_off_axis_rows(body: &Body) -> bool {
    body.used_taps().iter().any(|t| t.along(1) != 0 && t.along(2) != 0)
}

/// `pattern` with `outputs` outputs per thread, everything else (rows, planes, launch bounds)
/// kept.
fn with_outputs(pattern: Pattern, outputs: u32) -> Result<Pattern, PatternError> {
    with_tile(pattern, outputs, pattern.rows_per_warp())
}

/// `pattern` with `outputs` outputs per thread and `rows` rows per warp, everything else kept.
fn with_tile(pattern: Pattern, outputs: u32, rows: u32) -> Result<Pattern, PatternError> {
    Pattern::grid(pattern.radius(), pattern.warp(), outputs, rows, pattern.planes_per_warp(), pattern.boundary())
        .and_then(|p| p.with_streamed_rows(pattern.streams_rows()))
        .and_then(|p| p.with_prefetch(pattern.prefetches()))
        .and_then(|p| p.with_launch_bounds(pattern.threads_per_block(), pattern.min_blocks_per_sm()))
}

/// `program`'s pattern with launch bounds, where it is a 2D or 3D tile without them: the most
/// blocks per SM (up to [`MAX_BOUND_BLOCKS`]) whose register cap is [`BOUND_MARGIN`] above its
/// estimate (a streaming 3D tile's cap only has to hold its estimate: that already counts
/// the plane's loads ptxas keeps live), else two blocks where the estimate with the ordinary
/// slack is at most [`BOUNDED_REGISTER_EXCESS`] times their cap.
fn bounded(program: &WarpProgram) -> Option<Pattern> {
    let pattern = program.declared;
    if pattern.dims() == Dims::One || pattern.min_blocks_per_sm().is_some() {
        return None;
    }
    let cap = |blocks: u32| f64::from(register_cap(pattern, blocks));
    let margin = if streams_planes(program) { 1.0 } else { BOUND_MARGIN };
    let needed = f64::from(needed_registers(program, slack(program)));
    let blocks = (2..=MAX_BOUND_BLOCKS).rev().find(|&b| needed * margin <= cap(b));
    // The measured excess (BOUNDED_REGISTER_EXCESS) is over the estimate with the ordinary slack.
    let plain = f64::from(needed_registers(program, REGISTER_SLACK));
    let blocks = blocks.or((plain <= cap(2) * BOUNDED_REGISTER_EXCESS).then_some(2))?;
    Some(pattern.with_launch_bounds_unchecked(pattern.threads_per_block(), Some(blocks)))
}

/// For a 2D tile of two vectors per thread that [`bounded`] leaves under fewer than
/// [`WIDE_2D_WARPS`] warps per SM: the most blocks per SM that keep them whose cap holds its
/// estimate and slack, without [`BOUND_MARGIN`]. On an H200 (bench/results/HISTORY.md: 2026-11-24-h200-grid2d)
/// star r = 2 so (80 registers, 32 bytes of stack) ran at 0.90 of copy against 0.87 under the
/// margin's two blocks; box r = 2 and star r = 4, whose estimate (81) passes the cap, spilled
/// 256-296 bytes at 3 blocks and ran at 0.64 and 0.51.
fn wide_bounds(program: &WarpProgram, vector: u32) -> Option<Pattern> {
    let pattern = program.declared;
    let blocks = bounded(program).and_then(|p| p.min_blocks_per_sm())?;
    if pattern.dims() != Dims::Two
        || pattern.outputs_per_thread() != 2 * vector
        || f64::from(blocks * pattern.threads_per_block() / 32) >= WIDE_2D_WARPS
    {
        return None;
    }
    let needed = needed_registers(program, slack(program));
    let wide = (2..=MAX_BOUND_BLOCKS).rev().find(|&b| {
        f64::from(b * pattern.threads_per_block() / 32) >= WIDE_2D_WARPS && needed <= register_cap(pattern, b)
    })?;
    Some(pattern.with_launch_bounds_unchecked(pattern.threads_per_block(), Some(wide)))
}

/// Whether `program` is a 3D tile streaming along z (not a 2D tile lifted to stream its rows).
fn streams_planes(program: &WarpProgram) -> bool {
    program.declared.dims() == Dims::Three && program.pattern.streams()
}

/// Registers ptxas allocates beyond the estimate for `program`.
fn slack(program: &WarpProgram) -> u32 {
    if streams_planes(program) {
        STREAMING_REGISTER_SLACK
    } else {
        REGISTER_SLACK
    }
}

/// The estimate plus `slack`, in ptxas' units of 8.
fn needed_registers(program: &WarpProgram, slack: u32) -> u32 {
    (program.register_estimate().total + slack).next_multiple_of(8).max(16)
}

/// Registers ptxas allocates per thread, about: the estimate plus its slack, in ptxas' units
/// of 8, capped by the launch bounds' blocks per SM. Under bounds a 2D/3D tile takes the whole
/// cap: ptxas hoists its rows' loads into what it is given (64 of 64 registers at 4 blocks,
/// 80 of 85 at 3, 94 to 128 of 128 at 2 for the benchmark's default tiles).
fn allocated_registers(program: &WarpProgram) -> u32 {
    let pattern = program.pattern;
    // ptxas allocates about 8 more than the estimate (addressing it keeps live across the
    // paths; tests/registers.rs compares them), streaming 3D tiles more.
    let estimate = needed_registers(program, slack(program));
    let cap = |blocks: u32| register_cap(pattern, blocks) / 8 * 8;
    match (pattern.min_blocks_per_sm(), pattern.dims()) {
        (Some(blocks), Dims::One) => estimate.min(cap(blocks)),
        (Some(blocks), _) => cap(blocks),
        (None, _) => estimate,
    }
}

/// Registers per thread with which `blocks` blocks of `pattern`'s threads fit on an SM.
fn register_cap(pattern: Pattern, blocks: u32) -> u32 {
    REGISTERS_PER_SM / (pattern.threads_per_block() * blocks)
}

/// The model's terms for one compiled candidate.
pub fn estimate(program: &WarpProgram, layout: Layout) -> Estimate {
    let pattern = program.pattern;
    let element = program.element;
    let (bytes, words) = (element.bytes() as f64, element.words() as f64);
    let warp = pattern.warp() as f64;
    let vector = program.vector;
    let width = program.machine.width;
    // 128-byte lines one warp access touches when lanes are `stride` bytes apart and each
    // reads `access` bytes.
    let lines = |stride: f64, access: f64| {
        (((warp - 1.0) * stride + access) / 128.0).ceil().min(warp * (access / 128.0).ceil()).max(1.0)
    };
    // Lanes farther apart than they read leave sectors half used, which costs the L1 more than
    // its passes (window(8) at r = 32: 0.80 clocks per output measured, 0.69 from passes alone).
    let strided = if vector > width { STRIDED_ACCESS_COST } else { 1.0 };
    let vector_lines = lines(vector as f64 * bytes, width as f64 * bytes) * strided;
    let rate = |ty: ScalarType| if ty == ScalarType::F64 { 2.0 } else { 1.0 };
    // Widened 16-bit floats (bf16): each element loaded or staged is widened, each result
    // rounded back (`cvt.rn` and a widening); nothing for other types.
    let widen = |ty: ScalarType| ty.widened().map_or(0.0, |h| h.widen_instructions() as f64);
    let (widen_element, round) =
        (widen(element), |ty: ScalarType| widen(ty) + if ty.widened().is_some() { 1.0 } else { 0.0 });
    let (mut instructions, mut wavefronts) = (TILE_OVERHEAD, 0.0);
    let mut count = |op: &Op| match op {
        Op::Load { cache: Some(_), .. } | Op::Store { .. } => {
            instructions += 5.0 + widen_element;
            wavefronts += lines(bytes, bytes);
        }
        Op::Load { cache: None, .. } | Op::Shared { .. } => {
            instructions += 4.0 + widen_element;
            wavefronts += lines(bytes, bytes);
        }
        Op::LoadVector { dsts, .. } => {
            instructions += 1.0 + dsts.len() as f64 * widen_element;
            wavefronts += vector_lines;
        }
        // Only on the boundary path, which the count does not take: the row's address and,
        // under `clamp`, the edge element spread.
        Op::LoadVectorRule { dsts, .. } => {
            instructions += 2.0 + dsts.len() as f64 * (2.0 + widen_element);
            wavefronts += vector_lines;
        }
        Op::StoreVector { srcs, .. } => {
            instructions += 1.0 + srcs.len() as f64 * widen_element;
            wavefronts += vector_lines;
        }
        // Shared memory: 128 bytes per pass (the padding keeps quarter warps conflict-free).
        Op::ReadStage { dsts, .. } => {
            instructions += 1.0 + dsts.len() as f64 * widen_element;
            wavefronts += lines(width as f64 * bytes, width as f64 * bytes);
        }
        Op::StageWarp { stage, .. } => {
            let rounds = stage.rounds(pattern.warp()) as f64;
            instructions += 12.0 + 2.0 * rounds;
            wavefronts += 2.0 * rounds * lines(width as f64 * bytes, width as f64 * bytes);
        }
        Op::StageBlock { .. } => instructions += 8.0,
        // A piece from the heads or tails: lanes `side` elements apart per copy vector.
        Op::ReadRing { dsts, part, at, .. } => {
            instructions += 1.0 + dsts.len() as f64 * widen_element;
            wavefronts += match (part, program.ring) {
                (RingPart::Heads | RingPart::Tails, Some(ring)) => {
                    lines((at.stride / width * ring.side) as f64 * bytes, dsts.len() as f64 * bytes)
                }
                _ => lines(vector as f64 * bytes, width as f64 * bytes),
            };
        }
        // Staged planes: the thread's share of the block's copy of a plane, per round its
        // vector's position, a load or a store (and a put its heads and tails).
        Op::FetchPlane { .. } => {
            let rounds = program.ring.map_or(0, |ring| ring.rounds()) as f64;
            instructions += 4.0 + 6.0 * rounds;
            wavefronts += rounds * lines(width as f64 * bytes, width as f64 * bytes);
        }
        Op::PutPlane { .. } => {
            let (rounds, side) = program.ring.map_or((0.0, 0.0), |ring| (ring.rounds() as f64, ring.side as f64));
            let sides = if side > 0.0 { 2.0 } else { 0.0 };
            instructions += 4.0 + (6.0 + sides) * rounds;
            wavefronts += rounds
                * (lines(width as f64 * bytes, width as f64 * bytes) + sides * lines(side * bytes, side * bytes));
        }
        Op::BlockBarrier | Op::TurnRing => instructions += 3.0,
        // The distance's load and test, then per round the lane's row and line, the row's test
        // and address, and the prefetch (one request each).
        Op::PrefetchL2 { rows, elements, .. } => {
            let rounds = crate::prefetch::rounds(*rows, *elements, element.bytes(), pattern.warp()) as f64;
            instructions += 3.0 + 9.0 * rounds;
            wavefronts += rounds;
        }
        Op::Carry(moves) => instructions += moves.len() as f64 * words,
        // The plane's origin, row starts and the loop's counter and branch.
        Op::Advance => instructions += 6.0,
        Op::Divisions(run) => instructions += 4.0 * run.len() as f64,
        Op::Neighbour { .. } => {
            instructions += words;
            wavefronts += words;
        }
        // Per element its position, two tests and a select; under `clamp` two broadcasts.
        Op::StepRule { values, .. } => instructions += 4.0 * values.len() as f64 + 2.0 * (values.len() as f64 + 4.0),
        // The tile's row, row starts and the loop's counter and branch.
        Op::Stream { .. } => instructions += 6.0,
        // The row's position and tests; per element a predicated move, per window row too.
        Op::RowRule { row, window, first, .. } => {
            instructions += 4.0 + (row.len() * (1 + usize::from(*first) * window.len())) as f64
        }
        // Per row its position and test; per element a select (under `clamp` one per row).
        Op::PlaneRowsRule { rows, .. } => {
            instructions += rows.iter().map(|row| 4.0 + (row.len() * rows.len()) as f64).sum::<f64>()
        }
        Op::PlaneRule { planes, .. } => {
            instructions += planes.iter().map(|plane| 4.0 + (plane.len() * planes.len()) as f64).sum::<f64>()
        }
        Op::StoreOwned { srcs, width, .. } => {
            let accesses = (srcs.len() as u32 / width) as f64;
            instructions += accesses * if *width == 1 { 5.0 } else { 3.0 };
            wavefronts += accesses * lines(vector as f64 * bytes, *width as f64 * bytes);
        }
        Op::Compute(instr) => match instr {
            Instr::Shuffle { .. } => {
                instructions += words;
                wavefronts += words;
            }
            Instr::Pick { pieces, .. } => instructions += (pieces.0.len() as f64 - 1.0) * words,
            // Two 16-bit elements into one shuffled word and out again.
            Instr::Pack { .. } | Instr::Unpack { .. } | Instr::Straddle { .. } => instructions += 1.0,
            Instr::Binary { dst, op: BinaryOp::Div | BinaryOp::Rem, .. } => {
                instructions += match program.reg_type(*dst) {
                    ScalarType::F32 => 10.0,
                    ScalarType::F64 => 40.0,
                    // 16-bit floats divide in f32: two widenings (f16) or none (bf16), a rounding.
                    ty if ty.half().is_some() => 13.0,
                    // ptxas divides integers through a reciprocal estimate and two corrections
                    // (about 25 SASS instructions), constant divisors too: it does not turn them
                    // into a multiply and shifts (ptxas 13.5, sm_90).
                    _ => 20.0,
                };
            }
            Instr::Binary { dst, op: BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, .. } | Instr::Cast { dst, .. } => {
                instructions += rate(program.reg_type(*dst)) + round(program.reg_type(*dst));
            }
            // The common path of the correctly rounded exp (`ptx/exp.rs`): about 25
            // instructions, 10 of them in double (half the f32 rate on the GPUs rc targets).
            Instr::Unary { op: UnaryOp::Exp, .. } => instructions += 35.0,
            Instr::Unary { dst, .. }
            | Instr::Binary { dst, .. }
            | Instr::Compare { dst, .. }
            | Instr::Select { dst, .. }
            | Instr::MulAdd { dst, .. } => instructions += rate(program.reg_type(*dst)),
            Instr::Param { .. } | Instr::Const { .. } => instructions += 1.0,
            Instr::Load { .. } | Instr::Stage { .. } | Instr::Shared { .. } | Instr::Store { .. } => {}
        },
    };
    // The interior path, the one nearly every tile takes.
    let interior = program.machine.path(|_| true);
    interior.iter().for_each(|op| count(op));
    // Outputs a lane stores on it: every row and plane of its tile, not only those along x; each
    // output is one element stored in each output field.
    let stored = interior
        .iter()
        .map(|op| match op {
            Op::Store { .. } => 1,
            Op::StoreVector { srcs, .. } => srcs.len(),
            _ => 0,
        })
        .sum::<usize>()
        .max(1) as f64;
    let p = stored / f64::from(program.output_fields);
    // The whole-tile test before vector stores.
    if interior.iter().any(|op| matches!(op, Op::StoreVector { .. })) {
        instructions += 6.0;
    }
    let stage_bytes = program.machine.shared_bytes.unwrap_or(0);
    let estimate = allocated_registers(program);
    let threads = pattern.threads_per_block();
    let by_registers = REGISTERS_PER_SM / (estimate * threads);
    let by_shared = SHARED_BYTES_PER_SM.checked_div(stage_bytes).unwrap_or(BLOCKS_PER_SM);
    let blocks = by_registers.min(by_shared).min(BLOCKS_PER_SM).min(THREADS_PER_SM / threads);
    let warps_per_scheduler = (blocks * threads) as f64 / 32.0 / 4.0;
    let efficiency = ISSUE_EFFICIENCY * (warps_per_scheduler / WARPS_TO_HIDE_LATENCY).min(1.0);
    // DRAM stays busy only with enough loads in flight: fewer resident warps, longer gaps. In
    // 2D and 3D each warp's loads per step count too (one plane's when streaming).
    let dram_efficiency = match pattern.dims() {
        Dims::One => (warps_per_scheduler * 4.0 / WARPS_TO_FILL_DRAM).min(1.0),
        _ => {
            let loads = interior.iter().filter(|op| matches!(op, Op::Load { .. } | Op::LoadVector { .. })).count();
            let per_step = loads as f64 / f64::from(pattern.planes_per_warp());
            (warps_per_scheduler * 4.0 * per_step / LOADS_TO_FILL_DRAM).min(1.0)
        }
    };
    let outputs_per_warp = warp * p;
    Estimate {
        layout,
        outputs_per_thread: pattern.outputs_per_thread(),
        min_blocks_per_sm: pattern.min_blocks_per_sm(),
        instructions: instructions / p,
        wavefronts: wavefronts / outputs_per_warp,
        registers: estimate,
        needed_registers: needed_registers(program, slack(program)),
        warps_per_scheduler,
        // Every input field read once, every output field written once.
        dram: (program.fields + program.output_fields) as f64 * bytes
            / DRAM_BYTES_PER_CLOCK
            / dram_efficiency.max(1e-3),
        // Per thread: a hardware warp issues each instruction once for its 32 threads,
        // whatever the logical warp.
        issue: instructions / (ISSUE_PER_CLOCK * 32.0 * p) / efficiency.max(1e-3),
        l1: wavefronts / outputs_per_warp / L1_EFFICIENCY,
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bounds = match self.pattern.min_blocks_per_sm() {
            Some(blocks) => format!(", min_blocks_per_sm = {blocks}"),
            None => String::new(),
        };
        writeln!(
            f,
            "distribution = auto chose {}, outputs_per_thread = {}{bounds}",
            self.layout,
            self.pattern.outputs_per_thread()
        )?;
        writeln!(f, "candidate          P  MB  instr/out  wavefronts/out  regs  warps/sched  clocks/out (DRAM, issue, L1)  bound")?;
        for e in &self.estimates {
            writeln!(
                f,
                "{:<16} {:>3}  {:>2}  {:>9.1}  {:>14.3}  {:>4}  {:>11.1}  {:>6.3} ({:.3}, {:.3}, {:.3})  {}",
                e.layout.to_string(),
                e.outputs_per_thread,
                e.min_blocks_per_sm.map_or("-".to_string(), |b| b.to_string()),
                e.instructions,
                e.wavefronts,
                e.registers,
                e.warps_per_scheduler,
                e.cycles(),
                e.dram,
                e.issue,
                e.l1,
                e.bound()
            )?;
        }
        Ok(())
    }
}

/// Fused time steps per launch unless the attribute says `fuse = T`. In 1D the lane keeps the
/// width 16 steps give it ([`FusedTile::new`]: 16 elements of f32 heat, 32 of a 9-tap stencil),
/// and of the step counts whose tile is no wider the one whose cost per output and step is
/// least: the elements computed per output ([`FusedTile::computed_per_output`]) plus the loads'
/// exposed latency, a fitted constant of operations spread over `T` steps of the body's operations
/// (f32 heat: 32, the 9-tap stencil: 16). Fewer where the fused kernel would need more
/// registers than a thread has (halving until it fits). In
/// 2D and 3D the most steps whose recomputation (the x halo, in 3D each plane's y halo, and each
/// strip's or column's first rows or planes, computed twice) stays within [`MAX_RECOMPUTE_2D`]
/// of the outputs ([`FusedTile::computed_per_output`]), whose windows fit
/// [`crate::fused_grid::INTERIOR_WINDOW_WORDS`] in 2D, summed over the fields, each of which holds
/// its rows (past it the interior kernel's registers leave fewer warps per SM than the steps
/// gain: Gray-Scott, two fields at T = 10, took 255 registers with spills, 12.5% occupancy, and
/// ran 1.48x the copy per step on an H200, docs/gpu-runs/2026-11-28-h200-session13.log) and whose kernel fits a thread's registers: in 3D the planes' y halo
/// alone takes a one-row plane 3x past it at 2 steps of radius 1, so a 3D stencil gets its fused
/// kernel from `fuse = T`. 1 (no fused kernel) where nothing fits.
pub fn steps_per_launch(pattern: &Pattern, body: &Body) -> u32 {
    const WIDTH_AT: u32 = 16;
    let fits = |steps| matches!(crate::driver::compile_candidate(*pattern, body, crate::driver::Steps::Fused(steps)), Ok(program) if !program.register_estimate().exceeds_limit());
    match pattern.dims() {
        Dims::One => {
            let element = body.element();
            let most = FusedTile::max_steps(pattern, element).min(MOST_LINE_STEPS);
            let tile = |steps| FusedTile::new(pattern, element, steps).ok();
            let Some(width) = tile(WIDTH_AT.min(most)).map(|tile| tile.per_lane) else { return 1 };
            let operations = operations_per_output(body).max(1) as f64;
            let cost = |tile: &FusedTile| {
                tile.computed_per_output() + EXPOSED_LOAD_OPERATIONS / (f64::from(tile.steps) * operations)
            };
            let cheapest = (1..=most)
                .filter_map(tile)
                .filter(|tile| tile.per_lane <= width)
                .min_by(|a, b| cost(a).total_cmp(&cost(b)));
            let mut steps = cheapest.map_or(1, |tile| tile.steps);
            while steps > 1 && !fits(steps) {
                steps /= 2;
            }
            steps.max(1)
        }
        Dims::Two | Dims::Three => (2..=FusedTile::max_steps(pattern, body.element()))
            .rev()
            .find(|&steps| {
                let cheap = FusedTile::new(pattern, body.element(), steps).is_ok_and(|tile| {
                    tile.computed_per_output() <= MAX_RECOMPUTE_2D
                        && (pattern.dims() == Dims::Three
                            || tile.window_words() * body.fields() <= crate::fused_grid::INTERIOR_WINDOW_WORDS)
                });
                cheap && fits(steps)
            })
            .unwrap_or(1),
    }
}

/// Issue time, in the body's operations per tile element, that a 1D fused launch loses waiting
/// for its tile's loads: tiles of equal work keep an SM's blocks in step, so their loads wait
/// together (ncu, heat at 16 steps on an H200: 16.7% of issue cycles with no warp eligible, most
/// of them waiting on loads; at 32 steps the kernel issues 97% of the cycles). Fitted on an H200
/// to 1D f32 heat with 16 elements per lane at 16 and 32 steps (8.7x and 9.6x the copy; 24 steps
/// within 2.5% of the fit); the 9-tap stencil at 12, 16 and 20 steps ranks as the fit says
/// (bench/results/HISTORY.md: 2026-11-24-h200-fused1d/README.md).
const EXPOSED_LOAD_OPERATIONS: f64 = 34.0;

/// The most steps the 1D cost model weighs, to bound its search: at 128 steps a radius 1 halo
/// takes 5% of a block tile of 256 lanes of 20 elements (a warp tile's is gone long before; the
/// block tile's model says 1.106 per output at 128 steps against 1.110 at 96, and the probe
/// measured 96 steps 1.3% above 64, where the model says 1.6%).
const MOST_LINE_STEPS: u32 = 128;

/// The body's operations per output that depend on a tap (the others are computed once).
fn operations_per_output(body: &Body) -> usize {
    let (live, varies) = (body.live(), body.depends_on_taps());
    body.nodes()
        .iter()
        .enumerate()
        .filter(|&(id, node)| live[id] && varies[id] && !matches!(node, Node::Tap(..)))
        .count()
}

/// The most elements a 2D or 3D fused tile may compute per output and step (see
/// [`steps_per_launch`]).
pub const MAX_RECOMPUTE_2D: f64 = 1.5;
