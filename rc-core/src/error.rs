//! Errors, each saying what was expected and what was got.

use std::fmt;

use thiserror::Error;

use crate::boundary::Boundary;
use crate::geometry::{Dims, Extent, Offset, Radius};
use crate::layout::Layout;
use crate::scalar::ScalarType;
use crate::strategy::Strategy;
use crate::typing::TypeError;
use crate::window;

/// What an argument was given: an integer, or source text that is not one (shown as written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Given {
    Integer(i64),
    Text(String),
}

impl From<u32> for Given {
    fn from(v: u32) -> Given {
        Given::Integer(v as i64)
    }
}

impl fmt::Display for Given {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Given::Integer(v) => write!(f, "{v}"),
            Given::Text(t) => write!(f, "`{t}`"),
        }
    }
}

/// An invalid `#[stencil(...)]` pattern: one variant per argument, checked by [`crate::validate`].
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PatternError {
    #[error("radius must be an integer from 1 to {max}, got {got}")]
    Radius { got: Given, max: u32 },
    /// `radius = (..)` with `components` components for a window of `dims` dimensions.
    #[error("{}", radius_components(*.components, *.dims))]
    RadiusComponents { components: usize, dims: Dims },
    #[error("warp must be a power of two from 2 to 32 (the shuffle segment width), got {got}")]
    Warp { got: Given },
    #[error("outputs_per_thread must be an integer from 1 to {max}, got {got}")]
    OutputsPerThread { got: Given, max: u32 },
    /// `max`: the most rows (planes) a tile of a stencil that has the dimension may have.
    #[error("{}", rows_per_warp(what, *.dims, .got, *.max))]
    RowsPerWarp { what: &'static str, dims: Dims, got: Given, max: u32 },
    #[error("max_threads_per_block must be a multiple of 32 (whole warps) from 32 to {max}, got {got}")]
    ThreadsPerBlock { got: Given, max: u32 },
    #[error("min_blocks_per_sm must be an integer from 1 to {max}, got {got}")]
    MinBlocksPerSm { got: Given, max: u32 },
    #[error(
        "fuse must be an integer from 1 to {max} (time steps per launch; 1 launches every step on its own), got {got}"
    )]
    Fuse { got: Given, max: u32 },
    #[error("stream = true streams a 2D tile's rows, but this stencil is {dims}: {}; remove `stream`", match dims { Dims::Three => "in 3D a tile streams along z when planes_per_warp > 1 (the default)", _ => "a 1D tile has no rows to stream" })]
    StreamRows { dims: Dims },
    #[error("prefetch = true prefetches the rows a 2D tile's later bands read, but this stencil {}", match (dims, stream_rows) { (Dims::Two, _) => "streams its rows (stream = true), whose loop has no interior path to prefetch from: remove `prefetch`, or `stream` to keep the tile's rows in registers", (Dims::Three, _) => "is 3D (its tiles stream along z or stage planes): remove `prefetch`", _ => "is 1D (a tile has no rows below it): remove `prefetch`" })]
    Prefetch { dims: Dims, stream_rows: bool },
    /// `boundary = ...` naming no rule; `got` as written.
    #[error("boundary must be one of {}, got `{got}`", names(Boundary::ALL.map(Boundary::name)))]
    Boundary { got: String },
    /// `strategy = ...` naming no strategy; `got` as written.
    #[error("strategy must be one of {}, got `{got}`", names(Strategy::ALL.map(Strategy::name)))]
    Strategy { got: String },
}

/// A distribution the pattern or the strategy cannot have, checked by [`crate::validate`].
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum DistributionError {
    #[error("{kind}(V) needs V a power of two from 1 to 32 (whole 16-byte vectors), got {got}")]
    VectorSize { kind: &'static str, got: Given },
    #[error("{}", whole_rows(*.layout, *.outputs_per_thread))]
    WholeRows { layout: Layout, outputs_per_thread: Option<u32> },
    #[error(
        "`distribution` chooses where the register cache keeps elements; strategy `{strategy}` has no register cache"
    )]
    NoRegisterCache { strategy: Strategy },
    /// `distribution = ...` naming no distribution; `got` as written.
    #[error(
        "distribution must be `auto`, `round_robin`, `granule(V)`, `window(V)`, `staged(V)` or `planes(V)` (3D) with V \
         a power of two from 1 to 32, got `{got}`"
    )]
    Unknown { got: String },
}

