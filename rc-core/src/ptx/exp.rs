//! `x.exp()` on f32, correctly rounded: CORE-MATH's `cr_expf` algorithm (the one the CPU runs,
//! [`crate::math::exp_f32`]) printed as PTX, so the kernel gives the CPU's bits. In double:
//! `a = x / ln 2` rounded to 64ths by adding 1.5 * 2^46, `2^(j/64)` from a 64-entry table with
//! the integer part added to its exponent, a degree-3 polynomial in the remainder; where the
//! result lies too near a rounding boundary of f32 (its value and the value 1.45e-10 lower round
//! differently), a degree-6 polynomial on a more precise remainder. Tiny, huge, infinite and NaN
//! inputs take their own paths, as in `cr_expf`.
//!
//! Each `exp` of a kernel prints the common path inline, branch-free (about 25 instructions);
//! the inputs it cannot decide (near a boundary, huge, infinite or NaN: rare) call one
//! out-of-line function of the module that runs the whole algorithm. A Rust mirror of this
//! instruction sequence equalled CORE-MATH's `expf` on all 2^32 inputs, and so did the GPU
//! (tests/gpu.rs, `every_f32_exp_on_the_gpu_is_correctly_rounded`).

use std::fmt::Write;

use super::Printer;
use crate::scalar::ScalarType;

/// The table's name in the module: `2^(j/64)`, j = 0..64, as f64 bits.
pub(super) const TABLE: &str = "rc_exp_2_j64";

/// `2^(j/64)` rounded to f64 (CORE-MATH's `tb` in `cr_expf`).
const POWERS: [u64; 64] = [
    0x3ff0000000000000,
    0x3ff02c9a3e778061,
    0x3ff059b0d3158574,
    0x3ff0874518759bc8,
    0x3ff0b5586cf9890f,
    0x3ff0e3ec32d3d1a2,
    0x3ff11301d0125b51,
    0x3ff1429aaea92de0,
    0x3ff172b83c7d517b,
    0x3ff1a35beb6fcb75,
    0x3ff1d4873168b9aa,
    0x3ff2063b88628cd6,
    0x3ff2387a6e756238,
    0x3ff26b4565e27cdd,
    0x3ff29e9df51fdee1,
    0x3ff2d285a6e4030b,
    0x3ff306fe0a31b715,
    0x3ff33c08b26416ff,
    0x3ff371a7373aa9cb,
    0x3ff3a7db34e59ff7,
    0x3ff3dea64c123422,
    0x3ff4160a21f72e2a,
    0x3ff44e086061892d,
    0x3ff486a2b5c13cd0,
    0x3ff4bfdad5362a27,
    0x3ff4f9b2769d2ca7,
    0x3ff5342b569d4f82,
    0x3ff56f4736b527da,
    0x3ff5ab07dd485429,
    0x3ff5e76f15ad2148,
    0x3ff6247eb03a5585,
    0x3ff6623882552225,
    0x3ff6a09e667f3bcd,
    0x3ff6dfb23c651a2f,
    0x3ff71f75e8ec5f74,
    0x3ff75feb564267c9,
    0x3ff7a11473eb0187,
    0x3ff7e2f336cf4e62,
    0x3ff82589994cce13,
    0x3ff868d99b4492ed,
    0x3ff8ace5422aa0db,
    0x3ff8f1ae99157736,
    0x3ff93737b0cdc5e5,
    0x3ff97d829fde4e50,
    0x3ff9c49182a3f090,
    0x3ffa0c667b5de565,
    0x3ffa5503b23e255d,
    0x3ffa9e6b5579fdbf,
    0x3ffae89f995ad3ad,
    0x3ffb33a2b84f15fb,
    0x3ffb7f76f2fb5e47,
    0x3ffbcc1e904bc1d2,
    0x3ffc199bdd85529c,
    0x3ffc67f12e57d14b,
    0x3ffcb720dcef9069,
    0x3ffd072d4a07897c,
    0x3ffd5818dcfba487,
    0x3ffda9e603db3285,
    0x3ffdfc97337b9b5f,
    0x3ffe502ee78b3ff6,
    0x3ffea4afa2a490da,
    0x3ffefa1bee615a27,
    0x3fff50765b6e4540,
    0x3fffa7c1819e90d8,
];

/// An f64 immediate.
fn d(bits: u64) -> String {
    format!("0d{bits:016X}")
}

