//! A grid split over the GPUs of this process (`rc::split::SplitGrid`, features = ["cudarc"]):
//! 1 to 4 ranks on every visible GPU (round-robin, so several ranks share a GPU where there are
//! fewer) and all on one GPU, 2D and 3D, every boundary rule that keeps the shape, one step and
//! fused steps per exchange, a system of two fields, a coefficient field: the gathered state
//! equals one GPU's `run_steps` and `run_cpu_steps` bit for bit, from ping-pong buffers
//! poisoned first. The tests that need a GPU are `#[ignore]`d (`--include-ignored` runs them);
//! the checks made before any driver call hold everywhere.

use rc::prelude::*;
use rc::runtime::{run_steps_cudarc_grid, Error};
use rc::split::{Decomposition, SplitGrid};
use rc::testdata::{first_difference, poison};
use rc::{Element, Extent, Params};

use rc::runtime::cudarc::driver::{DeviceRepr, ValidAsZeroBits};

mod support;
use support::stencils::{box_wrap, deep3d_wrap, heat3d_zero, heat_clamp, heat_zero, tall_clamp, varying};

#[stencil(radius = 1, boundary = wrap)]
fn gray_scott(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (u[(0, 0)] + 0.16 * lap_u - uvv + f * (1.0 - u[(0, 0)]), v[(0, 0)] + 0.08 * lap_v + uvv - (f + k) * v[(0, 0)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 2)]
fn heat3d_clamp(w: Window3<f64>) -> f64 {
    (w[(0, 0, 0)] * 2.0 + w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)])
        / 8.0
}

