//! `for` loops over constant ranges, unrolled: the range's indices are computed at compile time
//! and the body is lowered once per index. Apart because it alone bounds the size of the body.

use std::collections::HashMap;

use syn::{Expr, ExprForLoop, Pat, RangeLimits};

use super::literal::Lit;
use super::scope::Binding;
use super::{Lower, Value};
use crate::args::strip_group;

/// The `Lit::Var` site of loop indices (no `let` statement lives at address 0).
pub(super) const LOOP_INDEX: usize = 0;

/// Loops are unrolled; past this many iterations in one body the kernel would not fit anyway.
const MAX_UNROLLED_ITERATIONS: usize = 100_000;

impl Lower<'_> {
    pub(super) fn for_loop(&mut self, f: &ExprForLoop) -> Value {
        if f.label.is_some() {
            return self.unsupported(f, "labeled loops are not supported");
        }
        let name = match &*f.pat {
            Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => Some(id.ident.to_string()),
            Pat::Wild(_) => None,
            other => return self.unsupported(other, "a `for` loop binds one index: `for k in -3..=3`"),
        };
        let Some(indices) = self.range(&f.expr) else { return Value::Poison };
        self.unrolled += indices.len();
        if self.unrolled > MAX_UNROLLED_ITERATIONS {
            return self.unsupported(
                &f.expr,
                &format!("loops unroll to more than {MAX_UNROLLED_ITERATIONS} iterations in total"),
            );
        }
        for k in indices {
            self.scopes.push(HashMap::new());
            if let Some(name) = &name {
                let index = Lit::Var(LOOP_INDEX, Box::new(Lit::Int(k as i128)));
                self.bind(name.clone(), Binding::Value(Value::Untyped(index)));
            }
            self.block(&f.body);
            self.scopes.pop();
        }
        Value::Unit
    }

    /// The indices of a constant range: `a..b`, `a..=b`, `(a..b).rev()`, `(a..b).step_by(n)`.
    pub(super) fn range(&mut self, expr: &Expr) -> Option<Vec<i64>> {
        const MESSAGE: &str = "loop bounds must be constants (the loop is unrolled): `for k in -3..=3`";
        match strip_group(expr) {
            Expr::Range(r) => {
                let (Some(start), Some(end)) = (&r.start, &r.end) else {
                    self.cx.error(expr, "a `for` range needs both bounds");
                    return None;
                };
                let (s, e) = (self.expr(start), self.expr(end));
                let s = self.const_int_or(&s, start, MESSAGE)?;
                let e = self.const_int_or(&e, end, MESSAGE)?;
                let end = if matches!(r.limits, RangeLimits::Closed(_)) { e as i128 + 1 } else { e as i128 };
                let count = end - s as i128;
                if count > MAX_UNROLLED_ITERATIONS as i128 {
                    self.cx.error(
                        expr,
                        format!("the loop would unroll to {count} iterations, more than {MAX_UNROLLED_ITERATIONS}"),
                    );
                    return None;
                }
                let end = end as i64;
                Some((s..end).collect())
            }
            Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                self.range(&m.receiver).map(|v| v.into_iter().rev().collect())
            }
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let step = self.expr(&m.args[0]);
                let step = self.const_int_or(&step, &m.args[0], "`step_by` needs a constant step")?;
                if step <= 0 {
                    self.cx.error(&m.args[0], "`step_by` needs a positive step");
                    return None;
                }
                self.range(&m.receiver).map(|v| v.into_iter().step_by(step as usize).collect())
            }
            other => {
                self.cx.error(other, MESSAGE);
                None
            }
        }
    }
}
