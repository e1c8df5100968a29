//! The warp program: the straight-line instruction sequence every lane runs. The emulator runs
//! it on the CPU and the PTX back end prints it, instruction for instruction.

use std::collections::HashMap;

use crate::body::{BinaryOp, Body, CompareOp, Node, NodeId, UnaryOp};
use crate::distribution::{AffineLoad, Distribution, RoundRobin};
use crate::error::{Error, LengthError, ScheduleError};
use crate::geometry::{Dims, Extent, Offset};
use crate::launch_map::{LaunchMap, OutputRows};
use crate::layout::Layout;
use crate::machine::{Kernel, Machine};
use crate::order;
use crate::pairs::{whole_words, ShuffledFetches};
use crate::pattern::{LaunchShape, Pattern};
use crate::pipeline::Pipeline;
use crate::ring::PlaneRing;
use crate::scalar::{Scalar, ScalarType};
use crate::schedule::{FetchId, LanePieces, LoadPlan, Schedule, Source};
use crate::stage::{MAX_SHARED_BYTES_PER_BLOCK, MAX_STATIC_SHARED_BYTES};
use crate::strategy::Strategy;
use crate::time_steps::FusedTile;

/// A virtual register; its type is [`WarpProgram::reg_type`]. Assigned once.
pub type Reg = u32;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// Lanes `lanes.0..lanes.1` read tile element `at.element(lane)` of input row `row` of the
    /// tile ([`Pattern::input_rows`]; 0 in 1D) of input field `field` from global memory under
    /// the boundary rule; other lanes never use it and hold zero. `cache` names the register it
    /// fills (`rc[k]`), or is `None` for a tap read straight from memory (strategy `naive`).
    Load {
        dst: Reg,
        cache: Option<u32>,
        at: AffineLoad,
        lanes: (u32, u32),
        field: u32,
        row: u32,
    },
    /// `elements` input elements copied into shared memory under the boundary rule, then a
    /// barrier. Block scope (strategy shared_memory): the block's, from its first tile's element
    /// 0 (input index `block * block_outputs - lead`); stage element `j` is element
    /// `j - k * tile_outputs` of the block's `k`-th tile. Warp scope (staged windows): each
    /// warp's own, from its tile's element 0 (input index `tile * tile_outputs - lead`). Each
    /// input field has its own stage.
    Stage {
        scope: StageScope,
        lead: u32,
        elements: u32,
        field: u32,
    },
    /// Read tile element `at.element(lane)` of input row `row` of input field `field` of this
    /// warp from the block's staged tile.
    Shared {
        dst: Reg,
        at: AffineLoad,
        field: u32,
        row: u32,
    },
    /// The register each lane contributes, chosen by lane: what an owner Publishes in a phase,
    /// or a local read whose register differs across lanes.
    Pick {
        dst: Reg,
        pieces: LanePieces,
    },
    /// One warp shuffle: every lane reads `src` of lane `(lane + rotate) mod W`. It serves
    /// `fetches`: one, or two whose 16-bit elements travel packed in one word ([`crate::pairs`]).
    Shuffle {
        dst: Reg,
        src: Reg,
        rotate: u32,
        fetches: Vec<FetchId>,
    },
    /// Two 16-bit elements in one 32-bit word: `lo` in its low half, `hi` in its high half.
    Pack {
        dst: Reg,
        lo: Reg,
        hi: Reg,
    },
    /// The 16-bit element in the high (`high`) or low half of 32-bit word `src`.
    Unpack {
        dst: Reg,
        src: Reg,
        high: bool,
    },
    /// The word of 16-bit elements that straddles two packed words: the high half of `lo` in
    /// its low half, the low half of `hi` in its high half.
    Straddle {
        dst: Reg,
        lo: Reg,
        hi: Reg,
    },
    Param {
        dst: Reg,
        index: u32,
    },
    Const {
        dst: Reg,
        value: Scalar,
    },
    Unary {
        dst: Reg,
        op: UnaryOp,
        a: Reg,
    },
    Binary {
        dst: Reg,
        op: BinaryOp,
        a: Reg,
        b: Reg,
    },
    Compare {
        dst: Reg,
        op: CompareOp,
        a: Reg,
        b: Reg,
    },
    Select {
        dst: Reg,
        cond: Reg,
        then: Reg,
        otherwise: Reg,
    },
    Cast {
        dst: Reg,
        a: Reg,
    },
    MulAdd {
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// Lane `lane` writes `src` to tile output `at.element(lane)` of output row `row` (0 in
    /// 1D) of output field `field`, if that output exists. `output` is the lane's output along
    /// x it stores.
    Store {
        src: Reg,
        field: u32,
        output: u32,
        at: AffineLoad,
        row: u32,
    },
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
    /// The tile the program computes: the declared pattern, or for a 2D tile that streams its
    /// rows the 3D tile it is compiled as ([`Pattern::lifted`]).
    pub pattern: Pattern,
    /// The pattern as declared: its dimensions are those of the grids the kernel takes.
    pub declared: Pattern,
    pub strategy: Strategy,
    pub element: ScalarType,
    /// Input fields: each one its own buffer, cache registers and stage, on one schedule.
    pub fields: u32,
    /// Output fields: each one its own buffer, stored from its own result of the body.
    pub output_fields: u32,
    pub params: Vec<ScalarType>,
    pub distribution: String,
    /// Consecutive elements a lane keeps in consecutive cache registers (the vector width).
    pub vector: u32,
    /// Cache loads read the block's stage ([`Instr::Stage`]) instead of global memory.
    pub staged: bool,
    /// Staged planes: cache loads read the block's ring of input planes ([`crate::ring`]);
    /// the tile streams along z without a pipeline, each step reading every plane of its box.
    pub ring: Option<PlaneRing>,
    /// Which block runs which tile ([`crate::launch_map`]): the PTX prints it, the emulator runs
    /// it, the runtime launches its shape.
    pub launch: LaunchMap,
    pub schedule: Schedule,
    /// Cache registers of one input row of the tile: row `k`'s `rc[i]` of the x schedule is
    /// cache register `k * row_registers + i`.
    pub row_registers: u32,
    pub instrs: Vec<Instr>,
    /// How a streaming tile's steps overlap ([`Pattern::streams`]); `None` for other tiles.
    pub pipeline: Option<Pipeline>,
    /// The fused tile of a program that runs several time steps per launch
    /// ([`WarpProgram::compile_steps`]); `None` for one step.
    pub fused: Option<FusedTile>,
    /// Fetches along x in the order the program first performs them (local ones included), in
    /// any row.
    pub fetch_order: Vec<FetchId>,
    pub(crate) reg_types: Vec<ScalarType>,
    /// How it runs: what the back ends print, emulate and count.
    pub machine: Machine,
    /// The driver's passes the program went through, in order ([`crate::driver`]).
    pub passes: Vec<crate::driver::Pass>,
}

