//! # rc: register-cache stencil kernels for Rust
//!
//! ```
//! use rc::prelude::*;
//!
//! #[stencil(radius = 3, warp = 32, outputs_per_thread = 4)]
//! fn box7(w: Window<f32>) -> f32 {
//!     (w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3]) / 7.0
//! }
//!
//! let input: Vec<f32> = (0..1000).map(|i| (i as f32).sin()).collect();
//! let mut reference = vec![0.0; box7::KERNEL.output_len(input.len()).unwrap()];
//! box7::run_cpu(&input, &mut reference).unwrap();
//! let mut emulated = vec![0.0; reference.len()];
//! box7::emulate(&input, &mut emulated).unwrap();
//! assert_eq!(reference, emulated);
//! ```
//!
//! [`#[stencil]`](macro@stencil) keeps the function as it is (it is the CPU reference) and
//! generates beside it a type of the same name holding the kernel handle [`Stencil`]
//! (`box7::KERNEL`), its PTX (`box7::PTX`), `run_cpu`, `emulate` and `explain` for the CPU, and
//! for the GPU, depending on this crate's features:
//!
//! | feature | generated functions | needs |
//! |---|---|---|
//! | `cust` (default) | `launch` on cust's stream and device buffers, `run` (host slices in, a `Vec` out) | building cust: `CUDA_LIBRARY_PATH` naming a folder with a `lib64/` (see the README's "Using rc in your crate") |
//! | `cudarc` | `launch_cudarc` on a cudarc stream and slices or views, and `run` when `cust` is off | Rust 1.88 |
//! | neither (`default-features = false`) | none: the CPU reference, the emulation, `explain`, the PTX and the kernel handle | nothing |
//!
//! With either runtime, binaries start on machines without an NVIDIA driver: the driver is loaded
//! when first used, and `run` then returns an error for which
//! [`is_no_device`](runtime::Error::is_no_device) is true.
//!
//! The [`guide`] has a chapter for each topic: 2D and 3D grids, several input and output fields,
//! fused time steps, the schedule, the limits, performance and safety.

// Generated code names this crate `::rc`, also inside its own tests.
extern crate self as rc;

mod gpu_methods;

pub use rc_core::math;
pub use rc_core::testdata;
pub use rc_core::window::{Window2, Window3};
pub use rc_core::{
    Boundary, DecompositionError, Element, Error, Explanation, Extent, Layout, LengthError, Offset, Param, Params,
    Pattern, Radius, Scalar, ScalarType, Stencil, Strategy, WarpProgram, Window,
};
#[doc(inline)]
pub use rc_macros::stencil;

/// The compiler itself: patterns, distributions, schedules, warp programs.
pub use rc_core as core;
/// Launching on the GPU: `gpu()`, `launch` (cust), `launch_cudarc` (cudarc), `run`, and the CUDA
/// crates themselves.
#[cfg(any(feature = "cust", feature = "cudarc"))]
pub use rc_runtime as runtime;

/// A 2D or 3D grid split along its outermost dimension into bands, one per rank: the
/// decomposition ([`Decomposition`](split::Decomposition)), its time steps on the CPU, each band
/// on its own with halos exchanged as the GPUs exchange them
/// ([`run_split_steps`](split::run_split_steps)), and with the `cudarc` feature
/// [`SplitGrid`](split::SplitGrid), the same over every GPU of the process. The guide's
/// [many GPUs](guide::many_gpus) chapter shows them.
pub mod split {
    pub use rc_core::decomposition::{Band, Decomposition, HaloCopy, EXCHANGE_COST};
    pub use rc_core::split_steps::{run_split_steps, CpuSteps};
    pub use rc_core::DecompositionError;
    #[cfg(feature = "cudarc")]
    pub use rc_runtime::SplitGrid;
}

/// Everything a stencil definition needs.
pub mod prelude {
    pub use crate::{stencil, Boundary, Stencil, Window, Window2, Window3};
}

/// What generated code refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__rc_gpu_methods as gpu_methods;
    pub use crate::__rc_gpu_steps as gpu_steps;
    pub use rc_core::body::{BinaryOp, Body, CompareOp, Node, UnaryOp};
    pub use rc_core::pattern::PatternParts;
    pub use rc_core::{Boundary, Layout, Offset, Pattern, Radius, Scalar, ScalarType, Stencil, Strategy};
}

/// The user guide, one chapter per module; every code block in it is a doctest. The same chapters
/// are Markdown files in `src/guide/`.
pub mod guide {
    #[doc = include_str!("guide/examples.md")]
    pub mod examples {}
    #[doc = include_str!("guide/grids.md")]
    pub mod grids {}
    #[doc = include_str!("guide/fields.md")]
    pub mod fields {}
    #[doc = include_str!("guide/systems.md")]
    pub mod systems {}
    #[doc = include_str!("guide/time_steps.md")]
    pub mod time_steps {}
    #[doc = include_str!("guide/many_gpus.md")]
    pub mod many_gpus {}
    #[doc = include_str!("guide/schedule.md")]
    pub mod schedule {}
    #[doc = include_str!("guide/limits.md")]
    pub mod limits {}
    #[doc = include_str!("guide/performance.md")]
    pub mod performance {}
    #[doc = include_str!("guide/safety.md")]
    pub mod safety {}
}

/// The README's code blocks, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The examples in `#[stencil]`'s documentation, which rc-macros cannot run (it cannot depend on
/// rc).
#[doc = include_str!("../rc-macros/src/stencil.md")]
#[cfg(doctest)]
pub struct StencilAttributeDoctests;
