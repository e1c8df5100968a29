//! Operators and casts: `a + b`, comparisons, `&&`/`||`, `-x`, `!x`, `x as T`, with operands
//! typed as rustc types them and folded when both are known. Apart from methods because syn
//! spells them differently and integer `/` and `%` fold only between constants.

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Type};

use rc_core::body::{BinaryOp, CompareOp, Node, UnaryOp};
use rc_core::typing::{self, TypeError};
use rc_core::{ops, Scalar};

use super::literal::{default_type, int_value, is_float_lit, FloatWins, Lit, LitOp};
use super::rust_type::{is_index_type, strip_type};
use super::{type_of, Lower, Value};
use crate::signature::scalar;

impl Lower<'_> {
    /// `a op b`; `sides` are the operands' tokens, for errors about one of them.
    pub(super) fn binary(&mut self, op: &BinOp, a: Value, b: Value, at: &Expr, sides: [&dyn ToTokens; 2]) -> Value {
        let kind = match op {
            BinOp::Add(_) => Kind::Arith(BinaryOp::Add, LitOp::Add),
            BinOp::Sub(_) => Kind::Arith(BinaryOp::Sub, LitOp::Sub),
            BinOp::Mul(_) => Kind::Arith(BinaryOp::Mul, LitOp::Mul),
            BinOp::Div(_) => Kind::Arith(BinaryOp::Div, LitOp::Div),
            BinOp::Rem(_) => Kind::Rem,
            BinOp::And(_) => Kind::Logic(BinaryOp::And),
            BinOp::Or(_) => Kind::Logic(BinaryOp::Or),
            BinOp::Eq(_) => Kind::Compare(CompareOp::Eq),
            BinOp::Ne(_) => Kind::Compare(CompareOp::Ne),
            BinOp::Lt(_) => Kind::Compare(CompareOp::Lt),
            BinOp::Le(_) => Kind::Compare(CompareOp::Le),
            BinOp::Gt(_) => Kind::Compare(CompareOp::Gt),
            BinOp::Ge(_) => Kind::Compare(CompareOp::Ge),
            _ => return self.unsupported(at, "bitwise operators are not supported in a stencil body"),
        };
        match (a, b) {
            (Value::Poison, _) | (_, Value::Poison) => Value::Poison,
            (Value::Unit, _) | (_, Value::Unit) => self.unsupported(at, "this operand has no value (it is `()`)"),
            (Value::Untyped(x), Value::Untyped(y)) => match kind {
                Kind::Arith(_, lop) => Value::Untyped(Lit::Bin(lop, Box::new(x), Box::new(y))),
                Kind::Rem => Value::Untyped(Lit::Bin(LitOp::Rem, Box::new(x), Box::new(y))),
                Kind::Compare(_) => {
                    let ty = default_type(&x).max_by_float(default_type(&y));
                    let (x, y) = (self.typed(&x, ty, sides[0]), self.typed(&y, ty, sides[1]));
                    self.binary(op, x, y, at, sides)
                }
                Kind::Logic(_) => self.unsupported(at, "`&&` and `||` take bools"),
            },
            (Value::Untyped(x), other) => {
                let Some(ty) = type_of(&other) else { return Value::Poison };
                let x = self.typed(&x, ty, sides[0]);
                self.binary(op, x, other, at, sides)
            }
            (other, Value::Untyped(y)) => {
                let Some(ty) = type_of(&other) else { return Value::Poison };
                let y = self.typed(&y, ty, sides[1]);
                self.binary(op, other, y, at, sides)
            }
            (a, b) => {
                let (Some(ta), Some(tb)) = (type_of(&a), type_of(&b)) else { return Value::Poison };
                let both_known = matches!((&a, &b), (Value::Known(_), Value::Known(_)));
                let bop = match kind {
                    // Integer `/` and `%` exist only between constants, folded here as rustc folds them.
                    Kind::Arith(BinaryOp::Div, _) if both_known && ta == tb && ta.is_integer() => {
                        let (Value::Known(x), Value::Known(y)) = (a, b) else { return Value::Poison };
                        return self.fold_int(LitOp::Div, x, y, at);
                    }
                    Kind::Rem if both_known && ta == tb && ta.is_integer() => {
                        let (Value::Known(x), Value::Known(y)) = (a, b) else { return Value::Poison };
                        return self.fold_int(LitOp::Rem, x, y, at);
                    }
                    Kind::Rem if ta != tb => {
                        return self.type_error(TypeError::Mismatch { op: "%", left: ta, right: tb }, op, at);
                    }
                    Kind::Rem => return self.unsupported(op, "`%` is supported only between constant integers"),
                    Kind::Arith(bop, _) | Kind::Logic(bop) => Op::Binary(bop),
                    Kind::Compare(cop) => Op::Compare(cop),
                };
                let rule = match bop {
                    Op::Binary(o) => typing::binary(o, ta, tb),
                    Op::Compare(o) => typing::compare(o, ta, tb),
                };
                let result = match rule {
                    Ok(result) => result,
                    Err(e) => return self.type_error(e, op, at),
                };
                match (a, b) {
                    (Value::Known(x), Value::Known(y)) => Value::Known(Scalar::new(
                        result,
                        match bop {
                            Op::Binary(o) => ops::binary(o, ta, x.bits, y.bits),
                            Op::Compare(o) => ops::compare(o, ta, x.bits, y.bits),
                        },
                    )),
                    (a, b) => {
                        let (Some(x), Some(y)) = (self.node_for(a, Some(ta), at), self.node_for(b, Some(ta), at)) else {
                            return Value::Poison;
                        };
                        let node = match bop {
                            Op::Binary(o) => Node::Binary(o, x, y),
                            Op::Compare(o) => Node::Compare(o, x, y),
                        };
                        Value::Node(self.push(node, result), result)
                    }
                }
            }
        }
    }

    fn fold_int(&mut self, op: LitOp, x: Scalar, y: Scalar, at: &dyn ToTokens) -> Value {
        let (Some(a), Some(b)) = (int_value(&Value::Known(x)), int_value(&Value::Known(y))) else { return Value::Poison };
        let lit = Lit::Bin(op, Box::new(Lit::Int(a as i128)), Box::new(Lit::Int(b as i128)));
        self.materialize(&lit, x.ty, at).map_or(Value::Poison, Value::Known)
    }

    pub(super) fn unary(&mut self, op: UnaryOp, v: Value, at: &Expr) -> Value {
        match v {
            Value::Poison => Value::Poison,
            Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
            Value::Untyped(lit) if op == UnaryOp::Neg => Value::Untyped(Lit::Neg(Box::new(lit))),
            Value::Untyped(lit) => {
                let v = self.typed(&lit, default_type(&lit), at);
                self.unary(op, v, at)
            }
            Value::Known(s) => match typing::unary(op, s.ty) {
                Ok(ty) => Value::Known(Scalar::new(ty, ops::unary(op, s.ty, s.bits))),
                Err(e) => self.type_error(e, at, at),
            },
            Value::Node(id, ty) => match typing::unary(op, ty) {
                Ok(ty) => Value::Node(self.push(Node::Unary(op, id), ty), ty),
                Err(e) => self.type_error(e, at, at),
            },
        }
    }

    pub(super) fn cast(&mut self, v: Value, ty: &Type, at: &Expr) -> Value {
        let Some(to) = scalar(ty) else {
            if is_index_type(strip_type(ty)) {
                return match int_value(&v) {
                    Some(i) => Value::Untyped(Lit::Int(i as i128)),
                    None if v == Value::Poison => Value::Poison,
                    None => self.unsupported(at, "casts to index types are allowed only on constant integers"),
                };
            }
            return self.unsupported(ty, "unsupported cast target: a stencil computes with f32, f64, i32 and u32");
        };
        match v {
            Value::Poison => Value::Poison,
            Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
            Value::Untyped(lit) => {
                // rustc types a literal (or a negated one) under `as` as the target when it can
                // be one (`3000000000 as u32`, `1.1 as f32`); anything else keeps its own type.
                let ty_of_lit = match &lit {
                    Lit::Int(_) | Lit::Float(_) if is_float_lit(&lit) == to.is_float() => to,
                    Lit::Neg(inner) if matches!(**inner, Lit::Int(_) | Lit::Float(_)) && is_float_lit(&lit) == to.is_float() => to,
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

enum Kind {
    Arith(BinaryOp, LitOp),
    Rem,
    Logic(BinaryOp),
    Compare(CompareOp),
}

enum Op {
    Binary(BinaryOp),
    Compare(CompareOp),
}

pub(super) fn compound(op: &BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::AddAssign(t) => BinOp::Add(syn::Token![+](t.span())),
        BinOp::SubAssign(t) => BinOp::Sub(syn::Token![-](t.span())),
        BinOp::MulAssign(t) => BinOp::Mul(syn::Token![*](t.span())),
        BinOp::DivAssign(t) => BinOp::Div(syn::Token![/](t.span())),
        BinOp::RemAssign(t) => BinOp::Rem(syn::Token![%](t.span())),
        _ => return None,
    })
}