impl WarpProgram {
    /// Schedules and lowers `body` for `pattern`: a register cache with the round-robin
    /// distribution.
    pub fn compile(pattern: Pattern, body: &Body) -> Result<WarpProgram, Error> {
        WarpProgram::compile_with(pattern, Strategy::RegisterCache, &RoundRobin::new(&pattern), body)
    }

    /// Compiles with the distribution `layout` names for the register cache (the baselines map
    /// outputs to lanes as round-robin does).
    pub fn compile_for(
        pattern: Pattern,
        strategy: Strategy,
        layout: Layout,
        body: &Body,
    ) -> Result<WarpProgram, Error> {
        let distribution = layout.build_for(strategy, &pattern)?;
        WarpProgram::compile_with(pattern, strategy, distribution.as_ref(), body)
    }

    /// [`WarpProgram::compile_for`] for a cost model's candidate, without the driver's checks
    /// ([`crate::driver::compile_candidate`]).
    pub(crate) fn candidate_for(pattern: Pattern, layout: Layout, body: &Body) -> Result<WarpProgram, Error> {
        let strategy = Strategy::RegisterCache;
        let distribution = layout.build_for(strategy, &pattern)?;
        crate::driver::compile_candidate(
            pattern,
            body,
            crate::driver::Steps::One { strategy, distribution: distribution.as_ref() },
        )
    }

    /// The launch of kernel `kernel` of this program from an input of shape `input` to rows
    /// `rows` of an output of shape `output`, both as declared ([`LaunchMap::launch_shape`] on
    /// the shapes the program's tile runs on); none where the kernel has no tile.
    pub fn launch_shape(
        &self,
        kernel: Kernel,
        input: Extent,
        output: Extent,
        rows: OutputRows,
    ) -> Result<Option<LaunchShape>, LengthError> {
        let (input, output) = (self.declared.lifted_shape(input), self.declared.lifted_shape(output));
        self.launch.launch_shape(kernel, input, output, rows)
    }

    /// Compiles one time step per launch with `distribution` for the register cache, through
    /// the driver's passes ([`crate::driver`]).
    pub fn compile_with(
        pattern: Pattern,
        strategy: Strategy,
        distribution: &dyn Distribution,
        body: &Body,
    ) -> Result<WarpProgram, Error> {
        crate::driver::compile(pattern, body, crate::driver::Steps::One { strategy, distribution })
    }

