//! The register-cache stencil compiler shared by `rc-macros` (which prints PTX at compile time)
//! and `rc-runtime` (which launches it). No syn and no CUDA in here.
//!
//! The path from a stencil to a kernel, one file each:
//! [`pattern`] (what the user declared) → [`body`] (one point's computation, a result per
//! output field) →
//! [`distribution`] (where the cache keeps each element) → [`schedule`] (fetches, phases,
//! publish/read, conflict proof) → [`program`] (the warp program: what each lane computes) →
//! [`machine`] (the machine program: how it runs, every vector access, path, stage and division
//! run decided) with its [`launch_map`] (which block runs which tile, as an index program, over
//! every row or a sub-grid of rows: [`OutputRows`]) →
//! `emulate` on the CPU and [`ptx`] for the GPU, which both only follow them;
//! [`registers`] and [`auto`] count it, [`explain`] shows it to people. [`pairs`] puts two 16-bit
//! elements in each 32-bit cache register and shuffle. [`plan`] takes a stencil's attribute from
//! what it declares to the kernels it compiles to (the macro only reads syntax into it and puts
//! its refusals on tokens); [`validate`] checks each declared value and [`error`] phrases every
//! refusal. Offsets, radii and extents come from [`geometry`], boundary rules from [`boundary`],
//! distributions' names from [`layout`], operations from [`operation`], element types from the
//! table in [`scalar`]. [`driver`] runs these steps as named passes, the same list for every
//! kernel of a route (one step, or fused steps), and checks each pass's result in tests and
//! debug builds. [`decomposition`] splits a grid into bands for several GPUs (each launch of a
//! band computing only the rows still exact), and [`split_steps`] runs time steps over the bands
//! on the CPU, halos exchanged as the GPUs do.

pub mod abi;
pub mod auto;
pub mod body;
pub mod boundary;
pub mod decomposition;
pub mod distribution;
pub mod driver;
mod emulate;
pub mod error;
pub mod explain;
pub mod fused_grid;
pub mod fused_grid3;
pub mod geometry;
pub mod half_float;
pub mod launch_map;
pub mod layout;
pub mod machine;
pub mod math;
pub mod operation;
pub mod ops;
pub mod order;
pub mod pairs;
pub mod pattern;
pub mod pipeline;
pub mod plan;
pub mod prefetch;
pub mod program;
pub mod ptx;
pub mod reciprocal;
pub mod registers;
mod remainder;
pub mod ring;
pub mod scalar;
pub mod schedule;
pub mod split_steps;
pub mod stage;
pub mod stencil;
pub mod strategy;
mod terms;
pub mod testdata;
pub mod time_steps;
pub mod typing;
pub mod validate;
pub mod window;
pub mod zero_start;

pub use body::{BinaryOp, Body, CompareOp, Node, NodeId, UnaryOp};
pub use boundary::Boundary;
pub use decomposition::{Band, Decomposition, HaloCopy, EXCHANGE_COST};
pub use distribution::{Distribution, Granule, LaneWindow, RoundRobin, Stage, StagedWindow};
pub use error::{
    Argument, BodyError, DecompositionError, DistributionError, EmulationError, Error, Given, LengthError,
    PatternError, PlanError, Refusal, ScheduleError, SignatureError,
};
pub use explain::Explanation;
pub use geometry::{Dims, Extent, Offset, Radius};
pub use launch_map::OutputRows;
pub use layout::Layout;
pub use pattern::{LaunchShape, Pattern};
pub use plan::{Arg, Attribute, Declaration, DistributionArg, Plan};
pub use program::{Instr, WarpProgram};
pub use registers::RegisterEstimate;
pub use scalar::{Element, HalfFormat, Param, Params, Scalar, ScalarType};
pub use schedule::{Phase, Schedule};
pub use stencil::{FusedKernel, Stencil};
pub use strategy::Strategy;
pub use window::{Window, Window2, Window3};
