//! Stencils that exercise every part of the body language, every boundary, every element type.
//! Shared by the CPU tests (emulate against run_cpu) and the GPU tests (launch against run_cpu).
#![allow(dead_code)]
// `w[0] != w[0]` (a NaN test) and negated comparisons are the point of some bodies here.
#![allow(clippy::eq_op, clippy::nonminimal_bool, clippy::neg_cmp_op_on_partial_ord)]

use half::{bf16, f16};
use rc::prelude::*;
use rc::runtime::cust::memory::DeviceCopy;
use rc::runtime::DeviceElement;
use rc::testdata::{awkward, first_difference, first_difference_up_to_zero_sign, poison};
use rc::{Element, Params, Stencil};

pub mod grid;
pub mod random;

#[stencil(radius = 3, warp = 32, outputs_per_thread = 4)]
pub fn box7(w: Window<f32>) -> f32 {
    (w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3]) / 7.0
}

#[stencil(radius = 1, warp = 4, boundary = zero)]
pub fn heat(w: Window<f64>, alpha: f64) -> f64 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

/// Launch bounds: 512 threads per block, at least 2 blocks per multiprocessor.
#[stencil(radius = 2, outputs_per_thread = 4, boundary = zero, max_threads_per_block = 512, min_blocks_per_sm = 2)]
pub fn bounded(w: Window<f32>) -> f32 {
    w[-2] - w[-1] + 2.0 * w[0] - w[1] + w[2]
}

#[stencil(radius = 4, warp = 16, outputs_per_thread = 3, boundary = clamp)]
pub fn max_filter(w: Window<f32>) -> f32 {
    let mut m = f32::NEG_INFINITY;
    for k in -4..=4 {
        m = m.max(w[k]);
    }
    m
}

#[stencil(radius = 5, warp = 8, outputs_per_thread = 2, boundary = wrap)]
pub fn total_variation(w: Window<f32>) -> f32 {
    let mut tv = 0.0;
    for k in -5..5 {
        tv += (w[k + 1] - w[k]).abs();
    }
    tv
}

#[stencil(radius = 2, outputs_per_thread = 8, boundary = zero)]
pub fn binomial(w: Window<f32>) -> f32 {
    const C: [f32; 5] = [1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0];
    let mut s = 0.0;
    for k in -2..=2 {
        s += C[(k + 2) as usize] * w[k];
    }
    s
}

#[stencil(radius = 1, warp = 2, outputs_per_thread = 5, boundary = clamp)]
pub fn fused(w: Window<f64>, a: f64, b: f64) -> f64 {
    w[-1].mul_add(a, w[0] * b) + f64::mul_add(w[1], a, -b)
}

#[stencil(radius = 1, boundary = clamp)]
pub fn laplacian_i32(w: Window<i32>) -> i32 {
    w[-1] - 2 * w[0] + w[1]
}

#[stencil(radius = 2, warp = 16, boundary = wrap)]
pub fn max_u32(w: Window<u32>, floor: u32) -> u32 {
    w[-2].max(w[-1]).max(w[0]).max(w[1]).max(w[2]).max(floor)
}

#[stencil(radius = 2, warp = 8, outputs_per_thread = 2)]
pub fn branches(w: Window<f32>) -> f32 {
    let x = if w[0] > 0.0 && !(w[1] < 0.0) || w[-1] == 0.0 { w[-2] } else { w[2] * 0.5 };
    let y = if w[0] != w[0] {
        -1.0
    } else if w[1] >= w[-1] {
        2.0
    } else {
        3.0
    };
    x * y
}

#[stencil(radius = 3, warp = 32, outputs_per_thread = 2, boundary = zero)]
pub fn running_max_with_if(w: Window<f32>) -> f32 {
    let mut s = f32::MIN;
    for k in -3..=3 {
        if w[k] > s {
            s = w[k];
        }
    }
    s
}

