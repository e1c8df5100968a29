//! Time steps of 2D and 3D stencils through `#[stencil]`: `run_cpu_steps` is `run_cpu`
//! applied step by step, and `emulate_steps` (fused launches of `STEPS_PER_LAUNCH` steps, then
//! one launch of the steps left) equals it bit for bit, for every boundary, f32, f64 and i32, a
//! coefficient field (in 3D also under `valid`), step counts around the fused degree and shapes
//! from smaller than the halo (and one plane) to several tiles and strips or columns.

use rc::prelude::*;
use rc::testdata::{awkward, first_difference, poison};
use rc::{Element, Error};

mod support;
use support::stencils::{box_wrap, heat_clamp, heat_zero};

#[stencil(radius = (2, 1), boundary = valid, fuse = 2)]
fn tall_valid(w: Window2<f32>) -> f32 {
    0.1 * w[(-2, 0)]
        + 0.2 * w[(-1, 0)]
        + 0.4 * w[(0, 0)]
        + 0.2 * w[(1, 0)]
        + 0.1 * w[(2, 0)]
        + 0.5 * (w[(0, -1)] - w[(0, 1)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 5)]
fn average_i32(w: Window2<i32>) -> i32 {
    (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)]) / 4 + (w[(0, 0)] >> 1)
}

#[stencil(radius = 1, boundary = zero, fuse = 3)]
fn varying(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(0, 0)] + k[(0, 0)] * (u[(-1, 0)] + u[(1, 0)] - 2.0 * u[(0, 0)]) + k[(0, 1)] * (u[(0, -1)] - u[(0, 0)])
}

#[stencil(radius = 1, boundary = zero)]
fn heat3d_zero(w: Window3<f32>, alpha: f32) -> f32 {
    w[(0, 0, 0)]
        + alpha
            * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
                - 6.0 * w[(0, 0, 0)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 2, planes_per_warp = 4)]
fn heat3d_clamp(w: Window3<f32>) -> f32 {
    (w[(0, 0, 0)] * 2.0 + w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)])
        / 8.0
}

#[stencil(radius = 1, boundary = wrap, fuse = 2, planes_per_warp = 3)]
fn box3d_wrap(w: Window3<f64>) -> f64 {
    let mut s = 0.0;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                s += w[(dz, dy, dx)];
            }
        }
    }
    s / 27.0
}

#[stencil(radius = 1, boundary = valid, fuse = 2, planes_per_warp = 2)]
fn heat3d_valid(w: Window3<f32>) -> f32 {
    0.4 * w[(0, 0, 0)]
        + 0.1 * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 2, planes_per_warp = 5)]
fn average3d_i32(w: Window3<i32>) -> i32 {
    (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]) / 6
        + (w[(0, 0, 0)] >> 1)
}

#[stencil(radius = 1, boundary = zero, fuse = 2, planes_per_warp = 4)]
fn varying3d(u: Window3<f32>, k: Window3<f32>) -> f32 {
    u[(0, 0, 0)]
        + k[(0, 0, 0)] * (u[(-1, 0, 0)] + u[(1, 0, 0)] - 2.0 * u[(0, 0, 0)])
        + k[(1, 0, 1)] * (u[(0, -1, 0)] - u[(0, 0, 1)])
}

#[stencil(radius = 1, boundary = valid, fuse = 2, planes_per_warp = 2)]
fn varying3d_valid(u: Window3<f32>, k: Window3<f32>) -> f32 {
    u[(0, 0, 0)]
        + k[(0, 0, 0)] * (u[(-1, 0, 0)] + u[(1, 0, 0)] - 2.0 * u[(0, 0, 0)])
        + k[(1, -1, 1)] * (u[(0, -1, 0)] - u[(0, 0, 1)])
}

/// Step counts around `t` and many.
fn step_counts(t: u32) -> Vec<usize> {
    let t = t as usize;
    vec![0, 1, 2, t.saturating_sub(1), t, t + 1, 2 * t + 3]
}

/// Shapes from smaller than the halo to several tiles along x and strips along y.
const SHAPES: [[usize; 2]; 5] = [[1, 1], [3, 5], [9, 40], [130, 64], [140, 300]];

