//! What each operation computes, on the CPU, bit for bit as the user's Rust function does.
//! The emulator runs these; the PTX back end prints instructions with the same semantics.
//! Values travel as bits (`u64`) tagged by their [`ScalarType`].

use crate::operation::{BinaryOp, CompareOp, UnaryOp};
use crate::scalar::ScalarType;

fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}
fn f64_of(bits: u64) -> f64 {
    f64::from_bits(bits)
}
fn i32_of(bits: u64) -> i32 {
    bits as u32 as i32
}
fn u32_of(bits: u64) -> u32 {
    bits as u32
}
fn of_f32(v: f32) -> u64 {
    v.to_bits() as u64
}
fn of_i32(v: i32) -> u64 {
    v as u32 as u64
}
fn of_u32(v: u32) -> u64 {
    v as u64
}

/// A 16-bit float operation as the half crate computes it: in f32, rounded once to 16 bits.
fn in_f32(ty: ScalarType, operands: &[u64], op: impl FnOnce(&[u64]) -> u64) -> u64 {
    let Some(format) = ty.half() else { return op(operands) };
    let widened: Vec<u64> = operands.iter().map(|&a| of_f32(format.widen(a as u16))).collect();
    format.round(f32_of(op(&widened))) as u64
}

/// Applies `op` to a value of type `ty`. Integer arithmetic wraps (the GPU's behaviour; a debug
/// build of the CPU reference panics on overflow instead).
pub fn unary(op: UnaryOp, ty: ScalarType, a: u64) -> u64 {
    use ScalarType::*;
    match (op, ty) {
        // The half crate flips the sign bit.
        (UnaryOp::Neg, F16 | BF16) => a ^ 0x8000,
        (UnaryOp::Neg, F32) => of_f32(-f32_of(a)),
        (UnaryOp::Neg, F64) => (-f64_of(a)).to_bits(),
        (UnaryOp::Neg, I32) => of_i32(i32_of(a).wrapping_neg()),
        (UnaryOp::Abs, F32) => of_f32(f32_of(a).abs()),
        (UnaryOp::Abs, F64) => f64_of(a).abs().to_bits(),
        (UnaryOp::Abs, I32) => of_i32(i32_of(a).wrapping_abs()),
        (UnaryOp::Sqrt, F32) => of_f32(f32_of(a).sqrt()),
        (UnaryOp::Sqrt, F64) => f64_of(a).sqrt().to_bits(),
        (UnaryOp::Not, Bool) => (a == 0) as u64,
        (UnaryOp::Not, I32 | U32) => of_u32(!u32_of(a)),
        (UnaryOp::Floor, F32) => of_f32(f32_of(a).floor()),
        (UnaryOp::Floor, F64) => f64_of(a).floor().to_bits(),
        (UnaryOp::Ceil, F32) => of_f32(f32_of(a).ceil()),
        (UnaryOp::Ceil, F64) => f64_of(a).ceil().to_bits(),
        (UnaryOp::Trunc, F32) => of_f32(f32_of(a).trunc()),
        (UnaryOp::Trunc, F64) => f64_of(a).trunc().to_bits(),
        (UnaryOp::Round, F32) => of_f32(f32_of(a).round()),
        (UnaryOp::Round, F64) => f64_of(a).round().to_bits(),
        (UnaryOp::RoundTiesEven, F32) => of_f32(f32_of(a).round_ties_even()),
        (UnaryOp::RoundTiesEven, F64) => f64_of(a).round_ties_even().to_bits(),
        (UnaryOp::CountOnes, U32) => of_u32(u32_of(a).count_ones()),
        (UnaryOp::LeadingZeros, U32) => of_u32(u32_of(a).leading_zeros()),
        (UnaryOp::TrailingZeros, U32) => of_u32(u32_of(a).trailing_zeros()),
        (UnaryOp::ReverseBits, U32) => of_u32(u32_of(a).reverse_bits()),
        (UnaryOp::Exp, F32) => of_f32(crate::math::exp_f32(f32_of(a))),
        // Body::new rejects every other combination.
        _ => 0,
    }
}

