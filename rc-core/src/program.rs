//! The warp program: the straight-line instruction sequence every lane runs. The emulator runs
//! it on the CPU and the PTX back end prints it, instruction for instruction.

use std::collections::HashMap;

use crate::body::{BinaryOp, Body, CompareOp, Node, NodeId, UnaryOp};
use crate::distribution::{AffineLoad, Distribution, Layout, RoundRobin};
use crate::error::{Error, ScheduleError};
use crate::order;
use crate::pattern::Pattern;
use crate::scalar::{Scalar, ScalarType};
use crate::strategy::Strategy;
use crate::schedule::{FetchId, LanePieces, Schedule, Source};

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
        let schedule = Schedule::plan(pattern, strategy, distribution, &body.used_taps())?;
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
        Ok(WarpProgram {
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
        })
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

    /// Registers holding an `f32` constant, and its value: divisions by them may take the
    /// fast path of [`crate::reciprocal::Reciprocal`] (the PTX back end's and the cost model's).
    pub fn f32_constants(&self) -> HashMap<Reg, f32> {
        self.instrs
            .iter()
            .filter_map(|i| match i {
                Instr::Const { dst, value } if value.ty == ScalarType::F32 => Some((*dst, f32::from_bits(value.bits as u32))),
                _ => None,
            })
            .collect()
    }

    /// The fast path of `instr` when it is an `f32` division by a constant register of
    /// `constants` ([`WarpProgram::f32_constants`]) that has one: `(dst, dividend, divisor,
    /// reciprocal)`. The one rule the PTX back end, the cost model and
    /// [`WarpProgram::normalized_dividends`] apply.
    pub fn fast_division(&self, instr: &Instr, constants: &HashMap<Reg, f32>) -> Option<(Reg, Reg, Reg, crate::reciprocal::Reciprocal)> {
        match *instr {
            Instr::Binary { dst, op: BinaryOp::Div, a, b } if self.reg_type(dst) == ScalarType::F32 => {
                Some((dst, a, b, crate::reciprocal::Reciprocal::of(*constants.get(&b)?)?))
            }
            _ => None,
        }
    }

    /// Dividends that are a sum plus `+0.0` ([`crate::zero_start`]) divided by a constant with
    /// a fast path, read by nothing else: the dividend's register and the sum's. The PTX back
    /// end divides the sum on the fast path and adds the `0.0` only on the slow one; the cost
    /// model does not count the addition.
    pub fn normalized_dividends(&self) -> HashMap<Reg, Reg> {
        let constants = self.f32_constants();
        let zero = |reg: Reg| constants.get(&reg).is_some_and(|c| c.to_bits() == 0);
        let mut uses: HashMap<Reg, u32> = HashMap::new();
        for instr in &self.instrs {
            for reg in instr.uses() {
                *uses.entry(reg).or_default() += 1;
            }
        }
        let fast_dividends: std::collections::HashSet<Reg> =
            self.instrs.iter().filter_map(|i| self.fast_division(i, &constants)).map(|(_, a, ..)| a).collect();
        self.instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Binary { dst, op: BinaryOp::Add, a, b }
                    if self.reg_type(dst) == ScalarType::F32 && fast_dividends.contains(&dst) && uses.get(&dst) == Some(&1) =>
                {
                    match (zero(a), zero(b)) {
                        (_, true) => Some((dst, a)),
                        (true, _) => Some((dst, b)),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect()
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
            Node::Tap(d) => self.fetch(p, d),
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

/// 32-bit registers a lane needs besides its values and shuffle source lanes: the input and
/// output pointers, `n`, `n_out`, `n - 1` and the tile start (64-bit each), the lane, and address
/// scratch. Chosen so that the estimate's median error against ptxas is 0 on rc's test kernels
/// (see `tests/registers.rs`).
pub const ADDRESSING_REGISTERS: u32 = 8;

/// The most shared memory a kernel may declare statically (48 KiB on every GPU since sm_20).
pub const MAX_STATIC_SHARED_BYTES: u32 = 48 * 1024;

/// The most 32-bit registers a thread can have.
pub const MAX_REGISTERS_PER_THREAD: u32 = 255;

/// Estimated 32-bit registers per thread of a warp program, from its own instructions: the peak
/// of simultaneously live values (f64 as two registers, predicates not counted: they have their
/// own file), split into cache registers and other values live at that point, plus a fixed
/// addressing overhead. ptxas reorders and reuses, so this is an estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterEstimate {
    /// Cache registers live at the peak.
    pub cache: u32,
    /// Other values (fetched taps, intermediates, results) live at the peak.
    pub live_values: u32,
    /// Pointers, lengths, lane and tile start ([`ADDRESSING_REGISTERS`]), plus one shuffle
    /// source lane (`lane + k`) per distinct rotation.
    pub addressing: u32,
    /// `cache + live_values + addressing`.
    pub total: u32,
}

impl RegisterEstimate {
    /// The registers no schedule avoids: the cache registers live at the peak (each loaded just
    /// before its first reader) and the addressing. ptxas reorders the
    /// interleaved outputs and often keeps far fewer values live at once than the program order
    /// does (down to half the estimate for the register cache, a tenth for shared memory, which
    /// it reloads), so only this part is certain.
    pub fn floor(&self) -> u32 {
        self.cache + self.addressing
    }

    /// Whether even [`RegisterEstimate::floor`] exceeds what a thread can have: the kernel
    /// cannot keep its cache in registers.
    pub fn exceeds_limit(&self) -> bool {
        self.floor() > MAX_REGISTERS_PER_THREAD
    }
}

impl std::fmt::Display for RegisterEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cached registers + {} live values + {} for addressing = {} registers per thread",
            self.cache, self.live_values, self.addressing, self.total
        )
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

impl WarpProgram {
    /// The register estimate: a backward liveness pass over the instructions in the order the
    /// PTX back end prints them (with a vector distribution, each cache load just before its
    /// first reader and the stores last).
    pub fn register_estimate(&self) -> RegisterEstimate {
        let order: Vec<&Instr> = if self.vector == 1 && !self.staged {
            self.instrs.iter().collect()
        } else {
            // The back end prints each cache load just before its first reader, and the stores last.
            let is_load = |i: &Instr| matches!(i, Instr::Load { cache: Some(_), .. });
            let mut pending: HashMap<Reg, &Instr> =
                self.instrs.iter().filter(|i| is_load(i)).filter_map(|i| Some((i.def()?, i))).collect();
            let mut order = Vec::with_capacity(self.instrs.len());
            for instr in self.instrs.iter().filter(|i| !is_load(i) && !matches!(i, Instr::Store { .. })) {
                for u in instr.uses() {
                    if let Some(load) = pending.remove(&u) {
                        order.push(load);
                    }
                }
                order.push(instr);
            }
            order.extend(self.instrs.iter().filter(|i| is_load(i) && i.def().is_some_and(|d| pending.contains_key(&d))));
            order.extend(self.instrs.iter().filter(|i| matches!(i, Instr::Store { .. })));
            order
        };
        let words = |reg: Reg| match self.reg_type(reg) {
            ScalarType::Bool => 0,
            ty => ty.words(),
        };
        let is_cache = |instr: &Instr| matches!(instr, Instr::Load { cache: Some(_), .. });
        let cache_regs: std::collections::HashSet<Reg> =
            self.instrs.iter().filter(|i| is_cache(i)).filter_map(Instr::def).collect();
        let mut live = vec![false; self.reg_types.len()];
        let (mut cache_live, mut other_live) = (0u32, 0u32);
        let (mut best_cache, mut best_other) = (0u32, 0u32);
        let account = |reg: Reg, add: bool, cache_live: &mut u32, other_live: &mut u32| {
            let w = words(reg);
            let slot = if cache_regs.contains(&reg) { cache_live } else { other_live };
            if add {
                *slot += w;
            } else {
                *slot -= w;
            }
        };
        // Live-out of the last instruction is empty; walk backwards. The peak is taken just
        // after each definition (its result and everything live across it).
        for instr in order.iter().rev() {
            if let Some(d) = instr.def() {
                if !live[d as usize] {
                    // A value written and never read still takes a register at its definition.
                    live[d as usize] = true;
                    account(d, true, &mut cache_live, &mut other_live);
                }
                if cache_live + other_live > best_cache + best_other {
                    (best_cache, best_other) = (cache_live, other_live);
                }
                live[d as usize] = false;
                account(d, false, &mut cache_live, &mut other_live);
            }
            for u in instr.uses() {
                if !live[u as usize] {
                    live[u as usize] = true;
                    account(u, true, &mut cache_live, &mut other_live);
                }
            }
            if cache_live + other_live > best_cache + best_other {
                (best_cache, best_other) = (cache_live, other_live);
            }
        }
        // The PTX keeps `lane + k` for each shuffle rotation k in a register of its own.
        let rotations: std::collections::HashSet<u32> =
            self.instrs.iter().filter_map(|i| match i { Instr::Shuffle { rotate, .. } => Some(*rotate), _ => None }).collect();
        let addressing = ADDRESSING_REGISTERS + rotations.len() as u32;
        RegisterEstimate { cache: best_cache, live_values: best_other, addressing, total: best_cache + best_other + addressing }
    }
}
