//! The device buffers a launch is given (one input per input field, one output per output
//! field): an output must not overlap an input or another output, and the launch's context must
//! be able to reach them all. `launch` refuses both mistakes before the kernel is loaded or launched.
//!
//! # Overlap
//! Decided from device addresses alone, with no driver call: rc's kernels need sm_70 and a 64-bit
//! process, where the driver always uses unified addressing, so an address names the same byte in
//! every context of the process and two live allocations never share one.
//!
//! # Ownership
//! A `DeviceSlice` is only an address and a length: nothing stops a caller from passing memory
//! allocated while another context was current. Launched with such a buffer, the kernel faults
//! with an illegal address, which leaves the launch's context unusable. So `launch` asks the
//! driver which context owns each buffer (`cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_CONTEXT)`):
//! one call per buffer, and more only when it names another context. It refuses a buffer only
//! when the driver positively says the launch's context cannot reach it: device memory, not
//! managed, of another context on the same GPU (peer access, the only way one context maps
//! another's device memory, is between different GPUs) or on a GPU without peer access to this
//! one. Everything the driver cannot describe (system memory on HMM/ATS systems,
//! stream-ordered pools that belong to no context) and everything another context may legitimately
//! reach (managed memory, pinned host memory, which may be portable, and memory of a peer-capable
//! GPU, whose access may have been enabled: that cannot be asked without changing it) is launched.

use std::os::raw::{c_int, c_void};
use std::ptr;

use crate::driver::{self, CuContext, CuDevice, CuResult, CUDA_SUCCESS};
use crate::error::{check, Error};

/// `CUpointer_attribute` values (an `int`-sized C enum), from `cuda.h`.
const CU_POINTER_ATTRIBUTE_CONTEXT: c_int = 1;
const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
const CU_POINTER_ATTRIBUTE_IS_MANAGED: c_int = 8;
const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;

/// `CUmemorytype` of memory on a GPU (as opposed to host, array or unified memory).
const CU_MEMORYTYPE_DEVICE: u32 = 2;

/// The bytes `[start, end)` that `len` elements of `element_bytes` bytes each cover from
/// `address`. Saturates instead of wrapping: no allocation reaches the top of the address space.
pub(crate) fn byte_range(address: u64, len: usize, element_bytes: usize) -> (u64, u64) {
    let bytes = (len as u64).saturating_mul(element_bytes as u64);
    (address, address.saturating_add(bytes))
}

/// How many bytes the ranges `[a.0, a.1)` and `[b.0, b.1)` share: 0 when they are disjoint or
/// either is empty.
pub(crate) fn overlap_bytes(a: (u64, u64), b: (u64, u64)) -> u64 {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// Refuses an output (`written`) whose bytes overlap those of the input `buffer`
/// ([`Error::Aliasing`]). Ranges that only touch (one ends where the other starts) are disjoint.
pub(crate) fn check_disjoint(
    stencil: &'static str,
    buffer: &str,
    written: &str,
    input: (u64, u64),
    output: (u64, u64),
) -> Result<(), Error> {
    if overlap_bytes(input, output) > 0 {
        let (buffer, written) = (buffer.to_string(), written.to_string());
        return Err(Error::Aliasing { stencil, buffer, written, input, output });
    }
    Ok(())
}

/// Refuses two outputs, `first` and `second`, whose bytes overlap ([`Error::OutputsOverlap`]).
pub(crate) fn check_outputs_disjoint(
    stencil: &'static str,
    first: &str,
    second: &str,
    a: (u64, u64),
    b: (u64, u64),
) -> Result<(), Error> {
    if overlap_bytes(a, b) > 0 {
        let (first, second) = (first.to_string(), second.to_string());
        return Err(Error::OutputsOverlap { stencil, first, second, a, b });
    }
    Ok(())
}

/// Where memory owned by another context sits, seen from the launch's GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the launch's GPU: another context there cannot map it.
    SameDevice,
    /// On another GPU that this one can reach once peer access is enabled.
    PeerCapable,
    /// On another GPU that this one cannot reach at all.
    NoPeerAccess,
}

/// What the driver says about the memory a buffer starts at. Every `None` is something the
/// driver did not answer, which never counts against the buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Owner {
    /// The context the memory was allocated or registered in.
    pub context: Option<usize>,
    pub managed: Option<bool>,
    /// Its `CUmemorytype`.
    pub memory_type: Option<u32>,
    pub placement: Option<Placement>,
}

/// Refuses a buffer that the driver positively reports the launch's context (`current`) cannot
/// reach ([`Error::ForeignBuffer`]); see the module documentation for what counts.
pub(crate) fn check_owner(
    stencil: &'static str,
    buffer: &str,
    address: u64,
    owner: Owner,
    current: usize,
) -> Result<(), Error> {
    let Some(context) = owner.context.filter(|&context| context != current) else {
        return Ok(());
    };
    let unreachable = owner.managed == Some(false)
        && owner.memory_type == Some(CU_MEMORYTYPE_DEVICE)
        && matches!(owner.placement, Some(Placement::SameDevice | Placement::NoPeerAccess));
    if unreachable {
        return Err(Error::ForeignBuffer { stencil, buffer: buffer.to_string(), address, owner: context, current });
    }
    Ok(())
}

