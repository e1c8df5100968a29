//! Expressions: the dispatch over syn's `Expr`, names and array indexing, and the
//! compile-time integers that taps, indices and loop bounds need. Each construct it meets with its
//! own rules (operators, methods, `if`, `for`, literals) lowers in the file named for it.

use quote::ToTokens;
use syn::{Expr, Lit as SynLit, UnOp};

use rc_core::body::UnaryOp;
use rc_core::ScalarType;

use super::literal::{int_value, Lit};
use super::method::associated_const;
use super::operator::compound;
use super::scope::Binding;
use super::{Lower, Value};
use crate::args::strip_group;

impl Lower<'_> {
    pub(super) fn expr(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Path(p) => self.path(p),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Index(ix) => self.index(&ix.expr, &ix.index),
            Expr::Binary(b) => {
                if compound(&b.op).is_some() {
                    self.cx.error(expr, "compound assignment is a statement, not a value");
                    return Value::Poison;
                }
                let (l, r) = (self.expr(&b.left), self.expr(&b.right));
                self.binary(&b.op, l, r, expr, [&b.left, &b.right])
            }
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    // `-2147483648i32`: the literal is negated before it is narrowed, as rustc does.
                    if let Expr::Lit(syn::ExprLit { lit: SynLit::Int(i), .. }) = strip_group(&u.expr) {
                        if let (Some(ty), Ok(v)) = (ScalarType::from_rust_name(i.suffix()), i.base10_parse::<i128>()) {
                            if ty.is_integer() {
                                return self.materialize(&Lit::Int(-v), ty, expr).map_or(Value::Poison, Value::Known);
                            }
                        }
                    }
                    let v = self.expr(&u.expr);
                    self.unary(UnaryOp::Neg, v, &u.op, expr)
                }
                UnOp::Not(_) => {
                    let v = self.expr(&u.expr);
                    self.unary(UnaryOp::Not, v, &u.op, expr)
                }
                _ => match self.expr(&u.expr) {
                    Value::Poison => Value::Poison,
                    _ => self.unsupported(expr, "dereferencing is not supported: a stencil body works on values"),
                },
            },
            Expr::Cast(c) => {
                let v = self.expr(&c.expr);
                self.cast(v, &c.ty, expr)
            }
            Expr::MethodCall(m) if m.method == "len" && m.args.is_empty() => self.len(&m.receiver, expr),
            Expr::MethodCall(m) => {
                let receiver = self.expr(&m.receiver);
                let args: Vec<Value> = m.args.iter().map(|a| self.expr(a)).collect();
                let arg_tokens: Vec<&Expr> = m.args.iter().collect();
                self.method(&m.method.to_string(), receiver, args, &m.method, &arg_tokens, expr)
            }
            Expr::Call(call) => self.call(call, expr),
            Expr::If(e) => self.if_expr(e),
            Expr::Block(b) => {
                if b.label.is_some() {
                    return self.unsupported(expr, "labeled blocks are not supported");
                }
                self.block(&b.block)
            }
            Expr::Unsafe(_) => self.unsupported(expr, "`unsafe` blocks are not supported in a stencil body"),
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::Reference(_) => {
                self.unsupported(expr, "references are not supported: a stencil body works on values")
            }
            Expr::Closure(_) => self.unsupported(
                expr,
                "bind a closure to a name and call it by that name: `let f = |x: f32| x * x; f(w[0])`",
            ),
            Expr::While(_) | Expr::Loop(_) => {
                self.unsupported(expr, "only `for` loops over constant ranges are supported (they are unrolled)")
            }
            Expr::Return(_) => self.unsupported(expr, "`return` is not supported: end the body with its result"),
            Expr::Break(_) | Expr::Continue(_) => {
                self.unsupported(expr, "`break` and `continue` are not supported: loops are unrolled")
            }
            Expr::Macro(_) => self.unsupported(expr, "macros are not supported in a stencil body"),
            Expr::Array(_) | Expr::Repeat(_) => self.unsupported(
                expr,
                "arrays must be bound to a name first: `let c = [..];` or `const C: [f32; N] = [..];`",
            ),
            Expr::Assign(_) => self.unsupported(expr, "assignment is a statement, not a value"),
            Expr::Match(_) => self.unsupported(expr, "`match` is not supported: use `if`/`else`"),
            _ => self.unsupported(expr, "unsupported expression in a stencil body"),
        }
    }

    pub(super) fn path(&mut self, p: &syn::ExprPath) -> Value {
        if let Some(ident) = p.path.get_ident() {
            let name = ident.to_string();
            return match self.lookup(&name) {
                Some(Binding::Value(v)) => v.clone(),
                Some(Binding::Window(_)) => {
                    self.unsupported(p, "the window is read through taps with constant offsets: `w[-1]`, `w[k]`")
                }
                Some(Binding::Array(_)) => {
                    // rustc refuses an array where a number goes too.
                    self.cx.error_rustc_refuses_too(
                        p,
                        format!("`{name}` is an array: index it with a constant, `{name}[k]`"),
                    );
                    Value::Poison
                }
                Some(Binding::Helper(_) | Binding::Item(_)) => {
                    self.unsupported(p, &format!("`{name}` is a function: call it, `{name}(..)`"))
                }
                None => self.unsupported(
                    p,
                    &format!(
                        "unknown name `{name}`: a stencil body sees its window, its parameters, its own `let`s \
                         and `const`s declared inside the body"
                    ),
                ),
            };
        }
        match associated_const(&p.path) {
            Some(s) => Value::Known(s),
            None => self.unsupported(
                p,
                "unsupported path: only `f32::MAX`-style constants and `f32::consts::PI`-style constants are known",
            ),
        }
    }

    pub(super) fn index(&mut self, base: &Expr, index: &Expr) -> Value {
        let Expr::Path(p) = strip_group(base) else {
            return match self.expr(base) {
                Value::Poison => Value::Poison,
                _ => self.unsupported(base, "only the window and named arrays can be indexed"),
            };
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return self.unsupported(base, "only the window and named arrays can be indexed");
        };
        let binding = self.lookup(&name).cloned();
        if let Some(Binding::Window(field)) = binding {
            return self.tap(field, &name, index);
        }
        let iv = self.expr(index);
        match binding {
            Some(Binding::Array(values)) => {
                let Some(i) = self.const_int_or(
                    &iv,
                    index,
                    "an array index must be a constant (a literal, a `const`, or a `for` loop index)",
                ) else {
                    return Value::Poison;
                };
                match usize::try_from(i).ok().and_then(|i| values.get(i)) {
                    Some(v) => v.clone(),
                    None => {
                        // rustc refuses a constant index out of bounds too.
                        let n = values.len();
                        self.cx.error_rustc_refuses_too(
                            index,
                            format!("index {i} is out of bounds: `{name}` has {n} elements, indexed 0..{n}"),
                        );
                        Value::Poison
                    }
                }
            }
            // A parameter whose type was refused: the signature's error says it once.
            Some(Binding::Value(Value::Poison)) => Value::Poison,
            Some(Binding::Value(_) | Binding::Helper(_) | Binding::Item(_) | Binding::Window(_)) => {
                self.unsupported(base, &format!("`{name}` is not an array"))
            }
            None => self.unsupported(base, &format!("unknown name `{name}`")),
        }
    }

    /// `array.len()`: a constant, as `[T; N]` knows its length.
    fn len(&mut self, receiver: &Expr, whole: &Expr) -> Value {
        if let Expr::Path(p) = strip_group(receiver) {
            if let Some(ident) = p.path.get_ident() {
                match self.lookup(&ident.to_string()) {
                    Some(Binding::Array(values)) => return Value::Untyped(Lit::Int(values.len() as i128)),
                    Some(Binding::Value(Value::Poison)) => return Value::Poison,
                    _ => {}
                }
            }
        }
        match self.expr(receiver) {
            Value::Poison => Value::Poison,
            // rustc refuses it too: numbers have no `len`.
            _ => {
                self.cx.error_rustc_refuses_too(
                    whole,
                    "`len()` is the length of an array (a `const`, a `let` or an array parameter)",
                );
                Value::Poison
            }
        }
    }

    pub(super) fn const_int_or(&mut self, v: &Value, at: &dyn ToTokens, message: &str) -> Option<i64> {
        let got = match v {
            Value::Poison => return None,
            Value::Node(_, ty) => format!("{} computed at run time", with_article(*ty)),
            Value::Known(s) => format!("a constant {}", s.ty),
            Value::Untyped(Lit::Select(..)) => "a value chosen at run time".to_string(),
            Value::Untyped(_) => "a float literal".to_string(),
            Value::Unit => "`()`".to_string(),
        };
        match int_value(v) {
            Some(i) => Some(i),
            None => {
                self.cx.error(at, format!("{message}; got {got}"));
                None
            }
        }
    }

    pub(super) fn const_int(&mut self, v: &Value, at: &dyn ToTokens) -> Option<i64> {
        self.const_int_or(v, at, "expected a constant integer")
    }
}

fn with_article(ty: ScalarType) -> String {
    match ty {
        ScalarType::I32 => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}
