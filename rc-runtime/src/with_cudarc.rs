//! The cudarc back end: stencils on a cudarc stream and device slices or views, and
//! [`run_cudarc`] from host slices through cudarc's buffers. The launch is the same as cust's
//! (`launch.rs`): same checks, same kernel cache, same errors.
//!
//! cudarc loads the driver at run time too, and panics on its first driver call when there is
//! none, so [`run_cudarc`] asks rc-runtime's own driver loader first and returns
//! [`Error::NoDevice`] instead.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
};
use rc_core::{Element, Extent, Params, Stencil};

use crate::context;
use crate::error::Error;
use crate::launch::{self, output_shape, plan, RawBuffer};
use crate::side_stream::SideStream;
use crate::steps::{self, CoefficientPart, Holds, StepRun};

/// Launches `stencil` over `inputs` into `outputs` on `stream`, asynchronously: it returns once
/// the launch is queued, and the outputs are written when the stream gets there. The inputs (one
/// per input field, in the order the windows are declared: `&[&input]` for one) and the outputs
/// (one per output field: `&mut [&mut output]` for the one a stencil has today) are cudarc
/// `CudaSlice`s or views of them (`slice(..)`, `slice_mut(..)`); buffers used on other streams
/// are ordered against this one as cudarc does for its own launches.
///
/// The same rules as [`crate::launch`]: the inputs all of one length, each output of exactly
/// `stencil.output_len(len)` elements (an empty output launches nothing), not overlapping an
/// input ([`Error::Aliasing`]) or another output ([`Error::OutputsOverlap`]), every buffer
/// reachable from the stream's context
/// ([`Error::ForeignBuffer`]), vector distributions need 16-byte aligned buffers
/// ([`Error::Misaligned`]), and the context must be a primary one (`CudaContext::new`). The
/// stream's context is made current on this thread, as cudarc's own launches do.
///
/// This is [`launch_cudarc_grid`] over the shape `[len]`.
pub fn launch_cudarc<T, P>(
    stencil: &Stencil<T, P>,
    stream: &Arc<CudaStream>,
    inputs: &[&dyn DevicePtr<T>],
    outputs: &mut [&mut dyn DevicePtrMut<T>],
    params: P,
) -> Result<(), Error>
where
    T: Element + DeviceRepr,
    P: Params,
{
    let shape = Extent::x(inputs.first().map_or(0, |input| input.len()));
    launch_cudarc_grid(stencil, stream, inputs, outputs, shape, params)
}

/// Launches `stencil` over `inputs`, grids of shape `shape` (one per input field), into
/// `outputs` (one grid per output field) on `stream`, asynchronously, as [`launch_cudarc`] does
/// for 1D.
///
/// The same shapes as cust's `launch_grid`: `shape` is the inputs', outermost first (`[len]`,
/// `[rows, cols]` or `[depth, rows, cols]`, as many dimensions as the stencil); the grids are
/// contiguous and row-major, x fastest, with no padding between rows; each output has exactly
/// the element count of `stencil.output_shape(shape)`. Shape errors are [`Error::Length`], before
/// any CUDA call. Rows are packed, not pitched, so the kernels of vector distributions use
/// 16-byte vector loads (stores) only where an input (output) row is a whole number of 16-byte
/// vectors, and a slower element-wise path otherwise, with the same results.
pub fn launch_cudarc_grid<T, P>(
    stencil: &Stencil<T, P>,
    stream: &Arc<CudaStream>,
    inputs: &[&dyn DevicePtr<T>],
    outputs: &mut [&mut dyn DevicePtrMut<T>],
    shape: impl Into<Extent>,
    params: P,
) -> Result<(), Error>
where
    T: Element + DeviceRepr,
    P: Params,
{
    launch_kernels(std::slice::from_ref(stencil), stream, inputs, outputs, shape.into(), params, None, &mut None)
}

