//! Fused time steps (temporal blocking): `T` steps of an iterative 1D stencil in one launch,
//! the tile kept in registers between steps, so memory traffic per step falls about `T`-fold.
//!
//! Each logical warp owns a *fused tile* of `warp * k` consecutive input elements, lane `l`
//! the `k` consecutive elements `l * k .. (l + 1) * k` (a granule, loaded in 16-byte vectors
//! where the whole tile lies inside the input). A step computes every element of the tile from
//! the lane's own registers and the `r` edge elements of each neighbour lane, moved by one
//! shuffle up or down each; the first lane's left and the last lane's right neighbours are
//! missing, so the elements whose values are exact shrink by `r` from each end of the tile per
//! step. After `T` steps the tile stores the outputs that lie at least `T * r` inside it.
//!
//! In 1D the logical warp is the whole block where the block's threads are a power of two
//! (a *block tile*): the hardware warps' edge lanes swap their edges through shared memory in
//! each step, so only the block's two ends recompute the shrinking halo, not every warp's.
//!
//! Boundary rules hold at the domain's edges in every step: under `zero` elements outside the
//! input are set to zero after each step, under `clamp` to the step's value at the nearest edge
//! ([`Op::StepRule`]); under `wrap` the tile loads from wrapped positions and needs no rule (a
//! periodic domain is translation invariant); under `valid` what lies outside is never stored.
//! Tiles whose elements all lie inside the input skip the rule (the common case).
//!
//! The state the steps carry forward is a list of fields: output field `f` of a step is input
//! field `f` of the next, one state field per output field of the body (one today), each
//! loaded, exchanged, stepped and stored alike. The other input fields (coefficients) stay as
//! given: each lane loads its elements of them once and exchanges their edges once, before the
//! steps.
//!
//! Every element computes the body's operations in the body's order, as `run_cpu` does, so `T`
//! fused steps are bit for bit `T` applications of the stencil; a term that two of a lane's
//! elements compute from the same inputs (a weight times one element) is computed once and
//! read by both (`terms.rs`).

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::body::{Body, Node, NodeId};
use crate::boundary::Boundary;
use crate::distribution::{vector_access_elements, AffineLoad};
use crate::error::{Error, LengthError, ScheduleError};
use crate::geometry::{Dims, Extent, Offset};
use crate::machine::{LaunchBounds, Machine, Op, Side, Stmt, TileTest};
use crate::pattern::{check_fields, check_output_fields, Pattern};
use crate::program::{Instr, Reg, WarpProgram};
use crate::scalar::ScalarType;
use crate::terms::{Computed, Position, Terms};

/// The shape of a fused tile: how many steps, and which elements each lane owns and stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedTile {
    /// The stencil's dimensions.
    pub dims: Dims,
    /// Steps per launch, `T`.
    pub steps: u32,
    /// The stencil's radius `r` along x.
    pub radius: u32,
    /// Consecutive elements each lane owns, `k`: a whole number of vectors, at least `r`.
    pub per_lane: u32,
    /// Tile elements before the first output: the halo `T * r`, rounded up to whole vectors
    /// under `zero`, `clamp` and `wrap` so every load and store stays aligned.
    pub lead: u32,
    /// The tile's outputs, consecutive: in 1D a warp tile's `warp` times a whole number per
    /// lane, a block tile's every element exact after the steps in whole vectors; in 2D
    /// every element exact after the steps, in whole vectors (see [`crate::fused_grid`]).
    pub outputs: u32,
    /// Elements per vector access (16 bytes).
    pub width: u32,
    pub warp: u32,
    /// 2D: the stencil's radius along y, and the output rows each warp computes streaming
    /// down its column strip ([`crate::fused_grid`]); 0 and 1 in 1D. 3D: the radius along y,
    /// and the output rows of each plane of the tile ([`crate::fused_grid3`]).
    pub radius_y: u32,
    pub rows: u32,
    /// 3D: the stencil's radius along z, and the output planes each warp computes streaming
    /// along z through its column of planes ([`crate::fused_grid3`]); 0 and 1 in 1D and 2D.
    pub radius_z: u32,
    pub planes: u32,
}

impl FusedTile {
    /// The most 32-bit words a lane owns: its elements are held twice in a step (before and
    /// after), beside the neighbours' edges and the body's temporaries.
    pub const MAX_OWNED_WORDS: u32 = 32;
    /// A 2D or 3D tile's row grows until its halo is at most this fraction of it (1/8: the
    /// probe's 256 elements for `T * r = 16`), or to its most words.
    const HALO_SHARE: u32 = 8;
    /// A 1D tile grows until its halo is at most this fraction of it: 1D is bound by instruction
    /// issue, and each recomputed element costs as much as an output (bench/probes/fused1d.cu on
    /// an H200, heat T = 16: 9.5x copy with 16 elements per lane, 8.2x with 8).
    const LINE_HALO_SHARE: u32 = 16;
    /// The words a 1D lane owns where that leaves at least 7/8 of the tile's elements as
    /// outputs: 16, so ptxas keeps the kernel within 64 registers and an SM holds 4 blocks of
    /// 256 threads (the probe, heat T = 16: 9.5x copy with 16 words per lane, 7.0x with 32 at 96
    /// registers).
    const LINE_OCCUPANCY_WORDS: u32 = 16;
    /// The words a lane of a 1D block tile owns, at least: its recompute is small at any width,
    /// so the lane trades the step's exchange against registers (bench/probes/fused1d.cu
    /// `block` on an H200, heat at 64 steps: 10.4x copy with 20 words, 10.1x with 16, 9.9x
    /// with 12).
    const LINE_BLOCK_WORDS: u32 = 20;
    /// A 1D block tile's lane owns at least this many words per element of radius, so the
    /// step's `2 r` shuffles and shared-memory swaps and the products of its neighbours' edge
    /// elements stay a small part of its work (on an H200, 9-tap r = 4: 3.58x copy with 32
    /// words, 3.80x with 40, 3.85x with 48, 3.89x with 56, 3.85x with 64;
    /// bench/results/HISTORY.md: 2026-11-24-h200-ninetap).
    const LINE_BLOCK_WORDS_PER_RADIUS: u32 = 14;
    /// The most words a lane of a 1D block tile owns: ptxas streams the step through its
    /// elements, so 56 take 80 registers (the 9-tap's interior kernel: 3 blocks of 256 per
    /// SM), 64 take 98 and were slower.
    const MAX_BLOCK_WORDS: u32 = 56;