/// `` `a`, `b`, `c` ``.
fn names<const N: usize>(names: [&str; N]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    quoted.join(", ")
}

fn radius_components(components: usize, dims: Dims) -> String {
    let got = if components == 1 { "1 component".to_string() } else { format!("{components} components") };
    let dimensions = if dims == Dims::One { "1 dimension".to_string() } else { format!("{} dimensions", dims.count()) };
    let write = match dims {
        Dims::One => "write one number, `radius = r`",
        Dims::Two => "write `radius = (ry, rx)` or one number for both",
        Dims::Three => "write `radius = (rz, ry, rx)` or one number for all three",
    };
    format!("radius has {got} but `{}` has {dimensions}: {write}", window::type_name(dims))
}

fn rows_per_warp(what: &str, dims: Dims, got: &Given, most: u32) -> String {
    let along = if what == "planes_per_warp" { "z (3D stencils)" } else { "y (2D and 3D stencils)" };
    let need = if what == "planes_per_warp" { Dims::Three } else { Dims::Two };
    if dims < need {
        format!("{what} tiles along {along}; a {dims} stencil has none, got {got}")
    } else {
        format!("{what} must be an integer from 1 to {most}, got {got}")
    }
}

/// What a block stages in 1D (its outputs and the halo) and in 2D and 3D (each warp's rows), of
/// each input field, and what makes it smaller.
fn block_stage_too_large(dims: Dims, bytes: u32, fields: u32, rows: u32, elements: u32, limit: u32) -> String {
    let fields = if fields > 1 { format!("{fields} fields of ") } else { String::new() };
    let (what, smaller) = match dims {
        Dims::One => (
            format!("{fields}{elements} elements: its outputs and the halo"),
            "fewer outputs_per_thread, a smaller max_threads_per_block or a smaller radius",
        ),
        _ => (
            format!("{fields}{rows} input rows of {elements} elements"),
            "fewer rows_per_warp or planes_per_warp, fewer outputs_per_thread or a smaller max_threads_per_block",
        ),
    };
    format!("strategy shared_memory stages {bytes} bytes of input per block ({what}) in shared memory, more than the {limit} a kernel may declare; use {smaller}")
}

/// `outputs_per_thread: None` is an attribute that leaves it at its default, 1.
fn whole_rows(layout: Layout, outputs_per_thread: Option<u32>) -> String {
    let v = layout.row_length();
    let rows = format!("{layout} gives each lane whole rows of {v} consecutive outputs");
    match outputs_per_thread {
        Some(p) => format!("{rows}, so outputs_per_thread must be a multiple of {v}, got {p}"),
        None => format!("{rows}: set outputs_per_thread to a multiple of {v}"),
    }
}