pub fn binary(op: BinaryOp, ty: ScalarType, a: u64, b: u64) -> u64 {
    use ScalarType::*;
    // The half crate's copysign moves the sign bit, NaN payloads kept.
    if ty.half().is_some() && op == BinaryOp::CopySign {
        return (a & 0x7FFF) | (b & 0x8000);
    }
    if ty.half().is_some() {
        return in_f32(ty, &[a, b], |v| binary(op, F32, v[0], v[1]));
    }
    macro_rules! float {
        ($conv:ident, $back:expr) => {{
            let (x, y) = ($conv(a), $conv(b));
            let v = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                // Rust leaves the sign of min/max(-0.0, +0.0) unspecified (a release build of
                // `f32::min` returns the second operand, a debug build the first); the kernel pins
                // the first, and so must its emulation. A NaN operand yields the other one.
                BinaryOp::Min if x.is_nan() => y,
                BinaryOp::Min => {
                    if y < x {
                        y
                    } else {
                        x
                    }
                }
                BinaryOp::Max if x.is_nan() => y,
                BinaryOp::Max => {
                    if y > x {
                        y
                    } else {
                        x
                    }
                }
                BinaryOp::CopySign => x.copysign(y),
                // Body::new rejects the rest on floats.
                _ => return 0,
            };
            $back(v)
        }};
    }
    // Division and shifts as Rust computes them wherever it does not panic: Body::new admits only
    // constant divisors other than 0 (and -1 on i32) and constant amounts below the width, where
    // these give Rust's results; the 0 of a refused divisor is never computed.
    if matches!(op, BinaryOp::Div | BinaryOp::Rem) && ty.is_integer() {
        return checked_division(op, ty, a, b).unwrap_or(0);
    }
    macro_rules! integer {
        ($x:expr, $y:expr) => {{
            let (x, y) = ($x, $y);
            match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Min => x.min(y),
                BinaryOp::Max => x.max(y),
                BinaryOp::BitAnd => x & y,
                BinaryOp::BitOr => x | y,
                BinaryOp::BitXor => x ^ y,
                BinaryOp::Shl => x.wrapping_shl(y as u32),
                BinaryOp::Shr => x.wrapping_shr(y as u32),
                BinaryOp::RotateLeft => x.rotate_left(y as u32),
                BinaryOp::RotateRight => x.rotate_right(y as u32),
                _ => 0,
            }
        }};
    }
    match ty {
        F32 => float!(f32_of, of_f32),
        F64 => float!(f64_of, f64::to_bits),
        I32 => of_i32(integer!(i32_of(a), i32_of(b))),
        U32 => of_u32(integer!(u32_of(a), u32_of(b))),
        Bool => match op {
            BinaryOp::And | BinaryOp::BitAnd => ((a != 0) && (b != 0)) as u64,
            BinaryOp::Or | BinaryOp::BitOr => ((a != 0) || (b != 0)) as u64,
            BinaryOp::BitXor => ((a != 0) != (b != 0)) as u64,
            _ => 0,
        },
        // Computed in f32 above.
        F16 | BF16 => 0,
    }
}

/// Integer `a / b` or `a % b` where Rust computes it, `None` where it panics: a zero divisor,
/// and `i32::MIN / -1` (or `% -1`), which overflows.
pub fn checked_division(op: BinaryOp, ty: ScalarType, a: u64, b: u64) -> Option<u64> {
    match (op, ty) {
        (BinaryOp::Div, ScalarType::I32) => i32_of(a).checked_div(i32_of(b)).map(of_i32),
        (BinaryOp::Rem, ScalarType::I32) => i32_of(a).checked_rem(i32_of(b)).map(of_i32),
        (BinaryOp::Div, ScalarType::U32) => u32_of(a).checked_div(u32_of(b)).map(of_u32),
        (BinaryOp::Rem, ScalarType::U32) => u32_of(a).checked_rem(u32_of(b)).map(of_u32),
        _ => None,
    }
}

/// Rust's comparison operators: every ordered comparison with a NaN is false, `!=` is true.
pub fn compare(op: CompareOp, ty: ScalarType, a: u64, b: u64) -> u64 {
    use ScalarType::*;
    fn cmp<T: PartialOrd>(op: CompareOp, x: T, y: T) -> bool {
        match op {
            CompareOp::Lt => x < y,
            CompareOp::Le => x <= y,
            CompareOp::Gt => x > y,
            CompareOp::Ge => x >= y,
            CompareOp::Eq => x == y,
            CompareOp::Ne => x != y,
        }
    }
    (match ty {
        F32 => cmp(op, f32_of(a), f32_of(b)),
        // Widening keeps order and equality (-0 == +0, NaN unordered), as the half crate's.
        F16 | BF16 => ty.half().is_some_and(|h| cmp(op, h.widen(a as u16), h.widen(b as u16))),
        F64 => cmp(op, f64_of(a), f64_of(b)),
        I32 => cmp(op, i32_of(a), i32_of(b)),
        U32 => cmp(op, u32_of(a), u32_of(b)),
        Bool => cmp(op, a != 0, b != 0),
    }) as u64
}

