//! The CPU emulation of a warp program: every logical warp (tile) in turn, its lanes in
//! lockstep, each instruction applied to all lanes before the next, shuffles as permutations.
//! It runs the same instruction list the PTX back end prints, so a schedule bug shows up here,
//! on a machine without a GPU, as a mismatch against the CPU reference.

use crate::error::Error;
use crate::ops;
use crate::program::{Instr, StageScope, WarpProgram};
use crate::scalar::{Element, Scalar};

impl WarpProgram {
    /// Computes every output of `input` into `output` (which must have the exact output length).
    pub fn emulate<T: Element>(&self, input: &[T], output: &mut [T], params: &[Scalar]) -> Result<(), Error> {
        let n_out = self.pattern.check_lengths(input.len(), output.len())?;
        let warp = self.pattern.warp() as usize;
        let tile_outputs = self.pattern.tile_outputs() as usize;
        let boundary = self.pattern.boundary();
        // regs[r * warp + lane]: one flat array keeps the lockstep loop cache-friendly.
        let mut regs = vec![0u64; self.reg_types().len() * warp];
        // The stage: the block's (strategy shared_memory), refilled when a new block starts, or
        // the warp's (staged windows), refilled for every tile.
        let tiles_per_block = (self.pattern.threads_per_block() / self.pattern.warp()) as usize;
        let mut staged: Vec<u64> = Vec::new();
        let mut scope = StageScope::Warp;
        for tile in 0..self.pattern.tiles(n_out) {
            // Where this tile's elements start in the stage.
            let stage_base = match scope {
                StageScope::Block => (tile % tiles_per_block) * tile_outputs,
                StageScope::Warp => 0,
            };
            for instr in &self.instrs {
                match instr {
                    Instr::Stage { scope: this, lead, elements } => {
                        scope = *this;
                        let first = match scope {
                            StageScope::Block if tile % tiles_per_block == 0 => {
                                (tile / tiles_per_block) as i64 * self.pattern.block_outputs() as i64
                            }
                            StageScope::Block => continue,
                            StageScope::Warp => tile as i64 * tile_outputs as i64,
                        } - *lead as i64;
                        staged.clear();
                        staged.extend((0..*elements as i64).map(|j| {
                            boundary.source(input.len(), first + j).map_or(0, |i| input[i].to_scalar().bits)
                        }));
                    }
                    Instr::Shared { dst, at } => {
                        for lane in 0..warp {
                            regs[*dst as usize * warp + lane] = staged[stage_base + at.element(lane as u32) as usize];
                        }
                    }
                    Instr::Load { dst, at, .. } if self.staged => {
                        // Every lane reads its window from the stage (the PTX reads them all too).
                        for lane in 0..warp {
                            regs[*dst as usize * warp + lane] = staged[stage_base + at.element(lane as u32) as usize];
                        }
                    }
                    Instr::Load { dst, at, lanes, .. } => {
                        for lane in 0..warp {
                            let inside = (lanes.0 as usize..lanes.1 as usize).contains(&lane);
                            let g = (tile * tile_outputs) as i64 + at.element(lane as u32) as i64 - self.schedule.lead as i64;
                            regs[*dst as usize * warp + lane] = match boundary.source(input.len(), g) {
                                Some(i) if inside => input[i].to_scalar().bits,
                                _ => 0,
                            };
                        }
                    }
                    Instr::Pick { dst, pieces } => {
                        for lane in 0..warp {
                            let src = pieces.at(lane as u32) as usize;
                            regs[*dst as usize * warp + lane] = regs[src * warp + lane];
                        }
                    }
                    Instr::Shuffle { dst, src, rotate, .. } => {
                        for lane in 0..warp {
                            let owner = (lane + *rotate as usize) % warp;
                            regs[*dst as usize * warp + lane] = regs[*src as usize * warp + owner];
                        }
                    }
                    Instr::Param { dst, index } => {
                        let bits = params.get(*index as usize).map_or(0, |s| s.bits);
                        regs[*dst as usize * warp..][..warp].fill(bits);
                    }
                    Instr::Const { dst, value } => regs[*dst as usize * warp..][..warp].fill(value.bits),
                    Instr::Unary { dst, op, a } => {
                        let ty = self.reg_type(*a);
                        lanes1(&mut regs, warp, *dst, *a, |x| ops::unary(*op, ty, x));
                    }
                    Instr::Binary { dst, op, a, b } => {
                        let ty = self.reg_type(*a);
                        lanes2(&mut regs, warp, *dst, *a, *b, |x, y| ops::binary(*op, ty, x, y));
                    }
                    Instr::Compare { dst, op, a, b } => {
                        let ty = self.reg_type(*a);
                        lanes2(&mut regs, warp, *dst, *a, *b, |x, y| ops::compare(*op, ty, x, y));
                    }
                    Instr::Select { dst, cond, then, otherwise } => {
                        for lane in 0..warp {
                            let pick = if regs[*cond as usize * warp + lane] != 0 { then } else { otherwise };
                            regs[*dst as usize * warp + lane] = regs[*pick as usize * warp + lane];
                        }
                    }
                    Instr::Cast { dst, a } => {
                        let (from, to) = (self.reg_type(*a), self.reg_type(*dst));
                        lanes1(&mut regs, warp, *dst, *a, |x| ops::cast(from, to, x));
                    }
                    Instr::MulAdd { dst, a, b, c } => {
                        let ty = self.reg_type(*a);
                        for lane in 0..warp {
                            let get = |r: u32| regs[r as usize * warp + lane];
                            regs[*dst as usize * warp + lane] = ops::mul_add(ty, get(*a), get(*b), get(*c));
                        }
                    }
                    Instr::Store { src, at, .. } => {
                        for lane in 0..warp {
                            let i = tile * tile_outputs + at.element(lane as u32) as usize;
                            if i < n_out {
                                output[i] = T::from_bits(regs[*src as usize * warp + lane]);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

fn lanes1(regs: &mut [u64], warp: usize, dst: u32, a: u32, f: impl Fn(u64) -> u64) {
    for lane in 0..warp {
        regs[dst as usize * warp + lane] = f(regs[a as usize * warp + lane]);
    }
}

fn lanes2(regs: &mut [u64], warp: usize, dst: u32, a: u32, b: u32, f: impl Fn(u64, u64) -> u64) {
    for lane in 0..warp {
        regs[dst as usize * warp + lane] = f(regs[a as usize * warp + lane], regs[b as usize * warp + lane]);
    }
}