    /// The axis of the declared grids that the program's axis `axis` lies along: itself, except
    /// for a 2D tile that streams its rows, whose z is the grids' y and whose y is a length of 1
    /// the grids do not have (`None`).
    pub fn declared_axis(&self, axis: u32) -> Option<u32> {
        match (self.declared.streams_rows(), axis) {
            (false, _) | (true, 0) => Some(axis),
            (true, 1) => None,
            (true, _) => Some(axis - 1),
        }
    }

    pub fn reg_type(&self, reg: Reg) -> ScalarType {
        self.reg_types[reg as usize]
    }

    pub fn reg_types(&self) -> &[ScalarType] {
        &self.reg_types
    }

    /// Stores each lane makes per output row of a step: one per output along x it computes, in
    /// each output field.
    pub fn stores_per_row(&self) -> u32 {
        self.pattern.outputs_per_thread() * self.output_fields
    }

    /// 32-bit warp shuffles each lane executes, per output it computes (of every output row of
    /// the tile).
    pub fn shuffles_per_output(&self) -> f64 {
        let shuffles = self.instrs.iter().filter(|i| matches!(i, Instr::Shuffle { .. })).count() as f64;
        let outputs = self.pattern.outputs_per_thread() * self.pattern.output_rows();
        shuffles * self.element.words() as f64 / outputs as f64
    }

    /// Shuffles the program performs, and how many of them move two 16-bit elements packed in
    /// one word ([`crate::pairs`]).
    pub fn shuffled_words(&self) -> (usize, usize) {
        let fetches = self.instrs.iter().filter_map(|i| match i {
            Instr::Shuffle { fetches, .. } => Some(fetches.len()),
            _ => None,
        });
        fetches.fold((0, 0), |(words, paired), n| (words + 1, paired + usize::from(n == 2)))
    }

    /// 32-bit registers each lane spends on the cache (of one input field): 16-bit elements
    /// two to a register where they pack ([`crate::pairs::packs_cache`]).
    pub fn cache_registers(&self) -> u32 {
        if crate::pairs::packs_cache(self.element, &self.schedule) {
            let pairs: std::collections::BTreeSet<u32> = self.schedule.loads.iter().map(|plan| plan.reg / 2).collect();
            return pairs.len() as u32;
        }
        self.schedule.loads.len() as u32 * self.element.words()
    }
}

/// The one-step route's checks of a tile before it is scheduled ([`crate::driver::Pass::Admit`]):
/// what straight-line code per input row can hold, and which distributions a tile of these
/// dimensions can use.
pub(crate) fn admit(pattern: Pattern, strategy: Strategy, distribution: &dyn Distribution) -> Result<(), Error> {
    if pattern.dims() != Dims::One {
        // Every input row of a step is straight-line code with its own cache registers.
        let (radius, step) = (pattern.radius(), pattern.step());
        let widest = radius.components().into_iter().max().unwrap_or(0);
        if step.input_rows() > Pattern::MAX_INPUT_ROWS || widest > Pattern::MAX_GRID_RADIUS {
            let (rows, max_rows, max_radius) = (step.input_rows(), Pattern::MAX_INPUT_ROWS, Pattern::MAX_GRID_RADIUS);
            return Err(ScheduleError::GridTile { radius, rows, max_rows, max_radius }.into());
        }
    }
    if distribution.staged() && pattern.dims() != Dims::One {
        return Err(ScheduleError::StagedDimensions { dims: pattern.dims() }.into());
    }
    if distribution.ring() && (pattern.dims() != Dims::Three || strategy != Strategy::RegisterCache) {
        return Err(ScheduleError::PlanesDimensions { dims: pattern.dims() }.into());
    }
    Ok(())
}

/// The x offsets of the taps `body` reads, each once, in the order it first reads them: what
/// the schedule along x fetches ([`crate::driver::Pass::Schedule`]). Along x every row of the
/// tile is the 1D tile, so one schedule serves every row; a tap's outer offsets only choose the
/// row.
pub(crate) fn taps_along_x(body: &Body) -> Vec<i32> {
    let mut taps: Vec<i32> = Vec::new();
    for d in body.used_taps() {
        if !taps.contains(&d.along_x()) {
            taps.push(d.along_x());
        }
    }
    taps
}

/// What instruction selection gives ([`crate::driver::Pass::Select`]): the step's instructions
/// and what the later passes need of how they were made.
#[derive(Clone, Debug)]
pub struct Selected {
    pub instrs: Vec<Instr>,
    pub reg_types: Vec<ScalarType>,
    /// (field, input row, cache register index) -> the register a load fills.
    pub cache: HashMap<(u32, u32, u32), Reg>,
    pub fetch_order: Vec<FetchId>,
    pub ring: Option<PlaneRing>,
}

