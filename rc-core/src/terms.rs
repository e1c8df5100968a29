//! Terms a lane's outputs share. A part of the body that reads taps computes the same value at
//! two outputs whenever it has the same shape and reads the same elements: in the 9-tap
//! `0.02 * w[-4] + ... + 0.02 * w[4]`, the product `0.02 * w[4]` of output `x` is the product
//! `0.02 * w[-4]` of output `x + 8`. Both are one IEEE operation on one element and one
//! constant, so a lane computing several outputs in one run computes that product once and
//! both outputs stay bit for bit what the body says (fused 1D 9-tap: 17 operations per output
//! become about 13).
//!
//! A term's *shape* is its node with every tap's offset taken relative to the term's *anchor*
//! (the offset of its first tap, operands first): two terms of one shape whose anchors name the
//! same element have the same value. Terms no tap reaches are the body's invariants, computed
//! once per tile elsewhere; constants of equal bits and the same parameter are one shape, so
//! `0.15` written twice is one constant here.

use std::collections::HashMap;

use crate::body::{Body, Node, NodeId};
use crate::geometry::Offset;
use crate::program::Reg;

/// A position in the tile, innermost first (x, y, z).
pub(crate) type Position = [i64; 3];

/// One operand of a shape: a term of shape `class` anchored `at` from the user's anchor, or an
/// invariant of shape `class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Operand {
    Term { class: u32, at: Position },
    Invariant { class: u32 },
}

/// What makes two nodes one shape: a tap of the same field, or the same operation (the node
/// with its operand ids cleared) on operands of the same shapes at the same relative anchors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Shape {
    Tap(u32),
    Node(Node, Vec<Operand>),
}

/// The shape and anchor of each node of a body.
#[derive(Clone, Debug, Default)]
pub(crate) struct Terms {
    class: Vec<u32>,
    /// The anchor of each node that reads a tap; `None` for invariants.
    anchor: Vec<Option<Position>>,
}

impl Terms {
    pub(crate) fn of(body: &Body) -> Terms {
        let mut classes: HashMap<Shape, u32> = HashMap::new();
        let mut terms = Terms::default();
        for &node in body.nodes() {
            let (shape, anchor) = match node {
                Node::Tap(field, d) => (Shape::Tap(field), Some(position(d))),
                node => {
                    let operands = node.operands();
                    let anchor = operands.iter().find_map(|&o| terms.anchor[o as usize]);
                    let operand = |o: NodeId| {
                        let class = terms.class[o as usize];
                        match (terms.anchor[o as usize], anchor) {
                            (Some(at), Some(base)) => Operand::Term { class, at: minus(at, base) },
                            _ => Operand::Invariant { class },
                        }
                    };
                    (Shape::Node(without_operands(node), operands.iter().map(|&o| operand(o)).collect()), anchor)
                }
            };
            let next = classes.len() as u32;
            terms.class.push(*classes.entry(shape).or_insert(next));
            terms.anchor.push(anchor);
        }
        terms
    }

    /// Where node `node`'s value sits for the output at `output`, if it reads a tap: two nodes
    /// of one key, at whichever outputs, have the same value.
    fn key(&self, node: NodeId, output: Position) -> Option<(u32, Position)> {
        let anchor = self.anchor[node as usize]?;
        Some((self.class[node as usize], [output[0] + anchor[0], output[1] + anchor[1], output[2] + anchor[2]]))
    }
}

/// The terms one straight-line run of a lane has computed, by shape and position: a run that
/// computes several outputs reads a term from here once an earlier output has computed it. A
/// run must not outlive the registers it names (a loop iteration writes its registers anew).
#[derive(Clone, Debug, Default)]
pub(crate) struct Computed(HashMap<(u32, Position), Reg>);

impl Computed {
    /// The register holding node `node` of the output at `output`, if the run has computed it.
    pub(crate) fn get(&self, terms: &Terms, node: NodeId, output: Position) -> Option<Reg> {
        terms.key(node, output).and_then(|key| self.0.get(&key).copied())
    }

    /// Records that `reg` holds node `node` of the output at `output`.
    pub(crate) fn insert(&mut self, terms: &Terms, node: NodeId, output: Position, reg: Reg) {
        if let Some(key) = terms.key(node, output) {
            self.0.insert(key, reg);
        }
    }
}

/// An offset as a position.
pub(crate) fn position(d: Offset) -> Position {
    [d.along(0) as i64, d.along(1) as i64, d.along(2) as i64]
}

fn minus(a: Position, b: Position) -> Position {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// The node with every operand id cleared: its operation, types and constants.
fn without_operands(node: Node) -> Node {
    match node {
        Node::Tap(..) | Node::Param(_) | Node::Const(_) => node,
        Node::Unary(op, _) => Node::Unary(op, 0),
        Node::Binary(op, _, _) => Node::Binary(op, 0, 0),
        Node::Compare(op, _, _) => Node::Compare(op, 0, 0),
        Node::Select { .. } => Node::Select { cond: 0, then: 0, otherwise: 0 },
        Node::Cast(ty, _) => Node::Cast(ty, 0),
        Node::MulAdd(..) => Node::MulAdd(0, 0, 0),
    }
}
