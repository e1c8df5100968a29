//! The launch map: which block of a launch runs which tile, decided once, as data of the
//! kernel. Its [`TileOrder`] gives the launch's shape ([`LaunchMap::launch_shape`], which the
//! runtime launches) and an index program ([`LaunchMap::placement`]) from a thread's block and
//! warp to its tile's first output along each axis. The PTX back end prints that program as
//! the kernel's prologue and the emulator evaluates it for every block and warp of the same
//! launch ([`LaunchMap::warps`]), so a map that loses or repeats a tile fails on the CPU.

use crate::error::LengthError;
use crate::geometry::{Axis, Dims, Extent};
use crate::machine::index::{
    Arith, Compare, DivideScratch, Given, IndexInputs, IndexOp, IndexProgram, IndexReg, IndexRegs, Operand, Special,
};
use crate::machine::Kernel;
use crate::pattern::{LaunchShape, Pattern};
use crate::time_steps::FusedTile;

/// How a launch numbers its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileOrder {
    /// One tile per warp: global warp `t` (block x times the warps of a block, plus the warp)
    /// runs tile `t`, numbered row-major over the output's tiles (x fastest), so a block's
    /// warps take consecutive tiles however few tiles a row has. 1D, 3D register tiles,
    /// streamed rows and the baselines.
    RowMajor,
    /// 2D block tiles: block `(x, y, z)` runs the block tile in column `x` of band
    /// `y + z * nctaid.y` (CUDA allows at most 65535 blocks along y), its warp `w` the band's
    /// `w`-th tile along y. Nothing is divided ([`Pattern::stacked_launch_shape`]).
    Bands,
    /// Staged planes: block `b` runs block tile `b`, numbered row-major over the block tiles;
    /// its warp `w` the block tile's `w`-th tile along y, all of them sharing the block's ring.
    StackedBlocks,
    /// A fused 2D launch: global warp `t` runs strip `t`, the strips whose input box crosses an
    /// edge of the input first, then the interior ones, each row-major ([`StripGeometry`]).
    EdgesFirst(StripGeometry),
}

/// Where a fused 2D launch's strips lie against the input, for [`TileOrder::EdgesFirst`]: a
/// strip's input starts `lead` elements before its first output along x and spans
/// `elements`, starts `shift` rows above its first output row and spans `box_rows`; rows not a
/// whole number of `width`-element vectors make every strip an edge strip.
///
/// Numbered row-major, 8192 x 8192 heat's 410 edge strips lay one or two to a block of four in
/// about 200 blocks (103 numbered edges first), each holding a block's registers beside the
/// interior while its strips ran: 2.81x the copy per launch with the masked rule, 3.01x
/// numbered edges first, on an H200 (bench/results/HISTORY.md: 2026-11-24-h200-fused2d3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripGeometry {
    pub lead: u32,
    pub elements: u32,
    pub width: u32,
    pub shift: u32,
    pub box_rows: u32,
}

/// The output rows a launch computes along the outermost axis (the rows of a 2D grid, the
/// planes of a 3D one): `first..end` of the output's, the rest of the output untouched. The
/// whole output for a plain launch; a sub-grid where a band of a grid split over GPUs computes
/// only the rows still exact ([`crate::decomposition`]). The kernel takes `first` as
/// [`crate::abi::KernelParam::FirstRow`] and `end` as the output's extent along that axis, reads
/// the whole input under the boundary rule at its edges, and stores only rows `first..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputRows {
    pub first: usize,
    pub end: usize,
}

impl OutputRows {
    /// Every row of an output of shape `output`.
    pub fn all(output: Extent) -> OutputRows {
        OutputRows { first: 0, end: outermost(output) }
    }

    /// Rows `first..end` of an output of shape `output`, if it has them: a 2D or 3D output (a
    /// 1D kernel takes no first row).
    pub fn of(output: Extent, first: usize, end: usize) -> Result<OutputRows, LengthError> {
        match output.dims() != Dims::One && first <= end && end <= outermost(output) {
            true => Ok(OutputRows { first, end }),
            false => Err(LengthError::OutputRows { shape: output, first, end }),
        }
    }