    /// The fused tile for `steps` steps of a stencil of `pattern` over `element`s.
    pub fn new(pattern: &Pattern, element: ScalarType, steps: u32) -> Result<FusedTile, ScheduleError> {
        FusedTile::fit(pattern, element, steps).ok_or_else(|| {
            let (radius, max_steps) = (pattern.radius().along_x(), FusedTile::max_steps(pattern, element));
            match pattern.dims() {
                Dims::One => ScheduleError::FusedSteps {
                    steps,
                    radius,
                    element,
                    words: FusedTile::most_words(pattern),
                    max_steps,
                },
                Dims::Two => ScheduleError::FusedGridSteps {
                    steps,
                    radius_y: pattern.radius().along(1),
                    radius_x: radius,
                    element,
                    words: 2 * crate::fused_grid::WINDOW_WORDS,
                    max_steps,
                },
                Dims::Three => ScheduleError::FusedVolumeSteps {
                    steps,
                    radius: pattern.radius(),
                    element,
                    words: 2 * crate::fused_grid3::PLANE_WINDOW_WORDS,
                    max_steps,
                },
            }
        })
    }

    /// The most steps one launch can fuse for `pattern` over `element`s (0 if none).
    pub fn max_steps(pattern: &Pattern, element: ScalarType) -> u32 {
        // Each step spoils `r` more elements at each end of a tile of at most this many.
        let lanes = FusedTile::block_lanes(pattern).unwrap_or(pattern.warp());
        let most = FusedTile::most_words(pattern) / element.words() * lanes / pattern.radius().along_x().max(1);
        (1..=most).take_while(|&steps| FusedTile::fit(pattern, element, steps).is_some()).last().unwrap_or(0)
    }

    fn fit(pattern: &Pattern, element: ScalarType, steps: u32) -> Option<FusedTile> {
        let tile = match pattern.dims() {
            Dims::One => FusedTile::fit_line(pattern, element, steps),
            Dims::Two => FusedTile::fit_grid(pattern, element, steps),
            Dims::Three => FusedTile::fit_volume(pattern, element, steps),
        };
        tile.map(|tile| FusedTile { dims: pattern.dims(), ..tile })
    }

    /// The 1D tile: as few elements per lane as keep the halo within
    /// [`FusedTile::LINE_HALO_SHARE`] of the tile, at most [`FusedTile::LINE_OCCUPANCY_WORDS`]
    /// where that leaves 7/8 of the tile as outputs, else at most
    /// [`FusedTile::MAX_OWNED_WORDS`] (a wide halo: recomputing it costs more than the warps
    /// the registers take).
    fn fit_line(pattern: &Pattern, element: ScalarType, steps: u32) -> Option<FusedTile> {
        if FusedTile::block_lanes(pattern).is_some() {
            return FusedTile::fit_block_line(pattern, element, steps);
        }
        let share = FusedTile::LINE_HALO_SHARE;
        FusedTile::fit_x_share(pattern, element, steps, FusedTile::LINE_OCCUPANCY_WORDS, share)
            .filter(|tile| 8 * tile.outputs() >= 7 * tile.elements())
            .or_else(|| FusedTile::fit_x_share(pattern, element, steps, FusedTile::MAX_OWNED_WORDS, share))
    }

    /// The most 32-bit words a lane of a tile of `pattern` owns.
    pub fn most_words(pattern: &Pattern) -> u32 {
        match FusedTile::block_lanes(pattern) {
            Some(_) => FusedTile::MAX_BLOCK_WORDS,
            None => FusedTile::MAX_OWNED_WORDS,
        }
    }

    /// The lanes of a 1D block tile: the block's threads, where they are a power of two of
    /// whole warps (the prologue takes the lane as the thread's low bits); `None` otherwise.
    pub fn block_lanes(pattern: &Pattern) -> Option<u32> {
        let threads = pattern.threads_per_block();
        (pattern.dims() == Dims::One && threads.is_power_of_two() && threads >= 64).then_some(threads)
    }

