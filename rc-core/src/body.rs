//! The body of a stencil as the compiler sees it: the computation of one point of every output
//! field, a typed DAG over the taps of its input fields' windows, parameters and constants, in
//! the exact order of operations the Rust source has, with one result node per output field.
//! `let`s, `for` loops and `if`s are gone by now: the macro unrolls and renames them into this.

use std::fmt;

use crate::error::BodyError;
use crate::geometry::{Offset, Radius};
use crate::operation::{binary_name, compare_name, unary_name};
pub use crate::operation::{BinaryOp, CompareOp, UnaryOp};
use crate::ops;
use crate::scalar::{Scalar, ScalarType};
use crate::typing;

/// Index of a node in [`Body::nodes`]; operands always come before their users.
pub type NodeId = u32;

/// One operation. Operands are earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// `w[offset]` of input field `field` (its window, numbered from 0 in the order the windows
    /// are declared): the element at `offset` from the output's centre.
    Tap(u32, Offset),
    /// The `index`-th extra parameter.
    Param(u32),
    Const(Scalar),
    Unary(UnaryOp, NodeId),
    Binary(BinaryOp, NodeId, NodeId),
    /// A comparison; the node is a `bool`.
    Compare(CompareOp, NodeId, NodeId),
    /// `if cond { then } else { otherwise }` as a value.
    Select {
        cond: NodeId,
        then: NodeId,
        otherwise: NodeId,
    },
    /// `x as ty`, with Rust's semantics (float to integer saturates, NaN gives 0).
    Cast(ScalarType, NodeId),
    /// `a.mul_add(b, c)`: `a * b + c` with one rounding.
    MulAdd(NodeId, NodeId, NodeId),
}

impl Node {
    /// The nodes this one reads.
    pub fn operands(&self) -> Vec<NodeId> {
        match *self {
            Node::Tap(..) | Node::Param(_) | Node::Const(_) => vec![],
            Node::Unary(_, a) | Node::Cast(_, a) => vec![a],
            Node::Binary(_, a, b) | Node::Compare(_, a, b) => vec![a, b],
            Node::Select { cond, then, otherwise } => vec![cond, then, otherwise],
            Node::MulAdd(a, b, c) => vec![a, b, c],
        }
    }
}

/// A type-checked stencil body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    element: ScalarType,
    /// Input fields (windows), each of `element`s, all of one shape and boundary rule.
    fields: u32,
    params: Vec<ScalarType>,
    radius: Radius,
    nodes: Vec<Node>,
    types: Vec<ScalarType>,
    /// One node per output field, in order: what the point of that field is.
    results: Vec<NodeId>,
}

