//! The CPU emulation of a machine program: every logical warp (tile) in turn, its lanes in
//! lockstep, each operation applied to all lanes before the next, shuffles as permutations.
//! It runs the machine program the PTX back end prints, statement for statement: the path a
//! tile takes at each branch, vector accesses at the addresses the PTX computes, the stage at
//! its padded positions, divisions by constants through their fast path and its check. A
//! schedule or lowering bug shows up here, on a machine without a GPU, as a mismatch against
//! the CPU reference, and an access the GPU would make out of bounds or misaligned as an error.

use crate::error::{EmulationError, Error};
use crate::machine::{Division, Op, Stmt, TileTest, WarpStage};
use crate::ops;
use crate::body::BinaryOp;
use crate::program::{Instr, WarpProgram};
use crate::scalar::{Element, Scalar, ScalarType};

impl WarpProgram {
    /// Computes every output of `input` into `output` (which must have the exact output length).
    pub fn emulate<T: Element>(&self, input: &[T], output: &mut [T], params: &[Scalar]) -> Result<(), Error> {
        let n_out = self.pattern.check_lengths(input.len(), output.len())?;
        let warp = self.pattern.warp() as usize;
        let mut tile = Tile {
            program: self,
            input,
            output,
            n_out,
            params,
            warp,
            index: 0,
            regs: vec![0u64; self.reg_types().len() * warp],
            stage: Vec::new(),
            warp_stage: None,
        };
        for index in 0..self.pattern.tiles(n_out) {
            tile.index = index;
            tile.stmts(&self.machine.body)?;
        }
        Ok(())
    }
}

/// One tile's state while its warp runs.
struct Tile<'a, T> {
    program: &'a WarpProgram,
    input: &'a [T],
    output: &'a mut [T],
    n_out: usize,
    params: &'a [Scalar],
    warp: usize,
    index: usize,
    /// `regs[r * warp + lane]`: one flat array keeps the lockstep loop cache-friendly.
    regs: Vec<u64>,
    /// Shared memory: the block's stage (strategy shared_memory, refilled when a block starts)
    /// or the warp's region (staged windows, refilled for every tile), by element.
    stage: Vec<u64>,
    warp_stage: Option<WarpStage>,
}