    /// The 1D block tile ([`FusedTile::block_lanes`]): each lane [`FusedTile::LINE_BLOCK_WORDS`]
    /// words, more for a wide radius, at most [`FusedTile::MAX_BLOCK_WORDS`]; its outputs every
    /// element exact after the steps, in whole vectors.
    fn fit_block_line(pattern: &Pattern, element: ScalarType, steps: u32) -> Option<FusedTile> {
        let (radius, lanes) = (pattern.radius().along_x(), FusedTile::block_lanes(pattern)?);
        let width = vector_access_elements(16, element);
        let halo = steps.checked_mul(radius)?;
        let lead = match pattern.boundary() {
            Boundary::Valid => halo,
            _ => halo.next_multiple_of(width),
        };
        let words = FusedTile::LINE_BLOCK_WORDS
            .max(FusedTile::LINE_BLOCK_WORDS_PER_RADIUS * radius)
            .min(FusedTile::most_words(pattern));
        let per_lane = (words / element.words() / width * width).max(width).max(radius.next_multiple_of(width));
        // Tiles start at multiples of `outputs`, which must be whole vectors.
        let outputs = (lanes * per_lane).saturating_sub(lead + halo) / width * width;
        let most = (FusedTile::most_words(pattern) / element.words()).max(width);
        let tile = FusedTile {
            dims: Dims::One,
            steps,
            radius,
            per_lane,
            lead,
            outputs,
            width,
            warp: lanes,
            radius_y: 0,
            rows: 1,
            radius_z: 0,
            planes: 1,
        };
        (steps > 0 && outputs > 0 && per_lane <= most).then_some(tile)
    }

    /// Whether this is a 1D block tile: its logical warp is the block, its hardware warps swap
    /// their edges through shared memory in every step.
    pub const fn spans_block(&self) -> bool {
        matches!(self.dims, Dims::One) && self.warp > 32
    }

    /// The tile along x, each lane owning at most `most_words` 32-bit words of one row: all of
    /// them if `widest`, else as few as keep the halo's share small.
    pub(crate) fn fit_x(
        pattern: &Pattern,
        element: ScalarType,
        steps: u32,
        most_words: u32,
        widest: bool,
    ) -> Option<FusedTile> {
        let share = if widest { u32::MAX } else { FusedTile::HALO_SHARE };
        FusedTile::fit_x_share(pattern, element, steps, most_words, share)
    }

    /// [`FusedTile::fit_x`] with as few words per lane as keep the halo within `1 / share` of
    /// the tile (`u32::MAX`: all `most_words`).
    fn fit_x_share(
        pattern: &Pattern,
        element: ScalarType,
        steps: u32,
        most_words: u32,
        share: u32,
    ) -> Option<FusedTile> {
        let (radius, warp) = (pattern.radius().along_x(), pattern.warp());
        let width = vector_access_elements(16, element);
        let halo = steps.checked_mul(radius)?;
        let lead = match pattern.boundary() {
            Boundary::Valid => halo,
            _ => halo.next_multiple_of(width),
        };
        // Whole vectors per lane, so every lane's loads stay aligned.
        let most = (most_words / element.words() / width * width).max(width);
        // Elements the warp must own for the halo's share to be small enough.
        let wanted = (lead + halo).saturating_mul(share).div_ceil(warp);
        let per_lane = wanted.next_multiple_of(width).min(most).max(radius.next_multiple_of(width));
        // Tiles start at multiples of `warp * outputs`, which must be whole vectors (a warp of 2
        // lanes over f32 stores an even number of outputs per lane).
        let whole = width / warp.min(width);
        let outputs = (warp * per_lane).saturating_sub(lead + halo) / warp / whole * whole;
        let tile = FusedTile {
            dims: Dims::One,
            steps,
            radius,
            per_lane,
            lead,
            outputs: warp * outputs,
            width,
            warp,
            radius_y: 0,
            rows: 1,
            radius_z: 0,
            planes: 1,
        };
        (steps > 0 && outputs > 0 && per_lane <= most).then_some(tile)
    }

    /// The halo on each side: the elements of the tile that a step's missing neighbours spoil.
    pub const fn halo(&self) -> u32 {
        self.steps * self.radius
    }

    /// Tile elements per warp.
    pub const fn elements(&self) -> u32 {
        self.warp * self.per_lane
    }

    /// Outputs per tile.
    pub const fn outputs(&self) -> u32 {
        self.outputs
    }

    /// Elements computed per output and step: the halos' recomputation.
    pub fn computed_per_output(&self) -> f64 {
        match self.dims {
            Dims::One => f64::from(self.elements()) / f64::from(self.outputs()),
            Dims::Two => self.recompute(),
            Dims::Three => self.recompute_volume(),
        }
    }

    /// The pattern of one fused launch over `pattern`: a stencil of radius `T * r` (so `valid`
    /// shrinks by `2 * T * r`) whose tiles hold [`FusedTile::outputs`] outputs.
    pub fn launch_pattern(&self, pattern: &Pattern) -> Pattern {
        match pattern.dims() {
            Dims::One => {
                let launch =
                    Pattern::new_unchecked(self.halo(), self.warp, self.outputs / self.warp, pattern.boundary())
                        .with_launch_bounds_unchecked(pattern.threads_per_block(), pattern.min_blocks_per_sm());
                match self.outputs % self.warp {
                    0 => launch,
                    _ => launch.with_tile_outputs_unchecked(self.outputs),
                }
            }
            // The one-step kernel's blocks per SM cap its registers, not the windows' (a 2D
            // kernel's cap of 64 spilled 1.1 KB of them): only the block size carries over, at
            // most the fused kernel's.
            dims => {
                let (t, halo) = (self.steps, self.halo());
                let radius = match dims {
                    Dims::Three => crate::geometry::Radius::zyx(t * self.radius_z, t * self.radius_y, halo),
                    _ => crate::geometry::Radius::yx(t * self.radius_y, halo),
                };
                let threads = match dims {
                    Dims::Three => pattern.threads_per_block(),
                    _ => pattern.threads_per_block().min(crate::fused_grid::BLOCK_THREADS),
                };
                let launch = Pattern::grid_unchecked(
                    radius,
                    self.warp,
                    self.outputs.div_ceil(self.warp),
                    self.rows,
                    self.planes,
                    pattern.boundary(),
                )
                .with_launch_bounds_unchecked(threads, None);
                match self.outputs % self.warp {
                    0 => launch,
                    _ => launch.with_tile_outputs_unchecked(self.outputs),
                }
            }
        }
    }

