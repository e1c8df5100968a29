//! Operators and casts: `a + b`, `a / 3`, `a & b`, `a << 2`, comparisons, `&&`/`||`, `-x`, `!x`,
//! `x as T`, with operands typed as rustc types them and folded when both are known. Apart from
//! methods because syn spells them differently, and because integer `/`, `%`, `<<` and `>>` take
//! constant right operands only (`rc_core::typing::right_operand`), refused on that operand.

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Type};

use rc_core::body::{BinaryOp, CompareOp, Node, UnaryOp};
use rc_core::typing::{self, TypeError};
use rc_core::{ops, Scalar, ScalarType};

use super::literal::{default_type, is_float_lit, FloatWins, Lit};
use super::rust_type::{is_index_type, strip_type};
use super::{type_of, Lower, Value};
use crate::signature::scalar;

/// A binary operator of the body language.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Binary(BinaryOp),
    Compare(CompareOp),
}

/// Where a binary operation's errors go: the operator (an operand type it does not take), the
/// whole expression (operands that disagree), the right operand (a divisor or shift amount).
pub(super) struct Spans<'t> {
    pub op: &'t dyn ToTokens,
    pub whole: &'t dyn ToTokens,
    pub left: &'t dyn ToTokens,
    pub right: &'t dyn ToTokens,
}

impl<'t> Spans<'t> {
    /// Every error on `at`: for operations the source does not spell out.
    pub(super) fn all(at: &'t dyn ToTokens) -> Spans<'t> {
        Spans { op: at, whole: at, left: at, right: at }
    }
}

impl Lower<'_> {
    /// `a op b`; `sides` are the operands' tokens, for errors about one of them.
    pub(super) fn binary(&mut self, op: &BinOp, a: Value, b: Value, at: &Expr, sides: [&dyn ToTokens; 2]) -> Value {
        let Some(kind) = kind(op) else {
            return self.unsupported(op, "compound assignment is a statement, not a value");
        };
        self.apply(kind, a, b, &Spans { op, whole: at, left: sides[0], right: sides[1] })
    }

    /// `a op b` over lowered operands.
    pub(super) fn apply(&mut self, kind: Kind, a: Value, b: Value, at: &Spans<'_>) -> Value {
        match (a, b) {
            (Value::Poison, _) | (_, Value::Poison) => Value::Poison,
            (Value::Unit, _) | (_, Value::Unit) => self.unsupported(at.whole, "this operand has no value (it is `()`)"),
            (a, b) if matches!(kind, Kind::Binary(BinaryOp::Shl | BinaryOp::Shr)) => {
                let Kind::Binary(op) = kind else { return Value::Poison };
                self.shift(op, a, b, at)
            }
            (Value::Untyped(x), Value::Untyped(y)) => match kind {
                Kind::Binary(BinaryOp::And | BinaryOp::Or) => self.unsupported(at.whole, "`&&` and `||` take bools"),
                Kind::Binary(op) => Value::Untyped(Lit::Bin(op, Box::new(x), Box::new(y))),
                Kind::Compare(_) => {
                    let ty = default_type(&x).max_by_float(default_type(&y));
                    let (x, y) = (self.typed(&x, ty, at.left), self.typed(&y, ty, at.right));
                    self.apply(kind, x, y, at)
                }
            },
            (Value::Untyped(x), other) => {
                let Some(ty) = type_of(&other) else { return Value::Poison };
                let x = self.typed(&x, ty, at.left);
                self.apply(kind, x, other, at)
            }
            (other, Value::Untyped(y)) => {
                let Some(ty) = type_of(&other) else { return Value::Poison };
                let y = self.typed(&y, ty, at.right);
                self.apply(kind, other, y, at)
            }
            (a, b) => self.typed_binary(kind, a, b, at),
        }
    }

