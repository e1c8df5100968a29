//! The warp program: the straight-line instruction sequence every lane runs. The emulator runs
//! it on the CPU and the PTX back end prints it, instruction for instruction.

use std::collections::HashMap;

use crate::body::{BinaryOp, Body, CompareOp, Node, NodeId, UnaryOp};
use crate::distribution::{AffineLoad, Distribution, Layout, RoundRobin};
use crate::geometry::Dims;
use crate::error::{Error, ScheduleError};
use crate::machine::Machine;
use crate::order;
use crate::pattern::Pattern;
use crate::scalar::{Scalar, ScalarType};
use crate::strategy::Strategy;
use crate::schedule::{FetchId, LanePieces, Schedule, Source};
use crate::stage::MAX_STATIC_SHARED_BYTES;

/// A virtual register; its type is [`WarpProgram::reg_type`]. Assigned once.
pub type Reg = u32;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// Lanes `lanes.0..lanes.1` read tile element `at.element(lane)` from global memory under
    /// the boundary rule; other lanes never use it and hold zero. `cache` names the register it
    /// fills (`rc[k]`), or is `None` for a tap read straight from memory (strategy `naive`).
    Load { dst: Reg, cache: Option<u32>, at: AffineLoad, lanes: (u32, u32) },
    /// `elements` input elements copied into shared memory under the boundary rule, then a
    /// barrier. Block scope (strategy shared_memory): the block's, from its first tile's element
    /// 0 (input index `block * block_outputs - lead`); stage element `j` is element
    /// `j - k * tile_outputs` of the block's `k`-th tile. Warp scope (staged windows): each
    /// warp's own, from its tile's element 0 (input index `tile * tile_outputs - lead`).
    Stage { scope: StageScope, lead: u32, elements: u32 },
    /// Read tile element `at.element(lane)` of this warp from the block's staged tile.
    Shared { dst: Reg, at: AffineLoad },
    /// The register each lane contributes, chosen by lane: what an owner Publishes in a phase,
    /// or a local read whose register differs across lanes.
    Pick { dst: Reg, pieces: LanePieces },
    /// One warp shuffle: every lane reads `src` of lane `(lane + rotate) mod W`.
    Shuffle { dst: Reg, src: Reg, rotate: u32, fetch: FetchId },
    Param { dst: Reg, index: u32 },
    Const { dst: Reg, value: Scalar },
    Unary { dst: Reg, op: UnaryOp, a: Reg },
    Binary { dst: Reg, op: BinaryOp, a: Reg, b: Reg },
    Compare { dst: Reg, op: CompareOp, a: Reg, b: Reg },
    Select { dst: Reg, cond: Reg, then: Reg, otherwise: Reg },
    Cast { dst: Reg, a: Reg },
    MulAdd { dst: Reg, a: Reg, b: Reg, c: Reg },
    /// Lane `lane` writes `src` to tile output `at.element(lane)`, if that output exists.
    Store { src: Reg, output: u32, at: AffineLoad },
}

/// Who fills a stage in shared memory and shares it ([`Instr::Stage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageScope {
    /// The whole block, behind a block-wide barrier.
    Block,
    /// Each (logical) warp its own region, behind a warp barrier.
    Warp,
}

/// What one stencil compiles to.
#[derive(Clone, Debug)]
pub struct WarpProgram {
    pub pattern: Pattern,
    pub strategy: Strategy,
    pub element: ScalarType,
    pub params: Vec<ScalarType>,
    pub distribution: String,
    /// Consecutive elements a lane keeps in consecutive cache registers (the vector width).
    pub vector: u32,
    /// Cache loads read the block's stage ([`Instr::Stage`]) instead of global memory.
    pub staged: bool,
    pub schedule: Schedule,
    pub instrs: Vec<Instr>,
    /// Fetches in the order the program first performs them (local ones included).
    pub fetch_order: Vec<FetchId>,
    reg_types: Vec<ScalarType>,
    /// How it runs: what the back ends print, emulate and count.
    pub machine: Machine,
}

impl WarpProgram {
    /// Schedules and lowers `body` for `pattern`: a register cache with the round-robin
    /// distribution.
    pub fn compile(pattern: Pattern, body: &Body) -> Result<WarpProgram, Error> {
        WarpProgram::compile_with(pattern, Strategy::RegisterCache, &RoundRobin::new(&pattern), body)
    }

    /// Compiles with the distribution `layout` names for the register cache (the baselines map
    /// outputs to lanes as round-robin does).
    pub fn compile_for(pattern: Pattern, strategy: Strategy, layout: Layout, body: &Body) -> Result<WarpProgram, Error> {
        let distribution = match strategy {
            Strategy::RegisterCache => layout.build(&pattern)?,
            _ => Box::new(RoundRobin::new(&pattern)),
        };
        WarpProgram::compile_with(pattern, strategy, distribution.as_ref(), body)
    }

