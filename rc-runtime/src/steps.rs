//! Time steps on the GPU: `steps` steps of a stencil on two ping-pong buffers per state field
//! (`a` and `b`, one pair per output field, which is the next state of the input field of its
//! number), as launches of the fused kernel (`T` steps each) and then one launch for the steps
//! left, fused or the one-step kernel (rc-core's `StepPlan`), each launch reading every state
//! field's one buffer and writing its other. The back ends (`with_cust.rs`, `with_cudarc.rs`)
//! only turn the launches into their buffer types.

use rc_core::time_steps::{self, StepPlan};
use rc_core::{Dims, Element, Extent, LengthError, Params, Stencil};

use crate::driver::{self, CuStream};
use crate::error::{check, Error};
use crate::launch::{launch_planned, Planned, RawBuffer};
use crate::side_stream::SideStream;

/// Which of the two ping-pong buffers holds the result of a run of time steps (under `valid`,
/// in its first `n - 2 * radius * steps` elements), the same for every state field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// The first buffer, the one the input was in (also after an even number of launches).
    A,
    B,
}

/// One launch of a run of time steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StepLaunch {
    /// Steps it runs: a fused kernel of that many, or the one-step kernel for 1.
    pub steps: u32,
    /// Steps of the run done when it ends (its own included).
    pub done: usize,
    /// Reads buffer A (and writes B), or reads B and writes A.
    pub from: Holds,
    /// The shape it reads from the front of its input buffer and its elements, and the
    /// elements it writes to the front of its output buffer.
    pub input_shape: Extent,
    pub input_len: usize,
    pub output_len: usize,
    /// Where the coefficient fields' elements for this launch lie.
    pub coefficients: CoefficientPart,
}

/// The part of each coefficient field a launch reads: where the state lies. Under `valid` the
/// state has lost `r * done` elements at each end of each dimension, and so has each coefficient:
/// in 1D (and before any step) a span of it, in 2D and 3D after a step a box of its grid, which
/// the launch reads from a packed copy (a back end's 3D copy makes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CoefficientPart {
    Span { from: usize, len: usize },
    Box(GridBox),
}

/// A box of a grid, lengths and starts innermost (x) first, 1 and 0 along dimensions the grid
/// does not have: the box of `len` elements from `start` on along each dimension, in a grid of
/// `grid` elements along each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GridBox {
    pub grid: [usize; 3],
    pub start: [usize; 3],
    pub len: [usize; 3],
}

impl GridBox {
    /// Elements of the packed box.
    pub(crate) fn elements(&self) -> usize {
        self.len.iter().product()
    }
}

/// Copies box `part` of the grid at device address `src` (of `bytes`-byte elements), packed
/// row-major, to device address `dst` on `stream`, asynchronously (one 3D copy).
pub(crate) fn copy_box(
    part: &GridBox,
    bytes: usize,
    src: u64,
    dst: u64,
    stream: driver::CuStream,
) -> Result<(), Error> {
    let null = std::ptr::null_mut();
    let copy = driver::Memcpy3d {
        src_x_bytes: part.start[0] * bytes,
        src_y: part.start[1],
        src_z: part.start[2],
        src_lod: 0,
        src_memory_type: driver::CU_MEMORYTYPE_DEVICE,
        src_host: std::ptr::null(),
        src_device: src,
        src_array: null,
        reserved0: null,
        src_pitch: part.grid[0] * bytes,
        src_height: part.grid[1],
        dst_x_bytes: 0,
        dst_y: 0,
        dst_z: 0,
        dst_lod: 0,
        dst_memory_type: driver::CU_MEMORYTYPE_DEVICE,
        dst_host: null,
        dst_device: dst,
        dst_array: null,
        reserved1: null,
        dst_pitch: part.len[0] * bytes,
        dst_height: part.len[1],
        width_bytes: part.len[0] * bytes,
        height: part.len[1],
        depth: part.len[2],
    };
    // SAFETY: `copy` names two device allocations the caller holds for the stream's work: the
    // source grid (its box lies inside it: start + len <= grid along each dimension) and a
    // destination of at least the box's elements; the driver reads `copy` before returning.
    let code = unsafe { driver::cuMemcpy3DAsync_v2(&copy, stream) };
    check(code, || {
        format!("copying a box of {:?} elements of a coefficient grid of {:?} (cuMemcpy3DAsync)", part.len, part.grid)
    })
}