    pub fn len(self) -> usize {
        self.end - self.first
    }

    pub fn is_empty(self) -> bool {
        self.first == self.end
    }

    /// The shape the launch covers: `output`'s, with these rows along the outermost axis.
    pub fn launched(self, output: Extent) -> Extent {
        output.with_outermost(self.len())
    }

    /// The output shape the kernel is given: `output`'s, ending at `end` along the outermost
    /// axis.
    pub fn given(self, output: Extent) -> Extent {
        output.with_outermost(self.end)
    }
}

/// Elements along a shape's outermost dimension.
fn outermost(shape: Extent) -> usize {
    shape.components().first().copied().unwrap_or(0)
}

/// Which block runs which tile of a kernel's launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchMap {
    pub order: TileOrder,
    /// The tile the map places: the program's pattern (for a 2D tile that streams its rows,
    /// the 3D tile it runs as).
    pub pattern: Pattern,
}

/// What a launch map's index program computes ([`LaunchMap::placement`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub program: IndexProgram,
    /// The tile's first output along x, y and z (u64; y and z only where the tile has them).
    pub start: [Option<IndexReg>; 3],
    /// The warp's place in its block (u32), in orders whose warps stack along y.
    pub warp_in_block: Option<IndexReg>,
    /// [`TileOrder::EdgesFirst`]: how many strips cross an edge (u64; the same for every
    /// thread): the edges kernel's launch covers only those.
    pub edge_strips: Option<IndexReg>,
    /// 2D and 3D: where the input rows a tile may read with no test on its stores end, along
    /// the outermost axis (u64): a tile whose input box ends there stores every output row it
    /// has. The input's extent for a launch over every row; fewer where the launch's rows
    /// ([`OutputRows`]) end before the output's.
    pub input_end: Option<IndexReg>,
}

/// One warp of a launch and the tile it runs ([`LaunchMap::warps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedWarp {
    pub block: [u32; 3],
    pub warp_in_block: u32,
    /// The tile's first output along x, y and z (0 along axes the tile does not have).
    pub start: [u64; 3],
    /// [`Placement::input_end`] (`u64::MAX` in 1D).
    pub input_end: u64,
}

impl LaunchMap {
    /// The map of a one-step kernel of `pattern` (the program's) whose block's warps stack
    /// along y where `stacked` says so ([`crate::Layout::stacks_warps`]: 2D windows and
    /// granules in bands, 3D staged planes in numbered blocks).
    pub fn new(pattern: Pattern, stacked: bool) -> LaunchMap {
        let order = match (stacked, pattern.dims()) {
            (true, Dims::Two) => TileOrder::Bands,
            (true, _) => TileOrder::StackedBlocks,
            (false, _) => TileOrder::RowMajor,
        };
        LaunchMap { order, pattern }
    }

    /// The map of a fused launch of `tile` over `launch`, the launch's pattern
    /// ([`FusedTile::launch_pattern`]): 2D strips edges first, else row-major.
    pub fn fused(tile: &FusedTile, launch: Pattern) -> LaunchMap {
        let order = match tile.dims {
            Dims::Two => TileOrder::EdgesFirst(StripGeometry {
                lead: tile.schedule_lead(launch.boundary()),
                elements: tile.elements(),
                width: tile.width,
                shift: launch.shift_along(1),
                box_rows: launch.box_rows().1,
            }),
            _ => TileOrder::RowMajor,
        };
        LaunchMap { order, pattern: launch }
    }

    /// Whether a block's warps stack along y, so the block, not the warp, is numbered.
    pub const fn stacks_warps(&self) -> bool {
        matches!(self.order, TileOrder::Bands | TileOrder::StackedBlocks)
    }

