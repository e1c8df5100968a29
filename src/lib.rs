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
//! let reference = box7::KERNEL.reference_vec(&input, ()).unwrap();
//! let emulated = box7::KERNEL.emulate_vec(&input, ()).unwrap();
//! assert_eq!(reference, emulated);
//! ```
//!
//! `#[stencil]` keeps the function as it is (it is the CPU reference) and generates beside it a
//! type of the same name holding the kernel handle [`Stencil`] (`box7::KERNEL`), its PTX
//! (`box7::PTX`), `launch` (device buffers, on your stream) and `run` (host slices) for the GPU,
//! and `run_cpu`, `emulate` and `explain` for the CPU.

// Generated code names this crate `::rc`, also inside its own tests.
extern crate self as rc;

pub use rc_core::{
    Boundary, Element, Error, Explanation, Extent, LengthError, Offset, Params, Pattern, Radius, Scalar, ScalarType,
    Stencil, Strategy, WarpProgram, Window,
    Layout,
};
pub use rc_core::testdata;
pub use rc_macros::stencil;

/// The compiler itself: patterns, distributions, schedules, warp programs.
pub use rc_core as core;
/// Launching on the GPU through cust: `gpu()`, `launch`, `run`, and cust itself.
pub use rc_runtime as runtime;

/// Everything a stencil definition needs.
pub mod prelude {
    pub use crate::{stencil, Boundary, Stencil, Window};
}

/// What generated code refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use rc_core::body::{BinaryOp, Body, CompareOp, Node, UnaryOp};
    pub use rc_core::{Boundary, Layout, Offset, Pattern, Radius, Scalar, ScalarType, Stencil, Strategy};
}