#[stencil(radius = 2, warp = 4, outputs_per_thread = 3, boundary = clamp)]
pub fn casts(w: Window<f32>, scale: f32) -> f32 {
    let i = (w[-1] * scale) as i32;
    let u = (w[1] * scale) as u32;
    let d = w[0] as f64 * 0.1;
    (i as f32) + (u as f32) + (d as f32) - (w[2] as i32 as f32)
}

#[stencil(radius = 1, warp = 32, outputs_per_thread = 1)]
pub fn roots(w: Window<f64>) -> f64 {
    (w[-1] * w[-1] + w[1] * w[1]).sqrt() - (-w[0]).abs()
}

#[stencil(radius = 6, warp = 16, outputs_per_thread = 2, boundary = wrap)]
pub fn sparse_taps(w: Window<f32>) -> f32 {
    // Only every third tap: the schedule must fetch just these.
    let mut s = 0.0;
    for k in (-6..=6).step_by(3) {
        s += w[k];
    }
    s
}

#[stencil(radius = 40, warp = 32, outputs_per_thread = 2, boundary = zero)]
pub fn wide_box(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for k in -40..=40 {
        s += w[k];
    }
    s / 81.0
}

#[stencil(radius = 17, warp = 8, outputs_per_thread = 4, boundary = clamp)]
pub fn wide_weighted_f64(w: Window<f64>, decay: f64) -> f64 {
    let mut s = 0.0;
    let mut weight = 1.0;
    for k in 0..=17 {
        s += weight * (w[k] + w[-k]);
        weight *= decay;
    }
    s
}

#[stencil(radius = 2, warp = 8, outputs_per_thread = 2, boundary = wrap)]
pub fn mixed_int(w: Window<i32>, bias: i32) -> i32 {
    let hi = w[-2].max(w[2]);
    let lo = w[-1].min(w[1]);
    let sign = if w[0] < 0 { -1 } else { 1 };
    (hi - lo) * sign + bias + (w[0] > 0) as i32 - (-w[0]).abs()
}

#[stencil(radius = 3, warp = 32, outputs_per_thread = 4, strategy = shared_memory)]
pub fn box7_shared(w: Window<f32>) -> f32 {
    (w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3]) / 7.0
}

#[stencil(radius = 1, warp = 2, outputs_per_thread = 5, boundary = clamp, strategy = naive)]
pub fn fused_naive(w: Window<f64>, a: f64, b: f64) -> f64 {
    w[-1].mul_add(a, w[0] * b) + f64::mul_add(w[1], a, -b)
}

#[stencil(radius = 24, warp = 8, outputs_per_thread = 8, boundary = wrap, strategy = shared_memory)]
pub fn wide_shared_f64(w: Window<f64>) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for k in -24..=24 {
        m = m.max(w[k] * 0.5);
    }
    m
}

#[stencil(radius = 2, warp = 16, outputs_per_thread = 3, boundary = zero, strategy = naive)]
pub fn mixed_int_naive(w: Window<i32>, bias: i32) -> i32 {
    (w[-2].max(w[2]) - w[-1].min(w[1])) + bias
}

#[stencil(radius = 8, outputs_per_thread = 8, distribution = granule(8))]
pub fn box17_granule(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for k in -8..=8 {
        s += w[k];
    }
    s / 17.0
}

#[stencil(radius = 3, warp = 16, outputs_per_thread = 8, boundary = zero, distribution = granule(4))]
pub fn heat_granule(w: Window<f64>, alpha: f64) -> f64 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1]) + 0.5 * (w[-3] - w[3])
}

#[stencil(radius = 5, warp = 8, outputs_per_thread = 4, boundary = wrap, distribution = granule(2))]
pub fn tv_granule(w: Window<f32>) -> f32 {
    let mut tv = 0.0;
    for k in -5..5 {
        tv += (w[k + 1] - w[k]).abs();
    }
    tv
}