/// Input and output lengths that do not fit the pattern.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum LengthError {
    #[error(
        "input has {got} elements, but boundary `valid` needs at least one whole window of {window} (2 * radius + 1)"
    )]
    InputShorterThanWindow { window: usize, got: usize },
    #[error(
        "output has {got} elements, expected {expected} for an input of {input} elements with boundary `{boundary}`"
    )]
    Output { expected: usize, got: usize, input: usize, boundary: Boundary },
    #[error("boundary `valid` shrinks the input by 2 * radius = {} elements per step: {steps} steps of an input of {len} elements leave {}, and at least 1 must be left", 2 * .radius, *.len as i128 - 2 * *.radius as i128 * *.steps as i128)]
    StepsOutlastInput { len: usize, radius: usize, steps: usize },
    #[error(
        "the two buffers of a run of time steps have {a} and {b} elements; both must hold the input (the same length)"
    )]
    StepBuffers { a: usize, b: usize },
    #[error(
        "a run of time steps of {expected} state fields (one per output field) takes {expected} pairs of buffers, one \
         pair per state field; got {a} first and {b} second buffers"
    )]
    StateBuffers { expected: usize, a: usize, b: usize },
    #[error("output has {got} elements, expected {expected} for {steps} steps on an input of {input} elements with boundary `{boundary}`")]
    StepsOutput { expected: usize, got: usize, input: usize, steps: usize, boundary: Boundary },
    #[error("{outputs} outputs need {blocks} thread blocks, more than the {max} their grid allows")]
    GridTooLarge { outputs: usize, blocks: u64, max: u64 },
    #[error("the shape has {got} dimensions, expected {expected} for this stencil")]
    Dimensions { expected: Dims, got: Dims },
    #[error("shape {} has an empty dimension; a 2D or 3D stencil needs at least one element along each", .shape.as_array())]
    EmptyShape { shape: Extent },
    #[error("shape {} has rows of {got} elements; a 2D or 3D stencil's rows hold at most {max} (its kernels step from row to row in 32-bit lengths): use a 1D stencil for longer rows", .shape.as_array())]
    RowTooLong { shape: Extent, got: usize, max: usize },
    #[error("shape {} has more elements than memory can index", .shape.as_array())]
    ShapeOverflow { shape: Extent },
    #[error("shape {} is smaller than one window {} (2 * radius + 1 along each dimension), which boundary `valid` needs", .shape.as_array(), .window.as_array())]
    ShapeSmallerThanWindow { shape: Extent, window: Extent },
    #[error("input has {got} elements, expected {expected} for shape {}", .shape.as_array())]
    InputShape { shape: Extent, expected: usize, got: usize },
    #[error("output has {got} elements, expected {expected} (shape {}) for an input of shape {} with boundary `{boundary}`", .shape.as_array(), .input.as_array())]
    OutputShape { shape: Extent, expected: usize, got: usize, input: Extent, boundary: Boundary },
    #[error("a launch over rows {first}..{end} of an output of shape {}: expected rows of a 2D or 3D output along its outermost dimension, first <= end <= {}", .shape.as_array(), .shape.components().first().copied().unwrap_or(0))]
    OutputRows { shape: Extent, first: usize, end: usize },
    #[error("expected {expected} {} (one per window the function declares, in order), got {got}", if *.expected == 1 { "input" } else { "inputs" })]
    InputCount { expected: usize, got: usize },
    #[error("input {input} has {got} elements, expected {expected} as input 0 has: a stencil's inputs share one length (one shape in 2D and 3D), numbered from 0 in the order the windows are declared")]
    InputLength { input: usize, expected: usize, got: usize },
    #[error("expected {expected} {} (one per output field, in the order the body returns them), got {got}", if *.expected == 1 { "output" } else { "outputs" })]
    OutputCount { expected: usize, got: usize },
    #[error("output {output} has {got} elements, expected {expected} as output 0 has: a stencil's outputs share one length (one shape in 2D and 3D), numbered from 0 in the order the body returns them")]
    OutputLength { output: usize, expected: usize, got: usize },
}

/// A stencil body that the compiler cannot lower. The macro reports these on the offending
/// tokens; this type exists for bodies built by hand.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum BodyError {
    #[error("node {node} uses node {operand}, which is not defined before it")]
    ForwardReference { node: usize, operand: usize },
    #[error("node {node}: {error}")]
    Type { node: usize, error: TypeError },
    #[error("node {node}: tap {offset} is outside the radius {radius} (or has another number of dimensions)")]
    TapOutsideRadius { node: usize, offset: Offset, radius: Radius },
    #[error("node {node}: tap of input field {field}, but the body has {fields} (numbered from 0)")]
    NoSuchField { node: usize, field: u32, fields: u32 },
    #[error("a body reads at least one input field, got 0")]
    NoFields,
    #[error("node {node}: parameter {index} does not exist (the stencil has {count})")]
    NoSuchParam { node: usize, index: u32, count: usize },
    #[error("the body returns {got} for output field {output}, expected the element type {expected}")]
    ResultType { output: usize, expected: ScalarType, got: ScalarType },
    #[error("a body returns at least one value (one per output field), got none")]
    NoResults,
    #[error("the body has no nodes")]
    Empty,
    /// Component `component` (outermost first) of a tap of a stencil of `dims` dimensions,
    /// `offset`, past that dimension's `radius`.
    #[error("{}", tap_outside(*.dims, *.component, *.offset, *.radius))]
    TapComponent { dims: Dims, component: usize, offset: i64, radius: u32 },
}

