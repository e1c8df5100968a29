//! Index programs ([`crate::machine::index`]) as PTX: one instruction per operation (a division
//! as its 32-bit fast path and 64-bit fallback), registers named from the printer's scratch
//! counters, which lend the program its registers and take them back.

use super::{Printer, CTAID, N, NTID, N_OUT, TID, TILE_START_INDEX};
use crate::machine::index::{
    Arith, Compare, Given, IndexKind, IndexOp, IndexProgram, IndexReg, IndexRegs, Operand, Special,
};

/// The registers of the launch map's placement of a warp ([`crate::launch_map::Placement`]).
pub(super) struct Placed {
    /// The tile's first output along y and z (along x: [`super::TILE_START`]).
    pub start: [Option<String>; 3],
    pub warp_in_block: Option<String>,
    /// [`crate::launch_map::Placement::input_end`].
    pub input_end: Option<String>,
}

impl Printer<'_> {
    /// Prints the launch map's placement of the warp: its first output along x in
    /// [`super::TILE_START`]; `loaded` names the register holding a given the prologue loaded
    /// (an extent along y or z, the first row).
    pub(super) fn placement(&mut self, loaded: &dyn Fn(Given) -> String) -> Placed {
        let mut regs = self.lend_registers();
        let placement = self.program.launch.placement(&mut regs, Some(TILE_START_INDEX));
        self.take_back(regs);
        self.index_program(&placement.program, loaded);
        Placed {
            start: placement.start.map(|reg| reg.map(index_reg)),
            warp_in_block: placement.warp_in_block.map(index_reg),
            input_end: placement.input_end.map(index_reg),
        }
    }

    /// The scratch counters as an index program's register source ([`Printer::take_back`]
    /// returns what it used).
    pub(super) fn lend_registers(&self) -> IndexRegs {
        IndexRegs { next_u32: self.next_t, next_u64: self.next_a, next_pred: self.next_q }
    }

    pub(super) fn take_back(&mut self, regs: IndexRegs) {
        (self.next_t, self.next_a, self.next_q) = (regs.next_u32, regs.next_u64, regs.next_pred);
    }

    /// `program`'s operations, one line each; `loaded` names the register holding a given the
    /// prologue loaded.
    pub(super) fn index_program(&mut self, program: &IndexProgram, loaded: &dyn Fn(Given) -> String) {
        for op in &program.ops {
            let o = |operand: Operand| -> String {
                match operand {
                    Operand::Reg(reg) => index_reg(reg),
                    Operand::Imm(value) => value.to_string(),
                    Operand::Given(given) => match given {
                        Given::Thread => TID.to_string(),
                        Given::BlockX => CTAID.to_string(),
                        Given::BlockThreads => NTID.to_string(),
                        Given::RowLength { output: false } => N.to_string(),
                        Given::RowLength { output: true } => N_OUT.to_string(),
                        Given::Extent { .. } | Given::FirstRow => loaded(given),
                    },
                }
            };
            match *op {
                IndexOp::Note(ref text) => self.comment(text),
                IndexOp::Read { dst, special } => {
                    let special = match special {
                        Special::BlockThreads => "%ntid.x".to_string(),
                        Special::Block(axis) => format!("%ctaid.{axis}"),
                        Special::Blocks(axis) => format!("%nctaid.{axis}"),
                    };
                    self.line(&format!("mov.u32 {}, {special};", index_reg(dst)));
                }
                IndexOp::Move { dst, a } => self.line(&format!("mov.u64 {}, {};", index_reg(dst), o(a))),
                IndexOp::Widen { dst, a } => self.line(&format!("cvt.u64.u32 {}, {};", index_reg(dst), o(a))),
                IndexOp::MulWide { dst, a, b } => {
                    self.line(&format!("mul.wide.u32 {}, {}, {};", index_reg(dst), o(a), o(b)))
                }
                IndexOp::Arith { op, dst, a, b } => {
                    let bits = match dst.kind {
                        IndexKind::U32 => 32,
                        _ => 64,
                    };
                    let name = match op {
                        Arith::Add => format!("add.u{bits}"),
                        Arith::Sub => format!("sub.u{bits}"),
                        Arith::MulLo => format!("mul.lo.u{bits}"),
                        Arith::Min => format!("min.u{bits}"),
                        Arith::Max => format!("max.u{bits}"),
                        Arith::Shr => format!("shr.u{bits}"),
                        Arith::And => format!("and.b{bits}"),
                    };
                    self.line(&format!("{name} {}, {}, {};", index_reg(dst), o(a), o(b)));
                }
                IndexOp::Mad { dst, a, b, c } => {
                    let bits = if dst.kind == IndexKind::U32 { 32 } else { 64 };
                    self.line(&format!("mad.lo.u{bits} {}, {}, {}, {};", index_reg(dst), o(a), o(b), o(c)));
                }
                IndexOp::Divide { dst, a, b, scratch } => {
                    // In 32 bits where both fit: ptxas prints a 64-bit division as a call of
                    // about 67 instructions (two of them were 8% of a 2D box r = 4 tile's
                    // instructions; the fused 2D prologue's seven were ~2% of an interior
                    // strip's and most of an empty warp's).
                    let (dst, a, b) = (index_reg(dst), o(a), o(b));
                    let [either, small, a32, b32, q32] =
                        [scratch.either, scratch.small, scratch.a, scratch.b, scratch.quotient].map(index_reg);
                    let (slow, done) = (self.label("divide_wide"), self.label("divided"));
                    self.line(&format!("or.b64 {either}, {a}, {b};"));
                    self.line(&format!("setp.le.u64 {small}, {either}, 4294967295;"));
                    self.line(&format!("@!{small} bra {slow};"));
                    self.line(&format!("cvt.u32.u64 {a32}, {a};"));
                    self.line(&format!("cvt.u32.u64 {b32}, {b};"));
                    self.line(&format!("div.u32 {q32}, {a32}, {b32};"));
                    self.line(&format!("cvt.u64.u32 {dst}, {q32};"));
                    self.line(&format!("bra {done};"));
                    self.label_line(&slow);
                    self.line(&format!("div.u64 {dst}, {a}, {b};"));
                    self.label_line(&done);
                }
                IndexOp::Compare { cmp, dst, a, b } => {
                    let cmp = match cmp {
                        Compare::Lt => "lt",
                        Compare::Ge => "ge",
                        Compare::Eq => "eq",
                    };
                    self.line(&format!("setp.{cmp}.u64 {}, {}, {};", index_reg(dst), o(a), o(b)));
                }
                IndexOp::Select { dst, a, b, pred } => {
                    self.line(&format!("selp.u64 {}, {}, {}, {};", index_reg(dst), o(a), o(b), index_reg(pred)))
                }
            }
        }
    }
}

/// An index register's PTX name: the scratch register of its kind and number.
pub(super) fn index_reg(reg: IndexReg) -> String {
    match reg.kind {
        IndexKind::U32 => format!("%t{}", reg.number),
        IndexKind::U64 => format!("%a{}", reg.number),
        IndexKind::Pred => format!("%q{}", reg.number),
    }
}
