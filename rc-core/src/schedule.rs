//! The scheduler: which cache values each output's taps need, which are local and which need a
//! Read from another lane, and the Phases (one warp shuffle each) that deliver them without a
//! register-cache conflict.
//!
//! Every lane runs the same instructions, so the unit of scheduling is a *fetch*: for one
//! (output, tap) pair, the element each lane needs. Two pairs that need the same element in every
//! lane share one fetch (this happens across outputs when `2r >= warp`). A fetch whose elements
//! all sit in the reading lane is local; any other is one Phase: each lane Reads from one owner and
//! each owner Publishes one register, chosen per lane by a select.

use std::collections::HashMap;

use crate::distribution::{AffineLoad, Distribution, Slot};
use crate::error::ScheduleError;
use crate::pattern::Pattern;
use crate::strategy::Strategy;

/// Index into [`Schedule::fetches`].
pub type FetchId = usize;

/// A register choice that depends on the lane: lanes `pieces[i].0 ..` (up to the next piece's
/// first lane) use register `pieces[i].1`. The first piece starts at lane 0; neighbours differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LanePieces(pub Vec<(u32, u32)>);

impl LanePieces {
    /// Groups a per-lane register list into runs.
    pub fn from_lanes(regs: &[u32]) -> LanePieces {
        let mut pieces: Vec<(u32, u32)> = Vec::new();
        for (lane, &reg) in regs.iter().enumerate() {
            if pieces.last().map(|&(_, r)| r) != Some(reg) {
                pieces.push((lane as u32, reg));
            }
        }
        LanePieces(pieces)
    }

    /// The register lane `lane` uses.
    pub fn at(&self, lane: u32) -> u32 {
        self.0.iter().rev().find(|&&(first, _)| first <= lane).map_or(0, |&(_, reg)| reg)
    }

    /// The single register every lane uses, if there is one.
    pub fn uniform(&self) -> Option<u32> {
        match self.0.as_slice() {
            [(_, reg)] => Some(*reg),
            _ => None,
        }
    }

    /// The same choice with every register renamed by `f`.
    pub fn map(&self, f: impl Fn(u32) -> u32) -> LanePieces {
        LanePieces(self.0.iter().map(|&(lane, reg)| (lane, f(reg))).collect())
    }

    /// `(first lane, last lane, register)` for each run, given the warp width.
    pub fn runs(&self, warp: u32) -> Vec<(u32, u32, u32)> {
        let ends = self.0.iter().skip(1).map(|&(first, _)| first).chain([warp]);
        self.0.iter().zip(ends).map(|(&(first, reg), end)| (first, end - 1, reg)).collect()
    }
}

/// One lane's Read in a phase: the value of `rc[reg]` in lane `owner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    pub owner: u32,
    pub reg: u32,
}

/// One communication phase: a single warp shuffle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Lane `l` reads lane `(l + rotate) mod W`.
    pub rotate: u32,
    /// What each lane publishes.
    pub publish: LanePieces,
    /// What each lane reads, indexed by reader lane.
    pub reads: Vec<Read>,
}

impl Phase {
    /// Builds the phase in which every lane performs `reads[lane]`, proving it conflict-free
    /// (no owner asked for two different registers) and a rotation (what `shfl.idx` with source
    /// `lane + rotate` does). `what` names the fetch, for the error.
    pub fn new(reads: Vec<Read>, what: (u32, i32)) -> Result<Phase, ScheduleError> {
        let warp = reads.len() as u32;
        let mut published: Vec<Option<u32>> = vec![None; reads.len()];
        for read in &reads {
            let owner = &mut published[read.owner as usize];
            match *owner {
                Some(first) if first != read.reg => {
                    return Err(ScheduleError::Conflict {
                        output: what.0,
                        tap: what.1,
                        owner: read.owner,
                        first,
                        second: read.reg,
                    })
                }
                _ => *owner = Some(read.reg),
            }
        }
        let rotate = reads.first().map_or(0, |r| r.owner % warp);
        if reads.iter().enumerate().any(|(lane, read)| read.owner != (lane as u32 + rotate) % warp) {
            return Err(ScheduleError::NotARotation { output: what.0, tap: what.1 });
        }
        // An owner nobody reads may publish anything; repeating its neighbour saves a select.
        let mut regs = Vec::with_capacity(published.len());
        let mut last = published.iter().flatten().next().copied().unwrap_or(0);
        for p in &published {
            last = p.unwrap_or(last);
            regs.push(last);
        }
        Ok(Phase { rotate, publish: LanePieces::from_lanes(&regs), reads })
    }
}

/// How a fetch gets its value into every lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Every lane already holds its element: `rc[reg]`, chosen per lane.
    Local(LanePieces),
    /// One warp shuffle.
    Shuffle(Phase),
    /// A load of tile element `base + lane * stride` from global memory (strategy `naive`).
    Global(AffineLoad),
    /// A read of that element from the block's staged tile (strategy `shared_memory`).
    Shared(AffineLoad),
}

/// The element each lane needs for some (output, tap) pairs, and how it gets there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetch {
    /// Tile element per lane.
    pub elements: Vec<u32>,
    pub source: Source,
    /// The (output, tap) pairs served, in first-use order.
    pub uses: Vec<(u32, i32)>,
}