/// A shape's lengths innermost first, 1 along dimensions it does not have.
fn innermost_first(shape: Extent) -> [usize; 3] {
    let mut out = [1; 3];
    for (slot, len) in out.iter_mut().zip(shape.components().into_iter().rev()) {
        *slot = len;
    }
    out
}

/// A run of time steps, planned: its launches, the buffer that will hold the result, and the
/// handles of the kernels a fused launch runs, by its steps.
pub(crate) struct StepRun<T: Element, P: Params> {
    pub launches: Vec<StepLaunch>,
    pub holds: Holds,
    fused: Vec<(u32, Vec<Stencil<T, P>>)>,
}

impl<T: Element, P: Params> StepRun<T, P> {
    /// The run of `steps` steps of `stencil` on buffers `a` (one per state field, holding the
    /// input, of shape `shape`) and `b`, as `(address, length)`, with coefficient fields of
    /// `coefficients` elements each. Lengths are checked here, before any CUDA call, and where
    /// a fused launch comes, the alignment its vector accesses need of `a` and `b` (every
    /// launch checks the rest).
    pub(crate) fn plan(
        stencil: &Stencil<T, P>,
        shape: Extent,
        a: &[(u64, usize)],
        b: &[(u64, usize)],
        coefficients: &[usize],
        steps: usize,
    ) -> Result<StepRun<T, P>, Error> {
        let lens = |buffers: &[(u64, usize)]| buffers.iter().map(|&(_, len)| len).collect::<Vec<usize>>();
        let (launches, holds) = launches(stencil, shape, &lens(a), &lens(b), coefficients, steps)?;
        let mut fused: Vec<(u32, Vec<Stencil<T, P>>)> = Vec::new();
        for steps in launches.iter().map(|l| l.steps).filter(|&s| s > 1) {
            if fused.iter().all(|(s, _)| *s != steps) {
                let (kernels, tile) =
                    stencil.fused_launch(steps).map_err(|source| Error::Program { stencil: stencil.name(), source })?;
                for (name, buffers) in [("a", a), ("b", b)] {
                    for (field, &(address, _)) in buffers.iter().enumerate() {
                        check_vector_alignment(stencil, &buffer_name(name, field, buffers.len()), address, tile.width)?;
                    }
                }
                fused.push((steps, kernels));
            }
        }
        Ok(StepRun { launches, holds, fused })
    }

    /// The kernels `step` launches, in order, each with the same arguments: the fused launch's
    /// of its steps (two where it splits, writing disjoint outputs), or `stencil`'s one-step
    /// kernel.
    pub(crate) fn kernels<'a>(&'a self, stencil: &'a Stencil<T, P>, step: &StepLaunch) -> &'a [Stencil<T, P>] {
        self.fused
            .iter()
            .find(|(steps, _)| *steps == step.steps)
            .map_or(std::slice::from_ref(stencil), |(_, kernels)| kernels)
    }
}

/// Queues the kernels of one launch over the same buffers, as `plans` planned them: the first
/// on `stream`, the others (a split fused launch's edge kernel, which writes other outputs)
/// beside it on `side`'s stream (made at the first such launch), queued first so that their
/// blocks are dispatched first. Forked from `stream` and joined back, so to the caller it is one
/// launch on `stream`; joined also when a launch fails, so nothing queued outlives the call
/// unordered.
pub(crate) fn queue<T: Element, P: Params>(
    plans: &[Planned<'_, T, P>],
    stream: CuStream,
    side: &mut Option<SideStream>,
    inputs: &[RawBuffer],
    outputs: &[RawBuffer],
) -> Result<(), Error> {
    let launch = |(kernel, plan): &Planned<'_, T, P>, on: CuStream| match plan.launch {
        Some(shape) => launch_planned(kernel, plan, shape, on, inputs, outputs),
        None => Ok(()),
    };
    let Some((first, beside)) = plans.split_first() else {
        return Ok(());
    };
    if beside.is_empty() {
        return launch(first, stream);
    }
    let side = match side {
        Some(side) => side,
        None => side.insert(SideStream::new(stream)?),
    };
    let side_stream = side.fork(stream)?;
    let queued = beside.iter().try_for_each(|kernel| launch(kernel, side_stream)).and_then(|()| launch(first, stream));
    let joined = side.join(stream);
    queued.and(joined)
}

