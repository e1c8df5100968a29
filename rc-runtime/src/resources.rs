//! What the driver's compiler gave a stencil's kernel on the GPU at hand: registers, spills,
//! shared memory, and how many blocks fit on a multiprocessor; as figures, as a one-line report
//! (`Display`), and as a warning when the kernel spills.
//!
//! The kernel is looked up through the same per-context cache as `launch`, so these are
//! the figures of the very function that is launched, compiled by the same driver for the same
//! GPU (the PTX is portable; the machine code and its register count are not). That is why the
//! spill warning comes from here and not from the compile-time estimate or CI's ptxas run: only
//! the driver of the GPU at hand knows whether this GPU's code spills.

use std::fmt;
use std::os::raw::c_int;

use rc_core::registers::MAX_REGISTERS_PER_THREAD;
use rc_core::{Element, Params, Stencil};

use crate::context;
use crate::device::{attribute_of, Attribute};
use crate::driver::{self, CuDevice, CuFunction, CuResult};
use crate::error::{check, Error};
use crate::module;

/// `CUfunction_attribute` values (an `int`-sized C enum), from `cuda.h`.
const CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: c_int = 0;
const CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: c_int = 1;
const CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: c_int = 3;
const CU_FUNC_ATTRIBUTE_NUM_REGS: c_int = 4;
const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

/// `CUDA_ERROR_INVALID_CONTEXT`.
const INVALID_CONTEXT: CuResult = 201;

/// One `cuFuncGetAttribute` of `function`, which must stay loaded for the call.
pub(crate) fn function_attribute(
    function: CuFunction,
    attribute: c_int,
    name: &str,
    stencil: &str,
) -> Result<u32, Error> {
    let mut value: c_int = 0;
    // SAFETY: valid out-pointer; the caller keeps `function` loaded.
    let code = unsafe { driver::cuFuncGetAttribute(&mut value, attribute, function) };
    check(code, || format!("cuFuncGetAttribute({name}) for stencil `{stencil}`"))?;
    Ok(value.max(0) as u32)
}

/// Lets a loaded kernel be launched with `bytes` of dynamic shared memory per block (the
/// driver allows 48 KiB unless asked for more); nothing to do for 0.
pub(crate) fn allow_dynamic_shared_bytes(function: CuFunction, bytes: u32, stencil: &str) -> Result<(), Error> {
    if bytes == 0 {
        return Ok(());
    }
    let attribute = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    // SAFETY: the caller keeps `function` loaded.
    let code = unsafe { driver::cuFuncSetAttribute(function, attribute, bytes as c_int) };
    check(code, || {
        format!(
            "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, {bytes}) for stencil `{stencil}` (its ring \
             of staged planes needs {bytes} bytes of shared memory per block; this GPU may allow less)"
        )
    })
}

/// The most threads per block a loaded kernel can run.
pub(crate) fn max_threads_per_block(function: CuFunction, stencil: &str) -> Result<u32, Error> {
    function_attribute(
        function,
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
        stencil,
    )
}

/// A kernel's resources as compiled for the current GPU. `Display` gives a one-line report,
/// followed by a second line with the [`SpillWarning`] when the kernel spills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    /// The stencil's name.
    pub stencil: &'static str,
    /// 32-bit registers per thread.
    pub registers_per_thread: u32,
    /// Local memory per thread in bytes: register spills, and arrays the compiler could not keep
    /// in registers. Anything above 0 in a register-cache kernel means the cache left registers.
    pub local_bytes_per_thread: u32,
    /// Statically allocated shared memory per block, in bytes.
    pub static_shared_bytes_per_block: u32,
    /// Dynamic shared memory each block is launched with, in bytes (a ring of staged planes
    /// past 48 KiB; else 0).
    pub dynamic_shared_bytes_per_block: u32,
    /// The most threads a block of this kernel may have (below the device's limit when the
    /// kernel needs many registers).
    pub max_threads_per_block: u32,
    /// Threads per block that `launch` uses.
    pub threads_per_block: u32,
    /// Blocks of `threads_per_block` threads resident on one multiprocessor at once.
    pub blocks_per_multiprocessor: u32,
    /// The most threads one multiprocessor holds.
    pub max_threads_per_multiprocessor: u32,
}

impl Resources {
    /// Resident threads over the most a multiprocessor holds, from 0 to 1.
    pub fn occupancy(&self) -> f64 {
        if self.max_threads_per_multiprocessor == 0 {
            return 0.0;
        }
        f64::from(self.blocks_per_multiprocessor * self.threads_per_block)
            / f64::from(self.max_threads_per_multiprocessor)
    }

    /// A warning if the kernel keeps anything in local memory: in a register-cache kernel that
    /// means the cache, or the values computed from it, did not fit in registers, and every
    /// access to them goes to memory instead.
    pub fn spill_warning(&self) -> Option<SpillWarning> {
        (self.local_bytes_per_thread > 0).then_some(SpillWarning {
            stencil: self.stencil,
            local_bytes_per_thread: self.local_bytes_per_thread,
            registers_per_thread: self.registers_per_thread,
        })
    }
}

impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stencil `{}` on this GPU: {} registers per thread, {} bytes of local memory per thread, {} bytes of \
             shared memory per block, {} threads per block (the kernel allows up to {}), {} blocks per \
             multiprocessor, occupancy {:.0}%",
            self.stencil,
            self.registers_per_thread,
            self.local_bytes_per_thread,
            self.static_shared_bytes_per_block + self.dynamic_shared_bytes_per_block,
            self.threads_per_block,
            self.max_threads_per_block,
            self.blocks_per_multiprocessor,
            self.occupancy() * 100.0
        )?;
        if let Some(warning) = self.spill_warning() {
            write!(f, "\n{warning}")?;
        }
        Ok(())
    }
}

/// A kernel that spills to local memory on the current GPU (see [`Resources::spill_warning`]).
/// `Display` says what to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpillWarning {
    pub stencil: &'static str,
    pub local_bytes_per_thread: u32,
    pub registers_per_thread: u32,
}

impl fmt::Display for SpillWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "warning: stencil `{}` spills {} bytes per thread to local memory ",
            self.stencil, self.local_bytes_per_thread
        )?;
        // With every register a thread can have, only a smaller cache helps; with fewer, launch
        // bounds may be what caps them (.maxntid and .minnctapersm make ptxas fit that many
        // threads in the register file).
        if self.registers_per_thread >= MAX_REGISTERS_PER_THREAD {
            write!(
                f,
                "although it has all {MAX_REGISTERS_PER_THREAD} registers a thread can have (its register cache and \
                 live values do not fit): lower outputs_per_thread or the radius"
            )
        } else {
            write!(
                f,
                "with {} registers per thread (its register cache and live values do not fit): lower \
                 outputs_per_thread or the radius, or let each thread have more registers with a smaller \
                 max_threads_per_block or min_blocks_per_sm",
                self.registers_per_thread
            )
        }
    }
}

/// How many blocks of `threads_per_block` threads with `dynamic_shared_bytes` each fit on one
/// multiprocessor at once (the driver's occupancy calculator); `function` must stay loaded in
/// the current context for the call.
fn blocks_per_multiprocessor(
    function: CuFunction,
    threads_per_block: u32,
    dynamic_shared_bytes: u32,
    stencil: &str,
) -> Result<u32, Error> {
    let mut blocks: c_int = 0;
    // SAFETY: valid out-pointer; the caller keeps `function` loaded in the current context.
    let code = unsafe {
        driver::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            function,
            threads_per_block as c_int,
            dynamic_shared_bytes as usize,
        )
    };
    check(code, || {
        format!("cuOccupancyMaxActiveBlocksPerMultiprocessor for stencil `{stencil}` ({threads_per_block} threads)")
    })?;
    Ok(blocks.max(0) as u32)
}

/// One attribute of the current context's device.
fn current_device_attribute(attribute: Attribute) -> Result<u32, Error> {
    let mut device: CuDevice = 0;
    // SAFETY: valid out-pointer; a context is current.
    check(unsafe { driver::cuCtxGetDevice(&mut device) }, || "cuCtxGetDevice for the current context")?;
    attribute_of(device, attribute)
        .map_err(|code| Error::driver(format!("cuDeviceGetAttribute({attribute:?}) for device {device}"), code))
}

