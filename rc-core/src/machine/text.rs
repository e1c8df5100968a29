//! The machine program as text ([`MachineText`]): what the back ends read, one line per
//! operation, for a person to read and for a test to diff.

use std::fmt::{self, Write};

use crate::body::{BinaryOp, CompareOp, UnaryOp};
use crate::distribution::AffineLoad;
use crate::program::{Instr, Reg, StageScope, WarpProgram};
use crate::ring::RingPart;
use crate::scalar::ScalarType;
use crate::schedule::LanePieces;

use super::index::IndexRegs;
use super::{Division, LaunchBounds, Op, Side, Stmt, TileTest, WarpStage};

/// Spaces per level of nesting.
const INDENT: usize = 4;

/// Registers in a row of at least this many print as one range (`r4..=r7`).
const RANGE_MIN: usize = 3;

/// The machine program of a [`WarpProgram`] as text ([`WarpProgram::machine_text`]); its
/// `Display` writes it. The machine program alone cannot print itself: its registers' types
/// live in the warp program.
///
/// Written in the spirit of cranelift's `write.rs`: a header with what the kernel declares
/// (pattern, element, input and output fields, parameters, vector width, shared memory, launch bounds,
/// kernels, the fused tile if any), then the body, a block indented for each tile branch and
/// each loop:
///
/// ```text
/// r12: f32 = add r3, r4
/// if inside elements 0..264 {
///     r20..=r23: f32 = load.v4 field 0 row 0 [4*lane] lanes 0..32 rc[0..=3]
/// } else {
///     ...
/// }
/// loop 16 times {
///     ...
/// }
/// ```
///
/// A register is `r` and its number; its type follows it where the text first writes it, so
/// each register's type shows once. Runs of three or more consecutive registers print as
/// `r20..=r23`. The tile element (or output) a lane reads (or writes) prints as
/// `[base + stride*lane]`, and a vector access of `n` elements (`.vn`) covers that one and the
/// `n - 1` after it; `lanes a..b` are the lanes that take part (the others hold zero). Every
/// operation prints from its own fields, in the names its documentation ([`Op`], [`Instr`])
/// uses, and every variant has its own arm: a new operation does not compile until it has a
/// text form. The same program always prints the same text.
#[derive(Clone, Copy, Debug)]
pub struct MachineText<'a> {
    program: &'a WarpProgram,
}

impl WarpProgram {
    /// The machine program ([`WarpProgram::machine`]) as text a person reads and a test diffs:
    /// a header with what the kernel declares, then one line per operation, blocks indented for
    /// branches and loops ([`MachineText`]).
    pub fn machine_text(&self) -> MachineText<'_> {
        MachineText { program: self }
    }
}

impl fmt::Display for MachineText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let program = self.program;
        header(f, program)?;
        writeln!(f)?;
        // The launch map's placement of a warp, its registers numbered from 0.
        let placement = program.launch.placement(&mut IndexRegs::default(), None);
        writeln!(f, "launch map: {}", program.launch.order)?;
        writeln!(f, "placement {{")?;
        for op in &placement.program.ops {
            writeln!(f, "{:INDENT$}{op}", "")?;
        }
        let start = placement.start.map(|reg| reg.map_or("-".to_string(), |reg| reg.to_string()));
        writeln!(f, "}} -> tile start x {}, y {}, z {}", start[0], start[1], start[2])?;
        writeln!(f)?;
        writeln!(f, "body {{")?;
        let mut printer =
            Printer { out: f, types: program.reg_types(), declared: vec![false; program.reg_types().len()], depth: 0 };
        printer.block(&program.machine.body)?;
        writeln!(f, "}}")
    }
}