    /// `a op b` over typed operands.
    fn typed_binary(&mut self, kind: Kind, a: Value, b: Value, at: &Spans<'_>) -> Value {
        let (Some(ta), Some(tb)) = (type_of(&a), type_of(&b)) else { return Value::Poison };
        let rule = match kind {
            Kind::Binary(o) => typing::binary(o, ta, tb),
            Kind::Compare(o) => typing::compare(o, ta, tb),
        };
        let result = match rule {
            Ok(result) => result,
            Err(e) => return self.type_error(e, at.op, at.whole),
        };
        match (kind, a, b) {
            (Kind::Binary(op @ (BinaryOp::Div | BinaryOp::Rem)), Value::Known(x), Value::Known(y))
                if ta.is_integer() =>
            {
                // Folded as rustc folds it, which refuses what would panic.
                match ops::checked_division(op, ta, x.bits, y.bits) {
                    Some(bits) => Value::Known(Scalar::new(ta, bits)),
                    None => {
                        let message = format!(
                            "this division overflows {ta} or divides by zero: {x} {} {y}",
                            typing::Operation::Binary(op).name()
                        );
                        self.cx.error_rustc_refuses_too(at.whole, message);
                        Value::Poison
                    }
                }
            }
            (Kind::Binary(op @ (BinaryOp::Div | BinaryOp::Rem)), a, b) if ta.is_integer() => {
                let divisor = match &b {
                    Value::Known(s) => s.integer(),
                    _ => None,
                };
                match typing::right_operand(op, ta, divisor) {
                    Ok(()) => self.binary_value(op, a, b, ta, at.whole),
                    Err(e) => self.operand_error(e, at.right),
                }
            }
            (Kind::Binary(op), a, b) => self.binary_value(op, a, b, ta, at.whole),
            (Kind::Compare(op), Value::Known(x), Value::Known(y)) => {
                Value::Known(Scalar::new(result, ops::compare(op, ta, x.bits, y.bits)))
            }
            (Kind::Compare(op), a, b) => {
                let (Some(x), Some(y)) = (self.node_for(a, Some(ta), at.whole), self.node_for(b, Some(ta), at.whole))
                else {
                    return Value::Poison;
                };
                Value::Node(self.push(Node::Compare(op, x, y), result), result)
            }
        }
    }

    /// `a << b` or `a >> b`: the amount is a constant integer of any integer type (as Rust
    /// shifts by any), below the width of `a`'s type.
    fn shift(&mut self, op: BinaryOp, a: Value, b: Value, at: &Spans<'_>) -> Value {
        let message = TypeError::RuntimeOperand { op }.to_string();
        let Some(amount) = self.const_int_or(&b, at.right, &message) else { return Value::Poison };
        match a {
            Value::Untyped(x) => {
                // Typed later, by its use; every integer type is 32 bits wide, so the amount is
                // checked now, where it is written.
                match typing::right_operand(op, default_type(&x), Some(amount)) {
                    Ok(()) => Value::Untyped(Lit::Bin(op, Box::new(x), Box::new(Lit::Int(amount as i128)))),
                    Err(e) => self.operand_error(e, at.right),
                }
            }
            a => {
                let Some(ty) = type_of(&a) else { return Value::Poison };
                if let Err(e) = typing::binary(op, ty, ty) {
                    return self.type_error(e, at.op, at.whole);
                }
                match typing::right_operand(op, ty, Some(amount)) {
                    // In range, so the amount is a value of `ty` too.
                    Ok(()) => self.binary_value(op, a, Value::Known(Scalar::new(ty, amount as u64)), ty, at.whole),
                    Err(e) => self.operand_error(e, at.right),
                }
            }
        }
    }

    /// `op` over two type-checked operands of type `ty`: folded when both are known, a node
    /// otherwise.
    pub(super) fn binary_value(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        ty: ScalarType,
        at: &dyn ToTokens,
    ) -> Value {
        if let (Value::Known(x), Value::Known(y)) = (&a, &b) {
            return Value::Known(Scalar::new(ty, ops::binary(op, ty, x.bits, y.bits)));
        }
        let (Some(x), Some(y)) = (self.node_for(a, Some(ty), at), self.node_for(b, Some(ty), at)) else {
            return Value::Poison;
        };
        Value::Node(self.push(Node::Binary(op, x, y), ty), ty)
    }

    /// `-x` or `!x`; `op_tokens` is the operator, where a refusal goes.
    pub(super) fn unary(&mut self, op: UnaryOp, v: Value, op_tokens: &dyn ToTokens, at: &Expr) -> Value {
        match v {
            Value::Poison => Value::Poison,
            Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
            Value::Untyped(lit) if op == UnaryOp::Neg => Value::Untyped(Lit::Neg(Box::new(lit))),
            Value::Untyped(lit) if op == UnaryOp::Not && !is_float_lit(&lit) => Value::Untyped(Lit::Not(Box::new(lit))),
            Value::Untyped(lit) => {
                let v = self.typed(&lit, default_type(&lit), at);
                self.unary(op, v, op_tokens, at)
            }
            Value::Known(s) => match typing::unary(op, s.ty) {
                Ok(ty) => Value::Known(Scalar::new(ty, ops::unary(op, s.ty, s.bits))),
                Err(e) => self.type_error(e, op_tokens, at),
            },
            Value::Node(id, ty) => match typing::unary(op, ty) {
                Ok(ty) => Value::Node(self.push(Node::Unary(op, id), ty), ty),
                Err(e) => self.type_error(e, op_tokens, at),
            },
        }
    }