/// Asks the driver about the memory at `address` and refuses it if the current context,
/// `current`, cannot reach it (see [`check_owner`]).
pub(crate) fn check_reachable(
    stencil: &'static str,
    buffer: &str,
    address: u64,
    current: CuContext,
) -> Result<(), Error> {
    let context = pointer_attribute(CU_POINTER_ATTRIBUTE_CONTEXT, address)
        .map(|value| value as usize)
        .filter(|&context| context != 0);
    let owner = match context {
        Some(context) if context != current as usize => Owner {
            context: Some(context),
            managed: pointer_attribute(CU_POINTER_ATTRIBUTE_IS_MANAGED, address).map(|value| value != 0),
            memory_type: pointer_attribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address).map(|value| value as u32),
            placement: placement(address)?,
        },
        // The launch's own memory, or memory the driver ties to no context: nothing more to ask.
        _ => Owner { context, ..Owner::default() },
    };
    check_owner(stencil, buffer, address, owner, current as usize)
}

/// Where the memory at `address` is, relative to the current context's GPU; `None` if the driver
/// does not say which GPU it is on.
fn placement(address: u64) -> Result<Option<Placement>, Error> {
    let Some(value) = pointer_attribute(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address) else {
        return Ok(None);
    };
    // A device ordinal is a C `int`: the low 32 bits of the zero-extended value. The driver
    // names devices by `CUdevice` handles, which `cuDeviceGet` gives for an ordinal.
    let ordinal = value as u32 as c_int;
    let mut device: CuDevice = 0;
    // SAFETY: valid out-pointer; plain query.
    if unsafe { driver::cuDeviceGet(&mut device, ordinal) } != CUDA_SUCCESS {
        return Ok(None);
    }
    let mut current: CuDevice = 0;
    // SAFETY: valid out-pointer; the caller made sure a context is current.
    check(unsafe { driver::cuCtxGetDevice(&mut current) }, || "cuCtxGetDevice for the current context")?;
    if device == current {
        return Ok(Some(Placement::SameDevice));
    }
    let mut can_access: c_int = 0;
    // SAFETY: valid out-pointer; plain query about two device ordinals.
    let code = unsafe { driver::cuDeviceCanAccessPeer(&mut can_access, current, device) };
    Ok((code == CUDA_SUCCESS).then_some(if can_access != 0 { Placement::PeerCapable } else { Placement::NoPeerAccess }))
}

