//! The boundary rule on one coordinate, printed here once for every place that applies it: a
//! load's index and a lane's vector along x (`read_global`, `rule_vector` in [`super::memory`]),
//! the tile's input rows along y and z (`input_row_source` in [`super::grid`]), the ring's
//! fetches along x, y and z ([`super::ring`]), and the edge row or plane that fused steps copy
//! from ([`super::time_steps`]).
//!
//! A coordinate `c` (s64, possibly outside `0..n`) is, as [`Boundary::source`] states it for
//! the emulator and the CPU reference:
//! - under `valid` and `zero`, read where it lies inside, `c < n` as unsigned (a `c` below zero
//!   wraps around to a large value and fails too); the printer gives that predicate, and the
//!   caller guards the read with it;
//! - under `clamp`, clamped to `0..=last` (`last` is `n - 1`, or a vector's last start);
//! - under `wrap`, taken modulo `n` into `0..n`.
//!
//! What fused steps do to the values outside the input after each step (`step_rule`,
//! `row_rule`, the masks of `edges_x`) selects among registers by a lane's or a row's place
//! rather than moving a coordinate, and stays with them.

use super::Printer;
use crate::pattern::Boundary;

/// Where `clamp` puts a coordinate past its end: each caller has it in its own form, and the
/// PTX keeps each form.
#[derive(Clone, Copy, Debug)]
pub(super) enum Last<'a> {
    /// A register holding it: [`super::N_MINUS_1`] along x, or one computed once for a loop.
    In(&'a str),
    /// `n - span` in a fresh register, computed where `clamp` needs it: 1 for the last
    /// element, a vector's width for the last vector's start.
    Less(u32),
}

impl Printer<'_> {
    /// Coordinate `c` (s64, possibly outside `0..n`) under the boundary rule, in place. Under
    /// `valid` and `zero` the predicate that it is inside, and-ed with `guard` in the comparison
    /// itself (`setp.lt.and.u64`: where the callers chain dimensions, one instruction each);
    /// under the other rules every `c` is read somewhere, so `guard` is returned as it is. A
    /// guard and-ed afterwards, with `and.pred`, is [`Printer::both`].
    pub(super) fn rule_coordinate(&mut self, c: &str, n: &str, last: Last, guard: Option<String>) -> Option<String> {
        match self.program.pattern.boundary() {
            Boundary::Valid | Boundary::Zero => Some(self.coordinate_inside(c, n, guard.as_deref())),
            Boundary::Clamp => {
                self.clamp_coordinate(c, c, n, last);
                guard
            }
            Boundary::Wrap => {
                self.wrap_coordinate(c, n);
                guard
            }
        }
    }

    /// The predicate that `c` lies in `0..n` (`c < n` as unsigned), and-ed with `guard` in
    /// the comparison where there is one.
    pub(super) fn coordinate_inside(&mut self, c: &str, n: &str, guard: Option<&str>) -> String {
        let q = self.q();
        match guard {
            Some(prev) => self.line(&format!("setp.lt.and.u64 {q}, {c}, {n}, {prev};")),
            None => self.line(&format!("setp.lt.u64 {q}, {c}, {n};")),
        }
        q
    }

    /// `d` = `c` clamped to `0..=last` (`d` may be `c`); `n` gives `last` where it is
    /// [`Last::Less`].
    pub(super) fn clamp_coordinate(&mut self, d: &str, c: &str, n: &str, last: Last) {
        let last = match last {
            Last::In(last) => last.to_string(),
            Last::Less(span) => {
                let last = self.a();
                self.line(&format!("sub.s64 {last}, {n}, {span};"));
                last
            }
        };
        self.line(&format!("max.s64 {d}, {c}, 0;"));
        self.line(&format!("min.s64 {d}, {d}, {last};"));
    }

    /// `c` taken modulo `n` into `0..n`, in place: `rem` keeps the sign of `c`, so a negative
    /// remainder adds `n`.
    fn wrap_coordinate(&mut self, c: &str, n: &str) {
        let q = self.q();
        self.line(&format!("rem.s64 {c}, {c}, {n};"));
        self.line(&format!("setp.lt.s64 {q}, {c}, 0;"));
        self.line(&format!("@{q} add.s64 {c}, {c}, {n};"));
    }

    /// `a and b` of optional predicates (a fresh predicate where both are given).
    pub(super) fn both(&mut self, a: Option<String>, b: Option<String>) -> Option<String> {
        match (a, b) {
            (Some(a), Some(b)) => {
                let q = self.q();
                self.line(&format!("and.pred {q}, {a}, {b};"));
                Some(q)
            }
            (a, b) => a.or(b),
        }
    }
}
