//! The access pattern a user declares: radius, logical warp width, outputs per thread, boundary.
//! It fixes how outputs map to warps ("tiles") and which input element each tile element is.

use std::fmt;

pub use crate::boundary::Boundary;
use crate::error::{LengthError, PatternError};
use crate::geometry::{Dims, Extent, Radius};
use crate::validate;

/// A validated access pattern.
///
/// In 2D and 3D a tile is `planes_per_warp x rows_per_warp` rows of the 1D tile below (one
/// along y per row, and along z per plane): the warp's lanes lie along x as in 1D, and the warp
/// walks down its rows (2.5D blocking), each input row loaded once and kept in registers while
/// the output rows that read it are computed. A 3D tile of more than one plane *streams* along
/// z: the warp program computes one plane ([`Pattern::step`]) and the kernel repeats it plane
/// after plane, the input planes still needed carried in registers from one step to the next.
///
/// A logical warp of `warp` lanes computes one *tile* of `warp * outputs_per_thread` consecutive
/// outputs; lane `l`'s `p`-th output is tile output `p * warp + l` (consecutive lanes write
/// consecutive outputs, so stores coalesce). The tile reads `warp * outputs_per_thread + 2r`
/// consecutive *tile elements*; tile element `e` of tile `t` is input index
/// `t * warp * outputs_per_thread + e - shift`, where `shift` is 0 for `valid` and `r` otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// One component per dimension (1D today): the x radius drives the lanes' cache.
    radius: Radius,
    warp: u32,
    outputs_per_thread: u32,
    /// Output rows (along y) and planes (along z) one warp computes; 1 where the stencil has
    /// no such dimension.
    rows_per_warp: u32,
    planes_per_warp: u32,
    /// A 2D tile whose rows are steps of a loop, one row per step ([`Pattern::lifted`]); false
    /// for straight-line rows and in 1D and 3D (a 3D tile streams when it has several planes).
    stream_rows: bool,
    boundary: Boundary,
    /// Launch bounds: threads per block (`.maxntid`), and optionally the blocks per
    /// multiprocessor ptxas must fit (`.minnctapersm`).
    threads_per_block: u32,
    min_blocks_per_sm: Option<u32>,
    /// Outputs along x of a tile that stores only part of its lanes' elements (a fused 2D
    /// strip, [`Pattern::with_tile_outputs_unchecked`]); `None`: `warp * outputs_per_thread`.
    tile_outputs: Option<u32>,
    /// A 2D tile whose interior path prefetches into L2 the rows a later band of blocks reads
    /// ([`crate::prefetch`]).
    prefetch: bool,
}

impl Pattern {
    pub const DEFAULT_WARP: u32 = 32;
    pub const DEFAULT_OUTPUTS_PER_THREAD: u32 = 1;
    /// Radii above this make no sense for a register cache (and keep index arithmetic in i32).
    pub const MAX_RADIUS: u32 = 4096;
    pub const MAX_OUTPUTS_PER_THREAD: u32 = 64;
    /// The most output rows one warp computes: each is straight-line code.
    pub const MAX_ROWS_PER_WARP: u32 = 64;
    /// The most output planes one warp computes: they are steps of a loop, so only the
    /// parallelism left to the grid bounds them.
    pub const MAX_PLANES_PER_WARP: u32 = 1024;
    /// The most input rows one step of a 2D or 3D tile reads (`(1 + 2rz) * (rows + 2ry)`), and
    /// the largest radius along any dimension of a 2D or 3D stencil: each input row is
    /// straight-line code with its own registers, so a step past these is neither compilable
    /// nor fast.
    pub const MAX_INPUT_ROWS: u32 = 256;
    pub const MAX_GRID_RADIUS: u32 = 64;

    /// `rows_per_warp` unless the attribute says otherwise: 1 in 1D, 4 in 2D (on an H100 under
    /// launch bounds, 4 rows were as fast as 8 or up to 2% faster for star and box r = 1 and 2,
    /// and 17% faster for box r = 4: bench/results/HISTORY.md: 2026-11-24-h100-grid-bounds.*), 2 in 3D (streaming tiles of
    /// 2 rows beat 4 and 8 at radii 1 and 2, whose registers cut the occupancy:
    /// bench/results/HISTORY.md: 2026-11-23-h100-grid-streaming.md).
    pub const fn default_rows_per_warp(dims: Dims) -> u32 {
        match dims {
            Dims::One => 1,
            Dims::Two => 4,
            Dims::Three => 2,
        }
    }