/// One `cuPointerGetAttribute` of the memory at `address`, zero-extended to 64 bits, or `None` if
/// the driver does not answer. The attributes asked here are a pointer (8 bytes), an `unsigned
/// int` or `int` (4), and a boolean the headers type inconsistently (1 or 4 bytes): the driver
/// writes them at the start of a zeroed 8-byte slot, so the value is exact for the 8-byte ones
/// and, on the little-endian targets CUDA supports, for the smaller ones too; a boolean is
/// non-zero exactly when it is true either way.
fn pointer_attribute(attribute: c_int, address: u64) -> Option<u64> {
    let mut value: u64 = 0;
    // SAFETY: the out-pointer points at 8 writable, 8-byte-aligned bytes, as many as the largest
    // attribute asked for (a pointer); the driver only reads `address`, never dereferences it.
    let code: CuResult =
        unsafe { driver::cuPointerGetAttribute(ptr::addr_of_mut!(value).cast::<c_void>(), attribute, address) };
    // CUDA_ERROR_INVALID_VALUE (memory the driver did not allocate or register) and any other
    // failure only mean the driver cannot say; the launch itself reports a real problem.
    (code == CUDA_SUCCESS).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_cover_the_elements() {
        assert_eq!(byte_range(0x1000, 10, 4), (0x1000, 0x1028));
        assert_eq!(byte_range(0x1000, 0, 8), (0x1000, 0x1000));
        assert_eq!(byte_range(u64::MAX - 3, 2, 4), (u64::MAX - 3, u64::MAX));
    }

    #[test]
    fn overlap_counts_shared_bytes_only() {
        let input = (0x1000, 0x1100);
        assert_eq!(overlap_bytes(input, (0x1080, 0x1180)), 0x80);
        assert_eq!(overlap_bytes((0x1080, 0x1180), input), 0x80);
        assert_eq!(overlap_bytes(input, input), 0x100);
        // One inside the other.
        assert_eq!(overlap_bytes(input, (0x1010, 0x1020)), 0x10);
        // Touching is not overlapping, in either order.
        assert_eq!(overlap_bytes(input, (0x1100, 0x1200)), 0);
        assert_eq!(overlap_bytes((0x0f00, 0x1000), input), 0);
        // Apart.
        assert_eq!(overlap_bytes(input, (0x2000, 0x2100)), 0);
        // An empty range overlaps nothing, even inside another.
        assert_eq!(overlap_bytes(input, (0x1050, 0x1050)), 0);
    }

    #[test]
    fn overlapping_buffers_are_refused_with_both_ranges() {
        assert!(check_disjoint("s", "input", "output", (0x1000, 0x1100), (0x1100, 0x11f8)).is_ok());
        assert!(check_disjoint("s", "input", "output", (0x1100, 0x11f8), (0x1000, 0x1100)).is_ok());
        let err =
            check_disjoint("s", "input", "output", (0x1000, 0x1100), (0x10fc, 0x11f4)).expect_err("4 bytes shared");
        assert!(
            matches!(err, Error::Aliasing { stencil: "s", ref buffer, input: (0x1000, 0x1100), output: (0x10fc, 0x11f4), .. } if buffer == "input"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "stencil `s`: the output buffer (device bytes 0x10fc..0x11f4) overlaps the input buffer (device bytes \
             0x1000..0x1100) in 4 bytes; expected disjoint buffers: a stencil cannot run in place, since its \
             threads read input elements that other threads' outputs overwrite"
        );
        // In place: the same range.
        assert!(check_disjoint("s", "input", "output", (0x1000, 0x1100), (0x1000, 0x1100)).is_err());
        // Of several inputs, the one overlapped is named; of several outputs, the one writing.
        let err =
            check_disjoint("s", "input 1", "output 1", (0x1000, 0x1100), (0x10fc, 0x11f4)).expect_err("4 bytes shared");
        assert!(
            err.to_string().contains("the output 1 buffer (device bytes 0x10fc..0x11f4) overlaps the input 1 buffer"),
            "{err}"
        );
    }

    #[test]
    fn overlapping_outputs_are_refused_naming_both() {
        assert!(check_outputs_disjoint("s", "output 0", "output 1", (0x1000, 0x1100), (0x1100, 0x1200)).is_ok());
        let err = check_outputs_disjoint("s", "output 0", "output 1", (0x1000, 0x1100), (0x1080, 0x1180))
            .expect_err("128 bytes shared");
        assert_eq!(
            err.to_string(),
            "stencil `s`: the output 0 buffer (device bytes 0x1000..0x1100) overlaps the output 1 buffer (device \
             bytes 0x1080..0x1180) in 128 bytes; expected disjoint output buffers: each output field's elements are \
             written by the kernel's threads, in no defined order between fields"
        );
    }

    const CURRENT: usize = 0xc0;
    const OTHER: usize = 0xd0;

    /// Device memory of another context, everything known.
    fn foreign(placement: Placement) -> Owner {
        Owner {
            context: Some(OTHER),
            managed: Some(false),
            memory_type: Some(CU_MEMORYTYPE_DEVICE),
            placement: Some(placement),
        }
    }

    #[test]
    fn device_memory_another_context_cannot_share_is_refused() {
        for placement in [Placement::SameDevice, Placement::NoPeerAccess] {
            let err = check_owner("s", "input", 0x7000_0000, foreign(placement), CURRENT).expect_err("unreachable");
            assert!(
                matches!(
                    err,
                    Error::ForeignBuffer { stencil: "s", ref buffer, address: 0x7000_0000, owner: OTHER, current: CURRENT }
                        if buffer == "input"
                ),
                "{err:?}"
            );
        }
        let err =
            check_owner("s", "output", 0x7000_0000, foreign(Placement::SameDevice), CURRENT).expect_err("unreachable");
        assert_eq!(
            err.to_string(),
            "stencil `s`: the output buffer (device address 0x70000000) was allocated in CUDA context 0xd0, but the \
             launch runs in context 0xc0; expected a buffer the launch's context can reach (allocated in it, \
             managed, pinned host memory, or on a peer GPU): allocate it while the launch's context is current"
        );
    }

    #[test]
    fn memory_the_launch_may_reach_is_launched() {
        let ok = |owner: Owner| check_owner("s", "input", 0x7000_0000, owner, CURRENT).is_ok();
        // The launch's own context, and memory the driver ties to no context or does not know.
        assert!(ok(Owner { context: Some(CURRENT), ..foreign(Placement::SameDevice) }));
        assert!(ok(Owner::default()));
        // Managed memory and pinned host memory of another context.
        assert!(ok(Owner { managed: Some(true), ..foreign(Placement::SameDevice) }));
        assert!(ok(Owner { memory_type: Some(1), ..foreign(Placement::SameDevice) }));
        // Another GPU's memory, when peer access may be enabled.
        assert!(ok(foreign(Placement::PeerCapable)));
    }

    #[test]
    fn anything_the_driver_does_not_answer_counts_for_the_buffer() {
        let ok = |owner: Owner| check_owner("s", "input", 0x7000_0000, owner, CURRENT).is_ok();
        assert!(ok(Owner { managed: None, ..foreign(Placement::SameDevice) }));
        assert!(ok(Owner { memory_type: None, ..foreign(Placement::SameDevice) }));
        assert!(ok(Owner { placement: None, ..foreign(Placement::SameDevice) }));
    }
}