    /// Input index of tile element 0 is `tile * outputs - schedule_lead`: the lead, less the
    /// halo `valid` leaves out of the output's numbering.
    pub(crate) fn schedule_lead(&self, boundary: Boundary) -> u32 {
        match boundary {
            Boundary::Valid => self.lead - self.halo(),
            _ => self.lead,
        }
    }
}

impl WarpProgram {
    /// The program that runs `steps` time steps of the stencil `body` on `pattern` in one
    /// launch ([`crate::time_steps`], [`crate::fused_grid`], [`crate::fused_grid3`]), through the
    /// driver's passes ([`crate::driver`]): its pattern is the launch's
    /// ([`FusedTile::launch_pattern`]).
    pub fn compile_steps(pattern: Pattern, body: &Body, steps: u32) -> Result<WarpProgram, Error> {
        crate::driver::compile(pattern, body, crate::driver::Steps::Fused(steps))
    }
}

/// The fused route's checks of the body ([`crate::driver::Pass::Normalize`]): a body of no more
/// dimensions than the tile, every tap inside the windows' radius (a tap past it has no
/// register), and no more output fields than input fields (output field `f` of a step is input
/// field `f` of the next).
pub(crate) fn admit_body(pattern: &Pattern, body: &Body) -> Result<(), Error> {
    let dims = pattern.dims();
    if body.radius().dims() > dims {
        return Err(ScheduleError::Dimensions { body: body.radius().dims(), pattern: dims }.into());
    }
    for (node, &n) in body.nodes().iter().enumerate() {
        if let Node::Tap(_, offset) = n {
            if !pattern.radius().covers(offset) {
                return Err(crate::error::BodyError::TapOutsideRadius { node, offset, radius: pattern.radius() }.into());
            }
        }
    }
    if body.output_fields() > body.fields() {
        let (outputs, fields) = (body.output_fields(), body.fields());
        return Err(ScheduleError::StateFields { outputs, fields }.into());
    }
    Ok(())
}

/// The machine program of a fused launch of `tile` ([`crate::driver::Pass::Lower`]), built as
/// statements directly (the steps' exchanges and rules have no one-step instruction form), and
/// the types of its registers. Tiles (2D: strips) wholly inside the input load vectors and need
/// no rule; the others load element by element under the boundary rule and apply it in every
/// step.
pub(crate) fn lower_fused(
    pattern: &Pattern,
    body: &Body,
    tile: FusedTile,
    launch: &Pattern,
) -> (Machine, Vec<ScalarType>) {
    let mut build = Build { body, tile, boundary: pattern.boundary(), reg_types: Vec::new(), terms: Terms::of(body) };
    let (taken, fallback) = match pattern.dims() {
        Dims::One => (build.path(true), build.path(false)),
        Dims::Two => (crate::fused_grid::strip(&mut build, true), crate::fused_grid::strip(&mut build, false)),
        Dims::Three => (crate::fused_grid3::column(&mut build, true), crate::fused_grid3::column(&mut build, false)),
    };
    let paths = vec![Stmt::Branch { test: TileTest::Inside { elements: tile.elements() }, taken, fallback }];
    let shared_bytes = tile.spans_block().then(|| BlockExchange::of(&tile, &paths, body.element()).bytes());
    let machine = Machine {
        body: paths,
        width: tile.width,
        shared_bytes,
        launch_bounds: LaunchBounds::of(launch),
        split: tile.splits(),
    };
    (machine, build.reg_types)
}

/// The fused tile's distribution in words, for `explain()` and the machine text.
pub(crate) fn fused_distribution(tile: &FusedTile) -> String {
    match tile.dims {
        Dims::One if tile.spans_block() => format!(
            "fused time steps: {} steps per launch, a block tile of {} lanes ({} warps swapping edges through shared memory each step), lane l owns tile elements {k}l..{k}l + {k}, halo {} at each end of the block",
            tile.steps,
            tile.warp,
            tile.warp / 32,
            tile.halo(),
            k = tile.per_lane
        ),
        Dims::One => format!(
            "fused time steps: {} steps per launch, lane l owns tile elements {k}l..{k}l + {k}, halo {} each side",
            tile.steps,
            tile.halo(),
            k = tile.per_lane
        ),
        Dims::Two => crate::fused_grid::distribution(tile),
        Dims::Three => crate::fused_grid3::distribution(tile),
    }
}

/// Where a 1D block tile's hardware warps swap their edges in shared memory: each run of
/// consecutive [`Op::Neighbour`]s is one exchange (every move's source stored, one barrier,
/// every move's destination loaded), in one of two buffers by the exchange's parity (so the
/// next exchange's stores cannot overwrite what a slower warp has yet to load), each buffer
/// `slots` elements per hardware warp (the longest run); after both buffers, two slots for the
/// boundary rule's edge values, broadcast to the block. A slot holds a register as the step
/// keeps it (a bf16 element computes widened to 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockExchange {
    pub warps: u32,
    pub slots: u32,
    pub element_bytes: u32,
}