/// The final state's length after `steps` steps from host `inputs` (the state fields, then the
/// coefficient fields) of shape `shape`, every length checked as [`launches`] checks device
/// buffers.
pub(crate) fn host_output_len<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    inputs: &[&[T]],
    shape: Extent,
    steps: usize,
) -> Result<usize, Error> {
    let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
    let (state, coefficients) = lens.split_at(lens.len().min(stencil.output_fields() as usize));
    launches(stencil, shape, state, state, coefficients, steps)?;
    let out = time_steps::steps_output_shape(&stencil.pattern(), shape, steps)
        .map_err(|source| Error::Length { stencil: stencil.name(), source })?;
    Ok(out.len().unwrap_or(0))
}

/// The launches of `steps` steps of `stencil` on buffers `a` (one per state field, holding the
/// input, of shape `shape`) and `b`, of `a_lens` and `b_lens` elements, with coefficient fields
/// of `coefficients` elements each; and the buffer that holds the result. Lengths are checked
/// here, before any CUDA call.
pub(crate) fn launches<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    shape: Extent,
    a_lens: &[usize],
    b_lens: &[usize],
    coefficients: &[usize],
    steps: usize,
) -> Result<(Vec<StepLaunch>, Holds), Error> {
    let length = |source| Error::Length { stencil: stencil.name(), source };
    let (fields, output_fields) = (stencil.fields(), stencil.output_fields());
    let states = output_fields as usize;
    if a_lens.len() != states || b_lens.len() != states {
        return Err(length(LengthError::StateBuffers { expected: states, a: a_lens.len(), b: b_lens.len() }));
    }
    if let Some((&a, &b)) = a_lens.iter().zip(b_lens).find(|(a, b)| a != b) {
        return Err(length(LengthError::StepBuffers { a, b }));
    }
    let pattern = stencil.pattern();
    if shape.dims() != pattern.dims() {
        return Err(length(LengthError::Dimensions { expected: pattern.dims(), got: shape.dims() }));
    }
    // The state fields (`a`, stepped in place of the first input fields), then the coefficients;
    // each state field's final value is an output field.
    let lens: Vec<usize> = a_lens.iter().chain(coefficients).copied().collect();
    let a_len = a_lens.first().copied().unwrap_or(0);
    let out = time_steps::steps_output_shape(&pattern, shape, steps).map_err(length)?;
    let outputs = vec![out.len().unwrap_or(0); states];
    time_steps::check_steps_inputs(&pattern, shape, &lens, fields, &outputs, output_fields, steps).map_err(length)?;
    let plan = StepPlan::new(
        steps,
        stencil.steps_per_launch().map_err(|source| Error::Program { stencil: stencil.name(), source })?,
    );
    let (mut from, mut done, mut out) = (Holds::A, 0, Vec::new());
    for steps_of_launch in plan.launches() {
        let advance = steps_of_launch as usize;
        let input_shape = time_steps::steps_output_shape(&pattern, shape, done).map_err(length)?;
        let input_len = input_shape.len().unwrap_or(0);
        let output_len =
            time_steps::steps_output_shape(&pattern, shape, done + advance).map_err(length)?.len().unwrap_or(0);
        let coefficients = match (pattern.dims(), input_len == a_len) {
            (Dims::One, _) | (_, true) => CoefficientPart::Span { from: (a_len - input_len) / 2, len: input_len },
            _ => {
                let trim = |axis: usize| pattern.radius().along(axis) as usize * done;
                let (grid, len) = (innermost_first(shape), innermost_first(input_shape));
                CoefficientPart::Box(GridBox { grid, start: [trim(0), trim(1), trim(2)], len })
            }
        };
        let launch = StepLaunch {
            steps: steps_of_launch,
            done: done + advance,
            from,
            input_shape,
            input_len,
            output_len,
            coefficients,
        };
        out.push(launch);
        from = match from {
            Holds::A => Holds::B,
            Holds::B => Holds::A,
        };
        done += advance;
    }
    Ok((out, from))
}

/// The name a message gives buffer `name` (`a` or `b`) of state field `field` of `fields`: the
/// argument's own name with one state field, else numbered (`a1`).
pub(crate) fn buffer_name(name: &str, field: usize, fields: usize) -> String {
    match fields {
        1 => name.to_string(),
        _ => format!("{name}{field}"),
    }
}

/// The fused kernel's vector accesses of `width` elements need buffer `name` at `address` to
/// start on a multiple of their size.
fn check_vector_alignment<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    name: &str,
    address: u64,
    width: u32,
) -> Result<(), Error> {
    let required = width * T::TYPE.bytes();
    if address % required as u64 != 0 {
        return Err(Error::Misaligned { stencil: stencil.name(), buffer: name.to_string(), required, address });
    }
    Ok(())
}
