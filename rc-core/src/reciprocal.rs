//! Division by a constant, correctly rounded, in three instructions instead of ten.
//!
//! `div.rn.f32` is IEEE division. For a constant divisor ptxas still emits, per division, the
//! reciprocal's refinement (three instructions it does not hoist), a range check (`FCHK`), three
//! FMAs, and a branch with its reconvergence barrier: about ten instructions. In a (2r+1)-tap
//! average that is a sixth of all instructions at r = 16, in a kernel bound by instruction issue.
//!
//! With `y = RN(1/b)` computed once at compile time, Markstein's sequence
//! `q0 = RN(x*y)`, `r = RN(x - b*q0)` (exact, one FMA), `q = RN(q0 + r*y)` (one FMA) gives
//! `RN(x/b)` whenever no step leaves the normal range. We do not take that on trust: the
//! sequence depends only on the significand of `x` while every step stays normal (scaling `x` by
//! a power of two scales each step exactly), so [`Reciprocal::of`] checks it against IEEE
//! division for every one of the 2^23 significands, and offers the fast path only for divisors
//! where all agree. The kernel then checks the quotient: `|q| >= min_quotient` (false for NaN)
//! holds exactly when the steps stayed in range, and otherwise the lane divides with
//! `div.rn.f32`. Zero, infinite and NaN dividends all fail the check (see `divide`).
//!
//! Only `f32`: the same check for `f64` would need 2^52 significands.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The fast path of `x / divisor` for one constant divisor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reciprocal {
    pub divisor: f32,
    /// `RN(1 / divisor)`.
    pub reciprocal: f32,
    /// The smallest `|quotient|` the fast path is trusted for (a normal power of two).
    pub min_quotient: f32,
}

/// Divisors outside `[2^-100, 2^100]` in magnitude keep `div.rn`: their reciprocal or the
/// quotients of ordinary dividends would approach the subnormal or overflow range.
const MAX_DIVISOR_EXPONENT: i32 = 100;

impl Reciprocal {
    /// The fast path for `divisor`, if every significand divides correctly with it. Checked once
    /// per divisor per process (about 70 ms), then cached.
    pub fn of(divisor: f32) -> Option<Reciprocal> {
        static CHECKED: OnceLock<Mutex<HashMap<u32, Option<Reciprocal>>>> = OnceLock::new();
        let cache = CHECKED.get_or_init(|| Mutex::new(HashMap::new()));
        // A poisoned lock only means another thread panicked mid-check; the map is still valid.
        let mut cache = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *cache.entry(divisor.to_bits()).or_insert_with(|| Reciprocal::check(divisor))
    }

    fn check(divisor: f32) -> Option<Reciprocal> {
        let exponent = divisor.abs().log2().floor() as i32;
        if !divisor.is_normal() || exponent.abs() > MAX_DIVISOR_EXPONENT {
            return None;
        }
        let fast = Reciprocal { divisor, reciprocal: 1.0 / divisor, min_quotient: min_quotient(exponent) };
        let all_agree = (0..1u32 << 23).all(|m| {
            let x = f32::from_bits(0x3F80_0000 | m);
            fast.quotient(x).to_bits() == (x / divisor).to_bits()
        });
        all_agree.then_some(fast)
    }

    /// The three-instruction quotient, exactly as the kernel computes it.
    pub fn quotient(&self, x: f32) -> f32 {
        let q0 = x * self.reciprocal;
        let r = (-self.divisor).mul_add(q0, x);
        r.mul_add(self.reciprocal, q0)
    }

    /// `x / divisor` as the kernel computes it: the fast path when its check passes, IEEE
    /// division otherwise. Equal to `x / divisor` for every `x`: `tests` check this across
    /// the range.
    pub fn divide(&self, x: f32) -> f32 {
        let q = self.quotient(x);
        if q.abs() >= self.min_quotient {
            q
        } else {
            x / self.divisor
        }
    }
}

/// The quotient bound below which some step could leave the normal range, for a divisor
/// `2^e <= |b| < 2^(e+1)`. With `|x| >= 2^-102` every bit of the remainder `x - b*q0` (whose
/// lowest bit is at least `2^(ex-47)`) is representable, and with `|x| >= 2^-125 |b|` the first
/// product `x*y` is normal; `|q| ~ |x/b|`, and a factor 4 covers the rounding on the way.
fn min_quotient(e: i32) -> f32 {
    let exponent = (-102 - e).max(-125) + 2;
    f32::from_bits(((exponent + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dividends across the whole range at a divisor: every exponent, edges of the check,
    /// specials, subnormals, both signs.
    fn dividends() -> Vec<f32> {
        let mut xs = vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, f32::MIN_POSITIVE];
        xs.push(f32::from_bits(1));
        xs.push(f32::from_bits(0x007F_FFFF));
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for exponent in 0..=254u32 {
            for _ in 0..64 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                xs.push(f32::from_bits((exponent << 23) | (seed as u32 & 0x007F_FFFF)));
            }
            xs.push(f32::from_bits(exponent << 23));
            xs.push(f32::from_bits((exponent << 23) | 0x007F_FFFF));
        }
        let negative: Vec<f32> = xs.iter().map(|x| -x).collect();
        xs.extend(negative);
        xs
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn the_averages_divisors_all_have_a_fast_path_that_divides_exactly() {
        for taps in [3.0f32, 5.0, 7.0, 9.0, 17.0, 25.0, 33.0, 49.0, 65.0, 129.0, 4.0, 0.1, -3.0, 1.0e30, 1.0e-30] {
            let fast = Reciprocal::of(taps).unwrap_or_else(|| panic!("no fast path for {taps}"));
            for x in dividends() {
                assert!(same(fast.divide(x), x / taps), "{x:e} / {taps}: {:e} vs {:e}", fast.divide(x), x / taps);
            }
        }
    }

    #[test]
    fn special_dividends_take_the_ieee_path() {
        let fast = Reciprocal::of(65.0).expect("65 has a fast path");
        for x in [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::from_bits(1), 1.0e-37] {
            let q = fast.quotient(x);
            assert!(q.is_nan() || q.abs() < fast.min_quotient, "{x:e} passed the check with {q:e}");
        }
        // -0.0 is why: the fast path alone would give +0.0.
        assert_eq!(fast.quotient(-0.0).to_bits(), 0.0f32.to_bits());
    }

    #[test]
    fn divisors_near_the_ends_of_the_range_keep_ieee_division() {
        for b in [0.0f32, -0.0, f32::INFINITY, f32::NAN, f32::from_bits(1), f32::MAX, 1.0e-35, 1.0e35] {
            assert_eq!(Reciprocal::of(b), None, "{b:e}");
        }
    }

    #[test]
    fn the_check_bound_is_a_normal_power_of_two() {
        for e in -MAX_DIVISOR_EXPONENT..=MAX_DIVISOR_EXPONENT {
            let m = min_quotient(e);
            assert!(m.is_normal() && m.to_bits() & 0x007F_FFFF == 0, "{e}: {m:e}");
        }
    }
}