#[stencil(radius = 33, warp = 32, outputs_per_thread = 16, boundary = clamp, distribution = granule(16))]
pub fn wide_max_granule(w: Window<i32>) -> i32 {
    let mut m = i32::MIN;
    for k in -33..=33 {
        m = m.max(w[k]);
    }
    m
}

/// Windows: each lane caches its outputs' whole window, the halo loaded rather than shuffled.
#[stencil(radius = 32, outputs_per_thread = 8, distribution = window(8))]
pub fn box65_window(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for k in -32..=32 {
        s += w[k];
    }
    s / 65.0
}

#[stencil(radius = 2, warp = 16, outputs_per_thread = 8, boundary = clamp, distribution = window(4))]
pub fn scaled_diff_window(w: Window<f64>, h: f64) -> f64 {
    (w[-2] - 8.0 * w[-1] + 8.0 * w[1] - w[2]) / (12.0 * h)
}

#[stencil(radius = 4, warp = 32, outputs_per_thread = 4, boundary = wrap, distribution = window(4))]
pub fn ratio_window(w: Window<f32>) -> f32 {
    (w[-4] + w[4]) / 3.0 - w[0] / -0.1 + w[1] / 7.0
}

/// NaN and infinities cast to integers: 0 and the saturated bounds, as in Rust.
#[stencil(radius = 1, warp = 8, outputs_per_thread = 2, boundary = zero)]
pub fn float_to_int_f64(w: Window<f64>) -> f64 {
    (w[0] as i32) as f64 + (w[1] as u32) as f64 * 0.5 + (w[-1] as f32 as i32) as f64
}

/// Helpers declared in the body, inlined at each call: `fn` items (callable before their
/// declaration, seeing consts and each other) and closures (a `move` closure keeps the value it
/// captured, though the variable changes after).
#[stencil(radius = 2, outputs_per_thread = 4, boundary = clamp)]
pub fn helpers(w: Window<f32>, gain: f32) -> f32 {
    let mut bias = w[0];
    let scale = move |x: f32| x * gain + bias;
    bias = w[1];
    let mut s = 0.0;
    for k in -2..=2 {
        s += sq(w[k] - w[0]);
    }
    const HALF: f32 = 0.5;
    fn sq(x: f32) -> f32 {
        x * x
    }
    fn smooth(a: f32, b: f32) -> f32 {
        sq(a) * HALF + b
    }
    let twice = |x| x + x;
    scale(smooth(s, bias)) + twice(w[-1])
}

/// Variable-coefficient diffusion, one explicit step: `u` diffuses with the conductivity `k`
/// (a second input field), averaged onto each face.
#[stencil(radius = 1, boundary = clamp)]
pub fn diffuse(u: Window<f32>, k: Window<f32>, dt: f32) -> f32 {
    let east = 0.5 * (k[0] + k[1]) * (u[1] - u[0]);
    let west = 0.5 * (k[-1] + k[0]) * (u[0] - u[-1]);
    u[0] + dt * (east - west)
}

/// Two fields on staged windows: each field staged in its own part of shared memory.
#[stencil(radius = 4, warp = 32, outputs_per_thread = 8, boundary = zero, distribution = staged(8))]
pub fn weighted_staged(u: Window<f32>, w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for d in -4..=4 {
        s += w[d] * u[d];
    }
    s / 9.0
}

/// Two fields through the shared-memory baseline: both staged by the block.
#[stencil(radius = 2, warp = 16, outputs_per_thread = 3, boundary = wrap, strategy = shared_memory)]
pub fn weighted_shared(u: Window<f64>, w: Window<f64>) -> f64 {
    w[-2] * u[2] - w[2] * u[-2] + w[0] * u[0]
}

/// Three fields, each read at other taps, in granules of f64 (vector loads of each field).
#[stencil(radius = 3, warp = 16, outputs_per_thread = 8, boundary = valid, distribution = granule(4))]
pub fn three_fields_granule(a: Window<f64>, b: Window<f64>, c: Window<f64>, scale: f64) -> f64 {
    a[-3].mul_add(b[3], c[0]) * scale + (a[1] - c[-1]).abs() - b[0]
}

