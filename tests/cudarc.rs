//! The cudarc runtime (`features = ["cudarc"]`): the same checks and results as cust's. The tests
//! that need a GPU are `#[ignore]`d (`--include-ignored` runs them, as the GPU machine does); the
//! others hold everywhere.

use rc::prelude::*;
use rc::runtime::cudarc::driver::{CudaContext, CudaStream};
use rc::runtime::Error;
use std::sync::Arc;

#[stencil(radius = 2, warp = 32, outputs_per_thread = 8, distribution = granule(8))]
fn box5(w: Window<f32>) -> f32 {
    (w[-2] + w[-1] + w[0] + w[1] + w[2]) / 5.0
}

#[stencil(radius = 1, distribution = round_robin, boundary = wrap)]
fn scaled(w: Window<f64>, scale: f64) -> f64 {
    (w[-1] - 2.0 * w[0] + w[1]) * scale
}

/// Two input fields: the conductivity `k` beside the field `u`.
#[stencil(radius = 1, outputs_per_thread = 4, distribution = granule(4), boundary = clamp)]
fn diffuse(u: Window<f32>, k: Window<f32>, dt: f32) -> f32 {
    u[0] + dt * (0.5 * (k[0] + k[1]) * (u[1] - u[0]) - 0.5 * (k[-1] + k[0]) * (u[0] - u[-1]))
}

