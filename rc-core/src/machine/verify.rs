//! The machine program's verifier: what every back end takes for granted, checked after the
//! program is built (in tests and debug builds, [`crate::program`]), so a lowering bug fails
//! where it is made and not as a wrong number on a GPU.
//!
//! - No store writes a value computed from a register that no operation on its path wrote.
//!   Values are followed through every operation (a copy of an unwritten value is unwritten
//!   too): a branch's arms each start from what was written before it, and only what both
//!   write counts after it; a loop's first iteration starts from what was written before the
//!   loop, its second from what the first left. Unwritten registers may be read where the
//!   result is not stored: a fused 3D column's first steps compute on planes not loaded yet
//!   and keep none of it.
//! - Vector loads without the boundary rule ([`Op::LoadVector`]) run only where the tile lies
//!   inside the input ([`TileTest::Inside`]), vector loads under the rule along x only
//!   ([`Op::LoadVectorRule`]) where its rows do ([`TileTest::RowsInside`] or
//!   [`TileTest::Inside`]), and whole-row vector stores ([`Op::StoreVector`]) only where their
//!   row exists whole ([`TileTest::Whole`]).
//!
//! Shuffles need no check of their own: control flow branches only on tile tests, which hold
//! for the whole warp, so every shuffle runs on every lane.

use std::collections::HashSet;

use super::{Op, Stmt, TileTest};
use crate::program::{Reg, WarpProgram};

/// A machine program that breaks what the back ends rely on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("{what} stores a value computed from register r{reg}, which no operation on its path writes before, which is a bug in rc's code generator: please report it with the stencil")]
    ReadBeforeWrite { reg: Reg, what: String },
    #[error("{what} runs outside a path whose test ({needs}) makes it safe, which is a bug in rc's code generator: please report it with the stencil")]
    Unguarded { what: String, needs: &'static str },
}

/// Checks `program`'s machine program ([`VerifyError`] says what failed).
pub fn verify(program: &WarpProgram) -> Result<(), VerifyError> {
    let mut checker = Checker { tests: Vec::new() };
    checker.block(&program.machine.body, HashSet::new()).map(|_| ())
}

struct Checker {
    /// The tests of the enclosing taken arms (fallback arms hold no test).
    tests: Vec<TileTest>,
}

impl Checker {
    /// Checks `stmts` starting from the registers in `clean` (holding values computed from
    /// written registers only); returns the clean registers after them.
    fn block(&mut self, stmts: &[Stmt], mut clean: HashSet<Reg>) -> Result<HashSet<Reg>, VerifyError> {
        for stmt in stmts {
            clean = match stmt {
                Stmt::Op(op) => {
                    self.guarded(op)?;
                    for (reads, writes) in effects(op) {
                        let unwritten = reads.iter().find(|reg| !clean.contains(reg));
                        match (unwritten, stores(op)) {
                            (Some(&reg), true) => {
                                return Err(VerifyError::ReadBeforeWrite { reg, what: describe(op) });
                            }
                            (Some(_), false) => writes.iter().for_each(|reg| {
                                clean.remove(reg);
                            }),
                            (None, _) => clean.extend(writes),
                        }
                    }
                    clean
                }
                Stmt::Branch { test, taken, fallback } => {
                    self.tests.push(*test);
                    let after_taken = self.block(taken, clean.clone());
                    self.tests.pop();
                    let after_fallback = self.block(fallback, clean)?;
                    after_taken?.intersection(&after_fallback).copied().collect()
                }
                // The first iteration from what was written before the loop, the next from
                // what the first left (the values it carries).
                Stmt::Loop { times, body } => {
                    let first = self.block(body, clean)?;
                    match times {
                        1 => first,
                        _ => self.block(body, first)?,
                    }
                }
            };
        }
        Ok(clean)
    }

