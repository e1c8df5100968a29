//! Errors, each saying what was expected and what was got.

use thiserror::Error;

use crate::pattern::Boundary;
use crate::scalar::ScalarType;
use crate::typing::TypeError;

/// An invalid `#[stencil(...)]` pattern.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PatternError {
    #[error("radius must be an integer from 1 to 4096, got {got}")]
    Radius { got: i64 },
    #[error("warp must be a power of two from 2 to 32 (the shuffle segment width), got {got}")]
    Warp { got: i64 },
    #[error("outputs_per_thread must be an integer from 1 to 64, got {got}")]
    OutputsPerThread { got: i64 },
    #[error("max_threads_per_block must be a multiple of 32 from 32 to 1024, got {got}")]
    ThreadsPerBlock { got: i64 },
    #[error("min_blocks_per_sm must be an integer from 1 to 32, got {got}")]
    MinBlocksPerSm { got: i64 },
}

/// Input and output lengths that do not fit the pattern.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum LengthError {
    #[error("input has {got} elements, but boundary `valid` needs at least one whole window of {window} (2 * radius + 1)")]
    InputShorterThanWindow { window: usize, got: usize },
    #[error("output has {got} elements, expected {expected} for an input of {input} elements with boundary `{boundary}`")]
    Output { expected: usize, got: usize, input: usize, boundary: Boundary },
    #[error("{outputs} outputs need {blocks} thread blocks, more than the {max} a 1D grid allows")]
    GridTooLarge { outputs: usize, blocks: u64, max: u64 },
}

/// A stencil body that the compiler cannot lower. The macro reports these on the offending
/// tokens; this type exists for bodies built by hand.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum BodyError {
    #[error("node {node} uses node {operand}, which is not defined before it")]
    ForwardReference { node: usize, operand: usize },
    #[error("node {node}: {error}")]
    Type { node: usize, error: TypeError },
    #[error("node {node}: tap {offset} is outside the radius {radius}")]
    TapOutsideRadius { node: usize, offset: i32, radius: u32 },
    #[error("node {node}: parameter {index} does not exist (the stencil has {count})")]
    NoSuchParam { node: usize, index: u32, count: usize },
    #[error("the body returns {got}, expected the element type {expected}")]
    ResultType { expected: ScalarType, got: ScalarType },
    #[error("the body has no nodes")]
    Empty,
}

/// A schedule the compiler refused to produce.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ScheduleError {
    #[error("register-cache conflict in the fetch for output {output} tap {tap}: lane {owner} would have to publish rc[{first}] and rc[{second}] in one shuffle")]
    Conflict { output: u32, tap: i32, owner: u32, first: u32, second: u32 },
    #[error("the fetch for output {output} tap {tap} reads lanes that are not a rotation of the warp; the PTX back end prints rotations only")]
    NotARotation { output: u32, tap: i32 },
    #[error("distribution granule({granule}) gives each lane whole rows of {granule} consecutive outputs, so outputs_per_thread must be a multiple of {granule}, got {outputs_per_thread}")]
    Granule { granule: u32, outputs_per_thread: u32 },
    #[error("distribution {layout} stages {bytes} bytes of input per block in shared memory, more than the {limit} a kernel may declare; use a smaller V, fewer outputs_per_thread or a smaller max_threads_per_block")]
    StageTooLarge { layout: String, bytes: u32, limit: u32 },
    #[error("distribution = auto found no distribution that compiles for this stencil within the register and shared-memory limits")]
    NoCandidate,
}

/// Everything that can go wrong on the CPU paths (`run_cpu`, `emulate`).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum Error {
    #[error(transparent)]
    Length(#[from] LengthError),
    #[error(transparent)]
    Body(#[from] BodyError),
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
}
