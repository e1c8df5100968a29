//! The type rules of a stencil body, in one place: which operand types each operation accepts and
//! what it produces. `Body::new` checks every node with them and the macro checks the source with
//! them, so the two cannot disagree; the macro puts a refusal on the offending tokens.

use thiserror::Error;

use crate::body::{binary_name, compare_name, unary_name, BinaryOp, CompareOp, UnaryOp};
use crate::scalar::ScalarType::{self, Bool, F32, F64, I32, U32};

/// An operation of a body, as its type rule names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(CompareOp),
    /// `x as ty`, with the target type.
    Cast(ScalarType),
    /// `a.mul_add(b, c)`.
    MulAdd,
}

const FLOATS: &[ScalarType] = &[F32, F64];
const SIGNED: &[ScalarType] = &[F32, F64, I32];
const NUMBERS: &[ScalarType] = &[F32, F64, I32, U32];
const ALL: &[ScalarType] = &[F32, F64, I32, U32, Bool];

impl Operation {
    /// The operand types it accepts (its operands must also agree with each other).
    pub const fn accepts(self) -> &'static [ScalarType] {
        match self {
            Operation::Unary(UnaryOp::Neg | UnaryOp::Abs) => SIGNED,
            Operation::Unary(UnaryOp::Sqrt) | Operation::MulAdd => FLOATS,
            Operation::Unary(UnaryOp::Not) => &[Bool, I32, U32],
            Operation::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Min | BinaryOp::Max) => NUMBERS,
            // Integer division panics on the CPU for a zero divisor; the GPU cannot do the same.
            Operation::Binary(BinaryOp::Div) => FLOATS,
            Operation::Binary(BinaryOp::And | BinaryOp::Or) => &[Bool],
            Operation::Compare(CompareOp::Eq | CompareOp::Ne) => ALL,
            Operation::Compare(_) => NUMBERS,
            Operation::Cast(Bool) => &[],
            Operation::Cast(F32 | F64) => NUMBERS,
            Operation::Cast(I32 | U32) => ALL,
        }
    }

    /// How the source spells it: `+`, `abs`, `as f32`, ...
    pub fn name(self) -> String {
        match self {
            Operation::Unary(op) => unary_name(op).to_string(),
            Operation::Binary(op) => binary_name(op).to_string(),
            Operation::Compare(op) => compare_name(op).to_string(),
            Operation::Cast(to) => format!("as {to}"),
            Operation::MulAdd => "mul_add".to_string(),
        }
    }

    fn check(self, got: ScalarType) -> Result<ScalarType, TypeError> {
        if self.accepts().contains(&got) {
            Ok(got)
        } else {
            Err(TypeError::Unsupported { op: self, got })
        }
    }
}

/// Why an operation refuses its operands: what it expects, what it got, what to write instead.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum TypeError {
    #[error("mismatched types in `{op}`: {left} and {right} (convert one with `as`)")]
    Mismatch { op: &'static str, left: ScalarType, right: ScalarType },
    #[error("{}", unsupported(*.op, *.got))]
    Unsupported { op: Operation, got: ScalarType },
    #[error("an `if` condition must be a bool, got {got} (compare to get one: `x != {}`)", zero(*.got))]
    Condition { got: ScalarType },
}

fn unsupported(op: Operation, got: ScalarType) -> String {
    match op {
        Operation::Binary(BinaryOp::Div) if got.is_integer() => "integer division is not supported: the CPU panics \
            on a zero divisor and the GPU cannot do the same; divide floats (`a as f32 / b as f32`) or constants"
            .to_string(),
        Operation::Cast(Bool) => format!("nothing can be cast to bool: compare instead (`x != {}`)", zero(got)),
        Operation::Cast(to) if got == Bool => format!("a bool can be cast only to an integer: write `b as i32 as {to}`"),
        _ => format!("`{}` is defined on {}, not {got} ({})", op.name(), list(op.accepts()), instead(op.accepts(), got)),
    }
}

/// What turns a `got` into something `accepts` holds: a conversion, or a comparison to a bool.
fn instead(accepts: &[ScalarType], got: ScalarType) -> String {
    let kin = accepts.iter().find(|t| t.is_float() == got.is_float() && **t != Bool);
    match kin.or(accepts.iter().find(|t| **t != Bool)) {
        Some(to) => format!("convert with `as {to}`"),
        None => format!("compare to get a bool: `x != {}`", zero(got)),
    }
}

fn zero(ty: ScalarType) -> &'static str {
    if ty.is_float() {
        "0.0"
    } else {
        "0"
    }
}

