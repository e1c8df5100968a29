//! The access pattern a user declares: radius, logical warp width, outputs per thread, boundary.
//! It fixes how outputs map to warps ("tiles") and which input element each tile element is.

use std::fmt;

use crate::error::{LengthError, PatternError};
use crate::geometry::{Dims, Extent, Radius};
use crate::scalar::Element;
use crate::validate;

/// What a tap that falls outside the input reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// Only outputs whose whole window lies inside the input: `n - 2r` outputs, output `i`
    /// centred on input `i + r` (numpy's `'valid'`).
    Valid,
    /// `n` outputs; taps outside the input read zero.
    Zero,
    /// `n` outputs; taps outside the input read the nearest edge element.
    Clamp,
    /// `n` outputs; taps outside the input wrap around (periodic signal).
    Wrap,
}

impl Boundary {
    pub const ALL: [Boundary; 4] = [Boundary::Valid, Boundary::Zero, Boundary::Clamp, Boundary::Wrap];

    pub const fn name(self) -> &'static str {
        match self {
            Boundary::Valid => "valid",
            Boundary::Zero => "zero",
            Boundary::Clamp => "clamp",
            Boundary::Wrap => "wrap",
        }
    }

    pub fn from_name(name: &str) -> Option<Boundary> {
        Boundary::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Which input element a read of input index `g` (possibly outside `0..len`) returns under this
    /// rule, or `None` for a zero. `len` must not be 0.
    pub fn source(self, len: usize, g: i64) -> Option<usize> {
        let n = len as i64;
        match self {
            Boundary::Valid | Boundary::Zero => (0..n).contains(&g).then_some(g as usize),
            Boundary::Clamp => Some(g.clamp(0, n - 1) as usize),
            Boundary::Wrap => Some(g.rem_euclid(n) as usize),
        }
    }

    /// The element at input index `g` under this rule. `input` must not be empty.
    pub fn read<T: Element>(self, input: &[T], g: i64) -> T {
        self.source(input.len(), g).map_or(*T::zero_ref(), |i| input[i])
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated access pattern.
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
    boundary: Boundary,
    /// Launch bounds: threads per block (`.maxntid`), and optionally the blocks per
    /// multiprocessor ptxas must fit (`.minnctapersm`).
    threads_per_block: u32,
    min_blocks_per_sm: Option<u32>,
}

impl Pattern {
    pub const DEFAULT_WARP: u32 = 32;
    pub const DEFAULT_OUTPUTS_PER_THREAD: u32 = 1;
    /// Radii above this make no sense for a register cache (and keep index arithmetic in i32).
    pub const MAX_RADIUS: u32 = 4096;
    pub const MAX_OUTPUTS_PER_THREAD: u32 = 64;
    /// Threads per block unless the attribute says `max_threads_per_block`: a multiple of 32, so
    /// every physical warp is whole and every lane of it takes part in every shuffle; 256 keeps
    /// 8 warps per block for the scheduler to hide latency.
    pub const DEFAULT_THREADS_PER_BLOCK: u32 = 256;
    /// CUDA's limit on threads per block.
    pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
    /// The largest `min_blocks_per_sm` accepted (no GPU holds more than 32 blocks per SM).
    pub const MAX_MIN_BLOCKS_PER_SM: u32 = 32;

    pub fn new(
        radius: u32,
        warp: u32,
        outputs_per_thread: u32,
        boundary: Boundary,
    ) -> Result<Pattern, PatternError> {
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
            boundary,
            threads_per_block: Pattern::DEFAULT_THREADS_PER_BLOCK,
            min_blocks_per_sm: None,
        }
    }

    /// This pattern with launch bounds: `threads_per_block` threads per block (a multiple of 32
    /// from 32 to 1024; printed as `.maxntid` and used by the launch) and, if given, at least
    /// `min_blocks_per_sm` blocks resident per multiprocessor (1 to 32; printed as
    /// `.minnctapersm`, which makes ptxas cap registers per thread to fit them).
    pub fn with_launch_bounds(self, threads_per_block: u32, min_blocks_per_sm: Option<u32>) -> Result<Pattern, PatternError> {
        let threads_per_block = validate::threads_per_block(threads_per_block.into())?;
        let min_blocks_per_sm = min_blocks_per_sm.map(|m| validate::min_blocks_per_sm(m.into())).transpose()?;
        Ok(self.with_launch_bounds_unchecked(threads_per_block, min_blocks_per_sm))
    }

    /// `with_launch_bounds` for generated code, whose bounds the macro has already validated.
    #[doc(hidden)]
    pub const fn with_launch_bounds_unchecked(self, threads_per_block: u32, min_blocks_per_sm: Option<u32>) -> Pattern {
        Pattern { threads_per_block, min_blocks_per_sm, ..self }
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

    /// Taps per output: `2r + 1`.
    pub const fn window(&self) -> u32 {
        2 * self.radius.along_x() + 1
    }

    /// Outputs one logical warp computes.
    pub const fn tile_outputs(&self) -> u32 {
        self.warp * self.outputs_per_thread
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
        Extent::x(self.tile_outputs() as usize)
    }

    /// Logical warps (tiles) needed for `output_len` outputs: whole tiles in each dimension.
    pub fn tiles(&self, output_len: usize) -> usize {
        let output = Extent::x(output_len);
        output.components().iter().zip(self.tile().components()).map(|(n, t)| n.div_ceil(t)).product()
    }
}

/// Block and grid for one launch: a 1D grid of 1D blocks, one thread per lane of a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub blocks: u32,
    pub threads_per_block: u32,
}

impl Pattern {
    /// The default threads per block; a pattern's own is [`Pattern::threads_per_block`].
    #[deprecated(note = "use Pattern::threads_per_block() (set by `max_threads_per_block`) or Pattern::DEFAULT_THREADS_PER_BLOCK")]
    pub const THREADS_PER_BLOCK: u32 = Pattern::DEFAULT_THREADS_PER_BLOCK;

    /// Logical warps (tiles) in one block.
    pub const fn tiles_per_block(&self) -> u32 {
        self.threads_per_block / self.warp
    }

    /// Outputs one block computes (all its warps' tiles, consecutive).
    pub const fn block_outputs(&self) -> u32 {
        self.threads_per_block * self.outputs_per_thread
    }

    /// Input elements one block reads (what strategy `shared_memory` stages).
    pub const fn block_elements(&self) -> u32 {
        self.block_outputs() + 2 * self.radius.along_x()
    }

    /// The launch that covers `output_len` outputs (no blocks for an empty output).
    pub fn launch_shape(&self, output_len: usize) -> Result<LaunchShape, LengthError> {
        let threads = self.tiles(output_len) as u64 * self.warp as u64;
        let blocks = threads.div_ceil(self.threads_per_block as u64);
        let max = i32::MAX as u64;
        if blocks > max {
            return Err(LengthError::GridTooLarge { outputs: output_len, blocks, max });
        }
        Ok(LaunchShape { blocks: blocks as u32, threads_per_block: self.threads_per_block })
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "radius {}, warp {}, outputs_per_thread {}, boundary {}",
            self.radius, self.warp, self.outputs_per_thread, self.boundary
        )
    }
}