impl<T: Element> Tile<'_, T> {
    fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), Error> {
        for stmt in stmts {
            match stmt {
                Stmt::Op(op) => self.op(op)?,
                Stmt::Branch { test, taken, fallback } => {
                    let arm = if self.holds(*test) { taken } else { fallback };
                    self.stmts(arm)?;
                }
                Stmt::Loop { times, body } => {
                    for _ in 0..*times {
                        self.stmts(body)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Input index of tile element 0.
    fn origin(&self) -> i64 {
        (self.index * self.program.pattern.tile_outputs() as usize) as i64 - self.program.schedule.lead as i64
    }

    fn holds(&self, test: TileTest) -> bool {
        match test {
            TileTest::Inside { elements } => self.origin() >= 0 && self.origin() + elements as i64 <= self.input.len() as i64,
            TileTest::Whole => (self.index + 1) * self.program.pattern.tile_outputs() as usize <= self.n_out,
        }
    }

    fn set(&mut self, reg: u32, lane: usize, bits: u64) {
        self.regs[reg as usize * self.warp + lane] = bits;
    }

    fn get(&self, reg: u32, lane: usize) -> u64 {
        self.regs[reg as usize * self.warp + lane]
    }

    /// Input element `g` under the boundary rule (zero outside for `valid` and `zero`).
    fn read_bounded(&self, g: i64) -> u64 {
        self.program.pattern.boundary().source(self.input.len(), g).map_or(0, |i| self.input[i].to_scalar().bits)
    }

    /// Input elements `g..g + width` of one vector access, which must lie inside the input and
    /// start at a multiple of `width` (so the address is aligned when the buffer is).
    fn read_vector(&self, g: i64, width: usize, what: &'static str) -> Result<Vec<u64>, Error> {
        let inside = g >= 0 && g as usize + width <= self.input.len();
        if !inside || g as usize % width != 0 {
            let (first, len) = (g, self.input.len());
            return Err(EmulationError::Access { what, first, width, len }.into());
        }
        Ok(self.input[g as usize..][..width].iter().map(|x| x.to_scalar().bits).collect())
    }

    fn op(&mut self, op: &Op) -> Result<(), Error> {
        let program = self.program;
        let warp = self.warp;
        let tile_outputs = program.pattern.tile_outputs() as usize;
        match op {
            Op::Compute(instr) => self.compute(instr),
            Op::Load { dst, at, lanes, .. } => {
                for lane in 0..warp {
                    let g = self.origin() + at.element(lane as u32) as i64;
                    let inside = (lanes.0 as usize..lanes.1 as usize).contains(&lane);
                    let bits = if inside { self.read_bounded(g) } else { 0 };
                    self.set(*dst, lane, bits);
                }
            }
            Op::LoadVector { dsts, at, lanes, .. } => {
                for lane in 0..warp {
                    let values = match (lanes.0 as usize..lanes.1 as usize).contains(&lane) {
                        true => self.read_vector(self.origin() + at.element(lane as u32) as i64, dsts.len(), "interior vector load")?,
                        false => vec![0; dsts.len()],
                    };
                    for (&dst, bits) in dsts.iter().zip(values) {
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::ReadStage { dsts, at, .. } => {
                let stage = self.warp_stage.ok_or(EmulationError::StageUnwritten)?;
                for lane in 0..warp {
                    let position = stage.read_position(lane as u32, at.base) as usize;
                    for (k, &dst) in dsts.iter().enumerate() {
                        let bits = *self.stage.get(position + k).ok_or(EmulationError::StageUnwritten)?;
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::StageBlock { lead, elements } => {
                // The block's first tile fills it; the others find it filled.
                let tiles_per_block = program.pattern.tiles_per_block() as usize;
                if self.index % tiles_per_block == 0 {
                    let first = (self.index / tiles_per_block) as i64 * program.pattern.block_outputs() as i64 - *lead as i64;
                    self.stage = (0..*elements as i64).map(|j| self.read_bounded(first + j)).collect();
                }
            }
            Op::Shared { dst, at } => {
                let base = (self.index % program.pattern.tiles_per_block() as usize) * tile_outputs;
                for lane in 0..warp {
                    let bits = *self.stage.get(base + at.element(lane as u32) as usize).ok_or(EmulationError::StageUnwritten)?;
                    self.set(*dst, lane, bits);
                }
            }
            Op::StageWarp(stage) => self.stage_warp(stage)?,
            Op::Divisions(run) => self.divisions(run),
            Op::Store { src, at, .. } => {
                for lane in 0..warp {
                    let i = self.index * tile_outputs + at.element(lane as u32) as usize;
                    if i < self.n_out {
                        self.output[i] = T::from_bits(self.get(*src, lane));
                    }
                }
            }
            Op::StoreVector { srcs, at, .. } => {
                for lane in 0..warp {
                    let i = self.index * tile_outputs + at.element(lane as u32) as usize;
                    if i + srcs.len() > self.n_out || i % srcs.len() != 0 {
                        let (first, width, len) = (i as i64, srcs.len(), self.n_out);
                        return Err(EmulationError::Access { what: "whole-tile vector store", first, width, len }.into());
                    }
                    for (k, &src) in srcs.iter().enumerate() {
                        self.output[i + k] = T::from_bits(self.get(src, lane));
                    }
                }
            }
        }
        Ok(())
    }

    /// The warp's copy into its region: vectors where every element it copies lies inside the
    /// input, element by element under the boundary rule otherwise; each element at its padded
    /// position.
    fn stage_warp(&mut self, stage: &WarpStage) -> Result<(), Error> {
        let width = stage.padding.width as usize;
        let origin = (self.index * self.program.pattern.tile_outputs() as usize) as i64 - stage.lead as i64;
        let vectors = origin >= 0 && origin + (stage.chunks as usize * width) as i64 <= self.input.len() as i64;
        let size = stage.region_bytes / self.program.element.bytes();
        self.stage = vec![0; size as usize];
        for round in 0..stage.rounds(self.warp as u32) as usize {
            for lane in 0..self.warp {
                let chunk = round * self.warp + lane;
                if chunk >= stage.chunks as usize {
                    continue;
                }
                let g = origin + (chunk * width) as i64;
                let values = match vectors {
                    true => self.read_vector(g, width, "stage vector load")?,
                    false => (0..width as i64).map(|k| self.read_bounded(g + k)).collect(),
                };
                for (k, bits) in values.into_iter().enumerate() {
                    let position = stage.padding.position((chunk * width + k) as u32) as usize;
                    *self.stage.get_mut(position).ok_or(EmulationError::StageOverflow { position, size })? = bits;
                }
            }
        }
        self.warp_stage = Some(*stage);
        Ok(())
    }

    /// Per lane: every quotient by the fast path; where one of them fails its range check,
    /// all of them by IEEE division (adding the `+0.0` a normalized dividend left out).
    fn divisions(&mut self, run: &[Division]) {
        let f32_of = |bits: u64| f32::from_bits(bits as u32);
        for lane in 0..self.warp {
            let mut exact = true;
            for d in run {
                let x = f32_of(self.get(d.dividend_on_fast_path(), lane));
                let (y, minus_b) = (d.fast.reciprocal, -d.fast.divisor);
                let q0 = x * y;
                let r = q0.mul_add(minus_b, x);
                let q = r.mul_add(y, q0);
                exact &= q.abs() >= d.fast.min_quotient;
                self.set(d.dst, lane, q.to_bits() as u64);
            }
            if exact {
                continue;
            }
            for d in run {
                if let Some(sum) = d.sum {
                    let bits = ops::binary(BinaryOp::Add, ScalarType::F32, self.get(sum, lane), Scalar::f32(0.0).bits);
                    self.set(d.dividend, lane, bits);
                }
                let q = ops::binary(BinaryOp::Div, ScalarType::F32, self.get(d.dividend, lane), self.get(d.divisor, lane));
                self.set(d.dst, lane, q);
            }
        }
    }

    fn compute(&mut self, instr: &Instr) {
        let program = self.program;
        let warp = self.warp;
        match instr {
            Instr::Pick { dst, pieces } => {
                for lane in 0..warp {
                    let bits = self.get(pieces.at(lane as u32), lane);
                    self.set(*dst, lane, bits);
                }
            }
            Instr::Shuffle { dst, src, rotate, .. } => {
                for lane in 0..warp {
                    let bits = self.get(*src, (lane + *rotate as usize) % warp);
                    self.set(*dst, lane, bits);
                }
            }
            Instr::Param { dst, index } => {
                let bits = self.params.get(*index as usize).map_or(0, |s| s.bits);
                self.regs[*dst as usize * warp..][..warp].fill(bits);
            }
            Instr::Const { dst, value } => self.regs[*dst as usize * warp..][..warp].fill(value.bits),
            Instr::Unary { dst, op, a } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a], |x| ops::unary(*op, ty, x[0]));
            }
            Instr::Binary { dst, op, a, b } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a, *b], |x| ops::binary(*op, ty, x[0], x[1]));
            }
            Instr::Compare { dst, op, a, b } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a, *b], |x| ops::compare(*op, ty, x[0], x[1]));
            }
            Instr::Select { dst, cond, then, otherwise } => {
                self.lanes(*dst, &[*cond, *then, *otherwise], |x| if x[0] != 0 { x[1] } else { x[2] });
            }
            Instr::Cast { dst, a } => {
                let (from, to) = (program.reg_type(*a), program.reg_type(*dst));
                self.lanes(*dst, &[*a], |x| ops::cast(from, to, x[0]));
            }
            Instr::MulAdd { dst, a, b, c } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a, *b, *c], |x| ops::mul_add(ty, x[0], x[1], x[2]));
            }
            // Memory instructions reach the machine program as its own operations.
            Instr::Load { .. } | Instr::Stage { .. } | Instr::Shared { .. } | Instr::Store { .. } => {}
        }
    }

    /// `dst = f(operands)` in every lane.
    fn lanes(&mut self, dst: u32, operands: &[u32], f: impl Fn(&[u64]) -> u64) {
        let mut x = [0u64; 3];
        for lane in 0..self.warp {
            for (slot, &reg) in x.iter_mut().zip(operands) {
                *slot = self.get(reg, lane);
            }
            let bits = f(&x[..operands.len()]);
            self.set(dst, lane, bits);
        }
    }
}
