//! The GPU functions `gpu_methods!` generates for 2D and 3D stencils (`shape [usize; N]`), on
//! stencil types written out by hand as `#[stencil]` writes them (an `impl` with `KERNEL`), over
//! rc-runtime's hand-written 2D echo kernel: it writes back the lengths, extents and parameter
//! the launch passed, so these tests check what the generated functions forward. Without a GPU
//! the tests that need one print why they skip and pass; the shape checks and the no-device
//! answer hold everywhere.
#![cfg(any(feature = "cust", feature = "cudarc"))]

use rc::__private::{Body, Boundary, Layout, Node, Offset, Pattern, Radius, ScalarType, Stencil, Strategy};
use rc::core::BodyError;
use rc::runtime::Error;
use rc::{LengthError, Window};

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
fn centre(w: &[Window<'_, f32>], _: (f32,), out: &mut [f32]) {
    // One output field.
    out[0] = w[0][0];
}

/// The echo kernel's stencil: radius (1, 1), `valid`, so shape [4, 6] gives 8 outputs, exactly
/// what the kernel writes. Its parameter is named `shape`, like the generated functions'
/// argument: hygiene keeps the two apart (this would not compile otherwise).
#[allow(non_camel_case_types)]
struct echo2d;
impl echo2d {
    const KERNEL: Stencil<f32, (f32,)> = Stencil::from_parts(
        "echo2d",
        Pattern::grid_unchecked(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Valid),
        Strategy::RegisterCache,
        Layout::RoundRobin,
        include_str!("../rc-runtime/tests/common/echo2d.ptx"),
        "rc_test_echo2d",
        1,
        1,
        body_2d,
        centre,
    );
    rc::__private::gpu_methods! {
        shape [usize; 2]; [input] -> [output]: Vec<f32> = |fields: Vec<Vec<f32>>| -> Result<Vec<f32>, rc::runtime::Error> {
            let [field] = rc::runtime::output_fields(&Self::KERNEL, fields)?;
            Ok(field)
        };
        f32, f32; shape: f32
    }
    rc::__private::gpu_steps! {
        shape [usize; 2]; [(a, b)] []; [input]: Vec<f32> = |fields: Vec<Vec<f32>>| -> Result<Vec<f32>, rc::runtime::Error> {
            let [field] = rc::runtime::output_fields(&Self::KERNEL, fields)?;
            Ok(field)
        };
        f32, f32; shape: f32
    }
}

/// A 3D stencil whose kernel is never loaded: only its shape checks run.
#[allow(non_camel_case_types)]
struct box3d;
impl box3d {
    const KERNEL: Stencil<f32, (f32,)> = Stencil::from_parts(
        "box3d",
        Pattern::grid_unchecked(Radius::zyx(1, 1, 1), 32, 2, 4, 2, Boundary::Valid),
        Strategy::RegisterCache,
        Layout::RoundRobin,
        "",
        "rc_box3d",
        1,
        1,
        body_3d,
        centre,
    );
    rc::__private::gpu_methods! {
        shape [usize; 3]; [input] -> [output]: Vec<f32> = |fields: Vec<Vec<f32>>| -> Result<Vec<f32>, rc::runtime::Error> {
            let [field] = rc::runtime::output_fields(&Self::KERNEL, fields)?;
            Ok(field)
        };
        f32, f32; alpha: f32
    }
    rc::__private::gpu_steps! {
        shape [usize; 3]; [(a, b)] []; [input]: Vec<f32> = |fields: Vec<Vec<f32>>| -> Result<Vec<f32>, rc::runtime::Error> {
            let [field] = rc::runtime::output_fields(&Self::KERNEL, fields)?;
            Ok(field)
        };
        f32, f32; alpha: f32
    }
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}

/// What the echo kernel writes for an input of shape [4, 6], parameter `p0`: n, n_out, the
/// input's extents, the output's, p0, and the input's first element.
fn echoed(input: &[f32], p0: f32) -> Vec<f32> {
    vec![24.0, 8.0, 4.0, 6.0, 2.0, 4.0, p0, input[0]]
}

fn gpu(test: &str) -> bool {
    match rc::runtime::gpu() {
        Ok(info) => {
            eprintln!("{test}: running on {info}");
            true
        }
        Err(e) => {
            eprintln!("skipping {test}: no GPU ({e})");
            false
        }
    }
}

#[test]
fn run_checks_the_shape_before_touching_cuda() {
    let err = echo2d::run(&input(24), [6, 5], 1.0).expect_err("24 elements, shape 6 x 5");
    assert_eq!(err.to_string(), "stencil `echo2d`: input has 24 elements, expected 30 for shape [6, 5]");
    let err = box3d::run(&input(4 * 6 * 2), [4, 6, 2], 1.0).expect_err("2 columns < window of 3");
    assert!(
        matches!(err, Error::Length { stencil: "box3d", source: LengthError::ShapeSmallerThanWindow { .. } }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "stencil `box3d`: shape [4, 6, 2] is smaller than one window [3, 3, 3] (2 * radius + 1 along each dimension), \
         which boundary `valid` needs"
    );
    let err = box3d::run(&input(0), [4, 0, 6], 1.0).expect_err("an empty dimension");
    assert!(matches!(err, Error::Length { source: LengthError::EmptyShape { .. }, .. }), "{err:?}");
}

#[test]
fn run_without_a_gpu_says_no_device() {
    if rc::runtime::gpu().is_ok() {
        eprintln!("skipping run_without_a_gpu_says_no_device: there is a GPU");
        return;
    }
    let err = echo2d::run(&input(24), [4, 6], 1.0).expect_err("no GPU");
    assert!(err.is_no_device(), "{err:?}");
    let err = box3d::run(&input(4 * 6 * 8), [4, 6, 8], 1.0).expect_err("no GPU");
    assert!(err.is_no_device(), "{err:?}");
}

#[test]
fn run_forwards_the_shape_and_the_parameter() {
    if !gpu("run_forwards_the_shape_and_the_parameter") {
        return;
    }
    let input = input(24);
    assert_eq!(echo2d::run(&input, [4, 6], 0.75).expect("runs"), echoed(&input, 0.75));
}

#[cfg(feature = "cust")]
#[test]
fn launch_forwards_the_shape_and_the_parameter() {
    use rc::runtime::cust::memory::DeviceBuffer;
    use rc::runtime::cust::stream::{Stream, StreamFlags};

    if !gpu("launch_forwards_the_shape_and_the_parameter") {
        return;
    }
    let _context = rc::runtime::cust::quick_init().expect("context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let input = input(24);
    let device_input = DeviceBuffer::from_slice(&input).expect("copy in");
    let mut device_output = DeviceBuffer::from_slice(&[0.0f32; 8]).expect("alloc");
    echo2d::launch(&stream, &device_input, &mut device_output, [4, 6], -1.5).expect("launch");
    stream.synchronize().expect("sync");
    assert_eq!(device_output.as_host_vec().expect("copy out"), echoed(&input, -1.5));
}

#[cfg(feature = "cudarc")]
#[test]
fn launch_cudarc_forwards_the_shape_and_the_parameter() {
    use rc::runtime::cudarc::driver::CudaContext;

    if !gpu("launch_cudarc_forwards_the_shape_and_the_parameter") {
        return;
    }
    let stream = CudaContext::new(0).expect("context").new_stream().expect("stream");
    let input = input(24);
    let device_input = stream.clone_htod(&input).expect("copy in");
    let mut device_output = stream.alloc_zeros::<f32>(8).expect("alloc");
    echo2d::launch_cudarc(&stream, &device_input, &mut device_output, [4, 6], 2.0).expect("launch");
    assert_eq!(stream.clone_dtoh(&device_output).expect("copy out"), echoed(&input, 2.0));
}
