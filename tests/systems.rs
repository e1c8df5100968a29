//! Systems: stencils that return several values, one output field each, and time steps that
//! evolve them together (output field k is the next state of window k). Gray-Scott (two coupled
//! fields), the leapfrog wave equation (the new u, and the old u becoming the previous u), and
//! outputs returned as arrays. Each is checked against the same update written out by hand
//! (plain loops, no `#[stencil]`), then the emulation of the kernel and of its fused time steps
//! bit for bit against the CPU reference, for each boundary rule.

use rc::prelude::*;
use rc::{Error, LengthError};

const DU: f32 = 0.16;
const DV: f32 = 0.08;
const DT: f32 = 1.0;

/// Gray-Scott reaction-diffusion: u and v, fed at rate f and killed at rate k.
#[stencil(radius = 1, boundary = wrap)]
fn gray_scott(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    // A body sees its own items; the same values as the crate's, for the loops below.
    const DU: f32 = 0.16;
    const DV: f32 = 0.08;
    const DT: f32 = 1.0;
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    let du = DU * lap_u - uvv + f * (1.0 - u[(0, 0)]);
    let dv = DV * lap_v + uvv - (f + k) * v[(0, 0)];
    (u[(0, 0)] + DT * du, v[(0, 0)] + DT * dv)
}

/// The same system under `clamp` and `zero`, fused 3 steps per launch.
#[stencil(radius = 1, boundary = clamp, fuse = 3)]
fn gray_scott_clamp(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    // A body sees its own items; the same values as the crate's, for the loops below.
    const DU: f32 = 0.16;
    const DV: f32 = 0.08;
    const DT: f32 = 1.0;
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (
        u[(0, 0)] + DT * (DU * lap_u - uvv + f * (1.0 - u[(0, 0)])),
        v[(0, 0)] + DT * (DV * lap_v + uvv - (f + k) * v[(0, 0)]),
    )
}

/// The leapfrog wave equation in 1D: u_next = 2u - u_prev + c2 (u[-1] - 2u + u[1]); the old u
/// becomes the next step's previous u.
#[stencil(radius = 1, boundary = zero, fuse = 4)]
fn wave(u: Window<f32>, prev: Window<f32>, c2: f32) -> (f32, f32) {
    (2.0 * u[0] - prev[0] + c2 * (u[-1] - 2.0 * u[0] + u[1]), u[0])
}

/// A 3D system of three fields returned as an array, with a coefficient field that stays.
#[stencil(radius = 1, boundary = clamp)]
fn rotate3(a: Window3<f32>, b: Window3<f32>, c: Window3<f32>, kappa: Window3<f32>) -> [f32; 3] {
    let s = kappa[(0, 0, 0)];
    [
        a[(0, 0, 0)] + s * (b[(1, 0, 0)] - c[(-1, 0, 0)]),
        b[(0, 0, 0)] + s * (c[(0, 1, 0)] - a[(0, -1, 0)]),
        c[(0, 0, 0)] + s * (a[(0, 0, 1)] - b[(0, 0, -1)]),
    ]
}

/// Several outputs of one input: a gradient, returned as an array built in the body.
#[stencil(radius = 1, boundary = zero)]
// The body returns a local array by its name, which this tests.
#[allow(clippy::let_and_return)]
fn gradient(w: Window2<f64>) -> [f64; 2] {
    let g = [0.5 * (w[(1, 0)] - w[(-1, 0)]), 0.5 * (w[(0, 1)] - w[(0, -1)])];
    g
}

/// Integers, three outputs of a tuple, a parameter.
#[stencil(radius = 2, boundary = wrap)]
fn sums(w: Window<i32>, bias: i32) -> (i32, i32, i32) {
    (w[-2] + w[2] + bias, w[-1] * w[1], w[0])
}

fn field(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) as f32 / 16777216.0).collect()
}

/// One Gray-Scott step written out by hand under `wrap`.
fn gray_scott_by_hand(u: &[f32], v: &[f32], [rows, cols]: [usize; 2], f: f32, k: f32) -> (Vec<f32>, Vec<f32>) {
    let at = |y: isize, x: isize| (y.rem_euclid(rows as isize) as usize) * cols + x.rem_euclid(cols as isize) as usize;
    let (mut nu, mut nv) = (vec![0.0; u.len()], vec![0.0; v.len()]);
    for y in 0..rows as isize {
        for x in 0..cols as isize {
            let c = at(y, x);
            let lap_u = u[at(y - 1, x)] + u[at(y + 1, x)] + u[at(y, x - 1)] + u[at(y, x + 1)] - 4.0 * u[c];
            let lap_v = v[at(y - 1, x)] + v[at(y + 1, x)] + v[at(y, x - 1)] + v[at(y, x + 1)] - 4.0 * v[c];
            let uvv = u[c] * v[c] * v[c];
            nu[c] = u[c] + DT * (DU * lap_u - uvv + f * (1.0 - u[c]));
            nv[c] = v[c] + DT * (DV * lap_v + uvv - (f + k) * v[c]);
        }
    }
    (nu, nv)
}