/// What the program declares and what its operations' numbers refer to.
fn header(f: &mut dyn Write, program: &WarpProgram) -> fmt::Result {
    let machine = &program.machine;
    writeln!(f, "machine program")?;
    let passes: Vec<String> = program.passes.iter().map(|pass| pass.to_string()).collect();
    writeln!(f, "passes: {}", passes.join(", "))?;
    writeln!(f, "pattern: {}", program.pattern)?;
    if program.declared != program.pattern {
        writeln!(f, "declared pattern: {}", program.declared)?;
    }
    writeln!(f, "strategy: {}", program.strategy)?;
    writeln!(f, "distribution: {}", program.distribution)?;
    writeln!(f, "element: {}", program.element)?;
    writeln!(f, "input fields: {}", program.fields)?;
    writeln!(f, "output fields: {}", program.output_fields)?;
    let params: Vec<String> = program.params.iter().enumerate().map(|(i, ty)| format!("{i}: {ty}")).collect();
    writeln!(f, "params: {}", if params.is_empty() { "none".to_string() } else { params.join(", ") })?;
    writeln!(f, "lead: {} (tile element 0 is input index tile_start - {0})", program.schedule.lead)?;
    writeln!(f, "vector width: {} (elements per vector access)", machine.width)?;
    match machine.shared_bytes {
        None => writeln!(f, "shared memory: none")?,
        Some(bytes) => match machine.dynamic_shared_bytes() {
            0 => writeln!(f, "shared memory: {bytes} bytes")?,
            _ => writeln!(f, "shared memory: {bytes} bytes, dynamic")?,
        },
    }
    writeln!(f, "launch bounds: {}", launch_bounds(machine.launch_bounds))?;
    writeln!(f, "kernels: {}", if machine.split { "interior, then edges (split)" } else { "whole" })?;
    if let Some(pipeline) = &program.pipeline {
        writeln!(
            f,
            "pipeline: box plane {} stores; {} values carried to the next step",
            pipeline.last,
            pipeline.carries.len()
        )?;
    }
    if let Some(ring) = &program.ring {
        let sides = match ring.side {
            0 => "no heads or tails".to_string(),
            side => format!("heads and tails of {side}"),
        };
        writeln!(
            f,
            "ring: {} slots of {} rows x {} elements, copy vectors of {}, {} threads copy, {sides}",
            ring.slots, ring.rows, ring.row_elements, ring.width, ring.threads
        )?;
    }
    if let Some(tile) = &program.fused {
        write!(
            f,
            "fused: {} steps, {} tile, radius {}, {} elements per lane, lead {}, {} outputs, vector width {}, warp {}",
            tile.steps, tile.dims, tile.radius, tile.per_lane, tile.lead, tile.outputs, tile.width, tile.warp
        )?;
        if tile.dims.count() >= 2 {
            write!(f, ", radius y {}, {} rows", tile.radius_y, tile.rows)?;
        }
        if tile.dims.count() >= 3 {
            write!(f, ", radius z {}, {} planes", tile.radius_z, tile.planes)?;
        }
        writeln!(f)?;
    }
    writeln!(f, "registers: {} (each one's type where it is first written)", program.reg_types().len())
}

fn launch_bounds(bounds: Option<LaunchBounds>) -> String {
    match bounds {
        None => "none".to_string(),
        Some(LaunchBounds { max_threads_per_block, min_blocks_per_sm: None }) => {
            format!("{max_threads_per_block} threads per block")
        }
        Some(LaunchBounds { max_threads_per_block, min_blocks_per_sm: Some(blocks) }) => {
            format!("{max_threads_per_block} threads per block, at least {blocks} blocks per multiprocessor")
        }
    }
}

/// Writes statements, and remembers which registers have had their type shown.
struct Printer<'w> {
    out: &'w mut dyn Write,
    types: &'w [ScalarType],
    /// By register: whether a line has written it yet (and so shown its type).
    declared: Vec<bool>,
    depth: usize,
}