    /// `rows_per_warp` of a 2D tile that streams its rows (`stream = true`) unless the attribute
    /// says otherwise: of 16, 32 and 64, 64 ran fastest for 2D box r = 4 on an H100 at every
    /// launch bound that does not spill (bench/results/HISTORY.md: 2026-11-24-h100-grid-ahead/before-ahead-2d.csv:
    /// 0.56 of copy against 0.51-0.52 with 16 and 32 rows, one run).
    pub const DEFAULT_STREAMED_ROWS: u32 = 64;

    /// `planes_per_warp` unless the attribute says otherwise: 32 in 3D, streamed, else 1. In one
    /// sweep on an H100 (bench/results/HISTORY.md: 2026-11-24-h100-grid-ahead/results.csv, each plane then
    /// loaded a step ahead) 32 planes beat 16 at every radius-1 and -2 tile that did not spill,
    /// by 1-5%: the prologue's steps amortized over more planes. One plane per warp re-read 3 to
    /// 5 input rows per output row.
    pub const fn default_planes_per_warp(dims: Dims) -> u32 {
        match dims {
            Dims::Three => 32,
            _ => 1,
        }
    }
    /// Threads per block unless the attribute says `max_threads_per_block`: a multiple of 32, so
    /// every physical warp is whole and every lane of it takes part in every shuffle; 256 keeps
    /// 8 warps per block for the scheduler to hide latency.
    pub const DEFAULT_THREADS_PER_BLOCK: u32 = 256;
    /// CUDA's limit on threads per block.
    pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
    /// The most time steps `fuse = T` asks one launch to run (a tile holds far fewer for any
    /// radius: [`crate::time_steps::FusedTile::max_steps`] says how many).
    pub const MAX_FUSE: u32 = 1024;
    /// The largest `min_blocks_per_sm` accepted (no GPU holds more than 32 blocks per SM).
    pub const MAX_MIN_BLOCKS_PER_SM: u32 = 32;

    pub fn new(radius: u32, warp: u32, outputs_per_thread: u32, boundary: Boundary) -> Result<Pattern, PatternError> {
        let radius = validate::radius(radius.into())?;
        let warp = validate::warp(warp.into())?;
        let outputs_per_thread = validate::outputs_per_thread(outputs_per_thread.into())?;
        Ok(Pattern::new_unchecked(radius, warp, outputs_per_thread, boundary))
    }

    /// Used by generated code, whose pattern the macro has already validated.
    #[doc(hidden)]
    pub const fn new_unchecked(radius: u32, warp: u32, outputs_per_thread: u32, boundary: Boundary) -> Pattern {
        Pattern {
            radius: Radius::x(radius),
            warp,
            outputs_per_thread,
            rows_per_warp: 1,
            planes_per_warp: 1,
            stream_rows: false,
            boundary,
            threads_per_block: Pattern::DEFAULT_THREADS_PER_BLOCK,
            min_blocks_per_sm: None,
            tile_outputs: None,
            prefetch: false,
        }
    }

    /// A 2D or 3D pattern (or 1D, with a 1D `radius`): `radius` per dimension, the warp's
    /// lanes along x with `outputs_per_thread` outputs each, `rows_per_warp` output rows along
    /// y (2D and 3D) and `planes_per_warp` planes along z (3D); each must be 1 where the radius
    /// has no such dimension.
    pub fn grid(
        radius: Radius,
        warp: u32,
        outputs_per_thread: u32,
        rows_per_warp: u32,
        planes_per_warp: u32,
        boundary: Boundary,
    ) -> Result<Pattern, PatternError> {
        for r in radius.components() {
            validate::radius(r.into())?;
        }
        let warp = validate::warp(warp.into())?;
        let outputs_per_thread = validate::outputs_per_thread(outputs_per_thread.into())?;
        let rows_per_warp = validate::rows_per_warp("rows_per_warp", radius.dims(), Dims::Two, rows_per_warp.into())?;
        let planes_per_warp =
            validate::rows_per_warp("planes_per_warp", radius.dims(), Dims::Three, planes_per_warp.into())?;
        Ok(Pattern::grid_unchecked(radius, warp, outputs_per_thread, rows_per_warp, planes_per_warp, boundary))
    }

    /// `grid` for generated code, whose pattern the macro has already validated.
    #[doc(hidden)]
    pub const fn grid_unchecked(
        radius: Radius,
        warp: u32,
        outputs_per_thread: u32,
        rows_per_warp: u32,
        planes_per_warp: u32,
        boundary: Boundary,
    ) -> Pattern {
        let one = Pattern::new_unchecked(0, warp, outputs_per_thread, boundary);
        Pattern { radius, rows_per_warp, planes_per_warp, ..one }
    }

