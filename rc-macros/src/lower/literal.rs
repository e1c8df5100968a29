//! Literal typing as rustc does it: an unsuffixed literal (and arithmetic, selects and `let`s over
//! literals) waits untyped until a use gives it a type, then is evaluated in that type, rounding
//! once as rustc rounds it. Apart because its rules are rustc's, not the stencil language's.

use quote::ToTokens;
use syn::Lit as SynLit;

use rc_core::body::{BinaryOp, Node, NodeId, UnaryOp};
use rc_core::typing::{self, Operation};
use rc_core::{ops, Scalar, ScalarType};

use super::operator::{Kind, Spans};
use super::unroll::LOOP_INDEX;
use super::{Lower, Value};

/// A literal whose type Rust infers from where it is used (`2.0` is f32 next to an f32).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Lit {
    Int(i128),
    /// The literal's digits, parsed only once its type is known, so it rounds as rustc rounds it.
    Float(String),
    Neg(Box<Lit>),
    /// `!x` on an integer literal: `!0` is -1 as an i32 and u32::MAX as a u32.
    Not(Box<Lit>),
    /// `a op b` for the arithmetic, bitwise and shift operators.
    Bin(BinaryOp, Box<Lit>, Box<Lit>),
    /// `if cond { a } else { b }` over literals: typed, like them, by its use.
    Select(NodeId, Box<Lit>, Box<Lit>),
    /// The value of a `let` (identified by its statement) bound to an untyped literal, or of a
    /// loop index (`LOOP_INDEX`): a variable, whose type is its own, not a cast's.
    Var(usize, Box<Lit>),
}

impl Lower<'_> {
    pub(super) fn literal(&mut self, lit: &SynLit) -> Value {
        match lit {
            SynLit::Int(i) => {
                if matches!(i.suffix(), "f32" | "f64") {
                    // `2f32` is a float literal that syn reads as an integer with a suffix.
                    let ty = ScalarType::from_rust_name(i.suffix()).unwrap_or(ScalarType::F64);
                    let digits = i.base10_digits().to_string();
                    return self.materialize(&Lit::Float(digits), ty, lit).map_or(Value::Poison, Value::Known);
                }
                let Ok(v) = i.base10_parse::<i128>() else {
                    return self.unsupported(lit, "integer literal out of range");
                };
                match ScalarType::from_rust_name(i.suffix()) {
                    Some(ty) => self.materialize(&Lit::Int(v), ty, lit).map_or(Value::Poison, Value::Known),
                    None => Value::Untyped(Lit::Int(v)),
                }
            }
            SynLit::Float(f) => {
                let digits = f.base10_digits().to_string();
                match ScalarType::from_rust_name(f.suffix()) {
                    Some(ty) => self.materialize(&Lit::Float(digits), ty, lit).map_or(Value::Poison, Value::Known),
                    None => Value::Untyped(Lit::Float(digits)),
                }
            }
            SynLit::Bool(b) => Value::Known(Scalar::bool(b.value)),
            other => self.unsupported(other, "only numeric and boolean literals are supported"),
        }
    }

    /// An untyped literal expression as type `ty`: known at compile time, or a node if it holds
    /// a runtime select.
    pub(super) fn typed(&mut self, lit: &Lit, ty: ScalarType, at: &dyn ToTokens) -> Value {
        self.record(lit, ty);
        self.typed_as(lit, ty, at)
    }

    /// Notes that the `let`s inside `lit` met type `ty` (the first type each meets wins).
    fn record(&mut self, lit: &Lit, ty: ScalarType) {
        match lit {
            Lit::Int(_) | Lit::Float(_) => {}
            Lit::Neg(l) | Lit::Not(l) => self.record(l, ty),
            Lit::Bin(_, a, b) | Lit::Select(_, a, b) => {
                self.record(a, ty);
                self.record(b, ty);
            }
            Lit::Var(site, l) => {
                if *site != LOOP_INDEX {
                    self.inferred.entry(*site).or_insert(ty);
                }
                self.record(l, ty);
            }
        }
    }

    /// `typed` without recording: for casts, which hint a literal's type but do not unify.
    pub(super) fn typed_as(&mut self, lit: &Lit, ty: ScalarType, at: &dyn ToTokens) -> Value {
        match lit {
            Lit::Var(_, inner) => self.typed_as(inner, ty, at),
            Lit::Select(cond, a, b) => {
                let (a, b) = (self.typed_as(a, ty, at), self.typed_as(b, ty, at));
                let (Some(x), Some(y)) = (self.node_for(a, Some(ty), at), self.node_for(b, Some(ty), at)) else {
                    return Value::Poison;
                };
                Value::Node(self.push(Node::Select { cond: *cond, then: x, otherwise: y }, ty), ty)
            }
            Lit::Neg(inner) | Lit::Not(inner) if has_select(inner) => {
                let op = if matches!(lit, Lit::Neg(_)) { UnaryOp::Neg } else { UnaryOp::Not };
                let v = self.typed_as(inner, ty, at);
                match (typing::unary(op, ty), self.node_for(v, Some(ty), at)) {
                    (Ok(ty), Some(id)) => Value::Node(self.push(Node::Unary(op, id), ty), ty),
                    (Err(e), _) => self.type_error(e, at, at),
                    _ => Value::Poison,
                }
            }
            Lit::Bin(op, a, b) if has_select(a) || has_select(b) => {
                // A shift amount stays what it was, a constant: only a select is computed here.
                let (x, y) = (self.typed_as(a, ty, at), self.typed_as(b, ty, at));
                self.apply(Kind::Binary(*op), x, y, &Spans::all(at))
            }
            pure => self.materialize(pure, ty, at).map_or(Value::Poison, Value::Known),
        }
    }

    /// Evaluates an untyped literal expression in type `ty`, rounding as rustc does.
    pub(super) fn materialize(&mut self, lit: &Lit, ty: ScalarType, at: &dyn ToTokens) -> Option<Scalar> {
        match eval_lit(lit, ty) {
            Ok(s) => Some(s),
            Err(m) => {
                self.cx.error(at, m);
                None
            }
        }
    }
}

