//! Method calls (`x.abs()`, `a.mul_add(b, c)`, also spelled `f32::max(a, b)`; those written
//! with other operations are in `math.rs`) and associated constants (`f32::MAX`, `f64::consts::PI`): the standard library a body may use, in one place so
//! that supporting another method is one edit.

use quote::ToTokens;
use syn::Expr;

use rc_core::body::{BinaryOp, Node, UnaryOp};
use rc_core::{half_float, ops, typing, Scalar, ScalarType};

use super::literal::default_type;
use super::scope::Binding;
use super::wrapping::Wrapping;
use super::{type_of, Lower, Value};
use crate::args::strip_group;
use crate::signature::scalar_path;

const SUPPORTED_METHODS: &str =
    "abs, sqrt, min, max, mul_add, exp (correctly rounded, f32), floor, ceil, trunc, round, round_ties_even, fract, \
    recip, copysign, signum, clamp, to_degrees, to_radians, is_nan, is_finite, is_infinite, is_sign_positive, \
    is_sign_negative; on integers abs_diff, count_ones, count_zeros, leading_zeros, trailing_zeros, leading_ones, \
    trailing_ones, reverse_bits, rotate_left, rotate_right, pow (by a constant), saturating_add, saturating_sub, \
    saturating_neg, saturating_abs, wrapping_add, wrapping_sub, \
    wrapping_mul, wrapping_neg, wrapping_div, wrapping_rem, wrapping_shl, wrapping_shr; and on f16 and bf16 to_f32 \
    (and `f16::from_f32(x)`)";

/// The float functions whose results are not exact, which rc does not compute yet: a kernel must
/// give the CPU reference's bits, and the standard library's are not correctly rounded (nor the
/// same on every platform).
const INEXACT: &[&str] = &[
    "exp2", "exp_m1", "ln", "log", "log2", "log10", "ln_1p", "powf", "powi", "cbrt", "hypot", "sin", "cos", "tan",
    "sin_cos", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh",
];

/// What to write instead of `name`, one of [`INEXACT`].
fn inexact_instead(name: &str) -> String {
    let closest = match name {
        "powi" => "multiply it out (`x * x * x` for `x.powi(3)`; `1.0 / (x * x)` for `x.powi(-2)`)",
        "powf" => "multiply it out for a constant integer exponent, or use `x.sqrt()` for 0.5",
        "hypot" => "write `(x * x + y * y).sqrt()` (which can overflow where hypot does not)",
        "cbrt" => "take a few Newton steps from a guess (`y = y - (y * y * y - x) / (3.0 * y * y)`)",
        _ => "write a polynomial or rational approximation with `mul_add` (the same bits on CPU and GPU)",
    };
    format!(
        "`{name}` is not supported yet: a kernel must give the CPU reference's bits, and the standard library's \
         `{name}` is not correctly rounded (its bits differ between platforms); instead, {closest}"
    )
}