    /// This pattern with launch bounds: `threads_per_block` threads per block (a multiple of 32
    /// from 32 to 1024; printed as `.maxntid` and used by the launch) and, if given, at least
    /// `min_blocks_per_sm` blocks resident per multiprocessor (1 to 32; printed as
    /// `.minnctapersm`, which makes ptxas cap registers per thread to fit them).
    pub fn with_launch_bounds(
        self,
        threads_per_block: u32,
        min_blocks_per_sm: Option<u32>,
    ) -> Result<Pattern, PatternError> {
        let threads_per_block = validate::threads_per_block(threads_per_block.into())?;
        let min_blocks_per_sm = min_blocks_per_sm.map(|m| validate::min_blocks_per_sm(m.into())).transpose()?;
        Ok(self.with_launch_bounds_unchecked(threads_per_block, min_blocks_per_sm))
    }

    /// `with_launch_bounds` for generated code, whose bounds the macro has already validated.
    #[doc(hidden)]
    pub const fn with_launch_bounds_unchecked(self, threads_per_block: u32, min_blocks_per_sm: Option<u32>) -> Pattern {
        Pattern { threads_per_block, min_blocks_per_sm, ..self }
    }

    /// This pattern with `outputs` outputs along x per tile, fewer than its lanes own (a fused
    /// 2D strip stores the part of its row that is exact after its steps, in whole vectors, not
    /// a whole number per lane). For generated code and fused launches, which choose it.
    #[doc(hidden)]
    pub const fn with_tile_outputs_unchecked(self, outputs: u32) -> Pattern {
        Pattern { tile_outputs: Some(outputs), ..self }
    }

    /// This 2D pattern with its rows streamed (`true`: one row per step of a loop, partial
    /// results carried from row to row, [`Pattern::lifted`]) or straight-line (`false`).
    /// Refused in 1D and 3D: a 3D tile streams along z when it has several planes.
    pub fn with_streamed_rows(self, stream: bool) -> Result<Pattern, PatternError> {
        validate::stream_rows(self.dims(), stream)?;
        validate::prefetch(self.dims(), stream, self.prefetch)?;
        Ok(self.with_streamed_rows_unchecked(stream))
    }

    /// `with_streamed_rows` for generated code, whose pattern the macro has already validated.
    #[doc(hidden)]
    pub const fn with_streamed_rows_unchecked(self, stream_rows: bool) -> Pattern {
        Pattern { stream_rows, ..self }
    }

    /// This 2D pattern with its interior tiles prefetching into L2 the input rows a later band
    /// of blocks reads (`true`, [`crate::prefetch`]) or not. Refused in 1D and 3D and for tiles
    /// that stream their rows: only a straight-line 2D tile has that interior path.
    pub fn with_prefetch(self, prefetch: bool) -> Result<Pattern, PatternError> {
        validate::prefetch(self.dims(), self.stream_rows, prefetch)?;
        Ok(self.with_prefetch_unchecked(prefetch))
    }

    /// `with_prefetch` for generated code and the cost model, whose pattern is already valid.
    #[doc(hidden)]
    pub const fn with_prefetch_unchecked(self, prefetch: bool) -> Pattern {
        Pattern { prefetch, ..self }
    }

    /// Whether a 2D tile's interior path prefetches into L2 ([`Pattern::with_prefetch`]).
    pub const fn prefetches(&self) -> bool {
        self.prefetch
    }

    /// Whether a 2D tile streams its rows ([`Pattern::with_streamed_rows`]).
    pub const fn streams_rows(&self) -> bool {
        self.stream_rows
    }

    /// The pattern the warp program is compiled for: a 2D tile that streams its rows is the 3D
    /// tile of radius `(ry, 0, rx)` whose `rows_per_warp` planes are one row each, on the grid
    /// `[rows, 1, cols]` (the same elements at the same addresses), so 2D streaming is the 3D
    /// pipeline ([`crate::pipeline`]) and nothing else; every other pattern is itself.
    pub const fn lifted(&self) -> Pattern {
        if !self.stream_rows {
            return *self;
        }
        let r = self.radius;
        let radius = Radius::zyx(r.along(1), 0, r.along_x());
        Pattern { radius, rows_per_warp: 1, planes_per_warp: self.rows_per_warp, stream_rows: false, ..*self }
    }

    /// A grid's shape as the lifted pattern sees it: `[rows, cols]` as `[rows, 1, cols]` for a
    /// 2D tile that streams its rows, else `shape` itself.
    pub fn lifted_shape(&self, shape: Extent) -> Extent {
        match (self.stream_rows, shape.dims()) {
            (true, Dims::Two) => Extent::zyx(shape.along(1), 1, shape.along_x()),
            _ => shape,
        }
    }

