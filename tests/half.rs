//! `half::f16` and `half::bf16` elements through `#[stencil]`: the macro reads the half crate's
//! spelling (types, `from_f32`, `to_f32`, associated constants, operators, `min`/`max`,
//! comparisons), and the kernel's emulation equals the function itself (which computes with the
//! half crate) bit for bit, over data full of NaNs, infinities, zeros and subnormals.

use half::{bf16, f16};
use rc::prelude::*;
use rc::testdata::{awkward, first_difference};

/// The 1D box average in f16: every sum rounds to 16 bits, as the half crate's `+` does.
#[stencil(radius = 2, warp = 32, outputs_per_thread = 8, boundary = zero)]
fn box5(w: Window<f16>) -> f16 {
    let mut s = f16::ZERO;
    for k in -2..=2 {
        s += w[k];
    }
    s / f16::from_f32(5.0)
}

#[stencil(radius = 1, outputs_per_thread = 4, boundary = clamp)]
fn mixed(w: Window<half::f16>, gain: f16, bias: f32) -> f16 {
    let t = (w[-1] - w[1]) * gain + f16::ONE;
    let wide = t.to_f32() * bias + w[0].to_f32();
    let m = t.max(w[0]).min(f16::MAX);
    if t < w[0] || w[1] == f16::NEG_ZERO {
        -m
    } else {
        f16::from_f32(wide) + f16::from_f32_const(0.1)
    }
}

#[stencil(radius = 3, warp = 16, outputs_per_thread = 2, boundary = wrap)]
fn smooth_bf16(w: Window<bf16>, k: [bf16; 3]) -> bf16 {
    let mut s = bf16::from_f32(0.0);
    for j in 1..=3 {
        s += k[(j - 1) as usize] * (w[-j] + w[j]);
    }
    s + w[0] * half::bf16::EPSILON - bf16::PI
}

#[stencil(radius = 1, warp = 4, boundary = zero)]
fn grid_f16(w: Window2<f16>) -> f16 {
    w[(-1, 0)] + w[(1, 0)] - w[(0, 1)] * f16::from_f32(0.5)
}

#[stencil(radius = 1, warp = 4, outputs_per_thread = 4, boundary = clamp)]
fn two_fields(u: Window<bf16>, v: Window<bf16>) -> bf16 {
    (u[-1] + v[1]).max(u[0] - v[0])
}

/// A stencil over f32 data that rounds through f16 in between.
#[stencil(radius = 1, boundary = zero)]
fn through_f16(w: Window<f32>) -> f32 {
    f16::from_f32(w[-1] + w[1]).to_f32() * 0.5
}

#[test]
fn sixteen_bit_stencils_emulate_the_half_crates_arithmetic_bit_for_bit() {
    for n in [0usize, 1, 5, 33, 1000, 4099] {
        let x: Vec<f16> = awkward(n, n as u64);
        let (mut want, mut got) = (vec![f16::ZERO; n], vec![f16::ONE; n]);
        box5::run_cpu(&x, &mut want).expect("run_cpu");
        box5::emulate(&x, &mut got).expect("emulate");
        assert_eq!(first_difference(&got, &want), None, "box5 n={n}");
        mixed::run_cpu(&x, &mut want, f16::from_f32(0.75), -1.5).expect("run_cpu");
        mixed::emulate(&x, &mut got, f16::from_f32(0.75), -1.5).expect("emulate");
        assert_eq!(first_difference(&got, &want), None, "mixed n={n}");

        let y: Vec<bf16> = awkward(n, 3 * n as u64 + 1);
        let z: Vec<bf16> = awkward(n, 5 * n as u64 + 2);
        let k = [bf16::from_f32(0.25), bf16::from_f32(-0.5), bf16::from_f32(3.0)];
        let (mut want, mut got) = (vec![bf16::ZERO; n], vec![bf16::ONE; n]);
        smooth_bf16::run_cpu(&y, &mut want, k).expect("run_cpu");
        smooth_bf16::emulate(&y, &mut got, k).expect("emulate");
        assert_eq!(first_difference(&got, &want), None, "smooth_bf16 n={n}");
        two_fields::run_cpu(&y, &z, &mut want).expect("run_cpu");
        two_fields::emulate(&y, &z, &mut got).expect("emulate");
        assert_eq!(first_difference(&got, &want), None, "two_fields n={n}");

        let w: Vec<f32> = awkward(n, n as u64 + 9);
        let (mut want, mut got) = (vec![0.0f32; n], vec![1.0f32; n]);
        through_f16::run_cpu(&w, &mut want).expect("run_cpu");
        through_f16::emulate(&w, &mut got).expect("emulate");
        assert_eq!(first_difference(&got, &want), None, "through_f16 n={n}");
    }
    let (rows, cols) = (37, 45);
    let g: Vec<f16> = awkward(rows * cols, 11);
    let (mut want, mut got) = (vec![f16::ZERO; rows * cols], vec![f16::ONE; rows * cols]);
    grid_f16::run_cpu(&g, [rows, cols], &mut want).expect("run_cpu");
    grid_f16::emulate(&g, [rows, cols], &mut got).expect("emulate");
    assert_eq!(first_difference(&got, &want), None, "grid_f16");
}

#[test]
fn sixteen_bit_kernels_move_16_bit_elements_and_round_each_operation() {
    // f16 adds in f16 registers; it divides in f32 and rounds (PTX has no f16 division).
    let ptx = box5::PTX;
    assert!(ptx.contains(".target sm_70") && ptx.contains("add.rn.f16") && ptx.contains("cvt.rn.f16.f32"), "{ptx}");
    assert!(ptx.contains("ld.global.nc.b16") && ptx.contains("st.global.b16"), "{ptx}");
    // bf16 registers hold f32: each operation rounds back with cvt.rn.bf16.f32 (sm_80).
    let ptx = smooth_bf16::PTX;
    assert!(ptx.contains(".target sm_80") && ptx.contains("cvt.rn.bf16.f32") && ptx.contains(".param .b16"), "{ptx}");
    assert_eq!(box5::KERNEL.pattern().radius().along_x(), 2);
    let explained = box5::KERNEL.explain().expect("explains").to_string();
    assert!(explained.contains("f16"), "{explained}");
}
