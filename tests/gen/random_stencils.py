#!/usr/bin/env python3
"""Writes tests/catalogue/random.rs: 200 random `#[stencil]` functions and a `visit_all` over them.

    python3 tests/gen/random_stencils.py            # (re)write tests/catalogue/random.rs
    python3 tests/gen/random_stencils.py --check    # exit 1 if the file is not what this writes

Deterministic (fixed seed, Python 3.11 standard library only). Each stencil is ordinary Rust in
the body language the macro accepts (rc-macros/src/lower/); `tests/random.rs` checks that the
macro's warp program, emulated on the CPU, equals the function itself on awkward data.

The bodies must be valid Rust *and* must not panic in a debug build of the CPU reference, so:
- integer expressions carry a bound on |value| (window data: i32 in (-1000, 1000), u32 in
  [0, 1000)) and every `+ - *` is generated only when the result's bound stays below 2^30;
  integers are multiplied only by small constants; u32 is subtracted only as
  `a.max(b) - a.min(b)`; `-x` and `x.abs()` only on i32 values whose bound rules out i32::MIN;
- integer `/` and `%` divide by nonzero constants (never -1 on i32, which overflows on i32::MIN;
  `wrapping_div(-1)` and `wrapping_rem(-1)` do), `<<` and `>>` shift by constants below 32, and
  `& | ^` never panic: these take any operand, even a saturated one, and `<<` keeps a bound only
  where no bit leaves; the `wrapping_*` methods take anything and give anything (bound 2^32), so
  they appear only where such a value may go (casts, comparisons, min/max, selects, and each
  other);
- array parameters `[T; n]` are read with constant indices, also as a loop's coefficients;
- float-to-integer casts saturate in Rust, so their results (bound 2^31) are used only where no
  overflow can follow (casts, comparisons, min/max, selects), unless clamped first;
- an unsuffixed literal bound by an unannotated `let` gets its type from a later use, as rustc
  infers it: the generator emits such a `let`, sometimes a use of it under `as` (which does not
  fix its type), and then a use that does (an arithmetic or comparison with a typed operand, a
  method argument, a typed `let`); only then may it be a method receiver (`x.abs()` on a
  `{float}` is an error in rustc).

Besides the body language at large, the generator deliberately produces the literal typing rules
rustc applies: integer-looking float literals (`2f32`, `10_f64`), literals (negated,
parenthesized) as the operand of `as`, which take the cast's type when they can (`3000000000 as
u32`, `1.00000005960464477539062500000001 as f32` rounds once), `bool` annotations on `let` and
`const`, and `let`-bound literals typed by a later use (also under `as`).
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SEED = 0x5EED_2024
COUNT = 200
OUT = Path(__file__).resolve().parent.parent / "catalogue" / "random.rs"

FLOATS = ("f32", "f64")
INTS = ("i32", "u32")
# Bounds on |value| of integer expressions.
LIMIT = 1 << 30  # no generated integer arithmetic may exceed this
SATURATED = 1 << 32  # a float-to-integer cast: anything, i32::MIN included
DATA_BOUND = 1000  # awkward(): i32 in (-1000, 1000), u32 in [0, 1000)
PARAM_BOUND = 1000
# Literal *expressions* under `as`: rustc gives the cast's type only to a literal (negated,
# parenthesized or a block's tail); `(a + b) as f32` and `(if c { a } else { b }) as f32` compute
# in the fallback type f64 (or i32) first. Off while the macro types them as the cast's target
# (it rounds `(1.00000005960464477539062500000001 + 0.0) as f32` once, rustc twice, and rejects
# `(0 - 1) as u32`); turning it on changes nothing else in the output.
EXPRESSIONS_UNDER_AS = True

# Operator precedence, high binds tighter.
P_IF, P_OR, P_AND, P_CMP, P_ADD, P_MUL, P_CAST, P_UNARY, P_PRIMARY = 0, 3, 4, 5, 6, 7, 8, 9, 10

FLOAT_PARAM_VALUES = ["0.75", "-1.25", "0.5", "2.0", "-0.375", "1.5", "0.125", "3.0"]
I32_PARAM_VALUES = ["3", "-2", "7", "-5", "1"]
U32_PARAM_VALUES = ["3", "2", "7", "5", "1"]


@dataclass
class E:
    """A generated expression: its code, type, precedence, and facts the generator tracks."""

    code: str
    ty: str
    prec: int = P_PRIMARY
    bound: int = 0  # integers: |value| <= bound
    typed: bool = True  # False: an unsuffixed literal expression, typed by its context
    lit: bool = False  # a literal (or constant expression of literals)


@dataclass
class Var:
    name: str
    ty: str
    bound: int = 0
    uses: int = 0  # picks so far: the generator prefers values not used yet
    defined_at: int = 0  # the body line after its last assignment: it must be read from here on


@dataclass
class Arr:
    name: str
    ty: str
    values: list[str]
    bound: int = 0
    uses: int = 0
    defined_at: int = 0


def wrap(e: E, prec: int) -> str:
    """`e` as an operand that needs at least precedence `prec`."""
    return f"({e.code})" if e.prec < prec else e.code


def operand_cmp(e: E) -> str:
    # `x as f32 < y` would parse `f32<` as generics: casts (and anything looser) get parentheses.
    return f"({e.code})" if e.prec <= P_CAST else e.code


def fmt_off(base: str, off: int) -> str:
    if off == 0:
        return base
    return f"{base} + {off}" if off > 0 else f"{base} - {-off}"


class Stencil:
    def __init__(self, rng: random.Random, index: int, radius: int, elem: str):
        self.rng = rng
        self.index = index
        self.name = f"random_{index:03}"
        self.R = radius
        self.T = elem
        self.warp = rng.choice([2, 4, 8, 16, 32])
        self.outputs = rng.randint(1, 8)
        self.boundary = rng.choice(["valid", "zero", "clamp", "wrap"])
        self.params: list[Var] = []
        # The parameter list in order: scalars (as `Var`s in `params`) and arrays (name, type, n).
        self.signature: list[str] = []
        self.array_params: list[tuple[str, str, int]] = []
        self.param_values: list[str] = []
        self.vars: list[Var] = []
        self.arrays: list[Arr] = []
        self.lines: list[str] = []
        self.counter = 0
        self.const_n: int | None = None  # `const N: i32 = n;`, used for loop bounds and taps
        self.make_params()

    # ---- helpers ---------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def other_float(self, ty: str) -> str:
        return "f64" if ty == "f32" else "f32"

    def make_params(self) -> None:
        n = self.rng.choices([0, 1, 2], weights=[35, 40, 25])[0]
        for i in range(n):
            if self.chance(0.2):
                self.make_array_param(i)
                continue
            if self.T in FLOATS:
                ty = self.rng.choices([self.T, self.other_float(self.T), "i32", "u32"], weights=[70, 14, 10, 6])[0]
            else:
                ty = self.rng.choices([self.T, "f32", "f64", "i32" if self.T == "u32" else "u32"], weights=[70, 12, 6, 12])[0]
            name = self.rng.choice(["alpha", "beta", "gain", "bias", "scale", "shift", "lo", "hi"]) + str(i)
            self.params.append(Var(name, ty, PARAM_BOUND))
            self.signature.append(f"{name}: {ty}")
            if ty in FLOATS:
                self.param_values.append(self.rng.choice(FLOAT_PARAM_VALUES))
            elif ty == "i32":
                self.param_values.append(self.rng.choice(I32_PARAM_VALUES))
            else:
                self.param_values.append(self.rng.choice(U32_PARAM_VALUES))

    def make_array_param(self, i: int) -> None:
        """`name: [T; n]`, passed at launch: an array the body indexes with constants."""
        ty = self.T if self.chance(0.7) else self.rng.choice(FLOATS + INTS)
        n = self.rng.randint(1, 9)
        pool = FLOAT_PARAM_VALUES if ty in FLOATS else I32_PARAM_VALUES if ty == "i32" else U32_PARAM_VALUES
        values = [self.rng.choice(pool) for _ in range(n)]
        name = self.rng.choice(["h", "taps", "coef", "weights"]) + str(i)
        self.arrays.append(Arr(name, ty, values, 0 if ty in FLOATS else 9))
        self.array_params.append((name, ty, n))
        self.signature.append(f"{name}: [{ty}; {n}]")
        self.param_values.append(f"[{', '.join(values)}]")

    # ---- leaves ------------------------------------------------------------------------------

    def tap_offset(self) -> int:
        r = self.R
        if self.chance(0.3):
            return self.rng.choice([-r, 0, r, -1, 1] if r >= 1 else [0])
        return self.rng.randint(-r, r)

    def tap(self, d: int | None = None) -> E:
        if d is None and self.const_n is not None and self.chance(0.15):
            return E(f"w[{self.rng.choice(['N', '-N', 'N - 1', '1 - N'])}]", self.T, P_PRIMARY, DATA_BOUND)
        d = self.tap_offset() if d is None else d
        return E(f"w[{d}]", self.T, P_PRIMARY, DATA_BOUND)

    def float_literal(self, ty: str, allow_negative: bool = True) -> E:
        rng = self.rng
        mag = rng.choice(["0.5", "0.25", "2.0", "1.5", "0.125", "3.0", "0.1", "0.75", "10.0", "1.0", "0.3", "4.5", "0.0"])
        style = rng.choices(
            ["plain", "suffix", "intsuffix", "underscore", "exp", "ratio", "const"], weights=[45, 12, 10, 5, 10, 8, 10]
        )[0]
        if style == "suffix":
            e = E(f"{mag}{ty}", ty, lit=True)
        elif style == "intsuffix":  # `2f32`: a float literal without a point
            e = E(f"{rng.choice(['0', '1', '2', '3', '4', '10', '16', '100'])}{rng.choice(['', '_'])}{ty}", ty, lit=True)
        elif style == "underscore":
            e = E(f"{mag}_{ty}", ty, lit=True)
        elif style == "exp":
            e = E(rng.choice(["1e-3", "2.5e-1", "1.5e2", "5e-1", "1e1"]), ty, typed=False, lit=True)
        elif style == "ratio":
            e = E(f"{rng.choice(['1.0', '2.0', '3.0'])} / {rng.choice(['3.0', '7.0', '16.0'])}", ty, P_MUL, typed=False, lit=True)
        elif style == "const":
            c = rng.choice(
                [f"{ty}::EPSILON", f"std::{ty}::consts::PI", f"std::{ty}::consts::FRAC_1_SQRT_2", f"std::{ty}::consts::LN_2", f"{ty}::MIN_POSITIVE"]
            )
            e = E(c, ty, lit=True)
        else:
            e = E(mag, ty, typed=False, lit=True)
        if allow_negative and self.chance(0.25):
            e = E(f"-{wrap(e, P_UNARY)}", ty, P_UNARY, typed=e.typed, lit=True)
        return e

    def int_literal(self, ty: str, lo: int = 0, hi: int = 9) -> E:
        v = self.rng.randint(lo, hi)
        if ty == "u32":
            v = abs(v)
        suffix = self.rng.choices(["", ty, "_" + ty], weights=[80, 15, 5])[0]
        code = f"{v}{suffix}"
        if v < 0:
            return E(code, ty, P_UNARY, abs(v), typed=bool(suffix), lit=True)
        return E(code, ty, P_PRIMARY, abs(v), typed=bool(suffix), lit=True)

    def literal(self, ty: str) -> E:
        if ty in FLOATS:
            return self.float_literal(ty)
        if ty == "bool":
            return E(self.rng.choice(["true", "false"]), "bool", lit=True)
        return self.int_literal(ty, -9 if ty == "i32" else 0, 9)

    def cast_literal(self, ty: str, budget: int = LIMIT) -> E:
        """A literal as the operand of `as`: rustc types it as the cast's target when it can be one
        (`3000000000 as u32`, `1.00000005960464477539062500000001 as f32` rounds once), else it
        takes its fallback type (`2.7 as i32` is an f64, `3 as f32` an i32); or a bool."""
        rng = self.rng
        if EXPRESSIONS_UNDER_AS and self.chance(0.3):
            if ty in FLOATS:
                a = rng.choice(["1.00000005960464477539062500000001", "0.1", "16777217.0"])
                if self.chance(0.5):
                    return E(f"({a} {rng.choice(['+', '*'])} {rng.choice(['0.0', '1.0'])}) as {ty}", ty, P_CAST)
                return E(f"(if {self.boolean(0).code} {{ {a} }} else {{ 0.5 }}) as {ty}", ty, P_CAST)
            if ty == "u32" and budget >= SATURATED:
                return E(f"(0 - {rng.randint(1, 9)}) as u32", ty, P_CAST, SATURATED)
        floats = ["0.1", "1.00000005960464477539062500000001", "2.5", "1e-3", "0.3", "16777217.0", "3.0000001",
                  "2.7", "1e10", "1.5", "3.99", "2147483647.5"]
        if ty in FLOATS:
            ints = ["3", "16777217", "2147483647", "7", "0"]
        elif ty == "u32":
            ints = ["3000000000", "4294967295", "7", "0", "65536", "1000"]
        else:
            ints = ["7", "2147483647", "2147483648", "5", "1000", "0"]
        lo, hi = (0, (1 << 32) - 1) if ty == "u32" else (-(1 << 31), (1 << 31) - 1)

        def bound(text: str, neg: bool) -> int | None:
            """|value| of `text as ty` (negated first), or None where rustc rejects it."""
            if ty in FLOATS or text in ("true", "false"):
                return 0 if ty in FLOATS else 1
            v = float(text) if "." in text or "e" in text else int(text)
            if isinstance(v, int):
                # the literal is a `ty`: it must fit, and only i32 can be negated
                if neg and ty == "u32":
                    return None
                v = -v if neg else v
                return abs(v) if lo <= v <= hi else None
            v = -v if neg else v  # an f64, cast with saturation
            return abs(max(lo, min(hi, math.trunc(v))))

        pool = floats + ints + (["true", "false"] if ty in INTS else [])
        for _ in range(20):
            text = rng.choice(pool)
            neg = text not in ("true", "false") and self.chance(0.25)
            b = bound(text, neg)
            if b is not None and b <= budget:
                break
        else:
            text, neg, b = ("0.5" if ty in FLOATS else "0"), False, 0
        code = f"-{text}" if neg else text
        if self.chance(0.2):
            code = f"({code})"
        return E(f"{code} as {ty}", ty, P_CAST, b)

    def pick_var(self, ty: str, pool: list[Var]) -> Var | None:
        cands = [v for v in pool if v.ty == ty]
        if not cands:
            return None
        unused = [v for v in cands if v.uses == 0]
        v = self.rng.choice(unused if unused and self.chance(0.8) else cands)
        v.uses += 1
        return v

    def leaf(self, ty: str, budget: int) -> E:
        """A typed leaf of type `ty` (never an unsuffixed literal) within `budget`."""
        options = []
        v = [x for x in self.vars if x.ty == ty and x.bound <= budget]
        p = [x for x in self.params if x.ty == ty and x.bound <= budget]
        if v:
            options += ["var"] * 4
        if p:
            options += ["param"] * 2
        if ty == self.T:
            options += ["tap"] * 6
        arrs = [a for a in self.arrays if a.ty == ty and a.bound <= budget]
        if arrs:
            options += ["array"]
        if ty != "bool":
            options += ["cast_tap"] * (1 if ty == self.T else 4)
            options += ["cast_lit"]
        if ty == "bool":
            options += ["cmp"] * 4
        kind = self.rng.choice(options)
        if kind == "var":
            var = self.pick_var(ty, v)
            return E(var.name, ty, P_PRIMARY, var.bound)
        if kind == "param":
            var = self.pick_var(ty, p)
            return E(var.name, ty, P_PRIMARY, var.bound)
        if kind == "tap":
            return self.tap()
        if kind == "array":
            a = self.rng.choice(arrs)
            a.uses += 1
            return E(f"{a.name}[{self.rng.randrange(len(a.values))}]", ty, P_PRIMARY, a.bound)
        if kind == "cmp":
            return self.compare(0)
        if kind == "cast_lit":
            return self.cast_literal(ty, budget)
        return self.convert(self.tap(), ty, budget)

    # ---- conversions -------------------------------------------------------------------------

    def cast(self, e: E, ty: str, bound: int) -> E:
        return E(f"{wrap(e, P_CAST)} as {ty}", ty, P_CAST, bound)

    def convert(self, e: E, ty: str, budget: int = LIMIT) -> E:
        """`e` (typed) as type `ty`, within `budget` when `ty` is an integer."""
        src = e.ty
        if src == ty:
            return e
        if ty in FLOATS:
            if src == "bool":
                if self.chance(0.5):
                    mag = self.rng.choice(["0.5", "1.0", "2.0", "0.75"])
                    return E(f"if {e.code} {{ {mag}{ty} }} else {{ {self.float_literal(ty).code} }}", ty, P_IF)
                return self.cast(self.cast(e, "i32", 1), ty, 0)
            return self.cast(e, ty, 0)
        if src == "bool":
            return self.cast(e, ty, 1)
        if src in FLOATS:
            if budget >= SATURATED and self.chance(0.5):
                return self.cast(e, ty, SATURATED)
            cap = min(budget, 10_000)
            lo = "0.0" if ty == "u32" else f"-{cap}.0"
            clamped = E(f"{wrap(e, P_PRIMARY)}.max({lo}).min({cap}.0)", src)
            return self.cast(clamped, ty, cap)
        # integer to integer
        if ty == "u32":  # from i32: make it non-negative first
            if e.bound >= SATURATED:
                e = E(f"{wrap(e, P_PRIMARY)}.max(0).min({min(budget, LIMIT)})", "i32", P_PRIMARY, min(budget, LIMIT))
            elif self.chance(0.5) and e.bound <= LIMIT:
                e = E(f"{wrap(e, P_PRIMARY)}.abs()", "i32", P_PRIMARY, e.bound)
            else:
                e = E(f"{wrap(e, P_PRIMARY)}.max(0)", "i32", P_PRIMARY, e.bound)
            if e.bound > budget:
                e = E(f"{wrap(e, P_PRIMARY)}.min({budget})", "i32", P_PRIMARY, budget)
            return self.cast(e, ty, e.bound)
        # u32 to i32
        if e.bound > min(budget, LIMIT):
            cap = min(budget, LIMIT)
            e = E(f"{wrap(e, P_PRIMARY)}.min({cap})", "u32", P_PRIMARY, cap)
        return self.cast(e, ty, e.bound)

    # ---- expressions -------------------------------------------------------------------------

    def expr(self, ty: str, depth: int, budget: int = LIMIT, typed: bool = False) -> E:
        if ty == "bool":
            return self.boolean(depth)
        if ty in FLOATS:
            e = self.float_expr(ty, depth)
        else:
            e = self.int_expr(ty, depth, budget)
        if typed and not e.typed:
            if ty in FLOATS:  # typed by a typed leaf beside it
                l = self.leaf(ty, budget)
                e = E(f"{wrap(l, P_ADD)} + {wrap(e, P_ADD + 1)}", ty, P_ADD)
            else:
                e = self.leaf(ty, budget)
        return e

    def float_expr(self, ty: str, depth: int) -> E:
        rng = self.rng
        if depth <= 0 or self.chance(0.2):
            if self.chance(0.25):
                return self.cast_literal(ty) if self.chance(0.15) else self.float_literal(ty)
            return self.leaf(ty, LIMIT)
        kind = rng.choices(
            ["add", "sub", "mul", "div", "neg", "abs", "minmax", "sqrt", "mul_add", "if", "cast_int", "cast_float", "ufcs"],
            weights=[14, 10, 14, 5, 4, 6, 7, 4, 5, 6, 4, 4, 3],
        )[0]
        d = depth - 1
        if kind in ("add", "sub", "mul", "div"):
            op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[kind]
            prec = P_ADD if kind in ("add", "sub") else P_MUL
            a = self.float_expr(ty, d)
            b = self.float_expr(ty, d)
            if not a.typed and not b.typed:
                b = self.leaf(ty, LIMIT)
            return E(f"{wrap(a, prec)} {op} {wrap(b, prec + 1)}", ty, prec, typed=a.typed or b.typed)
        if kind == "neg":
            a = self.expr(ty, d, typed=True)
            code = wrap(a, P_UNARY)
            if code.startswith("-"):
                code = f"({code})"
            return E(f"-{code}", ty, P_UNARY)
        if kind == "abs":
            a = self.expr(ty, d, typed=True)
            return E(f"{wrap(a, P_PRIMARY)}.abs()", ty)
        if kind == "minmax":
            a = self.expr(ty, d, typed=True)
            b = self.float_expr(ty, d)
            return E(f"{wrap(a, P_PRIMARY)}.{rng.choice(['min', 'max'])}({b.code})", ty)
        if kind == "sqrt":
            a = self.expr(ty, d, typed=True)
            if self.chance(0.75):
                return E(f"{wrap(a, P_PRIMARY)}.abs().sqrt()", ty)
            return E(f"{wrap(a, P_PRIMARY)}.sqrt()", ty)
        if kind == "mul_add":
            a = self.expr(ty, d, typed=True)
            b, c = self.float_expr(ty, d), self.float_expr(ty, d)
            return E(f"{wrap(a, P_PRIMARY)}.mul_add({b.code}, {c.code})", ty)
        if kind == "ufcs":
            a, b = self.float_expr(ty, d), self.float_expr(ty, d)
            m = rng.choice(["max", "min", "mul_add", "abs"])
            if m == "abs":
                return E(f"{ty}::abs({a.code})", ty)
            if m == "mul_add":
                return E(f"{ty}::mul_add({a.code}, {b.code}, {self.float_expr(ty, d).code})", ty)
            return E(f"{ty}::{m}({a.code}, {b.code})", ty)
        if kind == "if":
            return self.if_expr(ty, d, LIMIT)
        if kind == "cast_int":
            src = rng.choice(INTS)
            return self.cast(self.int_expr(src, d, SATURATED, typed=True), ty, 0)
        # cast_float: through the other float type
        other = self.other_float(ty)
        inner = self.float_expr(other, d)
        if not inner.typed:
            inner = self.leaf(other, LIMIT)
        return self.cast(inner, ty, 0)

    def if_expr(self, ty: str, depth: int, budget: int) -> E:
        cond = self.boolean(depth)
        a = self.expr(ty, depth, budget)
        b = self.expr(ty, depth, budget)
        if not a.typed and not b.typed and self.chance(0.5):
            b = self.leaf(ty, budget)
        if self.chance(0.25):
            cond2 = self.boolean(depth)
            c = self.expr(ty, depth, budget)
            return E(
                f"if {cond.code} {{ {a.code} }} else if {cond2.code} {{ {b.code} }} else {{ {c.code} }}",
                ty, P_IF, max(a.bound, b.bound, c.bound), typed=a.typed or b.typed or c.typed,
            )
        return E(f"if {cond.code} {{ {a.code} }} else {{ {b.code} }}", ty, P_IF, max(a.bound, b.bound), typed=a.typed or b.typed)

    def int_expr(self, ty: str, depth: int, budget: int, typed: bool = False) -> E:
        e = self._int_expr(ty, depth, budget)
        if typed and not e.typed:
            e = self.leaf(ty, budget)
        assert e.bound <= budget or e.bound <= DATA_BOUND, (e, budget)
        return e

    def _int_expr(self, ty: str, depth: int, budget: int) -> E:
        rng = self.rng
        if budget < DATA_BOUND:
            return self.int_literal(ty, -min(budget, 9) if ty == "i32" else 0, min(budget, 9))
        if depth <= 0 or self.chance(0.2):
            if self.chance(0.2):
                return self.literal(ty)
            return self.leaf(ty, budget)
        d = depth - 1
        arith = min(budget, LIMIT)  # a larger budget admits saturated casts, never arithmetic on them
        kinds = ["add", "minmax", "if", "mulc", "cast", "div", "rem", "bits", "mask", "shr", "shl"]
        weights = [14, 10, 6, 5, 4, 6, 6, 6, 4, 6, 4]
        if budget >= SATURATED:
            kinds += ["wrapping"]
            weights += [8]
        if ty == "i32":
            kinds += ["sub", "neg", "abs", "not"]
            weights += [10, 3, 5, 2]
        else:
            kinds += ["absdiff"]
            weights += [6]
        kind = rng.choices(kinds, weights=weights)[0]
        half = arith // 2
        if kind in ("add", "sub") and half >= DATA_BOUND:
            a = self._int_expr(ty, d, half)
            b = self._int_expr(ty, d, half)
            if a.bound > half or b.bound > half:
                return self.leaf(ty, budget)
            op = "+" if kind == "add" else "-"
            if not a.typed and not b.typed:
                b = self.leaf(ty, half)
            return E(f"{wrap(a, P_ADD)} {op} {wrap(b, P_ADD + 1)}", ty, P_ADD, a.bound + b.bound, typed=a.typed or b.typed)
        if kind == "mulc":
            c = rng.choice([2, 3, 4, -1, -2, -3]) if ty == "i32" else rng.choice([2, 3, 4])
            a = self._int_expr(ty, d, arith // abs(c))
            if not a.typed or a.bound * abs(c) > arith:
                return self.leaf(ty, budget)
            lit = E(str(c), ty, P_UNARY if c < 0 else P_PRIMARY, abs(c), typed=False, lit=True)
            if self.chance(0.5):
                return E(f"{wrap(a, P_MUL)} * {wrap(lit, P_MUL + 1)}", ty, P_MUL, a.bound * abs(c))
            return E(f"{wrap(lit, P_MUL)} * {wrap(a, P_MUL + 1)}", ty, P_MUL, a.bound * abs(c))
        if kind in ("neg", "abs", "not"):
            a = self._int_expr(ty, d, budget)
            if not a.typed or a.bound > LIMIT:
                a = self.leaf(ty, min(budget, LIMIT))
                if a.bound > LIMIT:
                    a = self.tap()
            if kind == "abs":
                return E(f"{wrap(a, P_PRIMARY)}.abs()", ty, P_PRIMARY, a.bound)
            if kind == "not":  # bitwise: !x == -x - 1
                return E(f"!{wrap(a, P_UNARY)}", ty, P_UNARY, a.bound + 1)
            code = wrap(a, P_UNARY)
            if code.startswith("-"):
                code = f"({code})"
            return E(f"-{code}", ty, P_UNARY, a.bound)
        if kind in ("div", "rem", "bits", "mask", "shr", "shl", "wrapping"):
            e = self.int_op(kind, ty, d, budget)
            return e if e.bound <= budget else self.leaf(ty, budget)
        if kind == "minmax":
            a = self._int_expr(ty, d, budget)
            if not a.typed:
                a = self.leaf(ty, budget)
            b = self._int_expr(ty, d, budget)
            if rng.random() < 0.2:
                return E(f"{ty}::{rng.choice(['min', 'max'])}({a.code}, {b.code})", ty, P_PRIMARY, max(a.bound, b.bound))
            return E(f"{wrap(a, P_PRIMARY)}.{rng.choice(['min', 'max'])}({b.code})", ty, P_PRIMARY, max(a.bound, b.bound))
        if kind == "absdiff":  # u32: |a - b| without underflow
            a = self.leaf(ty, budget)
            b = self._int_expr(ty, d, budget)
            ac, bc = wrap(a, P_PRIMARY), b.code
            return E(f"{ac}.max({bc}) - {ac}.min({bc})", ty, P_ADD, max(a.bound, b.bound))
        if kind == "if":
            return self.if_expr(ty, d, budget)
        # cast from another type
        src = rng.choice([s for s in ("f32", "f64", "i32", "u32", "bool") if s != ty])
        if src in FLOATS:
            inner = self.float_expr(src, d)
            if not inner.typed:
                inner = self.leaf(src, LIMIT)
        elif src == "bool":
            inner = self.boolean(d)
        else:
            inner = self.int_expr(src, d, budget, typed=True)
        return self.convert(inner, ty, budget)

    def divisor(self, ty: str) -> tuple[str, int]:
        """A constant divisor the body language takes (never 0, never -1 on i32): its code, with a
        suffix now and then, and |value|."""
        if ty == "i32":
            v = self.rng.choice([2, 3, 7, 10, 1000, 65537, 2147483647, -2, -3, -7, -1000, -2147483648])
        else:
            v = self.rng.choice([2, 3, 7, 10, 1000, 65537, 2147483648, 3000000000, 4294967295])
        code = f"{v}{self.rng.choice(['', '', ty])}"
        return (f"({code})" if v < 0 else code), abs(v)

    def int_op(self, kind: str, ty: str, d: int, budget: int) -> E:
        """Integer `/`, `%` (by constants), `& | ^`, `<<`, `>>` (by constants below 32), and the
        `wrapping_*` methods. None of them panics, so operands may have any bound; the result's
        bound follows from the operation."""
        rng = self.rng
        any_bound = max(budget, SATURATED)
        a = self._int_expr(ty, d, any_bound)
        if not a.typed:
            a = self.leaf(ty, any_bound)
        if kind in ("div", "rem"):
            c, m = self.divisor(ty)
            op = "/" if kind == "div" else "%"
            bound = a.bound // m + 1 if kind == "div" else min(a.bound, m - 1)
            return E(f"{wrap(a, P_MUL)} {op} {c}", ty, P_MUL, bound)
        if kind == "bits":
            b = self._int_expr(ty, d, any_bound)
            op = rng.choice(["&", "|", "^"])
            bound = min(SATURATED, 1 << max(a.bound, b.bound).bit_length())
            return E(f"({wrap(a, P_UNARY)} {op} {wrap(b, P_UNARY)})", ty, P_PRIMARY, bound)
        if kind == "mask":  # a non-negative mask bounds the result, whatever the operand
            m = rng.choice([0xFF, 0x3C3, 0xFFFF, 7, 0x7FFF_FFFF])
            text = rng.choice([hex(m), str(m)])
            return E(f"({wrap(a, P_UNARY)} & {text})", ty, P_PRIMARY, m)
        if kind == "shr":
            c = rng.randint(0, 31)
            amount = f"{c}{rng.choice(['', '', 'u32', 'i32'])}"
            return E(f"({wrap(a, P_UNARY)} >> {amount})", ty, P_PRIMARY, (a.bound >> c) + 1)
        if kind == "shl":
            c = rng.randint(0, 31)
            if a.bound << c > min(budget, LIMIT):
                if budget < SATURATED:  # bits would leave: keep only shifts that lose none
                    c = max(0, min(LIMIT, budget).bit_length() - 1 - a.bound.bit_length())
                    if a.bound << c > min(budget, LIMIT):
                        return self.leaf(ty, budget)
            bound = a.bound << c if a.bound << c <= LIMIT else SATURATED
            # `x as u32 << 3` would read `u32<` as generics: casts get parentheses, as all operands here.
            return E(f"({wrap(a, P_UNARY)} << {c})", ty, P_PRIMARY, bound)
        # wrapping: any operands, any result
        m = rng.choice(["wrapping_add", "wrapping_sub", "wrapping_mul", "wrapping_neg", "wrapping_div", "wrapping_rem", "wrapping_shl", "wrapping_shr"])
        recv = wrap(a, P_PRIMARY)
        if m == "wrapping_neg":
            return E(f"{recv}.wrapping_neg()", ty, P_PRIMARY, SATURATED)
        if m in ("wrapping_div", "wrapping_rem"):
            c = "-1" if ty == "i32" and self.chance(0.4) else self.divisor(ty)[0]
            return E(f"{recv}.{m}({c})", ty, P_PRIMARY, SATURATED)
        if m in ("wrapping_shl", "wrapping_shr"):
            return E(f"{recv}.{m}({rng.randint(0, 70)})", ty, P_PRIMARY, SATURATED)
        b = self._int_expr(ty, d, any_bound)
        if m == "wrapping_mul" and self.chance(0.5):
            b = E(rng.choice(["2654435761", "40503", "3"]) if ty == "u32" else rng.choice(["-1640531535", "40503", "-3"]), ty, typed=False, lit=True)
        return E(f"{recv}.{m}({b.code})", ty, P_PRIMARY, SATURATED)

    def compare(self, depth: int) -> E:
        rng = self.rng
        ty = self.T if self.chance(0.7) else rng.choice(["f32", "f64", "i32", "u32"])
        op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
        if self.chance(0.08) and depth > 0:
            a, b = self.boolean(depth - 1), self.boolean(depth - 1)
            return E(f"{wrap(a, P_CMP + 1)} {rng.choice(['==', '!='])} {wrap(b, P_CMP + 1)}", "bool", P_CMP)
        if ty in FLOATS and self.chance(0.1):
            a = self.leaf(ty, LIMIT)
            return E(f"{operand_cmp(a)} {rng.choice(['!=', '=='])} {operand_cmp(a)}", "bool", P_CMP)
        a = self.expr(ty, depth, SATURATED, typed=True)
        b = self.expr(ty, depth, SATURATED)
        if self.chance(0.5):
            a, b = b, a
        return E(f"{operand_cmp(a)} {op} {operand_cmp(b)}", "bool", P_CMP)

    def boolean(self, depth: int) -> E:
        rng = self.rng
        if depth <= 0 or self.chance(0.4):
            bv = [v for v in self.vars if v.ty == "bool"]
            if bv and self.chance(0.4):
                v = self.pick_var("bool", bv)
                return E(v.name, "bool")
            return self.compare(max(depth - 1, 0))
        kind = rng.choices(["and", "or", "not"], weights=[4, 4, 2])[0]
        if kind == "not":
            a = self.boolean(depth - 1)
            return E(f"!{wrap(a, P_PRIMARY)}", "bool", P_UNARY)
        a, b = self.boolean(depth - 1), self.boolean(depth - 1)
        if kind == "and":
            return E(f"{wrap(a, P_AND)} && {wrap(b, P_AND + 1)}", "bool", P_AND)
        return E(f"{wrap(a, P_OR)} || {wrap(b, P_OR + 1)}", "bool", P_OR)

    # ---- statements --------------------------------------------------------------------------

    def declare_array(self) -> None:
        ty = self.T if self.chance(0.85) else self.rng.choice(FLOATS + INTS)
        n = self.rng.randint(2, 6)
        if ty in FLOATS:
            vals = [self.float_literal(ty).code if self.chance(0.8) else self.rng.choice(["0.0", "1.0", "-1.0"]) for _ in range(n)]
            # suffixes in an array must agree with its type; keep them (they are `ty`)
            bound = 0
        else:
            lo = -4 if ty == "i32" else 0
            vals = [str(self.rng.randint(lo, 4)) for _ in range(n)]
            bound = 4
        name = self.fresh("C")
        if self.chance(0.8):
            self.emit(f"const {name}: [{ty}; {n}] = [{', '.join(vals)}];")
        else:
            name = name.lower()
            self.emit(f"let {name}: [{ty}; {n}] = [{', '.join(vals)}];")
        self.arrays.append(Arr(name, ty, vals, bound, 0, len(self.lines)))

    def declare_const_bool(self) -> None:
        """`const B: bool = ...;`: known at compile time, so `if B { .. }` vanishes."""
        name = self.fresh("B")
        value = self.rng.choice(["true", "false", "!true", "1 < 2", "2.0 <= 1.5"] + (["N > 2", "N % 2 == 0"] if self.const_n else []))
        self.emit(f"const {name}: bool = {value};")
        self.vars.append(Var(name, "bool", 0, 0, len(self.lines)))

    def let_stmt(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.65:
            ty = self.T
        elif r < 0.8:
            ty = "bool"
        elif self.T in FLOATS:
            ty = rng.choice([self.other_float(self.T), "i32", "u32"])
        else:
            ty = rng.choice(["f32", "f64", "i32" if self.T == "u32" else "u32"])
        budget = 200_000 if ty in INTS else LIMIT
        if ty in FLOATS and ty != self.T and self.chance(0.6):
            e = self.convert(self.expr(self.T, rng.randint(1, 2), budget, typed=True), ty)
        elif ty in INTS and ty != self.T and self.chance(0.6):
            src = self.expr(self.T, rng.randint(1, 2), budget, typed=True)
            e = self.convert(src, ty, budget)
        elif ty == self.T and self.chance(0.08):
            # a block as a value
            t = self.fresh("t")
            inner = self.expr(ty, 1, budget // 4, typed=True)
            self.vars.append(Var(t, ty, inner.bound, 1))
            body = self.expr(ty, 1, budget // 2, typed=True)
            self.vars.pop()
            if ty in INTS:
                comb = f"{t}.max({body.code})"
                bound = max(inner.bound, body.bound)
            else:
                comb = f"{t} * {wrap(body, P_MUL + 1)}"
                bound = 0
            e = E(f"{{ let {t} = {inner.code}; {comb} }}", ty, P_PRIMARY, bound)
        elif ty != "bool" and self.chance(0.3):
            e = self.untyped_literal(ty)
        else:
            e = self.expr(ty, rng.randint(1, 3), budget)
        name = self.fresh("c" if ty == "bool" else "x")
        if not e.typed and self.chance(0.75):
            return self.literal_let(name, e, ty)
        olds = [v for v in self.vars if v.ty == ty and ty in FLOATS and not v.name.startswith("acc")]
        if olds and self.chance(0.12):
            # `let x = x * e;`: shadows x, reading the old binding
            old = self.rng.choice(olds)
            name = old.name
            e = E(f"{old.name} {rng.choice(['*', '+', '-'])} {wrap(e, P_MUL + 1)}", ty, P_ADD)
            self.vars.remove(old)
        annotate = (not e.typed) or self.chance(0.15 if ty != "bool" else 0.35)
        ann = f": {ty}" if annotate else ""
        self.emit(f"let {name}{ann} = {e.code};")
        var = Var(name, ty, e.bound, 0, len(self.lines))
        self.vars.append(var)
        # Sometimes modify it in place.
        if ty in FLOATS and self.chance(0.15):
            self.lines[-1] = self.lines[-1].replace(f"let {name}", f"let mut {name}", 1)
            op = rng.choice(["+=", "-=", "*=", "/="])
            rhs = self.float_expr(ty, 1)
            self.emit(f"{name} {op} {rhs.code};")
            var.defined_at = len(self.lines)
        elif ty == "i32" and self.chance(0.1) and var.bound * 3 <= LIMIT:
            self.lines[-1] = self.lines[-1].replace(f"let {name}", f"let mut {name}", 1)
            self.emit(f"{name} *= 3;")
            var.bound *= 3
            var.defined_at = len(self.lines)

    def untyped_literal(self, ty: str) -> E:
        """An unsuffixed literal expression of type `ty`, which its context types."""
        rng = self.rng
        if ty in FLOATS:
            text = rng.choice(["0.5", "0.25", "2.0", "1.5", "0.1", "0.75", "3.0", "1e-3", "2.5e-1", "1.00000001",
                               "1.00000005960464477539062500000001", "16777217.0"])
            e = E(text, ty, typed=False, lit=True)
            if self.chance(0.2):
                e = E(f"-{text}", ty, P_UNARY, typed=False, lit=True)
            if self.chance(0.15):
                b = E(rng.choice(["0.5", "2.0", "0.1", "-1.0"]), ty, typed=False, lit=True)
                e = E(f"if {self.boolean(1).code} {{ {e.code} }} else {{ {b.code} }}", ty, P_IF, typed=False)
            return e
        v = rng.randint(-9 if ty == "i32" else 0, 9)
        return E(str(v), ty, P_UNARY if v < 0 else P_PRIMARY, abs(v), typed=False, lit=True)

    def literal_let(self, name: str, e: E, ty: str) -> None:
        """`let x = <unsuffixed literal>;`: rustc infers x's type from a later use. Sometimes x is
        first used under `as` (which does not fix its type), then comes the use that does."""
        rng = self.rng
        self.emit(f"let {name} = {e.code};")
        fallback = ty in ("f64", "i32")  # rustc's type for a literal nothing constrains
        cast_only = fallback and self.chance(0.25)
        if cast_only or self.chance(0.5):
            u = rng.choice([t for t in FLOATS + INTS if t != ty] + [ty])
            if u in FLOATS:
                bound = 0
            elif ty in FLOATS:
                bound = DATA_BOUND  # the float literals here are small; `as` truncates them
            elif ty == "i32" and u == "u32":
                bound = SATURATED  # a negative i32 wraps
            else:
                bound = e.bound
            y = self.fresh("x")
            self.emit(f"let {y} = {name} as {u};")
            self.vars.append(Var(y, u, bound, 0, len(self.lines)))
        if cast_only:
            return  # x keeps its fallback type, as rustc gives it
        z = self.fresh("x")
        leaf = self.leaf(ty, LIMIT // 2 if ty in INTS else LIMIT)
        zbound = max(leaf.bound, e.bound)
        forms = ["typed_let", "ufcs", "method_arg"]
        if ty in FLOATS or leaf.bound + e.bound <= LIMIT:
            forms += ["binop"] * 3
        form = rng.choice(forms)
        if form == "typed_let":
            self.emit(f"let {z}: {ty} = {name};")
            zbound = e.bound
        elif form == "ufcs":
            m = rng.choice(["min", "max"] + (["mul_add"] if ty in FLOATS else []))
            if m == "mul_add":
                self.emit(f"let {z} = {ty}::mul_add({name}, {leaf.code}, {self.leaf(ty, LIMIT).code});")
            else:
                self.emit(f"let {z} = {ty}::{m}({name}, {leaf.code});")
        elif form == "method_arg":
            self.emit(f"let {z} = {wrap(leaf, P_PRIMARY)}.{rng.choice(['min', 'max'])}({name});")
        else:
            op = rng.choice(["+", "-", "*"] if ty in FLOATS else ["+"])
            if self.chance(0.5):
                self.emit(f"let {z} = {wrap(leaf, P_ADD)} {op} {name};")
            else:
                self.emit(f"let {z} = {name} {op} {wrap(leaf, P_MUL + 1)};")
            zbound = leaf.bound + e.bound
        self.vars.append(Var(name, ty, e.bound, 0, len(self.lines)))
        self.vars.append(Var(z, ty, zbound, 0, len(self.lines)))

    def loop_range(self, tap_sign: int, off: int) -> tuple[str, list[int], int, int]:
        """A range for `k` such that tap `tap_sign * k + off` lies in the radius for every k."""
        R, rng = self.R, self.rng
        # tap_sign * k + off in [-R, R]  <=>  k in [-R - off, R - off] (sign +1) or [off - R, off + R] (sign -1)
        lo_ok, hi_ok = (-R - off, R - off) if tap_sign > 0 else (off - R, off + R)
        lo_ok, hi_ok = max(lo_ok, -R), min(hi_ok, R)
        if rng.random() < 0.4:
            lo, hi = lo_ok, hi_ok  # the whole window
        else:
            lo = rng.randint(lo_ok, hi_ok)
            hi = rng.randint(lo, hi_ok)
        if rng.random() < 0.15 and lo_ok <= 0:
            lo = max(lo_ok, 0)
            hi = max(hi, lo)
        lo_s, hi_s, hi1_s = str(lo), str(hi), str(hi + 1)
        n = self.const_n
        if n is not None and lo_ok <= -n and n <= hi_ok and rng.random() < 0.6:
            lo, hi = -n, n
            lo_s, hi_s, hi1_s = "-N", "N", "N + 1"
        form = rng.choices(["incl", "excl", "rev", "step", "revstep", "steprev"], weights=[40, 20, 12, 14, 7, 7])[0]
        ks = list(range(lo, hi + 1))
        if form == "incl":
            text = f"{lo_s}..={hi_s}"
        elif form == "excl":
            text = f"{lo_s}..{hi1_s}"
        elif form == "rev":
            text = f"({lo_s}..={hi_s}).rev()"
            ks = ks[::-1]
        elif form == "step":
            s = rng.choice([2, 3])
            text = f"({lo_s}..={hi_s}).step_by({s})"
            ks = ks[::s]
        elif form == "revstep":
            s = rng.choice([2, 3])
            text = f"({lo_s}..{hi1_s}).rev().step_by({s})"
            ks = ks[::-1][::s]
        else:
            text = f"({lo_s}..{hi1_s}).step_by(2).rev()"
            ks = ks[::2][::-1]
        return text, ks, lo, hi

    def loop(self) -> None:
        rng, T = self.rng, self.T
        acc = self.fresh("acc")
        flt = T in FLOATS
        kind = rng.choices(
            ["sum", "max", "ifmax", "absdiff", "symmetric", "decay", "parity", "fma", "scaled", "nested", "local"],
            weights=[26, 9, 7, 7, 7, 7 if flt else 0, 9, 7 if flt else 0, 9, 6, 8],
        )[0]
        if kind == "nested":
            return self.nested_loop(acc)
        tap_sign, off = 1, 0
        if kind == "absdiff":
            pass  # taps k and k + 1: the range keeps k + 1 inside the radius
        elif kind == "symmetric":
            tap_sign = 1
        elif rng.random() < 0.2:
            off = rng.randint(-min(2, self.R), min(2, self.R))
        elif rng.random() < 0.1:
            tap_sign = -1
        if kind == "symmetric":
            m = rng.randint(0, self.R)
            text, ks, lo, hi = (f"0..={m}", list(range(0, m + 1)), 0, m)
            if rng.random() < 0.3:
                text, ks = f"1..={m}" if m >= 1 else "0..=0", list(range(1, m + 1)) if m >= 1 else [0]
        elif kind == "absdiff":
            text, ks, lo, hi = self.loop_range(1, 1)
        else:
            text, ks, lo, hi = self.loop_range(tap_sign, off)
        n = max(len(ks), 1)

        def tapk(extra: int = 0) -> str:
            o = off + extra
            if tap_sign > 0:
                return f"w[{fmt_off('k', o)}]"
            return f"w[{o} - k]" if o != 0 else "w[-k]"

        body: list[str] = []
        init: str
        bound = 0
        if kind in ("max", "ifmax"):
            m = rng.choice(["max", "min"])
            if flt:
                init = rng.choice([f"{T}::{'NEG_INFINITY' if m == 'max' else 'INFINITY'}", f"{T}::{'MIN' if m == 'max' else 'MAX'}", f"w[{ks[0] * tap_sign + off}]"])
            else:
                init = rng.choice([f"{T}::{'MIN' if m == 'max' else 'MAX'}", f"w[{ks[0] * tap_sign + off}]"])
            # The loop runs at least once, and a min or max with a tap leaves a value in the data's range.
            bound = DATA_BOUND
            if kind == "max":
                if rng.random() < 0.3:
                    body.append(f"{acc} = {T}::{m}({acc}, {tapk()});")
                else:
                    body.append(f"{acc} = {acc}.{m}({tapk()});")
            else:
                cmp = ">" if m == "max" else "<"
                t = tapk()
                body.append(f"if {t} {cmp} {acc} {{")
                body.append(f"    {acc} = {t};")
                body.append("}")
            self.emit(f"let mut {acc}{': ' + T if rng.random() < 0.3 else ''} = {init};")
            self.var_after_loop = Var(acc, T, bound)
        else:
            zero = "0.0" if flt else "0"
            init_e = None
            if rng.random() < 0.25:
                init_e = self.expr(T, 1, 100_000, typed=True)
            if init_e is not None:
                self.emit(f"let mut {acc} = {init_e.code};")
                bound = init_e.bound
            else:
                ann = f": {T}" if rng.random() < 0.3 else ""
                self.emit(f"let mut {acc}{ann} = {zero};")
                bound = 0
            per = DATA_BOUND
            if kind == "sum":
                coef = self.loop_coef(ks, lo)
                if coef is None:
                    body.append(f"{acc} += {tapk()};")
                else:
                    code, cb = coef
                    body.append(f"{acc} += {code} * {tapk()};")
                    per = DATA_BOUND * cb
                if not flt and rng.random() < 0.2 and T == "i32":
                    body[-1] = body[-1].replace("+=", "-=")
            elif kind == "scaled":
                if flt:
                    body.append(f"{acc} += {tapk()} * (k as {T}) * {self.float_literal(T, False).code};")
                else:
                    if T == "i32":
                        kmax = max(abs(k) for k in ks) if ks else 0
                        body.append(f"{acc} += {tapk()} * k;")
                        per = DATA_BOUND * max(kmax, 1)
                    else:
                        body.append(f"{acc} += {tapk()}.min({rng.randint(100, 900)});")
            elif kind == "absdiff":
                if flt:
                    body.append(f"{acc} += ({tapk(1)} - {tapk()}).abs();")
                elif T == "i32":
                    body.append(f"{acc} += ({tapk(1)} - {tapk()}).abs();")
                    per = 2 * DATA_BOUND
                else:
                    a, b = tapk(1), tapk()
                    body.append(f"{acc} += {a}.max({b}) - {a}.min({b});")
            elif kind == "symmetric":
                body.append(f"{acc} += w[k] + w[-k];")
                per = 2 * DATA_BOUND
            elif kind == "decay":
                wt = self.fresh("wt")
                decay = rng.choice(["0.5", "0.9", "0.75", "-0.5", "1.125"])
                self.emit(f"let mut {wt}: {T} = 1.0;")
                body.append(f"{acc} += {wt} * {tapk()};")
                body.append(f"{wt} *= {decay};")
            elif kind == "local":
                d = self.fresh("d")
                t0 = tapk()
                centre = self.tap().code
                if flt:
                    body.append(f"let {d} = {t0} - {centre};")
                    body.append(rng.choice([f"{acc} += {d} * {d};", f"{acc} += {d}.abs();", f"{acc} = {d}.max({acc});"]))
                elif T == "i32":
                    body.append(f"let {d} = ({t0} - {centre}).abs();")
                    body.append(f"{acc} += {d};")
                    per = 2 * DATA_BOUND
                else:
                    body.append(f"let {d} = {t0}.max({centre}) - {t0}.min({centre});")
                    body.append(f"{acc} += {d};")
            elif kind == "fma":
                c = self.float_expr(T, 1)
                if rng.random() < 0.5:
                    body.append(f"{acc} = {tapk()}.mul_add({c.code}, {acc});")
                else:
                    body.append(f"{acc} = {T}::mul_add({tapk()}, {c.code}, {acc});")
            elif kind == "parity":
                cond = rng.choice(["k % 2 == 0", "k < 0", "k >= 1", "k % 3 != 1", "k == 0"])
                t1 = tapk()
                if flt:
                    other = rng.choice([f"{acc} -= {t1};", f"{acc} += {self.float_literal(T, False).code} * {t1};", None])
                elif T == "i32":
                    other = rng.choice([f"{acc} -= {t1};", f"{acc} += 2 * {t1};", None])
                    per = 2 * DATA_BOUND
                else:
                    other = rng.choice([f"{acc} += {t1} * 2;", f"{acc} = {acc}.max({t1});", None])
                    per = 2 * DATA_BOUND
                body.append(f"if {cond} {{")
                body.append(f"    {acc} += {t1};")
                if other is not None:
                    body.append("} else {")
                    body.append(f"    {other}")
                body.append("}")
            bound = bound + per * n
            if not flt and bound > LIMIT:
                raise Retry()
            self.var_after_loop = Var(acc, T, bound)
        self.emit(f"for k in {text} {{")
        for line in body:
            self.emit(line, 2)
        self.emit("}")
        self.var_after_loop.defined_at = len(self.lines)
        self.vars.append(self.var_after_loop)

    def nested_loop(self, acc: str) -> None:
        """`for i { for j { acc += w[i + j] } }`: the taps of both indices together stay in the radius."""
        rng, T, R = self.rng, self.T, self.R
        m = rng.randint(0, R // 2)
        a, b = rng.randint(-m, 0), rng.randint(0, m)
        q = R - m
        c, d = rng.randint(-q, 0), rng.randint(0, q)
        zero = "0.0" if T in FLOATS else "0"
        self.emit(f"let mut {acc} = {zero};")
        self.emit(f"for i in {a}..={b} {{")
        inner = f"({c}..={d}).rev()" if rng.random() < 0.3 else f"{c}..={d}"
        self.emit(f"for j in {inner} {{", 2)
        if T in FLOATS and rng.random() < 0.5:
            self.emit(f"{acc} += w[i + j] * w[j];", 3)
        elif T == "i32" and rng.random() < 0.3:
            self.emit(f"{acc} -= w[i + j];", 3)
        else:
            self.emit(f"{acc} += w[i + j];", 3)
        self.emit("}", 2)
        self.emit("}")
        bound = DATA_BOUND * (b - a + 1) * (d - c + 1)
        if T in INTS and bound > LIMIT:
            raise Retry()
        self.vars.append(Var(acc, T, bound, 0, len(self.lines)))

    def loop_coef(self, ks: list[int], lo: int) -> tuple[str, int] | None:
        """A coefficient for `acc += coef * w[k]`: (code, bound), or None for none."""
        rng, T = self.rng, self.T
        r = rng.random()
        if r < 0.3:
            return None
        idx = "k" if lo == 0 else f"({fmt_off('k', -lo)})"
        fits = [(name, n) for name, ty, n in self.array_params if ty == T and ks and max(ks) - lo < n]
        if fits and r < 0.55:
            name, _ = rng.choice(fits)
            return f"{name}[{idx} as usize]", 0 if T in FLOATS else 9
        if r < 0.55 and ks and max(ks) - lo + 1 <= 12:
            n = max(ks) - lo + 1
            name = self.fresh("W")
            if T in FLOATS:
                vals = [self.float_literal(T).code for _ in range(n)]
                bound = 0
            else:
                vals = [str(rng.randint(-3 if T == "i32" else 0, 3)) for _ in range(n)]
                bound = 3
            self.emit(f"const {name}: [{T}; {n}] = [{', '.join(vals)}];")
            return f"{name}[{idx} as usize]", bound
        if T in FLOATS:
            p = [v for v in self.params if v.ty == T]
            if p and rng.random() < 0.5:
                v = self.pick_var(T, p)
                return v.name, 0
            e = self.float_literal(T)
            return wrap(e, P_MUL), 0
        c = rng.choice([2, 3] + ([-1, -2] if T == "i32" else []))
        return (f"({c})" if c < 0 else str(c)), abs(c)

    def if_stmt(self) -> None:
        """`if cond { x op= e; } [else { x op= e; }]` on a fresh mutable variable."""
        T = self.T
        name = self.fresh("y")
        base = self.expr(T, 1, 10_000, typed=True)
        self.emit(f"let mut {name} = {base.code};")
        cond = self.boolean(1)
        bound = base.bound
        if T in FLOATS:
            a, b = self.float_expr(T, 1), self.float_expr(T, 1)
            op1, op2 = self.rng.choice(["+=", "-=", "*=", "="]), self.rng.choice(["+=", "-=", "*="])
        else:
            a, b = self.int_expr(T, 1, 10_000), self.int_expr(T, 1, 10_000)
            op1 = self.rng.choice(["+=", "=", "-="] if T == "i32" else ["+=", "="])
            op2 = "+="
            bound = base.bound + max(a.bound, b.bound)
        self.emit(f"if {cond.code} {{")
        if self.chance(0.3) and op1 != "=":
            t = self.fresh("t")
            self.emit(f"let {t} = {self.expr(T, 1, 10_000, typed=True).code if T in INTS else a.code};", 2)
            if T in INTS:
                bound += 10_000
            a = E(t, T)
        self.emit(f"{name} {op1} {a.code};", 2)
        if self.chance(0.6):
            self.emit("} else {")
            self.emit(f"{name} {op2} {b.code};", 2)
        self.emit("}")
        self.vars.append(Var(name, T, bound, 0, len(self.lines)))

    def result(self) -> str:
        """The tail expression: uses every value not used yet, and at least one tap."""
        T = self.T
        terms: list[E] = []

        def unread(v: Var | Arr) -> bool:
            return not any(re.search(rf"\b{v.name}\b", line) for line in self.lines[v.defined_at:])

        for v in [v for v in self.params + self.vars if unread(v)]:
            v.uses += 1
            terms.append(self.convert(E(v.name, v.ty, P_PRIMARY, v.bound), T, 100_000 if T in INTS else LIMIT))
        if self.const_n is not None and not any(re.search(r"\bN\b", line) for line in self.lines[1:]):
            terms.append(self.tap())
            terms[-1].code = "w[N]"
        for a in self.arrays:
            if unread(a):
                e = E(f"{a.name}[{self.rng.randrange(len(a.values))}]", a.ty, P_PRIMARY, a.bound)
                terms.append(self.convert(e, T, 100_000 if T in INTS else LIMIT))
        reads_window = any("w[" in line for line in self.lines) or any("w[" in t.code for t in terms)
        if not reads_window or self.chance(0.3) or not terms:
            terms.append(self.tap())
        out = terms[0]
        for t in terms[1:]:
            if T in FLOATS:
                op = self.rng.choice(["+", "-", "*", "+", "max", "min"])
            elif T == "i32":
                op = self.rng.choice(["+", "-", "max", "min"])
            else:
                op = self.rng.choice(["+", "max", "min"])
            if T in INTS and op in "+-" and out.bound + t.bound > LIMIT:
                op = "max"
            if op in ("max", "min"):
                out = E(f"{wrap(out, P_PRIMARY)}.{op}({t.code})", T, P_PRIMARY, max(out.bound, t.bound))
            else:
                prec = P_MUL if op == "*" else P_ADD
                out = E(f"{wrap(out, prec)} {op} {wrap(t, prec + 1)}", T, prec, out.bound + t.bound)
        if not out.typed:
            out = E(f"{out.code} + w[0]", T, P_ADD)
        return out.code

    def generate(self) -> str:
        rng = self.rng
        n = rng.choices([1, 2, 3, 4, 5, 6], weights=[10, 20, 25, 20, 15, 10])[0]
        if rng.random() < 0.3:
            self.declare_array()
        if rng.random() < 0.12:
            self.const_n = rng.randint(1, self.R)
            self.emit(f"const N: i32 = {self.const_n};")
        if rng.random() < 0.15:
            self.declare_const_bool()
        for _ in range(n):
            kind = rng.choices(["let", "loop", "if"], weights=[55, 32, 13])[0]
            if kind == "let":
                self.let_stmt()
            elif kind == "loop":
                self.loop()
            else:
                self.if_stmt()
            if len(self.lines) > 30:
                break
        tail = self.result()
        params = "".join(f", {p}" for p in self.signature)
        attr = f"#[stencil(radius = {self.R}, warp = {self.warp}, outputs_per_thread = {self.outputs}, boundary = {self.boundary})]"
        out = [attr, f"pub fn {self.name}(w: Window<{self.T}>{params}) -> {self.T} {{"]
        out += self.lines
        out.append(f"    {tail}")
        out.append("}")
        return "\n".join(out)


class Retry(Exception):
    pass


def radius(rng: random.Random) -> int:
    bucket = rng.choices(["tiny", "small", "medium", "large", "max"], weights=[40, 27, 17, 10, 6])[0]
    return {
        "tiny": lambda: rng.randint(1, 3),
        "small": lambda: rng.randint(4, 8),
        "medium": lambda: rng.randint(9, 20),
        "large": lambda: rng.randint(21, 39),
        "max": lambda: 40,
    }[bucket]()


def generate() -> str:
    rng = random.Random(SEED)
    fns, visits = [], []
    for i in range(COUNT):
        r = radius(rng)
        elem = rng.choices(["f32", "f64", "i32", "u32"], weights=[35, 35, 15, 15])[0]
        sub_seed = rng.getrandbits(64)
        for attempt in range(100):
            s = Stencil(random.Random(sub_seed + attempt), i, r, elem)
            try:
                text = s.generate()
            except Retry:
                continue
            if len(s.lines) <= 40:
                break
        else:
            raise RuntimeError(f"could not generate stencil {i}")
        fns.append(text)
        params = "".join(f"{v}, " for v in s.param_values)
        visits.append(f"    v.visit(&{s.name}::KERNEL, ({params.rstrip(' ') if len(s.param_values) == 1 else params.rstrip(', ')}));")
    half_fns, half_visit = generate_half()
    header = f"""// @generated by tests/gen/random_stencils.py (seed {SEED:#x}): do not edit by hand.
