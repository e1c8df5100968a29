//! `#[stencil]` never panics: whatever the attribute arguments and the item, the expansion is a
//! token stream (the kernel module, or `compile_error!`s beside the function).
//!
//! A proc-macro crate's entry point needs the compiler's `proc_macro` runtime, so this test
//! compiles the macro's implementation itself into the test crate: every module of `src/` except
//! `lib.rs` works on `proc_macro2`, and they name each other as `crate::ctxt`, `crate::args`, ...,
//! which resolve because they are declared below at this crate's root under the same names.
//! (A new module in `rc-macros/src/` needs a line here too.) The test then calls
//! `expand::stencil(args, item)` under `catch_unwind`, with random arguments and items: valid
//! stencils, valid ones with one thing broken, random bodies (deep, huge literals, wrong types,
//! out-of-radius taps, giant loops), and token soup, with parts wrapped in the invisible groups
//! that `macro_rules!` produces.
//!
//! Seeded and reproducible: case `i` is generated from seed `BASE_SEED + i` alone; a failure is
//! shrunk and printed with its seed. Rerun one case with
//! `RC_FUZZ_SEED=<seed> cargo test -p rc-stencil-macros --test macro_fuzz`, more with `RC_FUZZ_CASES=<n>`.

#[allow(dead_code)]
#[path = "../src/args.rs"]
mod args;
#[allow(dead_code)]
#[path = "../src/correctly_rounded.rs"]
mod correctly_rounded;
#[allow(dead_code)]
#[path = "../src/ctxt.rs"]
mod ctxt;
#[allow(dead_code)]
#[path = "../src/expand.rs"]
mod expand;
#[allow(dead_code)]
#[path = "../src/lower/mod.rs"]
mod lower;
#[allow(dead_code)]
#[path = "../src/signature.rs"]
mod signature;
#[allow(dead_code)]
#[path = "../src/tokens.rs"]
mod tokens;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use rc_core::testdata::Rng;

const BASE_SEED: u64 = 0xF022_0000;
const CASES: u64 = 6_000;
/// The run stops early (and says so) past this, on a machine much slower than expected.
const TIME_LIMIT: Duration = Duration::from_secs(50);

/// Panics found by this test and not fixed yet, as (source file, message): the run counts and
/// prints them instead of failing, so that it keeps looking for new ones. Delete an entry when its
/// bug is fixed (the run fails if an entry never shows up, so stale ones do not linger).
const KNOWN_PANICS: &[(&str, &str)] = &[];

// ---- random text ---------------------------------------------------------------------------------