/// Shapes from smaller than the halo and one plane to several tiles and columns.
const SHAPES_3D: [[usize; 3]; 5] = [[1, 1, 1], [1, 5, 9], [3, 4, 70], [9, 7, 140], [40, 11, 200]];

type Steps<T, const D: usize> = fn(&[T], [usize; D], &mut [T], usize) -> Result<(), Error>;

/// `emulate_steps` against `run_cpu_steps`, and that against `run_cpu` step by step, over
/// `shapes`; `radius` (outermost first) shrinks a `valid` output.
// One argument per part of a check: the stencil's name, degree, shapes, radius and boundary, the three runs.
#[allow(clippy::too_many_arguments)]
fn check<T: Element, const D: usize>(
    what: &str,
    t: u32,
    shapes: &[[usize; D]],
    radius: [usize; D],
    valid: bool,
    run_cpu_steps: Steps<T, D>,
    emulate_steps: Steps<T, D>,
    run_cpu: Steps<T, D>,
) {
    for &shape in shapes {
        for steps in step_counts(t) {
            let shrunk = |shape: [usize; D], steps: usize| -> Option<[usize; D]> {
                let mut out = shape;
                for (n, r) in out.iter_mut().zip(radius) {
                    *n = match valid {
                        true => n.checked_sub(2 * r * steps).filter(|&left| left > 0)?,
                        false => *n,
                    };
                }
                Some(out)
            };
            let Some(out) = shrunk(shape, steps) else { continue };
            let len = out.iter().product();
            let input = awkward::<T>(shape.iter().product(), (shape[0] * 131 + shape[D - 1] * 7 + steps) as u64);
            let (mut want, mut got) = (vec![poison::<T>(); len], vec![poison::<T>(); len]);
            run_cpu_steps(&input, shape, &mut want, steps).expect("run_cpu_steps");
            emulate_steps(&input, shape, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "{what}: shape {shape:?}, {steps} steps");
            let (mut state, mut now) = (input, shape);
            for _ in 0..steps {
                let next = shrunk(now, 1).expect("shrinks as the whole run does");
                let mut out = vec![poison::<T>(); next.iter().product()];
                run_cpu(&state, now, &mut out, 1).expect("run_cpu");
                (state, now) = (out, next);
            }
            assert_eq!(
                first_difference(&want, &state),
                None,
                "{what}: run_cpu_steps is run_cpu step by step ({shape:?}, {steps} steps)"
            );
        }
    }
}

#[test]
fn emulate_steps_equals_run_cpu_steps_in_2d_for_every_boundary_and_type() {
    check::<f32, 2>(
        "heat zero",
        heat_zero::STEPS_PER_LAUNCH,
        &SHAPES,
        [1, 1],
        false,
        |i, s, o, n| heat_zero::run_cpu_steps(i, s, o, n, 0.2),
        |i, s, o, n| heat_zero::emulate_steps(i, s, o, n, 0.2),
        |i, s, o, _| heat_zero::run_cpu(i, s, o, 0.2),
    );
    check::<f32, 2>(
        "heat clamp",
        3,
        &SHAPES,
        [1, 1],
        false,
        |i, s, o, n| heat_clamp::run_cpu_steps(i, s, o, n, 0.15),
        |i, s, o, n| heat_clamp::emulate_steps(i, s, o, n, 0.15),
        |i, s, o, _| heat_clamp::run_cpu(i, s, o, 0.15),
    );
    check::<f64, 2>(
        "box wrap",
        4,
        &SHAPES,
        [1, 1],
        false,
        box_wrap::run_cpu_steps,
        box_wrap::emulate_steps,
        |i, s, o, _| box_wrap::run_cpu(i, s, o),
    );
    check::<f32, 2>(
        "tall valid",
        2,
        &SHAPES,
        [2, 1],
        true,
        tall_valid::run_cpu_steps,
        tall_valid::emulate_steps,
        |i, s, o, _| tall_valid::run_cpu(i, s, o),
    );
    check::<i32, 2>(
        "average i32",
        5,
        &SHAPES,
        [1, 1],
        false,
        average_i32::run_cpu_steps,
        average_i32::emulate_steps,
        |i, s, o, _| average_i32::run_cpu(i, s, o),
    );
}

