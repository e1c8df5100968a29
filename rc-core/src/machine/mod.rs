//! The machine program: the warp program with every decision about how it runs on a GPU made.
//!
//! The warp program ([`crate::program`]) says *what* each lane computes and which cache register
//! holds which tile element. The machine program adds *how*: which loads become vector loads,
//! where each load sits (just before its first reader), the order a 2D tile evaluates its
//! outputs in (output row after output row, or input row after input row), the interior and
//! boundary paths of a tile, the stage in shared memory, and runs of divisions by constants
//! that share one check.
//! One pass builds it (`lower.rs`); every back end reads it and decides nothing:
//! - the PTX printer ([`crate::ptx`]) prints it, statement for statement;
//! - the emulator (`emulate.rs`) runs it, both paths of every branch as the GPU would take them,
//!   and refuses an access the path's own test should have excluded;
//! - the register estimate ([`crate::registers`]) and the cost model ([`crate::auto`]) count it;
//! - its text form ([`MachineText`], from
//!   [`WarpProgram::machine_text`](crate::WarpProgram::machine_text)) prints it for a person: a
//!   header with what the kernel declares, then one line per operation, branches and loops as
//!   indented blocks, registers with their types where first written; `explain()` gives it
//!   ([`crate::Explanation::machine_program`]), and the snapshot tests
//!   (`tests/machine_text.rs`) diff it.
//!
//! Control flow is structured and uniform across the warp, so the emulator can run a tile's
//! lanes in lockstep: a [`Stmt::Branch`] on a property of the tile, and a [`Stmt::Loop`] with a
//! trip count known at compile time, the shape streaming over rows (2D/3D) and fused time steps
//! take where straight-line code would not fit. Inside a loop a register is written once per
//! iteration; a value carried to the next iteration is copied by the body.

mod division;
pub mod index;
mod lower;
mod text;
mod vector;
pub mod verify;

pub use division::Division;
pub use text::MachineText;

use std::borrow::Cow;

use crate::distribution::AffineLoad;
use crate::geometry::Axis;
use crate::pattern::Pattern;
use crate::program::{Instr, Reg};
use crate::ring::RingPart;
use crate::stage::StagePadding;

/// What a kernel runs for one tile, and what it declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Machine {
    pub body: Vec<Stmt>,
    /// Elements per vector access: 16 bytes, or fewer if a granule is shorter; 1 without vectors.
    pub width: u32,
    /// Bytes of shared memory the kernel declares (the stage), if it declares any.
    pub shared_bytes: Option<u32>,
    /// What the kernel declares about its launches, if anything.
    pub launch_bounds: Option<LaunchBounds>,
    /// The body's tile branches run as two kernels ([`Kernel::Interior`], then
    /// [`Kernel::Edges`]), each over every tile, instead of one ([`Kernel::Whole`]).
    pub split: bool,
}

/// One kernel of a machine program: launched over every tile of the launch. A split program's
/// two kernels ([`Machine::kernels`]) write disjoint outputs and read only the inputs, so
/// together they compute what the whole body does, in either order or at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// The whole body.
    Whole,
    /// The body with the fallback path of each top-level branch left out: only the tiles whose
    /// test holds (a fused 2D launch's interior strips) do any work. Printed alone, it gets the
    /// registers its own path needs (ptxas allocates for the kernel's longest path).
    Interior,
    /// The body with the taken path of each top-level branch left out: the other tiles.
    Edges,
}

