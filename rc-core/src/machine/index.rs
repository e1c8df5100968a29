//! Index programs: the integer arithmetic that places a warp in the grid (the launch map,
//! [`crate::launch_map`]), as data. The PTX back end prints each operation as one instruction;
//! the emulator evaluates the same operations for every block and warp of a launch, so the
//! numbering the GPU runs is the numbering the CPU checks.
//!
//! Values are unsigned integers of 32 or 64 bits and predicates, as in PTX: arithmetic wraps,
//! comparisons are unsigned, and a register is written before it is read
//! ([`IndexProgram::verify`]).

use std::fmt;

use crate::geometry::Axis;

/// What an index register holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexKind {
    U32,
    U64,
    Pred,
}

/// A register of an index program. Its number is the back end's: the PTX printer allocates
/// them from its own counters ([`IndexRegs`]), one counter per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexReg {
    pub kind: IndexKind,
    pub number: u32,
}

/// The next free register of each kind: whoever builds an index program hands its counters
/// over, so the program's registers never collide with the back end's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IndexRegs {
    pub next_u32: u32,
    pub next_u64: u32,
    pub next_pred: u32,
}

impl IndexRegs {
    pub fn u32(&mut self) -> IndexReg {
        self.next_u32 += 1;
        IndexReg { kind: IndexKind::U32, number: self.next_u32 - 1 }
    }
    pub fn u64(&mut self) -> IndexReg {
        self.next_u64 += 1;
        IndexReg { kind: IndexKind::U64, number: self.next_u64 - 1 }
    }
    pub fn pred(&mut self) -> IndexReg {
        self.next_pred += 1;
        IndexReg { kind: IndexKind::Pred, number: self.next_pred - 1 }
    }
}

/// Values every kernel's prologue sets before an index program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Given {
    /// The thread's index in its block (u32).
    Thread,
    /// The block's index along x (u32).
    BlockX,
    /// Threads per block (u32).
    BlockThreads,
    /// Elements of one row (along x) of the input, or of the output (u64).
    RowLength { output: bool },
    /// Elements along an outer axis of the input or the output (u64). Along the outermost
    /// axis the output's is where the launch's rows end ([`Given::FirstRow`]).
    Extent { axis: Axis, output: bool },
    /// The first output row (plane in 3D) the launch computes along the outermost axis (u64;
    /// [`crate::abi::KernelParam::FirstRow`]).
    FirstRow,
}

/// A launch register the hardware sets (u32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    BlockThreads,
    Block(Axis),
    Blocks(Axis),
}

/// An operand: a register, an immediate or a given value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Reg(IndexReg),
    Imm(u64),
    Given(Given),
}

impl From<IndexReg> for Operand {
    fn from(reg: IndexReg) -> Operand {
        Operand::Reg(reg)
    }
}

impl From<Given> for Operand {
    fn from(given: Given) -> Operand {
        Operand::Given(given)
    }
}

/// A two-operand operation on `u32` or `u64` values (`MulLo`: the low half of the product).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    MulLo,
    Min,
    Max,
    Shr,
    And,
}

/// An unsigned comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Lt,
    Ge,
    Eq,
}

/// The registers a division uses besides its operands ([`IndexOp::Divide`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivideScratch {
    pub either: IndexReg,
    pub small: IndexReg,
    pub a: IndexReg,
    pub b: IndexReg,
    pub quotient: IndexReg,
}

/// One operation of an index program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexOp {
    /// A line for the reader of the printed program.
    Note(String),
    /// `dst = special` (u32).
    Read { dst: IndexReg, special: Special },
    /// `dst = a` (u64).
    Move { dst: IndexReg, a: Operand },
    /// `dst = a` zero-extended from u32 to u64.
    Widen { dst: IndexReg, a: Operand },
    /// `dst = a * b`, u32 by u32 into u64.
    MulWide { dst: IndexReg, a: Operand, b: Operand },
    /// `dst = a op b` in `dst`'s width.
    Arith { op: Arith, dst: IndexReg, a: Operand, b: Operand },
    /// `dst = a * b + c` (low half) in `dst`'s width.
    Mad { dst: IndexReg, a: Operand, b: Operand, c: Operand },
    /// `dst = a / b` (u64, warp-uniform): in 32 bits where both fit.
    Divide { dst: IndexReg, a: Operand, b: Operand, scratch: DivideScratch },
    /// `dst = a cmp b` (u64).
    Compare { cmp: Compare, dst: IndexReg, a: Operand, b: Operand },
    /// `dst = if pred { a } else { b }` (u64).
    Select { dst: IndexReg, a: Operand, b: Operand, pred: IndexReg },
}