    /// Threads per block of the launch (and the kernel's `.maxntid`).
    pub const fn threads_per_block(&self) -> u32 {
        self.threads_per_block
    }

    /// The kernel's `.minnctapersm`, if the attribute set `min_blocks_per_sm`.
    pub const fn min_blocks_per_sm(&self) -> Option<u32> {
        self.min_blocks_per_sm
    }

    pub const fn radius(&self) -> Radius {
        self.radius
    }
    pub const fn dims(&self) -> Dims {
        self.radius.dims()
    }
    pub const fn warp(&self) -> u32 {
        self.warp
    }
    pub const fn outputs_per_thread(&self) -> u32 {
        self.outputs_per_thread
    }
    pub const fn boundary(&self) -> Boundary {
        self.boundary
    }
    /// Output rows along y one warp computes (1 in 1D).
    pub const fn rows_per_warp(&self) -> u32 {
        self.rows_per_warp
    }
    /// Output planes along z one warp computes (1 in 1D and 2D).
    pub const fn planes_per_warp(&self) -> u32 {
        self.planes_per_warp
    }

    /// What the warp program computes at once: the tile itself, except that a 3D tile of
    /// several planes computes one plane per step ([`Pattern::streams`]). Its rows
    /// ([`Pattern::input_rows`], [`Pattern::output_rows`]) are the ones the warp program's
    /// instructions name, counted from the current step's plane.
    pub const fn step(&self) -> Pattern {
        Pattern { planes_per_warp: 1, ..*self }
    }

    /// Whether a tile streams along z: [`Pattern::step`] runs `planes_per_warp` times, the
    /// tile moving one plane after each.
    pub const fn streams(&self) -> bool {
        self.planes_per_warp > 1
    }

    /// The 1D pattern of one row of the tile: the x radius, the lanes, the outputs per thread,
    /// the boundary and the launch bounds. The distribution and the schedule along x read it.
    pub const fn along_x(&self) -> Pattern {
        Pattern {
            radius: Radius::x(self.radius.along_x()),
            rows_per_warp: 1,
            planes_per_warp: 1,
            prefetch: false,
            ..*self
        }
    }

    /// The halo before a tile's first output along dimension `axis` (0 is x): its radius,
    /// except 0 under `valid`.
    pub const fn shift_along(&self, axis: usize) -> u32 {
        match self.boundary {
            Boundary::Valid => 0,
            _ => self.radius.along(axis),
        }
    }

    /// Output rows of one tile, planes times rows (1 in 1D): output row `k` is plane
    /// `k / rows_per_warp`, row `k % rows_per_warp` of the tile.
    pub const fn output_rows(&self) -> u32 {
        self.planes_per_warp * self.rows_per_warp
    }

    /// Input rows a tile reads along y and z, its output rows plus the halo on both sides:
    /// `(planes, rows)`; `(1, 1)` in 1D.
    pub const fn box_rows(&self) -> (u32, u32) {
        (self.planes_per_warp + 2 * self.radius.along(2), self.rows_per_warp + 2 * self.radius.along(1))
    }

    /// Input rows of one tile, `planes * rows` of [`Pattern::box_rows`]: box row `k` is plane
    /// `k / rows`, row `k % rows` of the tile's input box.
    pub const fn input_rows(&self) -> u32 {
        let (planes, rows) = self.box_rows();
        planes * rows
    }

    /// The input box row that output row `output_row` reads at outer offset `(dz, dy)`.
    pub const fn input_row(&self, output_row: u32, dz: i32, dy: i32) -> u32 {
        let (plane, row) = (output_row / self.rows_per_warp, output_row % self.rows_per_warp);
        let (_, rows) = self.box_rows();
        let z = (plane as i32 + dz + self.radius.along(2) as i32) as u32;
        let y = (row as i32 + dy + self.radius.along(1) as i32) as u32;
        z * rows + y
    }

    /// Taps per output: `2r + 1`.
    pub const fn window(&self) -> u32 {
        2 * self.radius.along_x() + 1
    }

    /// Outputs one logical warp computes along x.
    pub const fn tile_outputs(&self) -> u32 {
        match self.tile_outputs {
            Some(outputs) => outputs,
            None => self.warp * self.outputs_per_thread,
        }
    }

    /// Input elements one logical warp reads: its outputs plus the halo on both sides.
    pub const fn tile_elements(&self) -> u32 {
        self.tile_outputs() + 2 * self.radius.along_x()
    }

    /// The halo before a tile's first output: `r`, except 0 under `valid`, where output `i` is
    /// centred on input `i + r`.
    pub const fn shift(&self) -> u32 {
        match self.boundary {
            Boundary::Valid => 0,
            _ => self.radius.along_x(),
        }
    }