impl Lower<'_> {
    pub(super) fn call(&mut self, call: &syn::ExprCall, at: &Expr) -> Value {
        // `f16::from_f32(x)`, also `half::f16::from_f32_const(x)`.
        if let Expr::Path(p) = strip_group(&call.func) {
            let mut type_path = p.path.clone();
            if let Some(method) = type_path.segments.pop().map(|s| s.into_value().ident) {
                type_path.segments.pop_punct();
                if let Some(to) = scalar_path(&type_path).filter(|t| t.half().is_some()) {
                    if method.to_string().starts_with("from_") {
                        return self.half_from_f32(to, &method, call, at);
                    }
                }
            }
        }
        // `f32::max(a, b)` is `a.max(b)`; so is `std::cmp::max(a, b)` (on integers, where the two
        // agree: equal integers are the same bits).
        if let Expr::Path(p) = strip_group(&call.func) {
            let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let path: Vec<&str> = segs.iter().map(String::as_str).skip_while(|s| *s == "std" || *s == "core").collect();
            if let ["cmp", method @ ("min" | "max")] = path.as_slice() {
                let mut args: Vec<Value> = call.args.iter().map(|a| self.expr(a)).collect();
                if args.len() != 2 {
                    return self.unsupported(at, &format!("`cmp::{method}` takes 2 arguments, got {}", args.len()));
                }
                let receiver = args.remove(0);
                let method_tokens = &p.path.segments.last().expect("two segments").ident;
                let arg_tokens: Vec<&Expr> = call.args.iter().skip(1).collect();
                return self.method(method, receiver, args, method_tokens, &arg_tokens, at);
            }
            if let [ty, method] = segs.as_slice() {
                if let Some(t) = ScalarType::from_rust_name(ty) {
                    let mut args: Vec<Value> = call.args.iter().map(|a| self.expr(a)).collect();
                    if args.is_empty() {
                        return self.unsupported(at, &format!("`{ty}::{method}` needs arguments"));
                    }
                    let receiver = match args.remove(0) {
                        Value::Untyped(lit) => self.typed(&lit, t, at),
                        v => v,
                    };
                    let method_tokens = &p.path.segments[1].ident;
                    let arg_tokens: Vec<&Expr> = call.args.iter().skip(1).collect();
                    return self.method(method, receiver, args, method_tokens, &arg_tokens, at);
                }
            }
        }
        if let Expr::Path(p) = strip_group(&call.func) {
            if let Some(ident) = p.path.get_ident() {
                let name = ident.to_string();
                match self.lookup(&name).cloned() {
                    Some(Binding::Helper(helper)) => {
                        let args: Vec<Expr> = call.args.iter().cloned().collect();
                        return self.inline(&helper, &args, at);
                    }
                    Some(Binding::Value(Value::Poison)) => return Value::Poison,
                    Some(_) => return self.unsupported(&call.func, &format!("`{name}` is not a function")),
                    None => {
                        return self.unsupported(
                            &call.func,
                            &format!(
                                "`{name}` is not declared inside the stencil body: rc inlines the helpers a body declares, \
                                 so declare it there (`fn {name}(x: f32) -> f32 {{ .. }}` or `let {name} = |x: f32| ..;`)"
                            ),
                        )
                    }
                }
            }
        }
        match strip_group(&call.func) {
            Expr::Closure(_) => self.unsupported(&call.func, "bind a closure to a name and call it by that name: `let f = |x: f32| x * x; f(w[0])`"),
            _ => self.unsupported(
                &call.func,
                &format!("only helpers declared in the body can be called, by name; the methods a body may call are {SUPPORTED_METHODS}"),
            ),
        }
    }

    /// `f16::from_f32(x)` and `from_f32_const(x)` (the same value): `x` is an f32, rounded once.
    fn half_from_f32(&mut self, to: ScalarType, method: &syn::Ident, call: &syn::ExprCall, at: &Expr) -> Value {
        if !matches!(method.to_string().as_str(), "from_f32" | "from_f32_const") {
            return self.unsupported(
                method,
                &format!("`{to}::{method}` is not supported: write `{to}::from_f32(x)`, from an f32 (`x as f32` converts other types first)"),
            );
        }
        let [arg] = call.args.iter().collect::<Vec<_>>()[..] else {
            return self.unsupported(at, &format!("`{to}::{method}` takes 1 argument, got {}", call.args.len()));
        };
        let value = match self.expr(arg) {
            Value::Untyped(lit) => self.typed(&lit, ScalarType::F32, arg),
            v => v,
        };
        self.convert_by_method(value, to, method, at)
    }

    /// `value` converted to `to` by a method (`to_f32`, `from_f32`): a constant folds.
    fn convert_by_method(&mut self, value: Value, to: ScalarType, name_tokens: &dyn ToTokens, at: &Expr) -> Value {
        match value {
            Value::Poison => Value::Poison,
            Value::Known(s) => match typing::cast(s.ty, to) {
                Ok(to) => Value::Known(Scalar::new(to, ops::cast(s.ty, to, s.bits))),
                Err(e) => self.type_error(e, name_tokens, at),
            },
            Value::Node(id, from) => match typing::cast(from, to) {
                Ok(to) => Value::Node(self.push(Node::Cast(to, id), to), to),
                Err(e) => self.type_error(e, name_tokens, at),
            },
            _ => self.unsupported(at, "this operand has no value of a type (it is `()` or an untyped literal)"),
        }
    }

    /// `receiver.name(args)`; `arg_tokens` are the arguments' tokens, for errors on one of them.
    pub(super) fn method(
        &mut self,
        name: &str,
        receiver: Value,
        args: Vec<Value>,
        name_tokens: &dyn ToTokens,
        arg_tokens: &[&Expr],
        at: &Expr,
    ) -> Value {
        if let Some(method) = Wrapping::named(name) {
            return self.wrapping(method, receiver, args, name_tokens, arg_tokens, at);
        }
        if name == "to_f32" {
            return match (receiver, args.len()) {
                (Value::Poison, _) => Value::Poison,
                (receiver, 0) if type_of(&receiver).is_some_and(|t| t.half().is_some()) => {
                    self.convert_by_method(receiver, ScalarType::F32, name_tokens, at)
                }
                (receiver, 0) => {
                    let got = type_of(&receiver).map_or("a literal".to_string(), |t| t.to_string());
                    self.unsupported(
                        name_tokens,
                        &format!("`to_f32` is defined on f16 and bf16, not {got}: write `x as f32`"),
                    )
                }
                (_, n) => self.unsupported(at, &format!("`to_f32` takes 0 argument(s), got {n}")),
            };
        }
        if let Some(op) = typing::method(name) {
            return self.derived(op, receiver, args, name_tokens, arg_tokens, at);
        }
        if INEXACT.contains(&name) {
            return self.unsupported(name_tokens, &inexact_instead(name));
        }
        if name == "to_f64" {
            return self.unsupported(
                name_tokens,
                "`to_f64` is not supported: widen through f32, `x.to_f32() as f64` (the same value: f32 holds every \
                 f16 and bf16 exactly)",
            );
        }
        let unary = match name {
            "abs" => Some(UnaryOp::Abs),
            "sqrt" => Some(UnaryOp::Sqrt),
            "floor" => Some(UnaryOp::Floor),
            "ceil" => Some(UnaryOp::Ceil),
            "trunc" => Some(UnaryOp::Trunc),
            "round" => Some(UnaryOp::Round),
            "round_ties_even" => Some(UnaryOp::RoundTiesEven),
            "exp" => Some(UnaryOp::Exp),
            _ => None,
        };
        let binary = match name {
            "min" => Some(BinaryOp::Min),
            "max" => Some(BinaryOp::Max),
            "copysign" => Some(BinaryOp::CopySign),
            _ => None,
        };
        let arity = match (unary, binary, name) {
            (Some(_), ..) => 0,
            (_, Some(_), _) => 1,
            (.., "mul_add") => 2,
            _ => {
                return self.unsupported(
                    name_tokens,
                    &format!("unsupported method `{name}`: a stencil body may call {SUPPORTED_METHODS}"),
                )
            }
        };
        if args.len() != arity {
            return self.unsupported(at, &format!("`{name}` takes {arity} argument(s), got {}", args.len()));
        }
        if receiver == Value::Poison || args.contains(&Value::Poison) {
            return Value::Poison;
        }
        // The type comes from whichever operand has one; literals follow it.
        let ty = std::iter::once(&receiver).chain(&args).find_map(type_of).unwrap_or_else(|| match &receiver {
            Value::Untyped(l) => default_type(l),
            _ => ScalarType::F64,
        });
        let (mut operands, mut types) = (Vec::with_capacity(3), Vec::with_capacity(3));
        for v in std::iter::once(receiver).chain(args) {
            let v = match v {
                Value::Untyped(lit) => self.typed(&lit, ty, at),
                Value::Unit => return self.unsupported(at, "this operand has no value (it is `()`)"),
                v => v,
            };
            let Some(t) = type_of(&v) else { return Value::Poison };
            operands.push(v);
            types.push(t);
        }
        let rule = match (unary, binary, types.as_slice()) {
            (Some(op), _, &[a]) => typing::unary(op, a),
            (_, Some(op), &[a, b]) => typing::binary(op, a, b),
            (.., &[a, b, c]) => typing::mul_add(a, b, c),
            // The arity was checked above.
            _ => return Value::Poison,
        };
        if let Err(e) = rule {
            return self.type_error(e, name_tokens, at);
        }
        // Fold when everything is known.
        if operands.iter().all(|v| matches!(v, Value::Known(_))) {
            let bits: Vec<u64> =
                operands.iter().filter_map(|v| if let Value::Known(s) = v { Some(s.bits) } else { None }).collect();
            let out = match (unary, binary) {
                (Some(op), _) => ops::unary(op, ty, bits[0]),
                (_, Some(op)) => ops::binary(op, ty, bits[0], bits[1]),
                _ => ops::mul_add(ty, bits[0], bits[1], bits[2]),
            };
            return Value::Known(Scalar::new(ty, out));
        }
        let mut ids = Vec::with_capacity(3);
        for v in operands {
            match self.node_for(v, Some(ty), at) {
                Some(id) => ids.push(id),
                None => return Value::Poison,
            }
        }
        let node = match (unary, binary) {
            (Some(op), _) => Node::Unary(op, ids[0]),
            (_, Some(op)) => Node::Binary(op, ids[0], ids[1]),
            _ => Node::MulAdd(ids[0], ids[1], ids[2]),
        };
        Value::Node(self.push(node, ty), ty)
    }
}

