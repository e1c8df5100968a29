//! The standard library's methods that a body writes with other operations, each as Rust's
//! standard library (or the half crate) defines it, so the CPU reference (the user's function,
//! calling the real method) and the kernel compute the same bits: `x.fract()` is
//! `x - x.trunc()`, `x.signum()` is `1.0.copysign(x)` unless `x` is NaN, `x.clamp(lo, hi)` two
//! selects, `a.abs_diff(b)` a select of two wrapping differences, `x.count_zeros()` the ones of
//! `!x`, `x.pow(3)` a product, `a.saturating_add(b)` the wrapped sum or the bound it passed.
//! Known operands fold.

use quote::ToTokens;
use syn::Expr;

use rc_core::body::{BinaryOp, CompareOp, Node, UnaryOp};
use rc_core::typing::{self, Operation, TypeError};
use rc_core::{half_float, ops, Scalar, ScalarType};

use super::literal::{default_type, int_value};
use super::{type_of, Lower, Value};

use ScalarType::{Bool, F32, F64, I32, U32};

/// What one derived method needs besides its receiver.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arguments {
    None,
    /// Operands of the receiver's type (`clamp`'s bounds, `abs_diff`'s other value).
    Same(usize),
    /// A u32 amount or exponent (`rotate_left`, `pow`).
    Amount,
}

fn arguments(name: &str) -> Arguments {
    match name {
        "clamp" => Arguments::Same(2),
        "abs_diff" | "saturating_add" | "saturating_sub" => Arguments::Same(1),
        "rotate_left" | "rotate_right" | "pow" => Arguments::Amount,
        _ => Arguments::None,
    }
}

/// A float constant of type `ty` by its name in the standard library (`INFINITY`, `NAN`) or
/// `ONE` / `NEG_ONE`.
fn float_constant(ty: ScalarType, name: &str) -> Scalar {
    let pick = |one: f64, inf: f64, nan: f64| match name {
        "ONE" => one,
        "NEG_ONE" => -one,
        "INFINITY" => inf,
        "NEG_INFINITY" => -inf,
        _ => nan,
    };
    match (ty, ty.half()) {
        (_, Some(format)) => Scalar::new(ty, u64::from(half_float::constant(format, name).unwrap_or(0))),
        (F32, None) => Scalar::f32(pick(1.0, f64::INFINITY, f64::NAN) as f32),
        _ => Scalar::f64(pick(1.0, f64::INFINITY, f64::NAN)),
    }
}

