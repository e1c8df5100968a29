//! Helper functions and closures declared inside the body (`fn sq(x: f32) -> f32 { x * x }`,
//! `let sq = |x: f32| x * x;`): each call is inlined, its arguments bound to the parameters in a
//! scope of its own. As in Rust, a `fn` item sees only items (`const`s and other helpers), and a
//! closure sees the values of the scope where it was written, as they were there.

use std::collections::HashMap;
use std::rc::Rc;

use quote::ToTokens;
use syn::{Expr, FnArg, ItemFn, Pat, ReturnType};

use rc_core::ScalarType;

use super::rust_type::scalar_or_bool;
use super::scope::Binding;
use super::{Lower, Value};

/// A helper, as declared.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Helper {
    name: String,
    /// Parameter names, and their types where declared (a closure's may be inferred).
    params: Vec<(String, Option<ScalarType>)>,
    ret: Option<ScalarType>,
    body: HelperBody,
    /// A closure's view of the scopes where it was written; `None` for a `fn` item.
    captured: Option<Vec<HashMap<String, Binding>>>,
}

#[derive(Clone, Debug, PartialEq)]
enum HelperBody {
    Block(syn::Block),
    Expr(Expr),
}

/// Calls a helper inlines one inside the other, at most this deep.
const MAX_DEPTH: usize = 32;

