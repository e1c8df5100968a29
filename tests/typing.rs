//! Literals get the types rustc gives them, so the kernel computes in the same precision as the
//! reference. Each stencil below once lowered to a different type than rustc's.

use rc::prelude::*;
use rc::testdata::{awkward, first_difference};

/// rustc gives `a` one type for all its uses: f32, from `w[0] * a`, also under `as f64`.
#[stencil(radius = 1, warp = 4)]
fn let_bound_literal_typed_by_a_later_use(w: Window<f32>) -> f32 {
    let a = 0.1;
    let b = a as f64;
    ((b - 0.1) * 1e12) as f32 + w[0] * a
}

/// A literal under `as` takes the cast's type: `3000000000` is a u32, `1.000...1` rounds once.
// The casts and the over-long literal are what this test is about.
#[allow(clippy::unnecessary_cast, clippy::excessive_precision)]
#[stencil(radius = 1, warp = 8)]
fn literal_under_a_cast(w: Window<u32>) -> u32 {
    w[0].min(3000000000 as u32) + ((1.00000005960464477539062500000001 as f32) * 1e7) as u32 % 7
}

/// `2f32` is a float literal even though it looks like an integer.
#[stencil(radius = 1)]
fn integer_looking_float_literals(w: Window<f32>) -> f32 {
    w[-1] * 2f32 + 1f32 - w[1] * 3f32
}

#[stencil(radius = 2, warp = 16, boundary = zero)]
fn annotated_bools(w: Window<f64>) -> f64 {
    let rising: bool = w[0] > w[-1];
    const STRICT: bool = true;
    if rising && STRICT {
        w[1]
    } else {
        w[-2]
    }
}

fn check<T: rc::Element>(k: &rc::Stencil<T, ()>) {
    let input: Vec<T> = awkward(1000, 3);
    let want = k.reference_vec(&[&input], ()).expect("reference").remove(0);
    let got = k.emulate_vec(&[&input], ()).expect("emulation").remove(0);
    assert_eq!(first_difference(&got, &want), None, "{}", k.name());
}

#[test]
fn a_let_bound_literal_has_one_type_for_all_its_uses() {
    check(&let_bound_literal_typed_by_a_later_use::KERNEL);
}

#[test]
fn a_literal_under_as_has_the_casts_type() {
    check(&literal_under_a_cast::KERNEL);
}

#[test]
fn a_float_literal_without_a_point_is_a_float() {
    check(&integer_looking_float_literals::KERNEL);
}

#[test]
fn lets_and_consts_may_be_annotated_bool() {
    check(&annotated_bools::KERNEL);
}

/// Only a literal takes the cast's type; an expression of literals keeps f64, then rounds.
// The over-long literal is what this test is about.
#[allow(clippy::excessive_precision)]
#[stencil(radius = 1)]
fn literal_expression_under_a_cast(w: Window<f32>) -> f32 {
    w[0] + (1.00000005960464477539062500000001 + 0.0) as f32
}

/// `(0 - 1) as u32` is an i32 expression cast to u32; a loop index keeps its own type (i32).
#[stencil(radius = 1, warp = 8)]
fn integer_expressions_under_a_cast(w: Window<u32>) -> u32 {
    let mut s = w[0].max((0 - 1) as u32);
    for k in -1..=1 {
        s = s.min(w[k].max(k as u32));
    }
    s + w[1].max(-2147483648i32 as u32)
}

/// A `let` has one type for all its uses, even when a compile-time `if` depends on it.
#[stencil(radius = 1, warp = 4)]
fn let_typing_that_decides_a_branch(w: Window<f32>) -> f32 {
    let a = 1.00000001;
    let mut s = w[0] * a;
    if a == 1.0 {
        let b = 0.5;
        s += b;
    }
    let d = 0.1;
    s + (d * 3.0) as f32
}

#[test]
fn a_literal_expression_under_as_keeps_its_own_type() {
    check(&literal_expression_under_a_cast::KERNEL);
}

#[test]
fn integer_expressions_and_loop_indices_under_as_keep_their_own_type() {
    check(&integer_expressions_under_a_cast::KERNEL);
}

#[test]
fn a_let_typed_by_a_later_use_can_decide_a_compile_time_branch() {
    check(&let_typing_that_decides_a_branch::KERNEL);
}

/// NaN cast to an integer is 0, as in Rust, for f64 as for f32 (an H200's f64 conversion gives
/// i32::MIN for NaN; the kernel corrects it). Emulation covers the semantics; tests/gpu.rs the GPU.
#[stencil(radius = 1)]
fn nan_to_integer(w: Window<f64>) -> f64 {
    (w[0] as i32) as f64 + (w[1] as u32) as f64 + (w[-1] as f32 as i32) as f64
}

#[test]
fn nan_cast_to_an_integer_is_zero() {
    check(&nan_to_integer::KERNEL);
}