/// 1.5 * 2^46: added to `x / ln 2`, it rounds it to 64ths.
const BIG: u64 = 0x42D8000000000000;
/// `ux = bits(x) << 1` above this or below [`TINY`]: outside the common path's range (or NaN).
const HUGE: u32 = 0x8562E42E;
const TINY: u32 = 0x6F93813E;

/// The name of the out-of-line function, and of its parameter and result.
const RARE: &str = "rc_exp_f32_rare";

/// The registers one `exp` uses: its argument and result (f32), doubles, 32- and 64-bit
/// integers and predicates, named by whoever prints it.
struct Regs {
    x: String,
    dst: String,
    /// z, a, u, ia, h, h2, sv, r, t, w.
    f: [String; 10],
    /// bits(x), ux.
    b: [String; 2],
    /// bits(u), index, table entry.
    l: [String; 3],
    lower: String,
    /// Above the range (or infinite, or NaN); undecided.
    p: [String; 2],
}

/// The common path: `dst` = exp(x) where `p[1]` is false; `p[1]` true where the input is above
/// the range, infinite or NaN, or the result too near a rounding boundary. Unlike `cr_expf`,
/// tiny inputs take it too (flat regions of a field give x = 0, and a call taken by one lane
/// costs the whole warp): where its test decides them the result is exact (checked on all 2^32
/// inputs), and the undecided ones go to the out-of-line function, which treats them as
/// `cr_expf` does. Its polynomial and test use `fma.rn` (fewer operations, and no less
/// accurate); the function's second polynomial rounds each operation as the C source does.
fn common(g: &Regs) -> Vec<String> {
    let [z, a, u, ia, h, h2, sv, r, t, _] = &g.f;
    let [bits, ux] = &g.b;
    let [ubits, index, entry] = &g.l;
    let [out, undecided] = &g.p;
    let (x, dst, lower) = (&g.x, &g.dst, &g.lower);
    let b1 = d(0x3FE62E42FEF4C4E7);
    let (b2, b3) = (d(0x3FCEBFD1B232F475), d(0x3FAC6B19384ECD93));
    vec![
        format!("cvt.f64.f32 {z}, {x};"),
        format!("mul.rn.f64 {a}, {z}, {};", d(0x3FF71547652B82FE)),
        format!("add.rn.f64 {u}, {a}, {};", d(BIG)),
        format!("mov.b32 {bits}, {x};"),
        format!("shl.b32 {ux}, {bits}, 1;"),
        format!("setp.gt.u32 {out}, {ux}, 0x{HUGE:08X};"),
        format!("sub.rn.f64 {ia}, {}, {u};", d(BIG)),
        format!("add.rn.f64 {h}, {a}, {ia};"),
        // 2^(j/64) from the table, the integer part added to its exponent field.
        format!("mov.b64 {ubits}, {u};"),
        format!("and.b64 {index}, {ubits}, 63;"),
        format!("shl.b64 {index}, {index}, 3;"),
        format!("mov.u64 {entry}, {TABLE};"),
        format!("add.u64 {index}, {entry}, {index};"),
        format!("ld.global.nc.u64 {entry}, [{index}];"),
        format!("shr.u64 {ubits}, {ubits}, 6;"),
        format!("shl.b64 {ubits}, {ubits}, 52;"),
        format!("add.u64 {entry}, {entry}, {ubits};"),
        format!("mov.b64 {sv}, {entry};"),
        // r = ((1 + h b1) + h^2 (b2 + h b3)) sv.
        format!("mul.rn.f64 {h2}, {h}, {h};"),
        format!("fma.rn.f64 {r}, {h}, {b1}, {};", d(1f64.to_bits())),
        format!("fma.rn.f64 {t}, {h}, {b3}, {b2};"),
        format!("fma.rn.f64 {r}, {h2}, {t}, {r};"),
        format!("mul.rn.f64 {r}, {r}, {sv};"),
        format!("cvt.rn.f32.f64 {dst}, {r};"),
        // Undecided where r and r (1 - 1.45e-10) round apart.
        format!("fma.rn.f64 {t}, {r}, {}, {r};", d((-1.45e-10f64).to_bits())),
        format!("cvt.rn.f32.f64 {lower}, {t};"),
        format!("setp.ne.or.f32 {undecided}, {dst}, {lower}, {out};"),
    ]
}