/// Integer fields, the second read only at the centre, round-robin, each a warp's tap by tap.
#[stencil(radius = 2, warp = 8, outputs_per_thread = 2, boundary = clamp, distribution = round_robin)]
pub fn masked_max_i32(v: Window<i32>, mask: Window<i32>) -> i32 {
    let m = v[-2].max(v[-1]).max(v[0]).max(v[1]).max(v[2]);
    if mask[0] > 0 {
        m
    } else {
        v[0]
    }
}

/// Two fields through the naive baseline: every tap of each a load.
#[stencil(radius = 1, warp = 4, outputs_per_thread = 2, boundary = zero, strategy = naive)]
pub fn diffuse_naive(u: Window<f32>, k: Window<f32>, dt: f32) -> f32 {
    let east = 0.5 * (k[0] + k[1]) * (u[1] - u[0]);
    let west = 0.5 * (k[-1] + k[0]) * (u[0] - u[-1]);
    u[0] + dt * (east - west)
}

/// A FIR filter whose taps are chosen at run time: an array parameter, indexed by constants once
/// the loop is unrolled.
#[stencil(radius = 2, outputs_per_thread = 4, boundary = zero)]
pub fn fir5(w: Window<f32>, h: [f32; 5], gain: f32) -> f32 {
    let mut s = 0.0;
    for k in -2..=2 {
        s += h[(k + 2) as usize] * w[k];
    }
    s * gain
}

/// Arrays of both integer types beside a scalar, walked with `len()`.
#[stencil(radius = 3, warp = 8, outputs_per_thread = 2, boundary = wrap, distribution = granule(2))]
pub fn weighted_i32(w: Window<i32>, weights: [i32; 7], bias: u32, offsets: [u32; 2]) -> i32 {
    let mut s = bias as i32;
    for i in 0..weights.len() {
        s += weights[i] * w[i as i32 - 3];
    }
    (s >> 2) + (offsets[1] as i32) - offsets[0] as i32
}

/// Integer division, remainder, bitwise operators and shifts on i32 with Rust's results:
/// truncating division and the dividend's sign in `%` on negative data, arithmetic `>>`, the
/// `wrapping_*` methods where the operators would overflow, and `& | ^` on bools.
#[stencil(radius = 2, warp = 8, outputs_per_thread = 3, boundary = clamp)]
pub fn int_ops_i32(w: Window<i32>, mask: i32) -> i32 {
    let quotients = w[-2] / 3 + w[-1] / -7 + w[0] % 5 + w[1] % -6;
    let bits = (w[0] & mask) | (w[1] ^ !w[-1]);
    let mut shifts = (w[2] >> 3) + (w[-2] << 4 >> 6);
    shifts ^= 0x55;
    shifts <<= 1;
    let wrapped = w[1].wrapping_mul(w[2]).wrapping_add(w[0].wrapping_div(-1)).wrapping_sub(w[-1].wrapping_rem(-1));
    let mixed = w[0].wrapping_mul(-1_640_531_535).wrapping_shr(35) / 1000;
    // `& | ^` on bools: both sides evaluated, as in Rust.
    let flags = (w[0] > 0) & (w[1] < 0) | (w[2] % 3 == 0) ^ (w[-1] != 0);
    quotients.wrapping_add(bits ^ shifts).wrapping_add(wrapped).wrapping_add(mixed)
        + w[0].wrapping_neg() % 1024
        + flags as i32
}

