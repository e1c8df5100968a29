//! What a tap that falls outside the input reads, one rule per stencil: the boundary a pattern
//! declares. Its own file, so that the geometry (grid shapes under a rule) and the pattern both
//! read it without reading each other.

use std::fmt;

use crate::scalar::Element;

/// What a tap that falls outside the input reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// Only outputs whose whole window lies inside the input: `n - 2r` outputs, output `i`
    /// centred on input `i + r` (numpy's `'valid'`).
    Valid,
    /// `n` outputs; taps outside the input read zero.
    Zero,
    /// `n` outputs; taps outside the input read the nearest edge element.
    Clamp,
    /// `n` outputs; taps outside the input wrap around (periodic signal).
    Wrap,
}

impl Boundary {
    pub const ALL: [Boundary; 4] = [Boundary::Valid, Boundary::Zero, Boundary::Clamp, Boundary::Wrap];

    pub const fn name(self) -> &'static str {
        match self {
            Boundary::Valid => "valid",
            Boundary::Zero => "zero",
            Boundary::Clamp => "clamp",
            Boundary::Wrap => "wrap",
        }
    }

    pub fn from_name(name: &str) -> Option<Boundary> {
        Boundary::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Which input element a read of input index `g` (possibly outside `0..len`) returns under this
    /// rule, or `None` for a zero. `len` must not be 0.
    pub fn source(self, len: usize, g: i64) -> Option<usize> {
        let n = len as i64;
        match self {
            Boundary::Valid | Boundary::Zero => (0..n).contains(&g).then_some(g as usize),
            Boundary::Clamp => Some(g.clamp(0, n - 1) as usize),
            Boundary::Wrap => Some(g.rem_euclid(n) as usize),
        }
    }

    /// The element at input index `g` under this rule. `input` must not be empty.
    pub fn read<T: Element>(self, input: &[T], g: i64) -> T {
        self.source(input.len(), g).map_or(*T::zero_ref(), |i| input[i])
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