    /// The launch that covers rows `rows` of an output of shape `output` from an input of shape
    /// `input` with kernel `kernel` of the program: every tile's warp, and for the edges kernel
    /// of a fused 2D launch only the blocks of its edge strips (none where every strip is
    /// interior).
    pub fn launch_shape(
        &self,
        kernel: Kernel,
        input: Extent,
        output: Extent,
        rows: OutputRows,
    ) -> Result<Option<LaunchShape>, LengthError> {
        let launched = rows.launched(output);
        let shape = match self.stacks_warps() {
            true => self.pattern.stacked_launch_shape(launched)?,
            false => self.pattern.launch_shape_of(launched)?,
        };
        let TileOrder::EdgesFirst(_) = self.order else { return Ok(Some(shape)) };
        if kernel != Kernel::Edges {
            return Ok(Some(shape));
        }
        let placement = self.placement(&mut IndexRegs::default(), None);
        let Some(edges) = placement.edge_strips else { return Ok(Some(shape)) };
        let thread =
            Thread { block: [0; 3], thread: 0, shape, input, output: rows.given(output), first_row: rows.first };
        let values = placement.program.eval(&thread);
        let blocks = values.get(edges).div_ceil(u64::from(self.pattern.tiles_per_block()));
        // At most the blocks of all strips, which fit the grid.
        let blocks = u32::try_from(blocks).map_or(shape.grid[0], |blocks| shape.grid[0].min(blocks));
        Ok((blocks > 0).then_some(LaunchShape::linear(blocks, shape.threads_per_block)))
    }

