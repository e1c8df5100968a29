//! From the warp program to the machine program: the one pass that decides vector accesses,
//! load placement, the order a 2D tile evaluates its outputs in, the tile's paths, the stage and
//! the division runs.

use std::collections::HashMap;

use super::division::FastDivisions;
use super::vector::{self, Access};
use super::{LaunchBounds, Machine, Op, Stmt, TileTest, WarpStage};
use crate::distribution::{vector_access_elements, AffineLoad};
use crate::geometry::Dims;
use crate::program::{Instr, Reg, StageScope, WarpProgram};
use crate::ring::PlaneRing;
use crate::stage::{self, StagePadding};

impl Machine {
    /// How `program` runs:
    /// - scalar layouts (round-robin and the baselines): the instructions in order, each load
    ///   and store checked;
    /// - vector layouts: two paths. Interior tiles (every element they load lies inside the
    ///   input, the common case) load with vectors; other tiles load element by element under
    ///   the boundary rule, or in a one-step 2D tile whose input rows lie inside the grid and
    ///   are whole vectors, with vectors under the rule along x (`Lowering::boundary_vectors`).
    ///   On all, each load goes just before the instruction that first
    ///   reads it, so ptxas can overlap loads with the arithmetic and keep few registers:
    ///   loading the whole cache first kept a window of 2r + V registers live at once, and the
    ///   occupancy too low to hide memory latency. A 2D tile of a large box evaluates input row
    ///   after input row ([`WarpProgram::evaluates_by_input_rows`]). Stores go last, as vectors where the
    ///   whole tile's outputs exist (on a 2D interior tile without a test where its loads being
    ///   inside implies it, `Lowering::inside_stores_whole`);
    /// - staged windows: the stage, then the body with each window vector read from shared
    ///   memory just before its first reader (the stage applied the boundary rule), then the
    ///   stores as above.
    ///
    /// A streaming 3D tile ([`crate::pattern::Pattern::streams`], pipelined by [`crate::pipeline`]) runs the
    /// prologue's steps and then a loop over its planes; each step loads its box's newest
    /// plane (each load before its first reader), runs its stages, stores the plane the last
    /// stage finishes, carries what later steps read and moves the tile one plane along z.
    pub fn lower(program: &WarpProgram) -> Machine {
        let element = program.element;
        let width = vector_access_elements(program.vector, element);
        let lower = Lowering { program, divisions: FastDivisions::of(program), width };
        let body = if let Some(ring) = &program.ring {
            lower.ring(ring)
        } else if program.staged {
            lower.staged()
        } else if program.vector == 1 {
            lower.scalar()
        } else {
            lower.tile_paths()
        };
        let launch_bounds = LaunchBounds::of(&program.pattern);
        let mut machine = Machine { body, width, shared_bytes: None, launch_bounds, split: false };
        let mut shared_bytes = None;
        // One stage per input field, one after the other.
        machine.visit(&mut |op| match op {
            Op::StageBlock { elements, .. } => {
                shared_bytes = Some(stage::block_stage_bytes(&program.pattern, element, *elements) * program.fields)
            }
            Op::StageWarp { stage, .. } => {
                shared_bytes = Some(
                    stage::block_bytes(&program.pattern, stage.padding.granule, element, stage.elements)
                        * program.fields,
                )
            }
            _ => {}
        });
        if let Some(ring) = &program.ring {
            shared_bytes = Some(ring.field_bytes() * program.fields);
        }
        machine.shared_bytes = shared_bytes;
        machine
    }
}

/// How many times fewer values a 2D box tile's input-row order must keep live than the
/// program's order for the tile to take it ([`Lowering::input_row_order`]). On an H200 (f32
/// 8192^2): box r = 4 tiles keep 3.5 to 4.9 times fewer and ran faster (the default tile 0.47 of
/// copy against 0.43, bench/results/HISTORY.md: 2026-11-24-h200-grid2d2, call 1); box r = 2 (1.48 for the
/// default tile) ran at 0.89 against 0.87 under 4 blocks, 0.87 against 0.86 under 3
/// (bench/results/HISTORY.md: 2026-11-24-h200-grid2d4, call 1); box r = 1 (1.1 to 1.4) as fast either way
/// (grid2d2). Stars keep the program's order whatever their gain: star r = 4 (1.5 to 2.3) ran
/// slower, its centre row live until its last arm's row (grid2d2), star r = 2 with two vectors
/// 0.88 against 0.92 (grid2d4, call 1).
const ROW_ORDER_GAIN: f64 = 1.4;