/// `f32::MAX`, `f64::consts::PI`, `std::f32::consts::E`, `i32::MIN`, ...
pub(super) fn associated_const(path: &syn::Path) -> Option<Scalar> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).skip_while(|s| *s == "std" || *s == "core").collect();
    macro_rules! float_consts {
        ($t:ident, $make:expr, $name:expr, $consts:expr) => {{
            use std::$t::consts;
            let make = $make;
            match ($consts, $name) {
                (false, "MAX") => Some(make($t::MAX)),
                (false, "MIN") => Some(make($t::MIN)),
                (false, "MIN_POSITIVE") => Some(make($t::MIN_POSITIVE)),
                (false, "EPSILON") => Some(make($t::EPSILON)),
                (false, "INFINITY") => Some(make($t::INFINITY)),
                (false, "NEG_INFINITY") => Some(make($t::NEG_INFINITY)),
                (false, "NAN") => Some(make($t::NAN)),
                (true, "PI") => Some(make(consts::PI)),
                (true, "TAU") => Some(make(consts::TAU)),
                (true, "E") => Some(make(consts::E)),
                (true, "SQRT_2") => Some(make(consts::SQRT_2)),
                (true, "FRAC_1_SQRT_2") => Some(make(consts::FRAC_1_SQRT_2)),
                (true, "LN_2") => Some(make(consts::LN_2)),
                (true, "LN_10") => Some(make(consts::LN_10)),
                (true, "FRAC_PI_2") => Some(make(consts::FRAC_PI_2)),
                (true, "FRAC_PI_4") => Some(make(consts::FRAC_PI_4)),
                _ => None,
            }
        }};
    }
    let half = |ty: &str, name: &str| {
        let ty = ScalarType::from_rust_name(ty)?;
        half_float::constant(ty.half()?, name).map(|bits| Scalar::new(ty, bits as u64))
    };
    match segs.as_slice() {
        [ty @ ("f16" | "bf16"), name] | ["half", ty @ ("f16" | "bf16"), name] => half(ty, name),
        ["f32", name] => float_consts!(f32, Scalar::f32, *name, false),
        ["f64", name] => float_consts!(f64, Scalar::f64, *name, false),
        ["f32", "consts", name] => float_consts!(f32, Scalar::f32, *name, true),
        ["f64", "consts", name] => float_consts!(f64, Scalar::f64, *name, true),
        ["i32", "MAX"] => Some(Scalar::i32(i32::MAX)),
        ["i32", "MIN"] => Some(Scalar::i32(i32::MIN)),
        ["u32", "MAX"] => Some(Scalar::u32(u32::MAX)),
        ["u32", "MIN"] => Some(Scalar::u32(u32::MIN)),
        _ => None,
    }
}