#[test]
fn a_coefficient_field_stays_as_given_in_2d() {
    for shape in [[7, 9], [140, 300]] {
        let u = awkward::<f32>(shape[0] * shape[1], 7);
        let k: Vec<f32> = (0..u.len()).map(|i| 0.05 + 0.2 * ((i % 7) as f32 / 7.0)).collect();
        for steps in step_counts(3) {
            let (mut want, mut got) = (vec![poison::<f32>(); u.len()], vec![poison::<f32>(); u.len()]);
            varying::run_cpu_steps(&u, &k, shape, &mut want, steps).expect("run_cpu_steps");
            varying::emulate_steps(&u, &k, shape, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "{shape:?}, {steps} steps");
            let mut state = u.clone();
            for _ in 0..steps {
                let mut next = vec![0.0; u.len()];
                varying::run_cpu(&state, &k, shape, &mut next).expect("one step");
                state = next;
            }
            assert_eq!(first_difference(&want, &state), None, "{shape:?}, {steps} steps, by hand");
        }
    }
}

#[test]
fn the_2d_fused_degree_is_the_attributes_or_the_cost_models() {
    assert_eq!((heat_clamp::STEPS_PER_LAUNCH, box_wrap::STEPS_PER_LAUNCH, tall_valid::STEPS_PER_LAUNCH), (3, 4, 2));
    // The cost model: the most steps that recompute at most 1.5 elements per output and step
    // and whose windows fit 80 registers.
    assert_eq!(heat_zero::STEPS_PER_LAUNCH, 10);
    assert!(heat_zero::FUSED_PTX.contains(".entry rc_heat_zero_steps("), "the fused kernel is printed");
    assert!(heat_zero::FUSED_PTX.contains(".entry rc_heat_zero_steps_edges("), "and its edge strips' kernel");
    assert_eq!(heat_zero::FUSED_EDGES_ENTRY, "rc_heat_zero_steps_edges");
    let (remainder, _) = heat_zero::KERNEL.fused_launch(5).expect("a launch");
    let entries: Vec<&str> = remainder.iter().map(|k| k.entry()).collect();
    assert_eq!(
        entries,
        ["rc_heat_zero_steps", "rc_heat_zero_steps_edges"],
        "a 2D launch runs the interior strips, then the edges"
    );
    for kernel in &remainder {
        assert!(
            kernel.ptx().contains(&format!(".entry {}(", kernel.entry())),
            "a run's last launch of 5 steps prints its kernels"
        );
    }
}

#[test]
fn explain_shows_the_2d_strip_and_its_windows() {
    let text = heat_clamp::explain().expect("explains").to_string();
    assert!(text.contains("fused time steps: 3 steps per launch"), "{text}");
    assert!(text.contains("two kernels per launch"), "{text}");
    assert!(
        text.contains("2D: each warp streams down a strip of 64 output rows, one input row per iteration (70 iterations, the first 6 only filling the windows, step s from iteration 2 * s on)"),
        "{text}"
    );
    assert!(
        text.contains(
            "per step a window of the 2 rows above its newest of the lane's 4 elements in registers (24 words in all)"
        ),
        "{text}"
    );
    assert!(text.contains("rows outside it along y read as the step's edge row"), "{text}");
    // Every element exact after the 3 steps is stored, in whole vectors: 128 less a lead of 4
    // and a halo of 3, rounded down to 120.
    assert!(text.contains("stored: elements 4..124, 120 outputs per warp (3.75 per lane)"), "{text}");
}