/// The module's out-of-line function: the whole algorithm, for the inputs the common path
/// leaves undecided.
fn rare() -> String {
    let reg = |prefix: &str, i: usize| format!("%{prefix}{i}");
    let g = Regs {
        x: "%ex0".into(),
        dst: "%ex1".into(),
        f: std::array::from_fn(|i| reg("ed", i)),
        b: std::array::from_fn(|i| reg("eb", i)),
        l: std::array::from_fn(|i| reg("el", i)),
        lower: "%ex2".into(),
        p: std::array::from_fn(|i| reg("ep", i)),
    };
    let [z, _, _, ia, h, h2, sv, r, t, w] = &g.f;
    let [bits, ux] = &g.b;
    let [out, undecided] = &g.p;
    let (x, dst) = (&g.x, &g.dst);
    let c = [
        0x3FE62E42FEFA39EFu64,
        0x3FCEBFBDFF82C58F,
        0x3FAC6B08D702E0ED,
        0x3F83B2AB6FB92E5E,
        0x3F55D886E6D54203,
        0x3F2430976B8CE6EF,
    ]
    .map(d);
    let one = d(1f64.to_bits());
    let mut lines = vec![format!("ld.param.b32 {x}, [{RARE}_x];")];
    lines.extend(common(&g));
    lines.extend([
        // cr_expf's own paths for tiny, huge, infinite and NaN inputs.
        format!("setp.lt.or.u32 {out}, {ux}, 0x{TINY:08X}, {out};"),
        format!("@{out} bra $rc_exp_special;"),
        "$rc_exp_main:".to_string(),
        format!("@!{undecided} bra $rc_exp_done;"),
        // h = (iln2h x + ia) + iln2l x; r = s + s h ((c0 + h c1) + h^2 ((c2 + h c3) + h^2 (c4 + h c5))).
        format!("mul.rn.f64 {h}, {z}, {};", d(0x3FF7154765000000)),
        format!("add.rn.f64 {h}, {h}, {ia};"),
        format!("mul.rn.f64 {t}, {z}, {};", d(0x3E05C17F0BBBE880)),
        format!("add.rn.f64 {h}, {h}, {t};"),
        format!("mul.rn.f64 {h2}, {h}, {h};"),
        format!("mul.rn.f64 {w}, {sv}, {h};"),
        format!("mul.rn.f64 {r}, {h}, {};", c[5]),
        format!("add.rn.f64 {r}, {r}, {};", c[4]),
        format!("mul.rn.f64 {t}, {h}, {};", c[3]),
        format!("add.rn.f64 {t}, {t}, {};", c[2]),
        format!("mul.rn.f64 {r}, {h2}, {r};"),
        format!("add.rn.f64 {r}, {t}, {r};"),
        format!("mul.rn.f64 {t}, {h}, {};", c[1]),
        format!("add.rn.f64 {t}, {t}, {};", c[0]),
        format!("mul.rn.f64 {r}, {h2}, {r};"),
        format!("add.rn.f64 {r}, {t}, {r};"),
        format!("mul.rn.f64 {r}, {w}, {r};"),
        format!("add.rn.f64 {r}, {sv}, {r};"),
        format!("cvt.rn.f32.f64 {dst}, {r};"),
        "bra $rc_exp_done;".to_string(),
        "$rc_exp_special:".to_string(),
        // |x| < 0x1.93813ep-16: 1 + x (1 + x / 2).
        format!("setp.lt.u32 {out}, {ux}, 0x{TINY:08X};"),
        format!("@{out} mul.rn.f64 {t}, {z}, {};", d(0.5f64.to_bits())),
        format!("@{out} add.rn.f64 {t}, {t}, {one};"),
        format!("@{out} mul.rn.f64 {t}, {z}, {t};"),
        format!("@{out} add.rn.f64 {t}, {t}, {one};"),
        format!("@{out} cvt.rn.f32.f64 {dst}, {t};"),
        format!("@{out} bra $rc_exp_done;"),
        // Infinities and NaN: +inf, 0 for -inf, the NaN quieted.
        format!("setp.ge.u32 {out}, {ux}, 0xFF000000;"),
        format!("@{out} add.rn.f32 {dst}, {x}, {x};"),
        format!("setp.eq.u32 {undecided}, {bits}, 0xFF800000;"),
        format!("@{undecided} mov.b32 {dst}, 0;"),
        format!("@{out} bra $rc_exp_done;"),
        // x < -0x1.9d1d8p+6: a subnormal, linear near 2^-149, at least 2^-151 (rounding to 0).
        format!("setp.gt.u32 {out}, {bits}, 0xC2CE8EC0;"),
        format!("@{out} add.rn.f64 {t}, {z}, {};", d(0x4059D1D9FCCF4770)),
        format!("@{out} mul.rn.f64 {t}, {t}, {};", d(0x36971547652B82ED)),
        format!("@{out} add.rn.f64 {t}, {t}, {};", d(0x36A0000000000000)),
        format!("@{out} max.f64 {t}, {t}, {};", d(0x3680000000000000)),
        format!("@{out} cvt.rn.f32.f64 {dst}, {t};"),
        format!("@{out} bra $rc_exp_done;"),
        // x > 0x1.62e42ep+6: +inf.
        format!("setp.gt.s32 {out}, {bits}, 0x42B17217;"),
        format!("@{out} mov.b32 {dst}, 0x7F800000;"),
        format!("@{out} bra $rc_exp_done;"),
        // The rest of the range the common path's test left out: its result, decided there or
        // by the second polynomial.
        format!("setp.ne.f32 {undecided}, {dst}, {};", g.lower),
        "bra $rc_exp_main;".to_string(),
        "$rc_exp_done:".to_string(),
        format!("st.param.b32 [{RARE}_y], {dst};"),
        "ret;".to_string(),
    ]);
    let mut out = String::new();
    let _ = writeln!(out, "// exp(x) for the inputs the inline common path leaves undecided (CORE-MATH's cr_expf)");
    let _ = writeln!(out, ".func (.param .b32 {RARE}_y) {RARE}(.param .b32 {RARE}_x)");
    let _ = writeln!(out, "{{");
    for decl in [".f32 %ex<3>", ".f64 %ed<10>", ".b32 %eb<2>", ".b64 %el<3>", ".pred %ep<2>"] {
        let _ = writeln!(out, "\t.reg {decl};");
    }
    for line in lines {
        match line.ends_with(':') {
            true => {
                let _ = writeln!(out, "{line}");
            }
            false => {
                let _ = writeln!(out, "\t{line}");
            }
        }
    }
    let _ = writeln!(out, "}}");
    out
}