    /// The output length for an input of `input_len` elements, or why there is none.
    /// An empty input gives an empty output under every boundary.
    pub fn output_len(&self, input_len: usize) -> Result<usize, LengthError> {
        if input_len == 0 {
            return Ok(0);
        }
        let window = self.window() as usize;
        let output = Extent::x(input_len).output(self.radius, self.boundary);
        output.and_then(Extent::len).ok_or(LengthError::InputShorterThanWindow { window, got: input_len })
    }

    /// Checks `output` has exactly the length `input` calls for; returns that length.
    pub fn check_lengths(&self, input_len: usize, output_len: usize) -> Result<usize, LengthError> {
        let expected = self.output_len(input_len)?;
        if expected != output_len {
            return Err(LengthError::Output { expected, got: output_len, input: input_len, boundary: self.boundary });
        }
        Ok(expected)
    }

    /// The outputs one logical warp computes, per dimension: `warp * outputs_per_thread`
    /// along x.
    pub const fn tile(&self) -> Extent {
        let (x, y, z) = (self.tile_outputs() as usize, self.rows_per_warp as usize, self.planes_per_warp as usize);
        match self.radius.dims() {
            Dims::One => Extent::x(x),
            Dims::Two => Extent::yx(y, x),
            Dims::Three => Extent::zyx(z, y, x),
        }
    }

    /// Logical warps (tiles) needed for `output_len` outputs of a 1D stencil.
    pub fn tiles(&self, output_len: usize) -> usize {
        output_len.div_ceil(self.tile_outputs() as usize)
    }

    /// Tiles along each dimension that cover `output` (whole tiles in each).
    pub fn tiles_along(&self, output: Extent) -> Extent {
        let tile = self.tile();
        let per_dim: Vec<usize> =
            output.components().iter().zip(tile.components()).map(|(n, t)| n.div_ceil(t)).collect();
        Extent::new(&per_dim).unwrap_or(output)
    }
}

/// A pattern's fields, all of them, each named as generated code writes it: [`Pattern::parts`]
/// takes a pattern apart and [`Pattern::from_parts`] (a `const fn`) puts it back, so the macro
/// rebuilds the pattern it compiled in a `const` by printing [`PatternParts::named`], and a
/// field added to `Pattern` is added here, in rc-core, and nowhere else. Unchecked: for
/// generated code, whose pattern was validated when it was declared.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatternParts {
    pub radius: Radius,
    pub warp: u32,
    pub outputs_per_thread: u32,
    pub rows_per_warp: u32,
    pub planes_per_warp: u32,
    pub stream_rows: bool,
    pub boundary: Boundary,
    pub threads_per_block: u32,
    pub min_blocks_per_sm: Option<u32>,
    pub tile_outputs: Option<u32>,
    pub prefetch: bool,
}

/// One part of a pattern, by the kind of value it is, for a front end to print as a constant
/// expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    U32(u32),
    OptionU32(Option<u32>),
    Bool(bool),
    Radius(Radius),
    Boundary(Boundary),
}

impl PatternParts {
    /// Every part with its field's name, in the order the fields are declared.
    pub const fn named(&self) -> [(&'static str, Part); 11] {
        let PatternParts {
            radius,
            warp,
            outputs_per_thread,
            rows_per_warp,
            planes_per_warp,
            stream_rows,
            boundary,
            threads_per_block,
            min_blocks_per_sm,
            tile_outputs,
            prefetch,
        } = *self;
        [
            ("radius", Part::Radius(radius)),
            ("warp", Part::U32(warp)),
            ("outputs_per_thread", Part::U32(outputs_per_thread)),
            ("rows_per_warp", Part::U32(rows_per_warp)),
            ("planes_per_warp", Part::U32(planes_per_warp)),
            ("stream_rows", Part::Bool(stream_rows)),
            ("boundary", Part::Boundary(boundary)),
            ("threads_per_block", Part::U32(threads_per_block)),
            ("min_blocks_per_sm", Part::OptionU32(min_blocks_per_sm)),
            ("tile_outputs", Part::OptionU32(tile_outputs)),
            ("prefetch", Part::Bool(prefetch)),
        ]
    }
}

impl Pattern {
    /// This pattern's fields ([`PatternParts`]).
    #[doc(hidden)]
    pub const fn parts(&self) -> PatternParts {
        let Pattern {
            radius,
            warp,
            outputs_per_thread,
            rows_per_warp,
            planes_per_warp,
            stream_rows,
            boundary,
            threads_per_block,
            min_blocks_per_sm,
            tile_outputs,
            prefetch,
        } = *self;
        PatternParts {
            radius,
            warp,
            outputs_per_thread,
            rows_per_warp,
            planes_per_warp,
            stream_rows,
            boundary,
            threads_per_block,
            min_blocks_per_sm,
            tile_outputs,
            prefetch,
        }
    }

