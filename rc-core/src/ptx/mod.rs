//! The PTX back end: prints a warp program's machine program ([`crate::machine`]) as one
//! `.entry` per kernel ([`crate::machine::Machine::kernels`]), statement for statement. It
//! decides nothing: what is loaded how, where, on which path, is the machine program's; this
//! only names registers and prints.
//!
//! Every lane runs every instruction, tail lanes included (their loads and stores are
//! predicated), so every `shfl.sync` has the full member mask. Floating point uses explicit
//! round-to-nearest (`add.rn`, `mul.rn`, ...), which also forbids ptxas from contracting into
//! FMA; sign flips and `abs` are bit operations, exactly as Rust defines them.
//!
//! Kernel parameters, in order ([`KernelParam::list`]): one input pointer per input field, one
//! output pointer per output field, input length `n`, output length `n_out` (all `.u64`), in 2D
//! and 3D the extents, then one parameter per stencil parameter.
//!
//! - `mod.rs`: the printer's state, the prologue, statements and branches, declarations;
//! - `memory.rs`: loads, stores and stages;
//! - `rule.rs`: the boundary rule on one coordinate, for every place that applies it;
//! - `prefetch.rs`: the L2 prefetch of an interior 2D tile;
//! - `compute.rs`: arithmetic, picks, shuffles, 16-bit pairs in and out of words, divisions by
//!   constants;
//! - `time_steps.rs`: what fused time steps add: neighbour shuffles, the boundary rule after
//!   each step, the stores of the tile's centre;
//! - `types.rs`: how each element type is named and written in PTX.

mod compute;
pub mod defined;
mod exp;
mod grid;
mod index;
mod memory;
mod prefetch;
mod ring;
mod rule;
mod time_steps;
mod types;

use std::collections::HashMap;
use std::fmt::Write;

use crate::abi::KernelParam;
use crate::body::UnaryOp;
use crate::geometry::Dims;
use crate::machine::index::{IndexKind, IndexReg};
use crate::machine::{Kernel, Op, Stmt, TileTest, WarpStage};
use crate::program::{Reg, WarpProgram};
use crate::scalar::ScalarType;

pub use types::ptx_type;
use types::{reg_name, scratch_prefix};

/// PTX ISA 7.0 (CUDA 11.0): old enough for every driver since, new enough for `shfl.sync` and
/// `cvt.rn.bf16.f32`. The target is sm_70 unless a type needs newer ([`crate::scalar::TypeInfo::sm`]).
pub const PTX_VERSION: &str = "7.0";

/// The PTX module for `program`: one kernel named `entry`, or for a split program
/// ([`crate::machine::Machine::kernels`]) one per kernel, named by [`kernel_entry`].
pub fn print(program: &WarpProgram, entry: &str) -> String {
    let machine = &program.machine;
    let mut out = String::new();
    for (i, &kernel) in machine.kernels().iter().enumerate() {
        let name = kernel_entry(entry, kernel);
        let mut p = Printer::new(program, &name);
        p.prologue();
        p.stmts(&machine.kernel_body(kernel));
        p.line("ret;");
        out.push_str(&p.finish(i == 0, kernel));
    }
    out
}

/// The `.entry` of kernel `kernel` of a program printed with entry `entry`: `entry` itself,
/// the edges kernel's with `_edges` after it.
pub fn kernel_entry(entry: &str, kernel: Kernel) -> String {
    match kernel {
        Kernel::Whole | Kernel::Interior => entry.to_string(),
        Kernel::Edges => format!("{entry}_edges"),
    }
}

/// Which buffer a lane's start address points into ([`Printer::lane_start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Buffer {
    /// Input field `.0`.
    Input(u32),
    /// Output field `.0`.
    Output(u32),
    /// The warp's region of the stage.
    Stage,
    /// The ring of staged planes (keyed by box plane, not row).
    Ring,
    /// The ring's heads and tails ([`crate::ring::RingPart`]; keyed as the ring).
    RingSides,
}

