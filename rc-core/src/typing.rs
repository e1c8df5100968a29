//! The type rules of a stencil body, in one place: which operand types each operation accepts and
//! what it produces. `Body::new` checks every node with them and the macro checks the source with
//! them, so the two cannot disagree; the macro puts a refusal on the offending tokens.

use thiserror::Error;

use crate::operation::{binary_name, compare_name, unary_name, BinaryOp, CompareOp, UnaryOp};
use crate::scalar::ScalarType::{self, Bool, BF16, F16, F32, F64, I32, U32};

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
    /// `a.wrapping_add(b)` and the other `wrapping_*` methods on integers, with the operator
    /// floats write instead (`+`).
    Wrapping {
        method: &'static str,
        operator: &'static str,
    },
    /// A method the macro writes with other operations (`x.fract()` is `x - x.trunc()`), by
    /// the name [`method`] knows it by.
    Method(&'static str),
}

/// The methods the macro writes with other operations, and the types each is defined on (the
/// half crate's f16 and bf16 have the classifications and `signum`).
const METHODS: &[(&str, &[ScalarType])] = &[
    ("fract", FLOATS),
    ("recip", FLOATS),
    ("to_degrees", FLOATS),
    ("to_radians", FLOATS),
    ("signum", &[F32, F64, I32, F16, BF16]),
    ("clamp", &[F32, F64, I32, U32]),
    ("abs_diff", INTEGERS),
    ("is_nan", &[F32, F64, F16, BF16]),
    ("is_infinite", &[F32, F64, F16, BF16]),
    ("is_finite", &[F32, F64, F16, BF16]),
    ("is_sign_positive", &[F32, F64, F16, BF16]),
    ("is_sign_negative", &[F32, F64, F16, BF16]),
    ("count_ones", INTEGERS),
    ("count_zeros", INTEGERS),
    ("leading_zeros", INTEGERS),
    ("trailing_zeros", INTEGERS),
    ("leading_ones", INTEGERS),
    ("trailing_ones", INTEGERS),
    ("reverse_bits", INTEGERS),
    ("rotate_left", INTEGERS),
    ("rotate_right", INTEGERS),
    ("pow", INTEGERS),
    ("saturating_add", INTEGERS),
    ("saturating_sub", INTEGERS),
    ("saturating_neg", &[I32]),
    ("saturating_abs", &[I32]),
];

/// `name` as a method the macro writes with other operations, if it is one.
pub fn method(name: &str) -> Option<Operation> {
    METHODS.iter().find(|(n, _)| *n == name).map(|(n, _)| Operation::Method(n))
}

/// `x.name(..)` on a receiver of type `ty`: the receiver's type, if the method is defined on it.
pub fn method_receiver(op: Operation, ty: ScalarType) -> Result<ScalarType, TypeError> {
    op.check(ty)
}

// The half crate gives f16 and bf16 the operators, `min`, `max` and comparisons, and no `abs`,
// `sqrt` or `mul_add`.
const FLOATS: &[ScalarType] = &[F32, F64];
const SIGNED: &[ScalarType] = &[F32, F64, I32, F16, BF16];
const INTEGERS: &[ScalarType] = &[I32, U32];
const NUMBERS: &[ScalarType] = &[F32, F64, I32, U32, F16, BF16];
const ALL: &[ScalarType] = &[F32, F64, I32, U32, F16, BF16, Bool];
/// What `as` converts between: Rust has no `as` for the half crate's types.
const AS_NUMBERS: &[ScalarType] = &[F32, F64, I32, U32];
const AS_ALL: &[ScalarType] = &[F32, F64, I32, U32, Bool];

