//! Loading a stencil's PTX into a context, once per (context, PTX, entry), with the JIT log on
//! failure.
//!
//! # Why raw driver calls
//! cust 0.3.2's `Module::from_ptx` panics on a NUL byte and reports a rejected PTX as a bare
//! `InvalidPtx`; `cuModuleLoadDataEx` with an error log buffer gives the JIT compiler's message.
//! No `CU_JIT_TARGET` is passed, so the driver compiles for the current context's GPU (cust's
//! `JitTarget` stops at compute 8.6). cust has no way to adopt a raw `CUmodule` or to make a
//! `Function` from one, so this file owns its modules ([`Kernel`]) and launches them through
//! `cuLaunchKernel` itself.
//!
//! # Why the cache is sound
//! The cache is keyed by the raw context handle. A handle is only a pointer: once a context is
//! destroyed, a new one may get the same address, and the modules cached for the old one would be
//! dangling. So every cached kernel holds a reference to its context ([`PrimaryContext`]), which
//! keeps the context alive as long as the kernel is cached: a handle in the cache always names the
//! live context its modules were loaded into. Only primary contexts can be referenced that way, so
//! launches in other contexts are refused ([`Error::NotPrimaryContext`]). [`release_cached_modules`]
//! gives the references back. (cust's `unsafe` `Context::reset` destroys a primary context even
//! so; its safety contract already forbids using the context anywhere else.)
//!
//! Kernels are used only while their context is current on the launching thread (the cache is
//! looked up with the current context), on any thread: driver handles are not tied to threads and
//! the driver API is thread-safe. Hence the `Send`/`Sync` impls below.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::raw::{c_int, c_uint, c_void};
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rc_core::{Dims, ScalarType};

use crate::abi::{self, PtxParam};
use crate::context::PrimaryContext;
use crate::driver::{self, CuContext, CuFunction, CuModule, CUDA_SUCCESS};
use crate::error::{DriverError, Error, ModuleLoadError};

/// A stencil's kernel, loaded into a context: the module (unloaded on drop), its entry function,
/// and the parameter list the entry declares.
#[derive(Debug)]
pub(crate) struct Kernel {
    module: CuModule,
    function: CuFunction,
    params: Vec<PtxParam>,
    /// Blocks of this kernel resident on the GPU at once, once a launch has asked
    /// ([`Kernel::resident_blocks`]).
    resident: OnceLock<u64>,
    // Declared last so it is dropped last: the module is unloaded while its context lives.
    context: Arc<PrimaryContext>,
}

// SAFETY: see the module documentation; the handles name driver objects, not thread state.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    pub(crate) fn function(&self) -> CuFunction {
        self.function
    }

    /// Blocks of `threads_per_block` threads with `dynamic_shared_bytes` each that the GPU
    /// holds at once ([`crate::resources::resident_blocks`]), asked of the driver at the first
    /// call: a kernel is always launched with its pattern's block.
    pub(crate) fn resident_blocks(
        &self,
        threads_per_block: u32,
        dynamic_shared_bytes: u32,
        stencil: &str,
    ) -> Result<u64, Error> {
        if let Some(&blocks) = self.resident.get() {
            return Ok(blocks);
        }
        let blocks =
            crate::resources::resident_blocks(self.function, threads_per_block, dynamic_shared_bytes, stencil)?;
        Ok(*self.resident.get_or_init(|| blocks))
    }

    /// Whether the entry takes the arguments of a `dims`-dimensional stencil with `fields` input
    /// fields, `outputs` output fields and parameters of types `scalars` ([`Error::KernelAbi`]
    /// if not).
    // One argument per part of the signature, besides the names for the message.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_abi(
        &self,
        stencil: &'static str,
        entry: &'static str,
        dims: Dims,
        fields: u32,
        outputs: u32,
        scalars: &[ScalarType],
    ) -> Result<(), Error> {
        abi::check(stencil, entry, &self.params, dims, fields, outputs, scalars)
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // Unloading needs the module's context current, and must not pull the code from under a
        // kernel still running, so wait for the context's work first. Errors cannot be acted on
        // here. This runs only from `release_cached_modules`, never on a launch path.
        self.context.with_current(|| {
            // SAFETY: the module was loaded into this context, which is alive (we hold it), and
            // is unloaded exactly once.
            unsafe {
                driver::cuCtxSynchronize();
                driver::cuModuleUnload(self.module);
            }
        });
    }
}

/// A kernel's identity: the PTX text (a `&'static str`, so its address and length identify it
/// for the life of the process) and the entry name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct KernelKey {
    ptx_addr: usize,
    ptx_len: usize,
    entry: &'static str,
}

/// What the cache keeps per context.
struct ContextEntry {
    context: Arc<PrimaryContext>,
    kernels: BTreeMap<KernelKey, Arc<Kernel>>,
}

/// Context handle → its kernels. A `BTreeMap` because it can be built in a `static`.
static CACHE: Mutex<BTreeMap<usize, ContextEntry>> = Mutex::new(BTreeMap::new());

fn cache() -> MutexGuard<'static, BTreeMap<usize, ContextEntry>> {
    // Entries are inserted whole, so a panic elsewhere cannot leave one half-built.
    CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The kernel `entry` of `ptx` in `context` (which must be current on this thread), loading it
