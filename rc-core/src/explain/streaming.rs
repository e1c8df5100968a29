//! `explain()` of what a tile streams: a machine-program [`Stmt::Loop`] (streaming along z or y,
//! fused steps) runs its body once per step; per loop, its steps and what one step loads and
//! stores, on the path interior tiles take.

use std::collections::BTreeSet;
use std::fmt::{self, Write};

use crate::machine::{Machine, Op, Stmt, TileTest};

/// Writes one line per loop of `machine`; without loops, a line saying that nothing streams if
/// `say_none` (2D and 3D, where streaming is what a tile may do), else nothing.
pub fn write(text: &mut String, machine: &Machine, say_none: bool) -> fmt::Result {
    let mut loops = Vec::new();
    find(&machine.body, "", &mut loops);
    if loops.is_empty() {
        if say_none {
            writeln!(text, "streams: nothing (straight-line code: no loop along z or y; each input row of the tile is loaded once)")?;
        }
        return Ok(());
    }
    for (path, times, body) in loops {
        let step = Step::of(body);
        let carries = match step.carried {
            0 => String::new(),
            n => format!(", and carries {n} values (partial results and input values still read) to the next step"),
        };
        writeln!(
            text,
            "streams {times} steps{path}: each step loads {} and stores {}{carries}",
            step.loads.describe("input", "loads"),
            step.stores.describe("output", "stores")
        )?;
    }
    Ok(())
}

/// Every loop in `stmts`, with the branch it sits in (` (interior tiles)`, ...), in order.
fn find<'a>(stmts: &'a [Stmt], path: &str, out: &mut Vec<(String, u32, &'a [Stmt])>) {
    for stmt in stmts {
        match stmt {
            Stmt::Op(_) => {}
            Stmt::Loop { times, body } => out.push((path.to_string(), *times, body)),
            Stmt::Branch { test, taken, fallback } => {
                let (yes, no) = match test {
                    TileTest::Inside { .. } => ("interior tiles", "boundary tiles"),
                    TileTest::Whole { .. } => ("whole output rows", "partial output rows"),
                    TileTest::RowsInside => ("tiles whose rows lie inside", "tiles with rows outside"),
                };
                find(taken, &format!(" ({yes})"), out);
                find(fallback, &format!(" ({no})"), out);
            }
        }
    }
}

/// Memory accesses of one kind in one step.
#[derive(Default)]
struct Accesses {
    values: usize,
    operations: usize,
    rows: BTreeSet<u32>,
}

impl Accesses {
    fn add(&mut self, values: usize, row: Option<u32>) {
        self.values += values;
        self.operations += 1;
        self.rows.extend(row);
    }

    /// `6 values (3 loads) of input rows 2 3`.
    fn describe(&self, rows: &str, operations: &str) -> String {
        if self.operations == 0 {
            return "nothing".to_string();
        }
        let list: Vec<String> = self.rows.iter().map(u32::to_string).collect();
        let of_rows = if list.is_empty() { String::new() } else { format!(" of {rows} rows {}", list.join(" ")) };
        format!("{} values ({} {operations}){of_rows}", self.values, self.operations)
    }
}

/// What one step of a loop moves, on the path interior tiles take (`taken` at every branch).
#[derive(Default)]
struct Step {
    loads: Accesses,
    stores: Accesses,
    /// Registers copied from one step to the next.
    carried: usize,
}

impl Step {
    fn of(body: &[Stmt]) -> Step {
        let mut step = Step::default();
        step.walk(body, 1);
        step
    }

    fn walk(&mut self, stmts: &[Stmt], times: u32) {
        for _ in 0..times {
            for stmt in stmts {
                match stmt {
                    Stmt::Op(op) => self.op(op),
                    Stmt::Branch { taken, .. } => self.walk(taken, 1),
                    Stmt::Loop { times, body } => self.walk(body, *times),
                }
            }
        }
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::Load { row, .. } | Op::Shared { row, .. } => self.loads.add(1, Some(*row)),
            Op::LoadVector { dsts, row, .. } | Op::LoadVectorRule { dsts, row, .. } => {
                self.loads.add(dsts.len(), Some(*row))
            }
            Op::ReadStage { dsts, .. } => self.loads.add(dsts.len(), None),
            Op::ReadRing { dsts, row, .. } => self.loads.add(dsts.len(), Some(*row)),
            Op::Store { row, .. } => self.stores.add(1, Some(*row)),
            Op::StoreVector { srcs, row, .. } => self.stores.add(srcs.len(), Some(*row)),
            Op::StoreOwned { srcs, row, .. } => self.stores.add(srcs.len(), Some(*row)),
            Op::Carry(copies) => self.carried += copies.len(),
            Op::Compute(_)
            | Op::StageBlock { .. }
            | Op::StageWarp { .. }
            | Op::Divisions(_)
            | Op::Advance
            | Op::Stream { .. }
            | Op::Neighbour { .. }
            | Op::StepRule { .. }
            | Op::RowRule { .. }
            | Op::PlaneRowsRule { .. }
            | Op::PlaneRule { .. }
            | Op::FetchPlane { .. }
            | Op::PutPlane { .. }
            | Op::BlockBarrier
            | Op::PrefetchL2 { .. }
            | Op::TurnRing => {}
        }
    }
}
