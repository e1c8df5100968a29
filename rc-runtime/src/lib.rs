//! Runs rc's stencils on an NVIDIA GPU through the CUDA driver API (cust 0.3.2).
//!
//! - [`gpu`]: is there a GPU, and which (or why not, as [`Error::NoDevice`]).
//! - [`launch`]: a stencil on the caller's stream and device buffers, asynchronously.
//! - [`run`]: host slice in, host vector out.
//! - [`resources`]: what the driver's compiler gave a stencil's kernel on this GPU, printable as
//!   a one-line report with a [`SpillWarning`] when it spills.
//!
//! A stencil's PTX is compiled by the driver for the GPU at hand the first time it is launched in
//! a context, and cached per context after that (`module.rs` explains how the cache stays sound).
//! A PTX the driver rejects comes back as [`Error::ModuleLoad`] with the JIT compiler's log.
//!
//! This crate links `libcuda.so.1`. On machines without an NVIDIA driver, `rc-cuda-stub` provides
//! one whose every call reports "no device", so everything builds, tests start, and [`gpu`] says
//! there is no GPU.

mod abi;
mod buffers;
mod context;
mod device;
mod driver;
mod error;
mod launch;
mod module;
mod resources;

pub use device::{gpu, GpuInfo};
pub use error::{DriverError, Error, ModuleLoadError};
pub use launch::{launch, run};
#[doc(hidden)]
pub use module::cached_kernel_count;
pub use module::release_cached_modules;
pub use resources::{resources, Resources, SpillWarning};

/// The cust this crate is built against, for callers that make their own contexts, streams and
/// buffers.
pub use cust;