struct Gen {
    rng: Rng,
    /// Nesting left for expressions; deep cases start high.
    depth: u32,
    /// The radius the arguments declare and the element type (for well-formed bodies).
    radius: u64,
    elem: &'static str,
    /// The well-formed stencil's dimensions: `Window`, `Window2` or `Window3`.
    dims: usize,
    /// Whether items may declare 2D and 3D windows: not when the arguments hold a number above
    /// 64. rc-core bounds no 2D or 3D tile yet, and a 3D radius of 1000 takes the compiler 15
    /// GB (4096 more than any machine has): a known limit, not what this test looks for.
    grid_ok: bool,
}

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.rng.uniform(0.0, 1.0) < p
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    // -- attribute arguments --

    fn args(&mut self) -> String {
        match self.below(20) {
            0..=10 => self.valid_args(),
            11..=17 => {
                let mut parts = self.arg_parts();
                for _ in 0..1 + self.below(3) {
                    self.break_arg(&mut parts);
                }
                parts.join(", ")
            }
            _ => {
                let n = 1 + self.below(12) as usize;
                self.soup(n, 2)
            }
        }
    }

    fn arg_parts(&mut self) -> Vec<String> {
        let mut parts = vec![format!("radius = {}", self.radius())];
        if self.chance(0.15) {
            // Per dimension, mostly as many components as a 2D or 3D window has.
            let n = self.pick(&["2", "2", "3", "3", "1", "4", "0"]).parse().unwrap_or(2);
            let components: Vec<String> = (0..n).map(|_| (1 + self.below(4)).to_string()).collect();
            parts[0] = format!("radius = ({})", components.join(", "));
        }
        for name in ["rows_per_warp", "planes_per_warp"] {
            if self.chance(0.1) {
                parts.push(format!("{name} = {}", self.pick(&["1", "2", "3", "4", "8", "64", "0", "65"])));
            }
        }
        if self.chance(0.7) {
            parts.push(format!("warp = {}", self.pick(&["2", "4", "8", "16", "32"])));
        }
        if self.chance(0.6) {
            let max = if self.chance(0.9) { 8 } else { 64 };
            parts.push(format!("outputs_per_thread = {}", 1 + self.below(max)));
        }
        if self.chance(0.6) {
            parts.push(format!("boundary = {}", self.pick(&["valid", "zero", "clamp", "wrap"])));
        }
        if self.chance(0.4) {
            parts.push(format!("strategy = {}", self.pick(&["register_cache", "shared_memory", "naive"])));
        }
        if self.chance(0.3) {
            parts.push(format!(
                "distribution = {}",
                self.pick(&[
                    "round_robin",
                    "granule(1)",
                    "granule(2)",
                    "granule(4)",
                    "granule(8)",
                    "granule(16)",
                    "granule(32)"
                ])
            ));
        }
        // Any order.
        for i in (1..parts.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            parts.swap(i, j);
        }
        parts
    }

    fn radius(&mut self) -> u64 {
        self.radius = match self.below(10) {
            0..=6 => 1 + self.below(4),
            7 | 8 => 1 + self.below(40),
            _ => *[100, 1000, 4096].get(self.below(3) as usize).unwrap(),
        };
        self.radius
    }

    fn valid_args(&mut self) -> String {
        let parts = self.arg_parts();
        let mut s = parts.join(", ");
        if self.chance(0.1) {
            s.push(',');
        }
        s
    }

    fn break_arg(&mut self, parts: &mut Vec<String>) {
        if parts.is_empty() {
            parts.push(self.weird_value());
            return;
        }
        let i = self.below(parts.len() as u64) as usize;
        let name = parts[i].split(" = ").next().unwrap_or("radius").to_string();
        match self.below(12) {
            0..=2 => parts[i] = format!("{name} = {}", self.weird_value()),
            3 => {
                parts[i] = format!(
                    "{} = 3",
                    self.pick(&["raduis", "radius_", "Radius", "warps", "outputs", "strat", "a::b", "r#radius", "_"])
                )
            }
            4 => parts.push(parts[i].clone()),
            5 => {
                parts.remove(i);
            }
            6 => parts[i] = format!("{name}({})", self.weird_value()),
            7 => parts[i] = name,
            8 => parts[i] = format!("{name} {}", self.weird_value()),
            9 => parts[i] = format!("{name} == {}", self.weird_value()),
            10 => parts.insert(i, String::new()), // `, ,`
            _ => parts[i] = format!("{name} = {} {}", self.weird_value(), self.soup(2, 1)),
        }
    }

    fn weird_value(&mut self) -> String {
        self.pick(&[
            "0",
            "1",
            "3",
            "33",
            "64",
            "65",
            "4096",
            "4097",
            "-1",
            "-3",
            "- 3",
            "--3",
            "2147483648",
            "4294967296",
            "18446744073709551616",
            "340282366920938463463374607431768211456",
            "99999999999999999999999999999999999999999999",
            "1.5",
            "3.0",
            "1e3",
            "3f32",
            "3u8",
            "3_usize",
            "0x10",
            "0b101",
            "0o7",
            "1_000",
            "\"3\"",
            "'x'",
            "b'x'",
            "b\"3\"",
            "r\"3\"",
            "true",
            "false",
            "zero",
            "Zero",
            "valid()",
            "clamp::wrap",
            "naive",
            "x",
            "(3)",
            "{3}",
            "[3]",
            "1 + 2",
            "N",
            "r#wrap",
            "self",
            "_",
            "3 as u32",
            "&3",
            "-0",
            "+3",
            "granule",
            "granule()",
            "granule(0)",
            "granule(3)",
            "granule(64)",
            "granule(4, 4)",
            "granule(-1)",
            "granule(x)",
            "granule[4]",
            "granule(4.0)",
            "round_robin(2)",
            "granule(99999999999999999999999)",
            "granule(granule(2))",
            "Granule(4)",
        ])
        .to_string()
    }

    // -- items --

    fn item(&mut self) -> String {
        match self.below(20) {
            0..=7 => self.stencil(),
            8..=16 => self.function(),
            17 => self
                .pick(&[
                    "struct S;",
                    "impl S {}",
                    "fn f();",
                    "const X: i32 = 3;",
                    "",
                    "fn",
                    "fn f",
                    "fn f(w: Window<f32>) -> f32",
                    "mod m { fn f() {} }",
                    "macro_rules! m { () => {} }",
                    "extern \"C\" { fn f(); }",
                    "use std::f32;",
                    "trait T { fn f(w: Window<f32>) -> f32 { w[0] } }",
                    "enum E { A }",
                    "type T = f32;",
                    "static S: f32 = 1.0;",
                ])
                .to_string(),
            _ => {
                let n = 1 + self.below(40) as usize;
                self.soup(n, 4)
            }
        }
    }

    /// A well-formed stencil for the declared radius (a body the macro should accept, or nearly:
    /// unsuffixed literals and integer overflow are not tracked), sometimes with one part broken.
    fn stencil(&mut self) -> String {
        let elem = self.element();
        self.elem = elem;
        self.dims = if self.grid_ok { *[1, 1, 2, 3].get(self.below(4) as usize).unwrap_or(&1) } else { 1 };
        let params: Vec<(String, &'static str)> =
            (0..self.below(4)).map(|i| (format!("p{i}"), self.element())).collect();
        // Some parameters are arrays `[T; n]`, read through constant indices (some past the end).
        let lens: Vec<Option<u64>> =
            params.iter().map(|_| if self.chance(0.25) { Some(self.below(6)) } else { None }).collect();
        let mut lines = Vec::new();
        let mut vars: Vec<(String, &'static str)> = params
            .iter()
            .zip(&lens)
            .map(|((name, ty), len)| match len {
                Some(n) => (format!("{name}[{}]", self.below(n + 1)), *ty),
                None => (name.clone(), *ty),
            })
            .collect();
        for i in 0..self.below(6) {
            let name = format!("x{i}");
            match self.below(4) {
                0 => {
                    let r = self.radius.min(50) as i64;
                    let (a, b) = (self.below(r as u64 + 1) as i64, self.below(r as u64 + 1) as i64);
                    let op =
                        if elem.starts_with('f') { self.pick(&["+=", "-=", "*="]) } else { self.pick(&["+=", "-="]) };
                    let zero = if elem.starts_with('f') { "0.0" } else { "0" };
                    let range = self
                        .pick(&["{a}..={b}", "{a}..{b}", "({a}..={b}).rev()", "({a}..={b}).step_by(2)"])
                        .replace("{a}", &(-a).to_string())
                        .replace("{b}", &b.to_string());
                    let term = self.pick(&["w[k]", "w[k] * w[0]", "w[-k]", "w[k].max(w[0])"]);
                    let term = self.taps_in(term);
                    lines.push(format!("let mut {name} = {zero};\n    for k in {range} {{ {name} {op} {term}; }}"));
                    vars.push((name, elem));
                }
                1 => {
                    let ty = if self.chance(0.6) { elem } else { self.pick(&["f32", "f64", "i32", "u32", "bool"]) };
                    self.depth = 1 + self.below(4) as u32;
                    let e = self.typed(ty, &vars);
                    let ann = if self.chance(0.3) { format!(": {ty}") } else { String::new() };
                    lines.push(format!("let {name}{ann} = {e};"));
                    vars.push((name, ty));
                }
                2 => {
                    self.depth = 2;
                    let (init, cond, upd) =
                        (self.typed(elem, &vars), self.typed("bool", &vars), self.typed(elem, &vars));
                    lines.push(format!("let mut {name} = {init};\n    if {cond} {{ {name} = {upd}; }}"));
                    vars.push((name, elem));
                }
                _ => {
                    let vals: Vec<String> = (0..1 + self.below(5)).map(|_| self.typed_lit(elem)).collect();
                    lines.push(format!("const C{i}: [{elem}; {}] = [{}];", vals.len(), vals.join(", ")));
                    let idx = self.below(vals.len() as u64);
                    lines.push(format!("let {name} = C{i}[{idx}];"));
                    vars.push((name, elem));
                }
            }
        }
        self.depth = 1 + self.below(5) as u32;
        lines.push(self.typed(elem, &vars));
        let mut body = lines.join("\n    ");
        if self.chance(0.2) {
            // One thing broken: a token of the body replaced.
            let spots: Vec<usize> = body.match_indices(' ').map(|(i, _)| i).collect();
            if !spots.is_empty() {
                let at = spots[self.below(spots.len() as u64) as usize];
                let junk = self.soup(1, 0);
                body.insert_str(at, &format!(" {junk}"));
            }
        }
        let params: Vec<String> = params
            .iter()
            .zip(&lens)
            .map(|((n, t), len)| match len {
                Some(len) => format!("{n}: [{t}; {len}]"),
                None => format!("{n}: {t}"),
            })
            .collect();
        let window = ["Window", "Window2", "Window3"][self.dims - 1];
        // Now and then a second and a third window (input fields), each tap of `w` moved to one
        // of them at random.
        let mut windows = vec![format!("w: {window}<{elem}>")];
        if self.chance(0.25) {
            let fields = 2 + self.below(2) as usize;
            let names = ["w", "k", "v"];
            for name in &names[1..fields] {
                windows.push(format!("{name}: {window}<{elem}>"));
            }
            let mut moved = String::new();
            for (i, piece) in body.split("w[").enumerate() {
                if i > 0 {
                    moved += names[self.below(fields as u64) as usize];
                    moved += "[";
                }
                moved += piece;
            }
            body = moved;
        }
        let inputs: Vec<String> = windows.into_iter().chain(params).collect();
        format!("pub fn stencil({}) -> {elem} {{\n    {body}\n}}", inputs.join(", "))
    }

    /// `term`'s 1D taps `w[d]` as taps of the stencil's window: `d` along a random dimension, 0
    /// along the others; now and then one component too many or too few.
    fn taps_in(&mut self, term: &str) -> String {
        if self.dims == 1 {
            return term.to_string();
        }
        let mut out = String::new();
        let mut rest = term;
        while let Some(at) = rest.find("w[") {
            out += &rest[..at];
            let end = at + rest[at..].find(']').unwrap_or(rest.len() - at);
            let d = &rest[at + 2..end];
            let n = if self.chance(0.03) { self.dims + 1 - 2 * self.below(2) as usize } else { self.dims };
            let along = self.below(n.max(1) as u64) as usize;
            let components: Vec<&str> = (0..n).map(|i| if i == along { d } else { "0" }).collect();
            out += &format!("w[({})]", components.join(", "));
            rest = rest.get(end + 1..).unwrap_or("");
        }
        out + rest
    }

    fn typed_lit(&mut self, ty: &str) -> String {
        match ty {
            "f32" | "f64" => {
                format!("{}{ty}", self.pick(&["0.5", "1.0", "-2.0", "0.1", "3.5", "1e-3", "0.0", "-0.0", "1e30", "2"]))
            }
            "i32" => format!("{}i32", self.pick(&["0", "1", "-1", "7", "-2147483648", "2147483647", "100"])),
            "u32" => format!("{}u32", self.pick(&["0", "1", "7", "4294967295", "100"])),
            _ => self.pick(&["true", "false"]).to_string(),
        }
    }

    /// An expression of type `ty` over the window (taps within the radius), `vars` and literals.
    fn typed(&mut self, ty: &'static str, vars: &[(String, &'static str)]) -> String {
        let float = ty == "f32" || ty == "f64";
        if self.depth == 0 || self.chance(0.2) {
            let of_ty: Vec<&String> = vars.iter().filter(|(_, t)| *t == ty).map(|(n, _)| n).collect();
            return match self.below(6) {
                0 | 1 if !of_ty.is_empty() => of_ty[self.below(of_ty.len() as u64) as usize].clone(),
                2 | 3 if ty != "bool" => {
                    let r = self.radius.min(60) as i64;
                    let d = self.below(2 * r as u64 + 1) as i64 - r;
                    // Taps have the element type: cast when another type is wanted.
                    let tap = self.taps_in(&format!("w[{d}]"));
                    if ty == self.elem {
                        tap
                    } else {
                        format!("({tap} as {ty})")
                    }
                }
                _ if ty == "bool" => {
                    let t = self.pick(&["f32", "f64", "i32", "u32"]);
                    self.depth = self.depth.saturating_sub(1);
                    let (a, b) = (self.typed(t, vars), self.typed(t, vars));
                    format!("({a} {} {b})", self.pick(&["<", "<=", ">", ">=", "==", "!="]))
                }
                _ => self.typed_lit(ty),
            };
        }
        self.depth -= 1;
        let out = match (self.below(8), ty) {
            (_, "bool") => match self.below(3) {
                0 => format!("!{}", self.typed("bool", vars)),
                1 => format!("({} && {})", self.typed("bool", vars), self.typed("bool", vars)),
                _ => {
                    let t = self.pick(&["f32", "f64", "i32", "u32", "bool"]);
                    let op = if t == "bool" {
                        self.pick(&["==", "!="])
                    } else {
                        self.pick(&["<", "<=", ">", ">=", "==", "!="])
                    };
                    format!("({} {op} {})", self.typed(t, vars), self.typed(t, vars))
                }
            },
            (0 | 1, _) => {
                let op = if float { self.pick(&["+", "-", "*", "/"]) } else { self.pick(&["+", "-", "*"]) };
                format!("({} {op} {})", self.typed(ty, vars), self.typed(ty, vars))
            }
            (2, _) => format!("{}.{}({})", self.typed(ty, vars), self.pick(&["min", "max"]), self.typed(ty, vars)),
            (3, "f32" | "f64") => {
                let m = self.pick(&[
                    "abs",
                    "sqrt",
                    "floor",
                    "ceil",
                    "trunc",
                    "round",
                    "round_ties_even",
                    "fract",
                    "signum",
                    "recip",
                    "to_degrees",
                    "to_radians",
                ]);
                format!("{}.{m}()", self.typed(ty, vars))
            }
            (5, "f32" | "f64") if self.below(3) == 0 => {
                let (a, b, c) = (self.typed(ty, vars), self.typed(ty, vars), self.typed(ty, vars));
                match self.below(3) {
                    0 => format!("{a}.copysign({b})"),
                    1 => format!("{a}.clamp({b}, {c})"),
                    _ => format!(
                        "if {a}.{}() {{ {b} }} else {{ {c} }}",
                        self.pick(&["is_nan", "is_finite", "is_sign_negative"])
                    ),
                }
            }
            (5, "u32") if self.below(3) == 0 => {
                let (a, b) = (self.typed(ty, vars), self.typed(ty, vars));
                match self.below(3) {
                    0 => format!(
                        "{a}.{}()",
                        self.pick(&["count_ones", "leading_zeros", "trailing_ones", "reverse_bits"])
                    ),
                    1 => format!(
                        "{a}.{}({b})",
                        self.pick(&["rotate_left", "rotate_right", "abs_diff", "saturating_add", "saturating_sub"])
                    ),
                    _ => format!("{a}.pow({})", self.pick(&["0", "1", "2", "5", "k"])),
                }
            }
            (3, "i32") => format!("{}.abs()", self.typed(ty, vars)),
            (4, "f32" | "f64") => {
                let (a, b, c) = (self.typed(ty, vars), self.typed(ty, vars), self.typed(ty, vars));
                format!("{a}.mul_add({b}, {c})")
            }
            (4, "i32") => format!("(-{})", self.typed(ty, vars)),
            (3 | 4, "u32") | (7, "i32" | "u32") => {
                // Integer `/ % & | ^ << >>` and the wrapping methods, by constants of every kind:
                // good ones, zero, -1, past the width, and values computed at run time.
                let (a, b) = (self.typed(ty, vars), self.typed(ty, vars));
                let c = self.pick(&["3", "7", "1", "0", "-1", "31", "32", "65537", "4294967295", "k"]);
                match self.below(4) {
                    0 => format!("({a} {} {c})", self.pick(&["/", "%", "<<", ">>"])),
                    1 => format!("({a} {} {b})", self.pick(&["&", "|", "^", "/", "%"])),
                    2 => format!("(!{a})"),
                    _ => format!(
                        "{a}.{}({b})",
                        self.pick(&[
                            "wrapping_add",
                            "wrapping_sub",
                            "wrapping_mul",
                            "wrapping_div",
                            "wrapping_rem",
                            "wrapping_shl",
                            "wrapping_shr"
                        ])
                    ),
                }
            }
            (5, _) => {
                let (c, a, b) = (self.typed("bool", vars), self.typed(ty, vars), self.typed(ty, vars));
                format!("(if {c} {{ {a} }} else {{ {b} }})")
            }
            (6, _) => {
                let from = self.pick(&["f32", "f64", "i32", "u32"]);
                format!("({} as {ty})", self.typed(from, vars))
            }
            _ => format!("{ty}::{}({}, {})", self.pick(&["min", "max"]), self.typed(ty, vars), self.typed(ty, vars)),
        };
        self.depth += 1;
        out
    }

    fn element(&mut self) -> &'static str {
        self.pick(&["f32", "f64", "i32", "u32"])
    }

    fn function(&mut self) -> String {
        let elem = self.element();
        let mut sig = String::new();
        if self.chance(0.1) {
            sig += self.pick(&[
                "#[inline] ",
                "/// doc\n",
                "#[allow(unused)] ",
                "#[stencil(radius = 1)] ",
                "#[cfg(test)] ",
            ]);
        }
        if self.chance(0.3) {
            sig += self.pick(&["pub ", "pub(crate) ", "pub(super) "]);
        }
        if self.chance(0.05) {
            sig += self.pick(&["const ", "async ", "unsafe ", "extern \"C\" ", "const unsafe "]);
        }
        sig += "fn ";
        sig += self.pick(&["f", "stencil", "box3", "r#match", "_f", "KERNEL", "w", "Window"]);
        if self.chance(0.05) {
            sig += self.pick(&["<T>", "<'a>", "<const N: usize>", "<>"]);
        }
        let window_ty = if self.chance(0.9) {
            let grid: &[&str] = if self.grid_ok { &["Window2", "rc::Window3"] } else { &[] };
            format!(
                "{}<{elem}>",
                self.pick(&[&["Window", "Window", "Window", "rc::Window", "::rc::Window"], grid].concat())
            )
        } else {
            self.pick(&[
                "Window<bool>",
                "Window<f16>",
                "Window<'_, f32>",
                "Window",
                "Window<f32, f64>",
                "&[f32]",
                "f32",
                "Window<Window<f32>>",
                "Window<T>",
                "&Window<f32>",
                "impl Fn()",
            ])
            .to_string()
        };
        let window = self.pick(&["w", "w", "w", "win", "mut w", "_w", "_", "(a, b)", "r#w"]);
        let mut inputs = vec![format!("{window}: {window_ty}")];
        if self.chance(0.03) {
            inputs.clear();
        }
        if self.chance(0.03) {
            inputs.insert(0, self.pick(&["self", "&self", "&mut self"]).to_string());
        }
        let n_params = self.below(4);
        let mut params = Vec::new();
        for i in 0..n_params {
            let ty = if self.chance(0.9) {
                self.element()
            } else {
                self.pick(&[
                    "bool",
                    "usize",
                    "f16",
                    "&f32",
                    "[f32; 3]",
                    "Window<f32>",
                    "(f32, f32)",
                    "String",
                    "[f32; N]",
                    "[i32; 0]",
                    "[[f32; 2]; 2]",
                    "[f64; 600]",
                    "[u32; 4usize]",
                    "[f32; 3 + 1]",
                    "[bool; 2]",
                    "[f32]",
                ])
            };
            let name = if self.chance(0.95) {
                format!("p{i}")
            } else {
                self.pick(&["w", "p0", "_", "mut q", "(a, b)"]).to_string()
            };
            inputs.push(format!("{name}: {ty}"));
            params.push(name);
        }
        if self.chance(0.02) {
            inputs.push("...".to_string());
        }
        let ret = if self.chance(0.93) {
            format!(" -> {elem}")
        } else {
            self.pick(&["", " -> bool", " -> ()", " -> Window<f32>", " -> Self", " -> impl Sized", " -> !", " -> f16"])
                .to_string()
        };
        if self.chance(0.02) {
            sig += " where f32: Copy";
        }
        let body = self.body(elem, &params);
        format!("{sig}({}){ret} {{\n{body}\n}}", inputs.join(", "))
    }

    fn body(&mut self, elem: &str, params: &[String]) -> String {
        if self.chance(0.06) {
            let n = self.below(60) as usize;
            return self.soup(n, 4);
        }
        if self.chance(0.04) {
            // Deep nesting, as far as a real function might go.
            let levels = 30 + self.below(300) as u32;
            return self.deep(levels, elem, params);
        }
        let mut lines = Vec::new();
        let n = self.below(8);
        for _ in 0..n {
            let line = self.stmt(elem, params);
            lines.push(line);
        }
        if self.chance(0.9) {
            self.depth = 1 + self.below(5) as u32;
            lines.push(self.expr(elem, params));
        }
        if self.chance(0.05) {
            let i = self.below(lines.len() as u64 + 1) as usize;
            let n = 1 + self.below(8) as usize;
            let soup = self.soup(n, 2);
            lines.insert(i, soup);
        }
        lines.join("\n")
    }

    fn stmt(&mut self, elem: &str, params: &[String]) -> String {
        self.depth = 1 + self.below(4) as u32;
        let ty = self.pick(&["f32", "f64", "i32", "u32", "bool", "usize", "i64", "[f32; 3]", "f16", "_"]);
        let name = self.pick(&["x", "y", "acc", "k", "w", "p0", "C", "N"]);
        match self.below(14) {
            0..=3 => format!("let {name} = {};", self.expr(elem, params)),
            4 | 5 => {
                format!("let {}{name}: {ty} = {};", if self.chance(0.3) { "mut " } else { "" }, self.expr(elem, params))
            }
            6 => format!(
                "{name} {} {};",
                self.pick(&["=", "+=", "-=", "*=", "/=", "%=", "^=", "<<="]),
                self.expr(elem, params)
            ),
            7 => {
                let range = self.range();
                let body = self.stmt(elem, params);
                format!("for {} in {range} {{ {body} }}", self.pick(&["k", "k", "_", "(a, b)", "mut k", "w"]))
            }
            8 => format!("const {}: {ty} = {};", self.pick(&["N", "C", "K", "w"]), self.expr(elem, params)),
            9 => format!(
                "const {}: [{elem}; {}] = [{}];",
                self.pick(&["C", "W"]),
                self.below(5),
                (0..self.below(5)).map(|_| self.lit(elem)).collect::<Vec<_>>().join(", ")
            ),
            10 => {
                let cond = self.expr("bool", params);
                let then = self.stmt(elem, params);
                format!(
                    "if {cond} {{ {then} }}{}",
                    if self.chance(0.5) { format!(" else {{ {} }}", self.stmt(elem, params)) } else { String::new() }
                )
            }
            11 => {
                format!("let {name} = [{}];", (0..self.below(4)).map(|_| self.lit(elem)).collect::<Vec<_>>().join(", "))
            }
            12 => format!("{};", self.expr(elem, params)),
            _ => self
                .pick(&[
                    "return w[0];",
                    "loop {}",
                    "while true {}",
                    "break;",
                    "println!(\"x\");",
                    "let (a, b) = (1, 2);",
                    "let ref r = 3;",
                    "unsafe {}",
                    "use std::f32;",
                    "fn inner() {}",
                    "match 3 { _ => {} }",
                    "let x;",
                    "let _ = 3;",
                    "'a: for k in 0..3 {}",
                    "struct S;",
                    ";",
                ])
                .to_string(),
        }
    }

    fn range(&mut self) -> String {
        let bound = |g: &mut Gen| -> String {
            if g.chance(0.8) {
                (g.below(9) as i64 - 4).to_string()
            } else {
                g.pick(&[
                    "N",
                    "-N",
                    "-9223372036854775808",
                    "9223372036854775807",
                    "i32::MAX",
                    "u32::MAX",
                    "170141183460469231731687303715884105727",
                    "(-170141183460469231731687303715884105727 - 1)",
                    "1.5",
                    "w[0]",
                    "p0",
                    "k",
                    "3u8",
                    "3usize",
                    "2147483647",
                    "-2147483648",
                    "4294967295",
                    "(1 << 4)",
                    "2 * 3",
                    "7 / 2",
                    "7 % 0",
                    "1 / 0",
                ])
                .to_string()
            }
        };
        let (a, b) = (bound(self), bound(self));
        if self.chance(0.004) {
            // Giant loops, at the unrolling limit (each iteration of an erroneous body reports).
            return self.pick(&["0..100000", "0..=100000", "0..1000000", "-50000..50001"]).to_string();
        }
        let op = self.pick(&["..", "..=", "..", "..="]);
        let base = match self.below(10) {
            0 => format!("{a}.."),
            1 => format!("..{b}"),
            2 => "..".to_string(),
            3 => self.pick(&["[1, 2, 3]", "x", "0..3.rev()", "(0..3).map(|k| k)", "w"]).to_string(),
            _ => format!("{a}{op}{b}"),
        };
        match self.below(6) {
            0 => format!("({base}).rev()"),
            1 => format!(
                "({base}).step_by({})",
                self.pick(&["2", "0", "-1", "3", "k", "1.5", "18446744073709551615", "9223372036854775808"])
            ),
            2 => format!("({base}).rev().step_by({})", self.pick(&["2", "0", "3"])),
            _ => base,
        }
    }

    fn lit(&mut self, elem: &str) -> String {
        match self.below(10) {
            0..=3 => {
                if elem.starts_with('f') {
                    self.pick(&["0.5", "1.0", "2.0", "-1.5", "0.1", "1e-3", "3.0"]).to_string()
                } else {
                    (self.below(10)).to_string()
                }
            }
            _ => self
                .pick(&[
                    "0",
                    "1",
                    "-1",
                    "2147483647",
                    "2147483648",
                    "-2147483648",
                    "-2147483649",
                    "4294967295",
                    "4294967296",
                    "9223372036854775807",
                    "9223372036854775808",
                    "-9223372036854775808",
                    "18446744073709551615",
                    "18446744073709551616",
                    "170141183460469231731687303715884105727",
                    "170141183460469231731687303715884105728",
                    "340282366920938463463374607431768211455",
                    "340282366920938463463374607431768211456",
                    "99999999999999999999999999999999999999999999999999",
                    "1e38",
                    "1e39",
                    "3.5e38",
                    "1e308",
                    "1e309",
                    "1e-45",
                    "1e-46",
                    "1e-324",
                    "1e-400",
                    "1e99999",
                    "0.0",
                    "-0.0",
                    "2f32",
                    "2f64",
                    "2_f32",
                    "0x10f32",
                    "0b1f32",
                    "0o7f64",
                    "1e3f32",
                    "1.0f32",
                    "1.0f64",
                    "1i32",
                    "1u32",
                    "1u8",
                    "1i128",
                    "1usize",
                    "1.0e10_f64",
                    "0x7fffffff",
                    "0xffffffff",
                    "0x1_0000_0000",
                    "0b1111",
                    "0o777",
                    "1_000_000",
                    "3.",
                    "1.00000005960464477539062500000001",
                    "0.1e-0",
                    "1E5",
                    "true",
                    "false",
                    "'c'",
                    "\"s\"",
                    "b'x'",
                    "b\"xy\"",
                    "1.5f16",
                    "1f128",
                    "f32::MAX",
                    "f32::MIN_POSITIVE",
                    "f64::NAN",
                    "f32::INFINITY",
                    "f32::NEG_INFINITY",
                    "i32::MIN",
                    "u32::MAX",
                    "std::f32::consts::PI",
                    "core::f64::consts::E",
                    "f32::EPSILON",
                    "i32::BITS",
                    "f32::consts::TAU",
                    "f32::NOPE",
                ])
                .to_string(),
        }
    }

    fn tap(&mut self, params: &[String]) -> String {
        let idx = match self.below(10) {
            0..=5 => (self.below(9) as i64 - 4).to_string(),
            6 => self.pick(&["k", "-k", "k + 1", "N", "-N", "N - 1", "k * 2", "i + j"]).to_string(),
            7 => self
                .pick(&[
                    "40",
                    "-40",
                    "4096",
                    "-4096",
                    "4097",
                    "2147483647",
                    "-2147483648",
                    "2147483648",
                    "9223372036854775808",
                    "-9223372036854775809",
                    "170141183460469231731687303715884105727",
                    "-(-170141183460469231731687303715884105727 - 1)",
                    "(-170141183460469231731687303715884105727 - 1)",
                ])
                .to_string(),
            8 => self
                .pick(&[
                    "0.0", "1.5", "true", "0u32", "0usize", "-0", "0i64", "(1)", "{ 2 }", "1 - 1", "3 / 2", "7 % 3",
                    "1 << 1", "x",
                ])
                .to_string(),
            _ => params.first().cloned().unwrap_or_else(|| "p0".to_string()),
        };
        let base = self.pick(&["w", "w", "w", "w", "w", "C", "x", "p0", "W", "w[0]"]);
        format!("{base}[{idx}]")
    }

    fn expr(&mut self, ty: &str, params: &[String]) -> String {
        if self.depth == 0 || self.chance(0.15) {
            return match self.below(10) {
                0..=3 => self.tap(params),
                4..=6 => self.lit(ty),
                7 if !params.is_empty() => params[self.below(params.len() as u64) as usize].clone(),
                _ => self
                    .pick(&[
                        "x", "y", "acc", "k", "N", "C", "w", "C[1]", "(w[0])", "unknown", "Self", "self", "_", "()",
                    ])
                    .to_string(),
            };
        }
        self.depth -= 1;
        let any_ty = self.pick(&["f32", "f64", "i32", "u32", "bool"]);
        let out = match self.below(16) {
            0..=3 => {
                let op = self.pick(&[
                    "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|", "^", "<<", ">>",
                ]);
                format!("{} {op} {}", self.expr(ty, params), self.expr(ty, params))
            }
            4 => format!("{}{}", self.pick(&["-", "!", "*", "&", "- -", "!!"]), self.expr(ty, params)),
            5 => format!("({})", self.expr(ty, params)),
            6 => format!(
                "{} as {}",
                self.expr(any_ty, params),
                self.pick(&["f32", "f64", "i32", "u32", "bool", "usize", "i64", "u8", "f16", "char", "Window"])
            ),
            7 | 8 => {
                let m = self.pick(&[
                    "abs",
                    "sqrt",
                    "min",
                    "max",
                    "mul_add",
                    "sin",
                    "powi",
                    "clamp",
                    "floor",
                    "round",
                    "copysign",
                    "signum",
                    "count_ones",
                    "rotate_left",
                    "abs_diff",
                    "pow",
                    "is_nan",
                    "exp",
                    "to_bits",
                    "rev",
                    "max",
                    "len",
                    "wrapping_add",
                    "wrapping_neg",
                    "wrapping_div",
                    "wrapping_shl",
                    "wrapping_rem",
                ]);
                let args: Vec<String> = (0..self.below(4)).map(|_| self.expr(ty, params)).collect();
                format!("{}.{m}({})", self.atom(ty, params), args.join(", "))
            }
            9 => {
                let f = self.pick(&[
                    "f32::max",
                    "f64::min",
                    "i32::abs",
                    "u32::max",
                    "f32::mul_add",
                    "f32::sqrt",
                    "f32::abs",
                    "std::f32::max",
                    "max",
                    "f32::from_bits",
                    "Window::new",
                    "i32::min",
                ]);
                let args: Vec<String> = (0..self.below(4)).map(|_| self.expr(ty, params)).collect();
                format!("{f}({})", args.join(", "))
            }
            10 | 11 => {
                let c = self.expr("bool", params);
                let (a, b) = (self.expr(ty, params), self.expr(ty, params));
                match self.below(4) {
                    0 => format!("if {c} {{ {a} }}"),
                    1 => format!(
                        "if {c} {{ {a} }} else if {} {{ {b} }} else {{ {} }}",
                        self.expr("bool", params),
                        self.expr(ty, params)
                    ),
                    _ => format!("if {c} {{ {a} }} else {{ {b} }}"),
                }
            }
            12 => format!("{{ let x = {}; {} }}", self.expr(ty, params), self.expr(ty, params)),
            13 => self.tap(params),
            14 => {
                let range = self.range();
                format!("{{ let mut s = {}; for k in {range} {{ s += {}; }} s }}", self.lit(ty), self.expr(ty, params))
            }
            _ => self
                .pick(&[
                    "[1.0, 2.0][0]",
                    "(1, 2).0",
                    "|x| x",
                    "x?",
                    "match x { _ => 1.0 }",
                    "loop { break 1.0 }",
                    "unsafe { w[0] }",
                    "w[0..1]",
                    "&w[0]",
                    "*w",
                    "S { x: 1 }",
                    "f::<f32>(1)",
                    "r#match",
                    "'a: { 1.0 }",
                    "w.0",
                    "w[0][0]",
                    "(w[0],)",
                    "async { 1 }",
                    "x = 1",
                    "x += 1",
                    "return 1.0",
                    "break",
                ])
                .to_string(),
        };
        self.depth += 1;
        out
    }

    /// One chain of `levels` nested constructs (each level one wrapper around the last).
    fn deep(&mut self, levels: u32, ty: &str, params: &[String]) -> String {
        self.depth = 0;
        let mut e = self.tap(params);
        for _ in 0..levels {
            let leaf = if self.chance(0.5) { self.tap(params) } else { self.lit(ty) };
            e = match self.below(9) {
                0 => format!("({e})"),
                1 => format!("-{e}"),
                2 => format!("({leaf} {} {e})", self.pick(&["+", "-", "*", "/", "<", "&&"])),
                3 => format!("if {leaf} > {leaf} {{ {e} }} else {{ {leaf} }}"),
                4 => {
                    format!("({e}).{}", self.pick(&["abs()", "sqrt()", "max(1.0)", "min(w[0])", "mul_add(w[1], 2.0)"]))
                }
                5 => format!("{{ let x = {leaf}; {e} }}"),
                6 => format!("{}::max({e}, {leaf})", ty),
                7 => format!("w[{e}]"),
                _ => format!("({e} as {ty})"),
            };
        }
        e
    }

    fn atom(&mut self, ty: &str, params: &[String]) -> String {
        match self.below(5) {
            0 => self.tap(params),
            1 => format!("({})", self.expr(ty, params)),
            2 => self.lit(ty),
            3 => format!("{}{}", self.lit(ty), self.pick(&["f32", "_f64", ""])),
            _ => self.pick(&["x", "acc", "p0", "w", "k"]).to_string(),
        }
    }

    /// Random tokens from the vocabulary a stencil (or a mistake) might use, with balanced
    /// delimiters so that they lex.
    fn soup(&mut self, n: usize, depth: u32) -> String {
        let mut out = Vec::new();
        for _ in 0..n {
            if depth > 0 && self.chance(0.12) {
                let n = self.below(8) as usize;
                let inner = self.soup(n, depth - 1);
                let (open, close) = [("(", ")"), ("[", "]"), ("{", "}")][self.below(3) as usize];
                out.push(format!("{open}{inner}{close}"));
                continue;
            }
            let t = self.pick(&[
                "w",
                "k",
                "x",
                "N",
                "C",
                "f32",
                "f64",
                "i32",
                "u32",
                "bool",
                "usize",
                "Window",
                "let",
                "mut",
                "for",
                "in",
                "if",
                "else",
                "as",
                "fn",
                "return",
                "loop",
                "while",
                "match",
                "self",
                "Self",
                "true",
                "false",
                "const",
                "static",
                "unsafe",
                "async",
                "move",
                "std",
                "consts",
                "PI",
                "MAX",
                "abs",
                "sqrt",
                "min",
                "max",
                "mul_add",
                "rev",
                "step_by",
                "_",
                "radius",
                "warp",
                "boundary",
                "strategy",
                "outputs_per_thread",
                "zero",
                "wrap",
                "pub",
                "r#type",
                "+",
                "-",
                "*",
                "/",
                "%",
                "=",
                "==",
                "!=",
                "<",
                "<=",
                ">",
                ">=",
                "&&",
                "||",
                "!",
                "&",
                "|",
                "^",
                "<<",
                ">>",
                "+=",
                "-=",
                "*=",
                "/=",
                "%=",
                ".",
                "..",
                "..=",
                "::",
                ":",
                ";",
                ",",
                "#",
                "?",
                "->",
                "=>",
                "@",
                "$",
                "~",
                "'a",
                "0",
                "1",
                "3",
                "-1",
                "40",
                "4096",
                "4097",
                "0.5",
                "1e309",
                "2f32",
                "3u8",
                "0x10",
                "99999999999999999999999999999999999999999",
                "\"s\"",
                "'c'",
                "b'x'",
                "1.0f64",
                "-0.0",
                "1e-400",
                "9223372036854775808",
                "i32::MIN",
            ]);
            out.push(t.to_string());
        }
        out.join(" ")
    }
}