    pub(super) fn cast(&mut self, v: Value, ty: &Type, at: &Expr) -> Value {
        let Some(to) = scalar(ty) else {
            if is_index_type(strip_type(ty)) {
                const MESSAGE: &str =
                    "a cast to an index type needs a constant integer: array indices and tap offsets are \
                    constants (a literal, a `const`, or a `for` loop index)";
                return self
                    .const_int_or(&v, at, MESSAGE)
                    .map_or(Value::Poison, |i| Value::Untyped(Lit::Int(i as i128)));
            }
            return self.unsupported(ty, "unsupported cast target: a stencil computes with f32, f64, i32 and u32");
        };
        // Rust has no `as` to or from the half crate's types.
        if to.half().is_some() {
            return self
                .unsupported(ty, &format!("`as` cannot convert to {to}: write `{to}::from_f32(x)` (from an f32)"));
        }
        if let Some(from) = super::type_of(&v).filter(|t| t.half().is_some()) {
            return self.unsupported(
                at,
                &format!("`as` cannot convert a {from}: write `x.to_f32()` (then `as {to}` from the f32)"),
            );
        }
        match v {
            Value::Poison => Value::Poison,
            Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
            Value::Untyped(lit) => {
                // rustc types a literal (or a negated one) under `as` as the target when it can
                // be one (`3000000000 as u32`, `1.1 as f32`); anything else keeps its own type.
                let ty_of_lit = match &lit {
                    Lit::Int(_) | Lit::Float(_) if is_float_lit(&lit) == to.is_float() => to,
                    Lit::Neg(inner)
                        if matches!(**inner, Lit::Int(_) | Lit::Float(_)) && is_float_lit(&lit) == to.is_float() =>
                    {
                        to
                    }
                    // Expressions, selects and variables keep their own (fallback) type.
                    l => default_type(l),
                };
                let v = self.typed_as(&lit, ty_of_lit, at);
                self.cast(v, ty, at)
            }
            Value::Known(s) => match typing::cast(s.ty, to) {
                Ok(to) => Value::Known(Scalar::new(to, ops::cast(s.ty, to, s.bits))),
                Err(e) => self.type_error(e, at, at),
            },
            Value::Node(id, from) if from == to => Value::Node(id, from),
            Value::Node(id, from) => match typing::cast(from, to) {
                Ok(to) => Value::Node(self.push(Node::Cast(to, id), to), to),
                Err(e) => self.type_error(e, at, at),
            },
        }
    }
}

/// The operation a (non-assigning) binary operator names.
fn kind(op: &BinOp) -> Option<Kind> {
    Some(match op {
        BinOp::Add(_) => Kind::Binary(BinaryOp::Add),
        BinOp::Sub(_) => Kind::Binary(BinaryOp::Sub),
        BinOp::Mul(_) => Kind::Binary(BinaryOp::Mul),
        BinOp::Div(_) => Kind::Binary(BinaryOp::Div),
        BinOp::Rem(_) => Kind::Binary(BinaryOp::Rem),
        BinOp::And(_) => Kind::Binary(BinaryOp::And),
        BinOp::Or(_) => Kind::Binary(BinaryOp::Or),
        BinOp::BitAnd(_) => Kind::Binary(BinaryOp::BitAnd),
        BinOp::BitOr(_) => Kind::Binary(BinaryOp::BitOr),
        BinOp::BitXor(_) => Kind::Binary(BinaryOp::BitXor),
        BinOp::Shl(_) => Kind::Binary(BinaryOp::Shl),
        BinOp::Shr(_) => Kind::Binary(BinaryOp::Shr),
        BinOp::Eq(_) => Kind::Compare(CompareOp::Eq),
        BinOp::Ne(_) => Kind::Compare(CompareOp::Ne),
        BinOp::Lt(_) => Kind::Compare(CompareOp::Lt),
        BinOp::Le(_) => Kind::Compare(CompareOp::Le),
        BinOp::Gt(_) => Kind::Compare(CompareOp::Gt),
        BinOp::Ge(_) => Kind::Compare(CompareOp::Ge),
        _ => return None,
    })
}

/// The operator `x op= y` applies.
pub(super) fn compound(op: &BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::AddAssign(t) => BinOp::Add(syn::Token![+](t.span())),
        BinOp::SubAssign(t) => BinOp::Sub(syn::Token![-](t.span())),
        BinOp::MulAssign(t) => BinOp::Mul(syn::Token![*](t.span())),
        BinOp::DivAssign(t) => BinOp::Div(syn::Token![/](t.span())),
        BinOp::RemAssign(t) => BinOp::Rem(syn::Token![%](t.span())),
        BinOp::BitAndAssign(t) => BinOp::BitAnd(syn::Token![&](t.span())),
        BinOp::BitOrAssign(t) => BinOp::BitOr(syn::Token![|](t.span())),
        BinOp::BitXorAssign(t) => BinOp::BitXor(syn::Token![^](t.span())),
        BinOp::ShlAssign(t) => BinOp::Shl(syn::Token![<<](t.span())),
        BinOp::ShrAssign(t) => BinOp::Shr(syn::Token![>>](t.span())),
        _ => return None,
    })
}