fn tap_outside(dims: Dims, component: usize, d: i64, r: u32) -> String {
    match dims {
        Dims::One => format!("tap offset {d} is outside the radius: taps must lie in -{r}..={r}"),
        _ => {
            let axis = dims.axis(component);
            format!("d{axis} = {d} is outside radius r{axis} = {r}: d{axis} must lie in -{r}..={r}")
        }
    }
}

/// A stencil function's signature that rc cannot compile: element and parameter types it has no
/// kernel for, windows that differ, a result that is not one element, parameters past a launch's
/// parameter space. Names are the parameters' as written.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum SignatureError {
    #[error("unsupported element type: a window holds {}", supported_types())]
    Element,
    #[error(
        "unsupported parameter type: extra parameters are passed at launch, scalars ({}) or arrays of them, `[f32; 5]`",
        supported_types()
    )]
    Param,
    #[error("unsupported array element type: an array parameter holds {}", supported_types())]
    ArrayElement,
    /// Window `name` of `dims` dimensions beside the first window, `first`, of `first_dims`,
    /// whose element type is `element`.
    #[error(
        "windows of different dimensions: `{name}` is a {dims} `{}` but `{first}` a {first_dims} `{}`; a stencil's \
         windows share one shape: write `{name}: {}<{element}>`",
        window::type_name(*.dims), window::type_name(*.first_dims), window::type_name(*.first_dims)
    )]
    WindowDims { name: String, dims: Dims, first: String, first_dims: Dims, element: ScalarType },
    /// Window `name` holding `element` beside the first window, `first`, holding `first_element`;
    /// both of `dims` dimensions.
    #[error(
        "windows of different element types: `{name}` holds {element} but `{first}` holds {first_element}; a \
         stencil's windows hold one element type: write `{name}: {}<{first_element}>`",
        window::type_name(*.dims)
    )]
    WindowElement { name: String, element: ScalarType, first: String, first_element: ScalarType, dims: Dims },
    #[error(
        "a stencil returns one element per output field: add `-> {element}`, or `-> ({element}, {element})` for two fields"
    )]
    NoResult { element: ScalarType },
    #[error(
        "wrong return type: a stencil over {}<{element}> returns {element}, or one {element} per output field as a \
         tuple `({element}, {element})` or an array `[{element}; N]`",
        window::type_name(*.dims)
    )]
    ResultType { dims: Dims, element: ScalarType },
    #[error("the array a stencil returns has one element per output field: give its length as an integer literal of at least 1, `[{element}; 9]`")]
    ResultArrayLen { element: ScalarType },
    /// The parameters up to `name`, parameter `param` (numbered from 0 after the windows),
    /// take `bytes` of the `max` bytes a kernel's parameter space has.
    #[error(
        "the parameters up to `{name}` take {bytes} bytes of the kernel's parameter space, more than the {max} a \
         launch passes: pass fewer or smaller arrays"
    )]
    ParamSpace { param: usize, name: String, bytes: u32, max: u32 },
}

