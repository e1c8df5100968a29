//! Time steps of 2D (and 3D) stencils through `#[stencil]`: `run_cpu_steps` is `run_cpu`
//! applied step by step, and `emulate_steps` (fused 2D launches of `STEPS_PER_LAUNCH` steps,
//! then one launch of the steps left) equals it bit for bit, for every boundary, f32, f64 and
//! i32, a coefficient field, step counts around the fused degree and shapes from smaller than
//! the halo to several tiles and strips.

use rc::prelude::*;
use rc::testdata::{awkward, first_difference, poison};
use rc::{Element, Error};

#[stencil(radius = 1, boundary = zero)]
fn heat_zero(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 3)]
fn heat_clamp(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[stencil(radius = 1, boundary = wrap, fuse = 4)]
fn box_wrap(w: Window2<f64>) -> f64 {
    (w[(-1, -1)] + w[(-1, 0)] + w[(-1, 1)] + w[(0, -1)] + w[(0, 0)] + w[(0, 1)] + w[(1, -1)] + w[(1, 0)] + w[(1, 1)]) / 9.0
}

#[stencil(radius = (2, 1), boundary = valid, fuse = 2)]
fn tall_valid(w: Window2<f32>) -> f32 {
    0.1 * w[(-2, 0)] + 0.2 * w[(-1, 0)] + 0.4 * w[(0, 0)] + 0.2 * w[(1, 0)] + 0.1 * w[(2, 0)] + 0.5 * (w[(0, -1)] - w[(0, 1)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 5)]
fn average_i32(w: Window2<i32>) -> i32 {
    (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)]) / 4 + (w[(0, 0)] >> 1)
}

#[stencil(radius = 1, boundary = zero, fuse = 3)]
fn varying(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(0, 0)] + k[(0, 0)] * (u[(-1, 0)] + u[(1, 0)] - 2.0 * u[(0, 0)]) + k[(0, 1)] * (u[(0, -1)] - u[(0, 0)])
}

#[stencil(radius = 1, boundary = clamp)]
fn heat3d(w: Window3<f32>) -> f32 {
    (w[(0, 0, 0)] * 2.0 + w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]) / 8.0
}

/// Step counts around `t` and many.
fn step_counts(t: u32) -> Vec<usize> {
    let t = t as usize;
    vec![0, 1, 2, t.saturating_sub(1), t, t + 1, 2 * t + 3]
}

/// Shapes from smaller than the halo to several tiles along x and strips along y.
const SHAPES: [[usize; 2]; 5] = [[1, 1], [3, 5], [9, 40], [130, 64], [140, 300]];

type Steps<T> = fn(&[T], [usize; 2], &mut [T], usize) -> Result<(), Error>;

fn check<T: Element>(what: &str, t: u32, radius: [usize; 2], valid: bool, run_cpu_steps: Steps<T>, emulate_steps: Steps<T>, run_cpu: Steps<T>) {
    for shape in SHAPES {
        for steps in step_counts(t) {
            let out = match valid {
                true => [shape[0] as i64 - 2 * (radius[0] * steps) as i64, shape[1] as i64 - 2 * (radius[1] * steps) as i64],
                false => [shape[0] as i64, shape[1] as i64],
            };
            if out[0] <= 0 || out[1] <= 0 {
                continue;
            }
            let len = (out[0] * out[1]) as usize;
            let input = awkward::<T>(shape[0] * shape[1], (shape[0] * 131 + shape[1] * 7 + steps) as u64);
            let (mut want, mut got) = (vec![poison::<T>(); len], vec![poison::<T>(); len]);
            run_cpu_steps(&input, shape, &mut want, steps).expect("run_cpu_steps");
            emulate_steps(&input, shape, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "{what}: shape {shape:?}, {steps} steps");
            let (mut state, mut now) = (input, shape);
            for _ in 0..steps {
                let next = if valid { [now[0] - 2 * radius[0], now[1] - 2 * radius[1]] } else { now };
                let mut out = vec![poison::<T>(); next[0] * next[1]];
                run_cpu(&state, now, &mut out, 1).expect("run_cpu");
                (state, now) = (out, next);
            }
            assert_eq!(first_difference(&want, &state), None, "{what}: run_cpu_steps is run_cpu step by step ({shape:?}, {steps} steps)");
        }
    }
}