/// Rust's fallback type for a literal nobody constrains: i32 for integers, f64 for floats.
pub(super) fn default_type(lit: &Lit) -> ScalarType {
    match lit {
        Lit::Int(_) => ScalarType::I32,
        Lit::Float(_) => ScalarType::F64,
        Lit::Neg(l) | Lit::Not(l) => default_type(l),
        // A shift has its left operand's type, whatever the amount's.
        Lit::Bin(BinaryOp::Shl | BinaryOp::Shr, a, _) => default_type(a),
        Lit::Bin(_, a, b) | Lit::Select(_, a, b) => default_type(a).max_by_float(default_type(b)),
        Lit::Var(_, l) => default_type(l),
    }
}

/// Whether a literal expression is made of float literals (else integers).
pub(super) fn is_float_lit(lit: &Lit) -> bool {
    default_type(lit).is_float()
}

fn has_select(lit: &Lit) -> bool {
    match lit {
        Lit::Int(_) | Lit::Float(_) => false,
        Lit::Neg(l) | Lit::Not(l) => has_select(l),
        Lit::Bin(_, a, b) => has_select(a) || has_select(b),
        Lit::Select(..) => true,
        Lit::Var(_, l) => has_select(l),
    }
}

pub(super) trait FloatWins {
    fn max_by_float(self, other: ScalarType) -> ScalarType;
}
impl FloatWins for ScalarType {
    fn max_by_float(self, other: ScalarType) -> ScalarType {
        if other.is_float() {
            other
        } else {
            self
        }
    }
}

/// Rust has no literals of the half crate's types.
fn half_literal(ty: ScalarType, text: &str) -> String {
    format!("Rust has no {ty} literals: write `{ty}::from_f32({text})`, or a constant such as `{ty}::ONE`")
}

