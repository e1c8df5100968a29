//! CUDA contexts: which one a launch runs in, keeping primary contexts alive, and making one
//! current for `run`.
//!
//! A context is the driver's unit of GPU state; modules (loaded kernels) live in one and die with
//! it. cust 0.3's `Context` (and `quick_init`) and cudarc's `CudaContext::new` are a device's
//! *primary* context, reference counted
//! by the driver: `cuDevicePrimaryCtxRetain` adds a reference, `cuDevicePrimaryCtxRelease` drops
//! one, and the context (with every module in it) is destroyed when the count reaches zero.

use std::ptr;
use std::sync::Mutex;

use crate::driver::{self, CuContext, CuDevice, CuStream, CUDA_SUCCESS};
use crate::error::{check, Error};

/// One reference to a device's primary context, released on drop. While it lives, the context
/// and the modules loaded into it stay valid, whatever the user does with their cust `Context`.
#[derive(Debug)]
pub(crate) struct PrimaryContext {
    context: CuContext,
    device: CuDevice,
}

// SAFETY: a CUcontext handle is not tied to the thread that created it: any thread may make it
// current, and the retain/release/push/pop calls made with it are thread-safe driver calls.
unsafe impl Send for PrimaryContext {}
unsafe impl Sync for PrimaryContext {}

impl PrimaryContext {
    /// A new reference to `context`, which must be current on this thread. Fails with
    /// [`Error::NotPrimaryContext`] for a context made with `cuCtxCreate` (cust's `legacy`
    /// contexts): there is no way to keep those alive.
    pub(crate) fn retain_current(context: CuContext) -> Result<PrimaryContext, Error> {
        let mut device: CuDevice = 0;
        // SAFETY: valid out-pointer; reports the device of the current context.
        check(unsafe { driver::cuCtxGetDevice(&mut device) }, || "cuCtxGetDevice for the current context")?;
        let (mut flags, mut active) = (0, 0);
        // SAFETY: valid out-pointers.
        check(unsafe { driver::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active) }, || {
            format!("cuDevicePrimaryCtxGetState for device {device}")
        })?;
        let not_primary = || Error::NotPrimaryContext { context: context as usize, device };
        if active == 0 {
            // The primary context is not running, so the current one is some other context.
            return Err(not_primary());
        }
        let retained = PrimaryContext::retain(device)?;
        if retained.context != context {
            return Err(not_primary()); // dropping `retained` gives the reference back
        }
        Ok(retained)
    }

    /// A new reference to the primary context of `device` (creating the context if none is
    /// running).
    pub(crate) fn retain(device: CuDevice) -> Result<PrimaryContext, Error> {
        let mut context: CuContext = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { driver::cuDevicePrimaryCtxRetain(&mut context, device) }, || {
            format!("cuDevicePrimaryCtxRetain for device {device}")
        })?;
        Ok(PrimaryContext { context, device })
    }

    pub(crate) fn handle(&self) -> CuContext {
        self.context
    }

    /// Runs `f` with this context current on this thread, restoring the previous one after.
    pub(crate) fn with_current<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: the context is alive (we hold a reference). Push/pop nest on this thread's
        // context stack, so whatever was current before is current again afterwards.
        let pushed = unsafe { driver::cuCtxPushCurrent_v2(self.context) } == CUDA_SUCCESS;
        let result = f();
        if pushed {
            let mut popped: CuContext = ptr::null_mut();
            // SAFETY: pops exactly what was pushed above.
            unsafe { driver::cuCtxPopCurrent_v2(&mut popped) };
        }
        result
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        // SAFETY: gives back the reference taken in `retain`. A failure cannot be acted on here.
        unsafe { driver::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}

/// `cuInit`, mapping failure to [`Error::NoDevice`]: with no driver or no device, this is where
/// it shows.
pub(crate) fn init() -> Result<(), Error> {
    // SAFETY: plain call; repeated calls are cheap no-ops.
    let code = unsafe { driver::cuInit(0) };
    if code != CUDA_SUCCESS {
        let error = crate::error::DriverError::new(code);
        return Err(Error::NoDevice { reason: format!("cuInit failed: {error}") });
    }
    let mut count = 0;
    // SAFETY: valid out-pointer.
    check(unsafe { driver::cuDeviceGetCount(&mut count) }, || "cuDeviceGetCount")?;
    if count <= 0 {
        return Err(Error::NoDevice { reason: "the CUDA driver reports 0 devices".into() });
    }
    Ok(())
}

/// The current context of this thread, if any. CUDA must be initialised.
pub(crate) fn current() -> Result<Option<CuContext>, Error> {
    let mut context: CuContext = ptr::null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { driver::cuCtxGetCurrent(&mut context) }, || "cuCtxGetCurrent")?;
    Ok((!context.is_null()).then_some(context))
}

/// The context a launch on `stream` runs in: the stream's, which must be current on this thread
/// (kernels are looked up and loaded in the current context).
pub(crate) fn for_launch(stream: CuStream) -> Result<CuContext, Error> {
    let mut of_stream: CuContext = ptr::null_mut();
    // SAFETY: `stream` is the caller's live stream (borrowed from its cust or cudarc wrapper);
    // valid out-pointer.
    check(unsafe { driver::cuStreamGetCtx(stream, &mut of_stream) }, || "cuStreamGetCtx for the launch stream")?;
    match current()? {
        None => Err(Error::NoCurrentContext { stream: of_stream as usize }),
        Some(current) if current != of_stream => {
            Err(Error::ContextMismatch { stream: of_stream as usize, current: current as usize })
        }
        Some(current) => Ok(current),
    }
}

/// The primary context [`ensure_current`] made, kept for the life of the process so that later
/// calls (on any thread) reuse it instead of creating and destroying one each time.
static RUN_CONTEXT: Mutex<Option<PrimaryContext>> = Mutex::new(None);

/// Makes sure a context is current on this thread: the current one if there is one, else the
/// primary context of device 0 (like `cust::quick_init`), which then stays current here.
pub(crate) fn ensure_current() -> Result<(), Error> {
    init()?;
    if current()?.is_some() {
        return Ok(());
    }
    // A poisoned lock only means another thread panicked while holding it; the Option inside
    // is always either empty or a fully retained context.
    let mut slot = RUN_CONTEXT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if slot.is_none() {
        let mut device: CuDevice = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { driver::cuDeviceGet(&mut device, 0) }, || "cuDeviceGet for device 0")?;
        *slot = Some(PrimaryContext::retain(device)?);
    }
    if let Some(context) = slot.as_ref() {
        // SAFETY: the context is alive for the rest of the process (held in RUN_CONTEXT).
        check(unsafe { driver::cuCtxSetCurrent(context.handle()) }, || {
            "cuCtxSetCurrent for device 0's primary context"
        })?;
    }
    Ok(())
}
