//! Printing what lanes compute: arithmetic with Rust's semantics, picks, shuffles, and runs of
//! divisions by constants.

use super::types::{bits_type, immediate, narrow, ptx_type, widen};
use super::{Printer, LANE};
use crate::abi::KernelParam;
use crate::body::{BinaryOp, CompareOp, UnaryOp};
use crate::machine::Division;
use crate::program::{Instr, Reg};
use crate::scalar::{HalfFormat, Scalar, ScalarType};
use crate::schedule::LanePieces;

impl Printer<'_> {
    /// The end of a streaming step: each plane of the input box takes the one above it.
    pub(super) fn carry(&mut self, moves: &[(Reg, Reg)]) {
        self.comment("carry the input box's planes one down for the next step");
        for &(dst, src) in moves {
            let ty = bits_type(self.program.reg_type(dst));
            let line = format!("mov.{ty} {}, {};", self.reg(dst), self.reg(src));
            self.line(&line);
        }
    }

    /// Divisions by constants: the fast path for all of them, one check that each quotient is in
    /// the range where it is exact, and IEEE division for all of them where one is not (rare:
    /// zero, infinite, NaN or tiny dividends). Bit-exact with `div.rn.f32`; see `reciprocal`.
    pub(super) fn divisions(&mut self, run: &[Division]) {
        self.comment(
            "x / b, b constant: q0 = x * RN(1/b), q = q0 + (x - b*q0) * RN(1/b) == RN(x/b) where |q| >= bound",
        );
        let exact = self.q();
        for (i, division) in run.iter().enumerate() {
            // For a dividend `sum + 0.0`, the sum: equal wherever the check passes.
            let (x, d, fast) = (self.reg(division.dividend_on_fast_path()), self.reg(division.dst), division.fast);
            let (q0, r, m) =
                (self.scratch(ScalarType::F32), self.scratch(ScalarType::F32), self.scratch(ScalarType::F32));
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
        for division in run {
            let (d, x, y) = (self.reg(division.dst), self.reg(division.dividend), self.reg(division.divisor));
            if let Some(sum) = division.sum {
                self.line(&format!("add.rn.f32 {x}, {}, 0f00000000;", self.reg(sum)));
            }
            self.line(&format!("div.rn.f32 {d}, {x}, {y};"));
        }
        self.label_line(&done);
    }

    pub(super) fn instr(&mut self, instr: &Instr) {
        let program = self.program;
        match instr {
            Instr::Pick { dst, pieces } => self.pick(*dst, pieces),
            Instr::Shuffle { dst, src, rotate, fetches } => {
                let taps: Vec<String> = fetches
                    .iter()
                    .flat_map(|&fetch| &program.schedule.fetches[fetch].uses)
                    .map(|(p, d)| format!("output {p} tap {d:+}"))
                    .collect();
                self.comment(&format!(
                    "phase: lane l reads lane (l + {rotate}) mod {}: {}",
                    program.pattern.warp(),
                    taps.join(", ")
                ));
                self.shuffle(*dst, *src, *rotate);
            }
            Instr::Pack { dst, lo, hi } => self.pack(*dst, *lo, *hi),
            Instr::Unpack { dst, src, high } => self.unpack_half(*dst, *src, *high),
            Instr::Straddle { dst, lo, hi } => {
                // Bytes 2-3 of `lo`, then bytes 0-1 of `hi` (bytes 4-5 of the pair).
                let (d, a, b) = (self.reg(*dst), self.reg(*lo), self.reg(*hi));
                self.line(&format!("prmt.b32 {d}, {a}, {b}, 0x5432;"));
            }
            Instr::Param { dst, index } => {
                let ty = program.reg_type(*dst);
                let param = KernelParam::Value { index: *index, ty };
                let name = self.param_name(&param.suffix());
                match ty.widened() {
                    Some(format) => {
                        let (h, d) = (self.h(), self.reg(*dst));
                        self.line(&format!("ld.param.{} {h}, [{name}];", param.ptx_type()));
                        self.widen(format, &d, &h);
                    }
                    None => self.line(&format!("ld.param.{} {}, [{name}];", param.ptx_type(), self.reg(*dst))),
                }
            }
            Instr::Const { dst, value } => self.constant(*dst, *value),
            Instr::Unary { dst, op, a } => self.unary(*dst, *op, *a),
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
                    self.line(&format!("selp.{} {d}, {t}, {f}, {c};", bits_type(ty)));
                }
            }
            Instr::Cast { dst, a } => self.cast(*dst, *a),
            Instr::MulAdd { dst, a, b, c } => {
                let ty = ptx_type(program.reg_type(*dst));
                let (d, a, b, c) = (self.reg(*dst), self.reg(*a), self.reg(*b), self.reg(*c));
                self.line(&format!("fma.rn.{ty} {d}, {a}, {b}, {c};"));
            }
            // The machine program prints memory instructions as its own operations.
            Instr::Load { .. } | Instr::Stage { .. } | Instr::Shared { .. } | Instr::Store { .. } => {}
        }
    }

    /// `d` = 16-bit `h` widened exactly to f32.
    pub(super) fn widen(&mut self, format: HalfFormat, d: &str, h: &str) {
        let t = match format {
            HalfFormat::BFloat16 => self.t(),
            HalfFormat::Binary16 => String::new(),
        };
        for line in widen(format, d, h, &t) {
            self.line(&line);
        }
    }

    /// `d`, an f32 register holding a widened 16-bit type's value computed in f32, rounded once
    /// to that type, as the half crate rounds every operation (nothing for other types).
    fn round(&mut self, ty: ScalarType, d: &str) {
        if let Some(format) = ty.widened() {
            let h = self.h();
            self.line(&narrow(format, &h, d));
            self.widen(format, d, &h);
        }
    }

    /// `dst` = the register of this lane's piece: a chain of selects from the last piece down.
    fn pick(&mut self, dst: Reg, pieces: &LanePieces) {
        let ty = bits_type(self.program.reg_type(dst));
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

    /// Word `dst` = 16-bit elements `lo` and `hi`, as memory holds two in a row: an f16 register
    /// is the element, a bf16 one its f32 widening, whose high half is the element.
    fn pack(&mut self, dst: Reg, lo: Reg, hi: Reg) {
        let (d, lo_reg, hi_reg) = (self.reg(dst), self.reg(lo), self.reg(hi));
        match self.program.element.widened() {
            // Bytes 2-3 of `lo`, then bytes 2-3 of `hi` (bytes 6-7 of the pair).
            Some(_) => self.line(&format!("prmt.b32 {d}, {lo_reg}, {hi_reg}, 0x7632;")),
            None => self.line(&format!("mov.b32 {d}, {{{lo_reg}, {hi_reg}}};")),
        }
    }

    /// 16-bit element `dst` = the high or low half of word `src` (a bf16 widened to f32).
    fn unpack_half(&mut self, dst: Reg, src: Reg, high: bool) {
        let (d, s) = (self.reg(dst), self.reg(src));
        match (self.program.element.widened(), high) {
            (Some(_), true) => self.line(&format!("and.b32 {d}, {s}, 0xFFFF0000;")),
            (Some(_), false) => self.line(&format!("shl.b32 {d}, {s}, 16;")),
            (None, true) => {
                let other = self.h();
                self.line(&format!("mov.b32 {{{other}, {d}}}, {s};"));
            }
            (None, false) => {
                let other = self.h();
                self.line(&format!("mov.b32 {{{d}, {other}}}, {s};"));
            }
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
        let (d, s, bits) = (self.reg(dst), self.reg(src), self.program.reg_type(dst).register_bits());
        self.shfl("idx", &d, &s, &source, c, bits);
    }

    /// `shfl.sync.{mode}` of a register of `bits` bits from `s` into `d`: a 32-bit word as it
    /// is, a 16-bit register in the low half of one, a 64-bit register as two.
    pub(super) fn shfl(&mut self, mode: &str, d: &str, s: &str, b: &str, c: u32, bits: u32) {
        match bits {
            16 => {
                let (word, got, high) = (self.t(), self.t(), self.h());
                self.line(&format!("mov.b32 {word}, {{{s}, {s}}};"));
                self.line(&format!("shfl.sync.{mode}.b32 {got}, {word}, {b}, {c}, 0xffffffff;"));
                self.line(&format!("mov.b32 {{{d}, {high}}}, {got};"));
            }
            64 => {
                let (lo, hi, lo2, hi2) = (self.t(), self.t(), self.t(), self.t());
                self.line(&format!("mov.b64 {{{lo}, {hi}}}, {s};"));
                self.line(&format!("shfl.sync.{mode}.b32 {lo2}, {lo}, {b}, {c}, 0xffffffff;"));
                self.line(&format!("shfl.sync.{mode}.b32 {hi2}, {hi}, {b}, {c}, 0xffffffff;"));
                self.line(&format!("mov.b64 {d}, {{{lo2}, {hi2}}};"));
            }
            _ => self.line(&format!("shfl.sync.{mode}.b32 {d}, {s}, {b}, {c}, 0xffffffff;")),
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
            ty => self.line(&format!("mov.{} {d}, {};", bits_type(ty), immediate(value))),
        }
    }

    fn unary(&mut self, dst: Reg, op: UnaryOp, a: Reg) {
        let ty = self.program.reg_type(dst);
        let (d, x) = (self.reg(dst), self.reg(a));
        // A float's sign bit, the top bit of its width.
        let (bits, sign) = (ty.register_bits(), 1u64 << (ty.register_bits() - 1));
        let text = match (op, ty) {
            // Rust flips/clears the sign bit, NaN included; neg.f32/abs.f32 need not.
            (UnaryOp::Neg, t) if t.is_float() => format!("xor.b{bits} {d}, {x}, 0x{sign:X};"),
            (UnaryOp::Abs, t) if t.is_float() => format!("and.b{bits} {d}, {x}, 0x{:X};", sign - 1),
            (UnaryOp::Neg, _) => format!("neg.s32 {d}, {x};"),
            (UnaryOp::Abs, _) => format!("abs.s32 {d}, {x};"),
            (UnaryOp::Sqrt, t) => format!("sqrt.rn.{} {d}, {x};", ptx_type(t)),
            (UnaryOp::Not, ScalarType::Bool) => format!("not.pred {d}, {x};"),
            (UnaryOp::Not, _) => format!("not.b32 {d}, {x};"),
            // Integral roundings are exact: the conversion's rounding mode is the whole operation.
            (UnaryOp::Floor, t) => format!("cvt.rmi.{0}.{0} {d}, {x};", ptx_type(t)),
            (UnaryOp::Ceil, t) => format!("cvt.rpi.{0}.{0} {d}, {x};", ptx_type(t)),
            (UnaryOp::Trunc, t) => format!("cvt.rzi.{0}.{0} {d}, {x};", ptx_type(t)),
            (UnaryOp::RoundTiesEven, t) => format!("cvt.rni.{0}.{0} {d}, {x};", ptx_type(t)),
            (UnaryOp::Round, t) => return self.round_half_away(t, &d, &x),
            (UnaryOp::Exp, _) => return self.exp_f32(&d, &x),
            (UnaryOp::CountOnes, _) => format!("popc.b32 {d}, {x};"),
            (UnaryOp::LeadingZeros, _) => format!("clz.b32 {d}, {x};"),
            (UnaryOp::ReverseBits, _) => format!("brev.b32 {d}, {x};"),
            (UnaryOp::TrailingZeros, _) => {
                // The trailing zeros are the reversed word's leading ones (32 for 0, as Rust).
                let r = self.scratch(ScalarType::U32);
                self.line(&format!("brev.b32 {r}, {x};"));
                format!("clz.b32 {d}, {r};")
            }
        };
        self.line(&text);
    }

    /// Rust's `round`: halves away from zero, which no PTX rounding mode is. The integer part
    /// `t` and the fraction `x - t` are exact; a fraction of at least one half moves `t` one
    /// step away from zero (exact below 2^23 (2^52), and above it the fraction is 0). NaN and
    /// infinities pass through `t`: their fraction is NaN, which compares false.
    fn round_half_away(&mut self, ty: ScalarType, d: &str, x: &str) {
        let (t, bits) = (ptx_type(ty), ty.register_bits());
        let sign = 1u64 << (bits - 1);
        let (whole, fraction, step, up) = (self.scratch(ty), self.scratch(ty), self.scratch(ty), self.scratch(ty));
        let q = self.q();
        let (one, half) = match ty {
            ScalarType::F64 => (1.0f64.to_bits(), format!("0d{:016X}", 0.5f64.to_bits())),
            _ => (u64::from(1.0f32.to_bits()), format!("0f{:08X}", 0.5f32.to_bits())),
        };
        self.line(&format!("cvt.rzi.{t}.{t} {whole}, {x};"));
        self.line(&format!("sub.rn.{t} {fraction}, {x}, {whole};"));
        self.line(&format!("and.b{bits} {fraction}, {fraction}, 0x{:X};", sign - 1));
        self.line(&format!("setp.ge.{t} {q}, {fraction}, {half};"));
        // 1.0 with x's sign.
        self.line(&format!("and.b{bits} {step}, {x}, 0x{sign:X};"));
        self.line(&format!("or.b{bits} {step}, {step}, 0x{one:X};"));
        self.line(&format!("add.rn.{t} {up}, {whole}, {step};"));
        self.line(&format!("selp.b{bits} {d}, {up}, {whole}, {q};"));
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
                // PTX has no f16 division: in f32, rounded once (exact as + - * are).
                BinaryOp::Div if ty == ScalarType::F16 => {
                    let (a, b) = (self.scratch(ScalarType::F32), self.scratch(ScalarType::F32));
                    self.line(&format!("cvt.f32.f16 {a}, {x};"));
                    self.line(&format!("cvt.f32.f16 {b}, {y};"));
                    self.line(&format!("div.rn.f32 {a}, {a}, {b};"));
                    self.line(&format!("cvt.rn.f16.f32 {d}, {a};"));
                }
                BinaryOp::Div => self.line(&format!("div.rn.{t} {d}, {x}, {y};")),
                BinaryOp::Min | BinaryOp::Max => {
                    // isnan(x) ? y : (y < x ? y : x) for min (y > x for max), as ops::binary.
                    let cmp = if op == BinaryOp::Min { "lt" } else { "gt" };
                    let (q, nan) = (self.q(), self.q());
                    let tmp = self.scratch(ty);
                    let bits = bits_type(ty);
                    self.line(&format!("setp.{cmp}.{t} {q}, {y}, {x};"));
                    self.line(&format!("selp.{bits} {tmp}, {y}, {x}, {q};"));
                    self.line(&format!("setp.nan.{t} {nan}, {x}, {x};"));
                    self.line(&format!("selp.{bits} {d}, {y}, {tmp}, {nan};"));
                }
                // A's magnitude, b's sign bit (of the f32 a 16-bit float is widened to: the same).
                BinaryOp::CopySign => {
                    let bits = ty.register_bits();
                    let sign = 1u64 << (bits - 1);
                    let (m, s) = (self.scratch(ty), self.scratch(ty));
                    self.line(&format!("and.b{bits} {m}, {x}, 0x{:X};", sign - 1));
                    self.line(&format!("and.b{bits} {s}, {y}, 0x{sign:X};"));
                    self.line(&format!("or.b{bits} {d}, {m}, {s};"));
                }
                // Body::new rejects the rest on floats.
                _ => {}
            }
            // min and max pick an operand, already of the type.
            if matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div) {
                self.round(ty, &d);
            }
            return;
        }
        let text = match (op, ty) {
            (BinaryOp::And | BinaryOp::BitAnd, ScalarType::Bool) => format!("and.pred {d}, {x}, {y};"),
            (BinaryOp::Or | BinaryOp::BitOr, ScalarType::Bool) => format!("or.pred {d}, {x}, {y};"),
            (BinaryOp::BitXor, ScalarType::Bool) => format!("xor.pred {d}, {x}, {y};"),
            (BinaryOp::Add, _) => format!("add.s32 {d}, {x}, {y};"),
            (BinaryOp::Sub, _) => format!("sub.s32 {d}, {x}, {y};"),
            (BinaryOp::Mul, _) => format!("mul.lo.s32 {d}, {x}, {y};"),
            (BinaryOp::Min, _) => format!("min.{t} {d}, {x}, {y};"),
            (BinaryOp::Max, _) => format!("max.{t} {d}, {x}, {y};"),
            // Truncating, as Rust's: the divisor is a constant other than 0 (and -1 on i32), so
            // neither instruction meets the cases PTX leaves undefined.
            (BinaryOp::Div, _) => format!("div.{t} {d}, {x}, {y};"),
            (BinaryOp::Rem, _) => format!("rem.{t} {d}, {x}, {y};"),
            (BinaryOp::BitAnd, _) => format!("and.b32 {d}, {x}, {y};"),
            (BinaryOp::BitOr, _) => format!("or.b32 {d}, {x}, {y};"),
            (BinaryOp::BitXor, _) => format!("xor.b32 {d}, {x}, {y};"),
            // Amounts are constants below 32, where PTX's clamping and Rust's agree; `shr.s32`
            // fills with the sign bit, `shr.u32` with zeros.
            (BinaryOp::Shl, _) => format!("shl.b32 {d}, {x}, {y};"),
            (BinaryOp::Shr, _) => format!("shr.{t} {d}, {x}, {y};"),
            // A funnel shift of the word with itself; `wrap` takes the amount modulo 32, as Rust.
            (BinaryOp::RotateLeft, _) => format!("shf.l.wrap.b32 {d}, {x}, {x}, {y};"),
            (BinaryOp::RotateRight, _) => format!("shf.r.wrap.b32 {d}, {x}, {x}, {y};"),
            // Body::new rejects logic on numbers and copysign on integers.
            (BinaryOp::And | BinaryOp::Or | BinaryOp::CopySign, _) => return,
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
            (f, t) if f == t => format!("mov.{} {d}, {x};", bits_type(t)),
            // `x.to_f32()` and `f16::from_f32(x)`.
            (F16, F32) => format!("cvt.f32.f16 {d}, {x};"),
            (F32, F16) => format!("cvt.rn.f16.f32 {d}, {x};"),
            // bf16 registers hold their values widened already.
            (BF16, F32) => format!("mov.f32 {d}, {x};"),
            (F32, BF16) => {
                self.line(&format!("mov.f32 {d}, {x};"));
                return self.round(to, &d);
            }
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
}