impl Body {
    /// Checks that operands come first, types agree, taps read one of the `fields` input fields
    /// within `radius`, and that there is at least one result (one per output field, in order),
    /// each a node of the element type.
    pub fn new(
        element: ScalarType,
        fields: u32,
        params: Vec<ScalarType>,
        radius: impl Into<Radius>,
        nodes: Vec<Node>,
        results: Vec<NodeId>,
    ) -> Result<Body, BodyError> {
        let radius = radius.into();
        if nodes.is_empty() {
            return Err(BodyError::Empty);
        }
        if fields == 0 {
            return Err(BodyError::NoFields);
        }
        let mut types = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            for operand in node.operands() {
                if operand as usize >= i {
                    return Err(BodyError::ForwardReference { node: i, operand: operand as usize });
                }
            }
            types.push(type_of(i, &nodes[..=i], element, fields, &params, radius, &types)?);
        }
        if results.is_empty() {
            return Err(BodyError::NoResults);
        }
        for (output, &result) in results.iter().enumerate() {
            let got = *types
                .get(result as usize)
                .ok_or(BodyError::ForwardReference { node: nodes.len(), operand: result as usize })?;
            if got != element {
                return Err(BodyError::ResultType { output, expected: element, got });
            }
        }
        Ok(Body { element, fields, params, radius, nodes, types, results })
    }

    /// This 2D body as the 3D body of a tile that streams its rows ([`Pattern::lifted`]): each
    /// tap `(dy, dx)` becomes `(dy, 0, dx)`, everything else as it is.
    ///
    /// [`Pattern::lifted`]: crate::pattern::Pattern::lifted
    pub fn lifted(&self) -> Body {
        let lift = |d: Offset| Offset::zyx(d.along(1), 0, d.along_x());
        let nodes = self.nodes.iter().map(|&node| match node {
            Node::Tap(field, d) => Node::Tap(field, lift(d)),
            other => other,
        });
        let r = self.radius;
        Body { nodes: nodes.collect(), radius: Radius::zyx(r.along(1), 0, r.along_x()), ..self.clone() }
    }

    pub fn element(&self) -> ScalarType {
        self.element
    }
    /// Input fields, one window each.
    pub fn fields(&self) -> u32 {
        self.fields
    }
    pub fn params(&self) -> &[ScalarType] {
        &self.params
    }
    pub fn radius(&self) -> Radius {
        self.radius
    }
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    pub fn ty(&self, id: NodeId) -> ScalarType {
        self.types[id as usize]
    }
    /// The result of each output field, in order (at least one).
    pub fn results(&self) -> &[NodeId] {
        &self.results
    }
    /// Output fields: one per result.
    pub fn output_fields(&self) -> u32 {
        self.results.len() as u32
    }

    /// Which nodes the results depend on (dead code is neither fetched nor computed).
    pub fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.nodes.len()];
        for &result in &self.results {
            live[result as usize] = true;
        }
        for i in (0..self.nodes.len()).rev() {
            if live[i] {
                for operand in self.nodes[i].operands() {
                    live[operand as usize] = true;
                }
            }
        }
        live
    }

    /// The distinct tap offsets the results depend on in any field, ascending.
    pub fn used_taps(&self) -> Vec<Offset> {
        let mut taps: Vec<Offset> = self.used_field_taps().into_iter().map(|(_, d)| d).collect();
        taps.sort_unstable();
        taps.dedup();
        taps
    }

    /// The distinct `(field, offset)` taps the results depend on, ascending.
    pub fn used_field_taps(&self) -> Vec<(u32, Offset)> {
        let live = self.live();
        let mut taps: Vec<(u32, Offset)> = self
            .nodes
            .iter()
            .zip(&live)
            .filter_map(|(node, &l)| match node {
                Node::Tap(field, d) if l => Some((*field, *d)),
                _ => None,
            })
            .collect();
        taps.sort_unstable();
        taps.dedup();
        taps
    }

    /// Whether a result depends on `min` or `max`, whose sign of a zero result Rust leaves
    /// unspecified (so a reference built with other optimisations may return the other zero).
    pub fn uses_min_or_max(&self) -> bool {
        let live = self.live();
        self.nodes.iter().zip(live).any(|(n, l)| l && matches!(n, Node::Binary(BinaryOp::Min | BinaryOp::Max, ..)))
    }

    /// Whether each node depends on a tap (the rest is the same for every output of a thread).
    pub fn depends_on_taps(&self) -> Vec<bool> {
        let mut dep = vec![false; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            dep[i] = matches!(node, Node::Tap(..)) || node.operands().iter().any(|&o| dep[o as usize]);
        }
        dep
    }
}

impl Body {
    /// Evaluates the body directly, node by node, for one point whose taps read
    /// `tap(field, d)`: its value in each output field, in order. An oracle independent of
    /// scheduling: the emulator must agree with it bit for bit.
    pub fn eval(&self, tap: impl Fn(u32, Offset) -> Scalar, params: &[Scalar]) -> Vec<Scalar> {
        let mut bits: Vec<u64> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let v = |n: NodeId| bits[n as usize];
            let t = |n: NodeId| self.types[n as usize];
            let value = match *node {
                Node::Tap(field, d) => tap(field, d).bits,
                Node::Param(p) => params.get(p as usize).map_or(0, |s| s.bits),
                Node::Const(c) => c.bits,
                Node::Unary(op, a) => ops::unary(op, t(a), v(a)),
                Node::Binary(op, a, b) => ops::binary(op, t(a), v(a), v(b)),
                Node::Compare(op, a, b) => ops::compare(op, t(a), v(a), v(b)),
                Node::Select { cond, then, otherwise } => {
                    if v(cond) != 0 {
                        v(then)
                    } else {
                        v(otherwise)
                    }
                }
                Node::Cast(to, a) => ops::cast(t(a), to, v(a)),
                Node::MulAdd(a, b, c) => ops::mul_add(t(a), v(a), v(b), v(c)),
            };
            bits.push(value);
        }
        self.results.iter().map(|&result| Scalar::new(self.element, bits[result as usize])).collect()
    }
}