    /// Every warp of `launch` (from input `input` to rows `rows` of output `output`) with the
    /// tile the map gives it, block by block (x fastest), warps in block order. Warps past the
    /// last tile are listed too: on the GPU they run and store nothing.
    pub fn warps(
        &self,
        launch: LaunchShape,
        input: Extent,
        output: Extent,
        rows: OutputRows,
    ) -> impl Iterator<Item = PlacedWarp> + '_ {
        let placement = self.placement(&mut IndexRegs::default(), None);
        let (output, first_row) = (rows.given(output), rows.first);
        let [bx, by, bz] = launch.grid;
        let warp = self.pattern.warp();
        let warps = launch.threads_per_block / warp;
        (0..bz).flat_map(move |z| (0..by).flat_map(move |y| (0..bx).map(move |x| [x, y, z]))).flat_map(move |block| {
            let placement = placement.clone();
            (0..warps).map(move |w| {
                let thread = Thread { block, thread: w * warp, shape: launch, input, output, first_row };
                let values = placement.program.eval(&thread);
                let start = placement.start.map(|reg| reg.map_or(0, |reg| values.get(reg)));
                let input_end = placement.input_end.map_or(u64::MAX, |reg| values.get(reg));
                PlacedWarp { block, warp_in_block: w, start, input_end }
            })
        })
    }

    /// The index program that places a thread's warp, its registers taken from `regs`; the
    /// tile's first output along x goes to `start_x` where given (a back end's own register).
    pub fn placement(&self, regs: &mut IndexRegs, start_x: Option<IndexReg>) -> Placement {
        let mut build = Build { regs, program: IndexProgram::default() };
        let start_x = start_x.unwrap_or_else(|| build.regs.u64());
        let pattern = self.pattern;
        let warp_shift = u64::from(pattern.warp().trailing_zeros());
        let tile_x = u64::from(pattern.tile_outputs());
        if pattern.dims() == Dims::One {
            // The prologue has read the block's size into a register of its own.
            let (global, thread) = (build.regs.u64(), build.regs.u64());
            build.push(IndexOp::MulWide { dst: global, a: Given::BlockX.into(), b: Given::BlockThreads.into() });
            build.push(IndexOp::Widen { dst: thread, a: Given::Thread.into() });
            build.arith(Arith::Add, global, global, thread);
            build.arith(Arith::Shr, global, global, Operand::Imm(warp_shift));
            build.arith(Arith::MulLo, start_x, global, Operand::Imm(tile_x));
            let program = build.program;
            let start = [Some(start_x), None, None];
            return Placement { program, start, warp_in_block: None, edge_strips: None, input_end: None };
        }
        let three = pattern.dims() == Dims::Three;
        // Along the outermost axis a tile's input box reaches `below` rows past its last output
        // row: `2r - shift` (r, or 2r under `valid`). Inside `in` and `end + below`, it reads no
        // rule and its output rows end by the launch's last.
        let outer = if three { Axis::Z } else { Axis::Y };
        let below = 2 * pattern.radius().along(outer.index()) - pattern.shift_along(outer.index());
        let input_end =
            build.new_arith(Arith::Add, Given::Extent { axis: outer, output: true }, Operand::Imm(u64::from(below)));
        build.arith(Arith::Min, input_end, input_end, Given::Extent { axis: outer, output: false });
        let (rows, planes) = (u64::from(pattern.rows_per_warp()), u64::from(pattern.planes_per_warp()));
        let per_block = u64::from(pattern.tiles_per_block());
        // `t`: the global warp, or where blocks are numbered the block (3D); unused in bands.
        let t = build.regs.u64();
        let stacked = self.stacks_warps();
        if !stacked {
            let (thread, block_threads) = (build.regs.u64(), build.regs.u32());
            build.push(IndexOp::Read { dst: block_threads, special: Special::BlockThreads });
            build.push(IndexOp::MulWide { dst: t, a: Given::BlockX.into(), b: block_threads.into() });
            build.push(IndexOp::Widen { dst: thread, a: Given::Thread.into() });
            build.arith(Arith::Add, t, t, thread);
            build.arith(Arith::Shr, t, t, Operand::Imm(warp_shift));
        }
        let warp_in_block = stacked.then(|| {
            let w = build.regs.u32();
            build.push(IndexOp::Note(match self.order {
                TileOrder::StackedBlocks => {
                    "staged planes: block b computes block tile b, row-major; its warp w the w-th tile along y".into()
                }
                _ => "2D tiles: block (x, y, z) computes block tile b = x of band y + z * nctaid.y; its warp w the w-th tile along y".into(),
            }));
            build.arith(Arith::Shr, w, Given::Thread, Operand::Imm(warp_shift));
            if three {
                build.push(IndexOp::Widen { dst: t, a: Given::BlockX.into() });
            }
            w
        });
        let (band, tx) = (build.regs.u64(), build.regs.u64());
        let tiles_x = match self.order {
            TileOrder::Bands => {
                let (y, z, bands_y, b) = (build.regs.u32(), build.regs.u32(), build.regs.u32(), build.regs.u32());
                build.push(IndexOp::Read { dst: y, special: Special::Block(Axis::Y) });
                build.push(IndexOp::Read { dst: z, special: Special::Block(Axis::Z) });
                build.push(IndexOp::Read { dst: bands_y, special: Special::Blocks(Axis::Y) });
                build.push(IndexOp::Mad { dst: b, a: z.into(), b: bands_y.into(), c: y.into() });
                build.push(IndexOp::Widen { dst: band, a: b.into() });
                build.push(IndexOp::Widen { dst: tx, a: Given::BlockX.into() });
                None
            }
            _ => {
                let tiles_x = build.tiles(Given::RowLength { output: true }.into(), pattern.tile_outputs());
                build.divide(band, t, tiles_x);
                build.arith(Arith::MulLo, tx, band, tiles_x);
                build.arith(Arith::Sub, tx, t, tx);
                Some(tiles_x)
            }
        };
        build.arith(Arith::MulLo, start_x, tx, Operand::Imm(tile_x));
        let tile_y = build.regs.u64();
        let tile_z = three.then(|| build.regs.u64());
        let out_y: Operand = Given::Extent { axis: Axis::Y, output: true }.into();
        let widened = |build: &mut Build, w: IndexReg| {
            let w64 = build.regs.u64();
            build.push(IndexOp::Widen { dst: w64, a: w.into() });
            w64
        };
        let mut edge_strips = None;
        match (tile_z, self.order, tiles_x) {
            (None, TileOrder::EdgesFirst(strips), Some(tiles_x)) => {
                edge_strips =
                    Some(build.edges_first(pattern, strips, [t, tiles_x, band, tx, input_end], start_x, tile_y));
            }
            (None, ..) => {
                if let Some(w) = warp_in_block {
                    let w64 = widened(&mut build, w);
                    build.push(IndexOp::Mad { dst: band, a: band.into(), b: Operand::Imm(per_block), c: w64.into() });
                }
                build.arith(Arith::MulLo, tile_y, band, Operand::Imm(rows));
            }
            (Some(tile_z), ..) => {
                let tiles_y = match warp_in_block {
                    None => build.tiles(out_y, pattern.rows_per_warp()),
                    Some(_) => build.tiles(out_y, pattern.block_rows()),
                };
                let (tz, ty) = (build.regs.u64(), build.regs.u64());
                build.divide(tz, band, tiles_y);
                build.arith(Arith::MulLo, ty, tz, tiles_y);
                build.arith(Arith::Sub, ty, band, ty);
                if let Some(w) = warp_in_block {
                    let w64 = widened(&mut build, w);
                    build.push(IndexOp::Mad { dst: ty, a: ty.into(), b: Operand::Imm(per_block), c: w64.into() });
                }
                build.arith(Arith::MulLo, tile_y, ty, Operand::Imm(rows));
                build.arith(Arith::MulLo, tile_z, tz, Operand::Imm(planes));
            }
        }
        // Tiles are numbered over the launch's rows, which start at its first row.
        let outer = tile_z.unwrap_or(tile_y);
        build.arith(Arith::Add, outer, outer, Given::FirstRow);
        let start = [Some(start_x), Some(tile_y), tile_z];
        Placement { program: build.program, start, warp_in_block, edge_strips, input_end: Some(input_end) }
    }
}