impl Printer<'_> {
    fn line(&mut self, text: &str) -> fmt::Result {
        writeln!(self.out, "{:indent$}{text}", "", indent = self.depth * INDENT)
    }

    /// `stmts`, one level deeper than the line before them.
    fn block(&mut self, stmts: &[Stmt]) -> fmt::Result {
        self.depth += 1;
        for stmt in stmts {
            self.stmt(stmt)?;
        }
        self.depth -= 1;
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt) -> fmt::Result {
        match stmt {
            Stmt::Op(op) => self.op(op),
            Stmt::Branch { test, taken, fallback } => {
                self.line(&format!("if {} {{", tile_test(*test)))?;
                self.block(taken)?;
                self.line("} else {")?;
                self.block(fallback)?;
                self.line("}")
            }
            Stmt::Loop { times, body } => {
                self.line(&format!("loop {times} times {{"))?;
                self.block(body)?;
                self.line("}")
            }
        }
    }

    fn op(&mut self, op: &Op) -> fmt::Result {
        let text = match op {
            Op::Compute(instr) => self.instr(instr),
            Op::Load { dst, cache, at, lanes, field, row } => {
                format!("{} = {}", self.defs(&[*dst]), load(*cache, *at, *lanes, *field, *row))
            }
            Op::LoadVector { dsts, first_cache, at, lanes, field, row } => format!(
                "{} = load.v{} field {field} row {row} {} lanes {}..{} {}",
                self.defs(dsts),
                dsts.len(),
                element(*at),
                lanes.0,
                lanes.1,
                caches(*first_cache, dsts.len())
            ),
            Op::LoadVectorRule { dsts, first_cache, at, lanes, field, row } => format!(
                "{} = load.v{}.rule field {field} row {row} {} lanes {}..{} {}",
                self.defs(dsts),
                dsts.len(),
                element(*at),
                lanes.0,
                lanes.1,
                caches(*first_cache, dsts.len())
            ),
            Op::ReadStage { dsts, first_cache, at, field } => format!(
                "{} = read_stage.v{} field {field} {} {}",
                self.defs(dsts),
                dsts.len(),
                element(*at),
                caches(*first_cache, dsts.len())
            ),
            Op::PrefetchL2 { field, first, rows, elements } => {
                format!("prefetch_l2 field {field} rows {first}..{} elements 0..{elements}", first + rows)
            }
            Op::StageBlock { lead, elements, field } => stage(StageScope::Block, *lead, *elements, *field),
            Op::Shared { dst, at, field, row } => format!("{} = {}", self.defs(&[*dst]), shared(*at, *field, *row)),
            Op::StageWarp { stage, field } => stage_warp(stage, *field),
            Op::Divisions(run) => return self.divisions(run),
            Op::Store { src, field, output, at, row } => store(*src, *field, *output, *at, *row),
            Op::StoreVector { srcs, field, output, at, row } => format!(
                "store.v{} {} to field {field} row {row} {} output {output}",
                srcs.len(),
                regs(srcs),
                element(*at)
            ),
            Op::Carry(moves) => {
                let (dsts, srcs): (Vec<Reg>, Vec<Reg>) = moves.iter().copied().unzip();
                format!("{} = carry {}", self.defs(&dsts), regs(&srcs))
            }
            Op::Advance => "advance".to_string(),
            Op::Neighbour { dst, src, from } => {
                let lane = match from {
                    Side::Before => "lane - 1",
                    Side::After => "lane + 1",
                };
                format!("{} = neighbour {} from {lane}", self.defs(&[*dst]), reg(*src))
            }
            Op::StepRule { values, dsts } => format!("{} = step_rule {}", self.defs(dsts), regs(values)),
            Op::StoreOwned { srcs, field, lead, width, row } => {
                format!("store_owned {} to field {field} row {row} lead {lead} width {width}", regs(srcs))
            }
            Op::Stream { axis, by } => format!("stream {axis} {by:+}"),
            // The rules below rewrite their registers in place: they are written, and read.
            Op::RowRule { row, window, at, first } => {
                let row = self.defs(row);
                let window = self.nested_defs(window);
                let first = if *first { " first" } else { "" };
                format!("row_rule box row {at} [{row}] window {window}{first}")
            }
            Op::PlaneRowsRule { rows, first, dsts } => {
                format!("{} = plane_rows_rule box row {first} {}", self.nested_defs(dsts), nested(rows))
            }
            Op::PlaneRule { planes, first } => format!("plane_rule box plane {first} {}", self.nested_defs(planes)),
            Op::FetchPlane { plane, field } => format!("fetch_plane field {field} box plane {plane}"),
            Op::PutPlane { slot, field } => format!("put_plane field {field} slot phase + {slot}"),
            Op::BlockBarrier => "block_barrier".to_string(),
            Op::ReadRing { dsts, first_cache, at, field, row, part } => {
                let part = match part {
                    RingPart::Row => "row",
                    RingPart::Heads => "heads",
                    RingPart::Tails => "tails",
                };
                format!(
                    "{} = read_ring.v{} field {field} box row {row} {} {} from {part}",
                    self.defs(dsts),
                    dsts.len(),
                    element(*at),
                    caches(*first_cache, dsts.len())
                )
            }
            Op::TurnRing => "turn_ring".to_string(),
        };
        self.line(&text)
    }

    /// A run of divisions sharing one check: a block of one line per division. Each line says
    /// what the fast path multiplies and when its quotient stands, and, for a dividend that is
    /// a sum plus `+0.0`, that only the slow path adds the zero.
    fn divisions(&mut self, run: &[Division]) -> fmt::Result {
        self.line("divisions, one check {")?;
        self.depth += 1;
        for division in run {
            let Division { dst, dividend, divisor, sum, fast } = *division;
            let mut text = format!(
                "{} = div {}, {}; fast {} * {:?} (1 / {:?}) where |quotient| >= {:?}",
                self.defs(&[dst]),
                reg(dividend),
                reg(divisor),
                reg(division.dividend_on_fast_path()),
                fast.reciprocal,
                fast.divisor,
                fast.min_quotient
            );
            if let Some(sum) = sum {
                text += &format!("; slow {} = add {}, +0.0", self.defs(&[dividend]), reg(sum));
            }
            self.line(&text)?;
        }
        self.depth -= 1;
        self.line("}")
    }

    /// One instruction of the warp program: `dst = opcode operands`, or the operation alone.
    fn instr(&mut self, instr: &Instr) -> String {
        let (dst, text) = match instr {
            Instr::Load { dst, cache, at, lanes, field, row } => (*dst, load(*cache, *at, *lanes, *field, *row)),
            Instr::Stage { scope, lead, elements, field } => return stage(*scope, *lead, *elements, *field),
            Instr::Shared { dst, at, field, row } => (*dst, shared(*at, *field, *row)),
            Instr::Pick { dst, pieces } => (*dst, format!("pick {}", pick(pieces))),
            Instr::Shuffle { dst, src, rotate, fetches } => {
                let ids: Vec<String> = fetches.iter().map(usize::to_string).collect();
                let noun = if fetches.len() == 1 { "fetch" } else { "fetches" };
                (*dst, format!("shuffle {} rotate {rotate} {noun} {}", reg(*src), ids.join(", ")))
            }
            Instr::Pack { dst, lo, hi } => (*dst, format!("pack {}, {}", reg(*lo), reg(*hi))),
            Instr::Unpack { dst, src, high } => {
                (*dst, format!("unpack.{} {}", if *high { "hi" } else { "lo" }, reg(*src)))
            }
            Instr::Straddle { dst, lo, hi } => (*dst, format!("straddle {}, {}", reg(*lo), reg(*hi))),
            Instr::Param { dst, index } => (*dst, format!("param {index}")),
            Instr::Const { dst, value } => (*dst, format!("const {value}")),
            Instr::Unary { dst, op, a } => (*dst, format!("{} {}", unary(*op), reg(*a))),
            Instr::Binary { dst, op, a, b } => (*dst, format!("{} {}, {}", binary(*op), reg(*a), reg(*b))),
            Instr::Compare { dst, op, a, b } => (*dst, format!("{} {}, {}", compare(*op), reg(*a), reg(*b))),
            Instr::Select { dst, cond, then, otherwise } => {
                (*dst, format!("select {}, {}, {}", reg(*cond), reg(*then), reg(*otherwise)))
            }
            Instr::Cast { dst, a } => (*dst, format!("cast {}", reg(*a))),
            Instr::MulAdd { dst, a, b, c } => (*dst, format!("mul_add {}, {}, {}", reg(*a), reg(*b), reg(*c))),
            Instr::Store { src, field, output, at, row } => return store(*src, *field, *output, *at, *row),
        };
        format!("{} = {text}", self.defs(&[dst]))
    }

    /// Registers a line writes, each with its type the first time the text writes it: `r4: f32`,
    /// or for three or more consecutive ones alike (all new, of one type; or all shown before)
    /// one range, `r4..=r7: f32`.
    fn defs(&mut self, dsts: &[Reg]) -> String {
        // Runs of consecutive registers with the same type to show (`None`: shown before).
        let mut runs: Vec<(Option<ScalarType>, Vec<Reg>)> = Vec::new();
        for &dst in dsts {
            let shown = match self.declared.get_mut(dst as usize) {
                Some(declared) => std::mem::replace(declared, true),
                // Outside the program's registers: no type to show.
                None => true,
            };
            let ty = if shown { None } else { self.types.get(dst as usize).copied() };
            match runs.last_mut() {
                Some((last, run)) if *last == ty && run.last().and_then(|r| r.checked_add(1)) == Some(dst) => {
                    run.push(dst)
                }
                _ => runs.push((ty, vec![dst])),
            }
        }
        let mut parts = Vec::new();
        for (ty, run) in runs {
            let items = match run.len() >= RANGE_MIN {
                true => vec![regs(&run)],
                false => run.iter().map(|&r| reg(r)).collect(),
            };
            parts.extend(items.into_iter().map(|item| match ty {
                Some(ty) => format!("{item}: {ty}"),
                None => item,
            }));
        }
        parts.join(", ")
    }

    /// Rows of registers a line writes, each in brackets: `[r1..=r4: f32] [r5..=r8: f32]`.
    fn nested_defs(&mut self, rows: &[Vec<Reg>]) -> String {
        let rows: Vec<String> = rows.iter().map(|row| format!("[{}]", self.defs(row))).collect();
        rows.join(" ")
    }
}

