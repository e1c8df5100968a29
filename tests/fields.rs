//! Stencils of several input fields from `#[stencil]`: each window reads its own input, in the
//! order the windows are declared, and the generated functions take one input per window, in
//! that order (the shape after the inputs in 2D and 3D): `run_cpu(&u, &k, &mut out, dt)`,
//! `emulate(&u, &k, [rows, cols], &mut out)`. The outputs here are written out by hand from the
//! definition, so a field read from the wrong input, or inputs taken in another order, shows.

use rc::prelude::*;
use rc::{Error, LengthError};

/// `u` one to the right, `k` one to the left: each output reads both inputs at other places.
#[stencil(radius = 1, warp = 4, outputs_per_thread = 2, boundary = zero)]
fn difference(u: Window<f32>, k: Window<f32>, gain: f32) -> f32 {
    gain * (u[1] - k[-1])
}

#[stencil(radius = 1, warp = 4, boundary = zero)]
fn mix2(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(1, 0)] - k[(0, -1)]
}

#[stencil(radius = 1, warp = 2, outputs_per_thread = 2, boundary = clamp)]
fn mix3(a: Window3<i32>, b: Window3<i32>, c: Window3<i32>, bias: i32) -> i32 {
    a[(1, 0, 0)] + 10 * b[(0, -1, 0)] + 100 * c[(0, 0, 1)] + bias
}

/// Windows and a parameter named as the generated functions' own arguments (`output`, `shape`,
/// `stream`): the generated names stay apart from them (this would not compile otherwise).
#[stencil(radius = 1, boundary = clamp)]
fn named_like_arguments(output: Window2<f32>, shape: Window2<f32>, stream: f32) -> f32 {
    output[(0, 1)] * stream + shape[(-1, 0)]
}

const U: [f32; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];
const K: [f32; 5] = [10.0, 20.0, 30.0, 40.0, 50.0];

#[test]
fn each_1d_window_reads_its_own_input_in_declaration_order() {
    // gain * (u[i + 1] - k[i - 1]), zero outside.
    let want = [2.0 * (2.0 - 0.0), 2.0 * (3.0 - 10.0), 2.0 * (4.0 - 20.0), 2.0 * (5.0 - 30.0), 2.0 * (0.0 - 40.0)];
    let mut out = [f32::NAN; 5];
    difference::run_cpu(&U, &K, &mut out, 2.0).expect("run_cpu");
    assert_eq!(out, want);
    let mut out = [f32::NAN; 5];
    difference::emulate(&U, &K, &mut out, 2.0).expect("emulate");
    assert_eq!(out, want);
    // The other order is another stencil: k one to the right, u one to the left.
    difference::emulate(&K, &U, &mut out, 1.0).expect("emulate");
    assert_eq!(out, [20.0 - 0.0, 30.0 - 1.0, 40.0 - 2.0, 50.0 - 3.0, 0.0 - 4.0]);
    assert_eq!(difference::KERNEL.fields(), 2);
}

#[test]
fn each_2d_window_reads_its_own_grid_and_the_shape_follows_the_inputs() {
    // 2 rows of 3: u(y, x) = 3y + x, k(y, x) = 10 + 3y + x; output u(y + 1, x) - k(y, x - 1).
    let u: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let k: Vec<f32> = (0..6).map(|i| 10.0 + i as f32).collect();
    let want = [3.0 - 0.0, 4.0 - 10.0, 5.0 - 11.0, 0.0 - 0.0, 0.0 - 13.0, 0.0 - 14.0];
    let mut out = [f32::NAN; 6];
    mix2::run_cpu(&u, &k, [2, 3], &mut out).expect("run_cpu");
    assert_eq!(out, want);
    let mut out = [f32::NAN; 6];
    mix2::emulate(&u, &k, [2, 3], &mut out).expect("emulate");
    assert_eq!(out, want);
}