impl IndexOp {
    /// The register the operation writes.
    pub fn def(&self) -> Option<IndexReg> {
        match *self {
            IndexOp::Note(_) => None,
            IndexOp::Read { dst, .. }
            | IndexOp::Move { dst, .. }
            | IndexOp::Widen { dst, .. }
            | IndexOp::MulWide { dst, .. }
            | IndexOp::Arith { dst, .. }
            | IndexOp::Mad { dst, .. }
            | IndexOp::Divide { dst, .. }
            | IndexOp::Compare { dst, .. }
            | IndexOp::Select { dst, .. } => Some(dst),
        }
    }

    /// The operands the operation reads.
    pub fn operands(&self) -> Vec<Operand> {
        match *self {
            IndexOp::Note(_) | IndexOp::Read { .. } => Vec::new(),
            IndexOp::Move { a, .. } | IndexOp::Widen { a, .. } => vec![a],
            IndexOp::MulWide { a, b, .. }
            | IndexOp::Arith { a, b, .. }
            | IndexOp::Divide { a, b, .. }
            | IndexOp::Compare { a, b, .. } => vec![a, b],
            IndexOp::Mad { a, b, c, .. } => vec![a, b, c],
            IndexOp::Select { a, b, pred, .. } => vec![a, b, Operand::Reg(pred)],
        }
    }
}

/// Index operations in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexProgram {
    pub ops: Vec<IndexOp>,
}

/// What an index program reads: the hardware's launch registers and the prologue's values.
pub trait IndexInputs {
    fn special(&self, special: Special) -> u64;
    fn given(&self, given: Given) -> u64;
}

/// A broken index program ([`IndexProgram::verify`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexProgramError {
    #[error("index operation {op} reads {reg:?} before any operation writes it")]
    ReadBeforeWrite { op: usize, reg: IndexReg },
    #[error("index operation {op} writes {reg:?}, a {got:?} register, where it writes a {expected:?}")]
    WrongKind { op: usize, reg: IndexReg, expected: IndexKind, got: IndexKind },
}

impl IndexProgram {
    pub fn push(&mut self, op: IndexOp) {
        self.ops.push(op);
    }

    /// Every register read after some operation wrote it, and every operation writing a
    /// register of the kind it computes.
    pub fn verify(&self) -> Result<(), IndexProgramError> {
        let mut written = std::collections::HashSet::new();
        for (i, op) in self.ops.iter().enumerate() {
            for operand in op.operands() {
                if let Operand::Reg(reg) = operand {
                    if !written.contains(&reg) {
                        return Err(IndexProgramError::ReadBeforeWrite { op: i, reg });
                    }
                }
            }
            if let Some(dst) = op.def() {
                let expected = match op {
                    IndexOp::Read { .. } => IndexKind::U32,
                    IndexOp::Compare { .. } => IndexKind::Pred,
                    IndexOp::Arith { .. } | IndexOp::Mad { .. } => dst.kind,
                    _ => IndexKind::U64,
                };
                if dst.kind != expected || (expected == IndexKind::Pred) != matches!(op, IndexOp::Compare { .. }) {
                    return Err(IndexProgramError::WrongKind { op: i, reg: dst, expected, got: dst.kind });
                }
                written.insert(dst);
            }
        }
        Ok(())
    }

    /// Runs the program for one thread: the value of every register it wrote.
    pub fn eval(&self, inputs: &impl IndexInputs) -> IndexValues {
        let mut values = IndexValues::default();
        for op in &self.ops {
            let get = |values: &IndexValues, operand: Operand| match operand {
                Operand::Reg(reg) => values.get(reg),
                Operand::Imm(value) => value,
                Operand::Given(given) => inputs.given(given),
            };
            let (dst, value) = match *op {
                IndexOp::Note(_) => continue,
                IndexOp::Read { dst, special } => (dst, inputs.special(special)),
                IndexOp::Move { dst, a } => (dst, get(&values, a)),
                IndexOp::Widen { dst, a } => (dst, get(&values, a) & u64::from(u32::MAX)),
                IndexOp::MulWide { dst, a, b } => {
                    let low = |v: u64| v & u64::from(u32::MAX);
                    (dst, low(get(&values, a)) * low(get(&values, b)))
                }
                IndexOp::Arith { op, dst, a, b } => {
                    let (a, b) = (get(&values, a), get(&values, b));
                    let value = match op {
                        Arith::Add => a.wrapping_add(b),
                        Arith::Sub => a.wrapping_sub(b),
                        Arith::MulLo => a.wrapping_mul(b),
                        Arith::Min => a.min(b),
                        Arith::Max => a.max(b),
                        // PTX clamps shift amounts past the width: the result is 0.
                        Arith::Shr => a.checked_shr(b.min(64) as u32).unwrap_or(0),
                        Arith::And => a & b,
                    };
                    (dst, value)
                }
                IndexOp::Mad { dst, a, b, c } => {
                    (dst, get(&values, a).wrapping_mul(get(&values, b)).wrapping_add(get(&values, c)))
                }
                // PTX leaves a division by zero unspecified; no launch map divides by zero
                // for a launch with an output (its counts are at least 1), and all ones
                // places a warp past every tile.
                IndexOp::Divide { dst, a, b, .. } => {
                    (dst, get(&values, a).checked_div(get(&values, b)).unwrap_or(u64::MAX))
                }
                IndexOp::Compare { cmp, dst, a, b } => {
                    let (a, b) = (get(&values, a), get(&values, b));
                    let holds = match cmp {
                        Compare::Lt => a < b,
                        Compare::Ge => a >= b,
                        Compare::Eq => a == b,
                    };
                    (dst, u64::from(holds))
                }
                IndexOp::Select { dst, a, b, pred } => {
                    let value = match values.get(pred) != 0 {
                        true => get(&values, a),
                        false => get(&values, b),
                    };
                    (dst, value)
                }
            };
            values.set(dst, value);
        }
        values
    }
}

