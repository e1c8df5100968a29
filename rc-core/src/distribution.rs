//! Where the register cache keeps each tile element, and which outputs each lane computes.
//! The scheduler works against the [`Distribution`] trait, so a new layout is a new impl here.

use crate::error::ScheduleError;
pub use crate::layout::Layout;
use crate::pattern::Pattern;
use crate::scalar::ScalarType;
use crate::strategy::Strategy;

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
    /// The layout this distribution is: what decides how its launch numbers tiles
    /// ([`Layout::stacks_warps`]).
    fn layout(&self) -> Layout;
    /// Tile element 0 is input index `tile * tile_outputs - lead`. At least the pattern's shift
    /// (the halo before the first output); more keeps tiles aligned to vector loads.
    fn lead(&self) -> u32;
    /// Consecutive tile elements a lane keeps in consecutive registers (1: none), which the PTX
    /// back end loads and stores as vectors.
    fn vector(&self) -> u32;
    /// Logical warp width.
    fn warp(&self) -> u32;
    /// Cache registers per lane.
    fn registers(&self) -> u32;
    /// Where tile element `e` lives (one owner, if several lanes hold it).
    fn slot(&self, e: u32) -> Slot;
    /// The register in which `lane` itself holds tile element `e`, if it does: then reading it
    /// needs no shuffle.
    fn local(&self, lane: u32, e: u32) -> Option<u32> {
        let slot = self.slot(e);
        (slot.lane == lane).then_some(slot.reg)
    }
    /// Which tile element each lane keeps in `rc[reg]`.
    fn load(&self, reg: u32) -> AffineLoad;
    /// The tile output that is `lane`'s `p`-th output.
    fn output(&self, lane: u32, p: u32) -> u32;
    /// Whether the cache is filled from the block's input staged in shared memory instead of
    /// from global memory (see [`StagedWindow`]).
    fn staged(&self) -> bool {
        false
    }
    /// Whether the block stages its input planes in a ring in shared memory and each lane reads
    /// its window from there (see [`Stage::PlaneRing`]).
    fn ring(&self) -> bool {
        false
    }
}

/// The article's distribution: tile element `e` in lane `e mod W`, register `rc[e div W]`;
/// lane `l`'s `p`-th output is tile output `p * W + l`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundRobin {
    warp: u32,
    tile_elements: u32,
    lead: u32,
}

impl RoundRobin {
    pub fn new(pattern: &Pattern) -> RoundRobin {
        RoundRobin { warp: pattern.warp(), tile_elements: pattern.tile_elements(), lead: pattern.shift() }
    }
}