/// Instruction selection of one step of `pattern` ([`crate::driver::Pass::Select`]): the
/// stages in shared memory, every cache load, the body's nodes for every output in the order
/// the tile evaluates them (fetches emitted on first use), and a store per output field and
/// output. Refuses a stage or ring of planes larger than shared memory.
pub(crate) fn select(
    pattern: Pattern,
    strategy: Strategy,
    distribution: &dyn Distribution,
    body: &Body,
    schedule: &Schedule,
) -> Result<Selected, Error> {
    // The rows the instructions name: one step's (one plane of a streaming 3D tile).
    let step = pattern.step();
    let mut lower = Lower {
        body,
        step,
        schedule,
        instrs: Vec::new(),
        reg_types: Vec::new(),
        cache: HashMap::new(),
        fetched: HashMap::new(),
        fetch_order: Vec::new(),
        invariant: HashMap::new(),
        shuffled: ShuffledFetches::of(pattern, body, schedule),
        halves: HashMap::new(),
        packed: crate::pairs::packs_cache(body.element(), schedule),
        words: HashMap::new(),
    };
    let fields = body.fields();
    if strategy == Strategy::SharedMemory {
        let (lead, elements) = (distribution.lead(), pattern.block_elements());
        let bytes = crate::stage::block_stage_bytes(&pattern, body.element(), elements) * fields;
        // Past the limit the module would fail to load on the GPU: refused here, in every dimension.
        if bytes > MAX_STATIC_SHARED_BYTES {
            let (dims, rows, limit) = (pattern.dims(), step.input_rows(), MAX_STATIC_SHARED_BYTES);
            return Err(ScheduleError::BlockStageTooLarge { dims, bytes, fields, rows, elements, limit }.into());
        }
        for field in 0..fields {
            lower.instrs.push(Instr::Stage { scope: StageScope::Block, lead, elements, field });
        }
    }
    if distribution.staged() {
        // From the tile's element 0 to its last lane's last cached element.
        let warp = pattern.warp();
        let elements =
            schedule.loads.iter().map(|plan| distribution.load(plan.reg).element(warp - 1) + 1).max().unwrap_or(0);
        let bytes = crate::stage::block_bytes(&pattern, distribution.vector(), body.element(), elements) * fields;
        if bytes > MAX_STATIC_SHARED_BYTES {
            let layout = format!("staged({})", distribution.vector());
            return Err(ScheduleError::StageTooLarge { layout, bytes, limit: MAX_STATIC_SHARED_BYTES }.into());
        }
        for field in 0..fields {
            lower.instrs.push(Instr::Stage { scope: StageScope::Warp, lead: distribution.lead(), elements, field });
        }
    }
    let ring = match distribution.ring() {
        true => {
            // From the tile's element 0 to its last lane's last window element.
            let warp = pattern.warp();
            let elements =
                schedule.loads.iter().map(|plan| distribution.load(plan.reg).element(warp - 1) + 1).max().unwrap_or(1);
            let ring = PlaneRing::new(&pattern, distribution.vector(), body.element(), elements);
            let bytes = ring.field_bytes() * fields;
            // Past 48 KiB the ring is dynamic shared memory ([`crate::machine::Machine::dynamic_shared_bytes`]).
            if bytes > MAX_SHARED_BYTES_PER_BLOCK {
                let (layout, limit) = (format!("planes({})", distribution.vector()), MAX_SHARED_BYTES_PER_BLOCK);
                let (slots, rows, row_elements) = (ring.slots, ring.rows, ring.row_elements);
                return Err(
                    ScheduleError::RingTooLarge { layout, slots, rows, row_elements, fields, bytes, limit }.into()
                );
            }
            Some(ring)
        }
        false => None,
    };
    let registers = distribution.registers();
    for field in 0..fields {
        for (row, plans) in row_loads(pattern, body, field, schedule, registers, ring.is_some()).into_iter().enumerate()
        {
            let row = row as u32;
            // Each field's cache registers after the previous field's, row after row.
            let first = (field * pattern.input_rows() + row) * registers;
            for plan in plans {
                let dst = lower.reg(body.element());
                let at = distribution.load(plan.reg);
                lower.instrs.push(Instr::Load {
                    dst,
                    cache: Some(first + plan.reg),
                    at,
                    lanes: plan.lanes,
                    field,
                    row,
                });
                lower.cache.insert((field, row, plan.reg), dst);
            }
        }
    }
    let live = body.live();
    let varies = body.depends_on_taps();
    // Granule and window outputs of a thread share their window: interleaved as a
    // wavefront (a lane's rows are a warp apart in the tile, but their windows are alike,
    // so the wavefront runs over them as if they were consecutive). Round-robin outputs are
    // a warp apart: interleaving them made values fetched for one output live across the
    // others' chains, until ptxas spilled (f64, r >= 24). In 2D and 3D the output rows go
    // one after the other, each reading the input rows it needs as it reaches them.
    let outputs = pattern.outputs_per_thread();
    let row_order = if ring.is_some() {
        order::lock_step(body, &live, outputs as usize, outputs as usize)
    } else if distribution.vector() > 1 {
        order::wavefront(body, &live, outputs as usize)
    } else if body.element().bytes() == 2 && strategy == Strategy::RegisterCache {
        order::pairwise(body, &live, outputs as usize)
    } else {
        order::sequential(body, &live, outputs as usize)
    };
    // Staged planes read each input row once for every output row: the rows advance
    // together along the input rows (order::across_rows); other tiles' rows go one after
    // the other.
    let rows = step.output_rows();
    let order: Vec<(u32, usize, NodeId)> = match ring {
        Some(_) => order::across_rows(body, &row_order, rows, |row, d| step.input_row(row, d.along(2), d.along(1))),
        None => (0..rows).flat_map(|row| row_order.iter().map(move |&(p, id)| (row, p, id))).collect(),
    };
    let mut values: Vec<Vec<Vec<Reg>>> = vec![vec![vec![0; body.nodes().len()]; outputs as usize]; rows as usize];
    for (row, p, id) in order {
        let node = body.nodes()[id as usize];
        let values = &mut values[row as usize][p];
        values[id as usize] = match lower.invariant.get(&id) {
            Some(&reg) => reg,
            None => {
                let reg = lower.node(row, p as u32, id, node, values);
                if !varies[id as usize] {
                    lower.invariant.insert(id, reg);
                }
                reg
            }
        };
        // Every output field whose result this node is (a node may be several fields').
        for (field, _) in body.results().iter().enumerate().filter(|&(_, &result)| result == id) {
            let p = p as u32;
            let at = AffineLoad {
                base: distribution.output(0, p),
                stride: distribution.output(1, p) - distribution.output(0, p),
            };
            let (src, field) = (values[id as usize], field as u32);
            lower.instrs.push(Instr::Store { src, field, output: p, at, row });
        }
    }
    let Lower { instrs, reg_types, fetch_order, cache, .. } = lower;
    Ok(Selected { instrs, reg_types, cache, fetch_order, ring })
}