impl WarpProgram {
    /// Whether the machine program evaluates the tile input row after input row (each input
    /// row added to every output row that reads it, then dropped) instead of output row after
    /// output row: a 2D box tile whose input-row order keeps `ROW_ORDER_GAIN` times fewer
    /// values live than the program's order keeps on its boundary path (box r = 2 and 4).
    pub fn evaluates_by_input_rows(&self) -> bool {
        if self.ring.is_some() || self.staged || self.vector == 1 {
            return false;
        }
        let lower = Lowering {
            program: self,
            divisions: FastDivisions::of(self),
            width: vector_access_elements(self.vector, self.element),
        };
        let loads = cache_loads(&self.instrs);
        lower.input_row_order(&loads, &self.instrs[loads.len()..]).is_some()
    }
}

struct Lowering<'a> {
    program: &'a WarpProgram,
    divisions: FastDivisions,
    width: u32,
}

/// Cache loads not placed yet: each run goes just before its first reader.
struct PendingLoads {
    /// Each run's operations; `None` once placed.
    runs: Vec<Option<Vec<Op>>>,
    /// Which run loads a register.
    run_of: HashMap<Reg, usize>,
}

impl PendingLoads {
    fn new(runs: Vec<LoadRun>) -> PendingLoads {
        let run_of = runs.iter().enumerate().flat_map(|(i, (regs, _))| regs.iter().map(move |&r| (r, i))).collect();
        PendingLoads { runs: runs.into_iter().map(|(_, ops)| Some(ops)).collect(), run_of }
    }

    /// The loads of the registers `reads` that are not placed yet.
    fn take_for(&mut self, reads: &[Reg]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for reg in reads {
            if let Some(run) = self.run_of.get(reg).and_then(|&i| self.runs[i].take()) {
                out.extend(run.into_iter().map(Stmt::Op));
            }
        }
        out
    }

    /// Loads nothing read (none, as the scheduler plans them) would still be owed at the end.
    fn rest(&mut self) -> Vec<Stmt> {
        self.runs.iter_mut().filter_map(Option::take).flatten().map(Stmt::Op).collect()
    }
}

/// A run of loads: the registers it fills and its operations.
type LoadRun = (Vec<Reg>, Vec<Op>);

/// How one path turns cache loads into runs (vectors, or each load by itself).
type MakeLoads<'a> = dyn Fn(&[CacheLoad]) -> Vec<LoadRun> + 'a;

/// A cache load of the warp program.
#[derive(Clone, Copy)]
struct CacheLoad {
    dst: Reg,
    cache: u32,
    at: AffineLoad,
    lanes: (u32, u32),
    field: u32,
    row: u32,
}

/// The cache loads `instrs` starts with.
fn cache_loads(instrs: &[Instr]) -> Vec<CacheLoad> {
    instrs
        .iter()
        .map_while(|i| match *i {
            Instr::Load { dst, cache: Some(cache), at, lanes, field, row } => {
                Some(CacheLoad { dst, cache, at, lanes, field, row })
            }
            _ => None,
        })
        .collect()
}

/// Each load by itself, checked under the boundary rule.
fn singles(loads: &[CacheLoad]) -> Vec<LoadRun> {
    let single = |l: &CacheLoad| {
        let op = Op::Load { dst: l.dst, cache: Some(l.cache), at: l.at, lanes: l.lanes, field: l.field, row: l.row };
        (vec![l.dst], vec![op])
    };
    loads.iter().map(single).collect()
}

/// Loads placed where they stand, in order.
fn placed(runs: Vec<LoadRun>) -> Vec<Stmt> {
    runs.into_iter().flat_map(|(_, ops)| ops).map(Stmt::Op).collect()
}

