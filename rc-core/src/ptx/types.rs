//! How values are named and written in PTX, from the type table ([`crate::scalar::TypeInfo`]).

use crate::program::Reg;
use crate::scalar::{HalfFormat, Immediate, Scalar, ScalarType};

/// The register holding virtual register `reg`, named by its type.
pub(super) fn reg_name(ty: ScalarType, reg: Reg) -> String {
    format!("{}{reg}", ty.info().register)
}

pub(super) fn scratch_prefix(ty: ScalarType) -> &'static str {
    ty.info().scratch
}

pub fn ptx_type(ty: ScalarType) -> &'static str {
    ty.info().ptx
}

/// The type that moves and selects `ty`'s registers (`mov`, `selp`).
pub(super) fn bits_type(ty: ScalarType) -> &'static str {
    ty.info().bits_ptx
}

/// An immediate of type `s.ty`, bit-exact (`0f3F800000` for 1.0f32).
pub(super) fn immediate(s: Scalar) -> String {
    match s.ty.info().immediate {
        Immediate::F32Bits => format!("0f{:08X}", s.bits as u32),
        Immediate::F64Bits => format!("0d{:016X}", s.bits),
        Immediate::Signed32 => format!("{}", s.bits as u32 as i32),
        Immediate::Unsigned32 => format!("{}", s.bits as u32),
        Immediate::Bit => format!("{}", s.bits & 1),
        Immediate::Widened(format) => format!("0f{:08X}", format.widen(s.bits as u16).to_bits()),
        Immediate::Bits16 => format!("0x{:04X}", s.bits as u16),
    }
}

/// The instructions that widen 16-bit `h` (a `.b16` register) exactly into f32 register `d`;
/// `t` is a 32-bit scratch register for bfloat16, whose value is its top half.
pub(super) fn widen(format: HalfFormat, d: &str, h: &str, t: &str) -> Vec<String> {
    match format {
        HalfFormat::Binary16 => vec![format!("cvt.f32.f16 {d}, {h};")],
        HalfFormat::BFloat16 => vec![format!("cvt.u32.u16 {t}, {h};"), format!("shl.b32 {d}, {t}, 16;")],
    }
}

/// The instruction that rounds f32 register `x` to 16-bit `h`, nearest, ties to even.
pub(super) fn narrow(format: HalfFormat, h: &str, x: &str) -> String {
    format!("cvt.rn.{}.f32 {h}, {x};", format.ptx())
}