/// Wraps some runs of tokens in invisible (`Delimiter::None`) groups, as `macro_rules!` does with
/// its `$x:expr` fragments.
fn invisible_groups(rng: &mut Rng, ts: TokenStream, p: f64) -> TokenStream {
    let tts: Vec<TokenTree> = ts.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tts.len() {
        let tt = match &tts[i] {
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), invisible_groups(rng, g.stream(), p));
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other.clone(),
        };
        if rng.uniform(0.0, 1.0) < p {
            let len = (1 + rng.below(3) as usize).min(tts.len() - i);
            let mut run = vec![tt];
            run.extend(tts[i + 1..i + len].iter().cloned());
            out.push(TokenTree::Group(Group::new(Delimiter::None, run.into_iter().collect())));
            i += len;
        } else {
            out.push(tt);
            i += 1;
        }
    }
    out.into_iter().collect()
}

// ---- the check -----------------------------------------------------------------------------------

struct Case {
    args: TokenStream,
    item: TokenStream,
}

fn parse(text: &str) -> Option<TokenStream> {
    TokenStream::from_str(text).ok()
}

fn random_case(seed: u64) -> Option<Case> {
    let mut g = Gen { rng: Rng::new(seed), depth: 0, radius: 1, elem: "f32", dims: 1, grid_ok: false };
    let args = g.args();
    g.grid_ok =
        !args.split(|c: char| !c.is_ascii_digit()).any(|n| n.len() > 2 || n.parse::<u32>().is_ok_and(|n| n > 64));
    let item = g.item();
    let (mut args, mut item) = (parse(&args)?, parse(&item)?);
    if g.chance(0.1) {
        args = invisible_groups(&mut g.rng, args, 0.2);
    }
    if g.chance(0.1) {
        item = invisible_groups(&mut g.rng, item, 0.05);
    }
    Some(Case { args, item })
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Expanded,
    Refused,
}