/// The type of node `i`, the last of `nodes` (its operands among the earlier ones, typed in
/// `types`).
fn type_of(
    i: usize,
    nodes: &[Node],
    element: ScalarType,
    fields: u32,
    params: &[ScalarType],
    radius: Radius,
    types: &[ScalarType],
) -> Result<ScalarType, BodyError> {
    let t = |id: NodeId| types[id as usize];
    let rule = match nodes[i] {
        Node::Tap(field, d) => {
            return if field >= fields {
                Err(BodyError::NoSuchField { node: i, field, fields })
            } else if !radius.covers(d) {
                Err(BodyError::TapOutsideRadius { node: i, offset: d, radius })
            } else {
                Ok(element)
            };
        }
        Node::Param(index) => {
            return params.get(index as usize).copied().ok_or(BodyError::NoSuchParam {
                node: i,
                index,
                count: params.len(),
            })
        }
        Node::Const(c) => return Ok(c.ty),
        Node::Unary(op, a) => typing::unary(op, t(a)),
        Node::Binary(op, a, b) => typing::binary(op, t(a), t(b)).and_then(|ty| {
            let constant = match nodes[b as usize] {
                Node::Const(c) => c.integer(),
                _ => None,
            };
            typing::right_operand(op, ty, constant).map(|()| ty)
        }),
        Node::Compare(op, a, b) => typing::compare(op, t(a), t(b)),
        Node::Select { cond, then, otherwise } => typing::select(t(cond), t(then), t(otherwise)),
        Node::Cast(to, a) => typing::cast(t(a), to),
        Node::MulAdd(a, b, c) => typing::mul_add(t(a), t(b), t(c)),
    };
    rule.map_err(|error| BodyError::Type { node: i, error })
}

impl fmt::Display for Body {
    /// One line per live node, e.g. `%3 = %1 + %2 : f32`, then what it returns.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let live = self.live();
        for (i, node) in self.nodes.iter().enumerate().filter(|(i, _)| live[*i]) {
            let rhs = match *node {
                // Field 0 as `w`, so one-field bodies print as they always have.
                Node::Tap(0, d) => format!("w[{d}]"),
                Node::Tap(field, d) => format!("w{field}[{d}]"),
                Node::Param(p) => format!("param{p}"),
                Node::Const(c) => c.to_string(),
                Node::Unary(op, a) => format!("{}(%{a})", unary_name(op)),
                Node::Binary(op, a, b) => format!("%{a} {} %{b}", binary_name(op)),
                Node::Compare(op, a, b) => format!("%{a} {} %{b}", compare_name(op)),
                Node::Select { cond, then, otherwise } => format!("if %{cond} {{ %{then} }} else {{ %{otherwise} }}"),
                Node::Cast(ty, a) => format!("%{a} as {ty}"),
                Node::MulAdd(a, b, c) => format!("%{a}.mul_add(%{b}, %{c})"),
            };
            writeln!(f, "%{i} = {rhs} : {}", self.types[i])?;
        }
        // One result as it always printed; several as a tuple, in output order.
        let results: Vec<String> = self.results.iter().map(|r| format!("%{r}")).collect();
        match results.as_slice() {
            [one] => write!(f, "return {one}"),
            _ => write!(f, "return ({})", results.join(", ")),
        }
    }
}