#[test]
fn a_tuple_return_writes_one_output_field_per_element() {
    let shape = [37, 45];
    let (u, v) = (field(37 * 45, 1), field(37 * 45, 2));
    let (want_u, want_v) = gray_scott_by_hand(&u, &v, shape, 0.035, 0.065);
    let (mut out_u, mut out_v) = (vec![f32::NAN; u.len()], vec![f32::NAN; u.len()]);
    gray_scott::run_cpu(&u, &v, shape, &mut out_u, &mut out_v, 0.035, 0.065).expect("run_cpu");
    assert_eq!((&out_u, &out_v), (&want_u, &want_v));
    let (mut em_u, mut em_v) = (vec![f32::NAN; u.len()], vec![f32::NAN; u.len()]);
    gray_scott::emulate(&u, &v, shape, &mut em_u, &mut em_v, 0.035, 0.065).expect("emulate");
    assert_eq!(
        em_u.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want_u.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(
        em_v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want_v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!((gray_scott::KERNEL.fields(), gray_scott::KERNEL.output_fields()), (2, 2));
    // The kernel takes one output pointer per field.
    assert!(gray_scott::PTX.contains(".param .u64 rc_gray_scott_output1"), "{}", gray_scott::PTX);
    assert!(!gray_scott::PTX.contains("output2"));
}

#[test]
fn time_steps_evolve_every_state_field_together() {
    let shape = [29, 70];
    let (u, v) = (field(29 * 70, 3), field(29 * 70, 4));
    let (mut want_u, mut want_v) = (u.clone(), v.clone());
    for _ in 0..5 {
        (want_u, want_v) = gray_scott_by_hand(&want_u, &want_v, shape, 0.03, 0.06);
    }
    let (mut out_u, mut out_v) = (vec![f32::NAN; u.len()], vec![f32::NAN; u.len()]);
    gray_scott::run_cpu_steps(&u, &v, shape, &mut out_u, &mut out_v, 5, 0.03, 0.06).expect("run_cpu_steps");
    assert_eq!((&out_u, &out_v), (&want_u, &want_v));
    let (mut em_u, mut em_v) = (vec![f32::NAN; u.len()], vec![f32::NAN; u.len()]);
    gray_scott::emulate_steps(&u, &v, shape, &mut em_u, &mut em_v, 5, 0.03, 0.06).expect("emulate_steps");
    assert_eq!((&em_u, &em_v), (&want_u, &want_v));
}

#[test]
fn fused_steps_of_a_system_match_the_reference_at_every_step_count() {
    assert_eq!(gray_scott_clamp::STEPS_PER_LAUNCH, 3);
    let shape = [33, 41];
    let (u, v) = (field(33 * 41, 5), field(33 * 41, 6));
    for steps in [0, 1, 2, 3, 4, 7] {
        let (mut ref_u, mut ref_v) = (vec![f32::NAN; u.len()], vec![f32::NAN; u.len()]);
        gray_scott_clamp::run_cpu_steps(&u, &v, shape, &mut ref_u, &mut ref_v, steps, 0.04, 0.06).expect("reference");
        let (mut em_u, mut em_v) = (vec![f32::NAN; u.len()], vec![f32::NAN; u.len()]);
        gray_scott_clamp::emulate_steps(&u, &v, shape, &mut em_u, &mut em_v, steps, 0.04, 0.06).expect("emulation");
        assert_eq!((&em_u, &em_v), (&ref_u, &ref_v), "{steps} steps");
    }
}

#[test]
fn leapfrog_carries_the_old_field_as_the_previous_one() {
    let n = 300;
    let (u, prev) = (field(n, 7), field(n, 8));
    // By hand: zero outside.
    let (mut want_u, mut want_prev) = (u.clone(), prev.clone());
    for _ in 0..9 {
        let at = |f: &[f32], i: isize| if (0..n as isize).contains(&i) { f[i as usize] } else { 0.0 };
        let next: Vec<f32> = (0..n as isize)
            .map(|i| {
                2.0 * at(&want_u, i) - at(&want_prev, i)
                    + 0.25 * (at(&want_u, i - 1) - 2.0 * at(&want_u, i) + at(&want_u, i + 1))
            })
            .collect();
        want_prev = std::mem::replace(&mut want_u, next);
    }
    let (mut out_u, mut out_prev) = (vec![f32::NAN; n], vec![f32::NAN; n]);
    wave::run_cpu_steps(&u, &prev, &mut out_u, &mut out_prev, 9, 0.25).expect("run_cpu_steps");
    assert_eq!((&out_u, &out_prev), (&want_u, &want_prev));
    let (mut em_u, mut em_prev) = (vec![f32::NAN; n], vec![f32::NAN; n]);
    wave::emulate_steps(&u, &prev, &mut em_u, &mut em_prev, 9, 0.25).expect("emulate_steps");
    assert_eq!((&em_u, &em_prev), (&want_u, &want_prev));
}

#[test]
fn array_returns_in_3d_with_a_coefficient_field() {
    let shape = [6, 9, 40];
    let n = 6 * 9 * 40;
    let (a, b, c, kappa) = (field(n, 9), field(n, 10), field(n, 11), field(n, 12));
    let reference = rotate3::KERNEL.reference_grid_vec(&[&a, &b, &c, &kappa], shape, ()).expect("reference");
    assert_eq!(reference.len(), 3);
    // Output 1 at an interior point, by hand: b + kappa * (c[y + 1] - a[y - 1]).
    let at = |z: usize, y: usize, x: usize| (z * 9 + y) * 40 + x;
    let (z, y, x) = (3, 4, 17);
    let want = b[at(z, y, x)] + kappa[at(z, y, x)] * (c[at(z, y + 1, x)] - a[at(z, y - 1, x)]);
    assert_eq!(reference[1][at(z, y, x)], want);
    let emulated = rotate3::KERNEL.emulate_grid_vec(&[&a, &b, &c, &kappa], shape, ()).expect("emulation");
    assert_eq!(emulated, reference);
    // Three state fields step together; the coefficient stays.
    let mut outs = [vec![f32::NAN; n], vec![f32::NAN; n], vec![f32::NAN; n]];
    let [o0, o1, o2] = &mut outs;
    rotate3::run_cpu_steps(&a, &b, &c, &kappa, shape, o0, o1, o2, 3).expect("run_cpu_steps");
    let mut emulated = [vec![f32::NAN; n], vec![f32::NAN; n], vec![f32::NAN; n]];
    let [e0, e1, e2] = &mut emulated;
    rotate3::emulate_steps(&a, &b, &c, &kappa, shape, e0, e1, e2, 3).expect("emulate_steps");
    assert_eq!(emulated, outs);
}

#[test]
fn arrays_and_tuples_of_other_element_types() {
    let shape = [20, 33];
    let w: Vec<f64> = (0..20 * 33).map(|i| (i as f64).sin()).collect();
    let [gy, gx] = {
        let (mut gy, mut gx) = (vec![f64::NAN; w.len()], vec![f64::NAN; w.len()]);
        gradient::run_cpu(&w, shape, &mut gy, &mut gx).expect("run_cpu");
        [gy, gx]
    };
    let at = |y: usize, x: usize| y * 33 + x;
    assert_eq!(gy[at(5, 6)], 0.5 * (w[at(6, 6)] - w[at(4, 6)]));
    assert_eq!(gx[at(0, 0)], 0.5 * (w[at(0, 1)] - 0.0));
    let emulated = gradient::KERNEL.emulate_grid_vec(&[&w], shape, ()).expect("emulate");
    assert_eq!(emulated, vec![gy, gx]);

    let w: Vec<i32> = (0..100).map(|i| i * 7 - 300).collect();
    let mut outs = [vec![0; 100], vec![0; 100], vec![0; 100]];
    let [a, b, c] = &mut outs;
    sums::emulate(&w, a, b, c, 5).expect("emulate");
    assert_eq!(outs[0][0], w[98] + w[2] + 5);
    assert_eq!(outs[1][99], w[98] * w[0]);
    assert_eq!(outs[2], w);
    assert_eq!(sums::KERNEL.reference_vec(&[&w], (5,)).expect("reference").as_slice(), &outs);
}

#[test]
fn a_launch_needs_one_output_per_field_of_one_length() {
    let shape = [8, 8];
    let (u, v) = (field(64, 1), field(64, 2));
    let mut one = vec![0.0; 64];
    let err = gray_scott::KERNEL.run_cpu_grid(&[&u, &v], shape, &mut [&mut one], (0.1, 0.1)).expect_err("one output");
    assert!(matches!(err, Error::Length(LengthError::OutputCount { expected: 2, got: 1 })), "{err}");
    let (mut a, mut short) = (vec![0.0; 64], vec![0.0; 63]);
    let err = gray_scott::emulate(&u, &v, shape, &mut a, &mut short, 0.1, 0.1).expect_err("short second output");
    assert!(matches!(err, Error::Length(LengthError::OutputLength { output: 1, .. })), "{err}");
    // Time steps feed output k back as input k: a system of two outputs needs both as inputs.
    let err = gray_scott::run_cpu_steps(&u, &v, shape, &mut a, &mut short, 2, 0.1, 0.1).expect_err("short");
    assert!(err.to_string().contains("output"), "{err}");
}

#[cfg(any(feature = "cust", feature = "cudarc"))]
#[test]
fn run_returns_the_outputs_as_the_function_returns_its_elements() {
    let shape = [16, 40];
    let (u, v) = (field(640, 1), field(640, 2));
    match gray_scott::run(&u, &v, shape, 0.035, 0.065) {
        Ok((got_u, got_v)) => {
            let (want_u, want_v) = gray_scott_by_hand(&u, &v, shape, 0.035, 0.065);
            assert_eq!((got_u, got_v), (want_u, want_v));
        }
        Err(e) if e.is_no_device() => eprintln!("skipped: no GPU ({e})"),
        Err(e) => panic!("{e}"),
    }
    let w: Vec<i32> = (0..100).map(|i| i * 7 - 300).collect();
    match sums::run(&w, 5) {
        Ok((a, b, c)) => assert_eq!(vec![a, b, c], sums::KERNEL.reference_vec(&[&w], (5,)).expect("reference")),
        Err(e) if e.is_no_device() => eprintln!("skipped: no GPU ({e})"),
        Err(e) => panic!("{e}"),
    }
}

/// Three f64 fields under `valid` in 2D with a coefficient field, fused 2 steps per launch.
#[stencil(radius = 1, boundary = valid, fuse = 2)]
fn cycle_valid(a: Window2<f64>, b: Window2<f64>, c: Window2<f64>, s: Window2<f64>) -> [f64; 3] {
    [
        a[(0, 0)] + s[(0, 0)] * (b[(1, 0)] - c[(0, -1)]),
        b[(0, 0)] + s[(0, 0)] * (c[(-1, 0)] - a[(0, 1)]),
        c[(0, 0)] - 0.5 * a[(0, 0)],
    ]
}

#[test]
fn fused_steps_of_a_valid_system_shrink_every_field_alike() {
    let shape = [40, 70];
    let n = 40 * 70;
    let fields: Vec<Vec<f64>> = (0..4).map(|f| field(n, 20 + f).iter().map(|&x| f64::from(x)).collect()).collect();
    for steps in [1, 2, 3, 5] {
        let out = (40 - 2 * steps) * (70 - 2 * steps);
        let mut want = vec![vec![f64::NAN; out]; 3];
        let [w0, w1, w2] = &mut want[..] else { unreachable!() };
        cycle_valid::run_cpu_steps(&fields[0], &fields[1], &fields[2], &fields[3], shape, w0, w1, w2, steps)
            .expect("reference");
        let mut got = vec![vec![f64::NAN; out]; 3];
        let [g0, g1, g2] = &mut got[..] else { unreachable!() };
        cycle_valid::emulate_steps(&fields[0], &fields[1], &fields[2], &fields[3], shape, g0, g1, g2, steps)
            .expect("emulation");
        assert_eq!(got, want, "{steps} steps");
    }
}

#[test]
fn every_printed_kernel_reads_only_registers_set_on_every_path() {
    let kernels = [
        ("gray_scott", gray_scott::PTX, gray_scott::FUSED_PTX),
        ("gray_scott_clamp", gray_scott_clamp::PTX, gray_scott_clamp::FUSED_PTX),
        ("wave", wave::PTX, wave::FUSED_PTX),
        ("rotate3", rotate3::PTX, rotate3::FUSED_PTX),
        ("gradient", gradient::PTX, gradient::FUSED_PTX),
        ("sums", sums::PTX, sums::FUSED_PTX),
        ("cycle_valid", cycle_valid::PTX, cycle_valid::FUSED_PTX),
    ];
    for (name, ptx, fused) in kernels {
        for text in [ptx, fused] {
            let found = rc::core::ptx::defined::unset_reads(text);
            assert!(found.is_empty(), "{name}: {}", found.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("\n"));
        }
    }
}
