//! What each pass of the driver promises the passes after it, checked on what it built (in
//! tests and debug builds, [`crate::driver::compile`]):
//!
//! - [`Pass::Normalize`]: the body is still a body ([`Body::new`] accepts its parts), with as
//!   many results as before, and of the tile's dimensions (fused steps: no more).
//! - [`Pass::Admit`] only refuses; what it builds for fused steps (the tile) is checked where it
//!   is used.
//! - [`Pass::Schedule`]: every lane's fetch for every output and tap is the element that
//!   output's tap needs, read from a register of a lane that loads that element there (its own,
//!   or the lane it shuffles from), and no lane publishes two registers in one shuffle.
//! - [`Pass::Select`]: every register is written once, before any instruction reads it, and
//!   every output field of every output of every row is stored exactly once.
//! - [`Pass::Pipeline`]: every register is still written once, and read after it is written or
//!   as the copy a step carries from the one before.
//! - [`Pass::Place`]: the launch map's index program reads no register before writing it and
//!   writes each of the kind it computes ([`crate::machine::index::IndexProgram::verify`]).
//! - [`Pass::Lower`]: the machine program's checks ([`crate::machine::verify`]).

use std::collections::{HashMap, HashSet};

use super::{Draft, Pass, Steps};
use crate::body::Body;
use crate::machine::index::IndexRegs;
use crate::program::{Instr, Reg};
use crate::schedule::Source;
use crate::strategy::Strategy;

/// A pass that broke what it promises: a bug in rc, never the user's stencil.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("after the {pass} pass: {failure}, which is a bug in rc's code generator: please report it with the stencil")]
pub struct CheckError {
    pub pass: Pass,
    pub failure: String,
}

/// Checks what `pass` built in `draft`.
pub fn after(pass: Pass, draft: &Draft) -> Result<(), CheckError> {
    let fail = |failure: String| CheckError { pass, failure };
    match pass {
        Pass::Normalize => normalized(draft).map_err(fail),
        Pass::Admit => Ok(()),
        Pass::Schedule => scheduled(draft).map_err(fail),
        Pass::Select | Pass::Pipeline => selected(draft, pass == Pass::Pipeline).map_err(fail),
        Pass::Place => {
            let launch = draft.launch.as_ref().ok_or_else(|| fail("no launch map".into()))?;
            let placement = launch.placement(&mut IndexRegs::default(), None);
            placement.program.verify().map_err(|e| fail(e.to_string()))
        }
        Pass::Lower => {
            let program = draft.program.as_ref().ok_or_else(|| fail("no program".into()))?;
            crate::machine::verify::verify(program).map_err(|e| fail(e.to_string()))
        }
    }
}

/// The part a pass needs of what an earlier pass built, or the failure that it is missing.
pub(super) fn built<T>(part: Option<T>, pass: Pass, what: &str) -> Result<T, CheckError> {
    part.ok_or_else(|| CheckError { pass, failure: format!("{what}, which an earlier pass builds, is missing") })
}

fn normalized(draft: &Draft) -> Result<(), String> {
    let b = &draft.body;
    let rebuilt =
        Body::new(b.element(), b.fields(), b.params().to_vec(), b.radius(), b.nodes().to_vec(), b.results().to_vec());
    if rebuilt.as_ref() != Ok(b) {
        return Err(format!("the body is no longer well formed: {rebuilt:?}"));
    }
    let (body, tile) = (b.radius().dims(), draft.pattern.dims());
    let fits = match draft.steps {
        Steps::One { .. } => body == tile,
        Steps::Fused(_) => body <= tile,
    };
    match fits {
        true => Ok(()),
        false => Err(format!("a {body:?} body on a {tile:?} tile")),
    }
}

