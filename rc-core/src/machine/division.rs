//! Which divisions take the fast path of [`Reciprocal`], and which dividends are a sum plus the
//! `+0.0` of [`crate::zero_start`] that only the slow path needs.

use std::collections::{HashMap, HashSet};

use crate::body::BinaryOp;
use crate::program::{Instr, Reg, WarpProgram};
use crate::reciprocal::Reciprocal;
use crate::scalar::ScalarType;

/// `dst = dividend / divisor` for an `f32` divisor that is a constant with a fast path: the fast
/// path's quotient where it is exact, IEEE division where a lane's check fails.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Division {
    pub dst: Reg,
    pub dividend: Reg,
    pub divisor: Reg,
    /// Where the dividend is `sum + 0.0` read by nothing else: the sum. The fast path divides
    /// the sum (the same quotient wherever its check passes); only the slow path computes
    /// `dividend` and divides it.
    pub sum: Option<Reg>,
    pub fast: Reciprocal,
}

impl Division {
    /// The register the fast path divides.
    pub fn dividend_on_fast_path(&self) -> Reg {
        self.sum.unwrap_or(self.dividend)
    }
}

/// The divisions of a program with a fast path, and the additions only their slow paths need.
pub(super) struct FastDivisions {
    /// Registers holding an `f32` constant, and its value.
    constants: HashMap<Reg, f32>,
    /// Dividend register -> the sum it adds `+0.0` to.
    normalized: HashMap<Reg, Reg>,
}

impl FastDivisions {
    pub fn of(program: &WarpProgram) -> FastDivisions {
        let constants: HashMap<Reg, f32> = program
            .instrs
            .iter()
            .filter_map(|i| match i {
                Instr::Const { dst, value } if value.ty == ScalarType::F32 => {
                    Some((*dst, f32::from_bits(value.bits as u32)))
                }
                _ => None,
            })
            .collect();
        let mut divisions = FastDivisions { constants, normalized: HashMap::new() };
        divisions.normalized = divisions.normalized_dividends(program);
        divisions
    }

    /// `instr` as a fast division, if it is an `f32` division by a constant that has one.
    pub fn division(&self, program: &WarpProgram, instr: &Instr) -> Option<Division> {
        match *instr {
            Instr::Binary { dst, op: BinaryOp::Div, a, b } if program.reg_type(dst) == ScalarType::F32 => {
                let fast = Reciprocal::of(*self.constants.get(&b)?)?;
                Some(Division { dst, dividend: a, divisor: b, sum: self.normalized.get(&a).copied(), fast })
            }
            _ => None,
        }
    }

    /// Whether `instr` is an addition of `+0.0` that only a division's slow path performs.
    pub fn only_on_slow_path(&self, instr: &Instr) -> bool {
        matches!(instr, Instr::Binary { dst, .. } if self.normalized.contains_key(dst))
    }

    /// Dividends that are a sum plus `+0.0`, divided by a constant with a fast path and read
    /// by nothing else: the dividend's register and the sum's.
    fn normalized_dividends(&self, program: &WarpProgram) -> HashMap<Reg, Reg> {
        let zero = |reg: Reg| self.constants.get(&reg).is_some_and(|c| c.to_bits() == 0);
        let mut uses: HashMap<Reg, u32> = HashMap::new();
        for instr in &program.instrs {
            for reg in instr.uses() {
                *uses.entry(reg).or_default() += 1;
            }
        }
        let fast_dividends: HashSet<Reg> =
            program.instrs.iter().filter_map(|i| self.division(program, i)).map(|d| d.dividend).collect();
        program
            .instrs
            .iter()
            .filter_map(|i| match *i {
                Instr::Binary { dst, op: BinaryOp::Add, a, b }
                    if program.reg_type(dst) == ScalarType::F32
                        && fast_dividends.contains(&dst)
                        && uses.get(&dst) == Some(&1) =>
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
}