    /// The pattern of `parts`, unchecked: for generated code, whose pattern was validated when
    /// it was declared ([`PatternParts`]).
    #[doc(hidden)]
    pub const fn from_parts(parts: PatternParts) -> Pattern {
        let PatternParts {
            radius,
            warp,
            outputs_per_thread,
            rows_per_warp,
            planes_per_warp,
            stream_rows,
            boundary,
            threads_per_block,
            min_blocks_per_sm,
            tile_outputs,
            prefetch,
        } = parts;
        Pattern {
            radius,
            warp,
            outputs_per_thread,
            rows_per_warp,
            planes_per_warp,
            stream_rows,
            boundary,
            threads_per_block,
            min_blocks_per_sm,
            tile_outputs,
            prefetch,
        }
    }
}

/// Block and grid for one launch: 1D blocks, one thread per lane of a tile, in a grid of
/// `grid[0] x grid[1] x grid[2]` blocks (`[blocks, 1, 1]` where tiles are numbered row-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: [u32; 3],
    pub threads_per_block: u32,
}

impl LaunchShape {
    /// A 1D grid of `blocks` blocks.
    pub const fn linear(blocks: u32, threads_per_block: u32) -> Self {
        LaunchShape { grid: [blocks, 1, 1], threads_per_block }
    }

    /// Blocks in all.
    pub const fn blocks(&self) -> u64 {
        self.grid[0] as u64 * self.grid[1] as u64 * self.grid[2] as u64
    }
}

impl fmt::Display for LaunchShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.grid {
            [blocks, 1, 1] => write!(f, "{blocks} blocks of {} threads", self.threads_per_block),
            [x, y, z] => write!(f, "{x} x {y} x {z} blocks of {} threads", self.threads_per_block),
        }
    }
}

/// A grid's most blocks along y and z (CUDA's limit).
const MAX_GRID_YZ: u64 = 65535;