/// Rust's `as`: float to integer rounds toward zero and saturates, NaN gives 0.
pub fn cast(from: ScalarType, to: ScalarType, a: u64) -> u64 {
    use ScalarType::*;
    match (from, to) {
        (F32, F32) | (F64, F64) | (I32, I32) | (U32, U32) => a,
        (F32, F64) => (f32_of(a) as f64).to_bits(),
        (F32, I32) => of_i32(f32_of(a) as i32),
        (F32, U32) => of_u32(f32_of(a) as u32),
        (F64, F32) => of_f32(f64_of(a) as f32),
        (F64, I32) => of_i32(f64_of(a) as i32),
        (F64, U32) => of_u32(f64_of(a) as u32),
        (I32, F32) => of_f32(i32_of(a) as f32),
        (I32, F64) => (i32_of(a) as f64).to_bits(),
        (I32, U32) | (U32, I32) => a & 0xffff_ffff,
        (U32, F32) => of_f32(u32_of(a) as f32),
        (U32, F64) => (u32_of(a) as f64).to_bits(),
        (Bool, I32 | U32) => a,
        // `x.to_f32()`, exact, and `f16::from_f32(x)`, rounded.
        (F16 | BF16, F32) => from.half().map_or(0, |h| of_f32(h.widen(a as u16))),
        (F32, F16 | BF16) => to.half().map_or(0, |h| h.round(f32_of(a)) as u64),
        (F16, F16) | (BF16, BF16) => a,
        // Body::new rejects casts to bool, from bool to floats, and to or from 16-bit floats
        // other than through f32.
        (_, Bool) | (Bool, _) | (F16 | BF16, _) | (_, F16 | BF16) => 0,
    }
}

/// `a.mul_add(b, c)`: fused, one rounding.
pub fn mul_add(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    match ty {
        ScalarType::F32 => of_f32(f32_of(a).mul_add(f32_of(b), f32_of(c))),
        ScalarType::F64 => f64_of(a).mul_add(f64_of(b), f64_of(c)).to_bits(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::Rng;
    use half::{bf16, f16};

    /// Every operation on 16-bit floats gives the half crate's bits (NaN equal to NaN).
    #[test]
    fn sixteen_bit_operations_are_the_half_crates() {
        fn same(a: u64, b: u16, nan: fn(u16) -> bool) -> bool {
            a as u16 == b || (nan(a as u16) && nan(b))
        }
        let mut rng = Rng::new(7);
        let binary_ops = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Min, BinaryOp::Max];
        let compares = [CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge, CompareOp::Eq, CompareOp::Ne];
        for i in 0..400_000u32 {
            // Small values too: random bits are mostly huge, tiny or NaN.
            let draw = |rng: &mut Rng| {
                if i % 2 == 0 {
                    rng.next_u64() as u16
                } else {
                    f16::from_f32(rng.uniform(-4.0, 4.0) as f32).to_bits()
                }
            };
            let (a, b) = (draw(&mut rng), draw(&mut rng));
            let (x, y) = (f16::from_bits(a), f16::from_bits(b));
            let want = [x + y, x - y, x * y, x / y, x.min(y), x.max(y)];
            for (op, w) in binary_ops.iter().zip(want) {
                assert!(
                    same(binary(*op, ScalarType::F16, a as u64, b as u64), w.to_bits(), |h| f16::from_bits(h).is_nan()),
                    "{op:?} {x} {y}"
                );
            }
            let (p, q) = (bf16::from_bits(a), bf16::from_bits(b));
            let want = [p + q, p - q, p * q, p / q, p.min(q), p.max(q)];
            for (op, w) in binary_ops.iter().zip(want) {
                assert!(
                    same(binary(*op, ScalarType::BF16, a as u64, b as u64), w.to_bits(), |h| bf16::from_bits(h)
                        .is_nan()),
                    "{op:?} {p} {q}"
                );
            }
            let want = [x < y, x <= y, x > y, x >= y, x == y, x != y];
            for (op, w) in compares.iter().zip(want) {
                assert_eq!(compare(*op, ScalarType::F16, a as u64, b as u64), w as u64, "{op:?} {x} {y}");
            }
            let want = [p < q, p <= q, p > q, p >= q, p == q, p != q];
            for (op, w) in compares.iter().zip(want) {
                assert_eq!(compare(*op, ScalarType::BF16, a as u64, b as u64), w as u64, "{op:?} {p} {q}");
            }
            assert_eq!(unary(UnaryOp::Neg, ScalarType::F16, a as u64), (-x).to_bits() as u64);
            assert_eq!(unary(UnaryOp::Neg, ScalarType::BF16, a as u64), (-p).to_bits() as u64);
            let wide = f32::from_bits(rng.next_u64() as u32);
            assert!(same(
                cast(ScalarType::F32, ScalarType::F16, wide.to_bits() as u64),
                f16::from_f32(wide).to_bits(),
                |h| f16::from_bits(h).is_nan()
            ));
            assert_eq!(
                cast(ScalarType::F32, ScalarType::BF16, wide.to_bits() as u64),
                bf16::from_f32(wide).to_bits() as u64
            );
            let back = f32::from_bits(cast(ScalarType::F16, ScalarType::F32, a as u64) as u32);
            assert!(back.to_bits() == x.to_f32().to_bits() || (back.is_nan() && x.is_nan()));
        }
    }
}
