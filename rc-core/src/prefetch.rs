//! The L2 prefetch of a 2D tile bound by issue: before its taps, an interior tile asks L2 for the
//! input rows the tile of a later band of blocks in its column will read, so that when that
//! block starts, its first rows come from L2 instead of DRAM.
//!
//! Why: a 2D box of radius 4 issues 81 additions per output; its warps keep the SMs busy until a
//! new block starts, whose first rows all miss (2D box r = 4 on an H200, 8192^2 f32, main's tile:
//! 1.40 long-scoreboard stalls per issue, 13% of cycles with no eligible warp;
//! bench/results/HISTORY.md: 2026-11-25-h200-box4). Prefetching 8 bands of 4-warp blocks ahead cut the stalls
//! to 0.82 (call 3); as rc prints it, the tile runs at 0.767 of its add bound against 0.744
//! without, 0.8-3.1% faster at every grid width tried (bench/results/2026-11-25-h200-session10).
//!
//! How far: blocks run about in the order of their number (x fastest, then the band), so a band
//! `d` below is reached `d * columns` blocks later. The resident blocks (SMs x blocks per SM)
//! are one generation; half a generation ahead (`resident / 2 / columns` bands, rounded; none
//! when that rounds to 0) is late enough that the lines are not yet needed and early enough that
//! L2 still holds them. A fixed 128 rows, right at 8192 columns, lost 6-8% at 32768 and 65536
//! columns (two generations ahead: the lines were evicted before use); this distance never lost
//! and gained 0.5-2% at every width tried (bench/results/HISTORY.md: 2026-11-25-h200-box4, call 5). Computed in the kernel (`%nsmid`, a float
//! division) it cost about 1%, so the launch computes it ([`rows_ahead`]) and passes it as the
//! kernel parameter `prefetch_rows` ([`crate::abi::KernelParam::PrefetchRows`]).
//!
//! What: the lines of the tile's own columns (its outputs' elements, not the x halo, which the
//! neighbouring tiles' prefetches cover) of the input rows its output rows centre on (not the y
//! halo, which the tiles above and below prefetch as their own), spread over the warp's lanes
//! ([`Op::PrefetchL2`](crate::machine::Op::PrefetchL2)): for box r = 4, 4 rows x 4 lines of 128
//! bytes, one `prefetch.global.L2` in half the lanes. Prefetching all 12 of the tile's input
//! rows (two prefetches per lane) asked for most rows three times over a block of 4 warps and
//! cost 1.4% of the instructions: in the benchmark it gained 0.6% at 8192 columns and lost 1.1%
//! at 65536 (bench/results/2026-11-25-h200-session10, call 1). Rows past the input's last are left out; the tile's
//! columns lie inside the input on the interior path, where alone it runs.

use crate::pattern::{LaunchShape, Pattern};

/// Bytes of an L2 line as a prefetch fetches it.
pub const LINE_BYTES: u32 = 128;

/// The lines one input row of `elements` elements of `bytes` bytes spans (from a line's start).
pub const fn lines_per_row(elements: u32, bytes: u32) -> u32 {
    (elements * bytes).div_ceil(LINE_BYTES)
}

/// The prefetches each lane of a `warp`-lane warp issues for `rows` rows of `elements` elements:
/// the rows' lines spread over the lanes.
pub const fn rounds(rows: u32, elements: u32, bytes: u32, warp: u32) -> u32 {
    (rows * lines_per_row(elements, bytes)).div_ceil(warp)
}

/// How many rows below its own a tile of `pattern` prefetches, launched as `launch` with
/// `resident_blocks` blocks resident on the GPU at once (SMs x blocks per SM, from the occupancy
/// the driver computes): half the resident blocks over the grid's block columns, in bands of
/// the block's rows, rounded to the nearest band; 0 (no prefetch) where that is less than half a
/// band.
pub fn rows_ahead(pattern: &Pattern, resident_blocks: u64, launch: &LaunchShape) -> u64 {
    let band = u64::from(pattern.block_rows());
    let columns = u64::from(launch.grid[0].max(1));
    // round(resident / (2 columns)) without floating point.
    let bands = (resident_blocks + columns) / (2 * columns);
    bands * band
}