/// The same on u32: logical `>>`, divisors past `i32::MAX`, a hash's wrapping multiply spreading
/// the data over every bit.
#[stencil(radius = 1, warp = 16, outputs_per_thread = 4, boundary = wrap)]
pub fn int_ops_u32(w: Window<u32>, salt: u32) -> u32 {
    let h = (w[0] ^ salt).wrapping_mul(2_654_435_761);
    let mut mixed = (h >> 16) ^ (h << 5) | (w[-1] & 0xff);
    mixed &= !7;
    let small = mixed / 3_000_000_000 + mixed % 10 + (h >> 31) + (w[1] << 3) / 7 + (!w[1] >> 28);
    small.wrapping_add(h.wrapping_sub(w[-1]) % 0xffff_fff0).wrapping_add(w[-1].wrapping_neg() / 65_537)
}

/// The 1D box average in f16, as the benchmark's: every partial sum rounds to 16 bits.
#[stencil(radius = 8, outputs_per_thread = 8, boundary = zero)]
pub fn box17_f16(w: Window<f16>) -> f16 {
    let mut s = f16::ZERO;
    for k in -8..=8 {
        s += w[k];
    }
    s / f16::from_f32(17.0)
}

/// f16 over 16-byte granules (8 elements a lane), with a parameter, min/max and comparisons.
#[stencil(radius = 3, outputs_per_thread = 8, distribution = granule(8), boundary = clamp)]
pub fn clipped_f16_granule(w: Window<f16>, limit: f16) -> f16 {
    let edge = (w[3] - w[-3]) * f16::from_f32(0.25) + (w[1] - w[-1]);
    let m = edge.max(-limit).min(limit);
    if w[0] != w[0] || m == f16::ZERO {
        w[2]
    } else {
        m
    }
}

/// bf16 over windows, mixing with f32 through explicit conversions.
#[stencil(radius = 2, warp = 16, outputs_per_thread = 4, distribution = window(4), boundary = wrap)]
pub fn weighted_bf16_window(w: Window<bf16>, k: [bf16; 2], gain: f32) -> bf16 {
    let near = k[0] * (w[-1] + w[1]);
    let far = k[1] * (w[-2] + w[2]);
    bf16::from_f32((near + far).to_f32() * gain - w[0].to_f32()) + bf16::MIN_POSITIVE
}

/// Two f16 fields, strategy shared_memory.
#[stencil(radius = 1, outputs_per_thread = 2, strategy = shared_memory, boundary = zero)]
pub fn diffuse_f16_shared(u: Window<f16>, c: Window<f16>, dt: f16) -> f16 {
    u[0] + dt * c[0] * (u[-1] - f16::from_f32(2.0) * u[0] + u[1])
}

/// bf16, staged windows.
#[stencil(radius = 4, outputs_per_thread = 8, distribution = staged(8), boundary = clamp)]
pub fn max_bf16_staged(w: Window<bf16>) -> bf16 {
    let mut m = bf16::NEG_INFINITY;
    for k in -4..=4 {
        m = m.max(w[k]);
    }
    m
}

/// f16 round-robin, outputs a warp apart: each pair of outputs' taps shuffles as one word, lanes
/// past the wrap publishing a word that straddles two cache words; the third output's taps
/// shuffle alone.
#[stencil(radius = 2, outputs_per_thread = 3, distribution = round_robin, boundary = wrap)]
pub fn taps_f16_round_robin(w: Window<f16>, c: f16) -> f16 {
    (w[-2] - w[2]) * c + (w[-1] + w[1]) * f16::from_f32(0.5) - w[0]
}

/// bf16 granules of 4 on a warp of 8, radius past the warp: packed cache words shuffled whole.
#[stencil(radius = 5, warp = 8, outputs_per_thread = 4, distribution = granule(4), boundary = clamp)]
pub fn spread_bf16_granule(w: Window<bf16>) -> bf16 {
    let mut s = bf16::ZERO;
    for k in -5..=5 {
        s += w[k] * bf16::from_f32(1.0 + k as f32 * 0.125);
    }
    s.max(w[0])
}

/// Something done to every 16-bit stencil of the catalogue: their cust buffers hold `u16` bits
/// (`rc::runtime::DeviceElement`), so they are visited apart from the others.
pub trait VisitHalf {
    fn visit<T: Element, P: Params + std::fmt::Debug>(&mut self, stencil: &Stencil<T, P>, params: P)
    where
        u16: DeviceElement<T>;
}

