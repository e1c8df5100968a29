//! Statements: blocks, `let` and `const` (with their declared types), assignment and compound
//! assignment. Apart from expressions because these change the scope rather than produce a value.

use std::collections::HashMap;

use quote::ToTokens;
use syn::{Block, Expr, Item, Local, Pat, Stmt, Type};

use rc_core::ScalarType;

use super::literal::Lit;
use super::operator::compound;
use super::rust_type::{is_index_type, scalar_or_bool, strip_type};
use super::scope::Binding;
use super::{type_of, Lower, Value};
use crate::args::strip_group;
use crate::signature::scalar;

impl Lower<'_> {
    pub(super) fn block(&mut self, block: &Block) -> Value {
        self.block_then(block, |lower, tail| lower.statement(tail)).unwrap_or(Value::Unit)
    }

    /// Lowers `block`, its tail (the last expression, without `;`) through `tail` in the
    /// block's scope; `None` where it has no tail.
    pub(super) fn block_then<R>(&mut self, block: &Block, tail: impl FnOnce(&mut Self, &Expr) -> R) -> Option<R> {
        self.scopes.push(HashMap::new());
        // A block's `fn` items can be called anywhere in it, before their declaration too.
        for stmt in &block.stmts {
            if let Stmt::Item(Item::Fn(f)) = stmt {
                self.helper_fn(f);
            }
        }
        let (mut last, mut tail) = (None, Some(tail));
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                Stmt::Local(local) => self.local(local),
                Stmt::Item(Item::Fn(_)) => {}
                Stmt::Item(item) => self.item(item),
                Stmt::Expr(expr, None) if i + 1 == block.stmts.len() => last = tail.take().map(|tail| tail(self, expr)),
                Stmt::Expr(expr, _) => {
                    self.statement(expr);
                }
                Stmt::Macro(m) => self.cx.error(m, "macros are not supported in a stencil body"),
            }
        }
        self.scopes.pop();
        last
    }

    pub(super) fn statement(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Assign(assign) => {
                let value = self.expr(&assign.right);
                self.assign(&assign.left, value);
                Value::Unit
            }
            Expr::Binary(b) => match compound(&b.op) {
                Some(op) => {
                    let current = self.expr(&b.left);
                    let rhs = self.expr(&b.right);
                    let value = self.binary(&op, current, rhs, expr, [&b.left, &b.right]);
                    self.assign(&b.left, value);
                    Value::Unit
                }
                None => self.expr(expr),
            },
            other => self.expr(other),
        }
    }

    fn assign(&mut self, target: &Expr, value: Value) {
        match strip_group(target) {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.segments[0].ident.to_string();
                if self.captured(&name) {
                    self.cx.error(
                        target,
                        format!("a closure cannot assign to `{name}`, which it captured: return the new value instead"),
                    );
                    return;
                }
                match self.lookup(&name) {
                    Some(Binding::Value(old)) => {
                        let value = self.retype_like(value, old.clone(), target);
                        self.rebind(&name, Binding::Value(value));
                    }
                    Some(Binding::Window(_)) => self.cx.error(target, "the window is read-only"),
                    Some(Binding::Array(_)) => self.cx.error(target, "assigning a whole array is not supported"),
                    Some(Binding::Helper(_) | Binding::Item(_)) => {
                        self.cx.error(target, format!("`{name}` is a function: it cannot be assigned to"))
                    }
                    None => self.cx.error(target, format!("unknown name `{name}`")),
                }
            }
            other => self.cx.error(other, "only local variables can be assigned to"),
        }
    }

    /// A new value for a variable keeps the variable's type (an untyped literal takes it on).
    fn retype_like(&mut self, value: Value, old: Value, at: &dyn ToTokens) -> Value {
        match (value, type_of(&old)) {
            (Value::Untyped(lit), Some(ty)) => self.typed(&lit, ty, at),
            (value, _) => value,
        }
    }

    fn local(&mut self, local: &Local) {
        let (ident, ty) = match &local.pat {
            Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => (id.ident.to_string(), None),
            Pat::Type(pt) => match &*pt.pat {
                Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => (id.ident.to_string(), Some(&*pt.ty)),
                other => {
                    self.cx.error(other, "bind one name per `let` (patterns are not supported)");
                    return;
                }
            },
            other => {
                self.cx.error(other, "bind one name per `let` (patterns are not supported)");
                return;
            }
        };
        let Some(init) = &local.init else {
            self.cx.error(local, "a `let` needs a value: `let name = expr;`");
            return;
        };
        if let Some((_, diverge)) = &init.diverge {
            self.cx.error(diverge, "`let ... else` is not supported");
            return;
        }
        let binding = match strip_group(&init.expr) {
            Expr::Closure(c) => self.closure(&ident, c),
            _ => self.binding(&init.expr, ty, local as *const Local as usize),
        };
        self.bind(ident, binding);
    }

    /// The value of a `let` or `const`, converted to its declared type if it has one.
    /// `site` identifies the statement, for the two-pass typing of untyped literals.
    pub(super) fn binding(&mut self, expr: &Expr, ty: Option<&Type>, site: usize) -> Binding {
        // `let g = h;` of an array: the same elements under another name.
        if let Expr::Path(p) = strip_group(expr) {
            if let Some(Binding::Array(values)) = p.path.get_ident().and_then(|i| self.lookup(&i.to_string())) {
                return Binding::Array(values.clone());
            }
        }
        match (strip_group(expr), ty.map(strip_type)) {
            (Expr::Array(arr), ty) => {
                let elem = match ty {
                    Some(Type::Array(a)) => Some(scalar(&a.elem)),
                    _ => None,
                };
                let values = arr
                    .elems
                    .iter()
                    .map(|e| {
                        let v = self.expr(e);
                        match elem {
                            Some(Some(t)) => self.convert(v, t, e),
                            _ => v,
                        }
                    })
                    .collect();
                Binding::Array(values)
            }
            (Expr::Repeat(rep), ty) => {
                let count = self.expr(&rep.len);
                let Some(n) = self.const_int(&count, &rep.len) else { return Binding::Value(Value::Poison) };
                let mut v = self.expr(&rep.expr);
                if let Some(Type::Array(a)) = ty {
                    if let Some(t) = scalar(&a.elem) {
                        v = self.convert(v, t, &rep.expr);
                    }
                }
                Binding::Array(vec![v; n.max(0) as usize])
            }
            (e, Some(t)) => {
                let v = self.expr(e);
                match scalar_or_bool(t) {
                    Some(st) => Binding::Value(self.convert(v, st, e)),
                    // Index-typed constants (usize, i64, ...) stay compile-time integers.
                    None if is_index_type(t) => Binding::Value(v),
                    None => {
                        self.cx.error(t, "unsupported type: a stencil computes with f32, f64, i32, u32 and bool");
                        Binding::Value(Value::Poison)
                    }
                }
            }
            (e, None) => Binding::Value(match self.expr(e) {
                Value::Untyped(lit) => match self.preset.get(&site) {
                    Some(&ty) => self.typed(&lit, ty, e),
                    None => Value::Untyped(Lit::Var(site, Box::new(lit))),
                },
                v => v,
            }),
        }
    }

    /// `value` as type `ty`, as a typed `let` or `const` declares it.
    pub(super) fn convert(&mut self, value: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        match value {
            Value::Untyped(lit) => self.typed(&lit, ty, at),
            Value::Known(s) if s.ty != ty => self.mismatch(ty, s.ty, at),
            Value::Node(_, t) if t != ty => self.mismatch(ty, t, at),
            other => other,
        }
    }

    fn mismatch(&mut self, expected: ScalarType, got: ScalarType, at: &dyn ToTokens) -> Value {
        self.cx.error(at, format!("mismatched types: expected {expected}, got {got}"));
        Value::Poison
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Const(c) => {
                let binding = self.binding(&c.expr, Some(&c.ty), c as *const syn::ItemConst as usize);
                self.bind(c.ident.to_string(), Binding::Item(Box::new(binding)));
            }
            other => self.cx.error(other, "only `const` items and helper `fn`s may be declared inside a stencil body"),
        }
    }
}