/// Which cache registers each input row of a step of input field `field` loads, and in which
/// lanes: the registers the x schedule's fetches touch (read locally, or published to a
/// reader), for the fetches the field's taps reaching that row use. In 1D with one field, the
/// schedule's own loads. A streaming tile's row also holds what the step's older planes read of
/// it, as the next steps carry it there (not when every step reads its whole box from the ring
/// of staged planes, `ring`).
fn row_loads(
    pattern: Pattern,
    body: &Body,
    field: u32,
    schedule: &Schedule,
    registers: u32,
    ring: bool,
) -> Vec<Vec<LoadPlan>> {
    let step = pattern.step();
    let warp = pattern.warp() as usize;
    let mut used = vec![vec![vec![false; warp]; registers as usize]; step.input_rows() as usize];
    let taps: Vec<Offset> = body.used_field_taps().into_iter().filter(|&(f, _)| f == field).map(|(_, d)| d).collect();
    for row in 0..step.output_rows() {
        for p in 0..pattern.outputs_per_thread() {
            for &d in &taps {
                let input_row = step.input_row(row, d.along(2), d.along(1)) as usize;
                let Some(id) = schedule.fetch_of(p, d.along_x()) else { continue };
                let slots: Vec<(u32, u32)> = match &schedule.fetches[id].source {
                    Source::Local(pieces) => (0..warp as u32).map(|lane| (pieces.at(lane), lane)).collect(),
                    Source::Shuffle(phase) => phase.reads.iter().map(|r| (r.reg, r.owner)).collect(),
                    Source::Global(_) | Source::Shared(_) => Vec::new(),
                };
                for (reg, lane) in slots {
                    used[input_row][reg as usize][lane as usize] = true;
                }
            }
        }
    }
    if pattern.streams() && !ring {
        // Plane s of a step becomes plane s - 1 of the next one: it must hold what every
        // plane below it reads.
        let (planes, rows) = step.box_rows();
        for row in rows as usize..(planes * rows) as usize {
            let (older, newer) = used.split_at_mut(row);
            for (reg, lanes) in newer[0].iter_mut().enumerate() {
                for (lane, u) in lanes.iter_mut().enumerate() {
                    *u |= older[row - rows as usize][reg][lane];
                }
            }
        }
    }
    used.iter()
        .map(|regs| {
            regs.iter()
                .enumerate()
                .filter_map(|(reg, lanes)| {
                    let first = lanes.iter().position(|&u| u)? as u32;
                    let end = lanes.iter().rposition(|&u| u)? as u32 + 1;
                    Some(LoadPlan { reg: reg as u32, lanes: (first, end) })
                })
                .collect()
        })
        .collect()
}

