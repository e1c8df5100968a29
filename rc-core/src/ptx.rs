//! The PTX back end: prints a warp program as one `.entry`, instruction for instruction.
//!
//! Straight-line code: every lane runs every instruction, tail lanes included (their loads and
//! stores are predicated), so every `shfl.sync` has the full member mask. Floating point uses
//! explicit round-to-nearest (`add.rn`, `mul.rn`, ...), which also forbids ptxas from contracting
//! into FMA; sign flips and `abs` are bit operations, exactly as Rust defines them.
//!
//! Kernel parameters, in order: input pointer, output pointer, input length `n`, output length
//! `n_out` (all `.u64`), then one parameter per stencil parameter.

use std::collections::HashMap;
use std::fmt::Write;

use crate::body::{BinaryOp, CompareOp, UnaryOp};
use crate::pattern::{Boundary, Pattern};
use crate::distribution::{AffineLoad, Layout};
use crate::program::{Instr, Reg, StageScope, WarpProgram};
use crate::stage::{self, StagePadding};
use crate::reciprocal::Reciprocal;
use crate::scalar::{Scalar, ScalarType};
use crate::schedule::LanePieces;

/// PTX ISA 7.0 (CUDA 11.0): old enough for every driver since, new enough for `shfl.sync`.
pub const PTX_VERSION: &str = "7.0";
pub const PTX_TARGET: &str = "sm_70";

/// The PTX module for `program`, with one kernel named `entry`.
pub fn print(program: &WarpProgram, entry: &str) -> String {
    let mut p = Printer::new(program, entry);
    p.prologue();
    if program.staged {
        p.staged_paths();
    } else if program.vector == 1 {
        p.instrs(&program.instrs, None);
    } else {
        // A lane's granules are consecutive in memory: its loads and stores go out as vectors.
        let loads = program.instrs.iter().take_while(|i| matches!(i, Instr::Load { cache: Some(_), .. })).count();
        let (stores, rest): (Vec<Instr>, Vec<Instr>) =
            program.instrs[loads..].iter().cloned().partition(|i| matches!(i, Instr::Store { .. }));
        p.tile_paths(&program.instrs[..loads], &rest, &stores);
    }
    p.line("ret;");
    p.finish()
}

/// Elements in one vector access: 16 bytes, or fewer if a granule is shorter.
fn vector_width(program: &WarpProgram) -> u32 {
    Layout::Granule(program.vector).access_bytes(program.element) / program.element.bytes()
}

/// Runs of instructions (by index) that one vector access can serve: `width` consecutive
/// tile elements per lane, starting at a multiple of `width`, with the same lanes.
fn vector_runs(items: &[(u32, u32, (u32, u32))], width: u32) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let (base, stride, lanes) = items[i];
        let n = width as usize;
        let fits = base % width == 0
            && i + n <= items.len()
            && (1..n).all(|k| items[i + k] == (base + k as u32, stride, lanes));
        let len = if fits { n } else { 1 };
        runs.push(i..i + len);
        i += len;
    }
    runs
}

/// The register holding virtual register `reg`, named by its type.
fn reg_name(ty: ScalarType, reg: Reg) -> String {
    match ty {
        ScalarType::F32 => format!("%f{reg}"),
        ScalarType::F64 => format!("%fd{reg}"),
        ScalarType::I32 | ScalarType::U32 => format!("%r{reg}"),
        ScalarType::Bool => format!("%p{reg}"),
    }
}

fn scratch_prefix(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::F32 => "%sf",
        ScalarType::F64 => "%sd",
        _ => "%sr",
    }
}

fn ptx_type(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
        ScalarType::I32 => "s32",
        ScalarType::U32 => "u32",
        ScalarType::Bool => "pred",
    }
}

/// An immediate of type `s.ty`, bit-exact (`0f3F800000` for 1.0f32).
fn immediate(s: Scalar) -> String {
    match s.ty {
        ScalarType::F32 => format!("0f{:08X}", s.bits as u32),
        ScalarType::F64 => format!("0d{:016X}", s.bits),
        ScalarType::I32 => format!("{}", s.bits as u32 as i32),
        ScalarType::U32 => format!("{}", s.bits as u32),
        ScalarType::Bool => format!("{}", s.bits & 1),
    }
}

/// One cache register's load, as the program states it.
#[derive(Clone, Copy, Debug)]
struct CacheLoad {
    dst: Reg,
    cache: Option<u32>,
    at: AffineLoad,
    lanes: (u32, u32),
}

/// A tile path's cache loads not printed yet: each goes out just before its first reader.
struct PendingLoads {
    /// Loads of runs of consecutive registers; `None` once printed.
    runs: Vec<Option<Vec<CacheLoad>>>,
    /// Which run loads a register.
    run_of: HashMap<Reg, usize>,
    /// Interior path: one vector load per run. Boundary path: one checked load per register.
    vector: bool,
    /// Runs read the block's stage in shared memory (vectors, no checks) instead.
    staged: bool,
    /// The lane's first element address, per lane stride (vector loads).
    lane_start: HashMap<u32, String>,
}

impl PendingLoads {
    fn new(runs: Vec<Vec<CacheLoad>>, vector: bool) -> PendingLoads {
        PendingLoads {
            run_of: runs.iter().enumerate().flat_map(|(i, run)| run.iter().map(move |l| (l.dst, i))).collect(),
            runs: runs.into_iter().map(Some).collect(),
            vector,
            staged: false,
            lane_start: HashMap::new(),
        }
    }
}

struct Printer<'a> {
    program: &'a WarpProgram,
    entry: &'a str,
    body: String,
    /// Scratch registers: 64-bit addresses (%a), 32-bit values (%t), predicates (%q).
    next_a: u32,
    next_t: u32,
    next_q: u32,
    /// Scratch values of the element's type for intermediate selects (%sf, %sd or %sr).
    next_s: u32,
    next_label: u32,
    /// `lane < k`, computed once per k.
    lane_below: HashMap<u32, String>,
    /// `lane + k` (the shuffle source lane), computed once per k.
    lane_plus: HashMap<u32, String>,
    /// Registers holding an `f32` constant, and its value: divisions by them may use the fast
    /// path of [`Reciprocal`].
    f32_constants: HashMap<Reg, f32>,
    /// Dividends `sum + 0.0` of fast divisions: the sum's register, divided on the fast path
    /// (see [`WarpProgram::normalized_dividends`]).
    normalized: HashMap<Reg, Reg>,
    /// Bytes of shared memory the stage takes, once printed.
    stage_bytes: Option<u32>,
    /// Bytes of one warp's region of a staged window's stage, once printed.
    stage_region: u32,
}