impl Operation {
    /// The operand types it accepts (its operands must also agree with each other).
    pub fn accepts(self) -> &'static [ScalarType] {
        match self {
            Operation::Unary(UnaryOp::Neg | UnaryOp::Abs) => SIGNED,
            Operation::Unary(
                UnaryOp::Sqrt
                | UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Trunc
                | UnaryOp::Round
                | UnaryOp::RoundTiesEven,
            )
            | Operation::MulAdd => FLOATS,
            // A bit operation: the half crate has it too.
            Operation::Binary(BinaryOp::CopySign) => &[F32, F64, F16, BF16],
            Operation::Unary(UnaryOp::Not) => &[Bool, I32, U32],
            // Correctly rounded on the GPU in f32 so far (`crate::math`).
            Operation::Unary(UnaryOp::Exp) => &[F32],
            // Rust counts an i32's bits as a u32's and returns a u32: the macro reinterprets first.
            Operation::Unary(
                UnaryOp::CountOnes | UnaryOp::LeadingZeros | UnaryOp::TrailingZeros | UnaryOp::ReverseBits,
            ) => &[U32],
            // Integer `/` also needs a constant divisor: `right_operand`.
            Operation::Binary(
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Min | BinaryOp::Max,
            ) => NUMBERS,
            // A float `%` (fmod) has no PTX instruction to match it with.
            Operation::Binary(
                BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr | BinaryOp::RotateLeft | BinaryOp::RotateRight,
            )
            | Operation::Wrapping { .. } => INTEGERS,
            Operation::Binary(BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor) => &[Bool, I32, U32],
            Operation::Binary(BinaryOp::And | BinaryOp::Or) => &[Bool],
            Operation::Compare(CompareOp::Eq | CompareOp::Ne) => ALL,
            Operation::Compare(_) => NUMBERS,
            Operation::Cast(Bool) => &[],
            // `x.to_f32()` on f16 and bf16.
            Operation::Cast(F32) => NUMBERS,
            Operation::Cast(F64) => AS_NUMBERS,
            Operation::Cast(I32 | U32) => AS_ALL,
            // `f16::from_f32(x)`, `bf16::from_f32(x)`.
            Operation::Cast(F16 | BF16) => &[F32],
            Operation::Method(name) => match METHODS.iter().find(|(n, _)| *n == name) {
                Some((_, types)) => types,
                None => &[],
            },
        }
    }

    /// How the source spells it: `+`, `abs`, `as f32`, ...
    pub fn name(self) -> String {
        match self {
            Operation::Unary(op) => unary_name(op).to_string(),
            Operation::Binary(op) => binary_name(op).to_string(),
            Operation::Compare(op) => compare_name(op).to_string(),
            Operation::Cast(to @ (F16 | BF16)) => format!("{to}::from_f32"),
            Operation::Cast(to) => format!("as {to}"),
            Operation::MulAdd => "mul_add".to_string(),
            Operation::Wrapping { method, .. } => method.to_string(),
            Operation::Method(name) => name.to_string(),
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
    #[error("mismatched types in `{op}`: {left} and {right} ({})", convert_one(*.left, *.right))]
    Mismatch { op: &'static str, left: ScalarType, right: ScalarType },
    #[error("{}", unsupported(*.op, *.got))]
    Unsupported { op: Operation, got: ScalarType },
    #[error("an `if` condition must be a bool, got {got} (compare to get one: `x != {}`)", zero(*.got))]
    Condition { got: ScalarType },
    /// Integer `/`, `%`, `<<` or `>>` whose right operand is computed at run time.
    #[error("{}", runtime_operand(*.op))]
    RuntimeOperand { op: BinaryOp },
    #[error("integer `{}` by zero: Rust panics on it; divide by a nonzero constant", binary_name(*.op))]
    ZeroDivisor { op: BinaryOp },
    /// `/ -1` or `% -1` on a signed type.
    #[error("{}", overflow(*.op, *.ty))]
    Overflow { op: BinaryOp, ty: ScalarType },
    #[error("{}", shift_amount(*.op, *.ty, *.amount))]
    ShiftAmount { op: BinaryOp, ty: ScalarType, amount: i64 },
}

impl TypeError {
    /// Whether rustc refuses the same source too: Rust has no such operation on these operands,
    /// or its deny-by-default lints refuse the constant (a zero divisor, a shift past the
    /// width) where they see it. A macro then need not show rustc's error beside its own.
    pub fn rustc_refuses_too(&self) -> bool {
        match self {
            TypeError::Mismatch { .. }
            | TypeError::Condition { .. }
            | TypeError::ZeroDivisor { .. }
            | TypeError::ShiftAmount { .. } => true,
            // Rust computes these; rc refuses them because a kernel cannot match or panic.
            TypeError::RuntimeOperand { .. } | TypeError::Overflow { .. } => false,
            TypeError::Unsupported { op, got } => !matches!(
                (op, got),
                (Operation::Binary(BinaryOp::Rem), F32 | F64)
                    | (Operation::Binary(BinaryOp::Min | BinaryOp::Max), Bool)
                    | (Operation::Compare(CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge), Bool)
            ),
        }
    }
}

fn runtime_operand(op: BinaryOp) -> String {
    let name = binary_name(op);
    match op {
        BinaryOp::Shl | BinaryOp::Shr => format!(
            "`{name}` needs a constant shift amount: Rust panics on an amount of the width or more and a kernel cannot, \
             so rc shifts by constants only (`x {name} 3`)"
        ),
        _ => format!(
            "integer `{name}` needs a constant divisor: Rust panics on a zero divisor and a kernel cannot, so rc divides \
             integers by nonzero constants only (`x {name} 7`); divide floats for a divisor computed at run time \
             (`a as f32 / b as f32`)"
        ),
    }
}

fn overflow(op: BinaryOp, ty: ScalarType) -> String {
    let (name, instead) = match op {
        BinaryOp::Rem => ("%", "`x.wrapping_rem(-1)`, which is 0".to_string()),
        _ => ("/", "`x.wrapping_div(-1)` (or `x.wrapping_neg()`) for the wrapped quotient".to_string()),
    };
    format!(
        "`x {name} -1` overflows for x = {ty}::MIN: Rust panics on it in a debug build and wraps in a release build; \
         write {instead}"
    )
}

fn shift_amount(op: BinaryOp, ty: ScalarType, amount: i64) -> String {
    let (name, bits) = (binary_name(op), ty.bits());
    let method = if op == BinaryOp::Shl { "wrapping_shl" } else { "wrapping_shr" };
    let instead = if amount >= bits as i64 {
        format!(", or write `x.{method}({amount})`, which shifts by the amount modulo {bits}")
    } else {
        String::new()
    };
    format!("`{name}` by {amount}: a shift amount must lie in 0..{bits} for {ty} (Rust panics on others); shift by 0 to {}{instead}", bits - 1)
}

/// How to make two types agree.
fn convert_one(left: ScalarType, right: ScalarType) -> String {
    match [left, right].into_iter().find(|t| t.half().is_some()) {
        Some(half) => format!("convert through f32: `x.to_f32()` to f32, `{half}::from_f32(x)` back to {half}"),
        None => "convert one with `as`".to_string(),
    }
}

fn unsupported(op: Operation, got: ScalarType) -> String {
    match op {
        Operation::Cast(to) if got.half().is_some() || to.half().is_some() => format!(
            "`{}` is not defined from {got}: 16-bit floats convert through f32 (`x.to_f32()`, `{}::from_f32(x)`)",
            op.name(),
            if to.half().is_some() { to } else { got }
        ),
        Operation::Unary(
            UnaryOp::Abs
            | UnaryOp::Sqrt
            | UnaryOp::Floor
            | UnaryOp::Ceil
            | UnaryOp::Trunc
            | UnaryOp::Round
            | UnaryOp::RoundTiesEven
            | UnaryOp::Exp,
        )
        | Operation::MulAdd
            if got.half().is_some() =>
        {
            format!(
            "the half crate's {got} has no `{}`: compute it in f32 and round once, `{got}::from_f32(x.to_f32().{}())`",
                op.name(),
                op.name()
            )
        }
        Operation::Unary(UnaryOp::Exp) if got == F64 => {
            "`exp` on f64 is not supported yet (f32's is, correctly rounded on the CPU and the GPU): compute in f32 \
             where its precision is enough, `(x as f32).exp() as f64`"
                .to_string()
        }
        Operation::Wrapping { method, operator } if got.is_float() => {
            format!("`{method}` is defined on i32 and u32, not {got}: floats do not wrap, write `{operator}`")
        }
        Operation::Cast(Bool) => format!("nothing can be cast to bool: compare instead (`x != {}`)", zero(got)),
        Operation::Cast(to) if got == Bool => {
            format!("a bool can be cast only to an integer: write `b as i32 as {to}`")
        }
        _ => {
            format!("`{}` is defined on {}, not {got} ({})", op.name(), list(op.accepts()), instead(op.accepts(), got))
        }
    }
}

/// What turns a `got` into something `accepts` holds: a conversion, or a comparison to a bool.
fn instead(accepts: &[ScalarType], got: ScalarType) -> String {
    if got.half().is_some() {
        return "convert with `x.to_f32()`".to_string();
    }
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

/// What the right operand of `op` on `ty` must be, given its value where it is a constant
/// (`None`: computed at run time). Integer `/` and `%` need a nonzero constant divisor, and on a
/// signed type not -1; integer `<<` and `>>` a constant amount below the width. Rust panics on
/// the rest (`i32::MIN / -1` in a debug build), which a kernel cannot.
pub fn right_operand(op: BinaryOp, ty: ScalarType, constant: Option<i64>) -> Result<(), TypeError> {
    if !ty.is_integer() {
        return Ok(());
    }
    match (op, constant) {
        (BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr, None) => Err(TypeError::RuntimeOperand { op }),
        (BinaryOp::Div | BinaryOp::Rem, Some(0)) => Err(TypeError::ZeroDivisor { op }),
        (BinaryOp::Div | BinaryOp::Rem, Some(-1)) if ty.is_signed_integer() => Err(TypeError::Overflow { op, ty }),
        (BinaryOp::Shl | BinaryOp::Shr, Some(amount)) if !(0..ty.bits() as i64).contains(&amount) => {
            Err(TypeError::ShiftAmount { op, ty, amount })
        }
        _ => Ok(()),
    }
}

/// `a.wrapping_add(b)` and the like: two integers of one type.
pub fn wrapping(
    method: &'static str,
    operator: &'static str,
    a: ScalarType,
    b: ScalarType,
) -> Result<ScalarType, TypeError> {
    Operation::Wrapping { method, operator }.check(same(method, a, b)?)
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
    fn integer_division_needs_a_nonzero_constant_divisor_and_says_what_to_write_instead() {
        assert_eq!(binary(BinaryOp::Div, I32, I32), Ok(I32));
        let e = right_operand(BinaryOp::Div, I32, None).unwrap_err();
        assert!(
            e.to_string().contains("divide floats for a divisor computed at run time (`a as f32 / b as f32`)"),
            "{e}"
        );
        assert_eq!(right_operand(BinaryOp::Rem, U32, Some(0)), Err(TypeError::ZeroDivisor { op: BinaryOp::Rem }));
        assert_eq!(right_operand(BinaryOp::Div, U32, Some(7)), Ok(()));
        assert_eq!(right_operand(BinaryOp::Div, F64, None), Ok(()));
    }

    #[test]
    fn minus_one_divides_only_unsigned_types_and_the_refusal_names_the_wrapping_method() {
        let e = right_operand(BinaryOp::Div, I32, Some(-1)).unwrap_err();
        assert!(e.to_string().contains("`x.wrapping_div(-1)`"), "{e}");
        let e = right_operand(BinaryOp::Rem, I32, Some(-1)).unwrap_err();
        assert!(e.to_string().contains("`x.wrapping_rem(-1)`, which is 0"), "{e}");
        // A u32 constant is never -1: u32::MAX is an ordinary divisor.
        assert_eq!(right_operand(BinaryOp::Div, U32, Some(u32::MAX as i64)), Ok(()));
    }

    #[test]
    fn shifts_take_constant_amounts_below_the_width() {
        assert_eq!(right_operand(BinaryOp::Shl, I32, Some(31)), Ok(()));
        assert_eq!(right_operand(BinaryOp::Shr, U32, Some(0)), Ok(()));
        let e = right_operand(BinaryOp::Shl, U32, Some(32)).unwrap_err();
        assert!(e.to_string().contains("`x.wrapping_shl(32)`"), "{e}");
        let e = right_operand(BinaryOp::Shr, I32, Some(-1)).unwrap_err();
        assert!(!e.to_string().contains("wrapping"), "{e}");
        assert_eq!(right_operand(BinaryOp::Shr, I32, None), Err(TypeError::RuntimeOperand { op: BinaryOp::Shr }));
        assert!(binary(BinaryOp::Shl, F32, F32).is_err());
    }

    #[test]
    fn rustc_refuses_what_rust_lacks_and_not_what_rc_alone_refuses() {
        assert!(binary(BinaryOp::BitAnd, F32, F32).unwrap_err().rustc_refuses_too());
        assert!(binary(BinaryOp::Add, F32, I32).unwrap_err().rustc_refuses_too());
        assert!(!binary(BinaryOp::Rem, F32, F32).unwrap_err().rustc_refuses_too());
        assert!(!compare(CompareOp::Lt, Bool, Bool).unwrap_err().rustc_refuses_too());
        assert!(!right_operand(BinaryOp::Div, I32, None).unwrap_err().rustc_refuses_too());
        assert!(right_operand(BinaryOp::Shl, I32, Some(40)).unwrap_err().rustc_refuses_too());
    }

    #[test]
    fn bitwise_operators_take_integers_and_bools_and_wrapping_methods_integers() {
        assert_eq!(binary(BinaryOp::BitXor, Bool, Bool), Ok(Bool));
        assert_eq!(binary(BinaryOp::BitAnd, U32, U32), Ok(U32));
        let e = binary(BinaryOp::BitOr, F32, F32).unwrap_err();
        assert_eq!(e.to_string(), "`|` is defined on bool, i32 and u32, not f32 (convert with `as i32`)");
        assert_eq!(
            binary(BinaryOp::Rem, F64, F64).unwrap_err().to_string(),
            "`%` is defined on i32 and u32, not f64 (convert with `as i32`)"
        );
        assert_eq!(wrapping("wrapping_add", "+", I32, I32), Ok(I32));
        let e = wrapping("wrapping_mul", "*", F32, F32).unwrap_err();
        assert_eq!(e.to_string(), "`wrapping_mul` is defined on i32 and u32, not f32: floats do not wrap, write `*`");
    }

    #[test]
    fn a_refusal_names_the_accepted_types_the_type_got_and_a_conversion() {
        let e = unary(UnaryOp::Neg, U32).unwrap_err();
        assert_eq!(e.to_string(), "`-` is defined on f32, f64, i32, f16 and bf16, not u32 (convert with `as i32`)");
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