struct Printer<'a> {
    program: &'a WarpProgram,
    entry: &'a str,
    body: String,
    /// Scratch registers: 64-bit addresses (%a), 32-bit values (%t), predicates (%q).
    next_a: u32,
    next_t: u32,
    next_q: u32,
    /// 16-bit scratch registers (%h): f16 and bf16 values in memory's form.
    next_h: u32,
    /// Scratch values of the element's type for intermediate selects (%sf, %sd or %sr).
    next_s: u32,
    next_label: u32,
    /// `lane < k`, computed once per k.
    lane_below: HashMap<u32, String>,
    /// `lane + k` (the shuffle source lane), computed once per k.
    lane_plus: HashMap<u32, String>,
    /// A lane's first element address in a buffer, per stride, computed once per path.
    lane_starts: HashMap<(Buffer, u32, u32), String>,
    /// Where a lane's vector of tile elements `base + lane * stride` lies along x under the
    /// boundary rule ([`memory::RuleVector`]), per `(base, stride, width)`, computed once per path.
    rule_vectors: HashMap<(u32, u32, u32), memory::RuleVector>,
    /// The staged window's stage, once printed.
    stage: Option<WarpStage>,
    /// Elements per input row of the block's stage (strategy shared_memory), once printed.
    block_stage: Option<u32>,
    /// 2D/3D: the prologue's registers ([`grid`]); `None` in 1D.
    grid: Option<grid::Grid>,
    /// Each input field's global address: [`INPUT`] for field 0, then registers the prologue
    /// loads for the others.
    inputs: Vec<String>,
    /// Each output field's global address: [`OUTPUT`] for field 0, then registers the prologue
    /// loads for the others (after the inputs').
    outputs: Vec<String>,
    /// Input rows under the boundary rule and output rows' existence, computed once per path.
    input_rows: HashMap<u32, (String, Option<String>)>,
    output_rows: HashMap<u32, String>,
    /// Staged planes: what this thread fetched of each input field's next plane, until put.
    ring_fetched: HashMap<u32, ring::Fetched>,
    /// A 1D block tile's exchanges through shared memory: the prologue's registers.
    exchange: Option<time_steps::Exchange>,
    /// 2D fused steps: where the tile's rows meet the input's edges along x, for the boundary
    /// path's rules, computed where that path starts.
    edges_x: Option<time_steps::EdgesX>,
}

// Fixed scratch registers set up by the prologue.
const INPUT: &str = "%a0";
const OUTPUT: &str = "%a1";
const N: &str = "%a2";
const N_OUT: &str = "%a3";
const TILE_START: &str = "%a4";
/// [`TILE_START`] as the launch map's index programs name it.
const TILE_START_INDEX: IndexReg = IndexReg { kind: IndexKind::U64, number: 4 };
const N_MINUS_1: &str = "%a5";
const LANE: &str = "%t0";
const TID: &str = "%t1";
const CTAID: &str = "%t2";
const NTID: &str = "%t3";
/// The stage in shared memory (strategy shared_memory, staged windows).
const SHARED_TILE: &str = "rc_stage";