impl Pattern {
    /// The default threads per block; a pattern's own is [`Pattern::threads_per_block`].
    #[deprecated(
        note = "use Pattern::threads_per_block() (set by `max_threads_per_block`) or Pattern::DEFAULT_THREADS_PER_BLOCK"
    )]
    pub const THREADS_PER_BLOCK: u32 = Pattern::DEFAULT_THREADS_PER_BLOCK;

    /// Whether this tile's block may stack its warps along y ([`Pattern::stacked_launch_shape`])
    /// rather than take consecutive tiles of a row: a 2D tile whose rows are not streamed (the
    /// layout decides, [`crate::Layout::stacks_warps`]). Its warps then read the input rows
    /// they share (2 ry of each tile's) through the SM's L1 rather than each through L2. On an H200 (ncu,
    /// bench/results/HISTORY.md: 2026-11-24-h200-grid2d) L2 ran at 93% of its throughput under 2D star
    /// r = 1 numbered row-major, DRAM at 76%; stacked, L2 read 1.26x the input instead of
    /// 1.53x (box r = 2: 1.28x instead of 2.01x).
    pub const fn stacks_warps(&self) -> bool {
        matches!(self.radius.dims(), Dims::Two) && !self.stream_rows
    }

    /// Logical warps (tiles) in one block.
    pub const fn tiles_per_block(&self) -> u32 {
        self.threads_per_block / self.warp
    }

    /// Output rows of a block whose warps stack along y ([`Pattern::stacks_warps`]): a band of
    /// the grid of block tiles.
    pub const fn block_rows(&self) -> u32 {
        self.rows_per_warp * self.tiles_per_block()
    }

    /// Outputs one block computes (all its warps' tiles, consecutive).
    pub const fn block_outputs(&self) -> u32 {
        self.threads_per_block * self.outputs_per_thread
    }

    /// Input elements per row that strategy `shared_memory` stages: in 1D the block's (its
    /// tiles are consecutive), in 2D and 3D each warp's own tile row (a block's tiles may lie
    /// on different rows).
    pub const fn block_elements(&self) -> u32 {
        match self.radius.dims() {
            Dims::One => self.block_outputs() + 2 * self.radius.along_x(),
            _ => self.tile_elements(),
        }
    }

    /// The launch that covers `output_len` outputs of a 1D stencil (no blocks for an empty
    /// output).
    pub fn launch_shape(&self, output_len: usize) -> Result<LaunchShape, LengthError> {
        self.launch_shape_of(Extent::x(output_len))
    }

    /// The launch that covers an output of shape `output`: a 1D grid of 1D blocks, one warp
    /// per tile, tiles numbered row-major (x fastest), so a block's warps take consecutive
    /// tiles however few tiles a row has.
    pub fn launch_shape_of(&self, output: Extent) -> Result<LaunchShape, LengthError> {
        let tiles: u64 = self.tiles_along(output).components().iter().map(|&t| t as u64).product();
        let blocks = tiles.div_ceil(self.tiles_per_block() as u64);
        let max = i32::MAX as u64;
        if blocks > max {
            return Err(LengthError::GridTooLarge { outputs: output.len().unwrap_or(usize::MAX), blocks, max });
        }
        Ok(LaunchShape::linear(blocks as u32, self.threads_per_block))
    }

    /// Blocks of a launch whose block's warps stack along y ([`crate::Layout::stacks_warps`]):
    /// along x, y and z (innermost first), each block `tiles_per_block` tiles along y.
    pub fn stacked_blocks_along(&self, output: Extent) -> [u64; 3] {
        let tiles = self.tiles_along(output);
        let along = |axis: usize| (tiles.along(axis) as u64).max(1);
        [along(0), along(1).div_ceil(self.tiles_per_block() as u64), along(2)]
    }

    /// The launch of tiles whose block's warps stack along y (staged planes, 2D windows and
    /// granules, [`crate::Layout::stacks_warps`]): one block per
    /// [`Pattern::stacked_blocks_along`]; warp `w` of a block computes its `w`-th tile along y.
    /// In 2D a grid of the block tiles along x by the bands of rows (band `y + z * grid[1]`,
    /// as CUDA allows at most 65535 along y), so the prologue divides nothing (a 32-bit
    /// division and its test were 31 of a 2D box r = 4 tile's 1497 instructions); staged
    /// planes number blocks row-major (x fastest) in a 1D grid.
    pub fn stacked_launch_shape(&self, output: Extent) -> Result<LaunchShape, LengthError> {
        let along = self.stacked_blocks_along(output);
        let too_large = |blocks: u64, max: u64| LengthError::GridTooLarge {
            outputs: output.len().unwrap_or(usize::MAX),
            blocks,
            max,
        };
        let blocks: u64 = along.iter().product();
        if self.dims() == Dims::Two {
            let [x, bands, _] = along;
            let y = bands.min(MAX_GRID_YZ);
            let z = bands.div_ceil(y);
            if x > i32::MAX as u64 || z > MAX_GRID_YZ {
                return Err(too_large(blocks, i32::MAX as u64 * MAX_GRID_YZ * MAX_GRID_YZ));
            }
            return Ok(LaunchShape { grid: [x as u32, y as u32, z as u32], threads_per_block: self.threads_per_block });
        }
        let max = i32::MAX as u64;
        if blocks > max {
            return Err(too_large(blocks, max));
        }
        Ok(LaunchShape::linear(blocks as u32, self.threads_per_block))
    }

    /// The most elements a row of a 2D or 3D input holds: the kernels move from one row's lane
    /// starts to the next by `mad.wide.u32` of the row length (two integer adds, where a 64-bit
    /// row length took a multiply-add on the FMA pipe the taps' adds need: 2D box r = 4 0.699
    /// -> 0.713 of its add bound on an H200, bench/results/HISTORY.md: 2026-11-25-h200-box4).
    pub const MAX_ROW: usize = u32::MAX as usize;

    /// The output's shape for an input of shape `input`, or why there is none. In 1D as
    /// [`Pattern::output_len`]; in 2D and 3D the shape must have the stencil's dimensions, no
    /// empty one, and under `valid` at least one whole window along each.
    pub fn output_shape(&self, input: Extent) -> Result<Extent, LengthError> {
        let dims = self.dims();
        if input.dims() != dims {
            return Err(LengthError::Dimensions { expected: dims, got: input.dims() });
        }
        if dims == Dims::One {
            return Ok(Extent::x(self.output_len(input.along_x())?));
        }
        if input.is_empty() {
            return Err(LengthError::EmptyShape { shape: input });
        }
        input.len().ok_or(LengthError::ShapeOverflow { shape: input })?;
        if input.along_x() > Self::MAX_ROW {
            return Err(LengthError::RowTooLong { shape: input, got: input.along_x(), max: Self::MAX_ROW });
        }
        let window = Extent::new(&self.radius.components().iter().map(|&r| 2 * r as usize + 1).collect::<Vec<_>>())
            .unwrap_or(input);
        input.output(self.radius, self.boundary).ok_or(LengthError::ShapeSmallerThanWindow { shape: input, window })
    }

    /// [`Pattern::check_shapes`] for a stencil of `fields` input fields whose buffers' lengths
    /// are `inputs` and `output_fields` output fields whose buffers' lengths are `outputs`: one
    /// buffer per field, input 0 of shape `input`, every other input as long as input 0, output
    /// 0 of the shape that input calls for, every other output as long as output 0. Returns the
    /// output's shape.
    pub fn check_buffers(
        &self,
        input: Extent,
        inputs: &[usize],
        fields: u32,
        outputs: &[usize],
        output_fields: u32,
    ) -> Result<Extent, LengthError> {
        let first = inputs.first().copied().filter(|_| inputs.len() == fields as usize);
        let first = first.ok_or(LengthError::InputCount { expected: fields as usize, got: inputs.len() })?;
        let first_output = outputs.first().copied().filter(|_| outputs.len() == output_fields as usize);
        let first_output =
            first_output.ok_or(LengthError::OutputCount { expected: output_fields as usize, got: outputs.len() })?;
        let output = self.check_shapes(input, first, first_output)?;
        check_fields(inputs, fields)?;
        check_output_fields(outputs, output_fields)?;
        Ok(output)
    }

    pub fn check_shapes(&self, input: Extent, input_len: usize, output_len: usize) -> Result<Extent, LengthError> {
        if self.dims() == Dims::One && input.dims() == Dims::One {
            return Ok(Extent::x(self.check_lengths(input_len, output_len)?));
        }
        let output = self.output_shape(input)?;
        let expected = input.len().ok_or(LengthError::ShapeOverflow { shape: input })?;
        if input_len != expected {
            return Err(LengthError::InputShape { shape: input, expected, got: input_len });
        }
        let expected = output.len().ok_or(LengthError::ShapeOverflow { shape: output })?;
        if output_len != expected {
            return Err(LengthError::OutputShape {
                shape: output,
                expected,
                got: output_len,
                input,
                boundary: self.boundary,
            });
        }
        Ok(output)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "radius {}, warp {}, outputs_per_thread {}", self.radius, self.warp, self.outputs_per_thread)?;
        if let Some(outputs) = self.tile_outputs {
            write!(f, " ({outputs} per tile)")?;
        }
        if self.dims() >= Dims::Two {
            write!(f, ", rows_per_warp {}", self.rows_per_warp)?;
        }
        if self.stream_rows {
            f.write_str(" (streamed)")?;
        }
        if self.dims() == Dims::Three {
            write!(f, ", planes_per_warp {}", self.planes_per_warp)?;
        }
        if self.prefetch {
            f.write_str(", prefetch")?;
        }
        write!(f, ", boundary {}", self.boundary)
    }
}