// Fixed scratch registers set up by the prologue.
const INPUT: &str = "%a0";
const OUTPUT: &str = "%a1";
const N: &str = "%a2";
const N_OUT: &str = "%a3";
const TILE_START: &str = "%a4";
const N_MINUS_1: &str = "%a5";
const LANE: &str = "%t0";
const TID: &str = "%t1";
const CTAID: &str = "%t2";
const NTID: &str = "%t3";
/// Strategy shared_memory's staged tile.
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
            next_s: 0,
            next_label: 0,
            lane_below: HashMap::new(),
            lane_plus: HashMap::new(),
            f32_constants: program.f32_constants(),
            normalized: program.normalized_dividends(),
            stage_bytes: None,
            stage_region: 0,
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

    fn prologue(&mut self) {
        let pattern = self.program.pattern;
        let warp = pattern.warp();
        let (input, output, n, n_out) =
            (self.param_name("input"), self.param_name("output"), self.param_name("n"), self.param_name("n_out"));
        self.comment("tile = global thread / warp; lane = thread within its logical warp");
        self.line(&format!("ld.param.u64 {INPUT}, [{input}];"));
        self.line(&format!("ld.param.u64 {OUTPUT}, [{output}];"));
        self.line(&format!("ld.param.u64 {N}, [{n}];"));
        self.line(&format!("ld.param.u64 {N_OUT}, [{n_out}];"));
        self.line(&format!("cvta.to.global.u64 {INPUT}, {INPUT};"));
        self.line(&format!("cvta.to.global.u64 {OUTPUT}, {OUTPUT};"));
        self.line(&format!("sub.u64 {N_MINUS_1}, {N}, 1;"));
        let (tid, ctaid, ntid) = (TID, CTAID, NTID);
        self.line(&format!("mov.u32 {tid}, %tid.x;"));
        self.line(&format!("mov.u32 {ctaid}, %ctaid.x;"));
        self.line(&format!("mov.u32 {ntid}, %ntid.x;"));
        // Blocks hold whole 32-lane warps, so tid's low bits are the lane in a logical warp.
        self.line(&format!("and.b32 {LANE}, {tid}, {};", warp - 1));
        let (global, tid64) = (self.a(), self.a());
        self.line(&format!("mul.wide.u32 {global}, {ctaid}, {ntid};"));
        self.line(&format!("cvt.u64.u32 {tid64}, {tid};"));
        self.line(&format!("add.u64 {global}, {global}, {tid64};"));
        self.line(&format!("shr.u64 {global}, {global}, {};", warp.trailing_zeros()));
        self.line(&format!("mul.lo.u64 {TILE_START}, {global}, {};", pattern.tile_outputs()));
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

    /// `base + lane * stride` as a 64-bit index relative to the tile, plus `TILE_START`.
    fn tile_index(&mut self, base: u32, stride: u32) -> String {
        let e = self.t();
        self.line(&format!("mad.lo.u32 {e}, {LANE}, {stride}, {base};"));
        let g = self.a();
        self.line(&format!("cvt.u64.u32 {g}, {e};"));
        self.line(&format!("add.u64 {g}, {g}, {TILE_START};"));
        g
    }

    fn address(&mut self, base: &str, index: &str, bytes: u32) -> String {
        let addr = self.a();
        self.line(&format!("mad.lo.u64 {addr}, {index}, {bytes}, {base};"));
        addr
    }

    /// Prints `instrs` in order; a run of divisions by constants shares one check and one branch.
    /// With `pending`, each instruction's cache loads go just before it.
    fn instrs(&mut self, instrs: &[Instr], mut pending: Option<&mut PendingLoads>) {
        let mut i = 0;
        while i < instrs.len() {
            let run: Vec<(Reg, Reg, Reg, Reciprocal)> =
                instrs[i..].iter().map_while(|instr| self.fast_division(instr)).collect();
            let len = run.len().max(1);
            if let Some(pending) = pending.as_deref_mut() {
                for instr in &instrs[i..i + len] {
                    self.loads_for(pending, instr);
                }
            }
            if run.is_empty() {
                self.instr(&instrs[i]);
            } else {
                self.divisions(&run);
            }
            i += len;
        }
    }

    /// `(dst, dividend, divisor, reciprocal)` of an `f32` division by a constant with a fast path.
    fn fast_division(&self, instr: &Instr) -> Option<(Reg, Reg, Reg, Reciprocal)> {
        self.program.fast_division(instr, &self.f32_constants)
    }

    /// Divisions by constants: the fast path for all of them, one check that each quotient is in
    /// the range where it is exact, and IEEE division for all of them where one is not (rare:
    /// zero, infinite, NaN or tiny dividends). Bit-exact with `div.rn.f32`; see `reciprocal`.
    fn divisions(&mut self, run: &[(Reg, Reg, Reg, Reciprocal)]) {
        self.comment("x / b, b constant: q0 = x * RN(1/b), q = q0 + (x - b*q0) * RN(1/b) == RN(x/b) where |q| >= bound");
        let exact = self.q();
        for (i, &(dst, a, _, fast)) in run.iter().enumerate() {
            // For a dividend `sum + 0.0`, the sum: equal wherever the check passes.
            let x = self.normalized.get(&a).map_or_else(|| self.reg(a), |&sum| self.reg(sum));
            let d = self.reg(dst);
            let (q0, r, m) = (self.scratch(ScalarType::F32), self.scratch(ScalarType::F32), self.scratch(ScalarType::F32));
            let y = immediate(Scalar::f32(fast.reciprocal));
            let minus_b = immediate(Scalar::f32(-fast.divisor));
            let bound = immediate(Scalar::f32(fast.min_quotient));
            self.line(&format!("mul.rn.f32 {q0}, {x}, {y};"));
            self.line(&format!("fma.rn.f32 {r}, {q0}, {minus_b}, {x};"));
            self.line(&format!("fma.rn.f32 {d}, {r}, {y}, {q0};"));
            self.line(&format!("abs.f32 {m}, {d};"));
            match i {
                0 => self.line(&format!("setp.ge.f32 {exact}, {m}, {bound};")),
                _ => self.line(&format!("setp.ge.and.f32 {exact}, {m}, {bound}, {exact};")),
            }
        }
        let done = self.label("divided");
        self.line(&format!("@{exact} bra {done};"));
        for &(dst, a, b, _) in run {
            let (d, x, y) = (self.reg(dst), self.reg(a), self.reg(b));
            if let Some(&sum) = self.normalized.get(&a) {
                self.line(&format!("add.rn.f32 {x}, {}, 0f00000000;", self.reg(sum)));
            }
            self.line(&format!("div.rn.f32 {d}, {x}, {y};"));
        }
        self.label_line(&done);
    }

    fn instr(&mut self, instr: &Instr) {
        let program = self.program;
        match instr {
            Instr::Load { dst, cache, at, lanes } => self.load(*dst, *cache, at.base, at.stride, *lanes),
            Instr::Stage { scope: StageScope::Block, lead, elements } => self.stage(*lead, *elements),
            Instr::Stage { scope: StageScope::Warp, lead, elements } => self.stage_warp(*lead, *elements),
            Instr::Shared { dst, at } => self.shared(*dst, at.base, at.stride),
            Instr::Pick { dst, pieces } => self.pick(*dst, pieces),
            Instr::Shuffle { dst, src, rotate, fetch } => {
                let taps: Vec<String> =
                    program.schedule.fetches[*fetch].uses.iter().map(|(p, d)| format!("output {p} tap {d:+}")).collect();
                self.comment(&format!("phase: lane l reads lane (l + {rotate}) mod {}: {}", program.pattern.warp(), taps.join(", ")));
                self.shuffle(*dst, *src, *rotate);
            }
            Instr::Param { dst, index } => {
                let ty = program.reg_type(*dst);
                let name = self.param_name(&format!("p{index}"));
                self.line(&format!("ld.param.{} {}, [{name}];", ptx_type(ty), self.reg(*dst)));
            }
            Instr::Const { dst, value } => self.constant(*dst, *value),
            Instr::Unary { dst, op, a } => self.unary(*dst, *op, *a),
            // Added on the division's slow path only.
            Instr::Binary { dst, .. } if self.normalized.contains_key(dst) => {}
            Instr::Binary { dst, op, a, b } => self.binary(*dst, *op, *a, *b),
            Instr::Compare { dst, op, a, b } => self.compare(*dst, *op, *a, *b),
            Instr::Select { dst, cond, then, otherwise } => {
                let ty = program.reg_type(*dst);
                let (d, c, t, f) = (self.reg(*dst), self.reg(*cond), self.reg(*then), self.reg(*otherwise));
                if ty == ScalarType::Bool {
                    let (x, y) = (self.q(), self.q());
                    self.line(&format!("and.pred {x}, {c}, {t};"));
                    self.line(&format!("not.pred {y}, {c};"));
                    self.line(&format!("and.pred {y}, {y}, {f};"));
                    self.line(&format!("or.pred {d}, {x}, {y};"));
                } else {
                    self.line(&format!("selp.{} {d}, {t}, {f}, {c};", ptx_type(ty)));
                }
            }
            Instr::Cast { dst, a } => self.cast(*dst, *a),
            Instr::MulAdd { dst, a, b, c } => {
                let ty = ptx_type(program.reg_type(*dst));
                let (d, a, b, c) = (self.reg(*dst), self.reg(*a), self.reg(*b), self.reg(*c));
                self.line(&format!("fma.rn.{ty} {d}, {a}, {b}, {c};"));
            }
            Instr::Store { src, output, at } => {
                self.comment(&format!("store output {output}: tile output {} + lane * {}", at.base, at.stride));
                let i = self.tile_index(at.base, at.stride);
                let q = self.q();
                self.line(&format!("setp.lt.u64 {q}, {i}, {N_OUT};"));
                let bytes = program.element.bytes();
                let addr = self.address(OUTPUT, &i, bytes);
                let ty = ptx_type(program.element);
                self.line(&format!("@{q} st.global.{ty} [{addr}], {};", self.reg(*src)));
            }
        }
    }

    /// A vector layout's program, twice. Interior tiles (every element they load lies inside
    /// the input, the common case) load with vectors; other tiles load element by element under
    /// the boundary rule. On both paths each load goes just before the instruction that first
    /// reads it, so ptxas can overlap loads with the adds and keep few registers: loading the
    /// whole cache first (before the paths joined) kept a window of 2r + V registers live at
    /// once, and the occupancy too low to hide memory latency.
    fn tile_paths(&mut self, loads: &[Instr], body: &[Instr], stores: &[Instr]) {
        let items: Vec<CacheLoad> = loads
            .iter()
            .filter_map(|i| match i {
                Instr::Load { dst, cache, at, lanes } => Some(CacheLoad { dst: *dst, cache: *cache, at: *at, lanes: *lanes }),
                _ => None,
            })
            .collect();
        let Some(last) = items.iter().map(|l| l.at.element(l.lanes.1 - 1)).max() else {
            self.instrs(body, None);
            self.vector_stores(stores);
            return;
        };
        let lead = self.program.schedule.lead;
        self.comment("interior tile: every element it loads lies inside the input");
        let (lo, hi, inside) = (self.a(), self.a(), self.q());
        self.line(&format!("sub.s64 {lo}, {TILE_START}, {lead};"));
        self.line(&format!("add.s64 {hi}, {lo}, {};", last + 1));
        self.line(&format!("setp.ge.s64 {inside}, {lo}, 0;"));
        self.line(&format!("setp.le.and.s64 {inside}, {hi}, {N}, {inside};"));
        let (fast, done) = (self.label("interior"), self.label("tile_done"));
        self.line(&format!("@{inside} bra {fast};"));
        // Code up to `fast` runs only on the boundary path: nothing it caches may be used below.
        self.lane_below.clear();
        // One checked load per element, also each just before its first reader.
        let mut pending = PendingLoads::new(items.iter().map(|&l| vec![l]).collect(), false);
        self.instrs(body, Some(&mut pending));
        for i in 0..pending.runs.len() {
            self.vector_load(&mut pending, i);
        }
        self.vector_stores(stores);
        self.line(&format!("bra {done};"));
        self.label_line(&fast);
        let width = vector_width(self.program);
        let keys: Vec<(u32, u32, (u32, u32))> = items.iter().map(|l| (l.at.base, l.at.stride, l.lanes)).collect();
        let runs: Vec<Vec<CacheLoad>> = vector_runs(&keys, width).into_iter().map(|run| items[run].to_vec()).collect();
        let mut pending = PendingLoads::new(runs, true);
        self.instrs(body, Some(&mut pending));
        // Loads nothing read (none, as the scheduler plans them) would still be owed here.
        for i in 0..pending.runs.len() {
            self.vector_load(&mut pending, i);
        }
        self.vector_stores(stores);
        self.label_line(&done);
    }

    /// Prints the load of run `i` of `pending`, unless it is printed already.
    fn vector_load(&mut self, pending: &mut PendingLoads, i: usize) {
        let Some(run) = pending.runs[i].take() else { return };
        if !pending.vector {
            for l in run {
                self.load(l.dst, l.cache, l.at.base, l.at.stride, l.lanes);
            }
            return;
        }
        let (ty, bytes, lead) = (ptx_type(self.program.element), self.program.element.bytes(), self.program.schedule.lead);
        let CacheLoad { cache, at, lanes, .. } = run[0];
        let regs: Vec<String> = run.iter().map(|l| self.reg(l.dst)).collect();
        let first = cache.unwrap_or(0);
        if pending.staged {
            let padding = StagePadding::for_granule(self.program.vector, self.program.element);
            self.comment(&format!("rc[{first}..{}] = tile elements {}.. + lane * {}, from the stage", first + regs.len() as u32, at.base, at.stride));
            let start = self.stage_lane_start(&mut pending.lane_start, &padding);
            let offset = padding.position(at.base) * bytes;
            let load = match regs.len() {
                1 => format!("ld.shared.{ty} {}, [{start}+{offset}];", regs[0]),
                n => format!("ld.shared.v{n}.{ty} {{{}}}, [{start}+{offset}];", regs.join(", ")),
            };
            self.line(&load);
            return;
        }
        self.comment(&format!("rc[{first}..{}] = tile elements {}.. + lane * {}", first + regs.len() as u32, at.base, at.stride));
        let start = self.lane_start(&mut pending.lane_start, INPUT, at.stride, lead);
        let addr = format!("{start}+{}", at.base * bytes);
        let guard = self.lane_guard(lanes);
        let load = match regs.len() {
            1 => format!("ld.global.nc.{ty} {}, [{addr}];", regs[0]),
            n => format!("ld.global.nc.v{n}.{ty} {{{}}}, [{addr}];", regs.join(", ")),
        };
        match guard {
            Some(q) => {
                for r in &regs {
                    self.line(&format!("mov.b{} {r}, 0;", bytes * 8));
                }
                self.line(&format!("@{q} {load}"));
            }
            None => self.line(&load),
        }
    }

    /// The address of tile element `lane * stride - lead` in `buffer`, computed once per stride
    /// (`known` keeps them): vector accesses add their constant offset in the instruction, as
    /// ptxas cannot fold per-access 32-bit index arithmetic into offsets itself.
    fn lane_start(&mut self, known: &mut HashMap<u32, String>, buffer: &str, stride: u32, lead: u32) -> String {
        if let Some(start) = known.get(&stride) {
            return start.clone();
        }
        let g = self.tile_index(0, stride);
        if lead > 0 {
            self.line(&format!("sub.u64 {g}, {g}, {lead};"));
        }
        let start = self.address(buffer, &g, self.program.element.bytes());
        known.insert(stride, start.clone());
        start
    }

    /// Prints the vector loads of the cache registers `instr` reads that are not loaded yet.
    fn loads_for(&mut self, pending: &mut PendingLoads, instr: &Instr) {
        for reg in instr.uses() {
            if let Some(&i) = pending.run_of.get(&reg) {
                self.vector_load(pending, i);
            }
        }
    }

    /// The program's stores, after everything else: vector stores when the whole tile's outputs
    /// exist, one checked store per output otherwise.
    fn vector_stores(&mut self, stores: &[Instr]) {
        let items: Vec<(Reg, u32, u32, u32)> = stores
            .iter()
            .filter_map(|i| match i {
                Instr::Store { src, output, at } => Some((*src, *output, at.base, at.stride)),
                _ => None,
            })
            .collect();
        let program = self.program;
        self.comment("whole tile: every output it stores exists");
        let (end, whole) = (self.a(), self.q());
        self.line(&format!("add.u64 {end}, {TILE_START}, {};", program.pattern.tile_outputs()));
        self.line(&format!("setp.le.u64 {whole}, {end}, {N_OUT};"));
        let (fast, done) = (self.label("stores_vector"), self.label("stores_done"));
        self.line(&format!("@{whole} bra {fast};"));
        self.lane_below.clear();
        for &(src, output, base, stride) in &items {
            self.instr(&Instr::Store { src, output, at: AffineLoad { base, stride } });
        }
        self.line(&format!("bra {done};"));
        self.label_line(&fast);
        let width = vector_width(program);
        let full = (0, program.pattern.warp());
        let keys: Vec<(u32, u32, (u32, u32))> = items.iter().map(|&(_, _, b, s)| (b, s, full)).collect();
        let ty = ptx_type(program.element);
        let mut lane_start: HashMap<u32, String> = HashMap::new();
        for run in vector_runs(&keys, width) {
            let (_, output, base, stride) = items[run.start];
            let regs: Vec<String> = items[run.clone()].iter().map(|&(src, ..)| self.reg(src)).collect();
            self.comment(&format!("store outputs {output}..{}: tile output {base}.. + lane * {stride}", output + regs.len() as u32));
            let bytes = program.element.bytes();
            let start = self.lane_start(&mut lane_start, OUTPUT, stride, 0);
            let addr = format!("{start}+{}", base * bytes);
            match regs.len() {
                1 => self.line(&format!("st.global.{ty} [{addr}], {};", regs[0])),
                n => self.line(&format!("st.global.v{n}.{ty} [{addr}], {{{}}};", regs.join(", "))),
            }
        }
        self.label_line(&done);
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

    fn load(&mut self, dst: Reg, cache: Option<u32>, base: u32, stride: u32, lanes: (u32, u32)) {
        let d = self.reg(dst);
        match cache {
            Some(k) => self.comment(&format!("rc[{k}] = tile element {base} + lane * {stride}")),
            None => self.comment(&format!("tap: tile element {base} + lane * {stride}, from global memory")),
        }
        let g = self.tile_index(base, stride);
        let lead = self.program.schedule.lead;
        if lead > 0 {
            self.line(&format!("sub.u64 {g}, {g}, {lead};"));
        }
        // Which lanes load at all: the others never read this register.
        let guard = self.lane_guard(lanes);
        self.read_global(&d, g, guard);
    }

    /// `d` = input element `g` (a 64-bit index, possibly outside the input) under the boundary
    /// rule, or zero where `guard` is false.
    fn read_global(&mut self, d: &str, g: String, mut guard: Option<String>) {
        let program = self.program;
        let ty = ptx_type(program.element);
        let index = match program.pattern.boundary() {
            Boundary::Valid | Boundary::Zero => {
                // g < n as unsigned: an index below zero wrapped around and fails too.
                let q = self.q();
                self.line(&format!("setp.lt.u64 {q}, {g}, {N};"));
                guard = Some(match guard {
                    Some(prev) => {
                        let both = self.q();
                        self.line(&format!("and.pred {both}, {prev}, {q};"));
                        both
                    }
                    None => q,
                });
                g
            }
            Boundary::Clamp => {
                self.line(&format!("max.s64 {g}, {g}, 0;"));
                self.line(&format!("min.s64 {g}, {g}, {N_MINUS_1};"));
                g
            }
            Boundary::Wrap => {
                let q = self.q();
                self.line(&format!("rem.s64 {g}, {g}, {N};"));
                self.line(&format!("setp.lt.s64 {q}, {g}, 0;"));
                self.line(&format!("@{q} add.s64 {g}, {g}, {N};"));
                g
            }
        };
        let addr = self.address(INPUT, &index, program.element.bytes());
        match guard {
            Some(q) => {
                self.line(&format!("mov.b{} {d}, 0;", program.element.bytes() * 8));
                self.line(&format!("@{q} ld.global.nc.{ty} {d}, [{addr}];"));
            }
            None => self.line(&format!("ld.global.nc.{ty} {d}, [{addr}];")),
        }
    }

    /// Strategy shared_memory: thread t copies block elements t, t + T, ... (T threads per
    /// block) from input index `block * block_outputs - lead` on into the staged tile, then the
    /// block waits for all of them.
    fn stage(&mut self, lead: u32, elements: u32) {
        let program = self.program;
        let pattern = program.pattern;
        let (threads, bytes) = (pattern.threads_per_block(), program.element.bytes());
        self.stage_bytes = Some(elements * bytes);
        let ty = ptx_type(program.element);
        self.comment(&format!("stage the block's {elements} input elements in shared memory"));
        let first = self.a();
        self.line(&format!("mul.wide.u32 {first}, {CTAID}, {};", pattern.block_outputs()));
        let tile = self.t();
        self.line(&format!("mov.u32 {tile}, {SHARED_TILE};"));
        for round in 0..elements.div_ceil(threads) {
            let j = self.t();
            self.line(&format!("add.u32 {j}, {TID}, {};", round * threads));
            let guard = ((round + 1) * threads > elements).then(|| {
                let q = self.q();
                self.line(&format!("setp.lt.u32 {q}, {j}, {elements};"));
                q
            });
            let g = self.a();
            self.line(&format!("cvt.u64.u32 {g}, {j};"));
            self.line(&format!("add.u64 {g}, {g}, {first};"));
            if lead > 0 {
                self.line(&format!("sub.u64 {g}, {g}, {lead};"));
            }
            let value = self.scratch(program.element);
            self.read_global(&value, g, guard.clone());
            let addr = self.t();
            self.line(&format!("mad.lo.u32 {addr}, {j}, {bytes}, {tile};"));
            let store = format!("st.shared.{ty} [{addr}], {value};");
            match guard {
                Some(q) => self.line(&format!("@{q} {store}")),
                None => self.line(&store),
            }
        }
        self.line("bar.sync 0;");
    }

    /// Staged windows: the warp copies `elements` input elements from its tile's element 0
    /// (input index `tile * tile_outputs - lead`) on into its own region of shared memory, at
    /// the padded positions of [`StagePadding`], then syncs its lanes. Lane l copies vectors
    /// l, l + W, ...: with 16-byte vectors a warp's copy is 512 contiguous bytes, every byte
    /// once. Each warp stages its own halo, so no block-wide barrier holds warps back.
    fn stage_warp(&mut self, lead: u32, elements: u32) {
        let program = self.program;
        let pattern = program.pattern;
        let padding = StagePadding::for_granule(program.vector, program.element);
        let (warp, bytes, width) = (pattern.warp(), program.element.bytes(), padding.width);
        let chunks = elements.div_ceil(width);
        let region = padding.region_bytes(elements, program.element);
        self.stage_region = region;
        self.stage_bytes = Some(stage::block_bytes(&pattern, padding.granule, program.element, elements));
        let ty = ptx_type(program.element);
        self.comment(&format!("stage the warp's {elements} input elements in its region of shared memory ({region} bytes)"));
        let origin = self.a();
        self.line(&format!("sub.s64 {origin}, {TILE_START}, {lead};"));
        // The lane's first vector: input element origin + lane * width, stage position
        // position(lane * width) in the warp's region.
        let region_start = self.t();
        self.line(&format!("shr.u32 {region_start}, {TID}, {};", warp.trailing_zeros()));
        let base = self.t();
        self.line(&format!("mov.u32 {base}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {region_start}, {region_start}, {region}, {base};"));
        let rounds = chunks.div_ceil(warp);
        // Every round's position is the first's plus a constant when a round spans whole granules.
        let incremental = (warp * width) % padding.granule == 0;
        let position = |p: &mut Self, round: u32| -> String {
            let j = p.t();
            p.line(&format!("mad.lo.u32 {j}, {LANE}, {width}, {};", round * warp * width));
            if padding.pad > 0 {
                let before = p.t();
                p.line(&format!("shr.u32 {before}, {j}, {};", padding.granule.trailing_zeros()));
                p.line(&format!("mad.lo.u32 {j}, {before}, {}, {j};", padding.pad));
            }
            let addr = p.t();
            p.line(&format!("mad.lo.u32 {addr}, {j}, {bytes}, {region_start};"));
            addr
        };
        let guard_of = |p: &mut Self, round: u32| -> Option<String> {
            ((round + 1) * warp > chunks).then(|| {
                let q = p.q();
                p.line(&format!("setp.lt.u32 {q}, {LANE}, {};", chunks - round * warp));
                q
            })
        };
        let store = |p: &mut Self, addr: &str, offset: u32, values: &[String], guard: &Option<String>| {
            let store = match values.len() {
                1 => format!("st.shared.{ty} [{addr}+{offset}], {};", values[0]),
                w => format!("st.shared.v{w}.{ty} [{addr}+{offset}], {{{}}};", values.join(", ")),
            };
            p.line(&match guard {
                Some(q) => format!("@{q} {store}"),
                None => store,
            });
        };
        let (vectors, staged) = (self.label("stage_vectors"), self.label("staged"));
        let (end, inside) = (self.a(), self.q());
        self.line(&format!("add.s64 {end}, {origin}, {};", chunks * width));
        self.line(&format!("setp.ge.s64 {inside}, {origin}, 0;"));
        self.line(&format!("setp.le.and.s64 {inside}, {end}, {N}, {inside};"));
        self.line(&format!("@{inside} bra {vectors};"));
        // The warp's first or last tile: element by element under the boundary rule.
        for round in 0..rounds {
            let guard = guard_of(self, round);
            let first = self.a();
            self.line(&format!("mul.wide.u32 {first}, {LANE}, {width};"));
            self.line(&format!("add.s64 {first}, {first}, {};", round * warp * width));
            self.line(&format!("add.s64 {first}, {first}, {origin};"));
            let values: Vec<String> = (0..width).map(|_| self.scratch(program.element)).collect();
            for (k, value) in values.iter().enumerate() {
                let g = self.a();
                self.line(&format!("add.s64 {g}, {first}, {k};"));
                self.read_global(value, g, guard.clone());
            }
            let addr = position(self, round);
            store(self, &addr, 0, &values, &guard);
        }
        self.line(&format!("bra {staged};"));
        self.label_line(&vectors);
        let g = self.a();
        self.line(&format!("mul.wide.u32 {g}, {LANE}, {width};"));
        self.line(&format!("add.s64 {g}, {g}, {origin};"));
        let source = self.address(INPUT, &g, bytes);
        let first_position = if incremental { Some(position(self, 0)) } else { None };
        for round in 0..rounds {
            let guard = guard_of(self, round);
            let values: Vec<String> = (0..width).map(|_| self.scratch(program.element)).collect();
            let offset = round * warp * width * bytes;
            let load = match width {
                1 => format!("ld.global.nc.{ty} {}, [{source}+{offset}];", values[0]),
                w => format!("ld.global.nc.v{w}.{ty} {{{}}}, [{source}+{offset}];", values.join(", ")),
            };
            self.line(&match &guard {
                Some(q) => format!("@{q} {load}"),
                None => load,
            });
            match &first_position {
                Some(addr) => {
                    let stride = padding.position(warp * width) * bytes;
                    store(self, addr, round * stride, &values, &guard);
                }
                None => {
                    let addr = position(self, round);
                    store(self, &addr, 0, &values, &guard);
                }
            }
        }
        self.label_line(&staged);
        self.line("bar.warp.sync -1;");
    }

    /// A staged-window program: the stage, then the body with each window vector read from
    /// shared memory just before its first reader (no boundary path: the stage applied the
    /// boundary rule), then the stores.
    fn staged_paths(&mut self) {
        let program = self.program;
        let (mut loads, mut rest, mut stores) = (Vec::new(), Vec::new(), Vec::new());
        for instr in &program.instrs {
            match instr {
                Instr::Stage { .. } => self.instr(instr),
                Instr::Load { dst, cache, at, lanes } => loads.push(CacheLoad { dst: *dst, cache: *cache, at: *at, lanes: *lanes }),
                Instr::Store { .. } => stores.push(instr.clone()),
                other => rest.push(other.clone()),
            }
        }
        let width = vector_width(program);
        // Every lane reads its window from the stage, so runs need not share a lane range.
        let keys: Vec<(u32, u32, (u32, u32))> = loads.iter().map(|l| (l.at.base, l.at.stride, (0, 0))).collect();
        let runs: Vec<Vec<CacheLoad>> = vector_runs(&keys, width).into_iter().map(|run| loads[run].to_vec()).collect();
        let mut pending = PendingLoads::new(runs, true);
        pending.staged = true;
        self.instrs(&rest, Some(&mut pending));
        for i in 0..pending.runs.len() {
            self.vector_load(&mut pending, i);
        }
        self.vector_stores(&stores);
    }

    /// The shared-memory address of this lane's granule in the first row of its warp's region,
    /// computed once (`known`, keyed by the granule like [`Printer::lane_start`]'s strides).
    fn stage_lane_start(&mut self, known: &mut HashMap<u32, String>, padding: &StagePadding) -> String {
        if let Some(start) = known.get(&padding.granule) {
            return start.clone();
        }
        let pattern = self.program.pattern;
        let bytes = self.program.element.bytes();
        let start = self.t();
        self.line(&format!("shr.u32 {start}, {TID}, {};", pattern.warp().trailing_zeros()));
        let base = self.t();
        self.line(&format!("mov.u32 {base}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {start}, {start}, {}, {base};", self.stage_region));
        self.line(&format!("mad.lo.u32 {start}, {LANE}, {}, {start};", (padding.granule + padding.pad) * bytes));
        known.insert(padding.granule, start.clone());
        start
    }

    /// Strategy shared_memory: this warp's tile element `base + lane * stride` from the stage.
    fn shared(&mut self, dst: Reg, base: u32, stride: u32) {
        let program = self.program;
        let pattern = program.pattern;
        let bytes = program.element.bytes();
        let d = self.reg(dst);
        self.comment(&format!("tap: tile element {base} + lane * {stride}, from shared memory"));
        // Element of the block's stage: (warp in block) * tile_outputs + base + lane * stride.
        let e = self.t();
        self.line(&format!("shr.u32 {e}, {TID}, {};", pattern.warp().trailing_zeros()));
        self.line(&format!("mul.lo.u32 {e}, {e}, {};", pattern.tile_outputs()));
        self.line(&format!("add.u32 {e}, {e}, {base};"));
        self.line(&format!("mad.lo.u32 {e}, {LANE}, {stride}, {e};"));
        let addr = self.t();
        self.line(&format!("mov.u32 {addr}, {SHARED_TILE};"));
        self.line(&format!("mad.lo.u32 {addr}, {e}, {bytes}, {addr};"));
        self.line(&format!("ld.shared.{} {d}, [{addr}];", ptx_type(program.element)));
    }

    /// `dst` = the register of this lane's piece: a chain of selects from the last piece down.
    fn pick(&mut self, dst: Reg, pieces: &LanePieces) {
        let ty = ptx_type(self.program.reg_type(dst));
        let d = self.reg(dst);
        let runs = &pieces.0;
        let Some(&(_, last)) = runs.last() else { return };
        let mut acc = self.reg(last);
        for i in (0..runs.len().saturating_sub(1)).rev() {
            let q = self.lane_below(runs[i + 1].0);
            let target = if i == 0 { d.clone() } else { self.scratch(self.program.reg_type(dst)) };
            self.line(&format!("selp.{ty} {target}, {}, {acc}, {q};", self.reg(runs[i].1)));
            acc = target;
        }
        if runs.len() == 1 {
            self.line(&format!("mov.{ty} {d}, {acc};"));
        }
    }

    fn shuffle(&mut self, dst: Reg, src: Reg, rotate: u32) {
        let warp = self.program.pattern.warp();
        // c: segment mask (32 - w) in bits 12:8, clamp 31 in bits 4:0 (see the PTX ISA, shfl.sync).
        let c = ((32 - warp) << 8) | 0x1f;
        let source = match self.lane_plus.get(&rotate) {
            Some(s) => s.clone(),
            None => {
                let s = self.t();
                self.line(&format!("add.u32 {s}, {LANE}, {rotate};"));
                self.lane_plus.insert(rotate, s.clone());
                s
            }
        };
        let (d, s) = (self.reg(dst), self.reg(src));
        if self.program.element.words() == 2 {
            let (lo, hi, lo2, hi2) = (self.t(), self.t(), self.t(), self.t());
            self.line(&format!("mov.b64 {{{lo}, {hi}}}, {s};"));
            self.line(&format!("shfl.sync.idx.b32 {lo2}, {lo}, {source}, {c}, 0xffffffff;"));
            self.line(&format!("shfl.sync.idx.b32 {hi2}, {hi}, {source}, {c}, 0xffffffff;"));
            self.line(&format!("mov.b64 {d}, {{{lo2}, {hi2}}};"));
        } else {
            self.line(&format!("shfl.sync.idx.b32 {d}, {s}, {source}, {c}, 0xffffffff;"));
        }
    }

    fn constant(&mut self, dst: Reg, value: Scalar) {
        let d = self.reg(dst);
        match value.ty {
            ScalarType::Bool => {
                let t = self.t();
                self.line(&format!("mov.u32 {t}, {};", value.bits & 1));
                self.line(&format!("setp.ne.u32 {d}, {t}, 0;"));
            }
            ty => self.line(&format!("mov.{} {d}, {};", ptx_type(ty), immediate(value))),
        }
    }

    fn unary(&mut self, dst: Reg, op: UnaryOp, a: Reg) {
        let ty = self.program.reg_type(dst);
        let (d, x) = (self.reg(dst), self.reg(a));
        let text = match (op, ty) {
            // Rust flips/clears the sign bit, NaN included; neg.f32/abs.f32 need not.
            (UnaryOp::Neg, ScalarType::F32) => format!("xor.b32 {d}, {x}, 0x80000000;"),
            (UnaryOp::Neg, ScalarType::F64) => format!("xor.b64 {d}, {x}, 0x8000000000000000;"),
            (UnaryOp::Abs, ScalarType::F32) => format!("and.b32 {d}, {x}, 0x7FFFFFFF;"),
            (UnaryOp::Abs, ScalarType::F64) => format!("and.b64 {d}, {x}, 0x7FFFFFFFFFFFFFFF;"),
            (UnaryOp::Neg, _) => format!("neg.s32 {d}, {x};"),
            (UnaryOp::Abs, _) => format!("abs.s32 {d}, {x};"),
            (UnaryOp::Sqrt, t) => format!("sqrt.rn.{} {d}, {x};", ptx_type(t)),
            (UnaryOp::Not, ScalarType::Bool) => format!("not.pred {d}, {x};"),
            (UnaryOp::Not, _) => format!("not.b32 {d}, {x};"),
        };
        self.line(&text);
    }

    fn binary(&mut self, dst: Reg, op: BinaryOp, a: Reg, b: Reg) {
        let ty = self.program.reg_type(dst);
        let t = ptx_type(ty);
        let (d, x, y) = (self.reg(dst), self.reg(a), self.reg(b));
        if ty.is_float() {
            match op {
                BinaryOp::Add => self.line(&format!("add.rn.{t} {d}, {x}, {y};")),
                BinaryOp::Sub => self.line(&format!("sub.rn.{t} {d}, {x}, {y};")),
                BinaryOp::Mul => self.line(&format!("mul.rn.{t} {d}, {x}, {y};")),
                BinaryOp::Div => self.line(&format!("div.rn.{t} {d}, {x}, {y};")),
                BinaryOp::Min | BinaryOp::Max => {
                    // isnan(x) ? y : (y < x ? y : x) for min (y > x for max), as ops::binary.
                    let cmp = if op == BinaryOp::Min { "lt" } else { "gt" };
                    let (q, nan) = (self.q(), self.q());
                    let tmp = self.scratch(ty);
                    self.line(&format!("setp.{cmp}.{t} {q}, {y}, {x};"));
                    self.line(&format!("selp.{t} {tmp}, {y}, {x}, {q};"));
                    self.line(&format!("setp.nan.{t} {nan}, {x}, {x};"));
                    self.line(&format!("selp.{t} {d}, {y}, {tmp}, {nan};"));
                }
                BinaryOp::And | BinaryOp::Or => {}
            }
            return;
        }
        let text = match (op, ty) {
            (BinaryOp::And, ScalarType::Bool) => format!("and.pred {d}, {x}, {y};"),
            (BinaryOp::Or, ScalarType::Bool) => format!("or.pred {d}, {x}, {y};"),
            (BinaryOp::Add, _) => format!("add.s32 {d}, {x}, {y};"),
            (BinaryOp::Sub, _) => format!("sub.s32 {d}, {x}, {y};"),
            (BinaryOp::Mul, _) => format!("mul.lo.s32 {d}, {x}, {y};"),
            (BinaryOp::Min, _) => format!("min.{t} {d}, {x}, {y};"),
            (BinaryOp::Max, _) => format!("max.{t} {d}, {x}, {y};"),
            // Body::new rejects integer division and logic on numbers.
            _ => return,
        };
        self.line(&text);
    }

    fn compare(&mut self, dst: Reg, op: CompareOp, a: Reg, b: Reg) {
        let ty = self.program.reg_type(a);
        let (d, x, y) = (self.reg(dst), self.reg(a), self.reg(b));
        if ty == ScalarType::Bool {
            match op {
                CompareOp::Ne => self.line(&format!("xor.pred {d}, {x}, {y};")),
                _ => {
                    let q = self.q();
                    self.line(&format!("xor.pred {q}, {x}, {y};"));
                    self.line(&format!("not.pred {d}, {q};"));
                }
            }
            return;
        }
        // Ordered comparisons are false on NaN, as in Rust; `!=` is unordered (true on NaN).
        let cmp = match (op, ty.is_float()) {
            (CompareOp::Lt, _) => "lt",
            (CompareOp::Le, _) => "le",
            (CompareOp::Gt, _) => "gt",
            (CompareOp::Ge, _) => "ge",
            (CompareOp::Eq, _) => "eq",
            (CompareOp::Ne, true) => "neu",
            (CompareOp::Ne, false) => "ne",
        };
        self.line(&format!("setp.{cmp}.{} {d}, {x}, {y};", ptx_type(ty)));
    }

    fn cast(&mut self, dst: Reg, a: Reg) {
        use ScalarType::*;
        let (from, to) = (self.program.reg_type(a), self.program.reg_type(dst));
        let (d, x) = (self.reg(dst), self.reg(a));
        let text = match (from, to) {
            (f, t) if f == t => format!("mov.{} {d}, {x};", ptx_type(t)),
            (F32, F64) => format!("cvt.f64.f32 {d}, {x};"),
            (F64, F32) => format!("cvt.rn.f32.f64 {d}, {x};"),
            // Float to integer: round toward zero and saturate, as Rust's `as`; and NaN to 0,
            // explicitly: an H200 converts an f64 NaN to i32::MIN (measured).
            (F32 | F64, I32 | U32) => {
                let nan = self.q();
                self.line(&format!("cvt.rzi.{}.{} {d}, {x};", ptx_type(to), ptx_type(from)));
                self.line(&format!("setp.nan.{} {nan}, {x}, {x};", ptx_type(from)));
                format!("selp.b32 {d}, 0, {d}, {nan};")
            }
            (I32 | U32, F32 | F64) => format!("cvt.rn.{}.{} {d}, {x};", ptx_type(to), ptx_type(from)),
            (I32 | U32, I32 | U32) => format!("mov.b32 {d}, {x};"),
            (Bool, I32 | U32) => format!("selp.u32 {d}, 1, 0, {x};"),
            // Body::new rejects the rest.
            _ => return,
        };
        self.line(&text);
    }

    fn finish(self) -> String {
        let program = self.program;
        let pattern = program.pattern;
        let n = program.reg_types().len().max(1);
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
        let _ = writeln!(out, ".target {PTX_TARGET}");
        let _ = writeln!(out, ".address_size 64");
        let _ = writeln!(out);
        let _ = writeln!(out, ".visible .entry {}(", self.entry);
        let mut params = vec![
            format!("\t.param .u64 {}", self.param_name("input")),
            format!("\t.param .u64 {}", self.param_name("output")),
            format!("\t.param .u64 {}", self.param_name("n")),
            format!("\t.param .u64 {}", self.param_name("n_out")),
        ];
        for (i, ty) in program.params.iter().enumerate() {
            params.push(format!("\t.param .{} {}", ptx_type(*ty), self.param_name(&format!("p{i}"))));
        }
        let _ = writeln!(out, "{}", params.join(",\n"));
        let _ = writeln!(out, ")");
        // Launch bounds only when asked for: declaring even the default 256 changes ptxas'
        // register allocation (an f32 r = 16 kernel went from 87 registers to 80 and a spill).
        if pattern.threads_per_block() != Pattern::DEFAULT_THREADS_PER_BLOCK || pattern.min_blocks_per_sm().is_some() {
            let _ = writeln!(out, ".maxntid {}, 1, 1", pattern.threads_per_block());
        }
        if let Some(m) = pattern.min_blocks_per_sm() {
            let _ = writeln!(out, ".minnctapersm {m}");
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
        if let Some(bytes) = self.stage_bytes {
            let _ = writeln!(out, "\t.shared .align 16 .b8 {SHARED_TILE}[{bytes}];");
        }
        let _ = writeln!(out);
        out.push_str(&self.body);
        let _ = writeln!(out, "}}");
        out
    }
}