impl BlockExchange {
    /// The most bytes one shared-memory access of an exchange moves.
    const VECTOR_BYTES: u32 = 16;

    pub fn of(tile: &FusedTile, body: &[Stmt], element: ScalarType) -> BlockExchange {
        BlockExchange {
            warps: tile.warp / 32,
            slots: longest_neighbour_run(body).max(1),
            element_bytes: element.register_bits() / 8,
        }
    }

    /// The accesses an exchange whose moves come from `sides` (in slot order) stores and loads
    /// with, as `(first slot, slots)`: each access one side's consecutive slots, as many as one
    /// aligned vector takes (4, 2 or 1, at most 16 bytes), so the edge lanes store and load
    /// their neighbours' edges in a few predicated vector accesses (the 9-tap's 8 moves in 2 of
    /// each, where 8 scalar ones made ptxas branch around them). A vector starts at a multiple
    /// of its slots in a buffer whose every warp's region is a multiple of them too.
    pub fn accesses(&self, sides: &[Side]) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut slot = 0;
        while slot < sides.len() {
            let same = sides[slot..].iter().take_while(|&&side| side == sides[slot]).count() as u32;
            let fits = |width: u32| {
                width * self.element_bytes <= BlockExchange::VECTOR_BYTES
                    && self.slots % width == 0
                    && slot as u32 % width == 0
            };
            let width = [4, 2, 1].into_iter().find(|&width| width <= same && fits(width)).unwrap_or(1);
            out.push((slot as u32, width));
            slot += width as usize;
        }
        out
    }

    /// Byte offset of slot `slot` of hardware warp `warp` in buffer `parity`.
    pub const fn offset(&self, parity: u32, warp: u32, slot: u32) -> u32 {
        ((parity * self.warps + warp) * self.slots + slot) * self.element_bytes
    }

    /// Byte offset of edge value `edge` (0: the domain's first element, 1: its last).
    pub const fn edge_offset(&self, edge: u32) -> u32 {
        self.offset(2, 0, 0) + edge * self.element_bytes
    }

    pub const fn bytes(&self) -> u32 {
        self.edge_offset(2)
    }
}

/// The most consecutive [`Op::Neighbour`]s in `stmts` and the statements they nest.
pub fn longest_neighbour_run(stmts: &[Stmt]) -> u32 {
    let (mut most, mut run) = (0, 0);
    for stmt in stmts {
        run = match stmt {
            Stmt::Op(Op::Neighbour { .. }) => run + 1,
            _ => 0,
        };
        most = most.max(run);
        let nested = match stmt {
            Stmt::Branch { taken, fallback, .. } => longest_neighbour_run(taken).max(longest_neighbour_run(fallback)),
            Stmt::Loop { body, .. } => longest_neighbour_run(body),
            Stmt::Op(_) => 0,
        };
        most = most.max(nested);
    }
    most
}

/// Builds the fused machine program's two paths (1D here, 2D in [`crate::fused_grid`]). Every
/// list indexed by state field has one entry per output field of the body
/// ([`Build::state_fields`]).
pub(crate) struct Build<'a> {
    pub(crate) body: &'a Body,
    pub(crate) tile: FusedTile,
    pub(crate) boundary: Boundary,
    pub(crate) reg_types: Vec<ScalarType>,
    /// The body's terms by shape, so a run of outputs computes each shared term once.
    pub(crate) terms: Terms,
}

/// One input field's elements in a lane: its own `k`, and the neighbours' edges it reads.
pub(crate) struct Owned {
    own: Vec<Reg>,
    /// `before[i]` is tile element `lane * k - r + i` (of the lane before), if read.
    before: Vec<Option<Reg>>,
    /// `after[i]` is tile element `(lane + 1) * k + i` (of the lane after), if read.
    after: Vec<Option<Reg>>,
}

impl Owned {
    /// The register holding the lane's element `j` (`-r <= j < k + r`).
    pub(crate) fn at(&self, j: i64) -> Option<Reg> {
        let (k, r) = (self.own.len() as i64, self.before.len() as i64);
        match j {
            j if j < 0 => self.before[(r + j) as usize],
            j if j < k => Some(self.own[j as usize]),
            j => self.after[(j - k) as usize],
        }
    }
}