/// The half crate's copysign, signum and classifications.
#[stencil(radius = 1, boundary = clamp)]
pub fn signs_f16(w: Window<f16>) -> f16 {
    let s = w[0].copysign(w[1]) + w[-1].signum();
    if w[0].is_nan() || w[1].is_infinite() {
        w[-1]
    } else if w[1].is_finite() && w[-1].is_sign_negative() {
        s
    } else if w[0].is_sign_positive() {
        -s
    } else {
        w[1].signum()
    }
}

/// The exact roundings: floor, ceil, trunc, Rust's round (halves away from zero, every
/// `trunc + 0.5` a tie) and round_ties_even, fract.
#[stencil(radius = 1, warp = 16, outputs_per_thread = 3, boundary = clamp)]
pub fn roundings(w: Window<f32>) -> f32 {
    let tie = w[0].trunc() + 0.5;
    let rounded = w[-1].floor() - w[1].ceil() * 0.5 + w[0].round() * 0.25;
    rounded + tie.round() * 3.0 - tie.round_ties_even() + w[1].fract() * 8.0
}

/// Signs and classifications: copysign (signs from the data only: a NaN computed by arithmetic
/// has no sign Rust fixes), signum, clamp, is_nan and the other tests, degrees, recip.
#[stencil(radius = 1, warp = 8, boundary = wrap)]
pub fn signs(w: Window<f64>, lo: f64) -> f64 {
    let c = w[0].clamp(lo, 5.0);
    if w[0].is_nan() {
        w[-1].copysign(w[1])
    } else if w[1].is_infinite() {
        c.signum() + w[-1].signum()
    } else if w[-1].is_finite() && w[0].is_sign_negative() {
        c.to_degrees() + w[1].recip()
    } else if w[1].is_sign_positive() {
        w[0].to_radians() - f64::copysign(2.5, w[-1])
    } else {
        -c.fract()
    }
}

/// The bit counts and rotations of u32, std::cmp::max, a power by a constant, clamp by a
/// parameter.
#[stencil(radius = 2, boundary = zero)]
pub fn bits_u32(w: Window<u32>, hi: u32) -> u32 {
    let counts = w[-2].count_ones() + w[-1].leading_zeros() * 3 + w[0].trailing_zeros() * 5;
    let flipped = w[1].count_zeros() ^ w[2].leading_ones() ^ (w[0] | 0xffff_0000).trailing_ones();
    let turned = w[0].reverse_bits().rotate_left(w[1]) ^ w[-1].rotate_right(7);
    let sums = counts + flipped + std::cmp::max(w[2], 17) + w[-2].abs_diff(w[2]) + w[1].pow(3);
    let sums = sums.wrapping_sub(w[0].clamp(10, hi));
    sums ^ turned.wrapping_mul(3)
}

/// Saturating arithmetic on values spread over the whole range (products that wrap), so the
/// bounds are met often.
#[stencil(radius = 1, warp = 16, boundary = clamp)]
pub fn saturating_i32(w: Window<i32>) -> i32 {
    let a = w[-1].wrapping_mul(3_000_007);
    let b = w[1].wrapping_mul(-2_000_003);
    let s = a.saturating_add(b) ^ a.saturating_sub(b);
    s.saturating_add(w[0].wrapping_mul(4_000_037).saturating_neg()) ^ (a ^ b).saturating_abs()
}

#[stencil(radius = 1, boundary = wrap)]
pub fn saturating_u32(w: Window<u32>) -> u32 {
    let a = w[-1].wrapping_mul(5_000_011);
    let b = w[1].wrapping_mul(4_000_037);
    a.saturating_add(b) ^ a.saturating_sub(b).rotate_left(7) ^ w[0].saturating_sub(500)
}