impl Distribution for RoundRobin {
    fn layout(&self) -> Layout {
        Layout::RoundRobin
    }
    fn describe(&self) -> String {
        format!("round-robin: tile element e -> lane e mod {0}, rc[e div {0}]", self.warp)
    }
    fn lead(&self) -> u32 {
        self.lead
    }
    fn vector(&self) -> u32 {
        1
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

/// Round-robin over granules of `V` consecutive elements: tile element `e` in lane
/// `(e div V) mod W`, register `rc[(e div VW) * V + e mod V]`; lane `l` computes the `V`
/// consecutive outputs `q*VW + l*V ..` of each row `q`. Neighbouring outputs of a lane share
/// their window, so only the halo crosses lanes: about `2r / V` shuffles per output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granule {
    warp: u32,
    v: u32,
    lead: u32,
    registers: u32,
}

impl Granule {
    /// Needs `outputs_per_thread` to be a multiple of `v` (whole rows).
    pub fn new(pattern: &Pattern, v: u32) -> Result<Granule, ScheduleError> {
        whole_rows(pattern, Layout::Granule(v), v)?;
        let warp = pattern.warp();
        // Round the halo before the first output up to whole granules, so every granule a lane
        // loads starts at a multiple of V in the input (aligned vector loads).
        let lead = pattern.shift().div_ceil(v) * v;
        // Elements the tile needs: from the first output's window start to the last one's end.
        let needed = lead - pattern.shift() + pattern.tile_elements();
        let rows = needed.div_ceil(warp * v);
        Ok(Granule { warp, v, lead, registers: rows * v })
    }
}

impl Distribution for Granule {
    fn layout(&self) -> Layout {
        Layout::Granule(self.v)
    }
    fn describe(&self) -> String {
        format!(
            "granules of {v}: tile element e -> lane (e div {v}) mod {w}, rc[(e div {vw}) * {v} + e mod {v}]",
            v = self.v,
            w = self.warp,
            vw = self.v * self.warp
        )
    }
    fn lead(&self) -> u32 {
        self.lead
    }
    fn vector(&self) -> u32 {
        self.v
    }
    fn warp(&self) -> u32 {
        self.warp
    }
    fn registers(&self) -> u32 {
        self.registers
    }
    fn slot(&self, e: u32) -> Slot {
        Slot { lane: (e / self.v) % self.warp, reg: e / (self.v * self.warp) * self.v + e % self.v }
    }
    fn load(&self, reg: u32) -> AffineLoad {
        AffineLoad { base: reg / self.v * self.v * self.warp + reg % self.v, stride: self.v }
    }
    fn output(&self, lane: u32, p: u32) -> u32 {
        p / self.v * self.v * self.warp + lane * self.v + p % self.v
    }
}

/// Each lane caches the whole window of its `V` consecutive outputs (as [`Granule`] assigns
/// them): its own granule and the halo around it, `V + 2r` consecutive elements per row, read with
/// vector loads. Neighbouring lanes' windows overlap, so an element sits in several lanes and the
/// halo comes from the L1 cache instead of a shuffle.
///
/// Why: a shuffle moves one 32-bit value per instruction, and each also needs a select where the
/// tile wraps; a 16-byte load moves four. Once the radius is large the register cache over
/// granules is bound by issuing those instructions (`bench/results/*/ANALYSIS.md`), and windows
/// issue about `(2r + V) / 4V` loads per output where granules issue `4r / V` shuffles and
/// selects. At small radius the shuffles are few and the granule layout reads less from L1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneWindow {
    granule: Granule,
    /// Registers per row of outputs: the window of `V` outputs.
    span: u32,
}

impl LaneWindow {
    /// Needs `outputs_per_thread` to be a multiple of `v` (whole rows).
    pub fn new(pattern: &Pattern, v: u32) -> Result<LaneWindow, ScheduleError> {
        whole_rows(pattern, Layout::Window(v), v)?;
        let granule = Granule::new(pattern, v)?;
        // Output j of a row reads tile elements j + lead - shift + (0 ..= 2r) relative to its lane's
        // granule (`Schedule::plan`'s centre), so the window ends at V + lead - shift + 2r.
        let span = v + granule.lead - pattern.shift() + 2 * pattern.radius().along_x();
        Ok(LaneWindow { granule, span })
    }
}

impl Distribution for LaneWindow {
    fn layout(&self) -> Layout {
        Layout::Window(self.granule.v)
    }
    fn describe(&self) -> String {
        let (v, w) = (self.granule.v, self.granule.warp);
        format!(
            "windows of {v} outputs: lane l caches tile elements {v}l .. {v}l + {s} of each row of {vw}, rc[row * {s} + i] = element row * {vw} + {v}l + i (halo from L1, no shuffles)",
            s = self.span,
            vw = v * w
        )
    }
    fn lead(&self) -> u32 {
        self.granule.lead
    }
    fn vector(&self) -> u32 {
        self.granule.v
    }
    fn warp(&self) -> u32 {
        self.granule.warp
    }
    fn registers(&self) -> u32 {
        self.granule.registers / self.granule.v * self.span
    }
    fn slot(&self, e: u32) -> Slot {
        let row_elements = self.granule.v * self.granule.warp;
        Slot { lane: (e % row_elements) / self.granule.v, reg: e / row_elements * self.span + e % self.granule.v }
    }
    fn local(&self, lane: u32, e: u32) -> Option<u32> {
        // Rows overlap too: an element past row q's end is in row q's window and in row q + 1's.
        // The lane's first row that holds it is as good as any.
        let row_elements = self.granule.v * self.granule.warp;
        let first = lane * self.granule.v;
        (0..self.granule.registers / self.granule.v).find_map(|row| {
            let start = row * row_elements + first;
            (e >= start && e - start < self.span).then(|| row * self.span + (e - start))
        })
    }
    fn load(&self, reg: u32) -> AffineLoad {
        let (row, i) = (reg / self.span, reg % self.span);
        AffineLoad { base: row * self.granule.v * self.granule.warp + i, stride: self.granule.v }
    }
    fn output(&self, lane: u32, p: u32) -> u32 {
        self.granule.output(lane, p)
    }
}