/// An index program being built.
struct Build<'a> {
    regs: &'a mut IndexRegs,
    program: IndexProgram,
}

impl Build<'_> {
    fn push(&mut self, op: IndexOp) {
        self.program.push(op);
    }

    fn arith(&mut self, op: Arith, dst: IndexReg, a: impl Into<Operand>, b: impl Into<Operand>) {
        self.push(IndexOp::Arith { op, dst, a: a.into(), b: b.into() });
    }

    /// A new u64 register set to `op(a, b)`.
    fn new_arith(&mut self, op: Arith, a: impl Into<Operand>, b: impl Into<Operand>) -> IndexReg {
        let dst = self.regs.u64();
        self.arith(op, dst, a, b);
        dst
    }

    /// A new u64 register set to `a`.
    fn new_move(&mut self, a: impl Into<Operand>) -> IndexReg {
        let dst = self.regs.u64();
        self.push(IndexOp::Move { dst, a: a.into() });
        dst
    }

    fn compare(&mut self, cmp: Compare, a: impl Into<Operand>, b: impl Into<Operand>) -> IndexReg {
        let dst = self.regs.pred();
        self.push(IndexOp::Compare { cmp, dst, a: a.into(), b: b.into() });
        dst
    }

    fn select(&mut self, dst: IndexReg, a: impl Into<Operand>, b: impl Into<Operand>, pred: IndexReg) {
        self.push(IndexOp::Select { dst, a: a.into(), b: b.into(), pred });
    }

    /// `dst = a / b`.
    fn divide(&mut self, dst: IndexReg, a: impl Into<Operand>, b: impl Into<Operand>) {
        let (either, small) = (self.regs.u64(), self.regs.pred());
        let (a32, b32, quotient) = (self.regs.u32(), self.regs.u32(), self.regs.u32());
        let scratch = DivideScratch { either, small, a: a32, b: b32, quotient };
        self.push(IndexOp::Divide { dst, a: a.into(), b: b.into(), scratch });
    }

    /// Tiles of `per_tile` along a length `len`: `ceil(len / per_tile)`, by a shift where
    /// `per_tile` is a power of two.
    fn tiles(&mut self, len: Operand, per_tile: u32) -> IndexReg {
        let n = self.new_arith(Arith::Add, len, Operand::Imm(u64::from(per_tile) - 1));
        match per_tile.is_power_of_two() {
            true => self.arith(Arith::Shr, n, n, Operand::Imm(u64::from(per_tile.trailing_zeros()))),
            false => {
                let by = self.new_move(Operand::Imm(u64::from(per_tile)));
                self.divide(n, n, by);
            }
        }
        n
    }

    /// Which strip global warp `t` of a fused 2D launch computes ([`TileOrder::EdgesFirst`]);
    /// `band` and `tx` hold `t`'s row-major band and column (`t` div and mod `tiles_x`),
    /// `input_end` [`Placement::input_end`]. Returns the register of the count of edge strips.
    ///
    /// The columns of interior strips are `a..c` and their bands `p..q`: `a` the first column
    /// whose input starts at or after x = 0, `c` past the last that ends at or before `N`
    /// (none where rows are not whole vectors), `p` and `q` likewise along y. The strips
    /// outside those bands come first (row-major: warp `t` there is band `t div tiles_x`,
    /// skipping the interior bands), then the edge columns of the interior bands (band after
    /// band), then the interior (band after band). Warps past the last strip keep a band past
    /// the output.
    fn edges_first(
        &mut self,
        pattern: Pattern,
        strips: StripGeometry,
        [t, tiles_x, band, tx, input_end]: [IndexReg; 5],
        start_x: IndexReg,
        tile_y: IndexReg,
    ) -> IndexReg {
        let (outputs, rows) = (u64::from(pattern.tile_outputs()), u64::from(pattern.rows_per_warp()));
        self.push(IndexOp::Note(
            "fused strips: the edge strips first, then the interior strips, each row-major".into(),
        ));
        // Along y the strips number the launch's rows, from its first row: counted from there,
        // a strip inside `0..input_end - first_row` is inside the input and stores only the
        // launch's rows (one that starts above the first row but inside the input is counted an
        // edge strip, which is only slower).
        let out_rows = self.new_arith(Arith::Sub, Given::Extent { axis: Axis::Y, output: true }, Given::FirstRow);
        let in_rows = self.new_arith(Arith::Sub, input_end, Given::FirstRow);
        let bands = self.tiles(out_rows.into(), pattern.rows_per_warp());
        // `first..past` of the positions `i` along an axis of `count` tiles whose input
        // `i * step - before ..+ len` lies in `0..n`: the first is ceil(before / step), the
        // last (n + before - len) div step, none if n + before < len.
        let inside =
            |b: &mut Self, count: IndexReg, step: u64, before: u64, len: u64, n: Operand| -> (IndexReg, IndexReg) {
                let first = b.new_arith(Arith::Min, count, Operand::Imm(before.div_ceil(step)));
                let past = b.new_arith(Arith::Add, n, Operand::Imm(before));
                let short = b.compare(Compare::Lt, past, Operand::Imm(len));
                b.arith(Arith::Sub, past, past, Operand::Imm(len));
                let by = b.new_move(Operand::Imm(step));
                b.divide(past, past, by);
                b.arith(Arith::Add, past, past, Operand::Imm(1));
                b.select(past, Operand::Imm(0), past, short);
                b.arith(Arith::Min, past, past, count);
                b.arith(Arith::Max, past, past, first);
                (first, past)
            };
        let (lead, elements) = (u64::from(strips.lead), u64::from(strips.elements));
        let (a, c) = inside(self, tiles_x, outputs, lead, elements, Given::RowLength { output: false }.into());
        if strips.width > 1 {
            // Rows not whole vectors: no strip is interior.
            let rest = self.regs.u64();
            let aligned = self.regs.pred();
            self.arith(Arith::And, rest, Given::RowLength { output: false }, Operand::Imm(u64::from(strips.width) - 1));
            self.push(IndexOp::Compare { cmp: Compare::Eq, dst: aligned, a: rest.into(), b: Operand::Imm(0) });
            self.select(c, c, a, aligned);
        }
        let (p, q) = inside(self, bands, rows, u64::from(strips.shift), u64::from(strips.box_rows), in_rows.into());
        let columns = self.new_arith(Arith::Sub, c, a);
        let interior_bands = self.new_arith(Arith::Sub, q, p);
        let edge_columns = self.new_arith(Arith::Sub, tiles_x, columns);
        // Strips of the bands outside p..q, then the edge columns of p..q's, then all strips.
        let outer = self.new_arith(Arith::Sub, bands, interior_bands);
        self.arith(Arith::MulLo, outer, outer, tiles_x);
        let edges = self.new_arith(Arith::MulLo, interior_bands, edge_columns);
        self.arith(Arith::Add, edges, edges, outer);
        let all = self.new_arith(Arith::MulLo, bands, tiles_x);
        // Outer bands: t's row-major band, past p..q once it reaches p.
        let y = self.regs.u64();
        let after = self.compare(Compare::Ge, band, p);
        self.arith(Arith::Add, y, band, interior_bands);
        self.select(y, y, band, after);
        let x = self.new_move(tx);
        // Divides t - from by max(by, 1) into band first + quotient, column remainder.
        let place = |b: &mut Self, from: IndexReg, by: IndexReg, first: IndexReg| -> (IndexReg, IndexReg) {
            let e = b.new_arith(Arith::Sub, t, from);
            let d = b.new_arith(Arith::Max, by, Operand::Imm(1));
            let (quotient, column) = (b.regs.u64(), b.regs.u64());
            b.divide(quotient, e, d);
            b.arith(Arith::MulLo, column, quotient, d);
            b.arith(Arith::Sub, column, e, column);
            b.arith(Arith::Add, quotient, quotient, first);
            (quotient, column)
        };
        // Edge columns of p..q's bands: the j-th is column j left of a, else j + columns.
        let (edge_band, j) = place(self, outer, edge_columns, p);
        let right = self.regs.pred();
        let edge_x = self.new_arith(Arith::Add, j, columns);
        self.push(IndexOp::Compare { cmp: Compare::Ge, dst: right, a: j.into(), b: a.into() });
        self.select(edge_x, edge_x, j, right);
        let (interior_band, interior_x) = place(self, edges, columns, p);
        self.arith(Arith::Add, interior_x, interior_x, a);
        for (from, (by, bx)) in [(outer, (edge_band, edge_x)), (edges, (interior_band, interior_x))] {
            let past = self.compare(Compare::Ge, t, from);
            self.select(y, by, y, past);
            self.select(x, bx, x, past);
        }
        let beyond = self.compare(Compare::Ge, t, all);
        self.select(y, bands, y, beyond);
        self.select(x, Operand::Imm(0), x, beyond);
        self.arith(Arith::MulLo, start_x, x, Operand::Imm(outputs));
        self.arith(Arith::MulLo, tile_y, y, Operand::Imm(rows));
        edges
    }
}

