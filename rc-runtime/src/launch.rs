//! Launching a stencil, whichever back end the caller's stream and buffers come from: the plan
//! (lengths, grid, parameters; no CUDA), the checks on buffers and kernel, and the launch. The
//! back ends (`with_cust.rs`, `with_cudarc.rs`) only turn their types into driver handles.

use std::ptr;

use rc_core::{Element, LaunchShape, Params, Scalar, ScalarType, Stencil, Strategy};

use crate::abi::KernelArgs;
use crate::buffers;
use crate::context;
use crate::driver::{self, CuStream};
use crate::error::{check, Error};
use crate::module;

/// What a launch needs that can be worked out without the GPU. Computed first, so that wrong
/// lengths are reported before any CUDA call.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    pub n_out: usize,
    /// `None` for an empty output: nothing to launch.
    pub shape: Option<LaunchShape>,
    pub scalars: Vec<Scalar>,
}

pub(crate) fn plan<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    input_len: usize,
    output_len: usize,
    params: &P,
) -> Result<Plan, Error> {
    let length = |source| Error::Length { stencil: stencil.name(), source };
    let pattern = stencil.pattern();
    let n_out = pattern.check_lengths(input_len, output_len).map_err(length)?;
    let shape = if n_out == 0 { None } else { Some(pattern.launch_shape(n_out).map_err(length)?) };
    Ok(Plan { n_out, shape, scalars: params.scalars() })
}