/// The registers' values after an index program ran ([`IndexProgram::eval`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexValues {
    values: std::collections::HashMap<IndexReg, u64>,
}

impl IndexValues {
    /// `reg`'s value, 0 if nothing wrote it ([`IndexProgram::verify`] refuses such a read).
    pub fn get(&self, reg: IndexReg) -> u64 {
        self.values.get(&reg).copied().unwrap_or(0)
    }

    fn set(&mut self, reg: IndexReg, value: u64) {
        let value = match reg.kind {
            IndexKind::U32 => value & u64::from(u32::MAX),
            IndexKind::U64 | IndexKind::Pred => value,
        };
        self.values.insert(reg, value);
    }
}

impl fmt::Display for IndexReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            IndexKind::U32 => "i",
            IndexKind::U64 => "l",
            IndexKind::Pred => "p",
        };
        write!(f, "{prefix}{}", self.number)
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Operand::Reg(reg) => write!(f, "{reg}"),
            Operand::Imm(value) => write!(f, "{value}"),
            Operand::Given(Given::Thread) => f.write_str("thread"),
            Operand::Given(Given::BlockX) => f.write_str("block.x"),
            Operand::Given(Given::BlockThreads) => f.write_str("block_threads"),
            Operand::Given(Given::RowLength { output }) => write!(f, "{}.x", if output { "out" } else { "in" }),
            Operand::Given(Given::Extent { axis, output }) => write!(f, "{}.{axis}", if output { "out" } else { "in" }),
            Operand::Given(Given::FirstRow) => f.write_str("first_row"),
        }
    }
}

/// One operation a line, as the machine program's text form shows it
/// (`machine::text`, [`crate::machine::MachineText`]).
impl fmt::Display for IndexOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexOp::Note(text) => write!(f, "// {text}"),
            IndexOp::Read { dst, special } => match special {
                Special::BlockThreads => write!(f, "{dst} = block_threads"),
                Special::Block(axis) => write!(f, "{dst} = block.{axis}"),
                Special::Blocks(axis) => write!(f, "{dst} = blocks.{axis}"),
            },
            IndexOp::Move { dst, a } => write!(f, "{dst} = {a}"),
            IndexOp::Widen { dst, a } => write!(f, "{dst} = widen {a}"),
            IndexOp::MulWide { dst, a, b } => write!(f, "{dst} = mul.wide {a}, {b}"),
            IndexOp::Arith { op, dst, a, b } => {
                let name = match op {
                    Arith::Add => "add",
                    Arith::Sub => "sub",
                    Arith::MulLo => "mul",
                    Arith::Min => "min",
                    Arith::Max => "max",
                    Arith::Shr => "shr",
                    Arith::And => "and",
                };
                write!(f, "{dst} = {name} {a}, {b}")
            }
            IndexOp::Mad { dst, a, b, c } => write!(f, "{dst} = mad {a}, {b}, {c}"),
            IndexOp::Divide { dst, a, b, .. } => write!(f, "{dst} = div {a}, {b}"),
            IndexOp::Compare { cmp, dst, a, b } => {
                let cmp = match cmp {
                    Compare::Lt => "lt",
                    Compare::Ge => "ge",
                    Compare::Eq => "eq",
                };
                write!(f, "{dst} = {cmp} {a}, {b}")
            }
            IndexOp::Select { dst, a, b, pred } => write!(f, "{dst} = {pred} ? {a} : {b}"),
        }
    }
}
