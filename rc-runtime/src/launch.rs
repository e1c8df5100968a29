//! Launching a stencil, whichever back end the caller's stream and buffers come from: the plan
//! (shapes, grid, parameters; no CUDA), the checks on buffers and kernel, and the launch. The
//! back ends (`with_cust.rs`, `with_cudarc.rs`) only turn their types into driver handles.
//!
//! 1D, 2D and 3D stencils take the same path: a 1D launch is a launch over the shape
//! `Extent::x(input.len())`, whose checks are the 1D length checks (rc-core's `check_shapes`).
//! A stencil of several input fields takes one input buffer per field, all of one length, and
//! one output buffer per output field, all of one length (rc-core's `check_buffers`): the
//! launch carries its outputs as a list, matched against the kernel's parameters, one element
//! today.

use std::ops::Range;
use std::ptr;

use rc_core::{
    Dims, Element, Extent, LaunchShape, LengthError, OutputRows, Params, Scalar, ScalarType, Stencil, Strategy,
};

use crate::abi::{KernelArgs, LaunchValues};
use crate::buffers;
use crate::context;
use crate::driver::{self, CuStream};
use crate::error::{check, Error};
use crate::module;

/// What a launch needs that can be worked out without the GPU. Computed first, so that wrong
/// shapes and lengths are reported before any CUDA call.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    /// The input's shape (as given) and element count, every field's.
    pub input_shape: Extent,
    pub n: usize,
    /// The output's shape and element count, as the input's shape calls for.
    pub output_shape: Extent,
    pub n_out: usize,
    /// The output rows the launch computes along the outermost axis: all of them, or a
    /// sub-grid's ([`OutputRows`]).
    pub rows: OutputRows,
    /// `None` for an empty output: nothing to launch.
    pub launch: Option<LaunchShape>,
    pub scalars: Vec<Scalar>,
}

/// Checks that there is one input per input field, each of `inputs` elements and shape
/// `input`, and one output per output field, each of `outputs` elements, the shape the input
/// calls for, that `rows` (every row for `None`) are rows of it, and that the grid fits.
pub(crate) fn plan<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    input: Extent,
    inputs: &[usize],
    outputs: &[usize],
    params: &P,
    rows: Option<Range<usize>>,
) -> Result<Plan, Error> {
    let length = |source| Error::Length { stencil: stencil.name(), source };
    let pattern = stencil.pattern();
    let input_len = inputs.first().copied().unwrap_or(0);
    check_1d_shape(pattern.dims(), input, input_len).map_err(length)?;
    let (fields, output_fields) = (stencil.fields(), stencil.output_fields());
    let output_shape = pattern.check_buffers(input, inputs, fields, outputs, output_fields).map_err(length)?;
    // `check_buffers` made sure there is an output and every one has exactly this many elements.
    let n_out = outputs.first().copied().unwrap_or(0);
    let rows = match rows {
        Some(rows) => OutputRows::of(output_shape, rows.start, rows.end).map_err(length)?,
        None => OutputRows::all(output_shape),
    };
    let launch = match n_out == 0 || rows.is_empty() {
        true => None,
        false => stencil.launch_shape_of_rows(input, output_shape, rows).map_err(length)?,
    };
    Ok(Plan { input_shape: input, n: input_len, output_shape, n_out, rows, launch, scalars: params.scalars() })
}

/// A kernel and its plan.
pub(crate) type Planned<'a, T, P> = (&'a Stencil<T, P>, Plan);

/// [`plan`] for each of `kernels` (a launch's one kernel, or a split fused launch's two) over
/// the same buffers and rows.
pub(crate) fn plans<'a, T: Element, P: Params>(
    kernels: &'a [Stencil<T, P>],
    input: Extent,
    inputs: &[usize],
    outputs: &[usize],
    params: &P,
    rows: Option<Range<usize>>,
) -> Result<Vec<Planned<'a, T, P>>, Error> {
    kernels.iter().map(|kernel| Ok((kernel, plan(kernel, input, inputs, outputs, params, rows.clone())?))).collect()
}

/// rc-core checks a 1D stencil's 1D launch by the buffers' lengths alone (the 1D API has no
/// shape to check), so a 1D shape given to a grid launch is checked against the input's length
/// here: `[len]` must be the input's length, as `[rows, cols]` must be its element count. Other
/// dimension counts are rc-core's to refuse ([`LengthError::Dimensions`]).
fn check_1d_shape(stencil: Dims, input: Extent, input_len: usize) -> Result<(), LengthError> {
    if stencil == Dims::One && input.dims() == Dims::One && input.along_x() != input_len {
        return Err(LengthError::InputShape { shape: input, expected: input.along_x(), got: input_len });
    }
    Ok(())
}