/// What a module that computes `exp` declares before its kernels: the table and the rare
/// paths' function.
pub(super) fn declarations() -> String {
    let entries: Vec<String> = POWERS.iter().map(|b| format!("0x{b:016X}")).collect();
    let mut out = String::new();
    let _ = writeln!(out, "// 2^(j/64), j = 0..64, for exp (CORE-MATH's cr_expf); lanes read different entries");
    let _ = writeln!(out, ".global .align 8 .b64 {TABLE}[64] = {{{}}};", entries.join(", "));
    let _ = writeln!(out);
    out.push_str(&rare());
    out
}

impl Printer<'_> {
    /// `dst = exp(x)` on f32 registers, correctly rounded: the common path, and a call of the
    /// module's function where it is undecided.
    pub(super) fn exp_f32(&mut self, dst: &str, x: &str) {
        let g = Regs {
            x: x.to_string(),
            dst: dst.to_string(),
            f: std::array::from_fn(|_| self.scratch(ScalarType::F64)),
            b: std::array::from_fn(|_| self.scratch(ScalarType::U32)),
            l: std::array::from_fn(|_| self.a()),
            lower: self.scratch(ScalarType::F32),
            p: std::array::from_fn(|_| self.q()),
        };
        self.comment("exp(x), correctly rounded (CORE-MATH's cr_expf, in double): the common path");
        for line in common(&g) {
            self.line(&line);
        }
        // A call cannot be predicated: the lanes it decides branch around it.
        let decided = self.label("exp_decided");
        self.line(&format!("@!{} bra {decided};", g.p[1]));
        self.line("{");
        self.line(&format!(".param .b32 {RARE}_x;"));
        self.line(&format!(".param .b32 {RARE}_y;"));
        self.line(&format!("st.param.b32 [{RARE}_x], {x};"));
        self.line(&format!("call ({RARE}_y), {RARE}, ({RARE}_x);"));
        self.line(&format!("ld.param.b32 {dst}, [{RARE}_y];"));
        self.line("}");
        self.label_line(&decided);
    }
}
