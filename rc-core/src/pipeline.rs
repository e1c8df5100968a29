//! Software pipelining of a streaming tile's step ([`Pattern::streams`]).
//!
//! A step of a 3D tile that streams along z computes one output plane from the `S + 1` input
//! planes of its box (`S = 2rz`, plane `s` of output plane `o` is input plane `o + s - rz`).
//! Consecutive output planes share input planes, so a step loads only its box's newest plane,
//! and every instruction is evaluated as soon as its input planes are there: an instruction
//! whose taps reach at most plane `t` of the box (its *stage*) runs in the step that loads
//! plane `t` of its output's box, `S - t` steps before the step that stores that output. The
//! values that cross steps are then partial results (the first rows of a sum, say), not whole
//! input rows, which is what keeps a 3D box in registers; the operations and their order are
//! the body's own, so the results are bit for bit the same.
//!
//! A step `k` therefore runs stage `t` of output plane `k + S - t`. Its first `S` steps
//! ([`Pipeline::runs_in_prologue`]) run only the stages of planes that exist, and store
//! nothing; after them every step stores the plane stage `S` finishes. A value computed at
//! stage `t` and read at stage `u > t` is read from a copy carried `u - t` steps
//! ([`Pipeline::carries`]); values that do not depend on the input (parameters,
//! constants) are recomputed in every step and carried nowhere.
//!
//! [`Pattern::streams`]: crate::pattern::Pattern::streams
//! [`Pipeline::carries`]: crate::pipeline::Pipeline::carries

use std::collections::{BTreeMap, HashMap};

use crate::pattern::Pattern;
use crate::program::{Instr, Reg};
use crate::scalar::ScalarType;

/// A streaming step, pipelined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pipeline {
    /// The box plane each register's value depends on at most (`None`: on no input), by
    /// register.
    pub stages: Vec<Option<u32>>,
    /// The newest plane of the box: the stage that stores.
    pub last: u32,
    /// The copies at the end of a step, `(dst, src)` in order.
    pub carries: Vec<(Reg, Reg)>,
}

impl Pipeline {
    /// Pipelines the step `instrs` of a streaming tile whose step is `step`: `cache` maps (input
    /// field, input row of the step, cache register) to the register a load fills. Loads of all but the
    /// newest plane go (that plane's loads fill every register a plane below reads, see
    /// `row_loads`); each operand reads the newest plane's register or a carried copy of the
    /// value it named. New registers (the copies) are added to `reg_types`.
    pub fn build(
        step: Pattern,
        instrs: Vec<Instr>,
        cache: &HashMap<(u32, u32, u32), Reg>,
        reg_types: &mut Vec<ScalarType>,
    ) -> (Vec<Instr>, Pipeline) {
        let (planes, rows) = step.box_rows();
        let outputs_per_row = step.outputs_per_thread();
        let last = planes - 1;
        // A cache register of plane s, row y (of a field): the newest plane's register for row y
        // of that field, as it was s steps' worth of stages ago.
        let view: HashMap<Reg, (Reg, u32)> = cache
            .iter()
            .filter_map(|(&(field, row, reg), &vreg)| {
                let newest = *cache.get(&(field, last * rows + row % rows, reg))?;
                Some((vreg, (newest, row / rows)))
            })
            .collect();
        let mut stages: Vec<Option<u32>> = vec![None; reg_types.len()];
        let mut copies: BTreeMap<Reg, Vec<Reg>> = BTreeMap::new();
        let mut out = Vec::with_capacity(instrs.len());
        for instr in instrs {
            if matches!(instr, Instr::Load { cache: Some(_), row, .. } if row < last * rows) {
                continue;
            }
            let operand = |reg: Reg| match view.get(&reg) {
                Some(&(newest, s)) => (newest, Some(s)),
                None => (reg, stages[reg as usize]),
            };
            let stage = match instr {
                Instr::Store { .. } => Some(last),
                // Loads fill the newest plane; every step makes them.
                Instr::Load { .. } | Instr::Shared { .. } | Instr::Stage { .. } => None,
                _ => instr.uses().into_iter().map(|r| operand(r).1).max().flatten(),
            };
            let mut rename: HashMap<Reg, Reg> = HashMap::new();
            for reg in instr.uses() {
                let (base, at) = operand(reg);
                let distance = match (stage, at) {
                    (Some(u), Some(t)) => u - t,
                    _ => 0,
                };
                let read = match distance {
                    0 => base,
                    d => {
                        let chain = copies.entry(base).or_default();
                        while chain.len() < d as usize {
                            reg_types.push(reg_types[base as usize]);
                            chain.push(reg_types.len() as Reg - 1);
                        }
                        chain[d as usize - 1]
                    }
                };
                rename.insert(reg, read);
            }
            if let Some(def) = instr.def() {
                stages[def as usize] = stage;
            }
            out.push(instr.renamed(|reg| rename.get(&reg).copied().unwrap_or(reg)));
        }
        // Output row by output row as the body was lowered, and within a row the oldest
        // plane's stage first: a value carried into this step is read before the value that
        // replaces it is computed (so ptxas keeps both in one register and the copies vanish),
        // and each row of the newest plane is dead once the rows after it no longer read it.
        // Input-independent values go first in their row, as every stage may read them.
        if stages.iter().any(Option::is_some) {
            let mut stores = 0;
            let mut keyed: Vec<((u32, u32), Instr)> = out
                .into_iter()
                .map(|instr| {
                    let row = stores / outputs_per_row;
                    let stage = match instr {
                        Instr::Store { .. } => {
                            stores += 1;
                            1
                        }
                        _ => instr.def().and_then(|d| stages[d as usize]).map_or(0, |t| 1 + last - t),
                    };
                    ((row, stage), instr)
                })
                .collect();
            keyed.sort_by_key(|&(key, _)| key);
            out = keyed.into_iter().map(|(_, instr)| instr).collect();
        }
        stages.resize(reg_types.len(), None);
        // The oldest copy first, so each copy is read before it is overwritten.
        let carries = copies
            .into_iter()
            .flat_map(|(base, chain)| {
                let sources: Vec<Reg> = std::iter::once(base).chain(chain.iter().copied()).collect();
                (0..chain.len()).rev().map(move |d| (chain[d], sources[d]))
            })
            .collect();
        (out, Pipeline { stages, last, carries })
    }

    /// Whether `instr` runs in the `k`-th step of the prologue (`k < last`), when only the
    /// stages up to `k` have an output plane of the tile: instructions of those stages, and
    /// the input-independent ones they read (in `needed`, see [`Pipeline::prologue_needs`]).
    pub fn runs_in_prologue(&self, instr: &Instr, k: u32, needed: &[bool]) -> bool {
        match instr {
            Instr::Store { .. } => false,
            _ => match instr.def().map(|d| (d, self.stages[d as usize])) {
                Some((_, Some(t))) => t <= k,
                Some((d, None)) => needed[d as usize],
                None => false,
            },
        }
    }

    /// The input-independent registers read by an instruction of a stage below `last`: what the
    /// prologue computes besides its stages.
    pub fn prologue_needs(&self, instrs: &[Instr]) -> Vec<bool> {
        let mut needed = vec![false; self.stages.len()];
        for instr in instrs.iter().rev() {
            let Some(def) = instr.def() else { continue };
            let runs = match self.stages[def as usize] {
                Some(t) => t < self.last,
                None => needed[def as usize],
            };
            if runs {
                for reg in instr.uses() {
                    if self.stages[reg as usize].is_none() {
                        needed[reg as usize] = true;
                    }
                }
            }
        }
        needed
    }
}
