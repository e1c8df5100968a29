//! The cust back end: stencils on cust streams and device buffers (what a Rust-CUDA host program
//! has), and [`run`] from host slices through cust's buffers.

use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::stream::{Stream, StreamFlags};
use rc_core::{Element, Extent, Params, Stencil};

use crate::context;
use crate::error::Error;
use crate::launch::{self, launch_planned, output_shape, plan, RawBuffer};
use crate::steps::{self, CoefficientPart, Holds, StepRun};

/// What a cust buffer of a stencil's elements `T` holds: `T` itself, or for `half::f16` and
/// `half::bf16` their bits as `u16` (cust 0.3 implements `DeviceCopy` for the half crate 1.x,
/// not for 2.x, which rc uses; `f16::to_bits` and `from_bits` convert).
pub trait DeviceElement<T: Element>: DeviceCopy {}

impl<T: Element + DeviceCopy> DeviceElement<T> for T {}
#[cfg(feature = "half")]
impl DeviceElement<half::f16> for u16 {}
#[cfg(feature = "half")]
impl DeviceElement<half::bf16> for u16 {}

/// The cust buffer element of a stencil element `T` and the conversions to and from it: what
/// [`run_steps`] copies through (`T` itself; the bits of `half::f16` and `half::bf16`).
pub trait OnDevice: Element {
    type Device: DeviceElement<Self>;
    fn to_device(self) -> Self::Device;
    fn from_device(value: Self::Device) -> Self;
}

macro_rules! on_device_as_itself {
    ($($t:ty),*) => {$(
        impl OnDevice for $t {
            type Device = $t;
            fn to_device(self) -> $t {
                self
            }
            fn from_device(value: $t) -> $t {
                value
            }
        }
    )*};
}
on_device_as_itself!(f32, f64, i32, u32);

#[cfg(feature = "half")]
macro_rules! on_device_as_bits {
    ($($t:ty),*) => {$(
        impl OnDevice for $t {
            type Device = u16;
            fn to_device(self) -> u16 {
                self.to_bits()
            }
            fn from_device(value: u16) -> $t {
                <$t>::from_bits(value)
            }
        }
    )*};
}
#[cfg(feature = "half")]
on_device_as_bits!(half::f16, half::bf16);

/// Launches `stencil` over `inputs` into `outputs` on `stream`, asynchronously: it returns once
/// the launch is queued, and the outputs are written when the stream gets there (synchronise
/// the stream or record an event before reading them).
///
/// `inputs` has one buffer per input field (`stencil.fields()`, one per window the function
/// declares, in order: `&[&input]` for one), all of one length ([`Error::Length`] otherwise).
/// `outputs` has one buffer per output field (`stencil.output_fields()`: `&mut [&mut output]`
/// for the one a stencil has today), each of exactly `stencil.output_len(len)` elements; an
/// empty output launches nothing. An output must not overlap an input ([`Error::Aliasing`];
/// inputs may overlap each other) or another output ([`Error::OutputsOverlap`]), and every
/// buffer must be memory the stream's context can reach
/// ([`Error::ForeignBuffer`] when the driver reports device memory of another context that this
/// one cannot map). The stream's context must be current on this thread and must be a primary
/// context (cust's `Context`, `quick_init`). The first launch in a context compiles the PTX for
/// its GPU (see [`crate::release_cached_modules`]).
///
/// This is [`launch_grid`] over the shape `[len]`.
pub fn launch<T, D, P>(
    stencil: &Stencil<T, P>,
    stream: &Stream,
    inputs: &[&DeviceSlice<D>],
    outputs: &mut [&mut DeviceSlice<D>],
    params: P,
) -> Result<(), Error>
where
    T: Element,
    D: DeviceElement<T>,
    P: Params,
{
    let shape = Extent::x(inputs.first().map_or(0, |input| input.len()));
    launch_grid(stencil, stream, inputs, outputs, shape, params)
}