/// The element types a stencil may use, as its source writes them: `f32, ..., half::f16 or
/// half::bf16`.
fn supported_types() -> String {
    let names: Vec<String> = ScalarType::ELEMENTS
        .iter()
        .map(|ty| match ty.half() {
            Some(_) => format!("half::{ty}"),
            None => ty.to_string(),
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A schedule the compiler refused to produce.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ScheduleError {
    #[error("register-cache conflict in the fetch for output {output} tap {tap}: lane {owner} would have to publish rc[{first}] and rc[{second}] in one shuffle")]
    Conflict { output: u32, tap: i32, owner: u32, first: u32, second: u32 },
    #[error("the fetch for output {output} tap {tap} reads lanes that are not a rotation of the warp; the PTX back end prints rotations only")]
    NotARotation { output: u32, tap: i32 },
    #[error("distribution {}", whole_rows(*.layout, Some(*.outputs_per_thread)))]
    WholeRows { layout: Layout, outputs_per_thread: u32 },
    /// The estimate's parts ([`crate::RegisterEstimate`]) and `max`, the registers a thread can have.
    #[error(
        "radius {radius} with outputs_per_thread {outputs_per_thread} keeps an estimated {cache} cached registers + \
         {live_values} live values + {addressing} for addressing = {total} registers per thread; the cache and the \
         addressing alone ({cache} + {addressing} = {}) are more than the {max} registers a thread can have; lower the \
         radius or outputs_per_thread",
        .cache + .addressing
    )]
    RegistersExceeded {
        radius: Radius,
        outputs_per_thread: u32,
        cache: u32,
        live_values: u32,
        addressing: u32,
        total: u32,
        max: u32,
    },
    #[error("distribution {layout} stages {bytes} bytes of input per block in shared memory, more than the {limit} a kernel may declare; use a smaller V, fewer outputs_per_thread or a smaller max_threads_per_block")]
    StageTooLarge { layout: String, bytes: u32, limit: u32 },
    #[error(
        "distribution {layout} stages {slots} planes of {rows} rows x {row_elements} elements{} in shared memory, \
         {bytes} bytes per block, more than the {limit} bytes a block may have; use fewer rows_per_warp, a smaller \
         max_threads_per_block or fewer outputs_per_thread",
        if *.fields > 1 { format!(" for each of {} input fields", .fields) } else { String::new() }
    )]
    RingTooLarge { layout: String, slots: u32, rows: u32, row_elements: u32, fields: u32, bytes: u32, limit: u32 },
    #[error("{}", block_stage_too_large(*.dims, *.bytes, *.fields, *.rows, *.elements, *.limit))]
    BlockStageTooLarge { dims: Dims, bytes: u32, fields: u32, rows: u32, elements: u32, limit: u32 },
    #[error("distribution = auto found no distribution that compiles for this stencil within the register and shared-memory limits")]
    NoCandidate,
    #[error("cannot fuse {steps} time steps of a radius {radius} stencil over {element} in one launch: a lane owns at most {words} 32-bit words, so at most {max_steps} steps fit (fuse = 1 to {max_steps})")]
    FusedSteps { steps: u32, radius: u32, element: ScalarType, words: u32, max_steps: u32 },
    /// `words`: the 32-bit words the rows a lane keeps may hold in all.
    #[error(
        "cannot fuse {steps} time steps of a radius ({radius_y}, {radius_x}) 2D stencil over {element} in one launch: the rows each \
         lane keeps (2 * {radius_y} per step, 16 bytes or more each) hold at most {words} 32-bit words in all, so at most \
         {max_steps} steps fit (fuse = 1 to {max_steps})"
    )]
    FusedGridSteps { steps: u32, radius_y: u32, radius_x: u32, element: ScalarType, words: u32, max_steps: u32 },
    /// `words`: the 32-bit words the planes a lane keeps may hold in all.
    #[error(
        "cannot fuse {steps} time steps of a radius {radius} 3D stencil over {element} in one launch: the planes each lane keeps \
         (2 * rz + 1 per step, each of its rows 16 bytes or more) hold at most {words} 32-bit words in all, so at most {max_steps} steps \
         fit (fuse = 1 to {max_steps})"
    )]
    FusedVolumeSteps { steps: u32, radius: Radius, element: ScalarType, words: u32, max_steps: u32 },
    #[error("time steps feed each output field back as the input field of the same number: a body of {outputs} output fields needs at least {outputs} input fields, got {fields}")]
    StateFields { outputs: u32, fields: u32 },
    #[error("the body reads {body} taps, but the pattern is {pattern}")]
    Dimensions { body: Dims, pattern: Dims },
    #[error("a tile of radius {radius} reads {rows} input rows; 2D and 3D tiles may read at most {max_rows} ((planes_per_warp + 2 rz) * (rows_per_warp + 2 ry)) with radii of at most {max_radius}: lower the radius, rows_per_warp or planes_per_warp")]
    GridTile { radius: Radius, rows: u32, max_rows: u32, max_radius: u32 },
    #[error("distribution staged(V) stages 1D tiles; a {dims} stencil uses granule(V) or window(V) (or auto)")]
    StagedDimensions { dims: Dims },
    #[error("distribution planes(V) stages the input planes of 3D register-cache tiles; a {dims} stencil (or another strategy) uses granule(V) or window(V) (or auto)")]
    PlanesDimensions { dims: Dims },
}

