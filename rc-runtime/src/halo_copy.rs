//! Halo rows copied by a kernel on the receiving GPU that reads the sending GPU's memory
//! through the peer mapping, instead of `cuMemcpyPeerAsync`.
//!
//! # Why a kernel
//! Between two H200s over NVLink, after a ~0.5 ms step on each, one halo each way added 21.5 us
//! to a round through `cuMemcpyPeerAsync` on the receiver's stream and 6.4 us through a kernel
//! reading the peer's memory, with the same event ordering (64 KiB; 1 MiB: 23.6 us against
//! 9.7 us; docs/gpu-runs/exchange_probe.py, docs/gpu-runs/2026-11-28-h200x2-session16.log).
//! A copy engine's peer copy pays a setup the SMs' loads do not.
//!
//! The kernel copies 16-, 4- or 1-byte words, the widest that divides both addresses and the
//! length, in a grid-stride loop.

use std::ffi::{c_void, CStr};
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, CudaStream, DriverError};

use crate::error::Error;

/// The copy kernels' word sizes, widest first, and their entries' names.
const WORDS: [(u64, &CStr); 3] = [(16, c"rc_halo_copy16"), (4, c"rc_halo_copy4"), (1, c"rc_halo_copy1")];

/// Threads per block, and the most blocks one copy launches (a grid-stride loop covers the rest):
/// enough to keep NVLink busy for the few MiB of a halo.
const THREADS: u32 = 256;
const MOST_BLOCKS: u64 = 1024;

/// The PTX of one entry copying `words` words of `size` bytes from `from` to `to`.
fn entry(size: u64, name: &CStr) -> String {
    let name = name.to_string_lossy();
    let (load, store) = match size {
        16 => ("ld.global.v4.u32 {%r4, %r5, %r6, %r7}", "st.global.v4.u32 [%rd9], {%r4, %r5, %r6, %r7}"),
        4 => ("ld.global.u32 %r4", "st.global.u32 [%rd9], %r4"),
        _ => ("ld.global.u8 %r4", "st.global.u8 [%rd9], %r4"),
    };
    let shift = size.trailing_zeros();
    format!(
        r#".visible .entry {name}(.param .u64 from, .param .u64 to, .param .u64 words)
{{
    .reg .pred %p1;
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [from];
    ld.param.u64 %rd2, [to];
    ld.param.u64 %rd3, [words];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    mov.u32 %r1, %nctaid.x;
    mul.wide.u32 %rd6, %r1, %r2;
LOOP:
    setp.ge.u64 %p1, %rd4, %rd3;
    @%p1 bra DONE;
    shl.b64 %rd7, %rd4, {shift};
    add.u64 %rd8, %rd1, %rd7;
    add.u64 %rd9, %rd2, %rd7;
    {load}, [%rd8];
    {store};
    add.u64 %rd4, %rd4, %rd6;
    bra LOOP;
DONE:
    ret;
}}
"#
    )
}

/// The module's PTX: one entry per word size, NUL-terminated as `cuModuleLoadData` reads it.
fn ptx() -> String {
    let mut text = String::from(".version 7.0\n.target sm_50\n.address_size 64\n\n");
    for (size, name) in WORDS {
        text.push_str(&entry(size, name));
    }
    text.push('\0');
    text
}

/// The copy kernels, loaded into one GPU's context; unloaded on drop.
pub(crate) struct HaloCopier {
    device: usize,
    context: Arc<CudaContext>,
    module: sys::CUmodule,
    functions: [sys::CUfunction; 3],
}

// SAFETY: the handles name driver objects, not thread state; every use binds the context first.
unsafe impl Send for HaloCopier {}
unsafe impl Sync for HaloCopier {}

impl HaloCopier {
    /// Loads the copy kernels into `context` (device `device`).
    pub(crate) fn load(context: &Arc<CudaContext>, device: usize) -> Result<HaloCopier, Error> {
        let fail = |what: &'static str| move |e| Error::cudarc(format!("{what} on device {device}"), e);
        context.bind_to_thread().map_err(fail("making the context current for the halo copy kernels"))?;
        let text = ptx();
        // SAFETY: a NUL-terminated PTX image; the context is current.
        let module = unsafe { result::module::load_data(text.as_ptr() as *const c_void) }
            .map_err(fail("loading the halo copy kernels (cuModuleLoadData)"))?;
        let mut functions = [std::ptr::null_mut(); 3];
        for (slot, (_, name)) in functions.iter_mut().zip(WORDS) {
            let name = name.to_owned();
            // SAFETY: `module` was loaded above and is not unloaded until drop.
            *slot = unsafe { result::module::get_function(module, name) }
                .map_err(fail("finding a halo copy kernel (cuModuleGetFunction)"))?;
        }
        Ok(HaloCopier { device, context: Arc::clone(context), module, functions })
    }

    /// The device whose context holds the kernels.
    pub(crate) fn device(&self) -> usize {
        self.device
    }

    /// Queues on `stream` (of this copier's context) a copy of `bytes` bytes from device address
    /// `from` to `to`.
    ///
    /// # Safety
    /// Both ranges lie in live allocations that this GPU can address (its own, or a peer's it
    /// maps, pools included) and stay alive, and unwritten by anything else, until the copy
    /// has run in `stream`'s order.
    pub(crate) unsafe fn copy(&self, stream: &CudaStream, from: u64, to: u64, bytes: usize) -> Result<(), DriverError> {
        let bytes = bytes as u64;
        let (index, size) = WORDS
            .iter()
            .enumerate()
            .map(|(index, &(size, _))| (index, size))
            .find(|&(_, size)| (from | to | bytes) % size == 0)
            .unwrap_or((WORDS.len() - 1, 1));
        let mut words = bytes / size;
        if words == 0 {
            return Ok(());
        }
        let blocks = words.div_ceil(THREADS as u64).min(MOST_BLOCKS) as u32;
        let (mut from, mut to) = (from, to);
        let mut params: [*mut c_void; 3] = [
            &mut from as *mut u64 as *mut c_void,
            &mut to as *mut u64 as *mut c_void,
            &mut words as *mut u64 as *mut c_void,
        ];
        self.context.bind_to_thread()?;
        // SAFETY: the function is this module's; three u64 parameters as the entry declares,
        // alive for the call; the caller vouches for the ranges and the stream's context.
        unsafe {
            result::launch_kernel(
                self.functions[index],
                (blocks, 1, 1),
                (THREADS, 1, 1),
                0,
                stream.cu_stream(),
                &mut params,
            )
        }
    }
}

impl Drop for HaloCopier {
    /// Unloads the module once the context's queued copies are done (a failure cannot be acted
    /// on here).
    fn drop(&mut self) {
        if self.context.bind_to_thread().is_ok() {
            // SAFETY: loaded in `load`, unloaded once; no launch of it can follow.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_declares_its_word() {
        let text = ptx();
        for (size, name) in WORDS {
            let name = name.to_string_lossy();
            assert!(text.contains(&format!(".visible .entry {name}(")), "{name}");
            assert!(text.contains(&format!("shl.b64 %rd7, %rd4, {};", size.trailing_zeros())), "{name}");
        }
        assert_eq!(text.matches(".entry").count(), WORDS.len());
    }
}