/// Checks there is one input per field (`fields`) and that all have input 0's length, which it
/// returns.
pub fn check_fields(inputs: &[usize], fields: u32) -> Result<usize, LengthError> {
    let (&first, rest) = match inputs.split_first() {
        Some(split) if inputs.len() == fields as usize => split,
        _ => return Err(LengthError::InputCount { expected: fields as usize, got: inputs.len() }),
    };
    match rest.iter().position(|&len| len != first) {
        Some(i) => Err(LengthError::InputLength { input: i + 1, expected: first, got: rest[i] }),
        None => Ok(first),
    }
}

/// Checks there is one output per output field (`output_fields`) and that all have output 0's
/// length, which it returns.
pub fn check_output_fields(outputs: &[usize], output_fields: u32) -> Result<usize, LengthError> {
    let (&first, rest) = match outputs.split_first() {
        Some(split) if outputs.len() == output_fields as usize => split,
        _ => return Err(LengthError::OutputCount { expected: output_fields as usize, got: outputs.len() }),
    };
    match rest.iter().position(|&len| len != first) {
        Some(i) => Err(LengthError::OutputLength { output: i + 1, expected: first, got: rest[i] }),
        None => Ok(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_taken_apart_and_put_back_is_itself_and_names_each_part_once() {
        let grid = Pattern::grid(Radius::yx(2, 1), 16, 4, 8, 1, Boundary::Clamp)
            .and_then(|p| p.with_prefetch(true))
            .and_then(|p| p.with_launch_bounds(128, Some(3)))
            .expect("valid");
        let patterns = [
            Pattern::new_unchecked(3, 32, 2, Boundary::Wrap),
            grid,
            grid.with_tile_outputs_unchecked(48),
            Pattern::grid_unchecked(Radius::zyx(1, 1, 1), 32, 4, 2, 32, Boundary::Zero),
        ];
        for pattern in patterns {
            assert_eq!(Pattern::from_parts(pattern.parts()), pattern);
        }
        let names: Vec<&str> = grid.parts().named().iter().map(|(name, _)| *name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert!(names.contains(&"threads_per_block"));
    }
}