impl Build<'_> {
    pub(crate) fn reg(&mut self, ty: ScalarType) -> Reg {
        self.reg_types.push(ty);
        self.reg_types.len() as Reg - 1
    }

    /// The fields the steps carry forward: input fields `0..state_fields`, output field `f` of
    /// a step being input field `f` of the next (one per output field of the body); the input
    /// fields after them are coefficients.
    pub(crate) fn state_fields(&self) -> u32 {
        self.body.output_fields()
    }

    /// The lane-relative element indices (`-r..0` and `k..k + r`) the body reads of `field`
    /// through the taps `reads` accepts.
    fn edges(&self, field: u32, reads: impl Fn(Offset) -> bool) -> BTreeSet<i64> {
        let k = self.tile.per_lane as i64;
        let mut out = BTreeSet::new();
        for (f, d) in self.body.used_field_taps().into_iter().filter(|&(_, d)| reads(d)) {
            for j in (0..k).map(|j| j + d.along_x() as i64).filter(|&j| f == field && !(0..k).contains(&j)) {
                out.insert(j);
            }
        }
        out
    }

    /// The neighbours' edge elements of `own` the body reads (in 2D, of the row at `dy`), each
    /// by one shuffle.
    pub(crate) fn exchange(&mut self, field: u32, dy: Option<i32>, own: Vec<Reg>, out: &mut Vec<Stmt>) -> Owned {
        self.exchange_for(field, |d| dy.is_none_or(|dy| d.along(1) == dy), own, out)
    }

    /// [`Build::exchange`] of the edges the taps `reads` accepts read.
    pub(crate) fn exchange_for(
        &mut self,
        field: u32,
        reads: impl Fn(Offset) -> bool,
        own: Vec<Reg>,
        out: &mut Vec<Stmt>,
    ) -> Owned {
        let (k, r) = (self.tile.per_lane as i64, self.tile.radius as usize);
        let element = self.body.element();
        let mut owned = Owned { own, before: vec![None; r], after: vec![None; r] };
        for j in self.edges(field, reads) {
            let dst = self.reg(element);
            let (src, from) = match j < 0 {
                true => (owned.own[(k + j) as usize], Side::Before),
                false => (owned.own[(j - k) as usize], Side::After),
            };
            out.push(Stmt::Op(Op::Neighbour { dst, src, from }));
            match from {
                Side::Before => owned.before[(r as i64 + j) as usize] = Some(dst),
                Side::After => owned.after[(j - k) as usize] = Some(dst),
            }
        }
        owned
    }

    /// The lane's `k` elements of `field` in input row `row` of the tile (0 in 1D), into `own`:
    /// vectors on an interior tile, else element by element under the boundary rule.
    /// Coefficient fields load element by element on every path: under `valid` a later launch
    /// reads them from an offset that need not be a vector's multiple.
    pub(crate) fn load_into(&mut self, field: u32, interior: bool, row: u32, own: &[Reg], out: &mut Vec<Stmt>) {
        let (k, warp, width) = (self.tile.per_lane, self.tile.warp, self.tile.width);
        let at = |base: u32| AffineLoad { base, stride: k };
        if interior && field < self.state_fields() {
            for (c, dsts) in own.chunks(width as usize).enumerate() {
                let first_cache = c as u32 * width;
                let load = Op::LoadVector {
                    dsts: dsts.to_vec(),
                    first_cache,
                    at: at(first_cache),
                    lanes: (0, warp),
                    field,
                    row,
                };
                out.push(Stmt::Op(load));
            }
        } else {
            for (j, &dst) in own.iter().enumerate() {
                let j = j as u32;
                out.push(Stmt::Op(Op::Load { dst, cache: Some(j), at: at(j), lanes: (0, warp), field, row }));
            }
        }
    }

    /// [`Build::load_into`] fresh registers of row 0.
    fn load(&mut self, field: u32, interior: bool, out: &mut Vec<Stmt>) -> Vec<Reg> {
        let own: Vec<Reg> = (0..self.tile.per_lane).map(|_| self.reg(self.body.element())).collect();
        self.load_into(field, interior, 0, &own, out);
        own
    }

    /// One path of the tile: load every field, exchange the coefficients' edges and compute
    /// what no tap changes, then the steps, then the stores.
    fn path(&mut self, interior: bool) -> Vec<Stmt> {
        let body = self.body;
        let mut out = Vec::new();
        let state: Vec<Vec<Reg>> = (0..self.state_fields()).map(|field| self.load(field, interior, &mut out)).collect();
        let mut coefficients = Vec::new();
        for field in self.state_fields()..body.fields() {
            let own = self.load(field, interior, &mut out);
            coefficients.push(self.exchange(field, None, own, &mut out));
        }
        let invariant = self.invariants(&mut out);
        // Two steps per iteration, the second reading what the first wrote: the first step's
        // elements are dead once the second has run, so ptxas can give the second's results
        // the registers of the elements the carry copies them back into (with one step per
        // iteration, each element is still read by its neighbour's update when it is written).
        let (pairs, odd) = (self.tile.steps / 2, self.tile.steps % 2 == 1);
        if pairs > 0 {
            let (mut step, middle) = self.step(&state, &coefficients, &invariant, interior);
            let (second, next) = self.step(&middle, &coefficients, &invariant, interior);
            step.extend(second);
            step.extend(self.carry(&state, next));
            out.push(Stmt::Loop { times: pairs, body: step });
        }
        let last = match odd {
            true => {
                let (step, last) = self.step(&state, &coefficients, &invariant, interior);
                out.extend(step);
                last
            }
            false => state,
        };
        for (field, srcs) in last.into_iter().enumerate() {
            out.push(self.stores(field as u32, srcs));
        }
        out
    }

    /// The body's values that no tap changes, computed once: `Some(register)` per such node.
    pub(crate) fn invariants(&mut self, out: &mut Vec<Stmt>) -> Vec<Option<Reg>> {
        let body = self.body;
        let (live, varies) = (body.live(), body.depends_on_taps());
        let mut invariant: Vec<Option<Reg>> = vec![None; body.nodes().len()];
        for (id, &node) in body.nodes().iter().enumerate() {
            if live[id] && !varies[id] {
                let dst = self.reg(body.ty(id as NodeId));
                out.extend(
                    Instr::of_node(node, dst, |n| invariant[n as usize].unwrap_or_default())
                        .map(|i| Stmt::Op(Op::Compute(i))),
                );
                invariant[id] = Some(dst);
            }
        }
        invariant
    }

    /// The new value of the element at `output` (its position in the run `computed` records):
    /// the body's operations in its order, each tap the register `tap(field, offset)` names,
    /// each term another output of the run has computed read from there ([`Computed`]).
    /// Returns each result's register, one per state field.
    pub(crate) fn element(
        &mut self,
        invariant: &[Option<Reg>],
        output: Position,
        tap: impl Fn(u32, Offset) -> Reg,
        computed: &mut Computed,
        out: &mut Vec<Stmt>,
    ) -> Vec<Reg> {
        let body = self.body;
        let live = body.live();
        let mut value: Vec<Reg> = vec![0; body.nodes().len()];
        for (id, &node) in body.nodes().iter().enumerate() {
            if !live[id] {
                continue;
            }
            let id = id as NodeId;
            value[id as usize] = match (invariant[id as usize], node, computed.get(&self.terms, id, output)) {
                (Some(reg), _, _) => reg,
                (None, Node::Tap(field, d), _) => tap(field, d),
                (None, _, Some(reg)) => reg,
                (None, node, None) => {
                    let dst = self.reg(body.ty(id));
                    out.extend(Instr::of_node(node, dst, |n| value[n as usize]).map(|i| Stmt::Op(Op::Compute(i))));
                    computed.insert(&self.terms, id, output, dst);
                    dst
                }
            };
        }
        body.results().iter().map(|&result| value[result as usize]).collect()
    }

    /// One time step of `state` (the lane's elements of each state field): the neighbours'
    /// edges, the body for each element, the boundary rule where the path needs it. Returns its
    /// statements and the registers of the new elements, per state field.
    fn step(
        &mut self,
        state: &[Vec<Reg>],
        coefficients: &[Owned],
        invariant: &[Option<Reg>],
        interior: bool,
    ) -> (Vec<Stmt>, Vec<Vec<Reg>>) {
        let (k, element, states) = (self.tile.per_lane as usize, self.body.element(), self.state_fields());
        let mut step = Vec::new();
        let mut current = Vec::with_capacity(state.len());
        for (field, own) in state.iter().enumerate() {
            current.push(self.exchange(field as u32, None, own.clone(), &mut step));
        }
        let mut values = vec![Vec::with_capacity(k); state.len()];
        let mut computed = Computed::default();
        for j in 0..k as i64 {
            let tap = |field: u32, d: Offset| {
                let owned = match field.checked_sub(states) {
                    None => &current[field as usize],
                    Some(coefficient) => &coefficients[coefficient as usize],
                };
                owned.at(j + d.along_x() as i64).unwrap_or_default()
            };
            let results = self.element(invariant, [j, 0, 0], tap, &mut computed, &mut step);
            for (field, result) in values.iter_mut().zip(results) {
                field.push(result);
            }
        }
        if !matches!(self.boundary, Boundary::Zero | Boundary::Clamp) || interior {
            return (step, values);
        }
        let mut ruled = Vec::with_capacity(values.len());
        for values in values {
            let dsts: Vec<Reg> = (0..k).map(|_| self.reg(element)).collect();
            step.push(Stmt::Op(Op::StepRule { values, dsts: dsts.clone() }));
            ruled.push(dsts);
        }
        (step, ruled)
    }

    /// `state = next`, element by element, every state field in one carry. The carry copies in
    /// order, so a new value that is still an old element (of any state field: a body that
    /// returns a tap) is first copied aside, or an earlier copy would overwrite it.
    fn carry(&mut self, state: &[Vec<Reg>], next: Vec<Vec<Reg>>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let state = state.concat();
        let next = self.aside(next.concat(), |reg| state.contains(&reg), &mut out);
        out.push(Stmt::Op(Op::Carry(state.iter().copied().zip(next).collect())));
        out
    }

    /// `values` with each register that `overwritten` names copied into a fresh one first.
    pub(crate) fn aside(
        &mut self,
        values: Vec<Reg>,
        overwritten: impl Fn(Reg) -> bool,
        out: &mut Vec<Stmt>,
    ) -> Vec<Reg> {
        let mut copies = Vec::new();
        let values = values
            .into_iter()
            .map(|reg| match overwritten(reg) {
                true => {
                    let copy = self.reg(self.body.element());
                    copies.push((copy, reg));
                    copy
                }
                false => reg,
            })
            .collect();
        if !copies.is_empty() {
            out.push(Stmt::Op(Op::Carry(copies)));
        }
        values
    }

    /// The stores of the tile's outputs of output field `field`: vectors where the whole tile's
    /// outputs exist and the lead keeps them aligned, one checked store per element otherwise.
    pub(crate) fn stores(&self, field: u32, srcs: Vec<Reg>) -> Stmt {
        self.stores_row(field, srcs, 0)
    }

    /// [`Build::stores`] into output row `row` of the tile.
    pub(crate) fn stores_row(&self, field: u32, srcs: Vec<Reg>, row: u32) -> Stmt {
        let (lead, width) = (self.tile.lead, self.tile.width);
        let single = Stmt::Op(Op::StoreOwned { srcs: srcs.clone(), field, lead, width: 1, row });
        if width == 1 || lead % width != 0 {
            return single;
        }
        let taken = vec![Stmt::Op(Op::StoreOwned { srcs, field, lead, width, row })];
        Stmt::Branch { test: TileTest::Whole { row }, taken, fallback: vec![single] }
    }
}