impl Machine {
    /// The kernels the program runs as, in launch order.
    pub fn kernels(&self) -> &'static [Kernel] {
        match self.split {
            true => &[Kernel::Interior, Kernel::Edges],
            false => &[Kernel::Whole],
        }
    }

    /// What `kernel` runs for a tile: the body, with the other kernel's path of each top-level
    /// branch left empty (the body itself for [`Kernel::Whole`]).
    pub fn kernel_body(&self, kernel: Kernel) -> Cow<'_, [Stmt]> {
        let keep = |test: TileTest, taken: &[Stmt], fallback: &[Stmt]| -> Stmt {
            let (taken, fallback) = match kernel {
                Kernel::Interior => (taken.to_vec(), Vec::new()),
                _ => (Vec::new(), fallback.to_vec()),
            };
            Stmt::Branch { test, taken, fallback }
        };
        if kernel == Kernel::Whole {
            return Cow::Borrowed(&self.body);
        }
        self.body
            .iter()
            .map(|stmt| match stmt {
                Stmt::Branch { test, taken, fallback } => keep(*test, taken, fallback),
                other => other.clone(),
            })
            .collect()
    }

    /// Whether a path prefetches into L2 ([`Op::PrefetchL2`]): the launch then passes the
    /// distance ([`crate::prefetch::rows_ahead`]).
    /// Whether some lane applies `op` (a kernel that computes `exp` declares its table).
    pub fn computes(&self, op: crate::body::UnaryOp) -> bool {
        let mut found = false;
        self.visit(&mut |o| found |= matches!(o, Op::Compute(Instr::Unary { op: used, .. }) if *used == op));
        found
    }

    pub fn prefetches(&self) -> bool {
        let mut found = false;
        self.visit(&mut |op| found |= matches!(op, Op::PrefetchL2 { .. }));
        found
    }

    /// Bytes of dynamic shared memory each block is launched with: the stage where it exceeds
    /// what a kernel may declare statically (a ring of staged planes may), else 0.
    pub fn dynamic_shared_bytes(&self) -> u32 {
        self.shared_bytes.filter(|&bytes| bytes > crate::stage::MAX_STATIC_SHARED_BYTES).unwrap_or(0)
    }
}

/// Launch bounds the kernel declares to ptxas: `.maxntid` and, if given, `.minnctapersm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    pub max_threads_per_block: u32,
    pub min_blocks_per_sm: Option<u32>,
}