/// `rest` (a 2D tile's computation and stores) ordered by the last input row each
/// instruction depends on, the program's order within a row: each cache load's rank is its
/// row, an instruction's the largest of its operands' (and a tap's own row), a store's at least
/// the store's before it (stores stay in their order, row after row). Every instruction still
/// follows the ones it reads.
fn by_input_rows(loads: &[CacheLoad], rest: &[Instr]) -> Vec<Instr> {
    let mut rank: HashMap<Reg, u32> = loads.iter().map(|l| (l.dst, l.row)).collect();
    let mut last_store = 0;
    let mut ranked: Vec<(u32, &Instr)> = rest
        .iter()
        .map(|instr| {
            let mut r = instr.uses().iter().filter_map(|u| rank.get(u)).copied().max().unwrap_or(0);
            match *instr {
                Instr::Load { row, .. } | Instr::Shared { row, .. } => r = r.max(row),
                Instr::Store { .. } => {
                    r = r.max(last_store);
                    last_store = r;
                }
                _ => {}
            }
            if let Some(d) = instr.def() {
                rank.insert(d, r);
            }
            (r, instr)
        })
        .collect();
    ranked.sort_by_key(|&(r, _)| r);
    ranked.into_iter().map(|(_, instr)| instr.clone()).collect()
}

/// The most registers live at once on the path that takes every branch's fallback.
fn peak_live(machine: &Machine) -> usize {
    let mut live: std::collections::HashSet<Reg> = std::collections::HashSet::new();
    let mut peak = 0;
    for op in machine.path(|_| false).into_iter().rev() {
        live.extend(op.defs());
        peak = peak.max(live.len());
        for d in op.defs() {
            live.remove(&d);
        }
        live.extend(op.uses());
    }
    peak.max(live.len())
}

/// The instructions of one output row of the tile and its stores (the whole tile in 1D).
struct RowSegment {
    rest: Vec<Instr>,
    stores: Vec<Instr>,
    row: u32,
}

/// `instrs` cut after each output row's last store (`stores_per_row` of them: each output of the
/// row in each output field): the stores of a row go out as soon as it is done, so a 2D or 3D
/// tile keeps one row's outputs in registers, not all of them.
fn row_segments(instrs: &[Instr], stores_per_row: u32) -> Vec<RowSegment> {
    let mut segments = Vec::new();
    let mut current = RowSegment { rest: Vec::new(), stores: Vec::new(), row: 0 };
    for instr in instrs {
        match *instr {
            Instr::Store { row, .. } => {
                current.row = row;
                current.stores.push(instr.clone());
                if current.stores.len() == stores_per_row as usize {
                    segments.push(std::mem::replace(
                        &mut current,
                        RowSegment { rest: Vec::new(), stores: Vec::new(), row: row + 1 },
                    ));
                }
            }
            _ => current.rest.push(instr.clone()),
        }
    }
    if !current.rest.is_empty() || !current.stores.is_empty() || segments.is_empty() {
        segments.push(current);
    }
    segments
}