thread_local! {
    /// Where the last panic on this thread happened, as the panic hook saw it.
    static PANIC_AT: std::cell::RefCell<Option<(String, String)>> = const { std::cell::RefCell::new(None) };
    /// Whether this thread's panics are expected (recorded, not printed).
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// From now on, panics on a thread in `QUIET` mode are recorded in `PANIC_AT` instead of printed
/// (the report has them); other threads' panics print as usual.
fn install_quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                return previous(info);
            }
            let file = info.location().map_or(String::new(), |l| format!("{}:{}", l.file(), l.line()));
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(non-string panic payload)".into());
            PANIC_AT.with(|p| *p.borrow_mut() = Some((file, msg)));
        }));
    });
}

#[derive(Debug, PartialEq)]
enum Failure {
    /// The macro panicked at (file:line, message).
    Panic(String, String),
    /// It returned tokens that are not what a macro may return.
    Output(String),
}

impl Failure {
    fn known(&self) -> Option<usize> {
        match self {
            Failure::Panic(at, msg) => KNOWN_PANICS.iter().position(|(file, m)| at.contains(file) && msg.contains(m)),
            Failure::Output(_) => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Panic(at, msg) => write!(f, "the macro panicked at {at}: {msg}"),
            Failure::Output(s) => f.write_str(s),
        }
    }
}