fn tile_test(test: TileTest) -> String {
    match test {
        TileTest::Inside { elements } => format!("inside elements 0..{elements}"),
        TileTest::Whole { row } => format!("whole output row {row}"),
        TileTest::RowsInside => "rows_inside".to_string(),
    }
}

fn reg(reg: Reg) -> String {
    format!("r{reg}")
}

/// Registers read, runs of consecutive ones as ranges: `r1, r4..=r7`.
fn regs(regs: &[Reg]) -> String {
    let mut parts = Vec::new();
    let mut start = 0;
    while start < regs.len() {
        let mut end = start + 1;
        while end < regs.len() && regs[end - 1].checked_add(1) == Some(regs[end]) {
            end += 1;
        }
        match end - start >= RANGE_MIN {
            true => parts.push(format!("r{}..=r{}", regs[start], regs[end - 1])),
            false => parts.extend(regs[start..end].iter().map(|&r| reg(r))),
        }
        start = end;
    }
    parts.join(", ")
}

/// Rows of registers read: `[r1..=r4] [r5..=r8]`.
fn nested(rows: &[Vec<Reg>]) -> String {
    let rows: Vec<String> = rows.iter().map(|row| format!("[{}]", regs(row))).collect();
    rows.join(" ")
}

/// The tile element (or output) lane `lane` reaches: `[base + stride*lane]`.
fn element(at: AffineLoad) -> String {
    match (at.base, at.stride) {
        (base, 0) => format!("[{base}]"),
        (0, 1) => "[lane]".to_string(),
        (0, stride) => format!("[{stride}*lane]"),
        (base, 1) => format!("[{base} + lane]"),
        (base, stride) => format!("[{base} + {stride}*lane]"),
    }
}