impl LaunchBounds {
    /// What a kernel of `pattern` declares: only what the attribute asked for, as declaring
    /// even the default 256 threads changes ptxas' register allocation (an f32 r = 16 kernel
    /// went from 87 registers to 80 and a spill).
    pub fn of(pattern: &Pattern) -> Option<LaunchBounds> {
        let asked =
            pattern.threads_per_block() != Pattern::DEFAULT_THREADS_PER_BLOCK || pattern.min_blocks_per_sm().is_some();
        asked.then_some(LaunchBounds {
            max_threads_per_block: pattern.threads_per_block(),
            min_blocks_per_sm: pattern.min_blocks_per_sm(),
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Op(Op),
    /// `taken` for tiles where `test` holds, `fallback` for the others.
    Branch {
        test: TileTest,
        taken: Vec<Stmt>,
        fallback: Vec<Stmt>,
    },
    /// `body`, `times` times in a row (at least once), every lane alike.
    Loop {
        times: u32,
        body: Vec<Stmt>,
    },
}

/// A condition on the tile, the same for every lane of the warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileTest {
    /// Tile elements `0..elements` of every input row of the tile all lie inside the input:
    /// `tile_start - lead >= 0` and `tile_start - lead + elements <= n` along x, and in 2D and
    /// 3D every input row of the tile inside the grid and rows a whole number of vectors long
    /// (so each row's vectors are aligned). No boundary rule applies to them.
    Inside { elements: u32 },
    /// Every output of output row `row` of the tile exists: `tile_start + tile_outputs <=
    /// n_out` along x, the row inside the output, and in 2D and 3D output rows a whole number
    /// of vectors long.
    Whole { row: u32 },
    /// Every input row of the tile lies inside the grid along y and z, and rows are a whole
    /// number of vector accesses long (`n mod width = 0` along x), so each vector access of the
    /// tile, which starts at a multiple of its width, lies wholly inside its row or wholly
    /// outside it: only the rule along x applies ([`Op::LoadVectorRule`]).
    RowsInside,
}

/// One machine operation, executed by every lane of the warp.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An instruction of the warp program that only computes: `Param`, `Const`, `Pick`,
    /// `Shuffle`, the packing of 16-bit pairs (`Pack`, `Unpack`, `Straddle`) and arithmetic. Memory instructions become the operations below.
    Compute(Instr),
    /// Lanes `lanes.0..lanes.1` read tile element `at.element(lane)` of input row `row` of input
    /// field `field` from global memory under the boundary rule; the other lanes hold zero.
    /// `cache` names the cache register it fills, or is `None` for a tap read straight from
    /// memory.
    Load { dst: Reg, cache: Option<u32>, at: AffineLoad, lanes: (u32, u32), field: u32, row: u32 },
    /// Lanes `lanes.0..lanes.1` read tile elements `at.element(lane) + k` for `k` in
    /// `0..dsts.len()` in one vector access, with no boundary rule (inside an
    /// [`TileTest::Inside`] path); the other lanes hold zero. The first element's address is a
    /// multiple of the access's size.
    LoadVector { dsts: Vec<Reg>, first_cache: u32, at: AffineLoad, lanes: (u32, u32), field: u32, row: u32 },
    /// Lanes `lanes.0..lanes.1` read tile elements `at.element(lane) + k` for `k` in
    /// `0..dsts.len()` of input row `row` of input field `field` under the boundary rule along
    /// x, in one vector access (inside a [`TileTest::RowsInside`] path: the row lies inside the
    /// input, the vector wholly inside it or wholly outside it): inside, the vector; outside,
    /// what the rule gives each element (under `clamp` the row's edge element, under `wrap` the
    /// vector it wraps to, under `zero` and `valid` zero). The other lanes hold zero.
    ///
    /// Why: a tile at the input's edge (the first and last of each row of tiles) loaded element
    /// by element, each with its own index and rule, issued about twice the instructions of an
    /// interior tile (2D box r = 4, ptxas 13 for sm_90: 3097 SASS instructions against 1423,
    /// 6.5% of the kernel's on an 8192^2 grid); only the lane vectors past the edge need the
    /// rule.
    LoadVectorRule { dsts: Vec<Reg>, first_cache: u32, at: AffineLoad, lanes: (u32, u32), field: u32, row: u32 },
    /// Every lane reads stage elements `at.element(lane) + k` for `k` in `0..dsts.len()` from
    /// its warp's region of input field `field`'s stage ([`Op::StageWarp`]), in one vector
    /// access.
    ReadStage { dsts: Vec<Reg>, first_cache: u32, at: AffineLoad, field: u32 },
    /// Every lane of the warp together asks L2 for the lines of tile elements `0..elements`,
    /// from the tile's first output along x, of input rows `first..first + rows` of the tile's
    /// input box of input field `field`, each row the launch's `prefetch_rows` below the tile's
    /// (none where that is 0, and none past the input's last row); on an interior path, where
    /// those columns lie inside the input ([`crate::prefetch`]). It changes no value: the
    /// emulator passes over it.
    PrefetchL2 { field: u32, first: u32, rows: u32, elements: u32 },
    /// Strategy shared_memory: the block copies its `elements` input elements of input field
    /// `field` from input index `block * block_outputs - lead` on, of each of the tile's input
    /// rows, into the field's stage in shared memory under the boundary rule (row after row),
    /// then waits at a block barrier.
    StageBlock { lead: u32, elements: u32, field: u32 },
    /// Strategy shared_memory: tile element `at.element(lane)` of input row `row` of input field
    /// `field` of this warp from the block's stage.
    Shared { dst: Reg, at: AffineLoad, field: u32, row: u32 },
    /// Staged windows: the warp copies its `stage.elements` input elements of input field
    /// `field` from input index `tile_start - lead` on into its own region of the field's
    /// stage in shared memory, then waits at a warp barrier.
    StageWarp { stage: WarpStage, field: u32 },
    /// Divisions by constants with a fast path and one check for all of them ([`Division`]).
    Divisions(Vec<Division>),
    /// Lane `lane` writes `src` to tile output `at.element(lane)` of output row `row` of output
    /// field `field`, if that output exists.
    Store { src: Reg, field: u32, output: u32, at: AffineLoad, row: u32 },
    /// Lane `lane` writes `srcs[k]` to tile output `at.element(lane) + k` of output field
    /// `field` in one vector access (inside a [`TileTest::Whole`] path: every output exists).
    StoreVector { srcs: Vec<Reg>, field: u32, output: u32, at: AffineLoad, row: u32 },
    /// The end of a streaming tile's step: `dst = src` for each pair in order, the planes the
    /// next step reads as older taking this step's values ([`Pipeline::carries`]).
    ///
    /// [`Pipeline::carries`]: crate::pipeline::Pipeline::carries
    Carry(Vec<(Reg, Reg)>),
    /// A streaming tile moves one plane along z: the rows the next step names are counted from
    /// the next plane.
    Advance,
    /// Fused time steps: every lane reads `src` of its neighbour lane on side `from` (lane
    /// `lane - 1` or `lane + 1`); a lane with no such neighbour in the warp reads its own.
    Neighbour { dst: Reg, src: Reg, from: Side },
    /// Fused time steps: the boundary rule after a step. `values[j]` is the lane's tile element
    /// `lane * values.len() + j` after the step; `dsts[j]` is that value where the element lies
    /// inside the input (`0..n`), and outside it what the rule says: zero, or under `clamp` the
    /// step's value at input index 0 or `n - 1` (from the lane that holds it).
    StepRule { values: Vec<Reg>, dsts: Vec<Reg> },
    /// Fused time steps: lane `lane` writes `srcs[j]` to tile output `lane * srcs.len() + j -
    /// lead` of output row `row` of output field `field` wherever that is one of the tile's
    /// outputs (`0..tile_outputs`) and exists; in vector accesses of `width` elements when
    /// `width > 1`, only where the outputs' row exists and is whole (a [`TileTest::Whole`] path,
    /// or a 2D strip's interior path under `zero`, `clamp` and `wrap`, whose outputs all exist).
    StoreOwned { srcs: Vec<Reg>, field: u32, lead: u32, width: u32, row: u32 },
    /// Fused time steps in 2D (along y) and 3D (along z): the tile moves `by` rows or planes
    /// along `axis` (towards larger coordinates if positive); the rows every later operation
    /// names are counted from there.
    Stream { axis: Axis, by: i32 },
    /// Fused time steps in 2D: the boundary rule along y on a step's new row `row` (input box
    /// row `at` of the tile, in registers of its own), `window` holding that step's rows above it
    /// (oldest first). Outside the input the row is zero under `zero`; under `clamp` a row below
    /// the input takes the window's newest (the last row, or a row that already equals it), and
    /// the input's first row gives its value to every row of the window (all above the input),
    /// so each row outside reads as the nearest edge row of the same step. `first` says whether
    /// the row can be the input's first (while a strip fills its windows: the first row's
    /// copies run there only).
    RowRule { row: Vec<Reg>, window: Vec<Vec<Reg>>, at: u32, first: bool },
    /// Fused time steps in 3D: a step's rows of a plane read through the boundary rule along y.
    /// `rows[j]` holds the lane's elements of input box row `first + j` of the tile; `dsts[j]` is
    /// that row where it lies inside the input, and outside it what the rule says: zero, or under
    /// `clamp` the row of `rows` at the nearest edge (itself if that is not among them).
    PlaneRowsRule { rows: Vec<Vec<Reg>>, first: u32, dsts: Vec<Vec<Reg>> },
    /// Fused time steps in 3D: a step's window of planes read through the boundary rule along
    /// z, in place. `planes[j]` holds the lane's elements of input box plane `first + j`; where
    /// that plane lies outside the input it becomes what the rule says: zero, or under `clamp`
    /// the plane of `planes` at the nearest edge (it stays as it is if that is not among them).
    PlaneRule { planes: Vec<Vec<Reg>>, first: u32 },
    /// Staged planes ([`crate::ring`]): every thread of the block reads its copy vectors of
    /// box plane `plane` (counted from the current step's first input plane) of input field
    /// `field` (the block's rows, every lane's window) from global memory into registers it
    /// holds until [`Op::PutPlane`]: vectors where the whole plane lies inside the input,
    /// element by element under the boundary rule otherwise.
    FetchPlane { plane: u32, field: u32 },
    /// Staged planes: every thread writes what its last [`Op::FetchPlane`] of input field
    /// `field` read into ring slot `(phase + slot) mod slots`, at the copy vectors' plane positions.
    PutPlane { slot: u32, field: u32 },
    /// Staged planes: a barrier for the whole block (the ring is shared).
    BlockBarrier,
    /// Staged planes: every lane reads elements `at.element(lane) + k` for `k` in
    /// `0..dsts.len()` of row `warp * rows_per_warp + y` of the ring slot of box plane `z` of
    /// input field `field`, where box row `row` is plane `z`, row `y` of the step's box; one
    /// vector access, from that row or, for a piece at a copy vector's edge, from the row's
    /// heads or tails ([`crate::ring`]).
    ReadRing { dsts: Vec<Reg>, first_cache: u32, at: AffineLoad, field: u32, row: u32, part: RingPart },
    /// Staged planes: the ring's phase moves one slot on (`phase = (phase + 1) mod slots`), as
    /// the tile moves one plane along z.
    TurnRing,
}

/// Which neighbour lane an [`Op::Neighbour`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Lane `lane - 1`, which holds the elements just before the lane's.
    Before,
    /// Lane `lane + 1`, which holds the elements just after the lane's.
    After,
}

