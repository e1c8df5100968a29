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
//!
//! Where the sum is then multiplied by a constant `k > 0` (`s * (1.0 / 81.0)`), `(d + 0.0) * k`
//! is `d.mul_add(k, 0.0)`, one fused operation: for a nonzero finite `d` the exact product is
//! nonzero, so adding `0.0` to it before the one rounding changes nothing, and the product
//! rounds as `d * k` does; for `d = -0.0` both give `+0.0` (`-0.0 * k + 0.0` is `+0.0`, and
//! `+0.0 * k` is `+0.0` as `k` is positive); infinities and NaN pass through alike. A zero or
//! negative `k` breaks the zero case (`-1.0 * 0.0` is `-0.0`, the fused form `+0.0`), so only
//! positive constants qualify. The 2D box r = 4 then issues 80 additions per output, not 81.

use std::collections::HashMap;

use crate::body::{BinaryOp, Body, Node, NodeId};
use crate::reciprocal::Reciprocal;
use crate::scalar::ScalarType;

/// How a sum from `+0.0` ends, where the rewrite pays.
#[derive(Clone, Copy)]
enum End {
    /// In a division by an `f32` constant with a fast path: the `0.0` is added last.
    Divided,
    /// In node `product`, a multiplication by the positive constant `scale`: the product
    /// becomes `sum.mul_add(scale, 0.0)`.
    Scaled { product: NodeId, scale: NodeId },
}

/// `body` with its sums that start from `+0.0` and end in a division by an `f32` constant
/// with a fast path, or in a multiplication by a positive constant, rewritten to add the
/// `0.0` last (see the module documentation). Each sum's partial results must have no reader
/// but the next addition, so nothing else sees them change. Other bodies come back unchanged.
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
    // A result is read by its output's store.
    for &result in body.results() {
        uses[result as usize] += 1;
    }
    let is_positive_zero = |id: NodeId| matches!(nodes[id as usize], Node::Const(c) if matches!(c.ty, ScalarType::F32 | ScalarType::F64) && c.bits == 0);
    let is_positive = |id: NodeId| match nodes[id as usize] {
        Node::Const(c) if c.ty == ScalarType::F32 => f32::from_bits(c.bits as u32) > 0.0,
        Node::Const(c) if c.ty == ScalarType::F64 => f64::from_bits(c.bits) > 0.0,
        _ => false,
    };
    let adds = |id: NodeId, operand: NodeId| matches!(nodes[id as usize], Node::Binary(BinaryOp::Add, a, b) if a == operand || b == operand);

    // start node -> (the summand it passes on, the zero, the sum's last addition, its end)
    let mut sums: HashMap<NodeId, (NodeId, NodeId, NodeId, End)> = HashMap::new();
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
        let end = match (uses[last as usize], user[last as usize]) {
            (1, Some(reader)) if !body.results().contains(&last) => match nodes[reader as usize] {
                Node::Binary(BinaryOp::Div, x, divisor) if x == last => match nodes[divisor as usize] {
                    Node::Const(c)
                        if c.ty == ScalarType::F32 && Reciprocal::of(f32::from_bits(c.bits as u32)).is_some() =>
                    {
                        Some(End::Divided)
                    }
                    _ => None,
                },
                Node::Binary(BinaryOp::Mul, a, b) => {
                    let scale = if a == last { b } else { a };
                    is_positive(scale).then_some(End::Scaled { product: reader, scale })
                }
                _ => None,
            },
            _ => None,
        };
        if let (true, Some(end)) = (last != i, end) {
            sums.insert(i, (first, zero, last, end));
        }
    }
    if sums.is_empty() {
        return body.clone();
    }

    // The last addition of a divided sum -> its zero; a scaled sum's product -> (sum, scale, zero).
    let mut ends: HashMap<NodeId, NodeId> = HashMap::new();
    let mut products: HashMap<NodeId, (NodeId, NodeId, NodeId)> = HashMap::new();
    for &(_, zero, last, end) in sums.values() {
        match end {
            End::Divided => {
                ends.insert(last, zero);
            }
            End::Scaled { product, scale } => {
                products.insert(product, (last, scale, zero));
            }
        }
    }
    let mut map: Vec<NodeId> = Vec::with_capacity(nodes.len());
    let mut out: Vec<Node> = Vec::with_capacity(nodes.len() + sums.len());
    for (i, node) in nodes.iter().enumerate() {
        let i = i as NodeId;
        if let Some(&(first, ..)) = sums.get(&i) {
            // The start adds nothing yet: its reader takes the summand directly.
            map.push(map[first as usize]);
            continue;
        }
        let remapped = match products.get(&i) {
            Some(&(sum, scale, zero)) => Node::MulAdd(map[sum as usize], map[scale as usize], map[zero as usize]),
            None => remap(*node, &map),
        };
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
    let results = body.results().iter().map(|&result| map[result as usize]).collect();
    Body::new(body.element(), body.fields(), body.params().to_vec(), body.radius(), out, results)
        .unwrap_or_else(|_| body.clone())
}

fn remap(node: Node, map: &[NodeId]) -> Node {
    let m = |id: NodeId| map[id as usize];
    match node {
        Node::Tap(..) | Node::Param(_) | Node::Const(_) => node,
        Node::Unary(op, a) => Node::Unary(op, m(a)),
        Node::Binary(op, a, b) => Node::Binary(op, m(a), m(b)),
        Node::Compare(op, a, b) => Node::Compare(op, m(a), m(b)),
        Node::Select { cond, then, otherwise } => {
            Node::Select { cond: m(cond), then: m(then), otherwise: m(otherwise) }
        }
        Node::Cast(ty, a) => Node::Cast(ty, m(a)),
        Node::MulAdd(a, b, c) => Node::MulAdd(m(a), m(b), m(c)),
    }
}