// Regenerate with `python3 tests/gen/random_stencils.py`; check with `--check`.

//! {COUNT} random stencils over every element type, radius, warp, outputs per thread and boundary,
//! with bodies drawn from the whole body language, and {HALF_COUNT} over f16 and bf16 (seed
//! {HALF_SEED:#x}). `tests/random.rs` checks each one's emulated warp program against the
//! function itself.
// A random 16-bit body may leave a parameter or a `let` unread.
#![allow(unused_parens, unused_variables, clippy::all)]

use half::{{bf16, f16}};
use rc::prelude::*;
"""
    body = "\n\n".join(fns)
    visit = "/// Visits every stencil above, with the parameters it is checked with.\npub fn visit_all(v: &mut impl super::Visit) {\n" + "\n".join(visits) + "\n}\n"
    return header + "\n" + body + "\n\n" + visit + "\n" + half_fns + "\n\n" + half_visit


HALF_SEED = 0x16B1_7000
HALF_COUNT = 40
HALF_CONSTS = ("ONE", "ZERO", "NEG_ONE", "MAX", "MIN", "EPSILON", "MIN_POSITIVE", "PI", "E", "SQRT_2", "LN_2")


class HalfStencil:
    """A random stencil over `half::f16` or `half::bf16`: the half crate's operators, `min`,
    `max`, comparisons, its constants, and f32 only through `to_f32()` / `from_f32()` (Rust has
    no 16-bit literals and no `as` for them; the half crate has no `abs`, `sqrt` or `mul_add`)."""

    def __init__(self, rng: random.Random, index: int):
        self.rng = rng
        self.T = rng.choice(["f16", "bf16"])
        self.R = rng.choice([1, 1, 2, 3, 4, 6, 8, 12])
        self.warp = rng.choice([4, 8, 16, 32, 32])
        self.outputs = rng.choice([1, 2, 4, 8])
        self.boundary = rng.choice(["valid", "zero", "clamp", "wrap"])
        self.distribution = None
        if self.outputs > 1 and rng.random() < 0.4:
            v = rng.choice([v for v in (2, 4, 8) if self.outputs % v == 0])
            self.distribution = f"{rng.choice(['granule', 'window'])}({v})"
        self.name = f"random_half_{index:03}"
        self.lines: list[str] = []
        self.vars: list[str] = []
        self.signature: list[str] = []
        self.param_values: list[str] = []
        self.scalars: list[str] = []
        self.floats: list[str] = []
        self.array: tuple[str, int] | None = None
        for i in range(rng.choice([0, 1, 1, 2])):
            name = f"p{i}"
            self.signature.append(f"{name}: {self.T}")
            self.param_values.append(f"{self.T}::from_f32({rng.choice(FLOAT_PARAM_VALUES)})")
            self.scalars.append(name)
        if rng.random() < 0.3:
            self.signature.append("g: f32")
            self.param_values.append(rng.choice(FLOAT_PARAM_VALUES))
            self.floats.append("g")
        if rng.random() < 0.25:
            n = rng.randint(2, 4)
            self.signature.append(f"h: [{self.T}; {n}]")
            values = ", ".join(f"{self.T}::from_f32({rng.choice(FLOAT_PARAM_VALUES)})" for _ in range(n))
            self.param_values.append(f"[{values}]")
            self.array = ("h", n)
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def tap(self) -> str:
        return f"w[{self.rng.randint(-self.R, self.R)}]"

    def constant(self) -> str:
        rng = self.rng
        if rng.random() < 0.5:
            return f"{self.T}::{rng.choice(HALF_CONSTS)}"
        method = rng.choice(["from_f32", "from_f32", "from_f32_const"])
        return f"{self.T}::{method}({rng.choice(FLOAT_PARAM_VALUES + ['0.1', '-3.7', '1e-3', '100.0'])})"

    def leaf(self) -> str:
        rng = self.rng
        kinds = ["tap", "tap", "tap", "const"] + ["var"] * bool(self.vars) + ["param"] * bool(self.scalars) + ["array"] * bool(self.array)
        kind = rng.choice(kinds)
        if kind == "tap":
            return self.tap()
        if kind == "const":
            return self.constant()
        if kind == "var":
            return rng.choice(self.vars)
        if kind == "param":
            return rng.choice(self.scalars)
        name, n = self.array
        return f"{name}[{rng.randrange(n)}]"

    def f32_expr(self, depth: int) -> str:
        rng = self.rng
        kind = rng.choice(["widen", "widen", "lit", "op", "method"] + ["param"] * bool(self.floats))
        if depth <= 0 or kind == "widen":
            return f"{self.expr(depth - 1, primary=True)}.to_f32()"
        if kind == "lit":
            return rng.choice(["0.5", "2.0", "-1.5", "0.1"]) + "f32"
        if kind == "param":
            return rng.choice(self.floats)
        if kind == "method":
            return f"({self.f32_expr(depth - 1)}).{rng.choice(['abs', 'sqrt'])}()"
        return f"({self.f32_expr(depth - 1)} {rng.choice(['+', '-', '*', '/'])} {self.f32_expr(depth - 1)})"

    def expr(self, depth: int, primary: bool = False) -> str:
        rng = self.rng
        if depth <= 0:
            return self.leaf()
        kind = rng.choices(["leaf", "bin", "minmax", "neg", "narrow", "if"], weights=[25, 35, 12, 6, 12, 10])[0]
        if kind == "leaf":
            return self.leaf()
        if kind == "bin":
            e = f"{self.expr(depth - 1, True)} {rng.choice(['+', '-', '*', '/'])} {self.expr(depth - 1, True)}"
        elif kind == "minmax":
            return f"{self.expr(depth - 1, True)}.{rng.choice(['min', 'max'])}({self.expr(depth - 1)})"
        elif kind == "neg":
            operand = self.expr(depth - 1, True)
            return f"-({operand})" if operand.startswith("-") else f"-{operand}"
        elif kind == "narrow":
            return f"{self.T}::from_f32({self.f32_expr(depth - 1)})"
        else:
            cmp = rng.choice(["<", "<=", ">", ">=", "==", "!="])
            e = f"if {self.expr(depth - 1, True)} {cmp} {self.expr(depth - 1, True)} {{ {self.expr(depth - 1)} }} else {{ {self.expr(depth - 1)} }}"
        return f"({e})" if primary else e

    def generate(self) -> str:
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.35:
                acc, a, b = self.fresh("s"), rng.randint(-self.R, 0), rng.randint(0, self.R)
                op = rng.choice(["+=", "-=", "*="])
                start = "ZERO" if op != "*=" else "ONE"
                self.lines.append(f"    let mut {acc} = {self.T}::{start};")
                self.lines.append(f"    for k in {a}..={b} {{")
                term = "w[k]" if rng.random() < 0.6 else f"w[k] * {self.leaf()}"
                self.lines.append(f"        {acc} {op} {term};")
                self.lines.append("    }")
                self.vars.append(acc)
            else:
                name = self.fresh("x")
                self.lines.append(f"    let {name} = {self.expr(rng.randint(1, 3))};")
                self.vars.append(name)
        tail = self.expr(2)
        for v in self.vars[-2:]:
            tail = f"({tail}) {rng.choice(['+', '-', '*'])} {v}"
        params = "".join(f", {p}" for p in self.signature)
        distribution = f", distribution = {self.distribution}" if self.distribution else ""
        attr = f"#[stencil(radius = {self.R}, warp = {self.warp}, outputs_per_thread = {self.outputs}, boundary = {self.boundary}{distribution})]"
        return "\n".join([attr, f"pub fn {self.name}(w: Window<{self.T}>{params}) -> {self.T} {{"] + self.lines + [f"    {tail}", "}"])


def generate_half() -> tuple[str, str]:
    """The 16-bit stencils and their `visit_half`, drawn apart from the others (their own seed),
    so that the other stencils stay what they were."""
    rng = random.Random(HALF_SEED)
    fns, visits = [], []
    for i in range(HALF_COUNT):
        s = HalfStencil(random.Random(rng.getrandbits(64)), i)
        fns.append(s.generate())
        values = ", ".join(s.param_values)
        visits.append(f"    v.visit(&{s.name}::KERNEL, ({values}{',' if len(s.param_values) == 1 else ''}));")
    visit = (
        "/// Visits every 16-bit stencil above, with the parameters it is checked with.\n"
        "pub fn visit_half(v: &mut impl super::VisitHalf) {\n" + "\n".join(visits) + "\n}\n"
    )
    return "\n\n".join(fns), visit


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file differs from what would be written")
    args = ap.parse_args()
    text = generate()
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python3 tests/gen/random_stencils.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