/// A staged window's stage: where each element goes and how the warp copies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpStage {
    /// Tile element 0 is input index `tile_start - lead`.
    pub lead: u32,
    /// Elements staged per warp, from tile element 0 on.
    pub elements: u32,
    /// Where stage element `j` sits in the region ([`StagePadding::position`]), and the
    /// width of one copy vector.
    pub padding: StagePadding,
    /// Copy vectors: `elements` rounded up to whole vectors of `padding.width`.
    pub chunks: u32,
    /// Bytes of one warp's region.
    pub region_bytes: u32,
}

impl WarpStage {
    /// Rounds of the copy: lane `l` copies vectors `l`, `l + W`, ... below `chunks`.
    pub fn rounds(&self, warp: u32) -> u32 {
        self.chunks.div_ceil(warp)
    }

    /// Where lane `lane`'s cache run starting at stage element `base` is, in elements from the
    /// region's start: the lane's granule (`lane * (granule + pad)`) plus the padded position
    /// of `base` within the first one. Equal to `position(base + lane * granule)`.
    pub fn read_position(&self, lane: u32, base: u32) -> u32 {
        lane * (self.padding.granule + self.padding.pad) + self.padding.position(base)
    }
}

impl Machine {
    /// Calls `f` on every operation, in the order a tile that takes the fallback path of every
    /// branch, then the taken one, reaches them (each operation once).
    pub fn visit(&self, f: &mut impl FnMut(&Op)) {
        fn walk(stmts: &[Stmt], f: &mut impl FnMut(&Op)) {
            for stmt in stmts {
                match stmt {
                    Stmt::Op(op) => f(op),
                    Stmt::Branch { fallback, taken, .. } => {
                        walk(fallback, f);
                        walk(taken, f);
                    }
                    Stmt::Loop { body, .. } => walk(body, f),
                }
            }
        }
        walk(&self.body, f);
    }