/// Expands the case; `Err` if the macro panicked or printed something that is not Rust.
fn check(args: &TokenStream, item: &TokenStream) -> Result<Outcome, Failure> {
    install_quiet_hook();
    QUIET.with(|q| q.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let out = expand::stencil(args.clone(), item.clone());
        (out.to_string(), out)
    }));
    QUIET.with(|q| q.set(false));
    let (text, out) = match result {
        Ok(v) => v,
        Err(_) => {
            let (at, msg) = PANIC_AT.with(|p| p.borrow_mut().take()).unwrap_or_default();
            return Err(Failure::Panic(at, msg));
        }
    };
    let refused = text.contains("compile_error");
    // With a function as the item, the output is items: the function (or its stub) and either the
    // kernel module or the errors.
    if text.len() < 1 << 20 && syn::parse2::<syn::ItemFn>(item.clone()).is_ok() {
        if let Err(e) = syn::parse2::<syn::File>(out) {
            return Err(Failure::Output(format!("the expansion does not parse as items ({e}):\n{text}")));
        }
    }
    if !refused && !text.contains("KERNEL") {
        return Err(Failure::Output(format!("neither an expansion nor an error:\n{text}")));
    }
    Ok(if refused { Outcome::Refused } else { Outcome::Expanded })
}