/// The blocks of a kernel resident on the current context's GPU at once: its multiprocessors
/// times the blocks that fit on each ([`rc_core::prefetch::rows_ahead`] reads it).
pub(crate) fn resident_blocks(
    function: CuFunction,
    threads_per_block: u32,
    dynamic_shared_bytes: u32,
    stencil: &str,
) -> Result<u64, Error> {
    let per_sm = blocks_per_multiprocessor(function, threads_per_block, dynamic_shared_bytes, stencil)?;
    let sms = current_device_attribute(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    Ok(u64::from(per_sm) * u64::from(sms))
}

/// The resources of `stencil`'s kernel on the current context's GPU, loading the kernel (as a
/// launch would) if this context has not loaded it yet.
///
/// Uses the context current on this thread if there is one, else device 0's primary context,
/// like `run`. The context must be a primary context ([`Error::NotPrimaryContext`]).
pub fn resources<T: Element, P: Params>(stencil: &Stencil<T, P>) -> Result<Resources, Error> {
    context::ensure_current()?;
    let Some(context) = context::current()? else {
        return Err(Error::driver("cuCtxGetCurrent after making a context current", INVALID_CONTEXT));
    };
    let kernel = module::kernel(context, stencil.name(), stencil.ptx(), stencil.entry())?;
    let function = kernel.function();
    let attribute = |attribute: c_int, name: &str| function_attribute(function, attribute, name, stencil.name());
    let registers_per_thread = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, "CU_FUNC_ATTRIBUTE_NUM_REGS")?;
    let local_bytes_per_thread = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES")?;
    let static_shared_bytes_per_block =
        attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES")?;
    let max_threads_per_block =
        attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")?;

    let threads_per_block = stencil.pattern().threads_per_block();
    let dynamic_shared_bytes_per_block = stencil.dynamic_shared_bytes();
    allow_dynamic_shared_bytes(function, dynamic_shared_bytes_per_block, stencil.name())?;
    let blocks =
        blocks_per_multiprocessor(function, threads_per_block, dynamic_shared_bytes_per_block, stencil.name())?;
    let max_threads = current_device_attribute(Attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;

    Ok(Resources {
        stencil: stencil.name(),
        registers_per_thread,
        local_bytes_per_thread,
        static_shared_bytes_per_block,
        dynamic_shared_bytes_per_block,
        max_threads_per_block,
        threads_per_block,
        blocks_per_multiprocessor: blocks,
        max_threads_per_multiprocessor: max_threads,
    })
}

#[cfg(test)]
mod tests {
    use rc_core::body::{Body, Node};
    use rc_core::{BodyError, Boundary, Layout, Pattern, ScalarType, Strategy, Window};

    use super::*;

    fn body() -> Result<Body, BodyError> {
        Body::new(ScalarType::F32, 1, vec![], 1, vec![Node::Tap(0, rc_core::Offset::x(0))], vec![0])
    }
    fn reference(w: &[Window<'_, f32>], _: (), out: &mut [f32]) {
        // One output field.
        out[0] = w[0][0];
    }
    const COPY: Stencil<f32, ()> = Stencil::from_parts(
        "c",
        Pattern::new_unchecked(1, 32, 1, Boundary::Valid),
        Strategy::RegisterCache,
        Layout::RoundRobin,
        "",
        "e",
        1,
        1,
        body,
        reference,
    );

    #[test]
    fn without_a_gpu_resources_say_there_is_no_device() {
        if crate::gpu().is_ok() {
            eprintln!("skipping without_a_gpu_resources_say_there_is_no_device: there is a GPU");
            return;
        }
        let err = resources(&COPY).expect_err("no GPU");
        assert!(err.is_no_device(), "{err}");
    }

    /// A kernel that fits: 64 registers, no local memory, 4 blocks of 256 threads of 2048.
    const FITS: Resources = Resources {
        stencil: "box7",
        registers_per_thread: 64,
        local_bytes_per_thread: 0,
        static_shared_bytes_per_block: 0,
        dynamic_shared_bytes_per_block: 0,
        max_threads_per_block: 1024,
        threads_per_block: 256,
        blocks_per_multiprocessor: 4,
        max_threads_per_multiprocessor: 2048,
    };

    #[test]
    fn occupancy_is_resident_threads_over_the_multiprocessors_limit() {
        assert_eq!(FITS.occupancy(), 0.5);
        assert_eq!(Resources { max_threads_per_multiprocessor: 0, ..FITS }.occupancy(), 0.0);
    }

    #[test]
    fn a_kernel_without_local_memory_gets_a_one_line_report_and_no_warning() {
        assert_eq!(FITS.spill_warning(), None);
        assert_eq!(
            FITS.to_string(),
            "stencil `box7` on this GPU: 64 registers per thread, 0 bytes of local memory per thread, 0 bytes of \
             shared memory per block, 256 threads per block (the kernel allows up to 1024), 4 blocks per \
             multiprocessor, occupancy 50%"
        );
        let shared = Resources { static_shared_bytes_per_block: 4352, blocks_per_multiprocessor: 8, ..FITS };
        assert!(shared.to_string().contains(" 4352 bytes of shared memory per block, "), "{shared}");
        assert!(shared.to_string().ends_with(" 8 blocks per multiprocessor, occupancy 100%"), "{shared}");
    }

    #[test]
    fn a_kernel_that_spills_is_reported_with_a_warning_line() {
        // Every register a thread can have, and still spilling: only a smaller cache helps.
        let full = Resources { registers_per_thread: 255, local_bytes_per_thread: 48, ..FITS };
        let warning = full.spill_warning().expect("48 bytes of local memory");
        assert_eq!(warning, SpillWarning { stencil: "box7", local_bytes_per_thread: 48, registers_per_thread: 255 });
        assert_eq!(
            warning.to_string(),
            "warning: stencil `box7` spills 48 bytes per thread to local memory although it has all 255 \
             registers a thread can have (its register cache and live values do not fit): lower \
             outputs_per_thread or the radius"
        );
        let report = full.to_string();
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 2, "{report}");
        assert!(lines[0].starts_with("stencil `box7` on this GPU: 255 registers per thread, 48 bytes of local memory"));
        assert_eq!(lines[1], warning.to_string());

        // Fewer registers than a thread can have: launch bounds may be what caps them.
        let capped = Resources { registers_per_thread: 64, local_bytes_per_thread: 8, ..FITS };
        assert_eq!(
            capped.spill_warning().map(|w| w.to_string()).as_deref(),
            Some(
                "warning: stencil `box7` spills 8 bytes per thread to local memory with 64 registers per thread \
                 (its register cache and live values do not fit): lower outputs_per_thread or the radius, or let \
                 each thread have more registers with a smaller max_threads_per_block or min_blocks_per_sm"
            )
        );
    }
}