/// Array parameters travel as consecutive scalars through cudarc's launch too.
#[stencil(radius = 2, boundary = clamp)]
fn fir(w: Window<f32>, h: [f32; 5]) -> f32 {
    let mut s = 0.0;
    for k in -2..=2 {
        s += h[(k + 2) as usize] * w[k];
    }
    s
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// Device 0's stream, or `None` (after saying so) on a machine without a GPU.
fn gpu(test: &str) -> Option<Arc<CudaStream>> {
    match rc::runtime::gpu() {
        Ok(info) => {
            eprintln!("{test}: running on {info}");
            let context = CudaContext::new(0).expect("a GPU is present, so its context must start");
            Some(context.new_stream().expect("stream"))
        }
        Err(e) if e.is_no_device() => {
            eprintln!("skipping {test}: no GPU ({e})");
            None
        }
        Err(e) => panic!("{test}: the GPU is there but unusable: {e}"),
    }
}

#[test]
fn run_cudarc_checks_lengths_before_touching_cuda() {
    let err = rc::runtime::run_cudarc(&box5::KERNEL, &[&[1.0, 2.0, 3.0]], ()).expect_err("3 elements < window of 5");
    assert!(matches!(err, Error::Length { stencil: "box5", .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "stencil `box5`: input has 3 elements, but boundary `valid` needs at least one whole window of 5 (2 * radius + 1)"
    );
}

#[test]
fn run_cudarc_without_a_gpu_says_so_and_why() {
    if rc::runtime::gpu().is_ok() {
        eprintln!("skipping run_cudarc_without_a_gpu_says_so_and_why: there is a GPU");
        return;
    }
    let err = rc::runtime::run_cudarc(&box5::KERNEL, &[&input(1000)], ()).expect_err("no GPU");
    assert!(err.is_no_device(), "{err:?}");
    assert!(err.to_string().starts_with("no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE (100): "), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn run_cudarc_matches_the_cpu_bit_for_bit() {
    let Some(_stream) = gpu("run_cudarc_matches_the_cpu_bit_for_bit") else { return };
    let data = input(100_003);
    let got = rc::runtime::run_cudarc(&box5::KERNEL, &[&data], ()).expect("runs").remove(0);
    assert_eq!(bits(&got), bits(&box5::KERNEL.reference_vec(&[&data], ()).expect("reference").remove(0)));
    let data64: Vec<f64> = (0..4099).map(|i| (i as f64 * 0.11).cos()).collect();
    let got = rc::runtime::run_cudarc(&scaled::KERNEL, &[&data64], (0.5,)).expect("runs").remove(0);
    let expected = scaled::KERNEL.reference_vec(&[&data64], (0.5,)).expect("reference").remove(0);
    assert!(got.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn array_parameters_launch_through_cudarc() {
    let Some(stream) = gpu("array_parameters_launch_through_cudarc") else { return };
    let (data, h) = (input(4099), [0.125, -0.5, 1.25, -0.5, 0.125]);
    let expected = fir::KERNEL.reference_vec(&[&data], (h,)).expect("reference").remove(0);
    assert_eq!(bits(&rc::runtime::run_cudarc(&fir::KERNEL, &[&data], (h,)).expect("runs").remove(0)), bits(&expected));
    let device_input = stream.clone_htod(&data).expect("copy in");
    let mut device_output = stream.clone_htod(&vec![0.0f32; data.len()]).expect("alloc");
    fir::launch_cudarc(&stream, &device_input, &mut device_output, h).expect("launch");
    assert_eq!(bits(&stream.clone_dtoh(&device_output).expect("copy out")), bits(&expected));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn launch_cudarc_writes_views_and_nothing_beyond_them() {
    let Some(stream) = gpu("launch_cudarc_writes_views_and_nothing_beyond_them") else { return };
    let data = input(4099);
    let n_out = box5::KERNEL.output_len(data.len()).expect("fits");
    let device_input = stream.clone_htod(&data).expect("copy in");
    // The output is a view 16 bytes into a larger buffer, with guard elements on both sides.
    let guard = f32::from_bits(0x7fc0_1234);
    let mut device_output = stream.clone_htod(&vec![guard; n_out + 8]).expect("alloc");
    let mut view = device_output.slice_mut(4..4 + n_out);
    box5::launch_cudarc(&stream, &device_input, &mut view).expect("launch");
    let got = stream.clone_dtoh(&device_output).expect("copy out");
    let expected = box5::KERNEL.reference_vec(&[&data], ()).expect("reference").remove(0);
    assert_eq!(bits(&got[4..4 + n_out]), bits(&expected));
    assert!(got[..4].iter().chain(&got[4 + n_out..]).all(|v| v.to_bits() == guard.to_bits()), "guards overwritten");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn launch_cudarc_refuses_a_view_that_starts_mid_vector() {
    let Some(stream) = gpu("launch_cudarc_refuses_a_view_that_starts_mid_vector") else { return };
    let data = input(4099);
    let n_out = box5::KERNEL.output_len(data.len()).expect("fits");
    let device_input = stream.clone_htod(&data).expect("copy in");
    let mut device_output = stream.alloc_zeros::<f32>(n_out + 1).expect("alloc");
    let mut view = device_output.slice_mut(1..1 + n_out);
    let err = box5::launch_cudarc(&stream, &device_input, &mut view).expect_err("4 bytes into a 16-byte vector");
    assert!(
        matches!(err, Error::Misaligned { stencil: "box5", ref buffer, required: 16, .. } if buffer == "output"),
        "{err:?}"
    );
    let err = box5::launch_cudarc(&stream, &device_input, &mut device_output).expect_err("one element too many");
    assert!(matches!(err, Error::Length { stencil: "box5", .. }), "{err:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn launch_cudarc_refuses_a_non_primary_context() {
    let test = "launch_cudarc_refuses_a_non_primary_context";
    let Some(_stream) = gpu(test) else { return };
    // rc caches kernels per context and can keep only primary contexts alive for them.
    let other = match CudaContext::new_non_primary(0, 0) {
        Ok(other) => other,
        Err(e) => {
            eprintln!("skipping {test}: this driver makes no non-primary context through cudarc ({e:?})");
            return;
        }
    };
    let stream = other.new_stream().expect("stream");
    let data = input(4099);
    let device_input = stream.clone_htod(&data).expect("copy in");
    let mut output = stream.alloc_zeros::<f32>(box5::KERNEL.output_len(data.len()).expect("fits")).expect("alloc");
    let err = box5::launch_cudarc(&stream, &device_input, &mut output).expect_err("not a primary context");
    assert!(matches!(err, Error::NotPrimaryContext { .. }), "{err:?}");
}

#[test]
fn two_fields_launch_from_a_slice_and_a_view_and_run_from_host_slices() {
    let err =
        rc::runtime::run_cudarc(&diffuse::KERNEL, &[&input(100), &input(99)], (0.1,)).expect_err("lengths differ");
    assert_eq!(
        err.to_string(),
        "stencil `diffuse`: input 1 has 99 elements, expected 100 as input 0 has: a stencil's inputs share one length (one \
         shape in 2D and 3D), numbered from 0 in the order the windows are declared"
    );
    let Some(stream) = gpu("two_fields_launch_from_a_slice_and_a_view_and_run_from_host_slices") else { return };
    let (u, k): (Vec<f32>, Vec<f32>) = (input(4099), (0..4099).map(|i| 1.0 + (i % 7) as f32 * 0.25).collect());
    let expected = diffuse::KERNEL.reference_vec(&[&u, &k], (0.1,)).expect("reference").remove(0);
    assert_eq!(
        bits(&rc::runtime::run_cudarc(&diffuse::KERNEL, &[&u, &k], (0.1,)).expect("runs").remove(0)),
        bits(&expected)
    );
    // `k` is a view 16 bytes into a larger buffer: each input may be a slice or a view.
    let device_u = stream.clone_htod(&u).expect("copy in");
    let mut padded = vec![0.0f32; 4];
    padded.extend(&k);
    let device_k = stream.clone_htod(&padded).expect("copy in");
    let k_view = device_k.slice(4..);
    let mut output = stream.alloc_zeros::<f32>(expected.len()).expect("alloc");
    diffuse::launch_cudarc(&stream, &device_u, &k_view, &mut output, 0.1).expect("launch");
    assert_eq!(bits(&stream.clone_dtoh(&output).expect("copy out")), bits(&expected));
}

/// Time steps under `valid` with a coefficient field: the one-step launches after the fused
/// ones read the coefficient from an offset (an aligned copy where it starts mid-vector).
#[stencil(radius = 1, boundary = valid, fuse = 6)]
fn varying(u: Window<f32>, k: Window<f32>) -> f32 {
    u[0] + k[0] * (u[-1] - 2.0 * u[0] + u[1])
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn time_steps_through_cudarc_equal_run_cpu_steps() {
    let Some(stream) = gpu("time_steps_through_cudarc_equal_run_cpu_steps") else { return };
    let (u, k) = (input(100_003), (0..100_003).map(|i| 0.1 + 0.01 * (i % 13) as f32).collect::<Vec<f32>>());
    for steps in [1, 5, 6, 7, 20, 101] {
        let mut want = vec![0.0; u.len() - 2 * steps];
        varying::run_cpu_steps(&u, &k, &mut want, steps).expect("reference");
        let got = rc::runtime::run_steps_cudarc(&varying::KERNEL, &[&u, &k], steps, ()).expect("runs").remove(0);
        assert_eq!(bits(&got), bits(&want), "run_steps_cudarc, {steps} steps");
        let (mut a, mut b, d_k) = (
            stream.clone_htod(&u).expect("in"),
            stream.alloc_zeros::<f32>(u.len()).expect("alloc"),
            stream.clone_htod(&k).expect("in"),
        );
        let holds = varying::launch_steps_cudarc(&stream, &mut a, &mut b, &d_k, steps).expect("launches");
        let result = match holds {
            rc::runtime::Holds::A => &a,
            rc::runtime::Holds::B => &b,
        };
        let got = stream.clone_dtoh(&result.slice(..want.len())).expect("copy out");
        assert_eq!(bits(&got), bits(&want), "launch_steps_cudarc, {steps} steps");
    }
}

/// A 2D fused launch through cudarc: its two kernels (the interior strips, then the edges) on
/// grids whose rows are whole vectors (so interior strips exist) and whose rows are not.
#[stencil(radius = 1, boundary = clamp)]
fn heat2d(w: Window2<f32>) -> f32 {
    w[(0, 0)] + 0.2 * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn time_steps_in_2d_through_cudarc_equal_run_cpu_steps() {
    let Some(stream) = gpu("time_steps_in_2d_through_cudarc_equal_run_cpu_steps") else { return };
    let t = heat2d::STEPS_PER_LAUNCH as usize;
    for shape in [[300, 520], [301, 1030]] {
        let u = input(shape[0] * shape[1]);
        for steps in [1, t - 1, t, 2 * t + 3] {
            let mut want = vec![0.0; u.len()];
            heat2d::run_cpu_steps(&u, shape, &mut want, steps).expect("reference");
            let got =
                rc::runtime::run_steps_cudarc_grid(&heat2d::KERNEL, &[&u], shape, steps, ()).expect("runs").remove(0);
            assert_eq!(bits(&got), bits(&want), "run_steps_cudarc_grid, {shape:?}, {steps} steps");
            let (mut a, mut b) =
                (stream.clone_htod(&u).expect("in"), stream.clone_htod(&vec![f32::NAN; u.len()]).expect("in"));
            let holds = heat2d::launch_steps_cudarc(&stream, &mut a, &mut b, shape, steps).expect("launches");
            let result = match holds {
                rc::runtime::Holds::A => &a,
                rc::runtime::Holds::B => &b,
            };
            let got = stream.clone_dtoh(result).expect("copy out");
            assert_eq!(bits(&got), bits(&want), "launch_steps_cudarc, {shape:?}, {steps} steps");
        }
    }
}

/// f16 and bf16 through cudarc: slices of the half crate's types themselves (cudarc's `f16`
/// feature, which rc's `half` feature enables).
#[stencil(radius = 2, outputs_per_thread = 8, distribution = granule(8), boundary = zero)]
fn box5_f16(w: Window<half::f16>, gain: half::f16) -> half::f16 {
    (w[-2] + w[-1] + w[0] + w[1] + w[2]) * gain
}

#[stencil(radius = 1, outputs_per_thread = 4, boundary = clamp)]
fn edge_bf16(w: Window<half::bf16>) -> half::bf16 {
    (w[1] - w[-1]).max(half::bf16::ZERO)
}

/// 16-bit block tiles of fused steps: their warps swap edges through shared memory in vector
/// accesses (f16: 4 of 2 bytes; bf16 computes in 32-bit registers, so its slots are 4 bytes).
#[stencil(radius = 4, boundary = clamp, fuse = 6)]
fn nine_f16(w: Window<half::f16>) -> half::f16 {
    let c = half::f16::from_f32(0.125);
    (w[-4] + w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3] + w[4]) * c
}

#[stencil(radius = 3, boundary = zero, fuse = 5)]
fn seven_bf16(w: Window<half::bf16>) -> half::bf16 {
    let c = half::bf16::from_f32(0.25);
    (w[-3] + w[3]) * c + (w[-2] + w[2]) * c + (w[-1] + w[0] + w[1]) * c
}

/// 16-bit fused steps beside block tiles: 1D warp tiles (a block of 96 threads) and a 2D grid,
/// each with its boundary rule applied inside the fused kernel. (A 3D stencil over 16-bit
/// elements fits one step per launch: `fuse = 2` is refused at compile time.)
#[stencil(radius = 2, boundary = valid, fuse = 4, max_threads_per_block = 96)]
fn five_f16_warps(w: Window<half::f16>) -> half::f16 {
    (w[-2] + w[-1] + w[0] + w[1] + w[2]) * half::f16::from_f32(0.1875)
}

#[stencil(radius = 1, boundary = clamp, fuse = 3)]
fn heat2d_f16(w: Window2<half::f16>) -> half::f16 {
    let quarter = half::f16::from_f32(0.25);
    w[(0, 0)] + quarter * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - half::f16::from_f32(4.0) * w[(0, 0)])
}

#[test]
fn sixteen_bit_fused_steps_in_warp_tiles_and_grids_equal_run_cpu_steps() {
    use half::f16;
    let gpu = gpu("sixteen_bit_fused_steps_in_warp_tiles_and_grids_equal_run_cpu_steps");
    let data: Vec<f16> = rc::testdata::awkward(9_001, 9);
    for steps in [1, 3, 4, 9] {
        let mut want = vec![f16::ZERO; data.len() - 4 * steps];
        five_f16_warps::run_cpu_steps(&data, &mut want, steps).expect("reference");
        let mut emulated = vec![f16::ZERO; want.len()];
        five_f16_warps::emulate_steps(&data, &mut emulated, steps).expect("emulation");
        assert_eq!(rc::testdata::first_difference(&emulated, &want), None, "f16 warp tiles emulated, {steps} steps");
        if gpu.is_some() {
            let got =
                rc::runtime::run_steps_cudarc(&five_f16_warps::KERNEL, &[&data], steps, ()).expect("runs").remove(0);
            assert_eq!(rc::testdata::first_difference(&got, &want), None, "f16 warp tiles, {steps} steps");
        }
    }
    let shape = [67, 301];
    let data: Vec<f16> = rc::testdata::awkward(shape[0] * shape[1], 10);
    for steps in [1, 2, 3, 7] {
        let mut want = vec![f16::ZERO; data.len()];
        heat2d_f16::run_cpu_steps(&data, shape, &mut want, steps).expect("reference");
        let mut emulated = vec![f16::ZERO; want.len()];
        heat2d_f16::emulate_steps(&data, shape, &mut emulated, steps).expect("emulation");
        assert_eq!(rc::testdata::first_difference(&emulated, &want), None, "f16 2D emulated, {steps} steps");
        if gpu.is_some() {
            let got = rc::runtime::run_steps_cudarc_grid(&heat2d_f16::KERNEL, &[&data], shape, steps, ())
                .expect("runs")
                .remove(0);
            assert_eq!(rc::testdata::first_difference(&got, &want), None, "f16 2D, {steps} steps");
        }
    }
}

#[test]
fn sixteen_bit_block_tiles_of_fused_steps_equal_run_cpu_steps() {
    use half::{bf16, f16};
    // The emulation runs without a GPU too (the skip message notwithstanding); the launches need one.
    let gpu = gpu("sixteen_bit_block_tiles_of_fused_steps_equal_run_cpu_steps");
    let data: Vec<f16> = rc::testdata::awkward(70_001, 7);
    for steps in [1, 5, 6, 7, 13, 40] {
        let (mut want, mut emulated) = (vec![f16::ZERO; data.len()], vec![f16::ZERO; data.len()]);
        nine_f16::run_cpu_steps(&data, &mut want, steps).expect("reference");
        nine_f16::emulate_steps(&data, &mut emulated, steps).expect("emulation");
        assert_eq!(rc::testdata::first_difference(&emulated, &want), None, "f16 r = 4 emulated, {steps} steps");
        if gpu.is_some() {
            let got = rc::runtime::run_steps_cudarc(&nine_f16::KERNEL, &[&data], steps, ()).expect("runs").remove(0);
            assert_eq!(rc::testdata::first_difference(&got, &want), None, "f16 r = 4, {steps} steps");
        }
    }
    let data: Vec<bf16> = rc::testdata::awkward(50_003, 8);
    for steps in [1, 4, 5, 6, 11, 33] {
        let (mut want, mut emulated) = (vec![bf16::ZERO; data.len()], vec![bf16::ZERO; data.len()]);
        seven_bf16::run_cpu_steps(&data, &mut want, steps).expect("reference");
        seven_bf16::emulate_steps(&data, &mut emulated, steps).expect("emulation");
        assert_eq!(rc::testdata::first_difference(&emulated, &want), None, "bf16 r = 3 emulated, {steps} steps");
        if gpu.is_some() {
            let got = rc::runtime::run_steps_cudarc(&seven_bf16::KERNEL, &[&data], steps, ()).expect("runs").remove(0);
            assert_eq!(rc::testdata::first_difference(&got, &want), None, "bf16 r = 3, {steps} steps");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn sixteen_bit_stencils_launch_and_run_through_cudarc_bit_for_bit() {
    use half::{bf16, f16};
    let Some(stream) = gpu("sixteen_bit_stencils_launch_and_run_through_cudarc_bit_for_bit") else { return };
    let data: Vec<f16> = rc::testdata::awkward(100_003, 5);
    let gain = f16::from_f32(0.2);
    let expected: Vec<u16> = box5_f16::KERNEL
        .reference_vec(&[&data], (gain,))
        .expect("reference")
        .remove(0)
        .iter()
        .map(|v| v.to_bits())
        .collect();
    let device_input = stream.clone_htod(&data).expect("copy in");
    let mut device_output = stream.clone_htod(&vec![f16::NAN; data.len()]).expect("alloc");
    box5_f16::launch_cudarc(&stream, &device_input, &mut device_output, gain).expect("launch");
    let got: Vec<u16> = stream.clone_dtoh(&device_output).expect("copy out").iter().map(|v| v.to_bits()).collect();
    let same = |a: &[u16], b: &[u16]| {
        a.iter().zip(b).all(|(x, y)| x == y || (f16::from_bits(*x).is_nan() && f16::from_bits(*y).is_nan()))
    };
    assert!(same(&got, &expected) && got.len() == expected.len(), "launch_cudarc f16");
    let data: Vec<bf16> = rc::testdata::awkward(4099, 6);
    let got = rc::runtime::run_cudarc(&edge_bf16::KERNEL, &[&data], ()).expect("runs").remove(0);
    let expected = edge_bf16::KERNEL.reference_vec(&[&data], ()).expect("reference").remove(0);
    assert_eq!(rc::testdata::first_difference(&got, &expected), None, "run_cudarc bf16");
}
