//! How values are named and written in PTX, from the type table ([`crate::scalar::TypeInfo`]).

use crate::program::Reg;
use crate::scalar::{Immediate, Scalar, ScalarType};

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

/// An immediate of type `s.ty`, bit-exact (`0f3F800000` for 1.0f32).
pub(super) fn immediate(s: Scalar) -> String {
    match s.ty.info().immediate {
        Immediate::F32Bits => format!("0f{:08X}", s.bits as u32),
        Immediate::F64Bits => format!("0d{:016X}", s.bits),
        Immediate::Signed32 => format!("{}", s.bits as u32 as i32),
        Immediate::Unsigned32 => format!("{}", s.bits as u32),
        Immediate::Bit => format!("{}", s.bits & 1),
    }
}