/// One thread of a launch, as an index program sees it.
struct Thread {
    block: [u32; 3],
    thread: u32,
    shape: LaunchShape,
    input: Extent,
    /// The output's shape as the kernel is given it: ending at the launch's last row.
    output: Extent,
    first_row: usize,
}

impl IndexInputs for Thread {
    fn special(&self, special: Special) -> u64 {
        u64::from(match special {
            Special::BlockThreads => self.shape.threads_per_block,
            Special::Block(axis) => self.block[axis.index()],
            Special::Blocks(axis) => self.shape.grid[axis.index()],
        })
    }

    fn given(&self, given: Given) -> u64 {
        match given {
            Given::Thread => u64::from(self.thread),
            Given::BlockX => u64::from(self.block[0]),
            Given::BlockThreads => u64::from(self.shape.threads_per_block),
            Given::RowLength { output: false } => self.input.along(0) as u64,
            Given::RowLength { output: true } => self.output.along(0) as u64,
            // 1 along axes a grid does not have, as the kernel's prologue sets them.
            Given::Extent { axis, output } => {
                let shape = if output { self.output } else { self.input };
                match axis.index() < shape.dims().count() {
                    true => shape.along(axis.index()) as u64,
                    false => 1,
                }
            }
            Given::FirstRow => self.first_row as u64,
        }
    }
}

impl std::fmt::Display for TileOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TileOrder::RowMajor => f.write_str("row-major, one tile per warp"),
            TileOrder::Bands => {
                f.write_str("2D bands: block (x, y, z) a block tile of column x, band y + z * blocks.y")
            }
            TileOrder::StackedBlocks => f.write_str("stacked blocks: block b block tile b, row-major"),
            TileOrder::EdgesFirst(s) => write!(
                f,
                "fused strips, edge strips first (lead {}, {} elements, {}-element vectors, shift {}, {} box rows)",
                s.lead, s.elements, s.width, s.shift, s.box_rows
            ),
        }
    }
}