impl Lowering<'_> {
    /// `instrs` in order, each memory instruction as its checked operation, consecutive fast
    /// divisions as one [`Op::Divisions`]. With `pending`, the cache loads each instruction
    /// reads go just before it.
    fn place(&self, instrs: &[Instr], mut pending: Option<&mut PendingLoads>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < instrs.len() {
            let run: Vec<_> =
                instrs[i..].iter().map_while(|instr| self.divisions.division(self.program, instr)).collect();
            let len = run.len().max(1);
            if let Some(pending) = pending.as_deref_mut() {
                for instr in &instrs[i..i + len] {
                    out.extend(pending.take_for(&instr.uses()));
                }
            }
            if run.is_empty() {
                out.extend(self.op(&instrs[i]).map(Stmt::Op));
            } else {
                out.push(Stmt::Op(Op::Divisions(run)));
            }
            i += len;
        }
        out
    }

    /// The checked operation of one instruction; `None` for an addition only a division's
    /// slow path performs.
    fn op(&self, instr: &Instr) -> Option<Op> {
        if self.divisions.only_on_slow_path(instr) {
            return None;
        }
        Some(match *instr {
            Instr::Load { dst, cache, at, lanes, field, row } => Op::Load { dst, cache, at, lanes, field, row },
            Instr::Store { src, field, output, at, row } => Op::Store { src, field, output, at, row },
            Instr::Shared { dst, at, field, row } => Op::Shared { dst, at, field, row },
            Instr::Stage { scope, lead, elements, field } => self.stage(scope, lead, elements, field),
            ref compute => Op::Compute(compute.clone()),
        })
    }

    fn stage(&self, scope: StageScope, lead: u32, elements: u32, field: u32) -> Op {
        let program = self.program;
        match scope {
            StageScope::Block => Op::StageBlock { lead, elements, field },
            StageScope::Warp => {
                let padding = StagePadding::for_granule(program.vector, program.element);
                let stage = WarpStage {
                    lead,
                    elements,
                    padding,
                    chunks: elements.div_ceil(padding.width),
                    region_bytes: padding.region_bytes(elements, program.element),
                };
                Op::StageWarp { stage, field }
            }
        }
    }

    /// Scalar layouts: the instructions in order, each load and store checked.
    fn scalar(&self) -> Vec<Stmt> {
        let instrs = &self.program.instrs;
        if self.program.pipeline.is_none() {
            return self.place(instrs, None);
        }
        let (loads, rest): (Vec<Instr>, Vec<Instr>) =
            instrs.iter().cloned().partition(|i| matches!(i, Instr::Load { cache: Some(_), .. }));
        let loads = cache_loads(&loads);
        let mut step = placed(singles(&loads));
        step.extend(self.place(&rest, None));
        self.stream(self.prologue(&loads, &rest, &singles), step)
    }

    fn tile_paths(&self) -> Vec<Stmt> {
        let instrs = &self.program.instrs;
        let loads = cache_loads(instrs);
        let rest = &self.evaluation_order(&loads, &instrs[loads.len()..]);
        let segments = row_segments(rest, self.program.stores_per_row());
        let Some(last) = loads.iter().map(|l| l.at.element(l.lanes.1 - 1)).max() else {
            return self.stream(Vec::new(), self.path(&segments, PendingLoads::new(Vec::new()), false));
        };
        // Vector loads: with no rule on the interior path, under the rule on the boundary path
        // where rows are whole vectors (the same runs either way).
        let vector_runs = |loads: &[CacheLoad], under_rule: bool| -> Vec<LoadRun> {
            let accesses: Vec<Access> =
                loads.iter().map(|l| Access { at: l.at, lanes: l.lanes, field: l.field, row: l.row }).collect();
            let vector = |run: std::ops::Range<usize>| {
                let run = &loads[run];
                let dsts: Vec<Reg> = run.iter().map(|l| l.dst).collect();
                let first = run[0];
                let (at, lanes, field, row, first_cache) = (first.at, first.lanes, first.field, first.row, first.cache);
                let op = match under_rule {
                    false => Op::LoadVector { dsts: dsts.clone(), first_cache, at, lanes, field, row },
                    true => Op::LoadVectorRule { dsts: dsts.clone(), first_cache, at, lanes, field, row },
                };
                (dsts, vec![op])
            };
            vector::runs(&accesses, self.width).into_iter().map(vector).collect()
        };
        let vectors = |loads: &[CacheLoad]| vector_runs(loads, false);
        let rule_vectors = |loads: &[CacheLoad]| vector_runs(loads, true);
        // Each load before its first reader, except on the boundary arm of a streaming tile,
        // which loads its newest plane first: placed before their readers, its element-wise
        // loads and their addresses made ptxas keep more registers for the whole kernel (168
        // against 130 for a 3D box of radius 1).
        let arm = |accesses: &MakeLoads<'_>, interior: bool| {
            let step = match !interior && self.program.pipeline.is_some() {
                true => [placed(accesses(&loads)), self.path(&segments, PendingLoads::new(Vec::new()), false)].concat(),
                false => self.path(
                    &segments,
                    PendingLoads::new(accesses(&loads)),
                    interior && self.inside_stores_whole(last + 1),
                ),
            };
            self.stream(self.prologue(&loads, rest, accesses), step)
        };
        let fallback = match self.boundary_vectors() {
            true => vec![Stmt::Branch {
                test: TileTest::RowsInside,
                taken: arm(&rule_vectors, false),
                fallback: arm(&singles, false),
            }],
            false => arm(&singles, false),
        };
        let taken = [self.prefetch(), arm(&vectors, true)].concat();
        vec![Stmt::Branch { test: TileTest::Inside { elements: last + 1 }, taken, fallback }]
    }

    /// What an interior tile prefetches into L2 before its taps ([`crate::prefetch`]): of each
    /// input field, the input rows its output rows centre on (box rows `ry..ry + rows`; the halo
    /// rows above and below are other tiles' centre rows, which those tiles prefetch) in the
    /// tile's own columns, where the pattern asks for it in a 2D block tile (whose launch is a
    /// grid of block columns by bands, from which the distance is computed); nothing elsewhere.
    fn prefetch(&self) -> Vec<Stmt> {
        let (program, pattern) = (self.program, self.program.pattern);
        if !pattern.prefetches() || !pattern.stacks_warps() || program.pipeline.is_some() {
            return Vec::new();
        }
        let (first, rows, elements) = (pattern.radius().along(1), pattern.rows_per_warp(), pattern.tile_outputs());
        (0..program.fields).map(|field| Stmt::Op(Op::PrefetchL2 { field, first, rows, elements })).collect()
    }

    /// Whether a tile's boundary path loads vectors under the rule along x where its input rows
    /// lie inside the grid and are whole vectors ([`TileTest::RowsInside`], [`Op::LoadVectorRule`]:
    /// the tiles at the start and the end of each row of tiles), element by element elsewhere
    /// (the first and last rows of tiles, rows of part vectors): one-step 2D tiles. A 2D box
    /// r = 4 edge tile issued 3097 SASS instructions element by element against the interior's
    /// 1423 (ptxas 13, sm_90; 6.5% of the kernel's instructions on an 8192^2 grid). 1D, 3D and
    /// streaming tiles keep element loads (their PTX stays as it was; 3D's defaults stage
    /// planes).
    fn boundary_vectors(&self) -> bool {
        self.program.pattern.dims() == Dims::Two && self.program.pipeline.is_none() && self.width > 1
    }

    /// Whether every output of a one-step 2D tile whose loads (`elements` from its lead on)
    /// lie inside the input exists, in rows a whole number of vectors long, so its interior
    /// path stores vectors without testing each row ([`TileTest::Whole`]): along y the input
    /// box holds the output rows' windows; along x the loads reach `2 (r - shift)` past the
    /// tile's last output (the output is `2r` shorter under `valid`), which must keep rows
    /// aligned. 1D and 3D tiles keep the tests (their PTX stays as it was).
    fn inside_stores_whole(&self, elements: u32) -> bool {
        let pattern = self.program.pattern;
        let (r, shift) = (pattern.radius().along_x(), pattern.shift());
        let trimmed = 2 * (r - shift);
        pattern.dims() == Dims::Two
            && self.program.pipeline.is_none()
            && elements >= self.program.schedule.lead + pattern.tile_outputs() + trimmed
            && trimmed % self.width == 0
    }

    /// The order a 2D tile evaluates its outputs in: the program's (output row after output
    /// row), or input row after input row where [`Lowering::input_row_order`] takes it.
    fn evaluation_order(&self, loads: &[CacheLoad], rest: &[Instr]) -> Vec<Instr> {
        self.input_row_order(loads, rest).unwrap_or_else(|| rest.to_vec())
    }

    /// `rest` input row after input row ([`by_input_rows`]), for a 2D tile whose input rows
    /// all load as many values (a box's) and that keeps at most 1 / [`ROW_ORDER_GAIN`] of the
    /// values live so on the boundary path that it keeps in the program's order (a box's rows
    /// then die once every output row has added them, instead of staying live for the next
    /// output row). The same operations either way, so the results are the same bits. `None`
    /// for 1D and 3D tiles, streaming tiles and the others.
    fn input_row_order(&self, loads: &[CacheLoad], rest: &[Instr]) -> Option<Vec<Instr>> {
        let program = self.program;
        if program.pattern.dims() != Dims::Two || program.pipeline.is_some() {
            return None;
        }
        let by_rows = by_input_rows(loads, rest);
        let peak = |order: &[Instr]| {
            let segments = row_segments(order, program.stores_per_row());
            let body = self.path(&segments, PendingLoads::new(singles(loads)), false);
            peak_live(&Machine { body, ..Machine::default() })
        };
        // A star's off-centre rows load one value per output, which the program's order keeps
        // live only briefly.
        let loaded = |row: u32| loads.iter().filter(|l| l.row == row).count();
        let box_rows = (1..program.pattern.input_rows()).all(|row| loaded(row) == loaded(0));
        (box_rows && by_rows != rest && ROW_ORDER_GAIN * peak(&by_rows) as f64 <= peak(rest) as f64).then_some(by_rows)
    }

    /// A pipelined tile's first steps, before its loop: step `k` loads plane `k` of the first
    /// output plane's box (with `accesses`) and runs the stages up to `k`, storing nothing.
    fn prologue(&self, loads: &[CacheLoad], rest: &[Instr], accesses: &MakeLoads<'_>) -> Vec<Stmt> {
        let Some(pipeline) = &self.program.pipeline else { return Vec::new() };
        let rows = self.program.pattern.step().box_rows().1;
        let needed = pipeline.prologue_needs(rest);
        let mut out = Vec::new();
        for k in 0..pipeline.last {
            // The newest plane's loads, one plane lower per step still to come.
            let earlier: Vec<CacheLoad> =
                loads.iter().map(|&l| CacheLoad { row: l.row - (pipeline.last - k) * rows, ..l }).collect();
            out.extend(placed(accesses(&earlier)));
            let stages: Vec<Instr> =
                rest.iter().filter(|i| pipeline.runs_in_prologue(i, k, &needed)).cloned().collect();
            out.extend(self.place(&stages, None));
            out.extend(self.carry());
        }
        out
    }

    /// The copies at the end of a pipelined step, if it carries anything.
    fn carry(&self) -> Option<Stmt> {
        let carries = &self.program.pipeline.as_ref()?.carries;
        (!carries.is_empty()).then(|| Stmt::Op(Op::Carry(carries.clone())))
    }

    /// A tile's statements: `step` itself, or for a streaming tile `prologue` and then `step`
    /// once per plane, each followed by its carries and the move to the next plane.
    fn stream(&self, mut prologue: Vec<Stmt>, mut step: Vec<Stmt>) -> Vec<Stmt> {
        let pattern = self.program.pattern;
        if self.program.pipeline.is_none() {
            prologue.extend(step);
            return prologue;
        }
        step.extend(self.carry());
        step.push(Stmt::Op(Op::Advance));
        prologue.push(Stmt::Loop { times: pattern.planes_per_warp(), body: step });
        prologue
    }

    /// One tile path: each output row with its loads placed and then its stores (vectors
    /// without a test where `whole` says every output exists); the loads still owed before the
    /// last row's stores.
    fn path(&self, segments: &[RowSegment], mut pending: PendingLoads, whole: bool) -> Vec<Stmt> {
        let mut body = Vec::new();
        for (k, segment) in segments.iter().enumerate() {
            body.extend(self.place(&segment.rest, Some(&mut pending)));
            // A store may read a cache register itself (a body that returns a tap).
            for store in &segment.stores {
                body.extend(pending.take_for(&store.uses()));
            }
            if k + 1 == segments.len() {
                body.extend(pending.rest());
            }
            // A pipelined step's stages of later planes come after its last store.
            if !segment.stores.is_empty() {
                match self.stores(&segment.stores, segment.row) {
                    Stmt::Branch { taken, .. } if whole => body.extend(taken),
                    stores => body.push(stores),
                }
            }
        }
        body
    }

    fn staged(&self) -> Vec<Stmt> {
        let mut body = Vec::new();
        let (mut loads, mut rest) = (Vec::new(), Vec::new());
        for instr in &self.program.instrs {
            match *instr {
                Instr::Stage { scope, lead, elements, field } => {
                    body.push(Stmt::Op(self.stage(scope, lead, elements, field)))
                }
                Instr::Load { dst, cache, at, lanes, field, row } => {
                    loads.push(CacheLoad { dst, cache: cache.unwrap_or(0), at, lanes, field, row })
                }
                ref other => rest.push(other.clone()),
            }
        }
        // Every lane reads its window from the stage, so runs need not share a lane range.
        let accesses: Vec<Access> =
            loads.iter().map(|l| Access { at: l.at, lanes: (0, 0), field: l.field, row: l.row }).collect();
        let vectors = vector::runs(&accesses, self.width).into_iter().map(|run| {
            let run = &loads[run];
            let dsts: Vec<Reg> = run.iter().map(|l| l.dst).collect();
            (dsts.clone(), vec![Op::ReadStage { dsts, first_cache: run[0].cache, at: run[0].at, field: run[0].field }])
        });
        let segments = row_segments(&rest, self.program.stores_per_row());
        body.extend(self.path(&segments, PendingLoads::new(vectors.collect()), false));
        body
    }

    /// Staged planes ([`crate::ring`]): the block fills slots `0..slots` with its first step's
    /// box planes; then each step fetches the plane after its box into registers, runs the
    /// body with each window vector read from the ring just before its first reader and the
    /// stores as above, and after a barrier (every warp done with its oldest plane) puts the
    /// fetched plane in that plane's slot; a second barrier, and the tile moves one plane on.
    fn ring(&self, ring: &PlaneRing) -> Vec<Stmt> {
        let program = self.program;
        let loads = cache_loads(&program.instrs);
        let rest = &program.instrs[loads.len()..];
        // Every lane reads its window from the ring, so runs need not share a lane range.
        let accesses: Vec<Access> =
            loads.iter().map(|l| Access { at: l.at, lanes: (0, 0), field: l.field, row: l.row }).collect();
        let reads = vector::aligned_runs(&accesses, self.width).into_iter().map(|run| {
            let run = &loads[run];
            let dsts: Vec<Reg> = run.iter().map(|l| l.dst).collect();
            let (first, at, field, row) = (run[0].cache, run[0].at, run[0].field, run[0].row);
            let part = ring.part_for(at.base, at.stride, dsts.len() as u32);
            (dsts.clone(), vec![Op::ReadRing { dsts, first_cache: first, at, field, row, part }])
        });
        let segments = row_segments(rest, program.stores_per_row());
        let op = |op: Op| Stmt::Op(op);
        let fields = 0..program.fields;
        let mut body: Vec<Stmt> = Vec::new();
        for plane in 0..ring.slots {
            for field in fields.clone() {
                body.extend([op(Op::FetchPlane { plane, field }), op(Op::PutPlane { slot: plane, field })]);
            }
        }
        body.push(op(Op::BlockBarrier));
        let mut step: Vec<Stmt> = fields.clone().map(|field| op(Op::FetchPlane { plane: ring.slots, field })).collect();
        step.extend(self.path(&segments, PendingLoads::new(reads.collect()), false));
        step.push(op(Op::BlockBarrier));
        step.extend(fields.map(|field| op(Op::PutPlane { slot: 0, field })));
        step.extend([op(Op::BlockBarrier), op(Op::TurnRing), op(Op::Advance)]);
        body.push(Stmt::Loop { times: program.pattern.planes_per_warp(), body: step });
        body
    }

    /// The stores of output row `row`, after its computation: vectors where the whole row's
    /// outputs exist, one checked store per output otherwise. Each output field's stores go
    /// together (in the order the row computed them), so that its consecutive outputs share
    /// vectors.
    fn stores(&self, stores: &[Instr], row: u32) -> Stmt {
        let mut items: Vec<(Reg, u32, u32, AffineLoad)> = stores
            .iter()
            .filter_map(|i| match *i {
                Instr::Store { src, field, output, at, .. } => Some((src, field, output, at)),
                _ => None,
            })
            .collect();
        items.sort_by_key(|&(_, field, ..)| field);
        let fallback =
            items.iter().map(|&(src, field, output, at)| Stmt::Op(Op::Store { src, field, output, at, row })).collect();
        let full = (0, self.program.pattern.warp());
        let accesses: Vec<Access> =
            items.iter().map(|&(_, field, _, at)| Access { at, lanes: full, field, row }).collect();
        let taken = vector::runs(&accesses, self.width)
            .into_iter()
            .map(|run| {
                let (_, field, output, at) = items[run.start];
                let srcs = items[run].iter().map(|&(src, ..)| src).collect();
                Stmt::Op(Op::StoreVector { srcs, field, output, at, row })
            })
            .collect();
        Stmt::Branch { test: TileTest::Whole { row }, taken, fallback }
    }
}