/// How `steps` time steps run: launches of `steps_per_launch` fused steps while that many
/// remain, then one launch for the steps left (`remainder`): a fused launch of that degree, or
/// the one-step kernel for a single step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepPlan {
    pub steps_per_launch: u32,
    pub full_launches: usize,
    pub remainder: u32,
}

impl StepPlan {
    pub fn new(steps: usize, steps_per_launch: u32) -> StepPlan {
        let t = steps_per_launch.max(1);
        let full_launches = steps / t as usize;
        StepPlan { steps_per_launch: t, full_launches, remainder: (steps % t as usize) as u32 }
    }

    /// The steps each launch runs, in order; a launch of one step is the one-step kernel.
    pub fn launches(&self) -> impl Iterator<Item = u32> {
        std::iter::repeat_n(self.steps_per_launch, self.full_launches)
            .chain((self.remainder > 0).then_some(self.remainder))
    }
}

/// The output length after `steps` steps of `pattern` on `input_len` elements: the input's
/// under `zero`, `clamp` and `wrap`, `n - 2 * r * steps` under `valid`, which must leave at
/// least one element.
pub fn steps_output_len(pattern: &Pattern, input_len: usize, steps: usize) -> Result<usize, LengthError> {
    Ok(steps_output_shape(pattern, Extent::x(input_len), steps)?.len().unwrap_or(0))
}