    fn guarded(&self, op: &Op) -> Result<(), VerifyError> {
        let inside = |test: &TileTest| matches!(test, TileTest::Inside { .. });
        let (safe, needs) = match op {
            Op::LoadVector { .. } => (self.tests.iter().any(inside), "the tile inside the input"),
            Op::LoadVectorRule { .. } => (
                self.tests.iter().any(|test| inside(test) || *test == TileTest::RowsInside),
                "the tile's rows inside the input",
            ),
            // A tile inside the input has every output of every row (the output lies within
            // the input), so the interior path stores whole rows untested.
            Op::StoreVector { row, .. } => (
                self.tests.iter().any(|test| inside(test) || *test == TileTest::Whole { row: *row }),
                "its output row whole",
            ),
            _ => (true, ""),
        };
        match safe {
            true => Ok(()),
            false => Err(VerifyError::Unguarded { what: describe(op), needs }),
        }
    }
}

/// What `op` reads and writes, in steps applied in order (a carry's copies one after the other,
/// a division's operands before its quotient).
fn effects(op: &Op) -> Vec<(Vec<Reg>, Vec<Reg>)> {
    let one = |reads: Vec<Reg>, writes: Vec<Reg>| vec![(reads, writes)];
    match op {
        Op::Compute(instr) => one(instr.uses(), instr.def().into_iter().collect()),
        Op::Load { dst, .. } | Op::Shared { dst, .. } => one(Vec::new(), vec![*dst]),
        Op::LoadVector { dsts, .. }
        | Op::LoadVectorRule { dsts, .. }
        | Op::ReadStage { dsts, .. }
        | Op::ReadRing { dsts, .. } => one(Vec::new(), dsts.clone()),
        Op::Divisions(run) => run
            .iter()
            .map(|d| {
                // The slow path computes the dividend itself where it adds +0.0 to a sum.
                let writes = std::iter::once(d.dst).chain(d.sum.map(|_| d.dividend)).collect();
                (vec![d.dividend_on_fast_path(), d.divisor], writes)
            })
            .collect(),
        Op::Store { src, .. } => one(vec![*src], Vec::new()),
        Op::StoreVector { srcs, .. } | Op::StoreOwned { srcs, .. } => one(srcs.clone(), Vec::new()),
        Op::Carry(pairs) => pairs.iter().map(|&(dst, src)| (vec![src], vec![dst])).collect(),
        Op::Neighbour { dst, src, .. } => one(vec![*src], vec![*dst]),
        Op::StepRule { values, dsts } => one(values.clone(), dsts.clone()),
        // The new row, and past the input's first row the window's newest (what a row below
        // the input takes under `clamp`); at the first row the rule writes the whole window.
        Op::RowRule { row, window, first, .. } => {
            let newest = window.last().filter(|_| !first).into_iter().flatten();
            let reads = row.iter().chain(newest).copied().collect();
            one(reads, row.iter().chain(window.iter().flatten()).copied().collect())
        }
        Op::PlaneRowsRule { rows, dsts, .. } => {
            one(rows.iter().flatten().copied().collect(), dsts.iter().flatten().copied().collect())
        }
        Op::PlaneRule { planes, .. } => {
            let regs: Vec<Reg> = planes.iter().flatten().copied().collect();
            one(regs.clone(), regs)
        }
        Op::PrefetchL2 { .. }
        | Op::StageBlock { .. }
        | Op::StageWarp { .. }
        | Op::Advance
        | Op::Stream { .. }
        | Op::FetchPlane { .. }
        | Op::PutPlane { .. }
        | Op::BlockBarrier
        | Op::TurnRing => Vec::new(),
    }
}

/// Whether `op` writes to memory what it reads: there a value computed from an unwritten
/// register is wrong output. Not a fused tile's stores ([`Op::StoreOwned`]): a register there
/// holds every lane's element, and the halo lanes', which the steps compute from planes and
/// rows not loaded yet, are not stored; which lanes store is a matter of lanes, not registers.
fn stores(op: &Op) -> bool {
    matches!(op, Op::Store { .. } | Op::StoreVector { .. })
}

/// A short name of `op` for an error.
fn describe(op: &Op) -> String {
    let text = format!("{op:?}");
    let name: String = text.chars().take_while(|c| c.is_alphanumeric()).collect();
    match op {
        Op::Compute(instr) => format!("the operation {:?}", instr),
        _ => format!("the operation {name}"),
    }
}