#[test]
fn each_3d_window_reads_its_own_grid() {
    // 2 planes of 2 rows of 3, clamp: a(z + 1, y, x) + 10 b(z, y - 1, x) + 100 c(z, y, x + 1) + bias.
    let (depth, rows, cols) = (2usize, 2usize, 3usize);
    let at = |z: usize, y: usize, x: usize| (z * rows + y) * cols + x;
    let a: Vec<i32> = (0..12).collect();
    let b: Vec<i32> = (0..12).map(|i| 20 + i).collect();
    let c: Vec<i32> = (0..12).map(|i| 40 - i).collect();
    let mut want = Vec::new();
    for z in 0..depth {
        for y in 0..rows {
            for x in 0..cols {
                let (z1, y0, x1) = ((z + 1).min(depth - 1), y.saturating_sub(1), (x + 1).min(cols - 1));
                want.push(a[at(z1, y, x)] + 10 * b[at(z, y0, x)] + 100 * c[at(z, y, x1)] - 7);
            }
        }
    }
    let mut out = vec![0; 12];
    mix3::run_cpu(&a, &b, &c, [2, 2, 3], &mut out, -7).expect("run_cpu");
    assert_eq!(out, want);
    let mut out = vec![0; 12];
    mix3::emulate(&a, &b, &c, [2, 2, 3], &mut out, -7).expect("emulate");
    assert_eq!(out, want);
}

#[test]
fn inputs_of_different_lengths_are_refused_naming_both() {
    let mut out = [0.0; 5];
    let err = difference::run_cpu(&U, &K[..4], &mut out, 1.0).expect_err("k is shorter");
    assert_eq!(err, Error::Length(LengthError::InputLength { input: 1, expected: 5, got: 4 }));
    assert_eq!(
        err.to_string(),
        "input 1 has 4 elements, expected 5 as input 0 has: a stencil's inputs share one length (one shape in 2D and \
         3D), numbered from 0 in the order the windows are declared"
    );
    assert_eq!(difference::emulate(&U, &K[..4], &mut out, 1.0), Err(err));
    let (u, k) = (vec![0.0f32; 6], vec![0.0f32; 5]);
    let mut out = [0.0; 6];
    let err = mix2::emulate(&u, &k, [2, 3], &mut out).expect_err("k is shorter");
    assert_eq!(err, Error::Length(LengthError::InputLength { input: 1, expected: 6, got: 5 }));
    // Input 0 is checked against the shape first, as a stencil of one field checks it.
    let err = mix2::run_cpu(&k, &u, [2, 3], &mut out).expect_err("u is shorter");
    assert!(matches!(err, Error::Length(LengthError::InputShape { expected: 6, got: 5, .. })), "{err:?}");
    // The handle takes the inputs as a slice: one per window.
    let err = difference::KERNEL.run_cpu(&[&U], &mut [&mut [0.0; 5]], (1.0,)).expect_err("one input for two windows");
    assert_eq!(err, Error::Length(LengthError::InputCount { expected: 2, got: 1 }));
    assert_eq!(err.to_string(), "expected 2 inputs (one per window the function declares, in order), got 1");
}

#[test]
fn generated_argument_names_never_clash_with_windows_or_parameters() {
    let (a, b) = ([1.0f32, 2.0, 3.0, 4.0], [10.0f32, 20.0, 30.0, 40.0]);
    let mut out = [0.0; 4];
    named_like_arguments::emulate(&a, &b, [2, 2], &mut out, 2.0).expect("emulate");
    // output(y, x + 1) * 2 + shape(y - 1, x), clamped.
    assert_eq!(out, [2.0 * 2.0 + 10.0, 2.0 * 2.0 + 20.0, 2.0 * 4.0 + 10.0, 2.0 * 4.0 + 20.0]);
}

#[cfg(feature = "cust")]
#[test]
fn run_takes_one_host_slice_per_window() {
    let got = difference::run(&U, &K, 2.0);
    match rc::runtime::gpu() {
        Ok(_) => {
            assert_eq!(
                got.expect("runs"),
                difference::KERNEL.reference_vec(&[&U, &K], (2.0,)).expect("reference").remove(0)
            )
        }
        Err(_) => assert!(got.expect_err("no GPU").is_no_device()),
    }
    let err = mix2::run(&[0.0; 6], &[0.0; 5], [2, 3]).expect_err("k is shorter");
    assert!(
        matches!(
            err,
            rc::runtime::Error::Length { stencil: "mix2", source: LengthError::InputLength { input: 1, .. } }
        ),
        "{err:?}"
    );
}