/// Lowering state: body nodes to instructions, fetches emitted on first use.
struct Lower<'a> {
    body: &'a Body,
    /// The rows the instructions name ([`Pattern::step`]).
    step: Pattern,
    schedule: &'a Schedule,
    instrs: Vec<Instr>,
    reg_types: Vec<ScalarType>,
    /// (field, input row, cache register index) -> virtual register holding it.
    cache: HashMap<(u32, u32, u32), Reg>,
    /// (field, input row, fetch) -> the virtual register it delivered.
    fetched: HashMap<(u32, u32, FetchId), Reg>,
    fetch_order: Vec<FetchId>,
    /// Nodes that do not depend on taps are computed once for all outputs.
    invariant: HashMap<NodeId, Reg>,
    /// The shuffled fetches of 16-bit elements each row reads, which pair up ([`crate::pairs`]).
    shuffled: ShuffledFetches,
    /// (field, input row, fetch) -> the shuffled word holding its element and whether in the
    /// high half, for a fetch that travelled with another and is not unpacked yet.
    halves: HashMap<(u32, u32, FetchId), (Reg, bool)>,
    /// Whether cache registers pair up in 32-bit words ([`crate::pairs::packs_cache`]).
    packed: bool,
    /// (field, input row, pair) -> the word packing cache registers `2 * pair` and `2 * pair + 1`.
    words: HashMap<(u32, u32, u32), Reg>,
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

    /// Each lane's element of cache register `pieces.at(lane)` of input row `row` of `field`.
    fn pick(&mut self, field: u32, row: u32, pieces: &LanePieces) -> Reg {
        match pieces.uniform() {
            Some(reg) => self.cached(field, row, reg),
            // One half of packed words: pick the words, then take that half once.
            None if self.packed && pieces.0.iter().all(|&(_, reg)| reg % 2 == pieces.0[0].1 % 2) => {
                let high = pieces.0[0].1 % 2 == 1;
                let words =
                    LanePieces(pieces.0.iter().map(|&(lane, reg)| (lane, self.word(field, row, reg / 2))).collect());
                let src = self.emit(ScalarType::U32, |dst| Instr::Pick { dst, pieces: words });
                self.emit(self.body.element(), |dst| Instr::Unpack { dst, src, high })
            }
            None => {
                let pieces =
                    LanePieces(pieces.0.iter().map(|&(lane, reg)| (lane, self.cached(field, row, reg))).collect());
                self.emit(self.body.element(), |dst| Instr::Pick { dst, pieces })
            }
        }
    }

    /// The element of cache register `reg` of input row `row` of `field`: the loaded register,
    /// or its half of the packed word ([`crate::pairs`]).
    fn cached(&mut self, field: u32, row: u32, reg: u32) -> Reg {
        if !self.packed {
            return self.cache[&(field, row, reg)];
        }
        let src = self.word(field, row, reg / 2);
        self.emit(self.body.element(), |dst| Instr::Unpack { dst, src, high: reg % 2 == 1 })
    }

    /// Cache registers `2 * pair` and `2 * pair + 1` of input row `row` of `field` packed in one
    /// word, made where it is first read (a register no lane loads packs as zero).
    fn word(&mut self, field: u32, row: u32, pair: u32) -> Reg {
        if let Some(&word) = self.words.get(&(field, row, pair)) {
            return word;
        }
        let mut half = |reg: u32| match self.cache.get(&(field, row, reg)) {
            Some(&loaded) => loaded,
            None => {
                self.emit(self.body.element(), |dst| Instr::Const { dst, value: Scalar::new(self.body.element(), 0) })
            }
        };
        let (lo, hi) = (half(2 * pair), half(2 * pair + 1));
        let word = self.emit(ScalarType::U32, |dst| Instr::Pack { dst, lo, hi });
        self.words.insert((field, row, pair), word);
        word
    }

    /// The word each lane publishes in a shuffle of two fetches: the elements of cache registers
    /// `lo.at(lane)` and `hi.at(lane)`. Where those are one packed word (a register and the next,
    /// from an even one), the word itself; elsewhere the two packed.
    fn publish_pair(&mut self, field: u32, row: u32, lo: &LanePieces, hi: &LanePieces) -> Reg {
        if !self.packed {
            let (lo, hi) = (self.pick(field, row, lo), self.pick(field, row, hi));
            return self.emit(ScalarType::U32, |dst| Instr::Pack { dst, lo, hi });
        }
        let warp = self.step.warp();
        let mut made: HashMap<(u32, u32), Reg> = HashMap::new();
        let mut words = Vec::with_capacity(warp as usize);
        for lane in 0..warp {
            let pair = (lo.at(lane), hi.at(lane));
            let word = match made.get(&pair) {
                Some(&word) => word,
                None if pair.0 % 2 == 0 && pair.1 == pair.0 + 1 => self.word(field, row, pair.0 / 2),
                None if pair.0 % 2 == 1 && pair.1 == pair.0 + 1 => {
                    let (lo, hi) = (self.word(field, row, pair.0 / 2), self.word(field, row, pair.1 / 2));
                    self.emit(ScalarType::U32, |dst| Instr::Straddle { dst, lo, hi })
                }
                None => {
                    let (a, b) = (self.cached(field, row, pair.0), self.cached(field, row, pair.1));
                    self.emit(ScalarType::U32, |dst| Instr::Pack { dst, lo: a, hi: b })
                }
            };
            made.insert(pair, word);
            words.push(word);
        }
        let pieces = LanePieces::from_lanes(&words);
        match pieces.uniform() {
            Some(word) => word,
            None => self.emit(ScalarType::U32, |dst| Instr::Pick { dst, pieces }),
        }
    }

    /// Tap `d` of input field `field` of output `p` of output row `output_row`.
    fn fetch(&mut self, output_row: u32, p: u32, field: u32, d: Offset) -> Reg {
        let row = self.step.input_row(output_row, d.along(2), d.along(1));
        // Schedule::plan made a fetch for every (output, used tap).
        let id = self.schedule.fetch_of(p, d.along_x()).unwrap_or_default();
        if let Some(&reg) = self.fetched.get(&(field, row, id)) {
            return reg;
        }
        let reg = match &self.schedule.fetches[id].source {
            Source::Local(pieces) => self.pick(field, row, pieces),
            Source::Shuffle(_) if self.halves.contains_key(&(field, row, id)) => {
                let (src, high) = self.halves[&(field, row, id)];
                self.emit(self.body.element(), |dst| Instr::Unpack { dst, src, high })
            }
            Source::Shuffle(phase) => {
                let rotate = phase.rotate;
                let taken = |other| {
                    self.fetched.contains_key(&(field, row, other)) || self.halves.contains_key(&(field, row, other))
                };
                let partners = self.shuffled.partners(self.schedule, field, row, id, taken);
                // A partner whose lanes publish whole cache words with this fetch's goes first.
                let warp = self.step.warp();
                let whole = |&&(_, other): &&(FetchId, &LanePieces)| {
                    self.packed
                        && (whole_words(&phase.publish, other, warp) || whole_words(other, &phase.publish, warp))
                };
                match partners.iter().find(whole).or(partners.first()) {
                    Some(&(other, publish)) => {
                        // This fetch in the high half where the partner's registers come first.
                        let high = self.packed && whole_words(publish, &phase.publish, warp);
                        let (lo, hi) = if high { (publish, &phase.publish) } else { (&phase.publish, publish) };
                        let word = self.publish_pair(field, row, lo, hi);
                        let got = self.emit(ScalarType::U32, |dst| Instr::Shuffle {
                            dst,
                            src: word,
                            rotate,
                            fetches: vec![id, other],
                        });
                        self.halves.insert((field, row, other), (got, !high));
                        self.emit(self.body.element(), |dst| Instr::Unpack { dst, src: got, high })
                    }
                    // Where every lane publishes the same half of its words, the words travel.
                    None if self.packed
                        && phase.publish.0.iter().all(|&(_, reg)| reg % 2 == phase.publish.0[0].1 % 2) =>
                    {
                        let high = phase.publish.0[0].1 % 2 == 1;
                        let words = phase.publish.map(|reg| reg / 2);
                        let words = LanePieces(
                            words.0.iter().map(|&(lane, pair)| (lane, self.word(field, row, pair))).collect(),
                        );
                        let src = match words.uniform() {
                            Some(word) => word,
                            None => self.emit(ScalarType::U32, |dst| Instr::Pick { dst, pieces: words }),
                        };
                        let got =
                            self.emit(ScalarType::U32, |dst| Instr::Shuffle { dst, src, rotate, fetches: vec![id] });
                        self.emit(self.body.element(), |dst| Instr::Unpack { dst, src: got, high })
                    }
                    None => {
                        let src = self.pick(field, row, &phase.publish);
                        self.emit(self.body.element(), |dst| Instr::Shuffle { dst, src, rotate, fetches: vec![id] })
                    }
                }
            }
            Source::Global(at) => {
                let (at, warp) = (*at, self.step.warp());
                self.emit(self.body.element(), |dst| Instr::Load { dst, cache: None, at, lanes: (0, warp), field, row })
            }
            Source::Shared(at) => {
                let at = *at;
                self.emit(self.body.element(), |dst| Instr::Shared { dst, at, field, row })
            }
        };
        self.fetched.insert((field, row, id), reg);
        if !self.fetch_order.contains(&id) {
            self.fetch_order.push(id);
        }
        reg
    }

    fn node(&mut self, row: u32, p: u32, id: NodeId, node: Node, value: &[Reg]) -> Reg {
        if let Node::Tap(field, d) = node {
            return self.fetch(row, p, field, d);
        }
        let dst = self.reg(self.body.ty(id));
        self.instrs.extend(Instr::of_node(node, dst, |n| value[n as usize]));
        dst
    }
}