fn eval_lit(lit: &Lit, ty: ScalarType) -> Result<Scalar, String> {
    match lit {
        Lit::Select(..) => Err("a value chosen at run time is not a constant".into()),
        Lit::Var(_, l) => eval_lit(l, ty),
        Lit::Int(v) => match ty {
            ScalarType::I32 => {
                i32::try_from(*v).map(Scalar::i32).map_err(|_| format!("literal {v} does not fit in i32"))
            }
            ScalarType::U32 => {
                u32::try_from(*v).map(Scalar::u32).map_err(|_| format!("literal {v} does not fit in u32"))
            }
            ScalarType::F32 | ScalarType::F64 => {
                Err(format!("expected {ty}, found the integer literal `{v}` (write `{v}.0`)"))
            }
            ScalarType::Bool => Err(format!("expected bool, found the integer literal `{v}`")),
            ScalarType::F16 | ScalarType::BF16 => Err(half_literal(ty, &format!("{v}.0"))),
        },
        Lit::Float(text) => match ty {
            ScalarType::F32 => text.parse::<f32>().map(Scalar::f32).map_err(|e| format!("bad float literal: {e}")),
            ScalarType::F64 => text.parse::<f64>().map(Scalar::f64).map_err(|e| format!("bad float literal: {e}")),
            ScalarType::F16 | ScalarType::BF16 => Err(half_literal(ty, text)),
            other => Err(format!("expected {other}, found the float literal `{text}`")),
        },
        Lit::Neg(inner) => {
            // `-2147483648` must not overflow on the way: negate the literal before narrowing.
            if let (Lit::Int(v), true) = (&**inner, ty.is_integer()) {
                return eval_lit(&Lit::Int(v.checked_neg().ok_or("integer literal out of range")?), ty);
            }
            let s = eval_lit(inner, ty)?;
            typing::unary(UnaryOp::Neg, ty).map_err(|e| e.to_string())?;
            Ok(Scalar::new(ty, ops::unary(UnaryOp::Neg, ty, s.bits)))
        }
        Lit::Not(inner) => {
            let s = eval_lit(inner, ty)?;
            typing::unary(UnaryOp::Not, ty).map_err(|e| e.to_string())?;
            Ok(Scalar::new(ty, ops::unary(UnaryOp::Not, ty, s.bits)))
        }
        Lit::Bin(op, a, b) => {
            let (x, y) = (eval_lit(a, ty)?, eval_lit(b, ty)?);
            typing::binary(*op, ty, ty).map_err(|e| e.to_string())?;
            let (xi, yi) = (x.integer(), y.integer());
            match (op, xi, yi) {
                // Exact in i128; rustc refuses a result outside the type, as narrowing it does.
                (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, Some(xi), Some(yi)) => {
                    let (xi, yi) = (xi as i128, yi as i128);
                    let v = match op {
                        BinaryOp::Add => xi + yi,
                        BinaryOp::Sub => xi - yi,
                        _ => xi * yi,
                    };
                    eval_lit(&Lit::Int(v), ty)
                }
                (BinaryOp::Div | BinaryOp::Rem, Some(xi), Some(yi)) => {
                    ops::checked_division(*op, ty, x.bits, y.bits).map(|bits| Scalar::new(ty, bits)).ok_or_else(|| {
                        format!(
                            "constant arithmetic overflows {ty} or divides by zero: {xi} {} {yi}",
                            Operation::Binary(*op).name()
                        )
                    })
                }
                _ => {
                    typing::right_operand(*op, ty, yi).map_err(|e| e.to_string())?;
                    Ok(Scalar::new(ty, ops::binary(*op, ty, x.bits, y.bits)))
                }
            }
        }
    }
}

/// A compile-time integer: an untyped integer expression or a known i32/u32.
pub(super) fn int_value(v: &Value) -> Option<i64> {
    /// Untyped, as an i32 would compute it where the value fits (Rust's default integer type).
    fn lit(l: &Lit) -> Option<i128> {
        match l {
            Lit::Int(v) => Some(*v),
            Lit::Float(_) | Lit::Select(..) => None,
            Lit::Var(_, l) => lit(l),
            Lit::Neg(x) => lit(x)?.checked_neg(),
            Lit::Not(x) => Some(!lit(x)?),
            Lit::Bin(op, a, b) => {
                let (a, b) = (lit(a)?, lit(b)?);
                let amount = || u32::try_from(b).ok().filter(|&b| b < 32);
                match op {
                    BinaryOp::Add => a.checked_add(b),
                    BinaryOp::Sub => a.checked_sub(b),
                    BinaryOp::Mul => a.checked_mul(b),
                    BinaryOp::Div => a.checked_div(b),
                    BinaryOp::Rem => a.checked_rem(b),
                    BinaryOp::BitAnd => Some(a & b),
                    BinaryOp::BitOr => Some(a | b),
                    BinaryOp::BitXor => Some(a ^ b),
                    BinaryOp::Shl => a.checked_shl(amount()?),
                    BinaryOp::Shr => a.checked_shr(amount()?),
                    BinaryOp::Min
                    | BinaryOp::Max
                    | BinaryOp::And
                    | BinaryOp::Or
                    | BinaryOp::CopySign
                    | BinaryOp::RotateLeft
                    | BinaryOp::RotateRight => None,
                }
            }
        }
    }
    match v {
        Value::Untyped(l) => lit(l).and_then(|v| i64::try_from(v).ok()),
        Value::Known(s) => s.integer(),
        _ => None,
    }
}