fn scheduled(draft: &Draft) -> Result<(), String> {
    let Steps::One { strategy, distribution } = draft.steps else { return Ok(()) };
    let schedule = draft.schedule.as_ref().ok_or("no schedule")?;
    let pattern = draft.pattern.along_x();
    let warp = pattern.warp();
    // Output p's centre is tile element `output(lane, p) + centre` ([`Schedule::plan`]).
    let centre = i64::from(pattern.radius().along_x()) - i64::from(pattern.shift()) + i64::from(distribution.lead());
    let loaded: HashMap<u32, (u32, u32)> = schedule.loads.iter().map(|plan| (plan.reg, plan.lanes)).collect();
    let holds = |lane: u32, reg: u32, element: u32| {
        let loads = loaded.get(&reg).is_some_and(|&(first, end)| (first..end).contains(&lane));
        loads && distribution.load(reg).element(lane) == element
    };
    for p in 0..pattern.outputs_per_thread() {
        for &d in &schedule.taps {
            let id = schedule.fetch_of(p, d).ok_or(format!("output {p} tap {d} has no fetch"))?;
            let fetch = &schedule.fetches[id];
            for lane in 0..warp {
                let needed = i64::from(distribution.output(lane, p)) + centre + i64::from(d);
                if i64::from(fetch.elements[lane as usize]) != needed {
                    return Err(format!(
                        "lane {lane} fetches element {} for output {p} tap {d}, which needs {needed}",
                        fetch.elements[lane as usize]
                    ));
                }
            }
            if strategy != Strategy::RegisterCache {
                continue;
            }
            match &fetch.source {
                Source::Local(pieces) => {
                    if let Some(lane) =
                        (0..warp).find(|&lane| !holds(lane, pieces.at(lane), fetch.elements[lane as usize]))
                    {
                        return Err(format!(
                            "lane {lane} reads its own rc[{}] for output {p} tap {d}, which does not hold the element",
                            pieces.at(lane)
                        ));
                    }
                }
                Source::Shuffle(phase) => {
                    let mut published: HashMap<u32, u32> = HashMap::new();
                    for (lane, read) in phase.reads.iter().enumerate() {
                        if !holds(read.owner, read.reg, fetch.elements[lane]) {
                            return Err(format!("lane {lane} reads rc[{}] of lane {} for output {p} tap {d}, which does not hold the element", read.reg, read.owner));
                        }
                        if *published.entry(read.owner).or_insert(read.reg) != read.reg {
                            return Err(format!(
                                "lane {} publishes two registers in the shuffle for output {p} tap {d}",
                                read.owner
                            ));
                        }
                    }
                }
                Source::Global(_) | Source::Shared(_) => {
                    return Err(format!("the register cache loads output {p} tap {d} from memory"))
                }
            }
        }
    }
    Ok(())
}

/// Registers written once and read after they are written (or carried, once `pipelined`), and
/// every output stored once.
fn selected(draft: &Draft, pipelined: bool) -> Result<(), String> {
    let Some(selected) = draft.selected.as_ref() else { return Ok(()) };
    // Without a pipeline the pipeline pass changed nothing that select's check has not seen.
    if pipelined && draft.pipeline.is_none() {
        return Ok(());
    }
    // Every kernel the macro and the cost model compile runs this: a register's state is a
    // slot indexed by the register, not a hash set.
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Unwritten,
        Written,
        Carried,
    }
    let mut state = vec![State::Unwritten; selected.reg_types.len()];
    if let (Some(pipeline), true) = (&draft.pipeline, pipelined) {
        for &(dst, _) in &pipeline.carries {
            if let Some(slot) = state.get_mut(dst as usize) {
                *slot = State::Carried;
            }
        }
    }
    let at = |state: &[State], reg: Reg| state.get(reg as usize).copied().unwrap_or(State::Unwritten);
    let mut stored: HashSet<(u32, u32, u32)> = HashSet::new();
    for (i, instr) in selected.instrs.iter().enumerate() {
        if let Some(reg) = instr.uses().into_iter().find(|&reg| at(&state, reg) == State::Unwritten) {
            return Err(format!("instruction {i} ({instr:?}) reads r{reg} before any instruction writes it"));
        }
        if let Some(reg) = instr.def() {
            match state.get_mut(reg as usize) {
                Some(slot) if *slot == State::Unwritten => *slot = State::Written,
                _ => return Err(format!("instruction {i} writes r{reg}, which is written elsewhere too")),
            }
        }
        if let &Instr::Store { field, output, row, .. } = instr {
            if !stored.insert((field, output, row)) {
                return Err(format!("output field {field} of output {output} of row {row} is stored twice"));
            }
        }
    }
    let rows = draft.pattern.step().output_rows();
    let expected = draft.body.output_fields() * draft.pattern.outputs_per_thread() * rows;
    match stored.len() as u32 == expected {
        true => Ok(()),
        false => Err(format!("{} stores where the step has {expected} outputs", stored.len())),
    }
}