impl Instr {
    /// The instruction that computes body node `node` into `dst`, its operands in the registers
    /// `value` names; `None` for a tap, which each program fetches its own way.
    pub fn of_node(node: Node, dst: Reg, value: impl Fn(NodeId) -> Reg) -> Option<Instr> {
        let v = value;
        Some(match node {
            Node::Tap(..) => return None,
            Node::Param(index) => Instr::Param { dst, index },
            Node::Const(value) => Instr::Const { dst, value },
            Node::Unary(op, a) => Instr::Unary { dst, op, a: v(a) },
            Node::Binary(op, a, b) => Instr::Binary { dst, op, a: v(a), b: v(b) },
            Node::Compare(op, a, b) => Instr::Compare { dst, op, a: v(a), b: v(b) },
            Node::Select { cond, then, otherwise } => {
                Instr::Select { dst, cond: v(cond), then: v(then), otherwise: v(otherwise) }
            }
            Node::Cast(_, a) => Instr::Cast { dst, a: v(a) },
            Node::MulAdd(a, b, c) => Instr::MulAdd { dst, a: v(a), b: v(b), c: v(c) },
        })
    }

    /// The virtual registers this instruction reads.
    pub fn uses(&self) -> Vec<Reg> {
        match self {
            Instr::Load { .. }
            | Instr::Stage { .. }
            | Instr::Shared { .. }
            | Instr::Param { .. }
            | Instr::Const { .. } => Vec::new(),
            Instr::Pick { pieces, .. } => pieces.0.iter().map(|&(_, reg)| reg).collect(),
            Instr::Shuffle { src, .. } | Instr::Unpack { src, .. } => vec![*src],
            Instr::Pack { lo, hi, .. } | Instr::Straddle { lo, hi, .. } => vec![*lo, *hi],
            Instr::Unary { a, .. } | Instr::Cast { a, .. } => vec![*a],
            Instr::Binary { a, b, .. } | Instr::Compare { a, b, .. } => vec![*a, *b],
            Instr::Select { cond, then, otherwise, .. } => vec![*cond, *then, *otherwise],
            Instr::MulAdd { a, b, c, .. } => vec![*a, *b, *c],
            Instr::Store { src, .. } => vec![*src],
        }
    }

