//! Sums that start from `+0.0`, as `let mut s = 0.0; for d in .. { s += w[d]; }` reads:
//! `((0.0 + a) + b) + ...`. The first addition is real (it turns a `-0.0` into `+0.0`), so
//! it cannot be dropped, but it can move to the end: `((a + b) + ...) + 0.0` is the same value
//! bit for bit, and at the end it can hide in the slow path of a division by a constant.
//!
//! Why the move is exact: let `c_k` be the sum with the leading `0.0` and `d_k` the one
//! without. Claim: `c_k = d_k + 0.0` (equal, except that a `-0.0` becomes `+0.0`). For `k = 0`
//! it is `0.0 + a = a + 0.0`. Step: an IEEE sum `x + t` is `-0.0` only when both are `-0.0`
//! (an exact cancellation gives `+0.0` under round to nearest, and a nonzero sum of floats
//! never rounds to zero). If `d_k` is not `-0.0`, then `c_k = d_k` and `d_{k+1} + 0.0 =
//! d_{k+1} = c_{k+1}` unless `d_{k+1}` is `-0.0`, which needs `d_k = -0.0`. If `d_k = -0.0`,
//! then `c_k = +0.0`, and `+0.0 + t` and `-0.0 + t` differ only for `t = -0.0`, where they are
//! `+0.0` and `-0.0`. NaN stays NaN and infinities add alike on both sides.
//!
//! Where the sum is then divided by a constant with a fast path ([`crate::reciprocal`]), the
//! fast path can divide `d` itself: its check fails for zero, infinite and NaN dividends, the
//! only ones where `d + 0.0` could differ from `d`, and the slow path adds the `0.0` before
//! dividing. One addition less per output, in kernels that are bound by instruction issue.

use std::collections::HashMap;

use crate::body::{BinaryOp, Body, Node, NodeId};
use crate::reciprocal::Reciprocal;
use crate::scalar::ScalarType;

/// `body` with its `f32` sums that start from `+0.0` and end in a division by a constant with
/// a fast path rewritten to add the `0.0` last (see the module documentation). Each sum's
/// partial results must have no reader but the next addition, so nothing else sees them
/// change. Other bodies come back unchanged.
pub fn hoist(body: &Body) -> Body {
    let nodes = body.nodes();
    let mut uses = vec![0u32; nodes.len()];
    let mut user: Vec<Option<NodeId>> = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for operand in node.operands() {
            uses[operand as usize] += 1;
            user[operand as usize] = Some(i as NodeId);
        }
    }
    uses[body.result() as usize] += 1;
    let is_positive_zero = |id: NodeId| matches!(nodes[id as usize], Node::Const(c) if c.ty == ScalarType::F32 && c.bits == 0);
    let adds = |id: NodeId, operand: NodeId| matches!(nodes[id as usize], Node::Binary(BinaryOp::Add, a, b) if a == operand || b == operand);

    // start node -> (the summand it passes on, the zero, the sum's last addition)
    let mut sums: HashMap<NodeId, (NodeId, NodeId, NodeId)> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let i = i as NodeId;
        let Node::Binary(BinaryOp::Add, a, b) = *node else { continue };
        let (zero, first) = match (is_positive_zero(a), is_positive_zero(b)) {
            (true, _) => (a, b),
            (_, true) => (b, a),
            _ => continue,
        };
        let mut last = i;
        while let (1, Some(next)) = (uses[last as usize], user[last as usize]) {
            if !adds(next, last) {
                break;
            }
            last = next;
        }
        let divided = match (uses[last as usize], user[last as usize]) {
            (1, Some(div)) if last != body.result() => match nodes[div as usize] {
                Node::Binary(BinaryOp::Div, x, divisor) if x == last => match nodes[divisor as usize] {
                    Node::Const(c) if c.ty == ScalarType::F32 => Reciprocal::of(f32::from_bits(c.bits as u32)).is_some(),
                    _ => false,
                },
                _ => false,
            },
            _ => false,
        };
        if last != i && divided {
            sums.insert(i, (first, zero, last));
        }
    }
    if sums.is_empty() {
        return body.clone();
    }

    let ends: HashMap<NodeId, NodeId> = sums.values().map(|&(_, zero, last)| (last, zero)).collect();
    let mut map: Vec<NodeId> = Vec::with_capacity(nodes.len());
    let mut out: Vec<Node> = Vec::with_capacity(nodes.len() + sums.len());
    for (i, node) in nodes.iter().enumerate() {
        let i = i as NodeId;
        if let Some(&(first, ..)) = sums.get(&i) {
            // The start adds nothing yet: its reader takes the summand directly.
            map.push(map[first as usize]);
            continue;
        }
        let remapped = remap(*node, &map);
        out.push(remapped);
        let mut id = (out.len() - 1) as NodeId;
        if let Some(&zero) = ends.get(&i) {
            out.push(Node::Binary(BinaryOp::Add, id, map[zero as usize]));
            id = (out.len() - 1) as NodeId;
        }
        map.push(id);
    }
    // Rebuilt from a valid body with types unchanged, so this does not fail; if it did, the
    // original body is still correct.
    Body::new(body.element(), body.fields(), body.params().to_vec(), body.radius(), out, map[body.result() as usize])
        .unwrap_or_else(|_| body.clone())
}

fn remap(node: Node, map: &[NodeId]) -> Node {
    let m = |id: NodeId| map[id as usize];
    match node {
        Node::Tap(..) | Node::Param(_) | Node::Const(_) => node,
        Node::Unary(op, a) => Node::Unary(op, m(a)),
        Node::Binary(op, a, b) => Node::Binary(op, m(a), m(b)),
        Node::Compare(op, a, b) => Node::Compare(op, m(a), m(b)),
        Node::Select { cond, then, otherwise } => Node::Select { cond: m(cond), then: m(then), otherwise: m(otherwise) },
        Node::Cast(ty, a) => Node::Cast(ty, m(a)),
        Node::MulAdd(a, b, c) => Node::MulAdd(m(a), m(b), m(c)),
    }
}