// ---- shrinking ----------------------------------------------------------------------------------

/// Removes token trees (and flattens or empties groups) while `fails` still holds.
fn shrink_tokens(ts: TokenStream, fails: &dyn Fn(&TokenStream) -> bool) -> TokenStream {
    let mut tts: Vec<TokenTree> = ts.into_iter().collect();
    let rebuild = |v: &[TokenTree]| -> TokenStream { v.iter().cloned().collect() };
    loop {
        let mut progress = false;
        // Delete chunks, large ones first (every size for short lists, halving for long ones).
        let mut size = tts.len().max(1);
        while size >= 1 {
            let mut i = 0;
            while i + size <= tts.len() {
                let mut v = tts.clone();
                v.drain(i..i + size);
                if fails(&rebuild(&v)) {
                    tts = v;
                    progress = true;
                } else {
                    i += 1;
                }
            }
            size = if size > 16 { size / 2 } else { size - 1 };
        }
        // Replace a group by its contents.
        let mut i = 0;
        while i < tts.len() {
            if let TokenTree::Group(g) = tts[i].clone() {
                let mut v = tts.clone();
                v.splice(i..=i, g.stream());
                if fails(&rebuild(&v)) {
                    tts = v;
                    progress = true;
                    continue;
                }
            }
            i += 1;
        }
        // Shrink inside groups.
        for i in 0..tts.len() {
            if let TokenTree::Group(g) = tts[i].clone() {
                let before = g.stream().to_string();
                let inner = {
                    let tts_ref = &tts;
                    let fails_inner = |s: &TokenStream| {
                        let mut v = tts_ref.clone();
                        v[i] = TokenTree::Group(Group::new(g.delimiter(), s.clone()));
                        fails(&rebuild(&v))
                    };
                    shrink_tokens(g.stream(), &fails_inner)
                };
                if inner.to_string() != before {
                    tts[i] = TokenTree::Group(Group::new(g.delimiter(), inner));
                    progress = true;
                }
            }
        }
        if !progress {
            return rebuild(&tts);
        }
    }
}