/// Launches `stencil` over `inputs`, grids of shape `shape` (one per input field), into
/// `outputs` (one grid per output field) on `stream`, asynchronously, as [`launch`] does for 1D.
///
/// `shape` is the inputs' shape, outermost first: `[len]`, `[rows, cols]` or `[depth, rows,
/// cols]`, with as many dimensions as the stencil. The grids are contiguous and row-major, x
/// (the last component) fastest, with no padding between rows: each input has exactly the
/// shape's element count, and each output exactly that of `stencil.output_shape(shape)` (each dimension
/// shrunk by twice its radius under `valid`, the same shape under the other boundaries).
/// Wrong counts, a shape with another number of dimensions, an empty dimension, or one
/// shorter than a window under `valid` are refused with [`Error::Length`] before any CUDA call.
///
/// Rows are packed, not pitched: a row starts wherever the previous one ends. So the kernels of
/// vector distributions (granules, windows) load input rows with 16-byte vectors only where an
/// input row is a whole number of 16-byte vectors (a multiple of 4 `f32`s or 2 `f64`s), and
/// store output rows with them only where an output row is (under `valid` an output row is
/// `2 * radius` shorter); otherwise they take a slower element-wise path, with the same
/// results. The buffer rules are [`launch`]'s:
/// 16-byte aligned buffers for vector distributions ([`Error::Misaligned`]), no overlap
/// ([`Error::Aliasing`]), buffers the stream's context can reach ([`Error::ForeignBuffer`]).
pub fn launch_grid<T, D, P>(
    stencil: &Stencil<T, P>,
    stream: &Stream,
    inputs: &[&DeviceSlice<D>],
    outputs: &mut [&mut DeviceSlice<D>],
    shape: impl Into<Extent>,
    params: P,
) -> Result<(), Error>
where
    T: Element,
    D: DeviceElement<T>,
    P: Params,
{
    let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
    let output_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
    let plan = plan(stencil, shape.into(), &lens, &output_lens, &params, None)?;
    let Some(launch) = plan.launch else {
        return Ok(());
    };
    let raw_outputs: Vec<RawBuffer> = outputs.iter().map(|output| raw(output)).collect();
    launch_planned(stencil, &plan, launch, stream.as_inner().cast(), &raw_inputs(inputs), &raw_outputs)
}

/// A buffer as the driver sees it.
fn raw<D: DeviceCopy>(buffer: &DeviceSlice<D>) -> RawBuffer {
    RawBuffer { address: buffer.as_device_ptr().as_raw(), len: buffer.len() }
}

/// [`raw`] of each input.
fn raw_inputs<D: DeviceCopy>(inputs: &[&DeviceSlice<D>]) -> Vec<RawBuffer> {
    inputs.iter().map(|input| raw(input)).collect()
}

/// Runs `stencil` over `inputs` (one host slice per input field, all of one length: `&[&input]`
/// for one) on the GPU and returns the output: copies in, launches, waits, copies out.
///
/// Uses the context current on this thread if there is one; otherwise it makes device 0's
/// primary context current on this thread (like `cust::quick_init`) and keeps it alive for the
/// rest of the process, so repeated calls do not create and tear down a context each time.
/// Lengths are checked before the GPU is touched; an empty output needs no GPU at all. Without a
/// driver or a GPU it returns [`Error::NoDevice`] (see [`Error::is_no_device`]).
///
/// This is [`run_grid`] over the shape `[len]`.
pub fn run<T, P>(stencil: &Stencil<T, P>, inputs: &[&[T]], params: P) -> Result<Vec<Vec<T>>, Error>
where
    T: Element,
    P: Params,
{
    run_grid(stencil, inputs, Extent::x(inputs.first().map_or(0, |input| input.len())), params)
}