    /// This instruction reading `rename(reg)` for each register `reg` it reads.
    pub fn renamed(&self, rename: impl Fn(Reg) -> Reg) -> Instr {
        let mut instr = self.clone();
        match &mut instr {
            Instr::Load { .. }
            | Instr::Stage { .. }
            | Instr::Shared { .. }
            | Instr::Param { .. }
            | Instr::Const { .. } => {}
            Instr::Pick { pieces, .. } => *pieces = pieces.map(&rename),
            Instr::Shuffle { src, .. } | Instr::Store { src, .. } | Instr::Unpack { src, .. } => *src = rename(*src),
            Instr::Pack { lo, hi, .. } | Instr::Straddle { lo, hi, .. } => (*lo, *hi) = (rename(*lo), rename(*hi)),
            Instr::Unary { a, .. } | Instr::Cast { a, .. } => *a = rename(*a),
            Instr::Binary { a, b, .. } | Instr::Compare { a, b, .. } => (*a, *b) = (rename(*a), rename(*b)),
            Instr::Select { cond, then, otherwise, .. } => {
                (*cond, *then, *otherwise) = (rename(*cond), rename(*then), rename(*otherwise))
            }
            Instr::MulAdd { a, b, c, .. } => (*a, *b, *c) = (rename(*a), rename(*b), rename(*c)),
        }
        instr
    }

    /// The virtual register this instruction writes, if any.
    pub fn def(&self) -> Option<Reg> {
        match self {
            Instr::Load { dst, .. }
            | Instr::Shared { dst, .. }
            | Instr::Pick { dst, .. }
            | Instr::Shuffle { dst, .. }
            | Instr::Pack { dst, .. }
            | Instr::Unpack { dst, .. }
            | Instr::Straddle { dst, .. }
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