/// Shrinks the case while it fails the same way (same message; a panic may move lines).
fn report(seed: u64, case: &Case, failure: &Failure) -> String {
    let same = |r: Result<Outcome, Failure>| match (r, failure) {
        (Err(Failure::Panic(_, m)), Failure::Panic(_, m0)) => &m == m0,
        (Err(Failure::Output(_)), Failure::Output(_)) => true,
        _ => false,
    };
    let fails_item = |item: &TokenStream| same(check(&case.args, item));
    let item = shrink_tokens(case.item.clone(), &fails_item);
    let fails_args = |args: &TokenStream| same(check(args, &item));
    let args = shrink_tokens(case.args.clone(), &fails_args);
    let small = check(&args, &item).err().map_or(String::new(), |f| f.to_string());
    format!(
        "case seed {seed:#x} failed (rerun it alone: RC_FUZZ_SEED={seed:#x} cargo test -p rc-stencil-macros --test macro_fuzz)\n\
         \n--- shrunk ---\n#[stencil({args})]\n{item}\n{small}\n\
         \n--- as generated ---\n#[stencil({})]\n{}\n{failure}",
        case.args, case.item
    )
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => v.replace('_', "").parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

/// What one thread saw.
#[derive(Default)]
struct Tally {
    ran: u64,
    expanded: u64,
    refused: u64,
    unlexed: u64,
    slowest: (Duration, u64),
    /// Per known panic: how many cases, and the first one's seed and report.
    known: Vec<(u64, Option<(u64, String)>)>,
    /// The first new failure: seed and report.
    failure: Option<(u64, String)>,
}

/// Runs seeds `base + t, base + t + threads, ...` below `base + count`.
fn fuzz_share(base: u64, count: u64, t: u64, threads: u64, start: Instant, stop: &AtomicBool) -> Tally {
    let mut tally = Tally { known: vec![(0, None); KNOWN_PANICS.len()], ..Tally::default() };
    let mut i = t;
    while i < count && !stop.load(Ordering::Relaxed) {
        if start.elapsed() > TIME_LIMIT {
            break;
        }
        let seed = base + i;
        i += threads;
        tally.ran += 1;
        let Some(case) = random_case(seed) else {
            tally.unlexed += 1;
            continue;
        };
        let clock = Instant::now();
        let result = check(&case.args, &case.item);
        if clock.elapsed() > tally.slowest.0 {
            tally.slowest = (clock.elapsed(), seed);
        }
        match result {
            Ok(Outcome::Expanded) => tally.expanded += 1,
            Ok(Outcome::Refused) => tally.refused += 1,
            Err(f) => match f.known() {
                Some(k) => {
                    tally.known[k].0 += 1;
                    if tally.known[k].1.is_none() {
                        tally.known[k].1 = Some((seed, report(seed, &case, &f)));
                    }
                }
                None => {
                    tally.failure = Some((seed, report(seed, &case, &f)));
                    stop.store(true, Ordering::Relaxed);
                }
            },
        }
    }
    tally
}

fn fuzz() {
    let (base, count) = match env_u64("RC_FUZZ_SEED") {
        Some(seed) => (seed, 1),
        None => (env_u64("RC_FUZZ_BASE").unwrap_or(BASE_SEED), env_u64("RC_FUZZ_CASES").unwrap_or(CASES)),
    };
    let start = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8) as u64;
    let stop = AtomicBool::new(false);
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                // Deep expressions recurse in syn and in the lowering: give them the stack rustc would.
                std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn_scoped(s, move || fuzz_share(base, count, t, threads, start, stop))
                    .expect("spawn")
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    // The failure of the lowest seed, whichever thread found it.
    if let Some((_, report)) = tallies.iter().filter_map(|t| t.failure.as_ref()).min_by_key(|(seed, _)| *seed) {
        panic!("{report}");
    }
    let sum = |f: fn(&Tally) -> u64| tallies.iter().map(f).sum::<u64>();
    let (ran, expanded, refused, unlexed) =
        (sum(|t| t.ran), sum(|t| t.expanded), sum(|t| t.refused), sum(|t| t.unlexed));
    let slowest = tallies.iter().map(|t| t.slowest).max().unwrap_or_default();
    let mut stale = Vec::new();
    for (k, (file, msg)) in KNOWN_PANICS.iter().enumerate() {
        let n: u64 = tallies.iter().map(|t| t.known[k].0).sum();
        let first = tallies.iter().filter_map(|t| t.known[k].1.as_ref()).min_by_key(|(seed, _)| *seed);
        match first {
            Some((_, report)) => {
                eprintln!("KNOWN BUG, still there: {n} cases panic in {file} with `{msg}`; the first:\n{report}\n")
            }
            None => stale.push((file, msg)),
        }
    }
    if ran < count {
        eprintln!("time limit: stopped after {ran} of {count} cases");
    }
    eprintln!(
        "{ran} cases from seed {base:#x} in {:.1?} on {threads} threads: {expanded} expanded, {refused} refused, \
         {unlexed} did not lex; slowest {:.1?} (seed {:#x})",
        start.elapsed(),
        slowest.0,
        slowest.1
    );
    if ran == CASES && base == BASE_SEED {
        assert!(stale.is_empty(), "fixed? these known panics did not occur: {stale:?}; delete them from KNOWN_PANICS");
    }
    if ran >= 1000 {
        let enough = expanded > ran / 20 && refused > ran / 5;
        assert!(enough, "the generator should produce both kinds: {expanded} expanded, {refused} refused");
    }
}

