//! Runs rc's stencils on an NVIDIA GPU through the CUDA driver API, on the caller's streams and
//! buffers of either CUDA crate:
//!
//! - with the `cust` feature, [`launch`] on cust's `Stream` and `DeviceSlice`s (what a Rust-CUDA
//!   host program has), and [`run`] from host slices;
//! - with the `cudarc` feature, [`launch_cudarc`] on a cudarc `CudaStream` and `CudaSlice`s or
//!   views, and [`run_cudarc`] from host slices ([`run`] too, when `cust` is off);
//! - for 2D and 3D stencils, the same over a grid's shape (`[rows, cols]`, `[depth, rows,
//!   cols]`): `launch_grid`, `run_grid` (cust, or cudarc's when cust is off),
//!   `launch_cudarc_grid`, `run_cudarc_grid`. Grids are contiguous and row-major, x fastest, with
//!   rows packed (no pitch). The 1D functions are these over the shape `[input.len()]`;
//! - with the `cudarc` feature, [`SplitGrid`]: a 2D or 3D grid split into bands over every
//!   GPU of the process, halos exchanged on the device, bit for bit one GPU's steps;
//! - with either: [`gpu`] (is there a GPU, and which, or why not, as [`Error::NoDevice`]) and
//!   [`resources`] (what the driver's compiler gave a stencil's kernel on this GPU, printable as a
//!   one-line report with a [`SpillWarning`] when it spills).
//!
//! Both back ends share one launch path: the same checks (shapes and lengths, alignment,
//! overlap, buffers of another context, the kernel's parameter list and block size), the same
//! per-context kernel cache and the same [`Error`]. A stencil's PTX is compiled by the driver for
//! the GPU at hand the first time it is launched in a context, and cached per context after that
//! (`module.rs` explains how the cache stays sound). A PTX the driver rejects comes back as
//! [`Error::ModuleLoad`] with the JIT compiler's log.
//!
//! The driver is loaded at run time (`driver.rs`), so binaries start on machines without one and
//! every call then returns [`Error::NoDevice`]. cust itself links `libcuda`; with the `cust`
//! feature, `rc-cuda-stub` gives it a static `libcuda` that also loads the driver at run time.

// Without `cust` or `cudarc` only the shared checks are compiled, and nothing launches: the
// launch path is unused until a runtime feature adopts it.
#![cfg_attr(not(any(feature = "cust", feature = "cudarc")), allow(dead_code, unused_imports))]

mod abi;
mod buffers;
mod context;
mod device;
mod driver;
mod error;
#[cfg(feature = "cudarc")]
mod halo_copy;
mod launch;
mod module;
mod resources;
mod side_stream;
#[cfg(feature = "cudarc")]
mod split;
mod steps;
#[cfg(feature = "cudarc")]
mod with_cudarc;
#[cfg(feature = "cust")]
mod with_cust;

pub use device::{gpu, GpuInfo};
pub use error::{DriverError, Error, ModuleLoadError};
#[doc(hidden)]
pub use launch::output_fields;
#[doc(hidden)]
pub use module::cached_kernel_count;
pub use module::release_cached_modules;
pub use resources::{resources, Resources, SpillWarning};
#[cfg(feature = "cudarc")]
pub use split::SplitGrid;
pub use steps::Holds;
/// [`run_cudarc`] under the name generated code and examples use, when cust is not enabled.
#[cfg(all(feature = "cudarc", not(feature = "cust")))]
pub use with_cudarc::run_cudarc as run;
/// [`run_cudarc_grid`] under the name generated code and examples use, when cust is not enabled.
#[cfg(all(feature = "cudarc", not(feature = "cust")))]
pub use with_cudarc::run_cudarc_grid as run_grid;
#[cfg(all(feature = "cudarc", not(feature = "cust")))]
pub use with_cudarc::run_steps_cudarc as run_steps;
#[cfg(all(feature = "cudarc", not(feature = "cust")))]
pub use with_cudarc::run_steps_cudarc_grid as run_steps_grid;
#[cfg(feature = "cudarc")]
pub use with_cudarc::{
    launch_cudarc, launch_cudarc_grid, launch_steps_cudarc, launch_steps_cudarc_grid, run_cudarc, run_cudarc_grid,
    run_steps_cudarc, run_steps_cudarc_grid,
};
#[cfg(feature = "cust")]
pub use with_cust::{
    launch, launch_grid, launch_steps, launch_steps_grid, run, run_grid, run_steps, run_steps_grid, DeviceElement,
    OnDevice,
};

/// The cust this crate is built against, for callers that make their own contexts, streams and
/// buffers.
#[cfg(feature = "cust")]
pub use cust;

/// The cudarc this crate is built against, for callers that make their own contexts, streams and
/// buffers.
#[cfg(feature = "cudarc")]
pub use cudarc;

// Links rc-cuda-stub, whose static `libcuda` answers cust's driver calls (see its build script).
#[cfg(feature = "cust")]
use rc_cuda_stub as _;