/// Vector loads and stores need their buffers aligned to the access size.
pub(crate) fn check_alignment<T: Element, P: Params>(stencil: &Stencil<T, P>, buffer: &'static str, address: u64) -> Result<(), Error> {
    let required = match stencil.strategy() {
        Strategy::RegisterCache => stencil.layout().access_bytes(T::TYPE),
        _ => T::TYPE.bytes(),
    };
    if address % required as u64 != 0 {
        return Err(Error::Misaligned { stencil: stencil.name(), buffer, required, address });
    }
    Ok(())
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
/// driver handles and addresses, and has made a `plan` with a shape (so lengths were checked
/// before any CUDA call). Checks alignment and overlap, then that the stream's context is current
/// and can reach both buffers, loads the kernel, checks its ABI and block size, and queues it.
pub(crate) fn launch_planned<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    plan: &Plan,
    shape: LaunchShape,
    stream: CuStream,
    input: RawBuffer,
    output: RawBuffer,
) -> Result<(), Error> {
    check_alignment(stencil, "input", input.address)?;
    check_alignment(stencil, "output", output.address)?;
    let element_bytes = std::mem::size_of::<T>();
    buffers::check_disjoint(
        stencil.name(),
        buffers::byte_range(input.address, input.len, element_bytes),
        buffers::byte_range(output.address, output.len, element_bytes),
    )?;
    let context = context::for_launch(stream)?;
    buffers::check_reachable(stencil.name(), "input", input.address, context)?;
    buffers::check_reachable(stencil.name(), "output", output.address, context)?;
    let kernel = module::kernel(context, stencil.name(), stencil.ptx(), stencil.entry())?;
    let types: Vec<ScalarType> = plan.scalars.iter().map(|s| s.ty).collect();
    kernel.check_abi(stencil.name(), stencil.entry(), &types)?;
    check_threads_per_block(stencil.name(), shape, crate::resources::max_threads_per_block(kernel.function(), stencil.name())?)?;

    let mut args = KernelArgs::new(input.address, output.address, input.len as u64, plan.n_out as u64, &plan.scalars);
    let mut pointers = args.pointers();
    // SAFETY: the function belongs to the current context (looked up with it) and stays loaded
    // while `kernel` lives; the argument block matches the parameter list the entry declares
    // (checked above); the buffers are live device allocations of the lengths passed (the back
    // ends take them from their buffer types), which the driver did not report as another
    // context's (checked above), and the output's bytes are disjoint from the input's (checked
    // above: cust's `DeviceSlice` is `Copy`, so an exclusive borrow alone does not prove that).
    // The driver copies the arguments before returning.
    let code = unsafe {
        driver::cuLaunchKernel(
            kernel.function(),
            shape.blocks,
            1,
            1,
            shape.threads_per_block,
            1,
            1,
            0,
            stream,
            pointers.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    check(code, || {
        format!(
            "cuLaunchKernel for stencil `{}` ({} blocks of {} threads, {} outputs)",
            stencil.name(),
            shape.blocks,
            shape.threads_per_block,
            plan.n_out
        )
    })
}

/// The output length for `input_len` input elements, as the error `run` reports.
pub(crate) fn output_len<T: Element, P: Params>(stencil: &Stencil<T, P>, input_len: usize) -> Result<usize, Error> {
    stencil.pattern().output_len(input_len).map_err(|source| Error::Length { stencil: stencil.name(), source })
}

#[cfg(test)]
mod tests {
    use rc_core::body::{Body, Node};
    use rc_core::{BodyError, Boundary, Layout, LengthError, Pattern, Strategy, Window};

    use super::*;

    fn body() -> Result<Body, BodyError> {
        Body::new(ScalarType::F32, vec![ScalarType::F32], 2, vec![Node::Tap(rc_core::Offset::x(0))], 0)
    }
    fn reference(w: Window<'_, f32>, _: (f32,)) -> f32 {
        w[0]
    }
    /// A stencil for the checks `launch` makes before CUDA: its PTX is never loaded.
    const fn stencil(name: &'static str, pattern: Pattern, strategy: Strategy, layout: Layout) -> Stencil<f32, (f32,)> {
        Stencil::from_parts(name, pattern, strategy, layout, "", "e", body, reference)
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
        assert!(matches!(err, Error::Misaligned { stencil: "g", buffer: "output", required: 16, address: 0x7000_0004 }));
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
        let err = plan(&VALID, 10, 5, &(1.0,)).expect_err("10 - 4 = 6 outputs, not 5");
        assert!(matches!(err, Error::Length { stencil: "s", source: LengthError::Output { expected: 6, got: 5, .. } }));
        assert_eq!(
            err.to_string(),
            "stencil `s`: output has 5 elements, expected 6 for an input of 10 elements with boundary `valid`"
        );
        let err = plan(&VALID, 4, 0, &(1.0,)).expect_err("shorter than a window");
        assert_eq!(
            err.to_string(),
            "stencil `s`: input has 4 elements, but boundary `valid` needs at least one whole window of 5 (2 * radius + 1)"
        );
        let err = plan(&ZERO, 10, 8, &(1.0,)).expect_err("zero boundary: n outputs");
        assert!(err.to_string().contains("expected 10"), "{err}");
    }

    #[test]
    fn a_plan_has_the_shape_and_the_parameters() {
        let plan = plan(&VALID, 1000, 996, &(0.5,)).expect("fits");
        // 996 outputs / 128 per warp = 8 warps = 256 threads = 1 block.
        assert_eq!(plan.n_out, 996);
        assert_eq!(plan.shape, Some(LaunchShape { blocks: 1, threads_per_block: 256 }));
        assert_eq!(plan.scalars, vec![Scalar::f32(0.5)]);
        // Nothing to do: no launch.
        assert_eq!(plan_empty().shape, None);
    }

    #[test]
    fn kernels_that_cannot_run_the_block_size_are_refused() {
        const BIG: Stencil<f32, (f32,)> = stencil(
            "b",
            Pattern::new_unchecked(2, 32, 4, Boundary::Valid).with_launch_bounds_unchecked(1024, None),
            Strategy::RegisterCache,
            Layout::RoundRobin,
        );
        let shape = plan(&BIG, 100_000, 99_996, &(1.0,)).expect("fits").shape.expect("not empty");
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
        let shape = plan(&VALID, 1000, 996, &(1.0,)).expect("fits").shape.expect("not empty");
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
        let plan = plan(&SMALL, 1000, 996, &(0.5,)).expect("fits");
        assert_eq!(plan.shape, Some(LaunchShape { blocks: 4, threads_per_block: 64 }));
    }

    fn plan_empty() -> Plan {
        plan(&ZERO, 0, 0, &(1.0,)).expect("empty is fine")
    }
}