#[test]
fn emulate_steps_equals_run_cpu_steps_in_3d_for_every_boundary_and_type() {
    check::<f32, 3>(
        "heat3d zero",
        heat3d_zero::STEPS_PER_LAUNCH,
        &SHAPES_3D,
        [1, 1, 1],
        false,
        |i, s, o, n| heat3d_zero::run_cpu_steps(i, s, o, n, 0.1),
        |i, s, o, n| heat3d_zero::emulate_steps(i, s, o, n, 0.1),
        |i, s, o, _| heat3d_zero::run_cpu(i, s, o, 0.1),
    );
    check::<f32, 3>(
        "heat3d clamp",
        2,
        &SHAPES_3D,
        [1, 1, 1],
        false,
        heat3d_clamp::run_cpu_steps,
        heat3d_clamp::emulate_steps,
        |i, s, o, _| heat3d_clamp::run_cpu(i, s, o),
    );
    check::<f64, 3>(
        "box3d wrap",
        2,
        &SHAPES_3D,
        [1, 1, 1],
        false,
        box3d_wrap::run_cpu_steps,
        box3d_wrap::emulate_steps,
        |i, s, o, _| box3d_wrap::run_cpu(i, s, o),
    );
    check::<f32, 3>(
        "heat3d valid",
        2,
        &SHAPES_3D,
        [1, 1, 1],
        true,
        heat3d_valid::run_cpu_steps,
        heat3d_valid::emulate_steps,
        |i, s, o, _| heat3d_valid::run_cpu(i, s, o),
    );
    check::<i32, 3>(
        "average3d i32",
        2,
        &SHAPES_3D,
        [1, 1, 1],
        false,
        average3d_i32::run_cpu_steps,
        average3d_i32::emulate_steps,
        |i, s, o, _| average3d_i32::run_cpu(i, s, o),
    );
}

#[test]
fn a_coefficient_field_stays_as_given_in_3d_also_under_valid() {
    for shape in [[5, 6, 9], [11, 9, 140]] {
        let n: usize = shape.iter().product();
        let u = awkward::<f32>(n, 11);
        let k: Vec<f32> = (0..n).map(|i| 0.05 + 0.2 * ((i % 7) as f32 / 7.0)).collect();
        for steps in step_counts(2) {
            let (mut want, mut got) = (vec![poison::<f32>(); n], vec![poison::<f32>(); n]);
            varying3d::run_cpu_steps(&u, &k, shape, &mut want, steps).expect("run_cpu_steps");
            varying3d::emulate_steps(&u, &k, shape, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "zero: {shape:?}, {steps} steps");
            let Some(out) =
                shape.iter().map(|&n| n.checked_sub(2 * steps).filter(|&m| m > 0)).collect::<Option<Vec<usize>>>()
            else {
                continue;
            };
            let len = out.iter().product();
            let (mut want, mut got) = (vec![poison::<f32>(); len], vec![poison::<f32>(); len]);
            varying3d_valid::run_cpu_steps(&u, &k, shape, &mut want, steps).expect("run_cpu_steps");
            varying3d_valid::emulate_steps(&u, &k, shape, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "valid: {shape:?}, {steps} steps");
        }
    }
}

#[test]
fn the_3d_fused_degree_is_the_attributes_and_the_cost_model_keeps_one_step() {
    assert_eq!(
        (heat3d_clamp::STEPS_PER_LAUNCH, box3d_wrap::STEPS_PER_LAUNCH, varying3d_valid::STEPS_PER_LAUNCH),
        (2, 2, 2)
    );
    assert!(heat3d_clamp::FUSED_PTX.contains(".entry rc_heat3d_clamp_steps("), "the fused kernel is printed");
    // The cost model: a one-row plane of 2 fused steps computes 3 elements per output and step.
    assert_eq!(heat3d_zero::STEPS_PER_LAUNCH, 1);
    assert_eq!(heat3d_zero::FUSED_PTX, "", "no fused kernel is printed");
    let (_, tile) = heat3d_clamp::KERNEL.fused_launch(2).expect("a fused launch");
    assert_eq!((tile.steps, tile.rows, tile.planes, tile.per_lane), (2, 1, 4, 4));
    assert!(tile.computed_per_output() > rc::core::auto::MAX_RECOMPUTE_2D, "{}", tile.computed_per_output());
}

#[test]
fn explain_shows_the_3d_column_and_its_windows() {
    let text = heat3d_clamp::explain().expect("explains").to_string();
    assert!(text.contains("fused time steps: 2 steps per launch"), "{text}");
    assert!(text.contains("3D: each warp streams along z through a column of 4 output planes of 1 rows, one input plane of 5 rows per iteration (8 iterations, the first 4 only filling the windows)"), "{text}");
    assert!(text.contains("a plane of step 0, 1, ..., 2 has 5, 3, 1 rows"), "{text}");
    assert!(text.contains("planes outside it along z read as the step's edge plane"), "{text}");
}