/// Launches `kernels` (one, or a split fused launch's two: `steps::queue`) over the same
/// buffers, ordered as [`launch_cudarc_grid`] orders one: the buffers' cudarc events are
/// waited for and recorded on `stream`, which the side stream forks from and joins.
// One argument per part of a launch: the kernels, the stream, the buffers, the shape, the
// parameters, the rows, the side stream.
#[allow(clippy::too_many_arguments)]
fn launch_kernels<T, P>(
    kernels: &[Stencil<T, P>],
    stream: &CudaStream,
    inputs: &[&dyn DevicePtr<T>],
    outputs: &mut [&mut dyn DevicePtrMut<T>],
    shape: Extent,
    params: P,
    rows: Option<Range<usize>>,
    side: &mut Option<SideStream>,
) -> Result<(), Error>
where
    T: Element + DeviceRepr,
    P: Params,
{
    let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
    let output_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
    let plans = launch::plans(kernels, shape, &lens, &output_lens, &params, rows)?;
    if plans.iter().all(|(_, plan)| plan.launch.is_none()) {
        return Ok(());
    }
    let context = stream.context();
    context.bind_to_thread().map_err(|e| Error::cudarc("making the stream's context current (cuCtxSetCurrent)", e))?;
    // The guards record, when dropped after the launch is queued, that `stream` used the buffers.
    let (raw_inputs, inputs_used): (Vec<RawBuffer>, Vec<_>) = inputs
        .iter()
        .map(|input| {
            let (address, used) = input.device_ptr(stream);
            (RawBuffer { address, len: input.len() }, used)
        })
        .unzip();
    let (raw_outputs, outputs_used): (Vec<RawBuffer>, Vec<_>) = outputs
        .iter_mut()
        .zip(output_lens)
        .map(|(output, len)| {
            let (address, used) = output.device_ptr_mut(stream);
            (RawBuffer { address, len }, used)
        })
        .unzip();
    // Waiting for the buffers' other streams is recorded as the context's error, not returned.
    let launched = context
        .check_err()
        .map_err(|e| Error::cudarc("ordering the buffers' streams before the launch", e))
        .and_then(|()| steps::queue(&plans, stream.cu_stream().cast(), side, &raw_inputs, &raw_outputs));
    if launched.is_err() {
        // Nothing was queued (a split launch's queued kernel is joined into `stream` already),
        // so there is no use to record; recording one would also fail for a buffer of another
        // context (its events belong to that context, not the stream's).
        std::mem::forget(inputs_used);
        std::mem::forget(outputs_used);
    }
    launched
}

/// Device 0's primary context, made by the first [`run_cudarc`] and kept for the process, so
/// that repeated calls do not retain and release the context each time.
static RUN_CONTEXT: Mutex<Option<Arc<CudaContext>>> = Mutex::new(None);

/// Runs `stencil` over `inputs` (one host slice per input field, all of one length: `&[&input]`
/// for one) on device 0 through cudarc and returns the output: copies in, launches on a new
/// stream, waits, copies out. Lengths are checked before the GPU is touched;
/// an empty output needs no GPU at all. Without a driver or a GPU it returns
/// [`Error::NoDevice`] (see [`Error::is_no_device`]).
///
/// This is [`run_cudarc_grid`] over the shape `[len]`.
pub fn run_cudarc<T, P>(stencil: &Stencil<T, P>, inputs: &[&[T]], params: P) -> Result<Vec<Vec<T>>, Error>
where
    T: Element + DeviceRepr + ValidAsZeroBits,
    P: Params,
{
    run_cudarc_grid(stencil, inputs, Extent::x(inputs.first().map_or(0, |input| input.len())), params)
}

