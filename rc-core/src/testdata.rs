//! Data for checking kernels: deterministic, seeded, and full of the values that break sloppy
//! code generation (NaN, infinities, negative zero, subnormals), and a bit-exact comparison.

use crate::scalar::{Element, ScalarType};

/// xorshift64*: small, seedable, and the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }
}

/// `n` values of type `T`. Floats: mostly uniform in [-100, 100), with about one in fifty each of
/// NaN, +inf, -inf, -0.0, +0.0 and a subnormal. Integers: small (|v| < 1000), so that stencils
/// of moderate size do not overflow (a debug build of the CPU reference panics on overflow).
pub fn awkward<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let pick = rng.below(50);
            let bits = match T::TYPE {
                ScalarType::F32 => u64::from(match pick {
                    0 => f32::NAN.to_bits(),
                    1 => f32::INFINITY.to_bits(),
                    2 => f32::NEG_INFINITY.to_bits(),
                    3 => (-0.0f32).to_bits(),
                    4 => 0.0f32.to_bits(),
                    5 => 1 + rng.below(0x7f_ffff) as u32,
                    _ => (rng.uniform(-100.0, 100.0) as f32).to_bits(),
                }),
                ScalarType::F64 => match pick {
                    0 => f64::NAN.to_bits(),
                    1 => f64::INFINITY.to_bits(),
                    2 => f64::NEG_INFINITY.to_bits(),
                    3 => (-0.0f64).to_bits(),
                    4 => 0.0f64.to_bits(),
                    5 => 1 + rng.below(0xf_ffff_ffff_ffff),
                    _ => rng.uniform(-100.0, 100.0).to_bits(),
                },
                ScalarType::F16 | ScalarType::BF16 => {
                    let format = T::TYPE.half().unwrap_or(crate::HalfFormat::Binary16);
                    let (infinity, quiet) = match format {
                        crate::HalfFormat::Binary16 => (0x7c00, 0x0200),
                        crate::HalfFormat::BFloat16 => (0x7f80, 0x0040),
                    };
                    u64::from(match pick {
                        0 => infinity | quiet,
                        1 => infinity,
                        2 => 0x8000 | infinity,
                        3 => 0x8000,
                        4 => 0,
                        5 => 1 + rng.below(quiet as u64 * 2 - 1) as u16,
                        _ => format.round(rng.uniform(-100.0, 100.0) as f32),
                    })
                }
                ScalarType::I32 => (rng.below(2000) as i32 - 1000) as u32 as u64,
                ScalarType::U32 | ScalarType::Bool => rng.below(1000),
            };
            T::from_bits(bits)
        })
        .collect()
}

/// The first index where `got` and `want` differ (bits differ and not both NaN), or where their
/// lengths part.
pub fn first_difference<T: Element>(got: &[T], want: &[T]) -> Option<usize> {
    got.iter()
        .zip(want)
        .position(|(g, w)| !g.same_value(*w))
        .or((got.len() != want.len()).then(|| got.len().min(want.len())))
}

/// A value no correct kernel writes by accident: outputs are filled with it before a run so an
/// output the kernel skipped shows up. Finite on purpose: a NaN would compare equal to an
/// expected NaN.
pub fn poison<T: Element>() -> T {
    T::from_bits(match T::TYPE {
        ScalarType::F32 => 0xff7f_beef,
        ScalarType::F64 => 0xffef_beef_dead_beef,
        // Finite, near the lowest value.
        ScalarType::F16 => 0xfbef,
        ScalarType::BF16 => 0xff7e,
        _ => 0xdead_beef,
    })
}

/// `first_difference`, but `-0.0` and `+0.0` count as equal: for stencils that call `min` or
/// `max`, where Rust leaves the sign of a zero result unspecified (a release build of the
/// reference can return the other zero than the kernel, which follows debug builds).
pub fn first_difference_up_to_zero_sign<T: Element>(got: &[T], want: &[T]) -> Option<usize> {
    let zero = |v: &T| {
        let bits = v.to_scalar().bits;
        match T::TYPE {
            ScalarType::F32 => f32::from_bits(bits as u32) == 0.0,
            ScalarType::F64 => f64::from_bits(bits) == 0.0,
            ScalarType::F16 | ScalarType::BF16 => bits & 0x7fff == 0,
            _ => false,
        }
    };
    got.iter()
        .zip(want)
        .position(|(g, w)| !(g.same_value(*w) || (zero(g) && zero(w))))
        .or((got.len() != want.len()).then(|| got.len().min(want.len())))
}

/// f32 data of signed zeros with a few other values: `kind` 0 is all `-0.0`; 1 is runs of
/// `-0.0` (some longer than a window) between `+0.0`, ones and cancelling pairs; 2 adds NaN and
/// infinities to that.
pub fn signed_zeros(n: usize, kind: u32, seed: u64) -> Vec<f32> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let run = (next() % 100) as usize;
        let value = match (kind, next() % 8) {
            (0, _) | (_, 0..=3) => -0.0,
            (_, 4) => 0.0,
            (_, 5) => 1.0,
            (_, 6) => -1.0,
            (2, _) => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][(next() % 3) as usize],
            _ => 0.5,
        };
        out.extend(std::iter::repeat_n(value, run.min(n - out.len())));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_of_either_sign_are_equal_only_when_asked() {
        assert_eq!(first_difference(&[-0.0f32, 1.0], &[0.0, 1.0]), Some(0));
        assert_eq!(first_difference_up_to_zero_sign(&[-0.0f32, 1.0], &[0.0, 1.0]), None);
        assert_eq!(first_difference_up_to_zero_sign(&[-0.0f64], &[0.0]), None);
        assert_eq!(first_difference_up_to_zero_sign(&[1.0f32], &[-1.0]), Some(0));
        assert_eq!(first_difference(&[f32::NAN], &[f32::from_bits(0x7fc0_0001)]), None);
        assert_eq!(first_difference(&[poison::<f32>()], &[f32::NAN]), Some(0));
    }
}