/// Which lanes load which cache register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    pub reg: u32,
    /// Lanes `first..end` load; the rest never use this register and hold zero.
    pub lanes: (u32, u32),
}

/// The complete register-cache schedule of one stencil.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub pattern: Pattern,
    pub strategy: Strategy,
    /// Tile element 0 is input index `tile * tile_outputs - lead`.
    pub lead: u32,
    pub taps: Vec<i32>,
    pub fetches: Vec<Fetch>,
    pub loads: Vec<LoadPlan>,
    by_use: HashMap<(u32, i32), FetchId>,
}

impl Schedule {
    /// The schedule of a tile whose lanes each load and keep their own elements, `loads` (one
    /// per register), and exchange nothing through a register-cache phase (fused time steps,
    /// [`crate::time_steps`]): tile element 0 is input index `tile * tile_outputs - lead`.
    pub(crate) fn owned(pattern: Pattern, lead: u32, loads: Vec<LoadPlan>) -> Schedule {
        let strategy = Strategy::RegisterCache;
        Schedule { pattern, strategy, lead, taps: Vec::new(), fetches: Vec::new(), loads, by_use: HashMap::new() }
    }

    /// Schedules the reads of `taps` (the offsets the body uses) for every output of a lane.
    pub fn plan(
        pattern: Pattern,
        strategy: Strategy,
        distribution: &dyn Distribution,
        taps: &[i32],
    ) -> Result<Schedule, ScheduleError> {
        let warp = pattern.warp();
        // Output j's centre is tile element j + centre: input index tile*T + j - lead + centre
        // must be the output's centre, j + r - shift.
        let centre = (pattern.radius().along_x() - pattern.shift() + distribution.lead()) as i64;
        let mut fetches: Vec<Fetch> = Vec::new();
        let mut by_elements: HashMap<Vec<u32>, FetchId> = HashMap::new();
        let mut by_use = HashMap::new();
        let mut used: Vec<Vec<bool>> = vec![vec![false; warp as usize]; distribution.registers() as usize];
        for p in 0..pattern.outputs_per_thread() {
            for &d in taps {
                let elements: Vec<u32> =
                    (0..warp).map(|lane| (distribution.output(lane, p) as i64 + centre + d as i64) as u32).collect();
                let id = match by_elements.get(&elements) {
                    Some(&id) => id,
                    None if strategy != Strategy::RegisterCache => {
                        // Outputs are affine in the lane, so are the elements they need.
                        let at = AffineLoad { base: elements[0], stride: elements[1] - elements[0] };
                        let source = match strategy {
                            Strategy::Naive => Source::Global(at),
                            _ => Source::Shared(at),
                        };
                        fetches.push(Fetch { elements: elements.clone(), source, uses: Vec::new() });
                        by_elements.insert(elements, fetches.len() - 1);
                        fetches.len() - 1
                    }
                    None => {
                        let local: Option<Vec<u32>> =
                            elements.iter().enumerate().map(|(lane, &e)| distribution.local(lane as u32, e)).collect();
                        let slots: Vec<Slot> = match &local {
                            Some(regs) => {
                                regs.iter().enumerate().map(|(lane, &reg)| Slot { lane: lane as u32, reg }).collect()
                            }
                            None => elements.iter().map(|&e| distribution.slot(e)).collect(),
                        };
                        for slot in &slots {
                            used[slot.reg as usize][slot.lane as usize] = true;
                        }
                        let source = if let Some(regs) = local {
                            Source::Local(LanePieces::from_lanes(&regs))
                        } else {
                            let reads = slots.iter().map(|s| Read { owner: s.lane, reg: s.reg }).collect();
                            Source::Shuffle(Phase::new(reads, (p, d))?)
                        };
                        fetches.push(Fetch { elements: elements.clone(), source, uses: Vec::new() });
                        by_elements.insert(elements, fetches.len() - 1);
                        fetches.len() - 1
                    }
                };
                fetches[id].uses.push((p, d));
                by_use.insert((p, d), id);
            }
        }
        let loads = used
            .iter()
            .enumerate()
            .filter_map(|(reg, lanes)| {
                let first = lanes.iter().position(|&u| u)? as u32;
                let end = lanes.iter().rposition(|&u| u)? as u32 + 1;
                Some(LoadPlan { reg: reg as u32, lanes: (first, end) })
            })
            .collect();
        Ok(Schedule { pattern, strategy, lead: distribution.lead(), taps: taps.to_vec(), fetches, loads, by_use })
    }

    /// The fetch that serves tap `d` of output `p`.
    pub fn fetch_of(&self, p: u32, d: i32) -> Option<FetchId> {
        self.by_use.get(&(p, d)).copied()
    }

    /// Fetches that need a warp shuffle.
    pub fn phases(&self) -> impl Iterator<Item = (FetchId, &Fetch, &Phase)> {
        self.fetches.iter().enumerate().filter_map(|(id, f)| match &f.source {
            Source::Shuffle(phase) => Some((id, f, phase)),
            _ => None,
        })
    }
}