/// Runs `stencil` over `inputs`, grids of shape `shape` (one per input field), on the GPU and
/// returns the output grids, one per output field, each of `stencil.output_shape(shape)`'s
/// shape: copies in, launches, waits, copies out, as [`run`].
///
/// The grids are contiguous and row-major, x fastest (see [`launch_grid`], also for when the
/// kernel takes its vector path). Shapes are checked before the GPU is touched.
pub fn run_grid<T, P>(
    stencil: &Stencil<T, P>,
    inputs: &[&[T]],
    shape: impl Into<Extent>,
    params: P,
) -> Result<Vec<Vec<T>>, Error>
where
    T: Element,
    P: Params,
{
    let shape = shape.into();
    let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
    let (_, n_out) = output_shape(stencil, shape, lens.first().copied().unwrap_or(0))?;
    let fields = stencil.output_fields() as usize;
    let planned = plan(stencil, shape, &lens, &vec![n_out; fields], &params, None)?;
    if planned.launch.is_none() {
        return Ok(vec![Vec::new(); fields]);
    }
    context::ensure_current()?;
    let stream = Stream::new(StreamFlags::DEFAULT, None)
        .map_err(|e| Error::cust("creating a stream (cuStreamCreateWithPriority)", e))?;
    // Buffers of bytes, each element's bits in the GPU's (little-endian) order: one path for
    // every element type, f16 and bf16 included (which cust's `DeviceCopy` does not cover).
    let bytes = T::TYPE.bytes() as usize;
    let device_inputs = inputs
        .iter()
        .map(|input| {
            let data: Vec<u8> =
                input.iter().flat_map(|v| v.to_scalar().bits.to_le_bytes().into_iter().take(bytes)).collect();
            DeviceBuffer::from_slice(&data)
                .map_err(|e| Error::cust(format!("copying {} input elements to the GPU", input.len()), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Zeroed, as cudarc's `run` allocates them: what a kernel leaves unwritten reads back as 0,
    // never as a previous allocation's bytes.
    let device_outputs = (0..fields)
        .map(|_| {
            DeviceBuffer::<u8>::zeroed(n_out * bytes)
                .map_err(|e| Error::cust(format!("allocating {n_out} output elements on the GPU"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let raw =
        |buffer: &DeviceSlice<u8>| RawBuffer { address: buffer.as_device_ptr().as_raw(), len: buffer.len() / bytes };
    let raw_inputs: Vec<RawBuffer> = device_inputs.iter().map(|input| raw(input)).collect();
    let raw_outputs: Vec<RawBuffer> = device_outputs.iter().map(|output| raw(output)).collect();
    if let Some(launch) = planned.launch {
        launch_planned(stencil, &planned, launch, stream.as_inner().cast(), &raw_inputs, &raw_outputs)?;
    }
    stream
        .synchronize()
        .map_err(|e| Error::cust(format!("running stencil `{}` (stream synchronize)", stencil.name()), e))?;
    let copy_out = |device_output: &DeviceBuffer<u8>| {
        let mut data = vec![0u8; n_out * bytes];
        device_output
            .copy_to(&mut data[..])
            .map_err(|e| Error::cust(format!("copying {n_out} output elements from the GPU"), e))?;
        let output = data
            .chunks_exact(bytes)
            .map(|b| {
                let mut bits = [0u8; 8];
                bits[..bytes].copy_from_slice(b);
                T::from_bits(u64::from_le_bytes(bits))
            })
            .collect();
        Ok(output)
    };
    device_outputs.iter().map(copy_out).collect()
}

/// Runs `steps` time steps of `stencil` on `stream`, asynchronously: `a` holds the state, one
/// buffer per state field (the first input fields, one per output field, each output field the
/// next state of the input field of its number), `b` as many buffers as long, and each launch
/// reads one of each pair and writes the other (ping-pong): launches of the fused kernel
/// (`stencil.steps_per_launch()` steps each), then one launch for the steps left (a fused
/// kernel of that many, or the one-step kernel for one). Returns which buffers hold the result
/// once the stream gets there; under `valid` it is their first `n - 2 * radius * steps`
/// elements, the rest of both buffers being scratch. `coefficients` holds the other input
/// fields (one per window after the state's, in order, each as long as `a`), which stay as
/// given: under `valid` each launch reads them where the state lies.
///
/// Lengths are checked before any CUDA call ([`Error::Length`]). The fused kernel loads and
/// stores `a` and `b` with 16-byte vectors, so both must start 16-byte aligned
/// ([`Error::Misaligned`]); every launch has [`launch`]'s other rules. Under `valid` with
/// coefficient fields, a one-step launch whose coefficient window would start mid-vector reads
/// an aligned copy of it, and then this waits for the stream before returning (the copies are
/// freed).
///
/// This is [`launch_steps_grid`] over the shape `[a.len()]`.
pub fn launch_steps<T, D, P>(
    stencil: &Stencil<T, P>,
    stream: &Stream,
    a: &mut [&mut DeviceSlice<D>],
    b: &mut [&mut DeviceSlice<D>],
    coefficients: &[&DeviceSlice<D>],
    steps: usize,
    params: P,
) -> Result<Holds, Error>
where
    T: Element,
    D: DeviceElement<T>,
    P: Params,
{
    let shape = Extent::x(a.first().map_or(0, |a| a.len()));
    launch_steps_grid(stencil, stream, a, b, coefficients, shape, steps, params)
}

/// [`launch_steps`] over grids of shape `shape` (row-major, as [`launch_grid`] takes them): `a`
/// holds the state, `b` as many elements; under `valid` the result is the first elements of
/// the shrunk shape (each dimension `2 * radius * steps` shorter), packed row-major.
/// Coefficient fields of a 2D or 3D stencil under `valid`: each launch after the first reads a
/// packed copy of the part where the shrunk state lies. A 2D fused launch's edge kernel runs on
/// a second stream this makes (and drops when all is queued), forked from `stream` by an event
/// and joined back before the next launch, so to `stream`'s later work the run is in order.
// One argument per part of a run: the stencil, the stream, the buffers, the shape, the steps, the parameters.
#[allow(clippy::too_many_arguments)]
pub fn launch_steps_grid<T, D, P>(
    stencil: &Stencil<T, P>,
    stream: &Stream,
    a: &mut [&mut DeviceSlice<D>],
    b: &mut [&mut DeviceSlice<D>],
    coefficients: &[&DeviceSlice<D>],
    shape: impl Into<Extent>,
    steps: usize,
    params: P,
) -> Result<Holds, Error>
where
    T: Element,
    D: DeviceElement<T>,
    P: Params,
{
    let lens: Vec<usize> = coefficients.iter().map(|c| c.len()).collect();
    let addresses = |buffers: &[&mut DeviceSlice<D>]| -> Vec<(u64, usize)> {
        buffers.iter().map(|buffer| (buffer.as_device_ptr().as_raw(), buffer.len())).collect()
    };
    let run = StepRun::plan(stencil, shape.into(), &addresses(a), &addresses(b), &lens, steps)?;
    let slices = |buffers: &[&mut DeviceSlice<D>]| -> Vec<DeviceSlice<D>> { buffers.iter().map(|b| **b).collect() };
    let (a, b) = (slices(a), slices(b));
    // Made by the first launch that splits, dropped when all are queued.
    let mut side = None;
    // Aligned copies of coefficient windows, kept until the launches that read them are done.
    let mut copies: Vec<DeviceBuffer<D>> = Vec::new();
    for step in &run.launches {
        let (from, to) = match step.from {
            Holds::A => (&a, &b),
            Holds::B => (&b, &a),
        };
        let state: Vec<DeviceSlice<D>> = from.iter().map(|field| field.index(..step.input_len)).collect();
        let outputs: Vec<DeviceSlice<D>> = to.iter().map(|field| field.index(..step.output_len)).collect();
        let mut windows: Vec<DeviceSlice<D>> = match step.coefficients {
            CoefficientPart::Span { from, len } => coefficients.iter().map(|c| c.index(from..from + len)).collect(),
            // A grid's coefficients where the shrunk state lies, packed into a copy of their own.
            CoefficientPart::Box(part) => {
                let mut boxes = Vec::with_capacity(coefficients.len());
                for c in coefficients {
                    let len = part.elements();
                    // SAFETY: the copy below writes every element before any launch reads it.
                    let copy = unsafe { DeviceBuffer::<D>::uninitialized(len) }
                        .map_err(|e| Error::cust(format!("allocating a copy of {len} coefficient elements"), e))?;
                    let (src, dst) = (c.as_device_ptr().as_raw(), copy.as_device_ptr().as_raw());
                    steps::copy_box(&part, std::mem::size_of::<D>(), src, dst, stream.as_inner().cast())?;
                    boxes.push(*copy);
                    copies.push(copy);
                }
                boxes
            }
        };
        let kernels = run.kernels(stencil, step);
        // Under `valid` a one-step launch reads the coefficients from an offset, which may break
        // the one-step kernel's vector alignment: it reads an aligned copy of its window instead.
        let required = u64::from(kernels.iter().map(launch::required_alignment).max().unwrap_or(1));
        for window in windows.iter_mut().filter(|w| w.as_device_ptr().as_raw() % required != 0) {
            let len = window.len();
            // SAFETY: the copy below writes every element before any launch reads it.
            let mut copy = unsafe { DeviceBuffer::<D>::uninitialized(len) }
                .map_err(|e| Error::cust(format!("allocating an aligned copy of {len} coefficient elements"), e))?;
            // SAFETY: both buffers outlive the copy: the copies are kept until the stream is done.
            unsafe { copy.async_copy_from(window, stream) }
                .map_err(|e| Error::cust("copying a coefficient window (cuMemcpyDtoDAsync)", e))?;
            *window = *copy;
            copies.push(copy);
        }
        let inputs: Vec<&DeviceSlice<D>> = state.iter().chain(&windows).collect();
        let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
        let out_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
        let raw_outputs: Vec<RawBuffer> = outputs.iter().map(raw).collect();
        let plans = launch::plans(kernels, step.input_shape, &lens, &out_lens, &params, None)?;
        steps::queue(&plans, stream.as_inner().cast(), &mut side, &raw_inputs(&inputs), &raw_outputs)?;
    }
    if !copies.is_empty() {
        stream.synchronize().map_err(|e| {
            Error::cust(format!("running {steps} steps of stencil `{}` (stream synchronize)", stencil.name()), e)
        })?;
    }
    Ok(run.holds)
}

/// Runs `steps` time steps of `stencil` on the GPU from host slices (`inputs` as for [`run`]:
/// the state fields first, one per output field, then the coefficient fields) and returns the
/// final state, one `Vec` per state field: copies in, runs [`launch_steps`], waits, copies out.
/// Lengths are checked before the GPU is touched.
pub fn run_steps<T, P>(stencil: &Stencil<T, P>, inputs: &[&[T]], steps: usize, params: P) -> Result<Vec<Vec<T>>, Error>
where
    T: OnDevice,
    P: Params,
{
    let shape = Extent::x(inputs.first().map_or(0, |input| input.len()));
    run_steps_grid(stencil, inputs, shape, steps, params)
}

/// [`run_steps`] over grids of shape `shape`, one per input field (row-major); returns the
/// final state's grids (under `valid` each dimension `2 * radius * steps` shorter).
pub fn run_steps_grid<T, P>(
    stencil: &Stencil<T, P>,
    inputs: &[&[T]],
    shape: impl Into<Extent>,
    steps: usize,
    params: P,
) -> Result<Vec<Vec<T>>, Error>
where
    T: OnDevice,
    P: Params,
{
    let shape = shape.into();
    let n = inputs.first().map_or(0, |input| input.len());
    let out = steps::host_output_len(stencil, inputs, shape, steps)?;
    // `host_output_len` checked there is one input per state field.
    let (state, coefficients) = inputs.split_at(stencil.output_fields() as usize);
    if out == 0 {
        return Ok(vec![Vec::new(); state.len()]);
    }
    context::ensure_current()?;
    let stream = Stream::new(StreamFlags::DEFAULT, None)
        .map_err(|e| Error::cust("creating a stream (cuStreamCreateWithPriority)", e))?;
    let copy_in = |input: &[T]| {
        let values: Vec<T::Device> = input.iter().map(|&v| v.to_device()).collect();
        DeviceBuffer::from_slice(&values)
            .map_err(|e| Error::cust(format!("copying {} input elements to the GPU", input.len()), e))
    };
    let mut a = state.iter().map(|input| copy_in(input)).collect::<Result<Vec<_>, _>>()?;
    let mut b = state
        .iter()
        .map(|_| {
            // SAFETY: every element of `b` a launch reads was written by the launch before it,
            // and `T` is one of f32, f64, i32, u32, for which any bit pattern is a valid value
            // anyway.
            unsafe { DeviceBuffer::<T::Device>::uninitialized(n) }
                .map_err(|e| Error::cust(format!("allocating {n} elements on the GPU"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let coefficients = coefficients.iter().map(|input| copy_in(input)).collect::<Result<Vec<_>, _>>()?;
    let coefficients: Vec<&DeviceSlice<T::Device>> = coefficients.iter().map(|c| &**c).collect();
    let mut a_slices: Vec<&mut DeviceSlice<T::Device>> = a.iter_mut().map(|a| &mut **a).collect();
    let mut b_slices: Vec<&mut DeviceSlice<T::Device>> = b.iter_mut().map(|b| &mut **b).collect();
    let holds = launch_steps_grid(stencil, &stream, &mut a_slices, &mut b_slices, &coefficients, shape, steps, params)?;
    stream.synchronize().map_err(|e| {
        Error::cust(format!("running {steps} steps of stencil `{}` (stream synchronize)", stencil.name()), e)
    })?;
    let result = match holds {
        Holds::A => &a,
        Holds::B => &b,
    };
    let copy_out = |field: &DeviceBuffer<T::Device>| {
        let mut output = vec![T::zero_ref().to_device(); out];
        field
            .index(..out)
            .copy_to(&mut output[..])
            .map_err(|e| Error::cust(format!("copying {out} output elements from the GPU"), e))?;
        Ok(output.into_iter().map(T::from_device).collect())
    };
    result.iter().map(copy_out).collect()
}