/// on first use. The lock is held while loading, so each kernel is compiled once per context;
/// other threads' launches wait for that first load only.
pub(crate) fn kernel(
    context: CuContext,
    stencil: &'static str,
    ptx: &'static str,
    entry: &'static str,
) -> Result<Arc<Kernel>, Error> {
    let key = KernelKey { ptx_addr: ptx.as_ptr() as usize, ptx_len: ptx.len(), entry };
    let mut cache = cache();
    let slot = match cache.entry(context as usize) {
        std::collections::btree_map::Entry::Occupied(slot) => slot.into_mut(),
        std::collections::btree_map::Entry::Vacant(slot) => slot.insert(ContextEntry {
            context: Arc::new(PrimaryContext::retain_current(context)?),
            kernels: BTreeMap::new(),
        }),
    };
    if let Some(kernel) = slot.kernels.get(&key) {
        return Ok(Arc::clone(kernel));
    }
    let kernel = Arc::new(load(&slot.context, stencil, ptx, entry)?);
    slot.kernels.insert(key, Arc::clone(&kernel));
    Ok(kernel)
}

/// Unloads every cached kernel and gives back the references to primary contexts that the cache
/// holds, so that those contexts can be destroyed when their users drop them. The next launch in
/// a context loads its kernel again. Waits for each context's outstanding work before unloading.
pub fn release_cached_modules() {
    let released = std::mem::take(&mut *cache());
    drop(released); // outside the lock: unloading synchronises with the GPU
}

/// How many kernels are cached, over all contexts (for tests and diagnostics).
#[doc(hidden)]
pub fn cached_kernel_count() -> usize {
    cache().values().map(|entry| entry.kernels.len()).sum()
}

/// Bytes for the JIT compiler's error log. Messages are a few lines per error.
const LOG_BYTES: usize = 64 * 1024;

/// The PTX as the C string the driver takes, refusing what ptxas would reject without saying
/// where: a NUL byte (ends the C string early) and any non-ASCII character (ptxas stops at the
/// first, even in a comment, with only a line number).
fn checked_text(stencil: &'static str, ptx: &'static str) -> Result<CString, Error> {
    if let Some((offset, character)) = ptx.char_indices().find(|&(_, c)| !c.is_ascii()) {
        let before = &ptx[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        return Err(Error::NonAsciiPtx { stencil, line, column, character });
    }
    CString::new(ptx).map_err(|e| Error::NulInPtx { stencil, offset: e.nul_position(), len: ptx.len() })
}

/// Loads `ptx` into `context` (current on this thread) and finds `entry` in it.
fn load(
    context: &Arc<PrimaryContext>,
    stencil: &'static str,
    ptx: &'static str,
    entry: &'static str,
) -> Result<Kernel, Error> {
    let text = checked_text(stencil, ptx)?;
    // Checked before loading: a mismatch is a bug in the PTX, not something the GPU can fix.
    let params = abi::entry_params(ptx, entry).map_err(|problem| Error::PtxEntry { stencil, entry, problem })?;
    let name = CString::new(entry).map_err(|_| Error::PtxEntry {
        stencil,
        entry,
        problem: "the entry name contains a NUL byte".into(),
    })?;

    let mut log = vec![0u8; LOG_BYTES];
    let mut options: [c_int; 2] = [driver::CU_JIT_ERROR_LOG_BUFFER, driver::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    // The size option's value is the number itself stored in the pointer-sized slot.
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    let mut module: CuModule = ptr::null_mut();
    // SAFETY: `text` is NUL-terminated; the option arrays have 2 entries each; `log` outlives
    // the call and is LOG_BYTES long, as the size option says.
    let code = unsafe {
        driver::cuModuleLoadDataEx(
            &mut module,
            text.as_ptr().cast(),
            options.len() as c_uint,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if code != CUDA_SUCCESS {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        return Err(Error::ModuleLoad(Box::new(ModuleLoadError {
            stencil,
            entry,
            error: DriverError::new(code),
            log: String::from_utf8_lossy(&log[..end]).into_owned(),
            ptx,
        })));
    }
    let mut function: CuFunction = ptr::null_mut();
    // SAFETY: `module` was just loaded into the current context; `name` is NUL-terminated.
    let code = unsafe { driver::cuModuleGetFunction(&mut function, module, name.as_ptr()) };
    if code != CUDA_SUCCESS {
        // SAFETY: unloads the module loaded above, once; it was never used.
        unsafe { driver::cuModuleUnload(module) };
        return Err(Error::driver(format!("cuModuleGetFunction for entry `{entry}` of stencil `{stencil}`"), code));
    }
    Ok(Kernel { module, function, params, resident: OnceLock::new(), context: Arc::clone(context) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_text_must_be_ascii_without_nul() {
        let err = checked_text("box7", ".version 7.0\n// phase: lane l \u{2014} taps\n").expect_err("em dash");
        assert_eq!(
            err.to_string(),
            "the PTX of stencil `box7` has the non-ASCII character `\u{2014}` (U+2014) at line 2, column 18; \
             expected ASCII only (ptxas rejects anything else, even in comments)"
        );
        let err = checked_text("k", ".version 7.0\0").expect_err("NUL");
        assert_eq!(
            err.to_string(),
            "the PTX of stencil `k` contains a NUL byte at byte 12 of 13; expected PTX text without NUL bytes"
        );
        assert!(checked_text("k", ".version 7.0\n").is_ok());
    }
}