/// Windows as [`LaneWindow`] lays them out, read from shared memory ([`Stage`]): in 1D each warp
/// first copies its input (tile and halo) into its region of shared memory with 16-byte loads and
/// stores, every element once, then each lane reads its window from there with 16-byte reads.
///
/// Why: the L1 cache serves a warp's 16-byte load in one pass per 128-byte line it touches, and
/// a window load touches `V` lines (lanes are `4V` bytes apart) for 512 useful bytes; past
/// r = 16 window kernels were bound by those passes (`bench/results/*/ANALYSIS.md`, ncu's
/// `l1tex__data_pipe_lsu_wavefronts`). Shared memory serves a 16-byte read in four passes
/// whatever the lanes' spacing, as long as no two lanes of a quarter warp hit one bank, which
/// the stage's padding guarantees (`ptx.rs`). Wider windows then read less per output,
/// `(V + 2r) / V` elements, where from L1 they cost more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagedWindow {
    window: LaneWindow,
    from: Stage,
}

/// Where a [`StagedWindow`] reads its windows from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The warp's own input, staged in shared memory (1D).
    Warp,
    /// A ring of input planes the block stages in shared memory (3D): the block's warps stack
    /// along y over one x tile and stream along z, and each input plane, with the block's y
    /// halo, is copied from global memory once per block ([`crate::ring`]).
    ///
    /// Why: a 3D tile that streams through registers keeps its newest plane's rows and the carried
    /// partial sums in registers, which held rc's 3D tiles to 22% occupancy; staged planes leave a
    /// thread only its outputs and one window row at a time, and re-read the y halo once per block
    /// instead of once per warp (bench/results/HISTORY.md: 2026-11-24-h100-staged3d-probe: 0.95/0.86/0.90 of
    /// copy for star r1/box r1/star r2 against 0.92/0.81/0.63).
    PlaneRing,
}

impl StagedWindow {
    /// Windows read from the warp's stage. Needs `outputs_per_thread` to be a multiple of `v`
    /// (whole rows).
    pub fn new(pattern: &Pattern, v: u32) -> Result<StagedWindow, ScheduleError> {
        whole_rows(pattern, Layout::Staged(v), v)?;
        Ok(StagedWindow { window: LaneWindow::new(pattern, v)?, from: Stage::Warp })
    }

    /// Windows read from the block's ring of planes; the same condition.
    pub fn planes(pattern: &Pattern, v: u32) -> Result<StagedWindow, ScheduleError> {
        whole_rows(pattern, Layout::Planes(v), v)?;
        Ok(StagedWindow { window: LaneWindow::new(pattern, v)?, from: Stage::PlaneRing })
    }
}

