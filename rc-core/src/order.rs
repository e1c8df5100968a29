//! The order in which a thread computes its outputs' operations.
//!
//! Each output is a chain of dependent operations (a 65-tap sum is 65 adds in a row). Computing
//! one output after another leaves the GPU nothing to do while an add waits for the previous
//! one, so the outputs of a thread are interleaved. Each output's own operations keep their
//! order, so the results are unchanged; only the order across outputs is chosen here.

use crate::body::{Body, Node, NodeId};
use crate::geometry::Offset;

/// The order of `(output, node)` pairs to compute, for `outputs` consecutive outputs of a
/// thread and every live node.
///
/// The wavefront order: a node that reads taps up to offset `d` (the largest tap the output
/// has read by then) runs for output `x` in wave `x + d`, so wave `a` is every
/// operation that first needs input element `a`. The outputs of a wave are independent (as many
/// chains as outputs), and an element's readers all run in its wave: it is live for one wave,
/// however many outputs share it. Interleaving outputs in lock step instead (operation k of
/// every output, then k + 1) reads as many elements per step as outputs, and once the outputs
/// span more than one group their shared elements stay live from the first group to the last
/// (at r = 32, 16 outputs kept 100+ registers live; the wavefront keeps about 16 + a few).
///
/// Operations after an output's last tap (the division of an average) run after every output
/// has read its last tap, all outputs' together: the PTX back end gives a run of divisions by
/// one constant one range check and one branch to the exact slow path, and no shuffle may
/// follow that branch (ptxas cannot prove the warp converged after it and emits a second,
/// collective copy of every later shuffle). The finished sums wait in registers that the
/// unfinished outputs needed anyway.
pub fn wavefront(body: &Body, live: &[bool], outputs: usize) -> Vec<(usize, NodeId)> {
    let nodes = body.nodes();
    // The largest tap offset along x read at or before each node, in body order.
    let first = nodes.iter().find_map(|n| match n {
        Node::Tap(_, d) => Some(d.along_x()),
        _ => None,
    });
    let last_tap = nodes.iter().rposition(|n| matches!(n, Node::Tap(..)));
    let mut frontier = Vec::with_capacity(nodes.len());
    let mut reach = first.unwrap_or(0) as i64;
    for node in nodes {
        if let Node::Tap(_, d) = node {
            reach = reach.max(d.along_x() as i64);
        }
        frontier.push(reach);
    }
    let last = outputs as i64 - 1;
    let mut order: Vec<(i64, NodeId, usize)> = Vec::with_capacity(outputs * nodes.len());
    for x in 0..outputs {
        for (id, _) in nodes.iter().enumerate().filter(|(id, _)| live[*id]) {
            let finishing = last_tap.is_some_and(|t| id > t);
            let wave = if finishing { last } else { x as i64 } + frontier[id];
            order.push((wave, id as NodeId, x));
        }
    }
    // For one output, (wave, node) grows with the node: its operations keep their order.
    order.sort_unstable();
    order.into_iter().map(|(_, id, i)| (i, id)).collect()
}

/// One output after another, in body order (outputs a warp apart share no elements, so
/// interleaving them only lengthens what is live).
pub fn sequential(body: &Body, live: &[bool], outputs: usize) -> Vec<(usize, NodeId)> {
    (0..outputs).flat_map(|i| (0..body.nodes().len()).filter(|&id| live[id]).map(move |id| (i, id as NodeId))).collect()
}

/// Outputs two by two, the two in lock step (operation k of both, then k + 1): what 16-bit
/// elements take where outputs are a warp apart, as a tap of two neighbouring outputs travels in
/// one shuffle ([`crate::pairs`]) and each reader then takes its half at once, instead of one
/// output's whole chain later.
pub fn pairwise(body: &Body, live: &[bool], outputs: usize) -> Vec<(usize, NodeId)> {
    lock_step(body, live, outputs, 2)
}

/// Outputs in groups of `group`, each group in lock step (operation k of all of them, then
/// k + 1). The x outputs of a staged-plane row take one group: their taps of an input row are
/// one window, read from the ring and done with before the next row's; the wavefront, whose
/// frontier is the largest x offset read so far, would run each output through every input row
/// (the x offsets repeat row after row) before the next began, every window live until the last.
pub fn lock_step(body: &Body, live: &[bool], outputs: usize, group: usize) -> Vec<(usize, NodeId)> {
    (0..outputs)
        .step_by(group)
        .flat_map(|first| {
            let outputs = first..outputs.min(first + group);
            (0..body.nodes().len())
                .filter(|&id| live[id])
                .flat_map(move |id| outputs.clone().map(move |i| (i, id as NodeId)))
        })
        .collect()
}

/// The `(output row, output, node)` triples of `rows` output rows that share their input rows
/// (staged planes), each row in `row_order`: input rows in order, and at each one every output
/// row runs on up to its first operation on a tap of a later input row (`input_row(row, tap)`),
/// as bench/probes/staged3d.cu adds each input row's window to every output row that reads it.
/// A tap itself computes nothing (its value is read from the ring before its first reader), so
/// it never holds a row back. An input row's values then live while the rows that read it pass
/// it, not from the first row that reads it to the last (box r = 2 with four rows one after the
/// other: 245 registers). Each row's operations keep their order, so results are unchanged.
pub fn across_rows(
    body: &Body,
    row_order: &[(usize, NodeId)],
    rows: u32,
    input_row: impl Fn(u32, Offset) -> u32,
) -> Vec<(u32, usize, NodeId)> {
    let nodes = body.nodes();
    // The last input row that node `id` of output row `row` reads a tap of directly.
    let reads = |row: u32, id: NodeId| {
        let tap = |id: NodeId| match nodes[id as usize] {
            Node::Tap(_, d) => Some(input_row(row, d)),
            _ => None,
        };
        match nodes[id as usize] {
            Node::Tap(..) => None,
            node => node.operands().into_iter().filter_map(tap).max(),
        }
    };
    let last = (0..rows).flat_map(|row| row_order.iter().filter_map(move |&(_, id)| reads(row, id))).max().unwrap_or(0);
    let mut next = vec![0usize; rows as usize];
    let mut order = Vec::with_capacity(rows as usize * row_order.len());
    for input in 0..=last {
        for row in 0..rows {
            let at = &mut next[row as usize];
            while let Some(&(p, id)) = row_order.get(*at) {
                if reads(row, id).is_some_and(|r| r > input) {
                    break;
                }
                order.push((row, p, id));
                *at += 1;
            }
        }
    }
    order
}