impl Lower<'_> {
    /// `receiver.name(args)` for a method of [`typing::method`].
    pub(super) fn derived(
        &mut self,
        op: Operation,
        receiver: Value,
        args: Vec<Value>,
        name_tokens: &dyn ToTokens,
        arg_tokens: &[&Expr],
        at: &Expr,
    ) -> Value {
        let Operation::Method(name) = op else { return Value::Poison };
        let kind = arguments(name);
        let arity = match kind {
            Arguments::None => 0,
            Arguments::Same(n) => n,
            Arguments::Amount => 1,
        };
        if args.len() != arity {
            return self.unsupported(at, &format!("`{name}` takes {arity} argument(s), got {}", args.len()));
        }
        if receiver == Value::Poison || args.contains(&Value::Poison) {
            return Value::Poison;
        }
        // The receiver's type, from whichever same-typed operand has one; literals follow it.
        let same = if kind == Arguments::Amount { &[][..] } else { &args[..] };
        let ty = std::iter::once(&receiver).chain(same).find_map(type_of).unwrap_or_else(|| match &receiver {
            Value::Untyped(l) => default_type(l),
            _ => F64,
        });
        if let Err(e) = typing::method_receiver(op, ty) {
            return self.type_error(e, name_tokens, at);
        }
        let x = self.typed_value(receiver, ty, at);
        let mut operands = Vec::with_capacity(2);
        for (i, arg) in args.into_iter().enumerate() {
            let want = if kind == Arguments::Amount { U32 } else { ty };
            let v = self.typed_value(arg, want, at);
            match type_of(&v) {
                Some(got) if got != want => {
                    let tokens: &dyn ToTokens = arg_tokens.get(i).map_or(at as &dyn ToTokens, |t| *t as &dyn ToTokens);
                    return match kind {
                        Arguments::Amount => {
                            // Rust's signature says so too: rustc refuses the function as well.
                            let message = format!("`{name}` takes a u32, got {got}: write `n as u32`");
                            self.cx.error_rustc_refuses_too(tokens, message);
                            Value::Poison
                        }
                        _ => self.type_error(TypeError::Mismatch { op: name, left: ty, right: got }, tokens, at),
                    };
                }
                Some(_) => operands.push(v),
                None => return Value::Poison,
            }
        }
        let at: &dyn ToTokens = at;
        match name {
            "fract" => {
                let whole = self.un(UnaryOp::Trunc, x.clone(), ty, at);
                self.bin(BinaryOp::Sub, x, whole, ty, at)
            }
            "recip" => {
                let one = Value::Known(float_constant(ty, "ONE"));
                self.bin(BinaryOp::Div, one, x, ty, at)
            }
            // Rust multiplies by one constant, which is the method's value at 1.
            "to_degrees" | "to_radians" => {
                let c = match (ty, name) {
                    (F32, "to_degrees") => Scalar::f32(1.0f32.to_degrees()),
                    (F32, _) => Scalar::f32(1.0f32.to_radians()),
                    (_, "to_degrees") => Scalar::f64(1.0f64.to_degrees()),
                    _ => Scalar::f64(1.0f64.to_radians()),
                };
                self.bin(BinaryOp::Mul, x, Value::Known(c), ty, at)
            }
            "signum" if ty == I32 => {
                let zero = Value::Known(Scalar::i32(0));
                let positive = self.cmp(CompareOp::Gt, x.clone(), zero.clone(), ty, at);
                let negative = self.cmp(CompareOp::Lt, x, zero.clone(), ty, at);
                let minus = self.sel(negative, Value::Known(Scalar::i32(-1)), zero, ty, at);
                self.sel(positive, Value::Known(Scalar::i32(1)), minus, ty, at)
            }
            // Rust: NaN for NaN (the half crate: the NaN itself), else 1 with x's sign.
            "signum" => {
                let nan = self.cmp(CompareOp::Ne, x.clone(), x.clone(), ty, at);
                let unit = self.bin(BinaryOp::CopySign, Value::Known(float_constant(ty, "ONE")), x.clone(), ty, at);
                let on_nan = if ty.half().is_some() { x } else { Value::Known(float_constant(ty, "NAN")) };
                self.sel(nan, on_nan, unit, ty, at)
            }
            "clamp" => self.clamp(x, operands[0].clone(), operands[1].clone(), ty, arg_tokens, at),
            "abs_diff" => {
                let (a, b) = (self.conv(x.clone(), ty, U32, at), self.conv(operands[0].clone(), ty, U32, at));
                let below = self.cmp(CompareOp::Lt, x, operands[0].clone(), ty, at);
                let up = self.bin(BinaryOp::Sub, b.clone(), a.clone(), U32, at);
                let down = self.bin(BinaryOp::Sub, a, b, U32, at);
                self.sel(below, up, down, U32, at)
            }
            "is_nan" => self.cmp(CompareOp::Ne, x.clone(), x, ty, at),
            "is_infinite" => {
                let up = self.cmp(CompareOp::Eq, x.clone(), Value::Known(float_constant(ty, "INFINITY")), ty, at);
                let down = self.cmp(CompareOp::Eq, x, Value::Known(float_constant(ty, "NEG_INFINITY")), ty, at);
                self.bin(BinaryOp::Or, up, down, Bool, at)
            }
            "is_finite" => {
                let above =
                    self.cmp(CompareOp::Gt, x.clone(), Value::Known(float_constant(ty, "NEG_INFINITY")), ty, at);
                let below = self.cmp(CompareOp::Lt, x, Value::Known(float_constant(ty, "INFINITY")), ty, at);
                self.bin(BinaryOp::And, above, below, Bool, at)
            }
            // The sign bit, NaN's included: 1 with x's sign is never zero.
            "is_sign_positive" | "is_sign_negative" => {
                let unit = self.bin(BinaryOp::CopySign, Value::Known(float_constant(ty, "ONE")), x, ty, at);
                let compare = if name == "is_sign_negative" { CompareOp::Lt } else { CompareOp::Gt };
                let zero = Value::Known(Scalar::new(ty, 0));
                self.cmp(compare, unit, zero, ty, at)
            }
            "count_ones" | "count_zeros" | "leading_zeros" | "trailing_zeros" | "leading_ones" | "trailing_ones" => {
                let mut bits = self.conv(x, ty, U32, at);
                if name.ends_with("_ones") && name != "count_ones" || name == "count_zeros" {
                    bits = self.un(UnaryOp::Not, bits, U32, at);
                }
                let op = match name {
                    "count_ones" | "count_zeros" => UnaryOp::CountOnes,
                    "leading_zeros" | "leading_ones" => UnaryOp::LeadingZeros,
                    _ => UnaryOp::TrailingZeros,
                };
                self.un(op, bits, U32, at)
            }
            "reverse_bits" => {
                let bits = self.conv(x, ty, U32, at);
                let reversed = self.un(UnaryOp::ReverseBits, bits, U32, at);
                self.conv(reversed, U32, ty, at)
            }
            "rotate_left" | "rotate_right" => {
                let op = if name == "rotate_left" { BinaryOp::RotateLeft } else { BinaryOp::RotateRight };
                let amount = self.conv(operands[0].clone(), U32, ty, at);
                self.bin(op, x, amount, ty, at)
            }
            "saturating_add" | "saturating_sub" => self.saturating(name, x, operands[0].clone(), ty, at),
            // i32::MIN has no negation or absolute value in i32: it saturates to MAX.
            "saturating_neg" | "saturating_abs" => {
                let op = if name == "saturating_neg" { UnaryOp::Neg } else { UnaryOp::Abs };
                let (min, max) = (Value::Known(Scalar::i32(i32::MIN)), Value::Known(Scalar::i32(i32::MAX)));
                let at_min = self.cmp(CompareOp::Eq, x.clone(), min, ty, at);
                let wrapped = self.un(op, x, ty, at);
                self.sel(at_min, max, wrapped, ty, at)
            }
            _ => self.pow(x, &operands[0], ty, arg_tokens, at),
        }
    }

    /// `a.saturating_add(b)` and `a.saturating_sub(b)`: the wrapping result, or the bound it
    /// passed. On u32 a sum that wrapped is below `a`, a difference that would wrap has `a < b`;
    /// on i32 the wrapped result's sign differs from both addends' (from `a`'s, with `a` and `b`
    /// of different signs, for a difference), and the bound is `a`'s side.
    fn saturating(&mut self, name: &str, a: Value, b: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        let op = if name == "saturating_add" { BinaryOp::Add } else { BinaryOp::Sub };
        let wrapped = self.bin(op, a.clone(), b.clone(), ty, at);
        if ty == U32 {
            return match op {
                BinaryOp::Add => {
                    let wrapped_around = self.cmp(CompareOp::Lt, wrapped.clone(), a, ty, at);
                    self.sel(wrapped_around, Value::Known(Scalar::u32(u32::MAX)), wrapped, ty, at)
                }
                _ => {
                    let below = self.cmp(CompareOp::Lt, a, b, ty, at);
                    self.sel(below, Value::Known(Scalar::u32(0)), wrapped, ty, at)
                }
            };
        }
        let from_a = self.bin(BinaryOp::BitXor, a.clone(), wrapped.clone(), ty, at);
        let other = match op {
            BinaryOp::Add => self.bin(BinaryOp::BitXor, b, wrapped.clone(), ty, at),
            _ => self.bin(BinaryOp::BitXor, a.clone(), b, ty, at),
        };
        let both = self.bin(BinaryOp::BitAnd, from_a, other, ty, at);
        let zero = Value::Known(Scalar::i32(0));
        let overflowed = self.cmp(CompareOp::Lt, both, zero.clone(), ty, at);
        let negative = self.cmp(CompareOp::Lt, a, zero, ty, at);
        let (min, max) = (Value::Known(Scalar::i32(i32::MIN)), Value::Known(Scalar::i32(i32::MAX)));
        let bound = self.sel(negative, min, max, ty, at);
        self.sel(overflowed, bound, wrapped, ty, at)
    }

    /// `x.clamp(lo, hi)` as Rust's `f32::clamp` (and `Ord::clamp`, equal where Rust does not
    /// panic): below `lo` gives `lo`, then above `hi` gives `hi`. Known bounds that Rust panics
    /// on are refused; bounds computed at run time are the caller's to keep in order.
    fn clamp(
        &mut self,
        x: Value,
        lo: Value,
        hi: Value,
        ty: ScalarType,
        arg_tokens: &[&Expr],
        at: &dyn ToTokens,
    ) -> Value {
        if let (Value::Known(l), Value::Known(h)) = (&lo, &hi) {
            let ordered = ops::compare(CompareOp::Le, ty, l.bits, h.bits) != 0;
            if !ordered {
                let tokens: &dyn ToTokens = arg_tokens.first().map_or(at, |t| *t as &dyn ToTokens);
                return self.unsupported(
                    tokens,
                    &format!("`clamp` needs min <= max, neither NaN: Rust panics on min = {l}, max = {h}; swap or fix the bounds"),
                );
            }
        }
        let below = self.cmp(CompareOp::Lt, x.clone(), lo.clone(), ty, at);
        let raised = self.sel(below, lo, x, ty, at);
        let above = self.cmp(CompareOp::Gt, raised.clone(), hi.clone(), ty, at);
        self.sel(above, hi, raised, ty, at)
    }

    /// `x.pow(n)` on integers by a constant `n`: a product of `n` factors, wrapping as the body's
    /// `*` does (in any order: wrapping multiplication is associative), by squaring.
    fn pow(&mut self, x: Value, n: &Value, ty: ScalarType, arg_tokens: &[&Expr], at: &dyn ToTokens) -> Value {
        let Some(mut n) = int_value(n) else {
            let tokens: &dyn ToTokens = arg_tokens.first().map_or(at, |t| *t as &dyn ToTokens);
            return self.unsupported(
                tokens,
                "integer `pow` needs a constant exponent (`x.pow(3)`): rc multiplies it out; for an exponent computed \
                 at run time, convert to a float and multiply in a loop over a constant bound",
            );
        };
        let one = Value::Known(Scalar::new(ty, 1));
        let (mut result, mut square) = (one, x);
        while n > 0 {
            if n & 1 == 1 {
                result = self.bin(BinaryOp::Mul, result, square.clone(), ty, at);
            }
            n >>= 1;
            if n > 0 {
                square = self.bin(BinaryOp::Mul, square.clone(), square, ty, at);
            }
        }
        result
    }

    /// `v` with a type: an untyped literal takes `ty`.
    fn typed_value(&mut self, v: Value, ty: ScalarType, at: &Expr) -> Value {
        match v {
            Value::Untyped(lit) => self.typed(&lit, ty, at),
            v => v,
        }
    }

    fn un(&mut self, op: UnaryOp, a: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        match a {
            Value::Known(s) => Value::Known(Scalar::new(ty, ops::unary(op, s.ty, s.bits))),
            a => match self.node_for(a, Some(ty), at) {
                Some(id) => Value::Node(self.push(Node::Unary(op, id), ty), ty),
                None => Value::Poison,
            },
        }
    }

    fn bin(&mut self, op: BinaryOp, a: Value, b: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        self.binary_value(op, a, b, ty, at)
    }

    /// `a op b` on operands of type `ty`: a bool.
    fn cmp(&mut self, op: CompareOp, a: Value, b: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        if let (Value::Known(x), Value::Known(y)) = (&a, &b) {
            return Value::Known(Scalar::new(Bool, ops::compare(op, ty, x.bits, y.bits)));
        }
        let (Some(x), Some(y)) = (self.node_for(a, Some(ty), at), self.node_for(b, Some(ty), at)) else {
            return Value::Poison;
        };
        Value::Node(self.push(Node::Compare(op, x, y), Bool), Bool)
    }

    fn sel(&mut self, cond: Value, then: Value, otherwise: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        if let Value::Known(c) = cond {
            return if c.bits != 0 { then } else { otherwise };
        }
        let ids = (
            self.node_for(cond, Some(Bool), at),
            self.node_for(then, Some(ty), at),
            self.node_for(otherwise, Some(ty), at),
        );
        let (Some(cond), Some(then), Some(otherwise)) = ids else { return Value::Poison };
        Value::Node(self.push(Node::Select { cond, then, otherwise }, ty), ty)
    }

    /// `v as to` from `from` (the same bits between i32 and u32).
    fn conv(&mut self, v: Value, from: ScalarType, to: ScalarType, at: &dyn ToTokens) -> Value {
        if from == to {
            return v;
        }
        match v {
            Value::Known(s) => Value::Known(Scalar::new(to, ops::cast(from, to, s.bits))),
            v => match self.node_for(v, Some(from), at) {
                Some(id) => Value::Node(self.push(Node::Cast(to, id), to), to),
                None => Value::Poison,
            },
        }
    }
}
