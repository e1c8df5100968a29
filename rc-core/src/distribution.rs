//! Where the register cache keeps each tile element, and which outputs each lane computes.
//! The scheduler works against the [`Distribution`] trait, so a new layout is a new impl here.

use crate::pattern::Pattern;

/// A cache location: register `rc[reg]` of lane `lane`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slot {
    pub lane: u32,
    pub reg: u32,
}

/// How one lane's cache register is filled: tile element `base + lane * stride`. Keeping loads
/// affine in the lane makes them coalesce and makes them one multiply-add in PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AffineLoad {
    pub base: u32,
    pub stride: u32,
}

impl AffineLoad {
    pub fn element(&self, lane: u32) -> u32 {
        self.base + lane * self.stride
    }
}

pub trait Distribution {
    /// A one-line description for `explain()`.
    fn describe(&self) -> String;
    /// Logical warp width.
    fn warp(&self) -> u32;
    /// Cache registers per lane.
    fn registers(&self) -> u32;
    /// Where tile element `e` lives.
    fn slot(&self, e: u32) -> Slot;
    /// Which tile element each lane keeps in `rc[reg]`.
    fn load(&self, reg: u32) -> AffineLoad;
    /// The tile output that is `lane`'s `p`-th output.
    fn output(&self, lane: u32, p: u32) -> u32;
}

/// The article's distribution: tile element `e` in lane `e mod W`, register `rc[e div W]`;
/// lane `l`'s `p`-th output is tile output `p * W + l`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundRobin {
    warp: u32,
    tile_elements: u32,
}

impl RoundRobin {
    pub fn new(pattern: &Pattern) -> RoundRobin {
        RoundRobin { warp: pattern.warp(), tile_elements: pattern.tile_elements() }
    }
}

impl Distribution for RoundRobin {
    fn describe(&self) -> String {
        format!("round-robin: tile element e -> lane e mod {0}, rc[e div {0}]", self.warp)
    }
    fn warp(&self) -> u32 {
        self.warp
    }
    fn registers(&self) -> u32 {
        self.tile_elements.div_ceil(self.warp)
    }
    fn slot(&self, e: u32) -> Slot {
        Slot { lane: e % self.warp, reg: e / self.warp }
    }
    fn load(&self, reg: u32) -> AffineLoad {
        AffineLoad { base: reg * self.warp, stride: 1 }
    }
    fn output(&self, lane: u32, p: u32) -> u32 {
        p * self.warp + lane
    }
}