    pub fn compile_with(
        pattern: Pattern,
        strategy: Strategy,
        distribution: &dyn Distribution,
        body: &Body,
    ) -> Result<WarpProgram, Error> {
        // `0.0 + a + b + ...` summed as `(a + b + ...) + 0.0`, the same bits (see `zero_start`).
        let body = &crate::zero_start::hoist(body);
        if body.radius().dims() != Dims::One {
            return Err(ScheduleError::Dimensions { body: body.radius().dims() }.into());
        }
        let taps: Vec<i32> = body.used_taps().iter().map(|d| d.along_x()).collect();
        let schedule = Schedule::plan(pattern, strategy, distribution, &taps)?;
        let mut lower = Lower {
            body,
            schedule: &schedule,
            instrs: Vec::new(),
            reg_types: Vec::new(),
            cache: HashMap::new(),
            fetched: HashMap::new(),
            fetch_order: Vec::new(),
            invariant: HashMap::new(),
        };
        if strategy == Strategy::SharedMemory {
            let (lead, elements) = (distribution.lead(), pattern.block_elements());
            lower.instrs.push(Instr::Stage { scope: StageScope::Block, lead, elements });
        }
        if distribution.staged() {
            // From the tile's element 0 to its last lane's last cached element.
            let warp = pattern.warp();
            let elements = schedule.loads.iter().map(|plan| distribution.load(plan.reg).element(warp - 1) + 1).max().unwrap_or(0);
            let bytes = crate::stage::block_bytes(&pattern, distribution.vector(), body.element(), elements);
            if bytes > MAX_STATIC_SHARED_BYTES {
                let layout = format!("staged({})", distribution.vector());
                return Err(ScheduleError::StageTooLarge { layout, bytes, limit: MAX_STATIC_SHARED_BYTES }.into());
            }
            lower.instrs.push(Instr::Stage { scope: StageScope::Warp, lead: distribution.lead(), elements });
        }
        for plan in &schedule.loads {
            let dst = lower.reg(body.element());
            lower.instrs.push(Instr::Load { dst, cache: Some(plan.reg), at: distribution.load(plan.reg), lanes: plan.lanes });
            lower.cache.insert(plan.reg, dst);
        }
        let live = body.live();
        let varies = body.depends_on_taps();
        // Granule and window outputs of a thread share their window: interleaved as a
        // wavefront (a lane's rows are a warp apart in the tile, but their windows are alike,
        // so the wavefront runs over them as if they were consecutive). Round-robin outputs are
        // a warp apart: interleaving them made values fetched for one output live across the
        // others' chains, until ptxas spilled (f64, r >= 24).
        let outputs = pattern.outputs_per_thread();
        let order = if distribution.vector() > 1 {
            order::wavefront(body, &live, outputs as usize)
        } else {
            order::sequential(body, &live, outputs as usize)
        };
        let mut values: Vec<Vec<Reg>> = vec![vec![0; body.nodes().len()]; outputs as usize];
        for (p, id) in order {
            let node = body.nodes()[id as usize];
            values[p][id as usize] = match lower.invariant.get(&id) {
                Some(&reg) => reg,
                None => {
                    let reg = lower.node(p as u32, id, node, &values[p]);
                    if !varies[id as usize] {
                        lower.invariant.insert(id, reg);
                    }
                    reg
                }
            };
            if id == body.result() {
                let p = p as u32;
                let at = AffineLoad { base: distribution.output(0, p), stride: distribution.output(1, p) - distribution.output(0, p) };
                lower.instrs.push(Instr::Store { src: values[p as usize][id as usize], output: p, at });
            }
        }
        let Lower { instrs, reg_types, fetch_order, .. } = lower;
        let mut program = WarpProgram {
            pattern,
            strategy,
            element: body.element(),
            params: body.params().to_vec(),
            distribution: distribution.describe(),
            vector: distribution.vector(),
            staged: distribution.staged(),
            schedule,
            instrs,
            fetch_order,
            reg_types,
            machine: Machine::default(),
        };
        program.machine = Machine::lower(&program);
        Ok(program)
    }

    pub fn reg_type(&self, reg: Reg) -> ScalarType {
        self.reg_types[reg as usize]
    }

    pub fn reg_types(&self) -> &[ScalarType] {
        &self.reg_types
    }

    /// 32-bit warp shuffles each lane executes, per output it computes.
    pub fn shuffles_per_output(&self) -> f64 {
        let shuffles = self.instrs.iter().filter(|i| matches!(i, Instr::Shuffle { .. })).count() as f64;
        shuffles * self.element.words() as f64 / self.pattern.outputs_per_thread() as f64
    }

    /// 32-bit registers each lane spends on the cache.
    pub fn cache_registers(&self) -> u32 {
        self.schedule.loads.len() as u32 * self.element.words()
    }
}

/// Lowering state: body nodes to instructions, fetches emitted on first use.
struct Lower<'a> {
    body: &'a Body,
    schedule: &'a Schedule,
    instrs: Vec<Instr>,
    reg_types: Vec<ScalarType>,
    /// Cache register index -> virtual register holding it.
    cache: HashMap<u32, Reg>,
    fetched: HashMap<FetchId, Reg>,
    fetch_order: Vec<FetchId>,
    /// Nodes that do not depend on taps are computed once for all outputs.
    invariant: HashMap<NodeId, Reg>,
}