#[test]
fn the_macro_never_panics() {
    fuzz();
}

/// A round-robin pattern whose cache alone needs more than 255 registers per thread is a compile
/// error (without `distribution`, the cost model looks for a layout that fits first).
#[test]
fn register_hungry_patterns_are_refused() {
    let (args, item) = (
        "radius = 4096, warp = 2, outputs_per_thread = 64, distribution = round_robin",
        "fn f(w: Window<f64>) -> f64 { w[-4096] + w[4096] + w[0] }",
    );
    assert_eq!(check(&parse(args).unwrap(), &parse(item).unwrap()), Ok(Outcome::Refused));
}

/// A block's shared-memory stage past the 48 KiB a kernel may declare is a compile error, in 1D
/// as in 2D and 3D (it would fail when the module loads on the GPU).
#[test]
fn shared_memory_stages_past_48_kib_are_refused() {
    for (args, item) in [
        // 256 x 64 + 8192 u32: 96 KiB.
        (
            "radius = 4096, outputs_per_thread = 64, strategy = shared_memory",
            "fn f(w: Window<u32>) -> u32 { w[-4096].max(w[4096]) }",
        ),
        // 256 x 16 + 8192 u32 is 48 KiB exactly; f64 doubles it.
        (
            "radius = 4096, outputs_per_thread = 16, strategy = shared_memory",
            "fn f(w: Window<f64>) -> f64 { w[-4096] + w[4096] }",
        ),
    ] {
        assert_eq!(
            check(&parse(args).unwrap(), &parse(item).unwrap()),
            Ok(Outcome::Refused),
            "#[stencil({args})] {item}"
        );
    }
}

/// Valid stencils expand (no error) and their expansion names the kernel: the check above would
/// pass vacuously if every case were refused.
#[test]
fn valid_stencils_expand() {
    for (args, item) in [
        ("radius = 1", "fn f(w: Window<f32>) -> f32 { w[-1] + w[0] + w[1] }"),
        (
            "radius = 2, warp = 8, boundary = zero, strategy = naive",
            "fn f(w: Window<i32>, p: u32) -> i32 { let mut s = 0; for k in -2..=2 { s += w[k]; } s.max(p as i32) }",
        ),
        (
            "radius = 3, outputs_per_thread = 4, strategy = shared_memory",
            "pub fn f(w: Window<f64>) -> f64 { if w[3] > 0.0 { w[-3].mul_add(2.0, 1.0) } else { f64::MAX } }",
        ),
        (
            "radius = 5, warp = 8, outputs_per_thread = 8, distribution = granule(4)",
            "fn f(w: Window<f32>) -> f32 { (w[-5] + w[5]) * 0.5 }",
        ),
        // The largest pattern whose cache fits in registers (with f64 at warp 2 the same taps
        // keep 384 cache registers per lane: refused, see `register_hungry_patterns_are_refused`).
        (
            "radius = 4096, warp = 32, outputs_per_thread = 64",
            "fn f(w: Window<f32>) -> f32 { w[-4096] + w[4096] + w[0] }",
        ),
        // The largest 1D shared-memory stage of radius 4096: 256 threads x 16 outputs and the
        // halo of 2 x 4096, 12288 u32 = 48 KiB exactly (see `shared_memory_stages_past_48_kib_are_refused`).
        (
            "radius = 4096, outputs_per_thread = 16, strategy = shared_memory",
            "fn f(w: Window<u32>) -> u32 { w[-4096].max(w[4096]) }",
        ),
    ] {
        let outcome = check(&parse(args).unwrap(), &parse(item).unwrap());
        assert_eq!(outcome, Ok(Outcome::Expanded), "#[stencil({args})] {item}");
    }
}
