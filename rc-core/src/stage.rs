//! Where a staged window's input sits in shared memory (`distribution = staged(V)`): each
//! warp's region, and the padding that keeps its vector reads free of bank conflicts.

use crate::distribution::vector_access_elements;
use crate::pattern::Pattern;
use crate::scalar::ScalarType;

/// The most shared memory a kernel may declare statically (48 KiB on every GPU since sm_20).
pub const MAX_STATIC_SHARED_BYTES: u32 = 48 * 1024;

/// The most shared memory one block may have, declared dynamically and opted into at launch
/// (227 KiB on sm_90; less on older GPUs, whose driver refuses the launch).
pub const MAX_SHARED_BYTES_PER_BLOCK: u32 = 227 * 1024;

/// Where stage element `j` sits in shared memory: `j + pad * (j div granule)`. A staged window
/// read has each lane read 16 bytes at its granule's start plus a constant; shared memory serves
/// a quarter warp (8 lanes, 128 bytes) per pass when their 16 bytes fall in distinct banks,
/// which holds when the lanes' spacing in 16-byte units is odd. Granules of 32 bytes or more
/// are an even number of units apart, so each is followed by 16 bytes of padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagePadding {
    /// Elements per granule (V).
    pub granule: u32,
    /// Elements of padding after each granule.
    pub pad: u32,
    /// Elements per vector access, dividing V.
    pub width: u32,
}

impl StagePadding {
    pub fn for_granule(granule: u32, element: ScalarType) -> StagePadding {
        let bytes = element.bytes();
        let pad = if granule * bytes >= 32 && (granule * bytes / 16) % 2 == 0 { 16 / bytes } else { 0 };
        StagePadding { granule, pad, width: vector_access_elements(granule, element) }
    }

    pub fn position(&self, j: u32) -> u32 {
        j + self.pad * (j / self.granule)
    }

    /// Bytes of one warp's region for `elements` stage elements: whole vectors, padded, and a
    /// multiple of 16 bytes so every region starts aligned. At least 16 bytes: a body that
    /// reads no taps stages nothing but still names the array.
    pub fn region_bytes(&self, elements: u32, element: ScalarType) -> u32 {
        let used = match elements.div_ceil(self.width) * self.width {
            0 => 0,
            whole => self.position(whole - 1) + 1,
        };
        (used * element.bytes()).next_multiple_of(16).max(16)
    }
}

/// Bytes of shared memory a block of `pattern` declares for staged windows of granule `V` with
/// `elements` stage elements per warp: one region per warp.
pub(crate) fn block_bytes(pattern: &Pattern, granule: u32, element: ScalarType, elements: u32) -> u32 {
    StagePadding::for_granule(granule, element).region_bytes(elements, element) * pattern.tiles_per_block()
}

/// Bytes of shared memory strategy `shared_memory` declares: `elements` per input row of the
/// tile (of one step, [`Pattern::step`]) for each of its input rows, once per block in 1D and
/// once per warp in 2D and 3D ([`Pattern::block_elements`]).
pub(crate) fn block_stage_bytes(pattern: &Pattern, element: ScalarType, elements: u32) -> u32 {
    let copies = if pattern.dims() == crate::geometry::Dims::One { 1 } else { pattern.tiles_per_block() };
    elements * pattern.step().input_rows() * element.bytes() * copies
}
