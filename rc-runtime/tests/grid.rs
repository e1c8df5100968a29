//! 2D launches end to end, through whichever back ends are enabled (`run_grid` is cust's when
//! cust is on, else cudarc's). The tests that need a GPU are `#[ignore]`d
//! (`--include-ignored` runs them); the shape checks and the no-device answer hold everywhere.
#![cfg(any(feature = "cust", feature = "cudarc"))]

mod common;

use common::echo2d::ECHO_2D;
use common::{gpu_or_skip, input};
use rc_core::{Extent, LengthError};
use rc_runtime::Error;

#[test]
fn run_grid_checks_the_shape_before_touching_cuda() {
    let err = rc_runtime::run_grid(&ECHO_2D, &[&input(23)], [4, 6], (1.0,)).expect_err("23 elements, shape 4 x 6");
    assert!(
        matches!(
            err,
            Error::Length { stencil: "echo2d", source: LengthError::InputShape { expected: 24, got: 23, .. } }
        ),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "stencil `echo2d`: input has 23 elements, expected 24 for shape [4, 6]");
    let err = rc_runtime::run_grid(&ECHO_2D, &[&input(24)], [24], (1.0,)).expect_err("a 1D shape");
    assert!(matches!(err, Error::Length { source: LengthError::Dimensions { .. }, .. }), "{err:?}");
    let err = rc_runtime::run_grid(&ECHO_2D, &[&input(12)], [2, 6], (1.0,)).expect_err("2 rows < window of 3");
    assert!(matches!(err, Error::Length { source: LengthError::ShapeSmallerThanWindow { .. }, .. }), "{err:?}");
}

#[test]
fn run_grid_without_a_gpu_says_no_device_with_the_same_reason_as_gpu() {
    let Err(no_gpu) = rc_runtime::gpu() else {
        println!("skipping run_grid_without_a_gpu_says_no_device_with_the_same_reason_as_gpu: there is a GPU");
        return;
    };
    let err = rc_runtime::run_grid(&ECHO_2D, &[&input(24)], [4, 6], (1.0,)).expect_err("no GPU to run on");
    assert!(err.is_no_device(), "{err:?}");
    assert_eq!(err.to_string(), no_gpu.to_string());
}

/// What the echo kernel writes for an input of shape [4, 7], parameter `p0`: n, n_out, the
/// input's extents, the output's (each dimension 2 * radius shorter), p0, the input's first
/// element, the prefetch distance the launch computed for this GPU, and the output's last
/// element as it was (`last`).
fn echoed(gpu: &rc_runtime::GpuInfo, input: &[f32], p0: f32, last: f32) -> Vec<f32> {
    vec![28.0, 10.0, 4.0, 7.0, 2.0, 5.0, p0, input[0], prefetch_rows(gpu) as f32, last]
}

/// The distance a launch of the echo kernel passes: half its resident blocks (the SMs times the
/// blocks per SM the driver gives it) over its one block column, in bands of its block's 8 rows.
fn prefetch_rows(gpu: &rc_runtime::GpuInfo) -> u64 {
    let per_sm = rc_runtime::resources(&ECHO_2D).expect("resources").blocks_per_multiprocessor;
    let resident = u64::from(per_sm) * u64::from(gpu.multiprocessors);
    assert!(resident > 0, "{gpu}: no block of the echo kernel fits");
    let launch = ECHO_2D.launch_shape(Extent::yx(4, 7), Extent::yx(2, 5)).expect("fits").expect("a launch");
    assert_eq!(launch.grid[0], 1);
    let rows = rc_core::prefetch::rows_ahead(&ECHO_2D.pattern(), resident, &launch);
    assert_eq!(rows, resident.div_ceil(2) * 8);
    rows
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn a_2d_kernel_gets_the_lengths_both_extents_and_the_prefetch_distance_in_order() {
    let Some(gpu) = gpu_or_skip("a_2d_kernel_gets_the_lengths_both_extents_and_the_prefetch_distance_in_order") else {
        return;
    };
    println!("on {gpu}");
    let input = input(28);
    assert_eq!(ECHO_2D.output_shape([4, 7]).expect("fits"), Extent::yx(2, 5));
    let got = rc_runtime::run_grid(&ECHO_2D, &[&input], [4, 7], (0.75,)).expect("runs").remove(0);
    // `run_grid` allocates the output zeroed.
    assert_eq!(got, echoed(&gpu, &input, 0.75, 0.0));
}

#[cfg(feature = "cust")]
#[test]
fn launch_grid_on_cust_buffers() {
    use rc_runtime::cust::memory::DeviceBuffer;
    use rc_runtime::cust::stream::{Stream, StreamFlags};

    let Some(gpu) = gpu_or_skip("launch_grid_on_cust_buffers") else { return };
    let _context = rc_runtime::cust::quick_init().expect("context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let input = input(28);
    let device_input = DeviceBuffer::from_slice(&input).expect("copy in");
    let mut device_output = DeviceBuffer::from_slice(&[f32::NAN; 10]).expect("alloc");
    rc_runtime::launch_grid(&ECHO_2D, &stream, &[&device_input], &mut [&mut device_output], [4, 7], (-2.5,))
        .expect("launch");
    stream.synchronize().expect("sync");
    let got = device_output.as_host_vec().expect("copy out");
    assert!(got[9].is_nan(), "the kernel writes 9 outputs: {got:?}");
    assert_eq!(got[..9], echoed(&gpu, &input, -2.5, f32::NAN)[..9]);

    // The output must have the output shape's element count: refused before the launch.
    let mut wrong = DeviceBuffer::from_slice(&[0.0f32; 24]).expect("alloc");
    let err = rc_runtime::launch_grid(&ECHO_2D, &stream, &[&device_input], &mut [&mut wrong], [4, 7], (1.0,))
        .expect_err("24 outputs");
    assert_eq!(
        err.to_string(),
        "stencil `echo2d`: output has 24 elements, expected 10 (shape [2, 5]) for an input of shape [4, 7] with boundary `valid`"
    );
}

#[cfg(feature = "cudarc")]
#[test]
fn launch_cudarc_grid_and_run_cudarc_grid() {
    use rc_runtime::cudarc::driver::CudaContext;

    let input = input(24);
    let err = rc_runtime::run_cudarc_grid(&ECHO_2D, &[&input], [6, 4, 1], (1.0,)).expect_err("a 3D shape");
    assert!(matches!(err, Error::Length { source: LengthError::Dimensions { .. }, .. }), "{err:?}");
    let Some(gpu) = gpu_or_skip("launch_cudarc_grid_and_run_cudarc_grid") else { return };
    let input = self::input(28);
    assert_eq!(
        rc_runtime::run_cudarc_grid(&ECHO_2D, &[&input], [4, 7], (0.5,)).expect("runs").remove(0),
        echoed(&gpu, &input, 0.5, 0.0)
    );

    let stream = CudaContext::new(0).expect("context").new_stream().expect("stream");
    let device_input = stream.clone_htod(&input).expect("copy in");
    let mut device_output = stream.alloc_zeros::<f32>(10).expect("alloc");
    rc_runtime::launch_cudarc_grid(&ECHO_2D, &stream, &[&device_input], &mut [&mut device_output], [4, 7], (3.0,))
        .expect("launch");
    assert_eq!(stream.clone_dtoh(&device_output).expect("copy out"), echoed(&gpu, &input, 3.0, 0.0));
}