/// Cache registers `rc[first]` onwards, `count` of them.
fn caches(first: u32, count: usize) -> String {
    match count {
        1 => format!("rc[{first}]"),
        _ => format!("rc[{first}..={}]", first as usize + count.saturating_sub(1)),
    }
}

/// A load under the boundary rule, element by element.
fn load(cache: Option<u32>, at: AffineLoad, lanes: (u32, u32), field: u32, row: u32) -> String {
    let into = match cache {
        Some(k) => format!("rc[{k}]"),
        // Strategy naive: a tap read straight from memory, kept in no cache register.
        None => "tap".to_string(),
    };
    format!("load field {field} row {row} {} lanes {}..{} {into}", element(at), lanes.0, lanes.1)
}

fn shared(at: AffineLoad, field: u32, row: u32) -> String {
    format!("read_shared field {field} row {row} {}", element(at))
}

fn stage(scope: StageScope, lead: u32, elements: u32, field: u32) -> String {
    let scope = match scope {
        StageScope::Block => "block",
        StageScope::Warp => "warp",
    };
    format!("stage.{scope} field {field} lead {lead} elements {elements}")
}

fn stage_warp(stage: &WarpStage, field: u32) -> String {
    let WarpStage { lead, elements, padding, chunks, region_bytes } = *stage;
    format!(
        "stage.warp field {field} lead {lead} elements {elements} granule {} pad {} copy {chunks} vectors of {} region {region_bytes} bytes",
        padding.granule, padding.pad, padding.width
    )
}

fn store(src: Reg, field: u32, output: u32, at: AffineLoad, row: u32) -> String {
    format!("store {} to field {field} row {row} {} output {output}", reg(src), element(at))
}

/// Each piece as the lane it starts at and its register: `0: r1, 4: r2`.
fn pick(pieces: &LanePieces) -> String {
    let parts: Vec<String> = pieces.0.iter().map(|&(lane, r)| format!("{lane}: {}", reg(r))).collect();
    parts.join(", ")
}

fn unary(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Abs => "abs",
        UnaryOp::Sqrt => "sqrt",
        UnaryOp::Not => "not",
        // The rest are named as the source writes them.
        op => crate::operation::unary_name(op),
    }
}

fn binary(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Rem => "rem",
        BinaryOp::Min => "min",
        BinaryOp::Max => "max",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::BitAnd => "bit_and",
        BinaryOp::BitOr => "bit_or",
        BinaryOp::BitXor => "bit_xor",
        BinaryOp::Shl => "shl",
        BinaryOp::Shr => "shr",
        op => crate::operation::binary_name(op),
    }
}

fn compare(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Lt => "lt",
        CompareOp::Le => "le",
        CompareOp::Gt => "gt",
        CompareOp::Ge => "ge",
        CompareOp::Eq => "eq",
        CompareOp::Ne => "ne",
    }
}