    /// The operations of one path through the program, in the order a tile executes them: at
    /// every branch, `taken` if `take(test)`, else `fallback`; a loop's body once per iteration.
    pub fn path(&self, take: impl Fn(TileTest) -> bool) -> Vec<&Op> {
        fn walk<'a>(stmts: &'a [Stmt], take: &impl Fn(TileTest) -> bool, out: &mut Vec<&'a Op>) {
            for stmt in stmts {
                match stmt {
                    Stmt::Op(op) => out.push(op),
                    Stmt::Branch { test, taken, fallback } => {
                        walk(if take(*test) { taken } else { fallback }, take, out)
                    }
                    Stmt::Loop { times, body } => {
                        for _ in 0..*times {
                            walk(body, take, out);
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.body, &take, &mut out);
        out
    }
}

impl Op {
    /// The virtual registers this operation reads.
    pub fn uses(&self) -> Vec<Reg> {
        match self {
            Op::Compute(instr) => instr.uses(),
            Op::Divisions(run) => run.iter().flat_map(|d| [d.dividend_on_fast_path(), d.divisor]).collect(),
            Op::Store { src, .. } => vec![*src],
            Op::StoreVector { srcs, .. } => srcs.clone(),
            Op::Carry(moves) => moves.iter().map(|&(_, src)| src).collect(),
            Op::Neighbour { src, .. } => vec![*src],
            Op::StepRule { values, .. } => values.clone(),
            Op::StoreOwned { srcs, .. } => srcs.clone(),
            Op::RowRule { row, window, .. } => [row.as_slice(), &window.concat()].concat(),
            Op::PlaneRowsRule { rows, .. } => rows.concat(),
            Op::PlaneRule { planes, .. } => planes.concat(),
            Op::Load { .. }
            | Op::Stream { .. }
            | Op::Advance
            | Op::LoadVector { .. }
            | Op::LoadVectorRule { .. }
            | Op::ReadStage { .. }
            | Op::StageBlock { .. }
            | Op::Shared { .. }
            | Op::StageWarp { .. }
            | Op::FetchPlane { .. }
            | Op::PutPlane { .. }
            | Op::BlockBarrier
            | Op::ReadRing { .. }
            | Op::PrefetchL2 { .. }
            | Op::TurnRing => Vec::new(),
        }
    }

    /// The virtual registers this operation writes (on the path every lane takes).
    pub fn defs(&self) -> Vec<Reg> {
        match self {
            Op::Compute(instr) => instr.def().into_iter().collect(),
            Op::Load { dst, .. } | Op::Shared { dst, .. } => vec![*dst],
            Op::LoadVector { dsts, .. }
            | Op::LoadVectorRule { dsts, .. }
            | Op::ReadStage { dsts, .. }
            | Op::ReadRing { dsts, .. } => dsts.clone(),
            Op::Divisions(run) => run.iter().map(|d| d.dst).collect(),
            Op::Carry(moves) => moves.iter().map(|&(dst, _)| dst).collect(),
            Op::Neighbour { dst, .. } => vec![*dst],
            Op::StepRule { dsts, .. } => dsts.clone(),
            Op::RowRule { row, window, .. } => [row.as_slice(), &window.concat()].concat(),
            Op::PlaneRowsRule { dsts, .. } => dsts.concat(),
            Op::PlaneRule { planes, .. } => planes.concat(),
            Op::Stream { .. }
            | Op::StageBlock { .. }
            | Op::StageWarp { .. }
            | Op::Store { .. }
            | Op::StoreVector { .. }
            | Op::StoreOwned { .. }
            | Op::Advance
            | Op::FetchPlane { .. }
            | Op::PutPlane { .. }
            | Op::BlockBarrier
            | Op::PrefetchL2 { .. }
            | Op::TurnRing => Vec::new(),
        }
    }

    /// Whether this operation fills cache registers.
    pub fn loads_cache(&self) -> bool {
        matches!(
            self,
            Op::Load { cache: Some(_), .. }
                | Op::LoadVector { .. }
                | Op::LoadVectorRule { .. }
                | Op::ReadStage { .. }
                | Op::ReadRing { .. }
        )
    }
}
