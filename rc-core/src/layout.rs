//! Which distribution a stencil uses, as the attribute names it: the name alone, read by the
//! errors that print it; [`crate::distribution`] builds each.

/// Which distribution a stencil uses, as the attribute names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    #[default]
    RoundRobin,
    /// Granules of this many consecutive elements.
    Granule(u32),
    /// Windows of this many consecutive outputs.
    Window(u32),
    /// Windows of this many consecutive outputs, read from the block's staged input.
    Staged(u32),
    /// Windows of this many consecutive outputs, read from the block's ring of staged input
    /// planes (3D).
    Planes(u32),
}

impl Layout {
    /// Consecutive outputs a lane computes together (1 for round-robin): a lane's outputs per
    /// thread are whole rows of this many.
    pub const fn row_length(self) -> u32 {
        match self {
            Layout::RoundRobin => 1,
            Layout::Granule(v) | Layout::Window(v) | Layout::Staged(v) | Layout::Planes(v) => v,
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layout::RoundRobin => f.write_str("round_robin"),
            Layout::Granule(v) => write!(f, "granule({v})"),
            Layout::Window(v) => write!(f, "window({v})"),
            Layout::Staged(v) => write!(f, "staged({v})"),
            Layout::Planes(v) => write!(f, "planes({v})"),
        }
    }
}