/// `f32, f64 and i32`.
fn list(types: &[ScalarType]) -> String {
    let names: Vec<&str> = types.iter().map(|t| t.rust_name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "nothing".to_string(),
    }
}

fn same(op: &'static str, left: ScalarType, right: ScalarType) -> Result<ScalarType, TypeError> {
    if left == right {
        Ok(left)
    } else {
        Err(TypeError::Mismatch { op, left, right })
    }
}

/// `-x`, `x.abs()`, `x.sqrt()`, `!x`: the operand's type.
pub fn unary(op: UnaryOp, ty: ScalarType) -> Result<ScalarType, TypeError> {
    Operation::Unary(op).check(ty)
}

/// `a + b`, `a.min(b)`, `a && b`, ...: both operands' type.
pub fn binary(op: BinaryOp, a: ScalarType, b: ScalarType) -> Result<ScalarType, TypeError> {
    Operation::Binary(op).check(same(binary_name(op), a, b)?)
}

/// `a < b`, `a == b`, ...: a bool.
pub fn compare(op: CompareOp, a: ScalarType, b: ScalarType) -> Result<ScalarType, TypeError> {
    Operation::Compare(op).check(same(compare_name(op), a, b)?).map(|_| Bool)
}

/// `x as to`, with Rust's rules: no casts to bool, a bool casts only to integers.
pub fn cast(from: ScalarType, to: ScalarType) -> Result<ScalarType, TypeError> {
    Operation::Cast(to).check(from).map(|_| to)
}

/// `a.mul_add(b, c)`: three floats of one type.
pub fn mul_add(a: ScalarType, b: ScalarType, c: ScalarType) -> Result<ScalarType, TypeError> {
    same("mul_add", a, b)?;
    Operation::MulAdd.check(same("mul_add", a, c)?)
}

/// The condition of an `if`.
pub fn condition(ty: ScalarType) -> Result<(), TypeError> {
    match ty {
        Bool => Ok(()),
        got => Err(TypeError::Condition { got }),
    }
}

/// `if cond { then } else { otherwise }` as a value: a bool condition, two branches of one type.
pub fn select(cond: ScalarType, then: ScalarType, otherwise: ScalarType) -> Result<ScalarType, TypeError> {
    condition(cond)?;
    same("if/else", then, otherwise)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_is_refused_and_says_what_to_write_instead() {
        let e = binary(BinaryOp::Div, I32, I32).unwrap_err();
        assert!(e.to_string().contains("divide floats (`a as f32 / b as f32`)"), "{e}");
        assert_eq!(binary(BinaryOp::Div, F64, F64), Ok(F64));
    }

    #[test]
    fn a_refusal_names_the_accepted_types_the_type_got_and_a_conversion() {
        let e = unary(UnaryOp::Neg, U32).unwrap_err();
        assert_eq!(e.to_string(), "`-` is defined on f32, f64 and i32, not u32 (convert with `as i32`)");
        let e = binary(BinaryOp::And, F32, F32).unwrap_err();
        assert_eq!(e.to_string(), "`&&` is defined on bool, not f32 (compare to get a bool: `x != 0.0`)");
    }

    #[test]
    fn operands_must_agree_before_their_type_is_checked() {
        assert_eq!(compare(CompareOp::Lt, F32, I32), Err(TypeError::Mismatch { op: "<", left: F32, right: I32 }));
        assert_eq!(mul_add(F32, F32, F64), Err(TypeError::Mismatch { op: "mul_add", left: F32, right: F64 }));
    }

    #[test]
    fn comparisons_give_bools_and_only_equality_takes_bools() {
        assert_eq!(compare(CompareOp::Eq, Bool, Bool), Ok(Bool));
        assert_eq!(compare(CompareOp::Ge, U32, U32), Ok(Bool));
        assert!(compare(CompareOp::Lt, Bool, Bool).is_err());
    }

    #[test]
    fn casts_follow_rust_bools_cast_only_to_integers_and_nothing_to_bool() {
        assert_eq!(cast(Bool, U32), Ok(U32));
        assert_eq!(cast(F64, I32), Ok(I32));
        assert!(cast(Bool, F32).unwrap_err().to_string().contains("`b as i32 as f32`"));
        assert!(cast(I32, Bool).is_err());
    }

    #[test]
    fn a_select_needs_a_bool_condition_and_branches_of_one_type() {
        assert_eq!(select(Bool, F32, F32), Ok(F32));
        assert_eq!(select(F32, F32, F32), Err(TypeError::Condition { got: F32 }));
        assert!(select(Bool, F32, F64).is_err());
    }
}