/// The output fields `run` returned, one `Vec` each, as the array of them a stencil of `N`
/// output fields returns (generated code turns it into the function's own tuple or array).
#[doc(hidden)]
pub fn output_fields<T: Element, P: Params, const N: usize>(
    stencil: &Stencil<T, P>,
    fields: Vec<Vec<T>>,
) -> Result<[Vec<T>; N], Error> {
    let got = fields.len();
    <[Vec<T>; N]>::try_from(fields)
        .map_err(|_| Error::Length { stencil: stencil.name(), source: LengthError::OutputCount { expected: N, got } })
}

/// The output's shape for an input of shape `input` with `input_len` elements, as the error
/// `run` reports (before it allocates the output).
pub(crate) fn output_shape<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    input: Extent,
    input_len: usize,
) -> Result<(Extent, usize), Error> {
    let length = |source| Error::Length { stencil: stencil.name(), source };
    check_1d_shape(stencil.pattern().dims(), input, input_len).map_err(length)?;
    let output = stencil.pattern().output_shape(input).map_err(length)?;
    let n_out = output.len().ok_or(LengthError::ShapeOverflow { shape: output }).map_err(length)?;
    Ok((output, n_out))
}

/// How messages name input field `field`: `input` for a stencil of one field, `input 1` of
/// several (numbered from 0 as the windows are declared, as rc-core's length errors do).
pub(crate) fn input_name<T: Element, P: Params>(stencil: &Stencil<T, P>, field: usize) -> String {
    match stencil.fields() {
        1 => "input".to_string(),
        _ => format!("input {field}"),
    }
}

/// How messages name output field `field`: `output` for a stencil of one output field, `output
/// 1` of several (numbered from 0 in the order the body returns them).
pub(crate) fn output_name<T: Element, P: Params>(stencil: &Stencil<T, P>, field: usize) -> String {
    match stencil.output_fields() {
        1 => "output".to_string(),
        _ => format!("output {field}"),
    }
}

/// Vector loads and stores need their buffers aligned to the access size.
pub(crate) fn check_alignment<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    buffer: &str,
    address: u64,
) -> Result<(), Error> {
    let required = required_alignment(stencil);
    if address % required as u64 != 0 {
        return Err(Error::Misaligned { stencil: stencil.name(), buffer: buffer.to_string(), required, address });
    }
    Ok(())
}

/// The bytes every buffer's address must be a multiple of: the stencil's vector access size.
pub(crate) fn required_alignment<T: Element, P: Params>(stencil: &Stencil<T, P>) -> u32 {
    match stencil.strategy() {
        Strategy::RegisterCache => stencil.layout().access_bytes(T::TYPE),
        _ => T::TYPE.bytes(),
    }
}

/// The loaded kernel must run blocks of the pattern's threads per block: `kernel_max` is its
/// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
pub(crate) fn check_threads_per_block(stencil: &'static str, shape: LaunchShape, kernel_max: u32) -> Result<(), Error> {
    if shape.threads_per_block > kernel_max {
        return Err(Error::LaunchBounds { stencil, expected: shape.threads_per_block, got: kernel_max });
    }
    Ok(())
}

/// A device buffer as the driver sees it: where it starts and how many elements it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawBuffer {
    pub address: u64,
    pub len: usize,
}