/// An access the emulated machine program makes that the GPU would make out of bounds or
/// misaligned: a bug in rc's code generator, which the emulator reports instead of running on.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum EmulationError {
    #[error("the {what} of elements {first}..{first}+{width} must lie inside 0..{len} and start at a multiple of {width}; it does not, which is a bug in rc's code generator: please report it with the stencil")]
    Access { what: &'static str, first: i64, width: usize, len: usize },
    #[error("the program reads its stage in shared memory before writing it, which is a bug in rc's code generator: please report it with the stencil")]
    StageUnwritten,
    #[error("stage position {position} lies outside the warp's region of {size} elements, which is a bug in rc's code generator: please report it with the stencil")]
    StageOverflow { position: usize, size: u32 },
}

/// A grid that cannot be split into bands ([`crate::decomposition`]).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum DecompositionError {
    #[error(
        "a split needs a 2D or 3D stencil and a grid of its dimensions; got a {stencil} stencil and a {shape} grid"
    )]
    Dimensions { stencil: Dims, shape: Dims },
    #[error(
        "boundary `valid` shrinks the grid by the radius on each side every step, so the bands would have to move \
         between exchanges; expected `zero`, `clamp` or `wrap` for a split grid"
    )]
    Valid,
    #[error("a split needs at least one rank; got none")]
    NoRanks,
    #[error("a split exchanges halos every `steps_per_exchange` steps; expected at least 1, got 0")]
    NoStepsPerExchange,
    #[error("steps per exchange times the radius overflows the halo's row count")]
    HaloOverflow,
    #[error("the bands' rows must add up to the grid's {rows} rows (shape {shape:?}); got {got}")]
    RowCount { shape: Vec<usize>, rows: usize, got: usize },
    #[error(
        "rank {rank}'s band has {rows} rows, but each band needs at least {least} (the halo: steps per exchange \
         times the radius along the split dimension, {halo} rows) so that its neighbours' halos come from its own \
         rows: {total} rows split over {ranks} ranks; use at most {} ranks, or fewer steps per exchange",
        (total / least).max(1)
    )]
    BandTooThin { rank: usize, rows: usize, least: usize, halo: usize, ranks: usize, total: usize },
    #[error("the split was made for {split}; expected a stencil like that, got {stencil}")]
    Mismatch { split: String, stencil: String },
    #[error("a split grid's part: got {what}, expected {expected}")]
    Part { what: String, expected: String },
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
    #[error(transparent)]
    Emulation(#[from] EmulationError),
    #[error(transparent)]
    Verify(#[from] crate::machine::verify::VerifyError),
    #[error(transparent)]
    Check(#[from] crate::driver::checks::CheckError),
    #[error(transparent)]
    Decomposition(#[from] DecompositionError),
}

/// The argument of a stencil's attribute a refusal is about, for a front end to put it on that
/// argument's tokens ([`crate::plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argument {
    Radius,
    OutputsPerThread,
    Prefetch,
    Distribution,
    Fuse,
    /// The attribute as a whole: values that together make no pattern.
    Attribute,
    /// The stencil itself (its name): what it needs does not fit, whatever one argument says.
    Function,
}

/// What a declared stencil cannot compile to ([`crate::plan`]).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error(transparent)]
    Distribution(#[from] DistributionError),
    /// `distribution = auto`, where the cost model found nothing that compiles.
    #[error("distribution = auto: {0}")]
    Auto(Error),
    #[error("cannot schedule this stencil: {0}")]
    Schedule(Error),
    /// A compiled kernel past a thread's registers ([`crate::validate::registers`]).
    #[error(transparent)]
    Registers(#[from] ScheduleError),
    #[error(
        "prefetch = true prefetches from the interior path of a 2D register-cache tile of vector loads, which this \
         kernel ({strategy}, distribution {layout}) does not have: use strategy = register_cache with distribution = \
         window(V) or granule(V), or remove `prefetch`"
    )]
    PrefetchWithoutInterior { strategy: Strategy, layout: Layout },
    /// `fuse = steps`, which the kernel cannot run in one launch.
    #[error("fuse = {steps}: {error}")]
    Fuse { steps: u32, error: Error },
    /// The steps the cost model chose, which only chooses what compiles: a bug in rc.
    #[error("cannot fuse time steps: {0}")]
    FuseChosen(Error),
}

/// A refusal of a declared stencil, and the argument it is about.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{error}")]
pub struct Refusal {
    pub argument: Argument,
    pub error: PlanError,
}

impl Refusal {
    pub fn new(argument: Argument, error: impl Into<PlanError>) -> Refusal {
        Refusal { argument, error: error.into() }
    }
}
