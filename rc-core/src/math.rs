//! The math functions a body may call whose results are not exact: correctly rounded, so each
//! has one answer, which the CPU computes with CORE-MATH's algorithms (the `core-math` crate)
//! and the kernel with the same algorithm printed as PTX (`ptx/exp.rs`). The standard library's
//! `f32::exp` is not correctly rounded (its bits differ between platforms), so inside a
//! `#[stencil]` function the macro turns `x.exp()` into [`CorrectlyRounded::exp`]: the function
//! the user wrote, called on the CPU, gives the kernel's bits.

/// 32-bit words of temporaries the kernel's `exp` keeps live at once (`ptx/exp.rs`: up to
/// seven doubles, two 64-bit integers, two words), which the register estimate adds at each
/// `exp`.
pub const EXP_SCRATCH_WORDS: u32 = 20;

/// `e^x` correctly rounded to nearest (CORE-MATH's `cr_expf`).
pub fn exp_f32(x: f32) -> f32 {
    core_math::expf(x)
}

/// The correctly rounded functions, as methods of the float types: what `x.exp()` means in a
/// stencil's body.
pub trait CorrectlyRounded {
    /// `e^self`, correctly rounded to nearest.
    fn exp(self) -> Self;
}

impl CorrectlyRounded for f32 {
    fn exp(self) -> f32 {
        exp_f32(self)
    }
}

impl CorrectlyRounded for f64 {
    fn exp(self) -> f64 {
        core_math::exp(self)
    }
}