/// [`steps_output_len`] for a grid of shape `shape`: under `valid` each dimension shrinks by
/// `2 * r * steps` (its own radius), and must keep at least one element.
pub fn steps_output_shape(pattern: &Pattern, shape: Extent, steps: usize) -> Result<Extent, LengthError> {
    if shape.is_empty() || pattern.boundary() != Boundary::Valid {
        return Ok(shape);
    }
    let dims = shape.dims().count();
    let lens = shape.components();
    let mut out = Vec::with_capacity(dims);
    for (i, &len) in lens.iter().enumerate() {
        let radius = pattern.radius().along(dims - 1 - i) as usize;
        match len.checked_sub((2 * radius).saturating_mul(steps)) {
            Some(left) if left > 0 => out.push(left),
            _ => return Err(LengthError::StepsOutlastInput { len, radius, steps }),
        }
    }
    Ok(Extent::new(&out).unwrap_or(shape))
}

/// Checks the inputs' count and lengths (one per field, each of `shape`) and the outputs' (one
/// per output field, the state fields' final values, each of [`steps_output_shape`]'s length);
/// returns that shape. The state fields are the first input fields, one per output field
/// ([`step_inputs`]): each step's output field `f` is the next step's input field `f`.
pub fn check_steps_inputs(
    pattern: &Pattern,
    shape: Extent,
    inputs: &[usize],
    fields: u32,
    outputs: &[usize],
    output_fields: u32,
    steps: usize,
) -> Result<Extent, LengthError> {
    let input = check_fields(inputs, fields)?;
    let output_len = check_output_fields(outputs, output_fields)?;
    let elements = shape.len().ok_or(LengthError::ShapeOverflow { shape })?;
    if shape.dims() != Dims::One && input != elements {
        return Err(LengthError::InputShape { shape, expected: elements, got: input });
    }
    let out = steps_output_shape(pattern, shape, steps)?;
    let expected = out.len().unwrap_or(0);
    if expected != output_len {
        return Err(LengthError::StepsOutput { expected, got: output_len, input, steps, boundary: pattern.boundary() });
    }
    Ok(out)
}

/// The inputs of the step after `done` steps: the state fields' current values `state` (input
/// fields `0..state.len()`, one per output field), then each other field (a coefficient, which
/// stays as given) where the state lies: under `valid` the state has lost `r * done` elements
/// at each end of each dimension, and so does each coefficient (in 1D a slice of it, in 2D and
/// 3D a copy of the part).
pub fn step_inputs<'a, T: Clone>(
    pattern: &Pattern,
    shape: Extent,
    inputs: &[&'a [T]],
    state: &[&'a [T]],
    done: usize,
) -> Vec<Cow<'a, [T]>> {
    let valid = pattern.boundary() == Boundary::Valid && done > 0;
    let now = steps_output_shape(pattern, shape, done).unwrap_or(shape);
    let len = state.first().map_or(0, |field| field.len());
    let coefficients = inputs.iter().skip(state.len()).map(|&c| match (valid, shape.dims()) {
        (false, _) => Cow::Borrowed(c),
        (true, Dims::One) => {
            let trim = pattern.radius().along_x() as usize * done;
            Cow::Borrowed(&c[trim.min(c.len())..][..len.min(c.len().saturating_sub(trim))])
        }
        (true, _) => Cow::Owned(cut(pattern, shape, now, c, done)),
    });
    state.iter().map(|&field| Cow::Borrowed(field)).chain(coefficients).collect()
}

/// The part of grid `c` (of shape `shape`) of shape `now` that starts `r * done` in along each
/// dimension, row-major.
fn cut<T: Clone>(pattern: &Pattern, shape: Extent, now: Extent, c: &[T], done: usize) -> Vec<T> {
    let (lens, cut) = (shape.components(), now.components());
    let dims = lens.len();
    let start: Vec<usize> = (0..dims).map(|i| pattern.radius().along(dims - 1 - i) as usize * done).collect();
    let rows: usize = cut[..dims - 1].iter().product();
    let mut out = Vec::with_capacity(now.len().unwrap_or(0));
    for row in 0..rows {
        // The row's index along each outer dimension, then its first element in `c`.
        let (mut rest, mut at) = (row, 0);
        let mut index = vec![0; dims - 1];
        for i in (0..dims - 1).rev() {
            index[i] = rest % cut[i] + start[i];
            rest /= cut[i];
        }
        for (i, &g) in index.iter().enumerate() {
            at = at * lens[i] + g;
        }
        let first = at * lens[dims - 1] + start[dims - 1];
        out.extend_from_slice(&c[first..first + cut[dims - 1]]);
    }
    out
}
