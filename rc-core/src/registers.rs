//! How many registers a thread of a kernel needs, estimated from its machine program before
//! ptxas allocates them: the register budget's compile error, `explain()` and the cost model
//! read it.

use std::collections::HashSet;

use crate::body::UnaryOp;
use crate::machine::{Op, TileTest};
use crate::program::{Instr, Reg, WarpProgram};
use crate::scalar::ScalarType;

/// 32-bit registers a lane needs besides its values and shuffle source lanes: the pointers of
/// input and output field 0, `n`, `n_out`, `n - 1` and the tile start (64-bit each), the lane,
/// and address scratch. Chosen so that the estimate's median error against ptxas is 0 on rc's test kernels
/// (see `tests/registers.rs`).
pub const ADDRESSING_REGISTERS: u32 = 8;

/// The most 32-bit registers a thread can have.
pub const MAX_REGISTERS_PER_THREAD: u32 = 255;

/// Estimated 32-bit registers per thread of a warp program, from its own instructions: the peak
/// of simultaneously live values (f64 as two registers, predicates not counted: they have their
/// own file), split into cache registers and other values live at that point, plus a fixed
/// addressing overhead. ptxas reorders and reuses, so this is an estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterEstimate {
    /// Cache registers live at the peak.
    pub cache: u32,
    /// Other values (fetched taps, intermediates, results) live at the peak.
    pub live_values: u32,
    /// Pointers, lengths, lane and tile start ([`ADDRESSING_REGISTERS`]), two more per input
    /// and per output field after the first (its address), plus one shuffle source lane
    /// (`lane + k`) per distinct rotation.
    pub addressing: u32,
    /// `cache + live_values + addressing`.
    pub total: u32,
}

impl RegisterEstimate {
    /// The registers no schedule avoids: the cache registers live at the peak (each loaded just
    /// before its first reader) and the addressing. ptxas reorders the
    /// interleaved outputs and often keeps far fewer values live at once than the program order
    /// does (down to half the estimate for the register cache, a tenth for shared memory, which
    /// it reloads), so only this part is certain.
    pub fn floor(&self) -> u32 {
        self.cache + self.addressing
    }

    /// Whether even [`RegisterEstimate::floor`] exceeds what a thread can have: the kernel
    /// cannot keep its cache in registers.
    pub fn exceeds_limit(&self) -> bool {
        self.floor() > MAX_REGISTERS_PER_THREAD
    }
}

impl std::fmt::Display for RegisterEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cached registers + {} live values + {} for addressing = {} registers per thread",
            self.cache, self.live_values, self.addressing, self.total
        )
    }
}

impl WarpProgram {
    /// The register estimate: a backward liveness pass over the machine program's boundary
    /// path (each cache load by itself, just before its first reader; the stores checked, one
    /// by one, last), the path whose order the estimate was fitted on (`tests/registers.rs`).
    pub fn register_estimate(&self) -> RegisterEstimate {
        let order = self.machine.path(|_: TileTest| false);
        let words = |reg: Reg| match self.reg_type(reg) {
            ScalarType::Bool => 0,
            ty => ty.words(),
        };
        let mut cache_regs: HashSet<Reg> = HashSet::new();
        // 16-bit caches pack their registers in pairs ([`crate::pairs`]): the words are the cache.
        self.machine.visit(&mut |op| match op {
            Op::Compute(Instr::Pack { dst, lo, hi }) if cache_regs.contains(lo) || cache_regs.contains(hi) => {
                cache_regs.insert(*dst);
            }
            _ if op.loads_cache() => cache_regs.extend(op.defs()),
            _ => {}
        });
        let mut live = Liveness { live: vec![false; self.reg_types().len()], words: [0, 0], peak: [0, 0] };
        let slot = |reg: Reg| usize::from(!cache_regs.contains(&reg));
        // Live-out of the last operation is empty; walk backwards. The peak is taken just
        // after each definition (its results and everything live across it).
        for op in order.iter().rev() {
            for d in op.defs() {
                // A value written and never read still takes a register at its definition.
                live.add(d, slot(d), words(d));
            }
            // An `exp` keeps its own temporaries live while it computes.
            let scratch = match op {
                Op::Compute(Instr::Unary { op: UnaryOp::Exp, .. }) => crate::math::EXP_SCRATCH_WORDS,
                _ => 0,
            };
            live.words[1] += scratch;
            live.record_peak();
            live.words[1] -= scratch;
            for d in op.defs() {
                live.remove(d, slot(d), words(d));
            }
            for u in op.uses() {
                live.add(u, slot(u), words(u));
            }
            live.record_peak();
        }
        let [best_cache, best_other] = live.peak;
        // The PTX keeps `lane + k` for each shuffle rotation k in a register of its own.
        let mut rotations: HashSet<u32> = HashSet::new();
        self.machine.visit(&mut |op| {
            if let Op::Compute(Instr::Shuffle { rotate, .. }) = op {
                rotations.insert(*rotate);
            }
        });
        // Each input and output field after the first keeps its own 64-bit address.
        let other_fields = self.fields.saturating_sub(1) + self.output_fields.saturating_sub(1);
        let addressing = ADDRESSING_REGISTERS + 2 * other_fields + rotations.len() as u32;
        RegisterEstimate {
            cache: best_cache,
            live_values: best_other,
            addressing,
            total: best_cache + best_other + addressing,
        }
    }
}

/// Live values during the backward pass: which registers, and their 32-bit words, split into
/// cache registers (slot 0) and other values (slot 1).
struct Liveness {
    live: Vec<bool>,
    words: [u32; 2],
    /// The words at the largest total seen so far.
    peak: [u32; 2],
}

impl Liveness {
    fn add(&mut self, reg: Reg, slot: usize, words: u32) {
        if !self.live[reg as usize] {
            self.live[reg as usize] = true;
            self.words[slot] += words;
        }
    }

    fn remove(&mut self, reg: Reg, slot: usize, words: u32) {
        if self.live[reg as usize] {
            self.live[reg as usize] = false;
            self.words[slot] -= words;
        }
    }

    fn record_peak(&mut self) {
        if self.words[0] + self.words[1] > self.peak[0] + self.peak[1] {
            self.peak = self.words;
        }
    }
}
