//! `if`/`else`: a condition known at compile time keeps one branch; otherwise both branches are
//! lowered and every value or variable they disagree on becomes a select. Apart because only this
//! construct forks and merges the scopes.

use std::collections::HashMap;

use quote::ToTokens;
use syn::ExprIf;

use rc_core::body::{Node, NodeId};
use rc_core::typing::{self, TypeError};
use rc_core::{Scalar, ScalarType};

use super::literal::{default_type, Lit};
use super::scope::Binding;
use super::{type_of, Lower, Value};

impl Lower<'_> {
    pub(super) fn if_expr(&mut self, e: &ExprIf) -> Value {
        let cond = self.expr(&e.cond);
        let cond = match cond {
            Value::Poison => return Value::Poison,
            Value::Known(s) if s.ty == ScalarType::Bool => {
                // Known at compile time (e.g. on a loop index): only one branch exists.
                return if s.bits != 0 {
                    self.block(&e.then_branch)
                } else {
                    e.else_branch.as_ref().map_or(Value::Unit, |(_, b)| self.expr(b))
                };
            }
            Value::Node(id, ScalarType::Bool) => id,
            Value::Known(Scalar { ty, .. }) | Value::Node(_, ty) => {
                return self.type_error(TypeError::Condition { got: ty }, &e.cond, &e.cond)
            }
            Value::Untyped(lit) => {
                return self.type_error(TypeError::Condition { got: default_type(&lit) }, &e.cond, &e.cond)
            }
            Value::Unit => return self.unsupported(&e.cond, "this operand has no value (it is `()`)"),
        };
        let before = self.scopes.clone();
        let then_value = self.block(&e.then_branch);
        let after_then = std::mem::replace(&mut self.scopes, before);
        let else_value = e.else_branch.as_ref().map_or(Value::Unit, |(_, b)| self.expr(b));
        let after_else = std::mem::take(&mut self.scopes);
        // Variables assigned in either branch become a select between the two outcomes.
        let mut merged = Vec::with_capacity(after_then.len());
        for (then_scope, else_scope) in after_then.into_iter().zip(after_else) {
            let mut scope = HashMap::new();
            for (name, else_binding) in else_scope {
                let binding = match (then_scope.get(&name), else_binding) {
                    (Some(Binding::Value(t)), Binding::Value(f)) if *t != f => {
                        Binding::Value(self.select(cond, t.clone(), f, &e.cond))
                    }
                    (Some(Binding::Array(t)), Binding::Array(f)) if *t != f => Binding::Array(
                        t.clone()
                            .into_iter()
                            .zip(f)
                            .map(|(t, f)| if t == f { t } else { self.select(cond, t, f, &e.cond) })
                            .collect(),
                    ),
                    (_, b) => b,
                };
                scope.insert(name, binding);
            }
            merged.push(scope);
        }
        self.scopes = merged;
        match (then_value, else_value) {
            (Value::Unit, Value::Unit) => Value::Unit,
            (t, f) => self.select(cond, t, f, &e.cond),
        }
    }

    pub(super) fn select(&mut self, cond: NodeId, t: Value, f: Value, at: &dyn ToTokens) -> Value {
        if t == Value::Poison || f == Value::Poison {
            return Value::Poison;
        }
        if t == Value::Unit || f == Value::Unit {
            self.cx.error(at, "an `if` used as a value needs an `else` with a value of the same type");
            return Value::Poison;
        }
        // Two literals: the select stays untyped until its use gives it a type, as in Rust.
        if let (Value::Untyped(a), Value::Untyped(b)) = (&t, &f) {
            return Value::Untyped(Lit::Select(cond, Box::new(a.clone()), Box::new(b.clone())));
        }
        let ty = type_of(&t).or(type_of(&f)).unwrap_or_else(|| match &t {
            Value::Untyped(l) => default_type(l),
            _ => ScalarType::F64,
        });
        let (Some(a), Some(b)) = (self.node_for(t, Some(ty), at), self.node_for(f, Some(ty), at)) else {
            return Value::Poison;
        };
        let types = (self.types[cond as usize], self.types[a as usize], self.types[b as usize]);
        match typing::select(types.0, types.1, types.2) {
            Ok(ty) => Value::Node(self.push(Node::Select { cond, then: a, otherwise: b }, ty), ty),
            Err(e) => self.type_error(e, at, at),
        }
    }
}