/// The launch itself, shared by the back ends once each has turned its stream and buffers into
/// driver handles and addresses, and has made a `plan` with a launch shape (so shapes and lengths
/// were checked before any CUDA call). Checks alignment and overlap, then that the stream's
/// context is current and can reach every buffer, loads the kernel, checks its ABI and block
/// size, and queues it. `inputs` has one buffer per input field and `outputs` one per output
/// field (the plan checked their counts and lengths); inputs may overlap each other, as the
/// kernel only reads them, but no output may overlap an input or another output.
pub(crate) fn launch_planned<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    plan: &Plan,
    shape: LaunchShape,
    stream: CuStream,
    inputs: &[RawBuffer],
    outputs: &[RawBuffer],
) -> Result<(), Error> {
    let names: Vec<String> = (0..inputs.len()).map(|field| input_name(stencil, field)).collect();
    let output_names: Vec<String> = (0..outputs.len()).map(|field| output_name(stencil, field)).collect();
    for (buffer, name) in inputs.iter().chain(outputs).zip(names.iter().chain(&output_names)) {
        check_alignment(stencil, name, buffer.address)?;
    }
    let element_bytes = std::mem::size_of::<T>();
    let bytes = |buffer: &RawBuffer| buffers::byte_range(buffer.address, buffer.len, element_bytes);
    for (i, (output, written)) in outputs.iter().zip(&output_names).enumerate() {
        for (input, name) in inputs.iter().zip(&names) {
            buffers::check_disjoint(stencil.name(), name, written, bytes(input), bytes(output))?;
        }
        for (other, other_name) in outputs.iter().zip(&output_names).skip(i + 1) {
            buffers::check_outputs_disjoint(stencil.name(), written, other_name, bytes(output), bytes(other))?;
        }
    }
    let context = context::for_launch(stream)?;
    for (buffer, name) in inputs.iter().chain(outputs).zip(names.iter().chain(&output_names)) {
        buffers::check_reachable(stencil.name(), name, buffer.address, context)?;
    }
    let kernel = module::kernel(context, stencil.name(), stencil.ptx(), stencil.entry())?;
    let types: Vec<ScalarType> = plan.scalars.iter().map(|s| s.ty).collect();
    let (dims, fields, output_fields) = (stencil.pattern().dims(), stencil.fields(), stencil.output_fields());
    kernel.check_abi(stencil.name(), stencil.entry(), dims, fields, output_fields, &types)?;
    check_threads_per_block(
        stencil.name(),
        shape,
        crate::resources::max_threads_per_block(kernel.function(), stencil.name())?,
    )?;
    let dynamic_shared_bytes = stencil.dynamic_shared_bytes();
    crate::resources::allow_dynamic_shared_bytes(kernel.function(), dynamic_shared_bytes, stencil.name())?;

    let prefetch_rows = match stencil.pattern().prefetches() {
        true => {
            let resident = kernel.resident_blocks(shape.threads_per_block, dynamic_shared_bytes, stencil.name())?;
            rc_core::prefetch::rows_ahead(&stencil.pattern(), resident, &shape)
        }
        false => 0,
    };
    let addresses: Vec<u64> = inputs.iter().map(|input| input.address).collect();
    let output_addresses: Vec<u64> = outputs.iter().map(|output| output.address).collect();
    let mut args = kernel_args(stencil, plan, &addresses, &output_addresses, prefetch_rows);
    let mut pointers = args.pointers();
    // SAFETY: the function belongs to the current context (looked up with it) and stays loaded
    // while `kernel` lives; the argument block matches the parameter list the entry declares
    // (checked above); the buffers are live device allocations of the lengths passed (the back
    // ends take them from their buffer types, and the plan checked that the shapes have exactly
    // those element counts), which the driver did not report as another context's (checked
    // above), and each output's bytes are disjoint from the inputs' and the other outputs'
    // (checked above: cust's `DeviceSlice` is `Copy`, so an exclusive borrow alone does not prove
    // that). The driver copies the arguments before returning.
    let code = unsafe {
        driver::cuLaunchKernel(
            kernel.function(),
            shape.grid[0],
            shape.grid[1],
            shape.grid[2],
            shape.threads_per_block,
            1,
            1,
            dynamic_shared_bytes,
            stream,
            pointers.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    check(code, || {
        let shape_note = match plan.output_shape.dims() {
            Dims::One => String::new(),
            _ => format!(" of shape {}", plan.output_shape.as_array()),
        };
        let dynamic_note = match dynamic_shared_bytes {
            0 => String::new(),
            bytes => format!(" with {bytes} bytes of dynamic shared memory"),
        };
        format!(
            "cuLaunchKernel for stencil `{}` ({shape}{dynamic_note}, {} outputs{shape_note})",
            stencil.name(),
            plan.n_out
        )
    })
}

/// The argument block of `plan`'s launch over the input buffers at `inputs` (one per input
/// field) and the output buffers at `outputs` (one per output field), a 2D tile prefetching
/// `prefetch_rows` rows ahead, in the order of the stencil's kernel parameter list.
pub(crate) fn kernel_args<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    plan: &Plan,
    inputs: &[u64],
    outputs: &[u64],
    prefetch_rows: u64,
) -> KernelArgs {
    let values = LaunchValues {
        inputs,
        outputs,
        n: plan.n as u64,
        n_out: plan.n_out as u64,
        input_shape: plan.input_shape,
        output_shape: plan.rows.given(plan.output_shape),
        first_row: plan.rows.first as u64,
        prefetch_rows,
        scalars: &plan.scalars,
    };
    KernelArgs::new(stencil.pattern().dims(), &values)
}

#[cfg(test)]
mod tests {
    use rc_core::body::{Body, Node};
    use rc_core::{BodyError, Boundary, Layout, Offset, Pattern, Radius, Strategy, Window};

    use super::*;

    fn body() -> Result<Body, BodyError> {
        Body::new(ScalarType::F32, 1, vec![ScalarType::F32], 2, vec![Node::Tap(0, rc_core::Offset::x(0))], vec![0])
    }
    fn reference(w: &[Window<'_, f32>], _: (f32,), out: &mut [f32]) {
        // One output field.
        out[0] = w[0][0];
    }
    /// A stencil for the checks `launch` makes before CUDA: its PTX is never loaded.
    const fn stencil(name: &'static str, pattern: Pattern, strategy: Strategy, layout: Layout) -> Stencil<f32, (f32,)> {
        Stencil::from_parts(name, pattern, strategy, layout, "", "e", 1, 1, body, reference)
    }
    const VALID: Stencil<f32, (f32,)> =
        stencil("s", Pattern::new_unchecked(2, 32, 4, Boundary::Valid), Strategy::RegisterCache, Layout::RoundRobin);
    const ZERO: Stencil<f32, (f32,)> =
        stencil("z", Pattern::new_unchecked(2, 32, 4, Boundary::Zero), Strategy::RegisterCache, Layout::RoundRobin);

    const GRANULE: Stencil<f32, (f32,)> =
        stencil("g", Pattern::new_unchecked(2, 32, 8, Boundary::Valid), Strategy::RegisterCache, Layout::Granule(8));
    const GRANULE_SHARED: Stencil<f32, (f32,)> =
        stencil("h", Pattern::new_unchecked(2, 32, 8, Boundary::Valid), Strategy::SharedMemory, Layout::Granule(8));

    #[test]
    fn vector_distributions_refuse_buffers_that_start_mid_vector() {
        assert!(check_alignment(&GRANULE, "input", 0x7000_0000).is_ok());
        let err = check_alignment(&GRANULE, "output", 0x7000_0004).expect_err("4 bytes into a 16-byte vector");
        assert!(
            matches!(err, Error::Misaligned { stencil: "g", ref buffer, required: 16, address: 0x7000_0004 } if buffer == "output")
        );
        assert_eq!(
            err.to_string(),
            "stencil `g`: the output buffer must start at a multiple of 16 bytes (its distribution loads and \
             stores 16-byte vectors), got address 0x70000004; use a buffer from its own allocation, or \
             distribution round_robin"
        );
        // Element-wise kernels take any element-aligned sub-slice.
        assert!(check_alignment(&VALID, "input", 0x7000_0004).is_ok());
        assert!(check_alignment(&GRANULE_SHARED, "input", 0x7000_0004).is_ok());
    }

    // `launch` computes this plan before its first CUDA call; these are its refusals.
    #[test]
    fn lengths_are_checked_before_any_cuda_call() {
        let err = plan_1d(&VALID, 10, 5, &(1.0,)).expect_err("10 - 4 = 6 outputs, not 5");
        assert!(matches!(err, Error::Length { stencil: "s", source: LengthError::Output { expected: 6, got: 5, .. } }));
        assert_eq!(
            err.to_string(),
            "stencil `s`: output has 5 elements, expected 6 for an input of 10 elements with boundary `valid`"
        );
        let err = plan_1d(&VALID, 4, 0, &(1.0,)).expect_err("shorter than a window");
        assert_eq!(
            err.to_string(),
            "stencil `s`: input has 4 elements, but boundary `valid` needs at least one whole window of 5 (2 * radius + 1)"
        );
        let err = plan_1d(&ZERO, 10, 8, &(1.0,)).expect_err("zero boundary: n outputs");
        assert!(err.to_string().contains("expected 10"), "{err}");
    }

    #[test]
    fn a_plan_has_the_shape_and_the_parameters() {
        let plan = plan_1d(&VALID, 1000, 996, &(0.5,)).expect("fits");
        // 996 outputs / 128 per warp = 8 warps = 256 threads = 1 block.
        assert_eq!(plan.n_out, 996);
        assert_eq!(plan.launch, Some(LaunchShape::linear(1, 256)));
        assert_eq!(plan.scalars, vec![Scalar::f32(0.5)]);
        // Nothing to do: no launch.
        assert_eq!(plan_empty().launch, None);
    }

    #[test]
    fn kernels_that_cannot_run_the_block_size_are_refused() {
        const BIG: Stencil<f32, (f32,)> = stencil(
            "b",
            Pattern::new_unchecked(2, 32, 4, Boundary::Valid).with_launch_bounds_unchecked(1024, None),
            Strategy::RegisterCache,
            Layout::RoundRobin,
        );
        let shape = plan_1d(&BIG, 100_000, 99_996, &(1.0,)).expect("fits").launch.expect("not empty");
        assert_eq!(shape.threads_per_block, 1024);
        assert!(check_threads_per_block("b", shape, 1024).is_ok());
        let err = check_threads_per_block("b", shape, 640).expect_err("the kernel allows 640 threads");
        assert!(matches!(err, Error::LaunchBounds { stencil: "b", expected: 1024, got: 640 }));
        assert_eq!(
            err.to_string(),
            "stencil `b`: the launch uses blocks of 1024 threads (max_threads_per_block), but the kernel \
             compiled for this GPU allows at most 640 (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: it needs too \
             many registers per thread); expected at least 1024: lower max_threads_per_block, the radius or \
             outputs_per_thread"
        );
        // The default 256 threads fit a kernel that allows 640.
        let shape = plan_1d(&VALID, 1000, 996, &(1.0,)).expect("fits").launch.expect("not empty");
        assert!(check_threads_per_block("s", shape, 640).is_ok());
    }

    #[test]
    fn the_launch_uses_the_patterns_threads_per_block() {
        const SMALL: Stencil<f32, (f32,)> = stencil(
            "m",
            Pattern::new_unchecked(2, 32, 4, Boundary::Valid).with_launch_bounds_unchecked(64, Some(4)),
            Strategy::RegisterCache,
            Layout::RoundRobin,
        );
        // 996 outputs / 128 per warp = 8 warps = 256 threads = 4 blocks of 64.
        let plan = plan_1d(&SMALL, 1000, 996, &(0.5,)).expect("fits");
        assert_eq!(plan.launch, Some(LaunchShape::linear(4, 64)));
    }

    fn body_two_fields() -> Result<Body, BodyError> {
        let nodes =
            vec![Node::Tap(0, Offset::x(0)), Node::Tap(1, Offset::x(2)), Node::Binary(rc_core::BinaryOp::Add, 0, 1)];
        Body::new(ScalarType::F32, 2, vec![ScalarType::F32], 2, nodes, vec![2])
    }
    fn reference_two_fields(w: &[Window<'_, f32>], _: (f32,), out: &mut [f32]) {
        // One output field.
        out[0] = w[0][0] + w[1][2];
    }
    const TWO_FIELDS: Stencil<f32, (f32,)> = Stencil::from_parts(
        "t",
        Pattern::new_unchecked(2, 32, 4, Boundary::Valid),
        Strategy::RegisterCache,
        Layout::RoundRobin,
        "",
        "e",
        2,
        1,
        body_two_fields,
        reference_two_fields,
    );

    #[test]
    fn every_input_field_is_checked_before_any_cuda_call_and_passed_in_order() {
        let err = plan(&TWO_FIELDS, Extent::x(10), &[10], &[6], &(1.0,), None).expect_err("one input for two windows");
        assert!(
            matches!(err, Error::Length { source: LengthError::InputCount { expected: 2, got: 1 }, .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "stencil `t`: expected 2 inputs (one per window the function declares, in order), got 1"
        );
        let err = plan(&TWO_FIELDS, Extent::x(10), &[10, 9], &[6], &(1.0,), None).expect_err("input 1 is shorter");
        assert_eq!(
            err.to_string(),
            "stencil `t`: input 1 has 9 elements, expected 10 as input 0 has: a stencil's inputs share one length (one \
             shape in 2D and 3D), numbered from 0 in the order the windows are declared"
        );
        let plan = plan(&TWO_FIELDS, Extent::x(10), &[10, 10], &[6], &(0.5,), None).expect("fits");
        let args = kernel_args(&TWO_FIELDS, &plan, &[0x7000_0000, 0x9000_0000], &[0x8000_0000], 0);
        assert_eq!(args.values()[..5], [0x7000_0000, 0x9000_0000, 0x8000_0000, 10, 6]);
        assert_eq!((input_name(&TWO_FIELDS, 1), input_name(&VALID, 0)), ("input 1".to_string(), "input".to_string()));
    }

    #[test]
    fn the_outputs_are_a_list_checked_against_the_output_fields_before_any_cuda_call() {
        // One output field: a list of one buffer, neither none nor two.
        let err = plan(&VALID, Extent::x(10), &[10], &[6, 6], &(1.0,), None).expect_err("two outputs for one field");
        assert!(
            matches!(err, Error::Length { source: LengthError::OutputCount { expected: 1, got: 2 }, .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "stencil `s`: expected 1 output (one per output field, in the order the body returns them), got 2"
        );
        let err = plan(&VALID, Extent::x(10), &[10], &[], &(1.0,), None).expect_err("no output");
        assert!(matches!(err, Error::Length { source: LengthError::OutputCount { expected: 1, got: 0 }, .. }));
        // The output buffers' addresses go where the kernel's `Output` parameters are.
        let plan = plan(&VALID, Extent::x(10), &[10], &[6], &(1.0,), None).expect("fits");
        let args = kernel_args(&VALID, &plan, &[0x7000_0000], &[0x8000_0000], 0);
        assert_eq!(args.values()[..4], [0x7000_0000, 0x8000_0000, 10, 6]);
        assert_eq!(output_name(&VALID, 0), "output");
    }

    fn plan_empty() -> Plan {
        plan_1d(&ZERO, 0, 0, &(1.0,)).expect("empty is fine")
    }

    /// The plan of a 1D launch, as `launch` makes it: over the shape `[input_len]`.
    fn plan_1d<P: Params>(
        stencil: &Stencil<f32, P>,
        input_len: usize,
        output_len: usize,
        params: &P,
    ) -> Result<Plan, Error> {
        plan(stencil, Extent::x(input_len), &[input_len], &[output_len], params, None)
    }

    // 2D and 3D: the body is never evaluated here, but it is a 2D (3D) body, as the macro's.
    fn body_2d() -> Result<Body, BodyError> {
        Body::new(
            ScalarType::F32,
            1,
            vec![ScalarType::F32],
            Radius::yx(1, 1),
            vec![Node::Tap(0, Offset::yx(0, 0))],
            vec![0],
        )
    }
    fn body_3d() -> Result<Body, BodyError> {
        Body::new(
            ScalarType::F32,
            1,
            vec![ScalarType::F32],
            Radius::zyx(1, 1, 1),
            vec![Node::Tap(0, Offset::zyx(0, 0, 0))],
            vec![0],
        )
    }
    const fn grid(name: &'static str, pattern: Pattern, body: fn() -> Result<Body, BodyError>) -> Stencil<f32, (f32,)> {
        Stencil::from_parts(name, pattern, Strategy::RegisterCache, Layout::Granule(4), "", "e", 1, 1, body, reference)
    }
    /// Tiles of 8 rows of 128 outputs (32 lanes x 4), 8 warps (tiles) per block.
    const CLAMP_2D: Stencil<f32, (f32,)> =
        grid("c2", Pattern::grid_unchecked(Radius::yx(1, 1), 32, 4, 8, 1, Boundary::Clamp), body_2d);
    const VALID_2D: Stencil<f32, (f32,)> =
        grid("v2", Pattern::grid_unchecked(Radius::yx(1, 1), 32, 4, 8, 1, Boundary::Valid), body_2d);
    /// Tiles of 2 planes of 4 rows of 64 outputs (32 lanes x 2).
    const ZERO_3D: Stencil<f32, (f32,)> =
        grid("z3", Pattern::grid_unchecked(Radius::zyx(1, 1, 1), 32, 2, 4, 2, Boundary::Zero), body_3d);
    const VALID_3D: Stencil<f32, (f32,)> =
        grid("v3", Pattern::grid_unchecked(Radius::zyx(1, 1, 1), 32, 2, 4, 2, Boundary::Valid), body_3d);

    /// The plan's argument block as `u64`s, the stencil parameters left out; 2D tiles prefetch
    /// 48 rows ahead.
    fn extents_block<P: Params>(stencil: &Stencil<f32, P>, plan: &Plan) -> Vec<u64> {
        let args = kernel_args(stencil, plan, &[0x7000_0000], &[0x8000_0000], 48);
        let values = args.values();
        values[..values.len() - plan.scalars.len()].to_vec()
    }

    #[test]
    fn a_2d_plan_has_both_shapes_the_blocks_and_the_extents_in_kernel_order() {
        let plan = plan(&CLAMP_2D, Extent::yx(100, 2000), &[200_000], &[200_000], &(0.5,), None).expect("fits");
        assert_eq!(plan.input_shape, Extent::yx(100, 2000));
        assert_eq!(plan.output_shape, Extent::yx(100, 2000));
        assert_eq!((plan.n, plan.n_out), (200_000, 200_000));
        // 13 tile rows of 8 rows x 16 tiles along x, a block's 8 warps stacked along y: a grid
        // of 16 columns by 2 bands of blocks (the second one partial).
        assert_eq!(plan.launch, Some(LaunchShape { grid: [16, 2, 1], threads_per_block: 256 }));
        // input, output, n, n_out, in_y, in_x, out_y, out_x, first_row, prefetch_rows; then p0.
        assert_eq!(
            extents_block(&CLAMP_2D, &plan),
            [0x7000_0000, 0x8000_0000, 200_000, 200_000, 100, 2000, 100, 2000, 0, 48]
        );
        assert_eq!(kernel_args(&CLAMP_2D, &plan, &[0], &[0], 0).bytes(10)[..4], 0.5f32.to_bits().to_ne_bytes());

        // Rows 30..61 of the output: the kernel is given the first row and where the rows end,
        // and the launch covers 31 rows (4 tile rows: 1 band of blocks).
        let rows = Some(30..61);
        let part = super::plan(&CLAMP_2D, Extent::yx(100, 2000), &[200_000], &[200_000], &(0.5,), rows).expect("fits");
        assert_eq!(part.launch, Some(LaunchShape { grid: [16, 1, 1], threads_per_block: 256 }));
        assert_eq!(
            extents_block(&CLAMP_2D, &part),
            [0x7000_0000, 0x8000_0000, 200_000, 200_000, 100, 2000, 61, 2000, 30, 48]
        );
        // Rows past the output are refused, saying which.
        let err = super::plan(&CLAMP_2D, Extent::yx(100, 2000), &[200_000], &[200_000], &(0.5,), Some(90..101))
            .expect_err("past the output");
        assert!(err.to_string().contains("rows 90..101"), "{err}");

        // `valid` shrinks each dimension by twice its radius: the output's extents differ.
        let plan = super::plan(&VALID_2D, Extent::yx(10, 40), &[400], &[8 * 38], &(0.5,), None).expect("fits");
        assert_eq!(plan.output_shape, Extent::yx(8, 38));
        assert_eq!(plan.launch, Some(LaunchShape::linear(1, 256)));
        assert_eq!(extents_block(&VALID_2D, &plan), [0x7000_0000, 0x8000_0000, 400, 304, 10, 40, 8, 38, 0, 48]);
    }

    #[test]
    fn a_3d_plan_has_both_shapes_the_blocks_and_the_extents_in_kernel_order() {
        let plan = plan(&ZERO_3D, Extent::zyx(5, 9, 130), &[5 * 9 * 130], &[5 * 9 * 130], &(1.0,), None).expect("fits");
        assert_eq!(plan.output_shape, Extent::zyx(5, 9, 130));
        // 3 tile planes x 3 tile rows x 3 tiles along x = 27 tiles, numbered row-major: 4 blocks
        // of 8 warps.
        assert_eq!(plan.launch, Some(LaunchShape::linear(4, 256)));
        assert_eq!(extents_block(&ZERO_3D, &plan), [0x7000_0000, 0x8000_0000, 5850, 5850, 5, 9, 130, 5, 9, 130, 0]);

        let plan = super::plan(&VALID_3D, Extent::zyx(4, 6, 40), &[960], &[2 * 4 * 38], &(1.0,), None).expect("fits");
        assert_eq!(plan.output_shape, Extent::zyx(2, 4, 38));
        assert_eq!(plan.launch, Some(LaunchShape::linear(1, 256)));
        assert_eq!(extents_block(&VALID_3D, &plan), [0x7000_0000, 0x8000_0000, 960, 304, 4, 6, 40, 2, 4, 38, 0]);
    }

    #[test]
    fn a_1d_argument_block_has_no_extents() {
        let plan = plan_1d(&VALID, 1000, 996, &(0.5,)).expect("fits");
        assert_eq!(plan.input_shape, Extent::x(1000));
        assert_eq!(plan.output_shape, Extent::x(996));
        assert_eq!(extents_block(&VALID, &plan), [0x7000_0000, 0x8000_0000, 1000, 996]);
    }

    #[test]
    fn every_shape_error_says_what_was_expected_before_any_cuda_call() {
        let message = |stencil: &Stencil<f32, (f32,)>, shape: Extent, input_len, output_len| {
            let err = plan(stencil, shape, &[input_len], &[output_len], &(1.0,), None).expect_err("refused");
            assert!(matches!(err, Error::Length { .. }), "{err:?}");
            err.to_string()
        };
        assert_eq!(
            message(&CLAMP_2D, Extent::yx(20, 300), 5999, 6000),
            "stencil `c2`: input has 5999 elements, expected 6000 for shape [20, 300]"
        );
        assert_eq!(
            message(&VALID_2D, Extent::yx(10, 40), 400, 400),
            "stencil `v2`: output has 400 elements, expected 304 (shape [8, 38]) for an input of shape [10, 40] with \
             boundary `valid`"
        );
        assert_eq!(
            message(&VALID_3D, Extent::zyx(4, 6, 40), 960, 960),
            "stencil `v3`: output has 960 elements, expected 304 (shape [2, 4, 38]) for an input of shape [4, 6, 40] \
             with boundary `valid`"
        );
        assert_eq!(
            message(&CLAMP_2D, Extent::yx(0, 300), 0, 0),
            "stencil `c2`: shape [0, 300] has an empty dimension; a 2D or 3D stencil needs at least one element along each"
        );
        assert_eq!(
            message(&ZERO_3D, Extent::zyx(4, 6, 0), 0, 0),
            "stencil `z3`: shape [4, 6, 0] has an empty dimension; a 2D or 3D stencil needs at least one element along each"
        );
        assert_eq!(
            message(&VALID_2D, Extent::yx(2, 40), 80, 0),
            "stencil `v2`: shape [2, 40] is smaller than one window [3, 3] (2 * radius + 1 along each dimension), which \
             boundary `valid` needs"
        );
        assert_eq!(
            message(&CLAMP_2D, Extent::x(300), 300, 300),
            "stencil `c2`: the shape has 1D dimensions, expected 2D for this stencil"
        );
        assert_eq!(
            message(&VALID, Extent::yx(10, 40), 400, 304),
            "stencil `s`: the shape has 2D dimensions, expected 1D for this stencil"
        );
        assert_eq!(
            message(&ZERO_3D, Extent::yx(10, 40), 400, 400),
            "stencil `z3`: the shape has 2D dimensions, expected 3D for this stencil"
        );
        assert_eq!(
            message(&CLAMP_2D, Extent::yx(usize::MAX, 2), 0, 0),
            format!("stencil `c2`: shape [{}, 2] has more elements than memory can index", usize::MAX)
        );
        // A 1D stencil's shape must be its input's length.
        assert_eq!(
            message(&VALID, Extent::x(12), 10, 6),
            "stencil `s`: input has 10 elements, expected 12 for shape [12]"
        );
    }

    #[test]
    fn the_output_shape_run_allocates_is_checked_like_a_launch() {
        assert_eq!(output_shape(&VALID_2D, Extent::yx(10, 40), 400).expect("fits"), (Extent::yx(8, 38), 304));
        assert_eq!(output_shape(&VALID, Extent::x(1000), 1000).expect("fits"), (Extent::x(996), 996));
        assert_eq!(output_shape(&ZERO, Extent::x(0), 0).expect("empty"), (Extent::x(0), 0));
        let err = output_shape(&VALID, Extent::x(4), 4).expect_err("shorter than a window");
        assert_eq!(
            err.to_string(),
            "stencil `s`: input has 4 elements, but boundary `valid` needs at least one whole window of 5 (2 * radius + 1)"
        );
        let err = output_shape(&VALID, Extent::x(1000), 999).expect_err("shape and input disagree");
        assert_eq!(err.to_string(), "stencil `s`: input has 999 elements, expected 1000 for shape [1000]");
        let err = output_shape(&VALID_2D, Extent::yx(0, 40), 0).expect_err("empty dimension");
        assert!(matches!(err, Error::Length { stencil: "v2", source: LengthError::EmptyShape { .. } }), "{err:?}");
    }
}