/// `exp`, correctly rounded on the CPU (the function calls rc's) and the GPU: past the
/// overflow and underflow thresholds, tiny arguments, infinities and NaN among the data.
#[stencil(radius = 1, warp = 16, boundary = wrap)]
pub fn exponentials(w: Window<f32>, scale: f32) -> f32 {
    let g = |d: f32| (-(d * d) * scale).exp();
    (w[-1] * 1.0e-6).exp() - f32::exp(w[0]) + g(w[1] - w[0]) + (w[1] * 1.5).exp()
}

/// The same on i32, whose counts are u32 (of the same bits), with signum and abs_diff.
#[stencil(radius = 1, warp = 16, outputs_per_thread = 2)]
pub fn bits_i32(w: Window<i32>) -> i32 {
    let counts = (w[0].count_ones() + w[1].leading_zeros() + w[-1].trailing_ones()) as i32;
    let turned = w[0].reverse_bits().rotate_right(w[1] as u32) ^ w[-1].rotate_left(3);
    let sums = counts + w[1].signum() * w[-1].abs_diff(w[1]) as i32 + w[-1].pow(2) - w[0].clamp(-100, 100);
    (sums + std::cmp::min(w[0], w[1])) ^ turned
}

/// Visits every 16-bit stencil above, with the parameters it is checked with.
pub fn visit_half(v: &mut impl VisitHalf) {
    v.visit(&box17_f16::KERNEL, ());
    v.visit(&clipped_f16_granule::KERNEL, (f16::from_f32(3.0),));
    v.visit(&weighted_bf16_window::KERNEL, ([bf16::from_f32(0.5), bf16::from_f32(-0.125)], 1.5));
    v.visit(&diffuse_f16_shared::KERNEL, (f16::from_f32(0.1),));
    v.visit(&max_bf16_staged::KERNEL, ());
    v.visit(&taps_f16_round_robin::KERNEL, (f16::from_f32(-0.75),));
    v.visit(&spread_bf16_granule::KERNEL, ());
    v.visit(&signs_f16::KERNEL, ());
}

/// Something done to every stencil in the catalogue (checked on the CPU, launched on the GPU).
pub trait Visit {
    fn visit<T: Element + DeviceCopy, P: Params + std::fmt::Debug>(&mut self, stencil: &Stencil<T, P>, params: P);
}

/// Visits every stencil above, with the parameters it is checked with.
pub fn visit_all(v: &mut impl Visit) {
    v.visit(&box7::KERNEL, ());
    v.visit(&heat::KERNEL, (0.25,));
    v.visit(&bounded::KERNEL, ());
    v.visit(&max_filter::KERNEL, ());
    v.visit(&total_variation::KERNEL, ());
    v.visit(&binomial::KERNEL, ());
    v.visit(&fused::KERNEL, (0.75, -1.5));
    v.visit(&laplacian_i32::KERNEL, ());
    v.visit(&max_u32::KERNEL, (500,));
    v.visit(&roundings::KERNEL, ());
    v.visit(&signs::KERNEL, (-3.0,));
    v.visit(&bits_u32::KERNEL, (700,));
    v.visit(&bits_i32::KERNEL, ());
    v.visit(&exponentials::KERNEL, (0.01,));
    v.visit(&saturating_i32::KERNEL, ());
    v.visit(&saturating_u32::KERNEL, ());
    v.visit(&branches::KERNEL, ());
    v.visit(&running_max_with_if::KERNEL, ());
    v.visit(&casts::KERNEL, (3.5,));
    v.visit(&roots::KERNEL, ());
    v.visit(&sparse_taps::KERNEL, ());
    v.visit(&wide_box::KERNEL, ());
    v.visit(&wide_weighted_f64::KERNEL, (0.9,));
    v.visit(&mixed_int::KERNEL, (7,));
    v.visit(&box7_shared::KERNEL, ());
    v.visit(&fused_naive::KERNEL, (0.75, -1.5));
    v.visit(&wide_shared_f64::KERNEL, ());
    v.visit(&mixed_int_naive::KERNEL, (-3,));
    v.visit(&box17_granule::KERNEL, ());
    v.visit(&heat_granule::KERNEL, (0.25,));
    v.visit(&tv_granule::KERNEL, ());
    v.visit(&wide_max_granule::KERNEL, ());
    v.visit(&box65_window::KERNEL, ());
    v.visit(&scaled_diff_window::KERNEL, (0.5,));
    v.visit(&ratio_window::KERNEL, ());
    v.visit(&float_to_int_f64::KERNEL, ());
    v.visit(&helpers::KERNEL, (1.5,));
    v.visit(&diffuse::KERNEL, (0.2,));
    v.visit(&weighted_staged::KERNEL, ());
    v.visit(&weighted_shared::KERNEL, ());
    v.visit(&three_fields_granule::KERNEL, (0.75,));
    v.visit(&masked_max_i32::KERNEL, ());
    v.visit(&diffuse_naive::KERNEL, (0.2,));
    v.visit(&fir5::KERNEL, ([0.125, -0.5, 1.75, -0.5, 0.125], 2.0));
    v.visit(&weighted_i32::KERNEL, ([3, -1, 4, -1, 5, -9, 2], 6, [2, 7]));
    v.visit(&int_ops_i32::KERNEL, (0x3c3,));
    v.visit(&int_ops_u32::KERNEL, (0x9e37_79b9,));
}

