//! A second stream beside the caller's, for a launch of several kernels that may run at once: a
//! split fused launch (rc-core's `Stencil::fused_launch`) writes disjoint outputs from its
//! interior kernel and its edge kernel. On the caller's stream the edge kernel's few strips ran
//! as a tail after the interior's last wave, a third of a launch's time on an H200
//! (bench/results/HISTORY.md: 2026-11-24-h200-split2d); beside it they fill the slots the interior leaves.
//!
//! Each launch forks from the caller's stream and joins back into it, so the side stream's work
//! is ordered after everything queued on the caller's stream before it, and everything queued
//! there after it waits for the side stream: to the caller, one stream.

use std::ptr;

use crate::context;
use crate::driver::{self, CuEvent, CuStream};
use crate::error::{check, Error};

/// The side stream of one run of launches and the two events that order it against the
/// caller's stream. Made in the caller's stream's context; destroyed when dropped (the driver
/// keeps what is still queued until it is done).
pub(crate) struct SideStream {
    stream: CuStream,
    forked: CuEvent,
    joined: CuEvent,
}

impl SideStream {
    /// A side stream for launches on `main`, whose context must be current on this thread (as
    /// every launch requires). It has the context's greatest priority, so that its blocks are
    /// dispatched first when a slot frees: they are few, and the launch ends when they end.
    pub(crate) fn new(main: CuStream) -> Result<SideStream, Error> {
        context::for_launch(main)?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: valid out-pointers; the current context is `main`'s (checked above).
        check(unsafe { driver::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) }, || {
            "cuCtxGetStreamPriorityRange"
        })?;
        let mut side = SideStream { stream: ptr::null_mut(), forked: ptr::null_mut(), joined: ptr::null_mut() };
        // SAFETY: valid out-pointers; a null handle left by a failed call is never destroyed.
        check(
            unsafe { driver::cuStreamCreateWithPriority(&mut side.stream, driver::CU_STREAM_NON_BLOCKING, greatest) },
            || format!("creating a side stream of priority {greatest} (cuStreamCreateWithPriority)"),
        )?;
        for event in [&mut side.forked, &mut side.joined] {
            // SAFETY: as above.
            check(unsafe { driver::cuEventCreate(event, driver::CU_EVENT_DISABLE_TIMING) }, || {
                "creating an event (cuEventCreate)"
            })?;
        }
        Ok(side)
    }

    /// Orders the side stream after the work queued on `main` so far, and returns it.
    pub(crate) fn fork(&self, main: CuStream) -> Result<CuStream, Error> {
        order(self.forked, main, self.stream)?;
        Ok(self.stream)
    }

    /// Orders the work queued on `main` from now on after the work queued on the side stream.
    pub(crate) fn join(&self, main: CuStream) -> Result<(), Error> {
        order(self.joined, self.stream, main)
    }
}

/// Records `event` on `first` and makes `then` wait for it.
fn order(event: CuEvent, first: CuStream, then: CuStream) -> Result<(), Error> {
    // SAFETY: live handles of the current context: `event` and one stream are the side stream's
    // own, the other is the caller's stream it was made for. A wait takes the event's latest
    // record at the time of the call, so one event serves every launch.
    check(unsafe { driver::cuEventRecord(event, first) }, || "recording an event on a stream (cuEventRecord)")?;
    check(unsafe { driver::cuStreamWaitEvent(then, event, 0) }, || {
        "ordering one stream after another (cuStreamWaitEvent)"
    })
}

impl Drop for SideStream {
    fn drop(&mut self) {
        // SAFETY: handles this struct made (null ones are skipped); the driver defers releasing
        // a stream or an event with work still queued until that work is done. Errors here have
        // nowhere to go: the launches' own results were returned already.
        unsafe {
            for event in [self.forked, self.joined] {
                if !event.is_null() {
                    driver::cuEventDestroy_v2(event);
                }
            }
            if !self.stream.is_null() {
                driver::cuStreamDestroy_v2(self.stream);
            }
        }
    }
}
