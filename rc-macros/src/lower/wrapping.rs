//! The integer `wrapping_*` methods: Rust's results where the operators panic. `wrapping_add`,
//! `wrapping_sub` and `wrapping_mul` are the body's `+ - *` (which wrap); `wrapping_neg` also
//! takes u32; `wrapping_div` and `wrapping_rem` take constant divisors, -1 included (where `/ -1`
//! is refused); `wrapping_shl` and `wrapping_shr` take any constant u32 amount, modulo the width.
//! Apart from the other methods because each lowers to other operations than its name says.

use quote::ToTokens;
use syn::Expr;

use rc_core::body::{BinaryOp, Node, UnaryOp};
use rc_core::typing::{self, TypeError};
use rc_core::{ops, Scalar, ScalarType};

use super::literal::default_type;
use super::{type_of, Lower, Value};

/// One `wrapping_*` method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wrapping {
    name: &'static str,
    /// The operator it wraps, as floats write it (`+`).
    operator: &'static str,
    op: BinaryOp,
}

const METHODS: [Wrapping; 8] = [
    Wrapping { name: "wrapping_add", operator: "+", op: BinaryOp::Add },
    Wrapping { name: "wrapping_sub", operator: "-", op: BinaryOp::Sub },
    Wrapping { name: "wrapping_mul", operator: "*", op: BinaryOp::Mul },
    // `0 - x`: negation as a subtraction, which u32 has too.
    Wrapping { name: "wrapping_neg", operator: "-", op: BinaryOp::Sub },
    Wrapping { name: "wrapping_div", operator: "/", op: BinaryOp::Div },
    Wrapping { name: "wrapping_rem", operator: "%", op: BinaryOp::Rem },
    Wrapping { name: "wrapping_shl", operator: "<<", op: BinaryOp::Shl },
    Wrapping { name: "wrapping_shr", operator: ">>", op: BinaryOp::Shr },
];

impl Wrapping {
    pub(super) fn named(name: &str) -> Option<Wrapping> {
        METHODS.into_iter().find(|m| m.name == name)
    }

    fn arity(self) -> usize {
        if self.name == "wrapping_neg" {
            0
        } else {
            1
        }
    }
}

impl Lower<'_> {
    /// `receiver.method(args)` for a `wrapping_*` method.
    pub(super) fn wrapping(
        &mut self,
        method: Wrapping,
        receiver: Value,
        args: Vec<Value>,
        name_tokens: &dyn ToTokens,
        arg_tokens: &[&Expr],
        at: &Expr,
    ) -> Value {
        if args.len() != method.arity() {
            return self.unsupported(
                at,
                &format!("`{}` takes {} argument(s), got {}", method.name, method.arity(), args.len()),
            );
        }
        if receiver == Value::Poison || args.contains(&Value::Poison) {
            return Value::Poison;
        }
        let shift = matches!(method.op, BinaryOp::Shl | BinaryOp::Shr);
        // The type comes from whichever operand has one (a shift's amount is its own); literals
        // follow it.
        let typed_operands = if shift { &args[..0] } else { &args[..] };
        let ty =
            std::iter::once(&receiver).chain(typed_operands).find_map(type_of).unwrap_or_else(|| match &receiver {
                Value::Untyped(l) => default_type(l),
                _ => ScalarType::I32,
            });
        let receiver = match receiver {
            Value::Untyped(lit) => self.typed(&lit, ty, at),
            v => v,
        };
        let Some(receiver_ty) = type_of(&receiver) else {
            return match receiver {
                Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
                _ => Value::Poison,
            };
        };
        if let Err(e) = typing::wrapping(method.name, method.operator, receiver_ty, receiver_ty) {
            return self.type_error(e, name_tokens, at);
        }
        let Some((arg, arg_at)) = args.into_iter().zip(arg_tokens.iter().copied()).next() else {
            // `wrapping_neg`: `0 - x`, wrapping.
            return self.binary_value(method.op, Value::Known(Scalar::new(ty, 0)), receiver, ty, at);
        };
        if shift {
            return self.wrapping_shift(method, receiver, arg, ty, arg_at, at);
        }
        let arg = match arg {
            Value::Untyped(lit) => self.typed(&lit, ty, arg_at),
            Value::Unit => return self.unsupported(arg_at, "this operand has no value (it is `()`)"),
            v => v,
        };
        let Some(arg_ty) = type_of(&arg) else { return Value::Poison };
        if let Err(e) = typing::wrapping(method.name, method.operator, receiver_ty, arg_ty) {
            return self.type_error(e, name_tokens, at);
        }
        if !matches!(method.op, BinaryOp::Div | BinaryOp::Rem) {
            return self.binary_value(method.op, receiver, arg, ty, at);
        }
        let divisor = match &arg {
            Value::Known(s) => s.integer(),
            _ => None,
        };
        match (typing::right_operand(method.op, ty, divisor), method.op) {
            (Ok(()), op) => self.binary_value(op, receiver, arg, ty, at),
            // `x.wrapping_div(-1)` is `-x`, wrapping; `x.wrapping_rem(-1)` is 0.
            (Err(TypeError::Overflow { .. }), BinaryOp::Div) => self.negate(receiver, ty),
            (Err(TypeError::Overflow { .. }), _) => Value::Known(Scalar::new(ty, 0)),
            (Err(e), _) => self.operand_error(e, arg_at),
        }
    }

    /// `x.wrapping_shl(n)`, `x.wrapping_shr(n)`: `n` a constant u32, taken modulo the width.
    fn wrapping_shift(
        &mut self,
        method: Wrapping,
        receiver: Value,
        amount: Value,
        ty: ScalarType,
        amount_at: &Expr,
        at: &Expr,
    ) -> Value {
        let message = TypeError::RuntimeOperand { op: method.op }.to_string();
        let Some(n) = self.const_int_or(&amount, amount_at, &message) else { return Value::Poison };
        let is_u32 = match &amount {
            Value::Known(s) => s.ty == ScalarType::U32,
            _ => n >= 0,
        };
        if !is_u32 {
            // rustc refuses it too: the parameter is a u32.
            self.cx.error_rustc_refuses_too(amount_at, format!("`{}` takes a u32 amount, got {n}", method.name));
            return Value::Poison;
        }
        let masked = (n as u64) & (ty.bits() as u64 - 1);
        self.binary_value(method.op, receiver, Value::Known(Scalar::new(ty, masked)), ty, at)
    }

    /// `-x` on a signed integer, wrapping.
    fn negate(&mut self, x: Value, ty: ScalarType) -> Value {
        match x {
            Value::Known(s) => Value::Known(Scalar::new(ty, ops::unary(UnaryOp::Neg, ty, s.bits))),
            Value::Node(id, _) => Value::Node(self.push(Node::Unary(UnaryOp::Neg, id), ty), ty),
            other => other,
        }
    }
}