impl<'a> Printer<'a> {
    fn new(program: &'a WarpProgram, entry: &'a str) -> Printer<'a> {
        Printer {
            program,
            entry,
            body: String::new(),
            next_a: 6,
            next_t: 4,
            next_q: 0,
            next_h: 0,
            next_s: 0,
            next_label: 0,
            lane_below: HashMap::new(),
            lane_plus: HashMap::new(),
            lane_starts: HashMap::new(),
            rule_vectors: HashMap::new(),
            stage: None,
            block_stage: None,
            grid: None,
            inputs: vec![INPUT.to_string()],
            outputs: vec![OUTPUT.to_string()],
            input_rows: HashMap::new(),
            output_rows: HashMap::new(),
            ring_fetched: HashMap::new(),
            exchange: None,
            edges_x: None,
        }
    }

    fn line(&mut self, text: &str) {
        let _ = writeln!(self.body, "\t{text}");
    }

    fn comment(&mut self, text: &str) {
        let _ = writeln!(self.body, "\t// {text}");
    }

    fn a(&mut self) -> String {
        self.next_a += 1;
        format!("%a{}", self.next_a - 1)
    }
    fn t(&mut self) -> String {
        self.next_t += 1;
        format!("%t{}", self.next_t - 1)
    }
    fn q(&mut self) -> String {
        self.next_q += 1;
        format!("%q{}", self.next_q - 1)
    }
    fn h(&mut self) -> String {
        self.next_h += 1;
        format!("%h{}", self.next_h - 1)
    }

    /// A scratch register of type `ty` (a float or 32-bit integer type).
    fn scratch(&mut self, ty: ScalarType) -> String {
        self.next_s += 1;
        format!("{}{}", scratch_prefix(ty), self.next_s - 1)
    }

    fn reg(&self, reg: Reg) -> String {
        reg_name(self.program.reg_type(reg), reg)
    }

    fn param_name(&self, what: &str) -> String {
        format!("{}_{what}", self.entry)
    }

    /// Input field `field`'s global address.
    fn input(&self, field: u32) -> String {
        self.inputs[field as usize].clone()
    }

    /// Output field `field`'s global address.
    fn output(&self, field: u32) -> String {
        self.outputs[field as usize].clone()
    }

    /// The prologue's part for the fields after the first: each input field's, then each output
    /// field's global address in a register of its own (field 0's are [`INPUT`] and [`OUTPUT`]).
    fn other_fields(&mut self) {
        for field in 1..self.program.fields {
            let reg = self.global_param(KernelParam::Input { field });
            self.inputs.push(reg);
        }
        for field in 1..self.program.output_fields {
            let reg = self.global_param(KernelParam::Output { field });
            self.outputs.push(reg);
        }
    }

    /// A buffer parameter's global address, in a register of its own.
    fn global_param(&mut self, param: KernelParam) -> String {
        let (name, reg) = (self.param_name(&param.suffix()), self.a());
        self.line(&format!("ld.param.u64 {reg}, [{name}];"));
        self.line(&format!("cvta.to.global.u64 {reg}, {reg};"));
        reg
    }

    fn prologue(&mut self) {
        if self.program.pattern.dims() != Dims::One {
            return self.grid_prologue();
        }
        let pattern = self.program.pattern;
        let warp = pattern.warp();
        let [input, output, n, n_out] = [
            KernelParam::Input { field: 0 },
            KernelParam::Output { field: 0 },
            KernelParam::Len,
            KernelParam::OutputLen,
        ]
        .map(|p| self.param_name(&p.suffix()));
        self.comment("tile = global thread / warp; lane = thread within its logical warp");
        self.line(&format!("ld.param.u64 {INPUT}, [{input}];"));
        self.line(&format!("ld.param.u64 {OUTPUT}, [{output}];"));
        self.line(&format!("ld.param.u64 {N}, [{n}];"));
        self.line(&format!("ld.param.u64 {N_OUT}, [{n_out}];"));
        self.line(&format!("cvta.to.global.u64 {INPUT}, {INPUT};"));
        self.line(&format!("cvta.to.global.u64 {OUTPUT}, {OUTPUT};"));
        self.other_fields();
        self.line(&format!("sub.u64 {N_MINUS_1}, {N}, 1;"));
        let (tid, ctaid, ntid) = (TID, CTAID, NTID);
        self.line(&format!("mov.u32 {tid}, %tid.x;"));
        self.line(&format!("mov.u32 {ctaid}, %ctaid.x;"));
        self.line(&format!("mov.u32 {ntid}, %ntid.x;"));
        // Blocks hold whole 32-lane warps, so tid's low bits are the lane in a logical warp.
        self.line(&format!("and.b32 {LANE}, {tid}, {};", warp - 1));
        self.placement(&|_| String::new());
        self.exchange_prologue();
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        let mut rest = stmts;
        while let Some((stmt, after)) = rest.split_first() {
            // A block tile's run of neighbour moves is one exchange (one barrier).
            if let (Some(_), Stmt::Op(Op::Neighbour { .. })) = (&self.exchange, stmt) {
                let run = rest.iter().take_while(|s| matches!(s, Stmt::Op(Op::Neighbour { .. }))).count();
                self.exchange_run(&rest[..run]);
                rest = &rest[run..];
                continue;
            }
            rest = after;
            match stmt {
                Stmt::Op(op) => self.op(op),
                Stmt::Branch { test, taken, fallback } => self.branch(*test, taken, fallback),
                Stmt::Loop { times, body } => self.repeat(*times, body),
            }
        }
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::Compute(instr) => self.instr(instr),
            Op::Load { dst, cache, at, lanes, field, row } => self.load(*dst, *cache, *at, *lanes, *field, *row),
            Op::LoadVector { dsts, first_cache, at, lanes, field, row } => {
                self.load_vector(dsts, *first_cache, *at, *lanes, *field, *row)
            }
            Op::LoadVectorRule { dsts, first_cache, at, lanes, field, row } => {
                self.load_vector_rule(dsts, *first_cache, *at, *lanes, *field, *row)
            }
            Op::ReadStage { dsts, first_cache, at, field } => self.read_stage(dsts, *first_cache, *at, *field),
            Op::StageBlock { lead, elements, field } => self.stage_block(*lead, *elements, *field),
            Op::Shared { dst, at, field, row } => self.shared(*dst, *at, *field, *row),
            Op::StageWarp { stage, field } => self.stage_warp(stage, *field),
            Op::Divisions(run) => self.divisions(run),
            Op::Store { src, field, output, at, row } => self.store(*src, *field, *output, *at, *row),
            Op::StoreVector { srcs, field, output, at, row } => self.store_vector(srcs, *field, *output, *at, *row),
            Op::Carry(moves) => self.carry(moves),
            Op::Advance => self.advance(),
            Op::Neighbour { dst, src, from } => self.neighbour(*dst, *src, *from),
            Op::StepRule { values, dsts } => self.step_rule(values, dsts),
            Op::StoreOwned { srcs, field, lead, width, row } => self.store_owned(srcs, *field, *lead, *width, *row),
            Op::Stream { axis, by } => self.stream(*axis, *by),
            Op::RowRule { row, window, at, first } => self.row_rule(row, window, *at, *first),
            Op::PlaneRowsRule { rows, first, dsts } => self.plane_rows_rule(rows, *first, dsts),
            Op::PlaneRule { planes, first } => self.plane_rule(planes, *first),
            Op::FetchPlane { plane, field } => self.fetch_plane(*plane, *field),
            Op::PutPlane { slot, field } => self.put_plane(*slot, *field),
            Op::BlockBarrier => self.line("bar.sync 0;"),
            Op::ReadRing { dsts, first_cache, at, field, row, part } => {
                self.read_ring(dsts, *first_cache, *at, *field, *row, *part)
            }
            Op::TurnRing => self.turn_ring(),
            Op::PrefetchL2 { field, first, rows, elements } => self.prefetch_l2(*field, *first, *rows, *elements),
        }
    }

    /// The test, a jump to `taken`, `fallback`, then `taken`. Code on one arm may not use what
    /// the other computed, so each arm starts with no cached lane predicates or addresses.
    fn branch(&mut self, test: TileTest, taken: &[Stmt], fallback: &[Stmt]) {
        let (q, names) = match test {
            TileTest::Inside { elements } => {
                let lead = self.program.schedule.lead;
                self.comment("interior tile: every element it loads lies inside the input");
                let (lo, hi, inside) = (self.a(), self.a(), self.q());
                self.line(&format!("sub.s64 {lo}, {TILE_START}, {lead};"));
                self.line(&format!("add.s64 {hi}, {lo}, {elements};"));
                self.line(&format!("setp.ge.s64 {inside}, {lo}, 0;"));
                self.line(&format!("setp.le.and.s64 {inside}, {hi}, {N}, {inside};"));
                self.rows_inside(&inside);
                (inside, ("interior", "tile_done"))
            }
            TileTest::Whole { row } => {
                match self.grid {
                    None => self.comment("whole tile: every output it stores exists"),
                    Some(_) => self.comment(&format!("whole row: every output of output row {row} exists")),
                }
                self.store_starts_before(taken);
                let (end, whole) = (self.a(), self.q());
                self.line(&format!("add.u64 {end}, {TILE_START}, {};", self.program.pattern.tile_outputs()));
                self.line(&format!("setp.le.u64 {whole}, {end}, {N_OUT};"));
                self.row_whole(&whole, row);
                (whole, ("stores_vector", "stores_done"))
            }
            TileTest::RowsInside => {
                self.comment("rows inside: every input row of the tile inside the grid, rows whole vectors (only the rule along x applies)");
                let inside = self.q();
                self.line(&format!("mov.pred {inside}, 1;"));
                self.rows_inside(&inside);
                if self.grid.is_none() {
                    let aligned = self.rows_aligned();
                    self.line(&format!("and.pred {inside}, {inside}, {aligned};"));
                }
                (inside, ("rows_inside", "rows_inside_done"))
            }
        };
        let (fast, done) = (self.label(names.0), self.label(names.1));
        self.line(&format!("@{q} bra {fast};"));
        let kept = self.kept_across(&[taken, fallback]);
        // Each arm, and the code after both, starts from what was computed before the branch
        // (the shuffle source lanes) or kept across it, never from what an arm computed: a
        // register one arm set is unset on the other path.
        let lane_plus = self.lane_plus.clone();
        let start_path = |printer: &mut Self| {
            printer.lane_below.clear();
            printer.lane_plus.clone_from(&lane_plus);
            printer.resume_path(&kept);
        };
        start_path(self);
        self.rule_path_start(test, fallback);
        self.stmts(fallback);
        self.edges_x = None;
        self.line(&format!("bra {done};"));
        self.label_line(&fast);
        start_path(self);
        self.stmts(taken);
        self.label_line(&done);
        start_path(self);
    }

    /// `body` `times` times: a counter, the body, a jump back while the counter is below
    /// `times`. Every lane counts alike, so the warp stays converged for the shuffles inside.
    fn repeat(&mut self, times: u32, body: &[Stmt]) {
        let (counter, again) = (self.t(), self.q());
        self.comment(&format!("loop: {times} iterations"));
        self.line(&format!("mov.u32 {counter}, 0;"));
        let start = self.label("loop");
        // Values cached before the loop are valid in every iteration, but those cached inside
        // one iteration are not (an arm may have computed them): start the body with none.
        self.label_line(&start);
        // Unrolled, ptxas hoists every step's loads to the top and runs out of registers.
        self.line(".pragma \"nounroll\";");
        self.forget_path();
        let exchanges = self.exchanges_printed();
        self.stmts(body);
        self.exchange_loop_end(exchanges);
        self.line(&format!("add.u32 {counter}, {counter}, 1;"));
        self.line(&format!("setp.lt.u32 {again}, {counter}, {times};"));
        self.line(&format!("@{again} bra {start};"));
        self.lane_below.clear();
        self.lane_plus.clear();
        self.forget_path();
    }

    /// Drops the addresses and row values computed on the path so far: code reached by a
    /// jump may not have computed them.
    fn forget_path(&mut self) {
        self.lane_starts.clear();
        self.rule_vectors.clear();
        self.input_rows.clear();
        self.output_rows.clear();
    }

    /// The predicate `lane < k`.
    fn lane_below(&mut self, k: u32) -> String {
        if let Some(q) = self.lane_below.get(&k) {
            return q.clone();
        }
        let q = self.q();
        self.line(&format!("setp.lt.u32 {q}, {LANE}, {k};"));
        self.lane_below.insert(k, q.clone());
        q
    }

    /// The predicate "this lane is in `lanes`", or `None` for all lanes.
    fn lane_guard(&mut self, lanes: (u32, u32)) -> Option<String> {
        let mut guard: Option<String> = None;
        if lanes.1 < self.program.pattern.warp() {
            guard = Some(self.lane_below(lanes.1));
        }
        if lanes.0 > 0 {
            let below = self.lane_below(lanes.0);
            let q = self.q();
            self.line(&format!("not.pred {q}, {below};"));
            if let Some(g) = &guard {
                self.line(&format!("and.pred {q}, {q}, {g};"));
            }
            guard = Some(q);
        }
        guard
    }

    fn label(&mut self, what: &str) -> String {
        self.next_label += 1;
        format!("$rc_{what}_{}", self.next_label)
    }

    /// Starts a block that can be reached by a jump: values cached by the code above it may not
    /// have been computed on the path that jumped here, so the caches are dropped.
    fn label_line(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
        self.lane_below.clear();
        self.lane_plus.clear();
    }

    /// The module's header: what the program is, the PTX version and target, the shared
    /// memory every kernel of the module declares.
    fn header(&self) -> String {
        let program = self.program;
        let pattern = program.pattern;
        let mut out = String::new();
        let _ = writeln!(out, "//");
        let _ = writeln!(out, "// Generated by rc #[stencil]: {pattern}, element {}", program.element);
        let _ = writeln!(out, "// distribution: {}", program.distribution);
        let _ = writeln!(
            out,
            "// {} cache registers per lane, {:.3} shuffles per output",
            program.cache_registers(),
            program.shuffles_per_output()
        );
        let _ = writeln!(out, "//");
        let _ = writeln!(out, ".version {PTX_VERSION}");
        let types = program.reg_types().iter().chain(&program.params).chain([&program.element]);
        let sm = types.map(|t| t.info().sm).max().unwrap_or(70);
        let _ = writeln!(out, ".target sm_{sm}");
        let _ = writeln!(out, ".address_size 64");
        let _ = writeln!(out);
        if program.machine.computes(UnaryOp::Exp) {
            out.push_str(&exp::declarations());
        }
        let dynamic = program.machine.dynamic_shared_bytes();
        if dynamic > 0 {
            // Sized at launch: ptxas refuses static shared arrays past 48 KiB.
            let _ = writeln!(out, "// {dynamic} bytes of dynamic shared memory per block");
            let _ = writeln!(out, ".extern .shared .align 16 .b8 {SHARED_TILE}[];");
            let _ = writeln!(out);
        }
        out
    }

    /// The kernel as text: after the module's header where `header`.
    fn finish(self, header: bool, kernel: Kernel) -> String {
        let program = self.program;
        let n = program.reg_types().len().max(1);
        let mut out = if header { self.header() } else { String::new() };
        let dynamic = program.machine.dynamic_shared_bytes();
        match kernel {
            Kernel::Whole => {}
            Kernel::Interior => {
                let _ = writeln!(
                    out,
                    "// kernel 1 of 2: the interior path, on the tiles whose test holds (the others do nothing)"
                );
            }
            Kernel::Edges => {
                let _ = writeln!(out);
                let _ = writeln!(
                    out,
                    "// kernel 2 of 2: the boundary path, on the tiles whose test fails (the others do nothing)"
                );
            }
        }
        let _ = writeln!(out, ".visible .entry {}(", self.entry);
        let params: Vec<String> =
            KernelParam::list(program.declared.dims(), program.fields, program.output_fields, &program.params)
                .into_iter()
                .map(|p| format!("\t.param .{} {}", p.ptx_type(), self.param_name(&p.suffix())))
                .collect();
        let _ = writeln!(out, "{}", params.join(",\n"));
        let _ = writeln!(out, ")");
        if let Some(bounds) = program.machine.launch_bounds {
            let _ = writeln!(out, ".maxntid {}, 1, 1", bounds.max_threads_per_block);
            if let Some(m) = bounds.min_blocks_per_sm {
                let _ = writeln!(out, ".minnctapersm {m}");
            }
        }
        let _ = writeln!(out, "{{");
        let _ = writeln!(out, "\t.reg .pred %p<{n}>;");
        let _ = writeln!(out, "\t.reg .pred %q<{}>;", self.next_q.max(1));
        let _ = writeln!(out, "\t.reg .b32 %r<{n}>;");
        let _ = writeln!(out, "\t.reg .b32 %t<{}>;", self.next_t.max(1));
        let _ = writeln!(out, "\t.reg .b64 %a<{}>;", self.next_a.max(1));
        let _ = writeln!(out, "\t.reg .f32 %f<{n}>;");
        let _ = writeln!(out, "\t.reg .f64 %fd<{n}>;");
        let s = self.next_s.max(1);
        let _ = writeln!(out, "\t.reg .f32 %sf<{s}>;");
        let _ = writeln!(out, "\t.reg .f64 %sd<{s}>;");
        let _ = writeln!(out, "\t.reg .b32 %sr<{s}>;");
        if self.next_h > 0 {
            let _ = writeln!(out, "\t.reg .b16 %h<{}>;", self.next_h);
        }
        if program.reg_types().contains(&ScalarType::F16) || program.element == ScalarType::F16 {
            let _ = writeln!(out, "\t.reg .f16 %hf<{n}>;");
            let _ = writeln!(out, "\t.reg .f16 %sh<{s}>;");
        }
        if let Some(bytes) = program.machine.shared_bytes.filter(|_| dynamic == 0) {
            let _ = writeln!(out, "\t.shared .align 16 .b8 {SHARED_TILE}[{bytes}];");
        }
        let _ = writeln!(out);
        out.push_str(&self.body);
        let _ = writeln!(out, "}}");
        out
    }
}