#[test]
fn emulate_steps_equals_run_cpu_steps_in_2d_for_every_boundary_and_type() {
    check::<f32>(
        "heat zero",
        heat_zero::STEPS_PER_LAUNCH,
        [1, 1],
        false,
        |i, s, o, n| heat_zero::run_cpu_steps(i, s, o, n, 0.2),
        |i, s, o, n| heat_zero::emulate_steps(i, s, o, n, 0.2),
        |i, s, o, _| heat_zero::run_cpu(i, s, o, 0.2),
    );
    check::<f32>(
        "heat clamp",
        3,
        [1, 1],
        false,
        |i, s, o, n| heat_clamp::run_cpu_steps(i, s, o, n, 0.15),
        |i, s, o, n| heat_clamp::emulate_steps(i, s, o, n, 0.15),
        |i, s, o, _| heat_clamp::run_cpu(i, s, o, 0.15),
    );
    check::<f64>("box wrap", 4, [1, 1], false, box_wrap::run_cpu_steps, box_wrap::emulate_steps, |i, s, o, _| box_wrap::run_cpu(i, s, o));
    check::<f32>("tall valid", 2, [2, 1], true, tall_valid::run_cpu_steps, tall_valid::emulate_steps, |i, s, o, _| tall_valid::run_cpu(i, s, o));
    check::<i32>("average i32", 5, [1, 1], false, average_i32::run_cpu_steps, average_i32::emulate_steps, |i, s, o, _| average_i32::run_cpu(i, s, o));
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
    // and whose windows fit 64 registers.
    assert_eq!(heat_zero::STEPS_PER_LAUNCH, 8);
    assert!(heat_zero::FUSED_PTX.contains(".entry rc_heat_zero_steps("), "the fused kernel is printed");
    let (remainder, _) = heat_zero::KERNEL.fused_launch(5).expect("a launch");
    assert!(remainder.ptx().contains(".entry rc_heat_zero_steps("), "a run's last launch of 5 steps prints its kernel");
}

#[test]
fn explain_shows_the_2d_strip_and_its_windows() {
    let text = heat_clamp::explain().expect("explains").to_string();
    assert!(text.contains("fused time steps: 3 steps per launch"), "{text}");
    assert!(
        text.contains("2D: each warp streams down a strip of 128 output rows, one input row per iteration (134 iterations, the first 6 only filling the windows, step s from iteration 2 * s on)"),
        "{text}"
    );
    assert!(text.contains("per step a window of the 2 rows above its newest of the lane's 4 elements in registers (24 words in all)"), "{text}");
    assert!(text.contains("rows outside it along y read as the step's edge row"), "{text}");
}

#[test]
fn time_steps_in_3d_run_one_launch_per_step() {
    let shape = [6, 9, 70];
    let input = awkward::<f32>(shape.iter().product(), 3);
    for steps in [0, 1, 3] {
        let (mut want, mut got) = (vec![poison::<f32>(); input.len()], vec![poison::<f32>(); input.len()]);
        heat3d::run_cpu_steps(&input, shape, &mut want, steps).expect("run_cpu_steps");
        heat3d::emulate_steps(&input, shape, &mut got, steps).expect("emulate_steps");
        assert_eq!(first_difference(&got, &want), None, "{steps} steps");
        let mut state = input.clone();
        for _ in 0..steps {
            let mut next = vec![0.0; input.len()];
            heat3d::run_cpu(&state, shape, &mut next).expect("one step");
            state = next;
        }
        assert_eq!(first_difference(&want, &state), None, "{steps} steps by hand");
    }
}
