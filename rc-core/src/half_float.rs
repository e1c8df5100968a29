//! The 16-bit float formats, binary16 (`half::f16`) and bfloat16 (`half::bf16`), as bits: their
//! exact widening to f32 and their rounding from f32, to the nearest, ties to even, as the half
//! crate's `from_f32` rounds. The emulator computes every 16-bit operation in f32 and rounds once,
//! as the half crate does; f32's 24 bits are more than 2p + 2 for both formats (p = 11 and 8), so
//! that single rounding equals the format's own IEEE operation for `+ - * /`, which is what the
//! kernel's f16 instructions compute.
//! Here and not from the half crate: the macro folds 16-bit constants at compile time, where rc's
//! optional `half` feature is not on.

use crate::scalar::HalfFormat;

/// The f32 holding binary16 value `h` exactly (a NaN keeps its payload, quieted).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x03ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        // Subnormal: normalize, moving the leading one into the hidden bit.
        (0, _) => {
            let shift = man.leading_zeros() - 21;
            sign | ((127 - 15 + 1 - shift) << 23) | ((man << (13 + shift)) & 0x007f_ffff)
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// `x` rounded to binary16: to the nearest, ties to even, overflowing to infinity, through the
/// subnormals to zero; a NaN stays a NaN with the top of its payload, quieted.
pub fn f32_to_f16(x: f32) -> u16 {
    let x = x.to_bits();
    let sign = (x >> 16) & 0x8000;
    let exp = (x >> 23) & 0xff;
    let man = x & 0x007f_ffff;
    if exp == 0xff {
        let quiet = if man == 0 { 0 } else { 0x0200 };
        return (sign | 0x7c00 | quiet | (man >> 13)) as u16;
    }
    let half_exp = exp as i32 - 127 + 15;
    if half_exp >= 0x1f {
        return (sign | 0x7c00) as u16;
    }
    if half_exp <= 0 {
        // Subnormal or zero: the hidden bit joins the mantissa, shifted by the missing exponent.
        let shift = (14 - half_exp) as u32;
        if shift > 24 {
            return sign as u16;
        }
        let man = man | 0x0080_0000;
        return (sign | round_shifted(man, shift)) as u16;
    }
    // A carry out of the mantissa steps the exponent, up to infinity: both are right.
    (sign | (((half_exp as u32) << 10) + round_shifted(man, 13))) as u16
}

/// The f32 holding bfloat16 value `h` exactly (a NaN keeps its payload, quieted).
pub fn bf16_to_f32(h: u16) -> f32 {
    let bits = (h as u32) << 16;
    match h & 0x7fff > 0x7f80 {
        true => f32::from_bits(bits | 0x0040_0000),
        false => f32::from_bits(bits),
    }
}

/// `x` rounded to bfloat16: to the nearest, ties to even; a NaN stays a NaN, quieted.
pub fn f32_to_bf16(x: f32) -> u16 {
    let x = x.to_bits();
    if x & 0x7fff_ffff > 0x7f80_0000 {
        return ((x >> 16) | 0x0040) as u16;
    }
    round_shifted(x, 16) as u16
}

/// The bits of associated constant `name` of the half crate's type of `format` (`f16::ONE`,
/// `bf16::MAX`, `f16::PI`), or `None` if it has no such constant. Its mathematical constants
/// are the f64 constants rounded once to the format.
pub fn constant(format: HalfFormat, name: &str) -> Option<u16> {
    use std::f64::consts;
    // Per format: largest finite, smallest normal, epsilon, infinity, quiet NaN, one.
    let (max, min_positive, epsilon, infinity, nan, one) = match format {
        HalfFormat::Binary16 => (0x7bff, 0x0400, 0x1400, 0x7c00, 0x7e00, 0x3c00),
        HalfFormat::BFloat16 => (0x7f7f, 0x0080, 0x3c00, 0x7f80, 0x7fc0, 0x3f80),
    };
    let math = |v: f64| Some(round_f64(format, v));
    match name {
        "ZERO" => Some(0),
        "NEG_ZERO" => Some(0x8000),
        "ONE" => Some(one),
        "NEG_ONE" => Some(0x8000 | one),
        "MAX" => Some(max),
        "MIN" => Some(0x8000 | max),
        "MIN_POSITIVE" => Some(min_positive),
        "MIN_POSITIVE_SUBNORMAL" => Some(1),
        "MAX_SUBNORMAL" => Some(min_positive - 1),
        "EPSILON" => Some(epsilon),
        "INFINITY" => Some(infinity),
        "NEG_INFINITY" => Some(0x8000 | infinity),
        "NAN" => Some(nan),
        "E" => math(consts::E),
        "PI" => math(consts::PI),
        "FRAC_1_PI" => math(consts::FRAC_1_PI),
        "FRAC_1_SQRT_2" => math(consts::FRAC_1_SQRT_2),
        "FRAC_2_PI" => math(consts::FRAC_2_PI),
        "FRAC_2_SQRT_PI" => math(consts::FRAC_2_SQRT_PI),
        "FRAC_PI_2" => math(consts::FRAC_PI_2),
        "FRAC_PI_3" => math(consts::FRAC_PI_3),
        "FRAC_PI_4" => math(consts::FRAC_PI_4),
        "FRAC_PI_6" => math(consts::FRAC_PI_6),
        "FRAC_PI_8" => math(consts::FRAC_PI_8),
        "LN_10" => math(consts::LN_10),
        "LN_2" => math(consts::LN_2),
        "LOG10_E" => math(consts::LOG10_E),
        "LOG10_2" => math(consts::LOG10_2),
        "LOG2_E" => math(consts::LOG2_E),
        "LOG2_10" => math(consts::LOG2_10),
        "SQRT_2" => math(consts::SQRT_2),
        _ => None,
    }
}

/// A positive normal `v` rounded once to `format`, nearest, ties to even: rounded to odd in f32
/// first (truncated, its last bit set where bits were lost), which the second rounding cannot
/// tell from `v` itself as f32 keeps more than two bits beyond the format's.
fn round_f64(format: HalfFormat, v: f64) -> u16 {
    let mut bits = (v as f32).to_bits();
    if f32::from_bits(bits) as f64 != v {
        if f32::from_bits(bits) as f64 > v {
            bits -= 1;
        }
        bits |= 1;
    }
    format.round(f32::from_bits(bits))
}

/// `value >> shift` rounded to the nearest, ties to even.
fn round_shifted(value: u32, shift: u32) -> u32 {
    let (kept, half) = (value >> shift, 1u32 << (shift - 1));
    let rest = value & ((half << 1) - 1);
    match rest > half || (rest == half && kept & 1 == 1) {
        true => kept + 1,
        false => kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binary16_value_widens_exactly_and_rounds_back_to_itself() {
        for h in 0..=u16::MAX {
            let x = f16_to_f32(h);
            if x.is_nan() {
                assert!(f32_to_f16(x) & 0x7fff > 0x7c00, "{h:#06x}");
            } else {
                assert_eq!(f32_to_f16(x), h, "{h:#06x} widened to {x:e}");
            }
        }
    }

    #[test]
    fn rounding_to_binary16_ties_to_even_through_the_subnormals_and_overflows_to_infinity() {
        assert_eq!(f32_to_f16(1.0 + f32::EPSILON * 4096.0), 0x3c00, "halfway to the next, even stays");
        assert_eq!(f32_to_f16(1.0 + f32::EPSILON * 12288.0), 0x3c02, "halfway from odd rounds up");
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0, "half the smallest subnormal ties to zero");
        assert_eq!(f32_to_f16(2f32.powi(-25) * 1.5), 1);
        assert_eq!(f32_to_f16(-0.0), 0x8000);
        assert_eq!(f16_to_f32(1), 2f32.powi(-24));
    }

    #[test]
    fn bfloat16_rounds_to_the_nearest_ties_to_even() {
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(f32_to_bf16(f32::MAX), 0x7f80);
        assert_eq!(bf16_to_f32(0x3fc0), 1.5);
    }

    #[test]
    fn constants_are_the_half_crates() {
        let names = [
            "ZERO",
            "NEG_ZERO",
            "ONE",
            "NEG_ONE",
            "MAX",
            "MIN",
            "MIN_POSITIVE",
            "MIN_POSITIVE_SUBNORMAL",
            "MAX_SUBNORMAL",
            "EPSILON",
            "INFINITY",
            "NEG_INFINITY",
            "NAN",
            "E",
            "PI",
            "FRAC_1_PI",
            "FRAC_1_SQRT_2",
            "FRAC_2_PI",
            "FRAC_2_SQRT_PI",
            "FRAC_PI_2",
            "FRAC_PI_3",
            "FRAC_PI_4",
            "FRAC_PI_6",
            "FRAC_PI_8",
            "LN_10",
            "LN_2",
            "LOG10_E",
            "LOG10_2",
            "LOG2_E",
            "LOG2_10",
            "SQRT_2",
        ];
        let f16s = [
            half::f16::ZERO,
            half::f16::NEG_ZERO,
            half::f16::ONE,
            half::f16::NEG_ONE,
            half::f16::MAX,
            half::f16::MIN,
            half::f16::MIN_POSITIVE,
            half::f16::MIN_POSITIVE_SUBNORMAL,
            half::f16::MAX_SUBNORMAL,
            half::f16::EPSILON,
            half::f16::INFINITY,
            half::f16::NEG_INFINITY,
            half::f16::NAN,
            half::f16::E,
            half::f16::PI,
            half::f16::FRAC_1_PI,
            half::f16::FRAC_1_SQRT_2,
            half::f16::FRAC_2_PI,
            half::f16::FRAC_2_SQRT_PI,
            half::f16::FRAC_PI_2,
            half::f16::FRAC_PI_3,
            half::f16::FRAC_PI_4,
            half::f16::FRAC_PI_6,
            half::f16::FRAC_PI_8,
            half::f16::LN_10,
            half::f16::LN_2,
            half::f16::LOG10_E,
            half::f16::LOG10_2,
            half::f16::LOG2_E,
            half::f16::LOG2_10,
            half::f16::SQRT_2,
        ];
        let bf16s = [
            half::bf16::ZERO,
            half::bf16::NEG_ZERO,
            half::bf16::ONE,
            half::bf16::NEG_ONE,
            half::bf16::MAX,
            half::bf16::MIN,
            half::bf16::MIN_POSITIVE,
            half::bf16::MIN_POSITIVE_SUBNORMAL,
            half::bf16::MAX_SUBNORMAL,
            half::bf16::EPSILON,
            half::bf16::INFINITY,
            half::bf16::NEG_INFINITY,
            half::bf16::NAN,
            half::bf16::E,
            half::bf16::PI,
            half::bf16::FRAC_1_PI,
            half::bf16::FRAC_1_SQRT_2,
            half::bf16::FRAC_2_PI,
            half::bf16::FRAC_2_SQRT_PI,
            half::bf16::FRAC_PI_2,
            half::bf16::FRAC_PI_3,
            half::bf16::FRAC_PI_4,
            half::bf16::FRAC_PI_6,
            half::bf16::FRAC_PI_8,
            half::bf16::LN_10,
            half::bf16::LN_2,
            half::bf16::LOG10_E,
            half::bf16::LOG10_2,
            half::bf16::LOG2_E,
            half::bf16::LOG2_10,
            half::bf16::SQRT_2,
        ];
        for (i, name) in names.iter().enumerate() {
            assert_eq!(constant(HalfFormat::Binary16, name), Some(f16s[i].to_bits()), "f16::{name}");
            assert_eq!(constant(HalfFormat::BFloat16, name), Some(bf16s[i].to_bits()), "bf16::{name}");
        }
        assert_eq!(constant(HalfFormat::Binary16, "TAU"), None);
    }

    #[test]
    fn conversions_are_the_half_crates() {
        let mut rng = crate::testdata::Rng::new(16);
        for h in 0..=u16::MAX {
            let (a, b) = (f16_to_f32(h), half::f16::from_bits(h).to_f32());
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "f16 {h:#06x}");
            assert_eq!(bf16_to_f32(h).to_bits(), half::bf16::from_bits(h).to_f32().to_bits(), "bf16 {h:#06x}");
        }
        for _ in 0..1_000_000 {
            let x = f32::from_bits(rng.next_u64() as u32);
            let (a, b) = (f32_to_f16(x), half::f16::from_f32(x).to_bits());
            assert!(a == b || (a & 0x7fff > 0x7c00 && b & 0x7fff > 0x7c00), "{x:e}: {a:#06x} and {b:#06x}");
            assert_eq!(f32_to_bf16(x), half::bf16::from_f32(x).to_bits(), "{x:e}");
        }
    }
}