fn field<T: From<f32>>(n: usize, seed: u32) -> Vec<T> {
    (0..n).map(|i| T::from(((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) as f32 / 16777216.0)).collect()
}

/// The number of GPUs, or `None` (after saying so) without one.
fn gpus(test: &str) -> Option<usize> {
    match rc::runtime::gpu() {
        Ok(info) => {
            let count = rc::runtime::cudarc::driver::CudaContext::device_count().expect("a device count");
            eprintln!("{test}: {count} GPU(s), device 0 {info}");
            Some(count as usize)
        }
        Err(e) if e.is_no_device() => {
            eprintln!("skipping {test}: no GPU ({e})");
            None
        }
        Err(e) => panic!("{test}: the GPU is there but unusable: {e}"),
    }
}

/// `steps` steps of `stencil` from `inputs` over `ranks` bands exchanged every `per_exchange`
/// steps on `devices` (`None`: every visible GPU), from ping-pong buffers poisoned first: the
/// gathered state, bit for bit one GPU's `run_steps` and `run_cpu_steps`.
#[allow(clippy::too_many_arguments)]
fn check<T, P>(
    stencil: &Stencil<T, P>,
    inputs: &[Vec<T>],
    shape: Extent,
    ranks: usize,
    per_exchange: usize,
    steps: usize,
    params: P,
    devices: Option<&[usize]>,
) where
    T: Element + DeviceRepr + ValidAsZeroBits,
    P: Params,
{
    let what = format!(
        "{} on {} over {ranks} ranks on devices {devices:?}, {per_exchange} steps per exchange, {steps} steps",
        stencil.name(),
        shape.as_array()
    );
    let inputs: Vec<&[T]> = inputs.iter().map(Vec::as_slice).collect();
    let split = Decomposition::new(&stencil.pattern(), shape, ranks, per_exchange).expect("split");
    let mut grid = match devices {
        Some(devices) => SplitGrid::on_devices(stencil, split, devices),
        None => SplitGrid::new(stencil, split),
    }
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    // One step from poison leaves poison in the buffer the next run writes first.
    let poisoned = vec![poison::<T>(); inputs[0].len()];
    grid.scatter(&vec![poisoned.as_slice(); inputs.len()]).expect("scatter poison");
    grid.run_steps(1, params).expect("a step of poison");
    grid.scatter(&inputs).expect("scatter");
    grid.run_steps(steps, params).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = grid.gather().unwrap_or_else(|e| panic!("{what}: {e}"));
    let one_gpu = run_steps_cudarc_grid(stencil, &inputs, shape, steps, params).expect("one GPU");
    let states = stencil.output_fields() as usize;
    let mut cpu = vec![vec![*T::zero_ref(); inputs[0].len()]; states];
    let mut outs: Vec<&mut [T]> = cpu.iter_mut().map(Vec::as_mut_slice).collect();
    stencil.run_cpu_steps_grid(&inputs, shape, &mut outs, steps, params).expect("run_cpu_steps");
    for field in 0..states {
        if let Some(i) = first_difference(&got[field], &one_gpu[field]) {
            panic!("{what}: field {field} differs from one GPU at {i}: {:?} vs {:?}", got[field][i], one_gpu[field][i]);
        }
        assert_eq!(first_difference(&one_gpu[field], &cpu[field]), None, "{what}: one GPU against the CPU");
    }
}

/// Every visible GPU, and (with more than one) all ranks on device 0: copies between GPUs and
/// within one.
fn device_sets(count: usize) -> Vec<Option<&'static [usize]>> {
    match count {
        1 => vec![None],
        _ => vec![None, Some(&[0])],
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn split_2d_steps_equal_one_gpu_for_every_boundary() {
    let Some(count) = gpus("split_2d_steps_equal_one_gpu_for_every_boundary") else { return };
    let shape = Extent::from([301, 517]);
    let n = 301 * 517;
    for devices in device_sets(count) {
        for ranks in 1..=4 {
            for (per_exchange, steps) in [(1, 5), (3, 9), (4, 9), (5, 11)] {
                check(&heat_zero::KERNEL, &[field(n, 1)], shape, ranks, per_exchange, steps, (0.2,), devices);
                check(&heat_clamp::KERNEL, &[field(n, 2)], shape, ranks, per_exchange, steps, (0.2,), devices);
                check(&box_wrap::KERNEL, &[field(n, 3)], shape, ranks, per_exchange, steps, (), devices);
                check(&tall_clamp::KERNEL, &[field(n, 4)], shape, ranks, per_exchange, steps, (), devices);
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn split_3d_steps_equal_one_gpu() {
    let Some(count) = gpus("split_3d_steps_equal_one_gpu") else { return };
    let shape = Extent::from([37, 45, 70]);
    let n = 37 * 45 * 70;
    for devices in device_sets(count) {
        for ranks in 1..=4 {
            for (per_exchange, steps) in [(1, 4), (2, 7)] {
                check(&heat3d_zero::KERNEL, &[field(n, 5)], shape, ranks, per_exchange, steps, (0.1,), devices);
                check(&deep3d_wrap::KERNEL, &[field(n, 6)], shape, ranks, per_exchange, steps, (), devices);
                check(&heat3d_clamp::KERNEL, &[field(n, 7)], shape, ranks, per_exchange, steps, (), devices);
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn a_split_system_and_a_split_coefficient_field_equal_one_gpu() {
    let Some(count) = gpus("a_split_system_and_a_split_coefficient_field_equal_one_gpu") else { return };
    let shape = Extent::from([130, 200]);
    let n = 130 * 200;
    let per_launch = gray_scott::STEPS_PER_LAUNCH as usize;
    for devices in device_sets(count) {
        for ranks in 1..=4 {
            for per_exchange in [1, per_launch, per_launch + 1] {
                let (u, v) = (field(n, 8), field::<f32>(n, 9).iter().map(|x| 0.3 * x).collect());
                check(
                    &gray_scott::KERNEL,
                    &[u, v],
                    shape,
                    ranks,
                    per_exchange,
                    2 * per_launch + 3,
                    (0.04, 0.06),
                    devices,
                );
            }
            let (u, k) = (field(n, 10), field::<f32>(n, 11).iter().map(|x| 0.2 * x).collect());
            check(&varying::KERNEL, &[u, k], shape, ranks, 3, 10, (), devices);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn fill_from_global_coordinates_equals_scatter() {
    let Some(_) = gpus("fill_from_global_coordinates_equals_scatter") else { return };
    let shape = [64, 96];
    let value = |p: &[usize]| (p[0] * 96 + p[1]) as f32 * 1e-3;
    let whole: Vec<f32> = (0..64 * 96).map(|i| value(&[i / 96, i % 96])).collect();
    let split = Decomposition::new(&heat_clamp::KERNEL.pattern(), shape, 3, 3).expect("split");
    let mut filled = SplitGrid::new(&heat_clamp::KERNEL, split.clone()).expect("grid");
    filled.fill(0, value).expect("fill");
    filled.run_steps(7, (0.2,)).expect("steps");
    let mut scattered = SplitGrid::new(&heat_clamp::KERNEL, split).expect("grid");
    scattered.scatter(&[&whole]).expect("scatter");
    scattered.run_steps(7, (0.2,)).expect("steps");
    assert_eq!(filled.gather().expect("gather"), scattered.gather().expect("gather"));
}

#[test]
fn a_split_grid_says_what_it_expected() {
    // Checked before any driver call: a split made for another stencil.
    let split = Decomposition::new(&heat_zero::KERNEL.pattern(), [40, 8], 2, 1).expect("split");
    let err = SplitGrid::new(&tall_clamp::KERNEL, split.clone()).err().expect("radius 2 on a radius-1 split");
    assert!(matches!(err, Error::Split { .. }), "{err}");
    assert!(err.to_string().contains("radius 1 along the split dimension"), "{err}");
    let Some(count) = gpus("a_split_grid_says_what_it_expected") else { return };
    let err = SplitGrid::on_devices(&heat_zero::KERNEL, split.clone(), &[count]).err().expect("no such device");
    assert!(matches!(err, Error::SplitDevices { .. }), "{err}");
    let mut grid = SplitGrid::new(&heat_zero::KERNEL, split).expect("grid");
    let short = vec![0.0f32; 319];
    let err = grid.scatter(&[&short]).expect_err("short field");
    assert!(err.to_string().contains("field 0 has 319 elements, expected 320"), "{err}");
    let err = grid.scatter(&[&short, &short]).expect_err("two fields");
    assert!(matches!(err, Error::SplitFields { expected: 1, got: 2, .. }), "{err}");
    let err = grid.fill(1, |_| 0.0).expect_err("one field");
    assert!(err.to_string().contains("has fields 0 to 0"), "{err}");
    let err = grid.step_bands(2, (0.1,)).expect_err("two steps on a halo of one");
    assert!(matches!(err, Error::SplitSteps { steps: 2, most: 1, .. }), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn one_exchange_serves_the_steps_its_halo_covers() {
    let Some(_) = gpus("one_exchange_serves_the_steps_its_halo_covers") else { return };
    let shape = Extent::from([60, 70]);
    let input = field::<f32>(shape.len().unwrap_or(0), 7);
    let split = Decomposition::new(&heat_zero::KERNEL.pattern(), shape, 3, 4).expect("split");
    let mut grid = SplitGrid::new(&heat_zero::KERNEL, split).expect("grid");
    grid.scatter(&[&input]).expect("scatter");
    // Nine calls of one step on a halo of four: exchanges before the fifth and the ninth.
    let mut covered = Vec::new();
    for _ in 0..9 {
        grid.step_bands(1, (0.2,)).expect("a step");
        covered.push(grid.steps_covered());
    }
    assert_eq!(covered, [3, 2, 1, 0, 3, 2, 1, 0, 3]);
    let got = grid.gather().expect("gather").remove(0);
    let one_gpu = run_steps_cudarc_grid(&heat_zero::KERNEL, &[&input], shape, 9, (0.2,)).expect("one GPU").remove(0);
    assert_eq!(first_difference(&got, &one_gpu), None, "nine calls of one step against one GPU's nine steps");
}

#[stencil(radius = 1, boundary = clamp)]
fn heat_f16(w: Window2<half::f16>) -> half::f16 {
    let quarter = half::f16::from_f32(0.25);
    w[(0, 0)] + quarter * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - half::f16::from_f32(4.0) * w[(0, 0)])
}

/// 16-bit rows of an odd length: halos of 66 bytes a row, at addresses 2 bytes apart from a
/// word's, which the copy kernel moves a byte at a time (f32 rows of 517 take 4-byte words,
/// rows of a multiple of 4 elements 16-byte ones).
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn sixteen_bit_rows_of_odd_length_equal_one_gpu() {
    let Some(count) = gpus("sixteen_bit_rows_of_odd_length_equal_one_gpu") else { return };
    let shape = Extent::from([64, 33]);
    let input: Vec<half::f16> = field::<f32>(64 * 33, 5).into_iter().map(half::f16::from_f32).collect();
    for devices in device_sets(count) {
        for ranks in 1..=3 {
            for (per_exchange, steps) in [(1, 4), (3, 7)] {
                check(&heat_f16::KERNEL, std::slice::from_ref(&input), shape, ranks, per_exchange, steps, (), devices);
            }
        }
    }
}