impl Lower<'_> {
    /// `fn name(p: T, ...) -> R { ... }` inside the body.
    pub(super) fn helper_fn(&mut self, f: &ItemFn) {
        let sig = &f.sig;
        if let Some(bad) = sig
            .constness
            .as_ref()
            .map(|c| c as &dyn ToTokens)
            .or(sig.asyncness.as_ref().map(|a| a as &dyn ToTokens))
            .or(sig.unsafety.as_ref().map(|u| u as &dyn ToTokens))
            .or(sig.abi.as_ref().map(|a| a as &dyn ToTokens))
        {
            self.cx.error(bad, "a helper is a plain `fn`: write `fn name(x: f32) -> f32 { ... }`");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.cx.error(&sig.generics, "a helper cannot be generic: rc inlines it with the types it declares");
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Typed(pt) => match (&*pt.pat, scalar_or_bool(&pt.ty)) {
                    (Pat::Ident(id), Some(ty)) if id.by_ref.is_none() && id.subpat.is_none() => {
                        params.push((id.ident.to_string(), Some(ty)))
                    }
                    (Pat::Ident(_), None) => {
                        self.cx.error(&pt.ty, "a helper's parameters are f32, f64, i32, u32 or bool")
                    }
                    (other, _) => self.cx.error(other, "name each helper parameter: `x: f32`"),
                },
                FnArg::Receiver(r) => self.cx.error(r, "a helper is a plain function, not a method: drop `self`"),
            }
        }
        let ret = match &sig.output {
            ReturnType::Type(_, ty) => match scalar_or_bool(ty) {
                Some(t) => Some(t),
                None => {
                    self.cx.error(ty, "a helper returns f32, f64, i32, u32 or bool");
                    None
                }
            },
            ReturnType::Default => {
                self.cx.error(&sig.ident, "a helper returns a value: declare it, `fn name(x: f32) -> f32`");
                None
            }
        };
        let helper = Helper {
            name: sig.ident.to_string(),
            params,
            ret,
            body: HelperBody::Block((*f.block).clone()),
            captured: None,
        };
        self.bind(sig.ident.to_string(), Binding::Item(Box::new(Binding::Helper(Rc::new(helper)))));
    }

    /// `|x: f32, y| expr` bound by a `let`: captures the scopes as they are now.
    pub(super) fn closure(&mut self, name: &str, c: &syn::ExprClosure) -> Binding {
        if let Some(bad) = c
            .movability
            .as_ref()
            .map(|m| m as &dyn ToTokens)
            .or(c.asyncness.as_ref().map(|a| a as &dyn ToTokens))
            .or(c.constness.as_ref().map(|k| k as &dyn ToTokens))
        {
            self.cx.error(bad, "a helper closure is a plain `|x: f32| expr`");
        }
        let mut params = Vec::new();
        for input in &c.inputs {
            match input {
                Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => {
                    params.push((id.ident.to_string(), None))
                }
                Pat::Type(pt) => match (&*pt.pat, scalar_or_bool(&pt.ty)) {
                    (Pat::Ident(id), Some(ty)) if id.by_ref.is_none() && id.subpat.is_none() => {
                        params.push((id.ident.to_string(), Some(ty)))
                    }
                    (Pat::Ident(_), None) => {
                        self.cx.error(&pt.ty, "a closure's parameters are f32, f64, i32, u32 or bool")
                    }
                    (other, _) => self.cx.error(other, "name each closure parameter: `x` or `x: f32`"),
                },
                other => self.cx.error(other, "name each closure parameter: `x` or `x: f32`"),
            }
        }
        let ret = match &c.output {
            ReturnType::Type(_, ty) => scalar_or_bool(ty).or_else(|| {
                self.cx.error(ty, "a closure returns f32, f64, i32, u32 or bool");
                None
            }),
            ReturnType::Default => None,
        };
        let helper = Helper {
            name: name.to_string(),
            params,
            ret,
            body: HelperBody::Expr((*c.body).clone()),
            captured: Some(self.scopes.clone()),
        };
        Binding::Helper(Rc::new(helper))
    }

    /// The value of `helper(args)`, inlined.
    pub(super) fn inline(&mut self, helper: &Helper, args: &[Expr], call: &dyn ToTokens) -> Value {
        if self.inlining.contains(&helper.name) {
            return self.unsupported(
                call,
                &format!("`{}` calls itself: rc inlines helpers at each call, so they cannot recurse; unroll with a `for` loop instead", helper.name),
            );
        }
        if self.inlining.len() >= MAX_DEPTH {
            return self.unsupported(
                call,
                &format!("helpers call each other more than {MAX_DEPTH} deep here; call fewer in a chain"),
            );
        }
        if args.len() != helper.params.len() {
            return self.unsupported(
                call,
                &format!("`{}` takes {} argument(s), got {}", helper.name, helper.params.len(), args.len()),
            );
        }
        // Arguments are evaluated where the call is, before the helper's scope replaces it.
        let values: Vec<Value> = args
            .iter()
            .zip(&helper.params)
            .map(|(arg, (_, ty))| {
                let v = self.expr(arg);
                match ty {
                    Some(t) => self.convert(v, *t, arg),
                    None => v,
                }
            })
            .collect();
        let parameters: HashMap<String, Binding> =
            helper.params.iter().zip(values).map(|((name, _), v)| (name.clone(), Binding::Value(v))).collect();
        let (saved_scopes, saved_floors) = match &helper.captured {
            Some(captured) => (Some(std::mem::replace(&mut self.scopes, captured.clone())), None),
            // A `fn` item sees only the items of the scopes around its call.
            None => (None, Some(std::mem::replace(&mut self.item_floor, self.scopes.len()))),
        };
        let capture_floor = std::mem::replace(&mut self.capture_floor, helper.captured.as_ref().map(|c| c.len()));
        self.scopes.push(parameters);
        self.inlining.push(helper.name.clone());
        let value = match &helper.body {
            HelperBody::Block(b) => self.block(b),
            HelperBody::Expr(e) => self.expr(e),
        };
        self.inlining.pop();
        self.scopes.pop();
        self.capture_floor = capture_floor;
        if let Some(scopes) = saved_scopes {
            self.scopes = scopes;
        }
        if let Some(floor) = saved_floors {
            self.item_floor = floor;
        }
        match helper.ret {
            Some(t) => self.convert(value, t, call),
            None => value,
        }
    }
}