/// The first output where `got` differs from the reference; `±0` count as equal when the body
/// calls `min`/`max` (see `first_difference_up_to_zero_sign`).
pub fn compare_outputs<T: Element, P: Params>(k: &Stencil<T, P>, got: &[T], want: &[T]) -> Option<usize> {
    match k.body() {
        Ok(body) if body.uses_min_or_max() => first_difference_up_to_zero_sign(got, want),
        _ => first_difference(got, want),
    }
}

/// Awkward data of `n` elements for each input field of `k`: field 0 from `seed` (as a stencil
/// of one field has always been checked), field `f` from a seed of its own.
pub fn awkward_inputs<T: Element, P: Params>(k: &Stencil<T, P>, n: usize, seed: u64) -> Vec<Vec<T>> {
    (0..k.fields() as u64).map(|f| awkward(n, seed.wrapping_add(f.wrapping_mul(0x9e37_79b9_7f4a_7c15)))).collect()
}

/// The inputs as the kernel takes them: one slice per field.
pub fn slices<T>(inputs: &[Vec<T>]) -> Vec<&[T]> {
    inputs.iter().map(Vec::as_slice).collect()
}

/// `emulate` against `run_cpu` on awkward data of length `n`: same outputs, same errors.
pub fn emulation_matches<T: Element, P: Params>(
    k: &Stencil<T, P>,
    n: usize,
    seed: u64,
    params: P,
) -> Result<(), String> {
    let inputs = awkward_inputs(k, n, seed);
    let inputs = slices(&inputs);
    let want = match k.output_len(n) {
        Ok(len) => len,
        Err(e) => {
            return match k.emulate(&inputs, &mut [&mut []], params) {
                Err(got) if got == e => Ok(()),
                other => Err(format!("n={n}: expected the error `{e}`, emulate gave {other:?}")),
            };
        }
    };
    let mut reference = vec![poison::<T>(); want];
    let mut emulated = vec![poison::<T>(); want];
    k.run_cpu(&inputs, &mut [&mut reference], params).map_err(|e| e.to_string())?;
    k.emulate(&inputs, &mut [&mut emulated], params).map_err(|e| e.to_string())?;
    match compare_outputs(k, &emulated, &reference) {
        None => Ok(()),
        Some(i) => Err(format!(
            "n={n} seed={seed}: output {i}: emulate gave {:?}, run_cpu {:?}",
            emulated.get(i),
            reference.get(i)
        )),
    }
}