/// Runs `stencil` over `inputs`, grids of shape `shape` (one per input field), on device 0
/// through cudarc and returns the output grid, of `stencil.output_shape(shape)`'s shape, as
/// [`run_cudarc`]. The grids are contiguous and row-major, x fastest (see
/// [`launch_cudarc_grid`]). Shapes are checked before the GPU is touched.
pub fn run_cudarc_grid<T, P>(
    stencil: &Stencil<T, P>,
    inputs: &[&[T]],
    shape: impl Into<Extent>,
    params: P,
) -> Result<Vec<Vec<T>>, Error>
where
    T: Element + DeviceRepr + ValidAsZeroBits,
    P: Params,
{
    let shape = shape.into();
    let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
    let (_, n_out) = output_shape(stencil, shape, lens.first().copied().unwrap_or(0))?;
    let fields = stencil.output_fields() as usize;
    if plan(stencil, shape, &lens, &vec![n_out; fields], &params, None)?.launch.is_none() {
        return Ok(vec![Vec::new(); fields]);
    }
    let stream = run_stream()?;
    let device_inputs = inputs
        .iter()
        .map(|&input| {
            stream
                .clone_htod(input)
                .map_err(|e| Error::cudarc(format!("copying {} input elements to the GPU", input.len()), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut device_outputs = (0..fields)
        .map(|_| {
            stream
                .alloc_zeros::<T>(n_out)
                .map_err(|e| Error::cudarc(format!("allocating {n_out} output elements on the GPU"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let device_inputs: Vec<&dyn DevicePtr<T>> = device_inputs.iter().map(|input| input as &dyn DevicePtr<T>).collect();
    let mut outputs: Vec<&mut dyn DevicePtrMut<T>> =
        device_outputs.iter_mut().map(|output| output as &mut dyn DevicePtrMut<T>).collect();
    launch_cudarc_grid(stencil, &stream, &device_inputs, &mut outputs, shape, params)?;
    stream
        .synchronize()
        .map_err(|e| Error::cudarc(format!("running stencil `{}` (stream synchronize)", stencil.name()), e))?;
    let copy_out = |output: &CudaSlice<T>| {
        stream.clone_dtoh(output).map_err(|e| Error::cudarc(format!("copying {n_out} output elements from the GPU"), e))
    };
    device_outputs.iter().map(copy_out).collect()
}

/// Whether cudarc can call the driver, asked before its first call (which panics without one):
/// [`Error::NoDevice`] without a driver, a GPU, or the library under the names cudarc tries.
pub(crate) fn cudarc_driver() -> Result<(), Error> {
    context::init()?;
    // SAFETY: only tries to open the library, as the loader below would.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoDevice {
            reason: "rc-runtime loaded the NVIDIA driver, but cudarc cannot find it under the names it tries".into(),
        });
    }
    Ok(())
}

/// A new stream on device 0's primary context (made by the first call and kept for the
/// process), for the `run` functions; [`Error::NoDevice`] without a driver or a GPU.
fn run_stream() -> Result<Arc<CudaStream>, Error> {
    cudarc_driver()?;
    let context = {
        // A poisoned lock only means another thread panicked while holding it; the Option
        // inside is always either empty or a whole context.
        let mut slot = RUN_CONTEXT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match slot.as_ref() {
            Some(context) => Arc::clone(context),
            None => {
                let context = CudaContext::new(0).map_err(|e| Error::cudarc("cudarc's CudaContext::new(0)", e))?;
                *slot = Some(Arc::clone(&context));
                context
            }
        }
    };
    context.new_stream().map_err(|e| Error::cudarc("creating a stream (cuStreamCreate)", e))
}

/// [`crate::launch_steps`] on cudarc slices: `steps` time steps of `stencil` on `stream`,
/// asynchronously, `a` holding the state (one buffer per state field) and `b` as many as long,
/// each launch reading one of each pair and writing the other; `coefficients` are the other
/// input fields, which stay as given. Returns which buffers hold the result (under `valid`, its first `n - 2 * radius * steps` elements). The same
/// checks as cust's `launch_steps`; under `valid` with coefficient fields a one-step launch whose
/// coefficient window starts mid-vector reads an aligned copy of it (freed in stream order).
pub fn launch_steps_cudarc<T, P>(
    stencil: &Stencil<T, P>,
    stream: &Arc<CudaStream>,
    a: &mut [&mut CudaSlice<T>],
    b: &mut [&mut CudaSlice<T>],
    coefficients: &[&CudaSlice<T>],
    steps: usize,
    params: P,
) -> Result<Holds, Error>
where
    T: Element + DeviceRepr,
    P: Params,
{
    let shape = Extent::x(a.first().map_or(0, |a| a.len()));
    launch_steps_cudarc_grid(stencil, stream, a, b, coefficients, shape, steps, params)
}

/// [`launch_steps_cudarc`] over grids of shape `shape`, as cust's `launch_steps_grid`.
// One argument per part of a run: the stencil, the stream, the buffers, the shape, the steps, the parameters.
#[allow(clippy::too_many_arguments)]
pub fn launch_steps_cudarc_grid<T, P>(
    stencil: &Stencil<T, P>,
    stream: &Arc<CudaStream>,
    a: &mut [&mut CudaSlice<T>],
    b: &mut [&mut CudaSlice<T>],
    coefficients: &[&CudaSlice<T>],
    shape: impl Into<Extent>,
    steps: usize,
    params: P,
) -> Result<Holds, Error>
where
    T: Element + DeviceRepr,
    P: Params,
{
    launch_steps_cudarc_rows(stencil, stream, a, b, coefficients, shape.into(), steps, params, None)
}

/// [`launch_steps_cudarc_grid`] where each launch computes only rows `rows(done)` of its
/// output along the outermost axis ([`rc_core::OutputRows`]), `done` the steps of the run done
/// when it ends; its other rows keep what they held. How a band of a split grid computes only
/// the rows still exact ([`rc_core::Decomposition::exact_rows`]).
// As launch_steps_cudarc_grid, and the rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_steps_cudarc_rows<T, P>(
    stencil: &Stencil<T, P>,
    stream: &Arc<CudaStream>,
    a: &mut [&mut CudaSlice<T>],
    b: &mut [&mut CudaSlice<T>],
    coefficients: &[&CudaSlice<T>],
    shape: Extent,
    steps: usize,
    params: P,
    rows: Option<&dyn Fn(usize) -> Range<usize>>,
) -> Result<Holds, Error>
where
    T: Element + DeviceRepr,
    P: Params,
{
    let lens: Vec<usize> = coefficients.iter().map(|c| c.len()).collect();
    let address = |buffer: &dyn DevicePtr<T>| buffer.device_ptr(stream).0;
    let addresses = |buffers: &[&mut CudaSlice<T>]| -> Vec<(u64, usize)> {
        buffers.iter().map(|buffer| (address(&**buffer), buffer.len())).collect()
    };
    let run = StepRun::plan(stencil, shape, &addresses(a), &addresses(b), &lens, steps)?;
    // Made by the first launch that splits, dropped when all are queued.
    let mut side = None;
    for step in &run.launches {
        let kernels = run.kernels(stencil, step);
        // A grid's coefficients where the shrunk state lies, packed into copies of their own.
        let boxes = match step.coefficients {
            CoefficientPart::Span { .. } => Vec::new(),
            CoefficientPart::Box(part) => coefficients
                .iter()
                .map(|c| {
                    let len = part.elements();
                    // SAFETY: the copy below writes every element before any launch reads it.
                    let copy = unsafe { stream.alloc::<T>(len) }
                        .map_err(|e| Error::cudarc(format!("allocating a copy of {len} coefficient elements"), e))?;
                    steps::copy_box(
                        &part,
                        std::mem::size_of::<T>(),
                        address(*c),
                        address(&copy),
                        stream.cu_stream().cast(),
                    )?;
                    Ok(copy)
                })
                .collect::<Result<Vec<CudaSlice<T>>, Error>>()?,
        };
        let windows: Vec<CudaView<'_, T>> = match step.coefficients {
            CoefficientPart::Span { from, len } => coefficients.iter().map(|c| c.slice(from..from + len)).collect(),
            CoefficientPart::Box(_) => boxes.iter().map(|c| c.slice(..)).collect(),
        };
        // Under `valid` a one-step launch reads the coefficients from an offset, which may break
        // the one-step kernel's vector alignment: it reads an aligned copy of its window instead.
        let required = u64::from(kernels.iter().map(launch::required_alignment).max().unwrap_or(1));
        let copies = windows
            .iter()
            .map(|w| match address(w) % required {
                0 => Ok(None),
                _ => stream
                    .clone_dtod(w)
                    .map(Some)
                    .map_err(|e| Error::cudarc("copying a coefficient window (cuMemcpyDtoDAsync)", e)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let coefficients: Vec<&dyn DevicePtr<T>> = windows
            .iter()
            .zip(&copies)
            .map(|(window, copy)| match copy {
                Some(copy) => copy as &dyn DevicePtr<T>,
                None => window as &dyn DevicePtr<T>,
            })
            .collect();
        let (input_len, output_len) = (step.input_len, step.output_len);
        let (state, mut outputs): (Vec<CudaView<'_, T>>, Vec<CudaViewMut<'_, T>>) = match step.from {
            Holds::A => (
                a.iter().map(|field| field.slice(..input_len)).collect(),
                b.iter_mut().map(|field| field.slice_mut(..output_len)).collect(),
            ),
            Holds::B => (
                b.iter().map(|field| field.slice(..input_len)).collect(),
                a.iter_mut().map(|field| field.slice_mut(..output_len)).collect(),
            ),
        };
        let inputs: Vec<&dyn DevicePtr<T>> =
            state.iter().map(|field| field as &dyn DevicePtr<T>).chain(coefficients.iter().copied()).collect();
        let mut outputs: Vec<&mut dyn DevicePtrMut<T>> =
            outputs.iter_mut().map(|output| output as &mut dyn DevicePtrMut<T>).collect();
        let rows = rows.map(|rows| rows(step.done));
        launch_kernels(kernels, stream, &inputs, &mut outputs, step.input_shape, params, rows, &mut side)?;
    }
    Ok(run.holds)
}

/// [`crate::run_steps`] through cudarc: copies in, [`launch_steps_cudarc`] on a new stream of
/// device 0, waits, copies the final state out, one `Vec` per state field. Lengths are checked
/// before the GPU is touched.
pub fn run_steps_cudarc<T, P>(
    stencil: &Stencil<T, P>,
    inputs: &[&[T]],
    steps: usize,
    params: P,
) -> Result<Vec<Vec<T>>, Error>
where
    T: Element + DeviceRepr + ValidAsZeroBits,
    P: Params,
{
    let shape = Extent::x(inputs.first().map_or(0, |input| input.len()));
    run_steps_cudarc_grid(stencil, inputs, shape, steps, params)
}

/// [`run_steps_cudarc`] over grids of shape `shape`, one per input field (row-major).
pub fn run_steps_cudarc_grid<T, P>(
    stencil: &Stencil<T, P>,
    inputs: &[&[T]],
    shape: impl Into<Extent>,
    steps: usize,
    params: P,
) -> Result<Vec<Vec<T>>, Error>
where
    T: Element + DeviceRepr + ValidAsZeroBits,
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
    let stream = run_stream()?;
    let copy_in = |input: &[T]| {
        stream
            .clone_htod(input)
            .map_err(|e| Error::cudarc(format!("copying {} input elements to the GPU", input.len()), e))
    };
    let mut a = state.iter().map(|input| copy_in(input)).collect::<Result<Vec<_>, _>>()?;
    let mut b = state
        .iter()
        .map(|_| {
            stream.alloc_zeros::<T>(n).map_err(|e| Error::cudarc(format!("allocating {n} elements on the GPU"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let coefficients = coefficients.iter().map(|input| copy_in(input)).collect::<Result<Vec<_>, _>>()?;
    let coefficients: Vec<&CudaSlice<T>> = coefficients.iter().collect();
    let mut a_slices: Vec<&mut CudaSlice<T>> = a.iter_mut().collect();
    let mut b_slices: Vec<&mut CudaSlice<T>> = b.iter_mut().collect();
    let holds =
        launch_steps_cudarc_grid(stencil, &stream, &mut a_slices, &mut b_slices, &coefficients, shape, steps, params)?;
    let result = match holds {
        Holds::A => &a,
        Holds::B => &b,
    };
    let outputs = result
        .iter()
        .map(|field| {
            stream
                .clone_dtoh(&field.slice(..out))
                .map_err(|e| Error::cudarc(format!("copying {out} output elements from the GPU"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    stream.synchronize().map_err(|e| {
        Error::cudarc(format!("running {steps} steps of stencil `{}` (stream synchronize)", stencil.name()), e)
    })?;
    Ok(outputs)
}
