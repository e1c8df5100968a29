//! Lowers a stencil body from syn to `rc-core`'s typed body: `let`s become renamed values, `for`
//! loops over constant ranges are unrolled, `if`s become selects (or vanish when the condition is
//! known at compile time), and literals take the type Rust would infer for them. Anything outside
//! the supported language is reported on its tokens; lowering then carries on with a poisoned
//! value, so one run reports every problem.
//!
//! This file holds the entry point, the two passes and the state they share; each part of the
//! language lowers in its own file, so that adding a construct touches the file named for it.

mod control;
mod expr;
mod helper;
mod literal;
mod math;
mod method;
mod operator;
mod results;
mod rust_type;
mod scope;
mod statement;
mod tap;
mod unroll;
mod wrapping;

use std::collections::HashMap;

use quote::ToTokens;
use syn::Block;

use rc_core::body::{Body, Node, NodeId};
use rc_core::typing::TypeError;
use rc_core::{Radius, Scalar, ScalarType};

use crate::ctxt::Ctxt;
use crate::signature::{ParamType, Signature};

use literal::{default_type, Lit};
use scope::Binding;

/// What lowering an expression yields: a node, a constant, or a literal still waiting for a type.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    /// Computed at run time by a node of the body.
    Node(NodeId, ScalarType),
    /// Known at compile time, with its type.
    Known(Scalar),
    /// A literal (or loop index) still waiting for its type.
    Untyped(Lit),
    /// `()`: what a `for` loop or an `if` without `else` produces.
    Unit,
    /// An error was already reported for this value.
    Poison,
}

/// One lowering pass: the body built so far and the scopes it is read in.
struct Lower<'a> {
    cx: &'a mut Ctxt,
    radius: Radius,
    element: ScalarType,
    nodes: Vec<Node>,
    types: Vec<ScalarType>,
    scopes: Vec<HashMap<String, Binding>>,
    unrolled: usize,
    interned: HashMap<Node, NodeId>,
    /// The type each `let` bound to an untyped literal met first (pass one records it, keyed by
    /// the `let` statement)...
    inferred: HashMap<usize, ScalarType>,
    /// ...and gets at that `let` in pass two: rustc gives a binding one type for all its uses
    /// (and all iterations of an unrolled loop).
    preset: HashMap<usize, ScalarType>,
    /// Helpers being inlined, outermost first (a helper may not call itself).
    inlining: Vec<String>,
    /// Scopes below this depth show only items: a helper `fn` is being inlined.
    item_floor: usize,
    /// Scopes below this depth were captured by the closure being inlined.
    capture_floor: Option<usize>,
}

/// Lowers `block`, the body of the function `sig` describes. Two passes: the first only learns
/// the types of `let`-bound literals from their uses (its errors are dropped), the second lowers
/// with those types known at each `let`.
pub fn lower(block: &Block, sig: &Signature, radius: Radius, cx: &mut Ctxt) -> Option<Body> {
    let mut learn = Ctxt::default();
    let (_, first) = run(block, sig, radius, &mut learn, HashMap::new());
    let (results, second) = run(block, sig, radius, cx, first.inferred);
    let Lower { nodes, cx, .. } = second;
    if cx.has_errors() {
        return None;
    }
    let params = sig.params.iter().filter_map(|p| p.ty).flat_map(ParamType::scalars).collect();
    match Body::new(sig.element, sig.windows.len() as u32, params, radius, nodes, results?) {
        Ok(body) => Some(body),
        // Body::new applies the same type rules (rc_core::typing); a refusal here is a lowering bug.
        Err(e) => {
            cx.error(block, format!("internal error lowering this body: {e}"));
            None
        }
    }
}

fn run<'a>(
    block: &Block,
    sig: &Signature,
    radius: Radius,
    cx: &'a mut Ctxt,
    preset: HashMap<usize, ScalarType>,
) -> (Option<Vec<NodeId>>, Lower<'a>) {
    let mut lower = Lower {
        cx,
        radius,
        element: sig.element,
        nodes: Vec::new(),
        types: Vec::new(),
        scopes: vec![HashMap::new()],
        unrolled: 0,
        interned: HashMap::new(),
        inferred: HashMap::new(),
        preset,
        inlining: Vec::new(),
        item_floor: 0,
        capture_floor: None,
    };
    for (field, window) in sig.windows.iter().enumerate() {
        lower.bind(window.to_string(), Binding::Window(field as u32));
    }
    // The body's parameters are scalars: an array's elements follow each other.
    let mut next = 0;
    for param in &sig.params {
        let mut values = Vec::new();
        for ty in param.ty.into_iter().flat_map(ParamType::scalars) {
            values.push(Value::Node(lower.push(Node::Param(next), ty), ty));
            next += 1;
        }
        let binding = match param.ty {
            Some(ParamType::Array(..)) => Binding::Array(values),
            // A scalar is one value; a refused type none, and a poisoned binding.
            _ => Binding::Value(values.pop().unwrap_or(Value::Poison)),
        };
        lower.bind(param.name.to_string(), binding);
    }
    let results = lower.results(block, sig.returns);
    (results, lower)
}

impl Lower<'_> {
    fn push(&mut self, node: Node, ty: ScalarType) -> NodeId {
        if let Some(&id) = self.interned.get(&node) {
            return id;
        }
        self.nodes.push(node);
        self.types.push(ty);
        let id = self.nodes.len() as NodeId - 1;
        self.interned.insert(node, id);
        id
    }

    fn unsupported(&mut self, tokens: &dyn ToTokens, message: &str) -> Value {
        self.cx.error(tokens, message);
        Value::Poison
    }

    /// A type rule's refusal: operands that disagree on the whole expression, an operand type the
    /// operation does not take on the operation's own tokens.
    fn type_error(&mut self, error: TypeError, op: &dyn ToTokens, whole: &dyn ToTokens) -> Value {
        let at = match error {
            TypeError::Mismatch { .. } => whole,
            _ => op,
        };
        self.operand_error(error, at)
    }

    /// A type rule's refusal on `at`. Where rustc refuses the same source, the function is left
    /// out of the expansion, so the mistake is reported once.
    fn operand_error(&mut self, error: TypeError, at: &dyn ToTokens) -> Value {
        if error.rustc_refuses_too() {
            self.cx.error_rustc_refuses_too(at, error);
        } else {
            self.cx.error(at, error);
        }
        Value::Poison
    }

    /// The node for `value`, typed `expected` if it was still an untyped literal.
    fn node_for(&mut self, value: Value, expected: Option<ScalarType>, at: &dyn ToTokens) -> Option<NodeId> {
        match value {
            Value::Node(id, _) => Some(id),
            Value::Known(s) => Some(self.push(Node::Const(s), s.ty)),
            Value::Untyped(lit) => {
                let ty = expected.unwrap_or_else(|| default_type(&lit));
                let v = self.typed(&lit, ty, at);
                self.node_for(v, Some(ty), at)
            }
            Value::Unit => {
                self.cx.error(at, "expected a value, found `()`");
                None
            }
            Value::Poison => None,
        }
    }
}

fn type_of(v: &Value) -> Option<ScalarType> {
    match v {
        Value::Node(_, t) => Some(*t),
        Value::Known(s) => Some(s.ty),
        _ => None,
    }
}
