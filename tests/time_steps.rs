//! Time steps through `#[stencil]`: `run_cpu_steps` is `run_cpu` applied step by step, and
//! `emulate_steps` (fused launches of `STEPS_PER_LAUNCH` steps, then one launch of the steps left) equals
//! it bit for bit, for every boundary, element type, several radii, coefficient fields, step
//! counts around the fused degree and lengths from shorter than the halo to many tiles.

use rc::prelude::*;
use rc::testdata::{awkward, first_difference, poison};
use rc::{Element, Error, LengthError};

#[stencil(radius = 1, boundary = clamp)]
fn heat_clamp(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 1, boundary = zero, fuse = 5)]
fn heat_zero(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 1, boundary = wrap, fuse = 8)]
fn heat_wrap(w: Window<f64>, alpha: f64) -> f64 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 1, boundary = valid, fuse = 4)]
fn heat_valid(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

/// The benchmark's 9-tap stencil.
#[stencil(radius = 4, boundary = clamp)]
fn nine_tap(w: Window<f32>) -> f32 {
    0.02 * w[-4]
        + 0.05 * w[-3]
        + 0.1 * w[-2]
        + 0.15 * w[-1]
        + 0.36 * w[0]
        + 0.15 * w[1]
        + 0.1 * w[2]
        + 0.05 * w[3]
        + 0.02 * w[4]
}

#[stencil(radius = 3, boundary = zero, fuse = 3)]
fn average_i32(w: Window<i32>) -> i32 {
    (w[-3] + w[-1] + w[0] + w[2] + w[3]) / 5
}

#[stencil(radius = 2, boundary = wrap)]
fn automaton(w: Window<u32>) -> u32 {
    (w[-2] ^ w[1]) | (w[0] & w[2]) ^ w[-1]
}

/// A coefficient field that stays as given: `u' = u + k * laplacian(u)`.
#[stencil(radius = 1, boundary = valid, fuse = 6)]
fn varying(u: Window<f32>, k: Window<f32>) -> f32 {
    u[0] + k[0] * (u[-1] - 2.0 * u[0] + u[1])
}

#[stencil(radius = 1, boundary = clamp, fuse = 7)]
fn varying_clamp(u: Window<f64>, k: Window<f64>) -> f64 {
    u[0] + k[0] * (u[-1] - 2.0 * u[0] + u[1]) + 0.5 * k[1]
}

/// Step counts around `t` and many.
fn step_counts(t: u32) -> Vec<usize> {
    let t = t as usize;
    vec![0, 1, 2, t.saturating_sub(1), t, t + 1, 2 * t + 3]
}

/// Lengths from shorter than the halo to many tiles.
const LENGTHS: [usize; 7] = [1, 3, 17, 200, 256, 1000, 4099];

fn check<T: Element>(
    what: &str,
    t: u32,
    radius: usize,
    valid: bool,
    run_cpu_steps: impl Fn(&[T], &mut [T], usize) -> Result<(), Error>,
    emulate_steps: impl Fn(&[T], &mut [T], usize) -> Result<(), Error>,
    run_cpu: impl Fn(&[T]) -> Vec<T>,
) {
    for n in LENGTHS {
        for steps in step_counts(t) {
            let out = if valid { n as i64 - 2 * (radius * steps) as i64 } else { n as i64 };
            if out <= 0 {
                continue;
            }
            let input = awkward::<T>(n, (n * 131 + steps) as u64);
            let (mut want, mut got) = (vec![poison::<T>(); out as usize], vec![poison::<T>(); out as usize]);
            run_cpu_steps(&input, &mut want, steps).expect("run_cpu_steps");
            emulate_steps(&input, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "{what}: n = {n}, {steps} steps");
            let mut state = input;
            for _ in 0..steps {
                state = run_cpu(&state);
            }
            assert_eq!(
                first_difference(&want, &state),
                None,
                "{what}: run_cpu_steps is run_cpu step by step (n = {n}, {steps} steps)"
            );
        }
    }
}

fn one_step<T: Element>(
    len: impl Fn(usize) -> usize,
    run: impl Fn(&[T], &mut [T]) -> Result<(), Error>,
) -> impl Fn(&[T]) -> Vec<T> {
    move |input| {
        let mut out = vec![poison::<T>(); len(input.len())];
        run(input, &mut out).expect("run_cpu");
        out
    }
}

#[test]
fn emulate_steps_equals_run_cpu_steps_for_every_boundary_and_type() {
    let same = |n| n;
    check::<f32>(
        "heat clamp",
        heat_clamp::STEPS_PER_LAUNCH,
        1,
        false,
        |i, o, s| heat_clamp::run_cpu_steps(i, o, s, 0.25),
        |i, o, s| heat_clamp::emulate_steps(i, o, s, 0.25),
        one_step(same, |i, o| heat_clamp::run_cpu(i, o, 0.25)),
    );
    check::<f32>(
        "heat zero",
        5,
        1,
        false,
        |i, o, s| heat_zero::run_cpu_steps(i, o, s, 0.3),
        |i, o, s| heat_zero::emulate_steps(i, o, s, 0.3),
        one_step(same, |i, o| heat_zero::run_cpu(i, o, 0.3)),
    );
    check::<f64>(
        "heat wrap",
        8,
        1,
        false,
        |i, o, s| heat_wrap::run_cpu_steps(i, o, s, 0.2),
        |i, o, s| heat_wrap::emulate_steps(i, o, s, 0.2),
        one_step(same, |i, o| heat_wrap::run_cpu(i, o, 0.2)),
    );
    check::<f32>(
        "heat valid",
        4,
        1,
        true,
        |i, o, s| heat_valid::run_cpu_steps(i, o, s, 0.25),
        |i, o, s| heat_valid::emulate_steps(i, o, s, 0.25),
        one_step(|n| n - 2, |i, o| heat_valid::run_cpu(i, o, 0.25)),
    );
    check::<f32>(
        "nine tap",
        nine_tap::STEPS_PER_LAUNCH,
        4,
        false,
        nine_tap::run_cpu_steps,
        nine_tap::emulate_steps,
        one_step(same, nine_tap::run_cpu),
    );
    check::<i32>(
        "average i32",
        3,
        3,
        false,
        average_i32::run_cpu_steps,
        average_i32::emulate_steps,
        one_step(same, average_i32::run_cpu),
    );
    check::<u32>(
        "automaton u32",
        automaton::STEPS_PER_LAUNCH,
        2,
        false,
        automaton::run_cpu_steps,
        automaton::emulate_steps,
        one_step(same, automaton::run_cpu),
    );
}

#[test]
fn coefficient_fields_stay_as_given_and_follow_the_state_under_valid() {
    for n in [20, 300, 2000] {
        let u = awkward::<f32>(n, 7);
        let k: Vec<f32> = (0..n).map(|i| 0.1 + 0.3 * ((i % 7) as f32 / 7.0)).collect();
        for steps in step_counts(6) {
            if n <= 2 * steps {
                continue;
            }
            let out = n - 2 * steps;
            let (mut want, mut got) = (vec![poison::<f32>(); out], vec![poison::<f32>(); out]);
            varying::run_cpu_steps(&u, &k, &mut want, steps).expect("run_cpu_steps");
            varying::emulate_steps(&u, &k, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "valid n = {n}, {steps} steps");
            // By hand: step s reads k where the state lies, r * s elements in.
            let mut state = u.clone();
            for s in 0..steps {
                let mut next = vec![0.0; state.len() - 2];
                varying::run_cpu(&state, &k[s..s + state.len()], &mut next).expect("one step");
                state = next;
            }
            assert_eq!(first_difference(&want, &state), None, "valid n = {n}, {steps} steps, by hand");
        }
        let (u, k) = (awkward::<f64>(n, 9), awkward::<f64>(n, 10));
        for steps in step_counts(7) {
            let (mut want, mut got) = (vec![poison::<f64>(); n], vec![poison::<f64>(); n]);
            varying_clamp::run_cpu_steps(&u, &k, &mut want, steps).expect("run_cpu_steps");
            varying_clamp::emulate_steps(&u, &k, &mut got, steps).expect("emulate_steps");
            assert_eq!(first_difference(&got, &want), None, "clamp n = {n}, {steps} steps");
        }
    }
}

#[test]
fn the_fused_degree_is_the_attributes_or_the_cost_models() {
    assert_eq!((heat_zero::STEPS_PER_LAUNCH, heat_wrap::STEPS_PER_LAUNCH, average_i32::STEPS_PER_LAUNCH), (5, 8, 3));
    // The cost model: block tiles of 256 lanes, f32 heat 124 steps on 20 elements per lane, the
    // 9-tap stencil 58 on 56.
    assert_eq!((heat_clamp::STEPS_PER_LAUNCH, nine_tap::STEPS_PER_LAUNCH), (124, 58));
    assert!(heat_clamp::FUSED_PTX.contains(".entry rc_heat_clamp_steps("), "the fused kernel is printed");
    assert_eq!(heat_clamp::FUSED_ENTRY, "rc_heat_clamp_steps");
    // The steps left after the last full launch run as one fused launch of their own degree,
    // its kernel printed the first time a run needs it, once.
    for d in 2..32 {
        let (launch, _) = heat_clamp::KERNEL.fused_launch(d).expect("a launch");
        let launch = launch[0];
        let program = heat_clamp::KERNEL.fused_program(d).expect("compiles");
        assert_eq!(launch.ptx(), rc::core::ptx::print(&program, heat_clamp::FUSED_ENTRY), "{d} steps");
        let (again, _) = heat_clamp::KERNEL.fused_launch(d).expect("a launch");
        assert!(std::ptr::eq(launch.ptx(), again[0].ptx()), "{d} steps: printed once");
    }
    let (full, _) = heat_clamp::KERNEL.fused_launch(124).expect("a launch");
    assert_eq!(full.len(), 2, "a 1D block tile's launch is two kernels: the interior tiles', then the edge tiles'");
    assert_eq!(full[1].entry(), "rc_heat_clamp_steps_edges");
    assert!(std::ptr::eq(full[0].ptx(), heat_clamp::FUSED_PTX), "the macro's kernel for its own degree");
    assert_eq!(
        heat_valid_no_fuse::KERNEL.fused_launch(2).expect("a launch").0[0].ptx(),
        "",
        "no fused kernel, nothing printed"
    );
}

#[test]
fn steps_that_outlast_a_valid_input_are_refused_with_the_numbers() {
    let input = vec![1.0f32; 9];
    let err = heat_valid::run_cpu_steps(&input, &mut [], 5, 0.25).expect_err("9 - 10 < 1");
    assert_eq!(err, Error::Length(LengthError::StepsOutlastInput { len: 9, radius: 1, steps: 5 }));
    assert!(err.to_string().contains("5 steps of an input of 9 elements leave -1"), "{err}");
    let err = heat_clamp::emulate_steps(&input, &mut [0.0; 8], 2, 0.25).expect_err("clamp keeps 9");
    assert_eq!(
        err.to_string(),
        "output has 8 elements, expected 9 for 2 steps on an input of 9 elements with boundary `clamp`"
    );
}

#[test]
fn explain_shows_the_fused_tile_and_its_shrinking_halo() {
    let text = heat_clamp::explain().expect("explains").to_string();
    assert!(text.contains("fused time steps: 124 steps per launch"), "{text}");
    assert!(text.contains("tile: 5120 elements per block, loaded once; lane l owns elements 20l..20l+20"), "{text}");
    assert!(text.contains("a block tile: its 256 lanes are 8 hardware warps; each step lane 31 of each warp and lane 0 of the next swap their 1 edge elements through shared memory"), "{text}");
    assert!(text.contains("after step   1: elements 1..5119 exact (halo 1 each side)"), "{text}");
    assert!(text.contains("after step 124: elements 124..4996 exact (halo 124 each side)"), "{text}");
    assert!(text.contains("stored: elements 124..4996, 4872 outputs per block (19.03 per lane)"), "{text}");
    assert!(text.contains("two kernels per launch, one after the other on one stream, each over every tile"), "{text}");
    assert!(
        text.contains(
            "boundary `clamp`: after every step elements outside the input take the step's value at index 0 or n - 1"
        ),
        "{text}"
    );
    // Stencils without a fused kernel explain their one-step kernel alone.
    assert!(!heat_valid_no_fuse::explain().expect("explains").to_string().contains("fused time steps"));
}

#[stencil(radius = 1, boundary = valid, fuse = 1)]
fn heat_valid_no_fuse(w: Window<f32>) -> f32 {
    w[-1] + w[0] + w[1]
}