impl Lower<'_> {
    fn reg(&mut self, ty: ScalarType) -> Reg {
        self.reg_types.push(ty);
        self.reg_types.len() as Reg - 1
    }

    fn emit(&mut self, ty: ScalarType, make: impl FnOnce(Reg) -> Instr) -> Reg {
        let dst = self.reg(ty);
        self.instrs.push(make(dst));
        dst
    }

    fn pick(&mut self, pieces: &LanePieces) -> Reg {
        match pieces.uniform() {
            Some(reg) => self.cache[&reg],
            None => {
                let pieces = pieces.map(|reg| self.cache[&reg]);
                self.emit(self.body.element(), |dst| Instr::Pick { dst, pieces })
            }
        }
    }

    fn fetch(&mut self, p: u32, d: i32) -> Reg {
        // Schedule::plan made a fetch for every (output, used tap).
        let id = self.schedule.fetch_of(p, d).unwrap_or_default();
        if let Some(&reg) = self.fetched.get(&id) {
            return reg;
        }
        let reg = match &self.schedule.fetches[id].source {
            Source::Local(pieces) => self.pick(pieces),
            Source::Shuffle(phase) => {
                let src = self.pick(&phase.publish);
                let rotate = phase.rotate;
                self.emit(self.body.element(), |dst| Instr::Shuffle { dst, src, rotate, fetch: id })
            }
            Source::Global(at) => {
                let (at, warp) = (*at, self.schedule.pattern.warp());
                self.emit(self.body.element(), |dst| Instr::Load { dst, cache: None, at, lanes: (0, warp) })
            }
            Source::Shared(at) => {
                let at = *at;
                self.emit(self.body.element(), |dst| Instr::Shared { dst, at })
            }
        };
        self.fetched.insert(id, reg);
        self.fetch_order.push(id);
        reg
    }

    fn node(&mut self, p: u32, id: NodeId, node: Node, value: &[Reg]) -> Reg {
        let ty = self.body.ty(id);
        let v = |n: NodeId| value[n as usize];
        match node {
            Node::Tap(d) => self.fetch(p, d.along_x()),
            Node::Param(index) => self.emit(ty, |dst| Instr::Param { dst, index }),
            Node::Const(value) => self.emit(ty, |dst| Instr::Const { dst, value }),
            Node::Unary(op, a) => self.emit(ty, |dst| Instr::Unary { dst, op, a: v(a) }),
            Node::Binary(op, a, b) => self.emit(ty, |dst| Instr::Binary { dst, op, a: v(a), b: v(b) }),
            Node::Compare(op, a, b) => self.emit(ty, |dst| Instr::Compare { dst, op, a: v(a), b: v(b) }),
            Node::Select { cond, then, otherwise } => {
                self.emit(ty, |dst| Instr::Select { dst, cond: v(cond), then: v(then), otherwise: v(otherwise) })
            }
            Node::Cast(_, a) => self.emit(ty, |dst| Instr::Cast { dst, a: v(a) }),
            Node::MulAdd(a, b, c) => self.emit(ty, |dst| Instr::MulAdd { dst, a: v(a), b: v(b), c: v(c) }),
        }
    }
}

impl Instr {
    /// The virtual registers this instruction reads.
    pub fn uses(&self) -> Vec<Reg> {
        match self {
            Instr::Load { .. } | Instr::Stage { .. } | Instr::Shared { .. } | Instr::Param { .. } | Instr::Const { .. } => Vec::new(),
            Instr::Pick { pieces, .. } => pieces.0.iter().map(|&(_, reg)| reg).collect(),
            Instr::Shuffle { src, .. } => vec![*src],
            Instr::Unary { a, .. } | Instr::Cast { a, .. } => vec![*a],
            Instr::Binary { a, b, .. } | Instr::Compare { a, b, .. } => vec![*a, *b],
            Instr::Select { cond, then, otherwise, .. } => vec![*cond, *then, *otherwise],
            Instr::MulAdd { a, b, c, .. } => vec![*a, *b, *c],
            Instr::Store { src, .. } => vec![*src],
        }
    }

    /// The virtual register this instruction writes, if any.
    pub fn def(&self) -> Option<Reg> {
        match self {
            Instr::Load { dst, .. }
            | Instr::Shared { dst, .. }
            | Instr::Pick { dst, .. }
            | Instr::Shuffle { dst, .. }
            | Instr::Param { dst, .. }
            | Instr::Const { dst, .. }
            | Instr::Unary { dst, .. }
            | Instr::Binary { dst, .. }
            | Instr::Compare { dst, .. }
            | Instr::Select { dst, .. }
            | Instr::Cast { dst, .. }
            | Instr::MulAdd { dst, .. } => Some(*dst),
            Instr::Stage { .. } | Instr::Store { .. } => None,
        }
    }
}