impl Distribution for StagedWindow {
    fn layout(&self) -> Layout {
        match self.from {
            Stage::Warp => Layout::Staged(self.window.vector()),
            Stage::PlaneRing => Layout::Planes(self.window.vector()),
        }
    }
    fn describe(&self) -> String {
        let from = match self.from {
            Stage::Warp => "the warp's input staged in shared memory",
            Stage::PlaneRing => "the block's ring of input planes in shared memory",
        };
        format!(
            "{}, read from {from}",
            self.window.describe().replace(" (halo from L1, no shuffles)", " (no shuffles)")
        )
    }
    fn lead(&self) -> u32 {
        self.window.lead()
    }
    fn vector(&self) -> u32 {
        self.window.vector()
    }
    fn warp(&self) -> u32 {
        self.window.warp()
    }
    fn registers(&self) -> u32 {
        self.window.registers()
    }
    fn slot(&self, e: u32) -> Slot {
        self.window.slot(e)
    }
    fn local(&self, lane: u32, e: u32) -> Option<u32> {
        self.window.local(lane, e)
    }
    fn load(&self, reg: u32) -> AffineLoad {
        self.window.load(reg)
    }
    fn output(&self, lane: u32, p: u32) -> u32 {
        self.window.output(lane, p)
    }
    fn staged(&self) -> bool {
        self.from == Stage::Warp
    }
    fn ring(&self) -> bool {
        self.from == Stage::PlaneRing
    }
}

/// A lane of `layout` computes whole rows of `v` consecutive outputs: `outputs_per_thread` must
/// be a multiple of `v`.
fn whole_rows(pattern: &Pattern, layout: Layout, v: u32) -> Result<(), ScheduleError> {
    let outputs_per_thread = pattern.outputs_per_thread();
    if v == 0 || outputs_per_thread % v != 0 {
        return Err(ScheduleError::WholeRows { layout, outputs_per_thread });
    }
    Ok(())
}

impl Layout {
    pub fn build(self, pattern: &Pattern) -> Result<Box<dyn Distribution>, ScheduleError> {
        Ok(match self {
            Layout::RoundRobin => Box::new(RoundRobin::new(pattern)),
            Layout::Granule(v) => Box::new(Granule::new(pattern, v)?),
            Layout::Window(v) => Box::new(LaneWindow::new(pattern, v)?),
            Layout::Staged(v) => Box::new(StagedWindow::new(pattern, v)?),
            Layout::Planes(v) => Box::new(StagedWindow::planes(pattern, v)?),
        })
    }

    /// The distribution a kernel of `strategy` uses: this layout's for the register cache; the
    /// baselines map outputs to lanes as round-robin does.
    pub fn build_for(self, strategy: Strategy, pattern: &Pattern) -> Result<Box<dyn Distribution>, ScheduleError> {
        match strategy {
            Strategy::RegisterCache => self.build(pattern),
            _ => Ok(Box::new(RoundRobin::new(pattern))),
        }
    }
}

impl Layout {
    /// Whether a block's warps stack along y, each block computing one block tile (the launch
    /// and the kernel's prologue both follow it): staged planes, and the register cache's
    /// windows and granules on a 2D tile whose rows are not streamed ([`Pattern::stacks_warps`]).
    /// Everything else (1D, 3D register tiles, streamed rows, the baselines, fused time steps,
    /// which launch as round-robin) numbers one tile per warp, row-major.
    pub fn stacks_warps(self, strategy: Strategy, pattern: &Pattern) -> bool {
        match self {
            Layout::Planes(_) => true,
            Layout::Window(_) | Layout::Granule(_) => strategy == Strategy::RegisterCache && pattern.stacks_warps(),
            Layout::RoundRobin | Layout::Staged(_) => false,
        }
    }

    /// Bytes per vector access of a lane's granule (at most 16); the buffers' addresses must be
    /// multiples of it.
    pub fn access_bytes(self, element: ScalarType) -> u32 {
        match self {
            Layout::RoundRobin => element.bytes(),
            Layout::Granule(v) | Layout::Window(v) | Layout::Staged(v) | Layout::Planes(v) => {
                vector_access_elements(v, element) * element.bytes()
            }
        }
    }
}

/// Elements one vector access of a lane's run of `vector` consecutive elements covers: 16 bytes
/// (the widest access), or the whole run if it is shorter.
pub fn vector_access_elements(vector: u32, element: ScalarType) -> u32 {
    (vector * element.bytes()).clamp(element.bytes(), 16) / element.bytes()
}
