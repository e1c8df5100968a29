//! The CPU emulation of a machine program: every logical warp (tile), its lanes in lockstep,
//! each operation applied to all lanes before the next, shuffles as permutations. Chunks of
//! whole blocks run on every core; their stores land in the order one thread running the warps
//! in turn would make them, so the outputs do not depend on the thread count.
//! It runs the machine program the PTX back end prints, statement for statement: the path a
//! tile takes at each branch, vector accesses at the addresses the PTX computes, the stage at
//! its padded positions, divisions by constants through their fast path and its check. A
//! schedule or lowering bug shows up here, on a machine without a GPU, as a mismatch against
//! the CPU reference, and an access the GPU would make out of bounds or misaligned as an error.

use std::ops::Range;

use crate::body::BinaryOp;
use crate::boundary::Boundary;
use crate::error::{EmulationError, Error};
use crate::geometry::{Dims, Extent, MAX_DIMS};
use crate::launch_map::{OutputRows, PlacedWarp};
use crate::machine::{Division, Op, Side, Stmt, TileTest, WarpStage};
use crate::ops;
use crate::program::Reg;
use crate::program::{Instr, WarpProgram};
use crate::ring::{PlaneRing, RingPart};
use crate::scalar::{Element, Fields, Scalar, ScalarType};
use crate::stencil::first_len;

impl WarpProgram {
    /// Computes every output of the 1D input fields `inputs` (one slice per field, all of one
    /// length) into `output`, the program's one output field (which must have the exact output
    /// length).
    pub fn emulate<T: Element>(&self, inputs: &[&[T]], output: &mut [T], params: &[Scalar]) -> Result<(), Error> {
        self.emulate_outputs(inputs, &mut [output], params)
    }

    /// [`WarpProgram::emulate`] into `outputs`, one slice per output field, each of the exact
    /// output length.
    pub fn emulate_outputs<T: Element>(
        &self,
        inputs: &[&[T]],
        outputs: &mut [&mut [T]],
        params: &[Scalar],
    ) -> Result<(), Error> {
        self.emulate_grid_outputs(inputs, Extent::x(first_len(inputs)), outputs, params)
    }

    /// Computes every output of `inputs`, one grid of shape `shape` per input field, into
    /// `output`, the program's one output field ([`WarpProgram::emulate_grid_outputs`]).
    pub fn emulate_grid<T: Element>(
        &self,
        inputs: &[&[T]],
        shape: Extent,
        output: &mut [T],
        params: &[Scalar],
    ) -> Result<(), Error> {
        self.emulate_grid_outputs(inputs, shape, &mut [output], params)
    }

    /// Computes every output of `inputs`, one grid of shape `shape` per input field, into
    /// `outputs`, one grid per output field: each kernel of the program over the blocks of its
    /// launch, each block's warps on the tiles the launch map gives them
    /// ([`crate::launch_map`]), so a map that loses or repeats a tile fails here as it would on
    /// the GPU. Warps past the last tile are skipped: on the GPU they run but store nothing.
    pub fn emulate_grid_outputs<T: Element>(
        &self,
        inputs: &[&[T]],
        shape: Extent,
        outputs: &mut [&mut [T]],
        params: &[Scalar],
    ) -> Result<(), Error> {
        self.emulate_grid_rows(inputs, shape, None, outputs, params)
    }

    /// [`WarpProgram::emulate_grid_outputs`] over rows `rows` of the outputs along the
    /// outermost axis (every row for `None`), as a launch over those rows computes them
    /// ([`OutputRows`]): each output is a whole grid, and its other rows are left as they were.
    pub fn emulate_grid_rows<T: Element>(
        &self,
        inputs: &[&[T]],
        shape: Extent,
        rows: Option<Range<usize>>,
        outputs: &mut [&mut [T]],
        params: &[Scalar],
    ) -> Result<(), Error> {
        let (pattern, declared) = (self.pattern, self.declared);
        let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
        let out_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
        let out_shape = declared.check_buffers(shape, &lens, self.fields, &out_lens, self.output_fields)?;
        let rows = match rows {
            Some(rows) => OutputRows::of(out_shape, rows.start, rows.end)?,
            None => OutputRows::all(out_shape),
        };
        let (shape, out_shape) = (declared.lifted_shape(shape), declared.lifted_shape(out_shape));
        if out_shape.len() == Some(0) || rows.is_empty() {
            return Ok(());
        }
        let out_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
        let fields = T::fields(inputs);
        let tile = || Tile {
            program: self,
            inputs: fields,
            stores: Vec::new(),
            out_lens: &out_lens,
            in_shape: innermost_first(shape),
            out_shape: innermost_first(rows.given(out_shape)),
            params,
            warp: pattern.warp() as usize,
            origin: [0; MAX_DIMS],
            input_end: i64::MAX,
            warp_in_block: 0,
            regs: vec![0u64; self.reg_types().len() * pattern.warp() as usize],
            stages: vec![Vec::new(); self.fields as usize],
            stage_row: 0,
            warp_stage: None,
            ring: vec![Vec::new(); self.fields as usize],
            ring_phase: 0,
            fetched: vec![Vec::new(); self.fields as usize],
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        for &kernel in self.machine.kernels() {
            let Some(launch) = self.launch.launch_shape(kernel, shape, out_shape, rows)? else { continue };
            let body = self.machine.kernel_body(kernel);
            let warps: Vec<PlacedWarp> = self.launch.warps(launch, shape, out_shape, rows).collect();
            // Rounds of one chunk per thread, each chunk's stores applied in the chunks' order
            // after the round: the outputs come out as one thread running every warp in turn
            // would leave them, and the stores held at once stay a few chunks' worth.
            let chunks = chunks_of_blocks(&warps, threads);
            for round in chunks.chunks(threads) {
                let run = |warps: &[PlacedWarp]| {
                    let mut tile = tile();
                    tile.warps(warps, &body).map(|()| tile.stores)
                };
                let run = &run;
                let logs: Vec<Result<Vec<Store>, Error>> = if round.len() == 1 {
                    vec![run(round[0])]
                } else {
                    std::thread::scope(|scope| {
                        let handles: Vec<_> = round.iter().map(|&warps| scope.spawn(move || run(warps))).collect();
                        handles
                            .into_iter()
                            .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                            .collect()
                    })
                };
                for log in logs {
                    for Store { field, index, bits } in log? {
                        outputs[field as usize][index] = T::from_bits(bits);
                    }
                }
            }
        }
        Ok(())
    }
}

/// One element a warp stores: output field, position, bits.
struct Store {
    field: u32,
    index: usize,
    bits: u64,
}

/// Fewer warps than this run on the calling thread: a thread costs about as much to start as
/// emulating a few warps.
const WARPS_PER_CHUNK: usize = 64;

/// The launch's warps in chunks of whole blocks (a block's warps share its stage), about
/// [`WARPS_PER_CHUNK`] or more each, at most `4 x threads` of them so that a round's chunks
/// take about as long as each other.
fn chunks_of_blocks(warps: &[PlacedWarp], threads: usize) -> Vec<&[PlacedWarp]> {
    let size = (warps.len() / (4 * threads).max(1)).max(WARPS_PER_CHUNK);
    let mut chunks = Vec::new();
    let mut rest = warps;
    while rest.len() > size {
        // The chunk ends where the next block starts.
        let end = (size..rest.len()).find(|&i| rest[i].warp_in_block == 0).unwrap_or(rest.len());
        let (chunk, tail) = rest.split_at(end);
        chunks.push(chunk);
        rest = tail;
    }
    if !rest.is_empty() {
        chunks.push(rest);
    }
    chunks
}

impl Tile<'_> {
    /// Runs `body` for each of `warps` in turn, where the launch map placed it.
    fn warps(&mut self, warps: &[PlacedWarp], body: &[Stmt]) -> Result<(), Error> {
        let program = self.program;
        for warp in warps {
            // Warps past the last tile run on the GPU and store nothing; a warp of a ring of
            // staged planes runs wherever it is, as it stages planes for its block.
            let past = warp.start.iter().zip(self.out_shape).any(|(&start, len)| start >= len as u64);
            if past && program.ring.is_none() {
                continue;
            }
            self.warp_in_block = warp.warp_in_block as usize;
            self.origin = warp.start.map(|start| start as i64);
            self.input_end = i64::try_from(warp.input_end).unwrap_or(i64::MAX);
            if let Some(ring) = &program.ring {
                // Each warp's run stages the block's ring itself, which every warp of the block
                // would find the same.
                self.ring =
                    vec![vec![None; (ring.field_bytes() / ring.element_bytes) as usize]; program.fields as usize];
                self.ring_phase = 0;
            }
            self.stmts(body)?;
        }
        Ok(())
    }
}

/// A shape's lengths innermost (x) first, 1 along dimensions it does not have.
fn innermost_first(shape: Extent) -> [usize; MAX_DIMS] {
    let mut out = [1; MAX_DIMS];
    for (slot, len) in out.iter_mut().zip(shape.components().into_iter().rev()) {
        *slot = len;
    }
    out
}

/// One tile's state while its warp runs.
struct Tile<'a> {
    program: &'a WarpProgram,
    /// One slice per input field.
    inputs: Fields<'a>,
    /// What the warps store, in order, and each output field's length.
    stores: Vec<Store>,
    out_lens: &'a [usize],
    /// The input's and the output's shapes, innermost first.
    in_shape: [usize; MAX_DIMS],
    out_shape: [usize; MAX_DIMS],
    params: &'a [Scalar],
    warp: usize,
    /// The tile's first output along each dimension, innermost first.
    origin: [i64; MAX_DIMS],
    /// [`PlacedWarp::input_end`].
    input_end: i64,
    warp_in_block: usize,
    /// `regs[r * warp + lane]`: one flat array keeps the lockstep loop cache-friendly.
    regs: Vec<u64>,
    /// Shared memory, per input field: the block's stage (strategy shared_memory, refilled when
    /// a block starts) or the warp's region (staged windows, refilled for every tile), by
    /// element.
    stages: Vec<Vec<u64>>,
    /// Elements per input row in the block's stage.
    stage_row: usize,
    warp_stage: Option<WarpStage>,
    /// Staged planes: each input field's ring of planes by element (`None` until put), its
    /// phase, and what the last plane fetch of each field read.
    ring: Vec<Vec<Option<u64>>>,
    ring_phase: u32,
    fetched: Vec<Vec<u64>>,
}

impl Tile<'_> {
    fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), Error> {
        for stmt in stmts {
            match stmt {
                Stmt::Op(op) => self.op(op)?,
                Stmt::Branch { test, taken, fallback } => {
                    let arm = if self.holds(*test) { taken } else { fallback };
                    self.stmts(arm)?;
                }
                Stmt::Loop { times, body } => {
                    for _ in 0..*times {
                        self.stmts(body)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Input index along x of tile element 0.
    fn origin_x(&self) -> i64 {
        self.origin[0] - self.program.schedule.lead as i64
    }

    /// The input coordinates along y and z of input row `row` of the tile's current step.
    fn input_row(&self, row: u32) -> [i64; 2] {
        let pattern = self.program.pattern;
        let (_, rows) = pattern.box_rows();
        let (iy, iz) = ((row % rows) as i64, (row / rows) as i64);
        [self.origin[1] + iy - pattern.shift_along(1) as i64, self.origin[2] + iz - pattern.shift_along(2) as i64]
    }

    /// The output coordinates along y and z of output row `row` of the tile's current step.
    fn output_row(&self, row: u32) -> [i64; 2] {
        let rows = self.program.pattern.rows_per_warp();
        [self.origin[1] + (row % rows) as i64, self.origin[2] + (row / rows) as i64]
    }

    /// Whether 2D and 3D rows keep vectors aligned: each row a whole number of vectors long.
    fn rows_aligned(&self, len: usize) -> bool {
        self.program.pattern.dims() == Dims::One || len % self.program.machine.width as usize == 0
    }

    fn holds(&self, test: TileTest) -> bool {
        let pattern = self.program.pattern;
        match test {
            TileTest::Inside { elements } => {
                let x = self.origin_x();
                let along = |start: i64, len: u32, n: usize| start >= 0 && start + len as i64 <= n as i64;
                along(x, elements, self.in_shape[0]) && self.rows_inside() && self.rows_aligned(self.in_shape[0])
            }
            TileTest::RowsInside => self.rows_inside() && self.in_shape[0] % self.program.machine.width as usize == 0,
            TileTest::Whole { row } => {
                let [y, z] = self.output_row(row);
                self.origin[0] + pattern.tile_outputs() as i64 <= self.out_shape[0] as i64
                    && y < self.out_shape[1] as i64
                    && z < self.out_shape[2] as i64
                    && self.rows_aligned(self.out_shape[0])
            }
        }
    }

    /// Whether the whole tile's input box lies inside the grid along y and z (every plane a
    /// streaming tile will reach), ending along the outermost axis by the warp's `input_end`.
    fn rows_inside(&self) -> bool {
        let (planes, rows) = self.program.pattern.box_rows();
        let [y, z] = self.input_row(0);
        let along = |start: i64, len: u32, n: i64| start >= 0 && start + len as i64 <= n;
        let three = self.program.pattern.dims() == Dims::Three;
        let end = |axis: usize| match (axis == 2) == three {
            true => self.input_end.min(self.in_shape[axis] as i64),
            false => self.in_shape[axis] as i64,
        };
        along(y, rows, end(1)) && along(z, planes, end(2))
    }

    fn set(&mut self, reg: u32, lane: usize, bits: u64) {
        self.regs[reg as usize * self.warp + lane] = bits;
    }

    fn get(&self, reg: u32, lane: usize) -> u64 {
        self.regs[reg as usize * self.warp + lane]
    }

    /// Input element `x` of input row `row` of the tile of input field `field` under the
    /// boundary rule in each dimension (zero outside for `valid` and `zero`).
    fn read_bounded(&self, field: u32, row: u32, x: i64) -> u64 {
        let [y, z] = self.input_row(row);
        self.read_point(field, [x, y, z])
    }

    /// Input elements `x..x + width` of input row `row` of input field `field` of one vector
    /// access, which must lie inside the input and start at a multiple of `width` (so the
    /// address is aligned when the buffer is).
    fn read_vector(&self, field: u32, row: u32, x: i64, width: usize, what: &'static str) -> Result<Vec<u64>, Error> {
        let [y, z] = self.input_row(row);
        let [nx, ny, nz] = self.in_shape.map(|n| n as i64);
        let linear = (z * ny + y) * nx + x;
        let inside = (0..nz).contains(&z) && (0..ny).contains(&y) && x >= 0 && x + width as i64 <= nx;
        if !inside || linear as usize % width != 0 {
            let (first, len) = (linear, self.inputs.len(field as usize));
            return Err(EmulationError::Access { what, first, width, len }.into());
        }
        let mut bits = Vec::with_capacity(width);
        self.inputs.extend_bits(field as usize, linear as usize, width, &mut bits);
        Ok(bits)
    }

    /// The output position of element `x` of output row `row`, if it exists.
    fn output_at(&self, row: u32, x: i64) -> Option<usize> {
        let [y, z] = self.output_row(row);
        let [nx, ny, nz] = self.out_shape.map(|n| n as i64);
        let inside = (0..nx).contains(&x) && (0..ny).contains(&y) && (0..nz).contains(&z);
        inside.then_some(((z * ny + y) * nx + x) as usize)
    }

    fn op(&mut self, op: &Op) -> Result<(), Error> {
        let program = self.program;
        let warp = self.warp;
        let tile_outputs = program.pattern.tile_outputs() as usize;
        match op {
            Op::Compute(instr) => self.compute(instr),
            Op::Load { dst, at, lanes, field, row, .. } => {
                for lane in 0..warp {
                    let x = self.origin_x() + at.element(lane as u32) as i64;
                    let inside = (lanes.0 as usize..lanes.1 as usize).contains(&lane);
                    let bits = if inside { self.read_bounded(*field, *row, x) } else { 0 };
                    self.set(*dst, lane, bits);
                }
            }
            Op::LoadVector { dsts, at, lanes, field, row, .. } => {
                for lane in 0..warp {
                    let values = match (lanes.0 as usize..lanes.1 as usize).contains(&lane) {
                        true => {
                            let x = self.origin_x() + at.element(lane as u32) as i64;
                            self.read_vector(*field, *row, x, dsts.len(), "interior vector load")?
                        }
                        false => vec![0; dsts.len()],
                    };
                    for (&dst, bits) in dsts.iter().zip(values) {
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::LoadVectorRule { dsts, at, lanes, field, row, .. } => {
                let (width, n) = (dsts.len(), self.in_shape[0]);
                for lane in 0..warp {
                    let values = match (lanes.0 as usize..lanes.1 as usize).contains(&lane) {
                        true => {
                            // The PTX reads one vector at a multiple of its width of a row inside
                            // the grid: wholly inside the row or wholly outside it only where
                            // rows are whole vectors.
                            let x = self.origin_x() + at.element(lane as u32) as i64;
                            let [y, z] = self.input_row(*row);
                            let row_inside =
                                (0..self.in_shape[1] as i64).contains(&y) && (0..self.in_shape[2] as i64).contains(&z);
                            if !row_inside || n % width != 0 || x.rem_euclid(width as i64) != 0 {
                                let len = self.inputs.len(*field as usize);
                                return Err(EmulationError::Access {
                                    what: "boundary vector load",
                                    first: x,
                                    width,
                                    len,
                                }
                                .into());
                            }
                            (0..width as i64).map(|k| self.read_bounded(*field, *row, x + k)).collect()
                        }
                        false => vec![0; width],
                    };
                    for (&dst, bits) in dsts.iter().zip(values) {
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::ReadStage { dsts, at, field, .. } => {
                let stage = self.warp_stage.ok_or(EmulationError::StageUnwritten)?;
                for lane in 0..warp {
                    let position = stage.read_position(lane as u32, at.base) as usize;
                    for (k, &dst) in dsts.iter().enumerate() {
                        let bits =
                            *self.stages[*field as usize].get(position + k).ok_or(EmulationError::StageUnwritten)?;
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::StageBlock { lead, elements, field } => {
                // In 1D the block's first tile fills it and the others find it filled; in 2D
                // and 3D each warp fills its own box.
                if self.warp_in_block == 0 || program.pattern.dims() != Dims::One {
                    let first = self.origin[0] - *lead as i64;
                    let rows = program.pattern.step().input_rows();
                    let read = |(row, x)| self.read_bounded(*field, row, x);
                    self.stages[*field as usize] = (0..rows)
                        .flat_map(|row| (0..*elements as i64).map(move |j| (row, first + j)))
                        .map(read)
                        .collect();
                    self.stage_row = *elements as usize;
                }
            }
            Op::Shared { dst, at, field, row } => {
                let warp_offset =
                    if program.pattern.dims() == Dims::One { self.warp_in_block * tile_outputs } else { 0 };
                let base = *row as usize * self.stage_row + warp_offset;
                for lane in 0..warp {
                    let bits = *self.stages[*field as usize]
                        .get(base + at.element(lane as u32) as usize)
                        .ok_or(EmulationError::StageUnwritten)?;
                    self.set(*dst, lane, bits);
                }
            }
            Op::StageWarp { stage, field } => self.stage_warp(stage, *field)?,
            Op::Divisions(run) => self.divisions(run),
            Op::Store { src, field, at, row, .. } => {
                for lane in 0..warp {
                    if let Some(i) = self.output_at(*row, self.origin[0] + at.element(lane as u32) as i64) {
                        self.stores.push(Store { field: *field, index: i, bits: self.get(*src, lane) });
                    }
                }
            }
            Op::Carry(moves) => {
                for &(dst, src) in moves {
                    for lane in 0..warp {
                        let bits = self.get(src, lane);
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::Advance => self.origin[2] += 1,
            Op::Neighbour { dst, src, from } => {
                for lane in 0..warp {
                    let source = match from {
                        Side::Before => lane.checked_sub(1),
                        Side::After => Some(lane + 1).filter(|&l| l < warp),
                    };
                    let bits = self.get(*src, source.unwrap_or(lane));
                    self.set(*dst, lane, bits);
                }
            }
            Op::StepRule { values, dsts } => self.step_rule(values, dsts),
            Op::StoreOwned { srcs, field, lead, width, row } => {
                self.store_owned(srcs, *field, *lead, *width as usize, *row)?
            }
            Op::Stream { axis, by } => self.origin[axis.index()] += i64::from(*by),
            Op::RowRule { row, window, at, first } => self.row_rule(row, window, *at, *first),
            Op::PlaneRowsRule { rows, first, dsts } => self.plane_rows_rule(rows, *first, dsts),
            Op::PlaneRule { planes, first } => self.plane_rule(planes, *first),
            Op::FetchPlane { plane, field } => self.fetch_plane(*plane, *field)?,
            Op::PutPlane { slot, field } => {
                let ring = self.plane_ring()?;
                let start = ring.position(ring.slot(self.ring_phase, *slot), 0, 0) as usize;
                let values = std::mem::take(&mut self.fetched[*field as usize]);
                let slot = ring.slot(self.ring_phase, *slot);
                let (width, side) = (ring.width as usize, ring.side as usize);
                let (heads, tails) = (
                    ring.part_start(RingPart::Heads, slot, 0) as usize,
                    ring.part_start(RingPart::Tails, slot, 0) as usize,
                );
                let field_ring = &mut self.ring[*field as usize];
                for (c, vector) in values.chunks(width).enumerate() {
                    for (k, &bits) in vector.iter().enumerate() {
                        field_ring[start + c * width + k] = Some(bits);
                    }
                    for k in 0..side {
                        field_ring[heads + c * side + k] = Some(vector[k]);
                        field_ring[tails + c * side + k] = Some(vector[width - side + k]);
                    }
                }
            }
            // The emulator runs one warp at a time: every other warp has passed the barrier.
            Op::BlockBarrier => {}
            // A hint to L2: no register and no output changes.
            Op::PrefetchL2 { .. } => {}
            Op::ReadRing { dsts, at, field, row, part, .. } => {
                let ring = self.plane_ring()?;
                let rows = program.pattern.box_rows().1;
                let (z, y) = (row / rows, row % rows);
                let start = ring.part_start(
                    *part,
                    ring.slot(self.ring_phase, z),
                    self.warp_in_block as u32 * ring.rows_per_warp + y,
                ) as usize;
                let len = dsts.len() as u32;
                for lane in 0..warp {
                    let e = at.element(lane as u32);
                    if e + len > ring.row_elements {
                        return Err(EmulationError::StageOverflow {
                            position: (e + len - 1) as usize,
                            size: ring.row_elements,
                        }
                        .into());
                    }
                    let offset = ring.part_offset(*part, e) as usize;
                    for (k, &dst) in dsts.iter().enumerate() {
                        let bits = self.ring[*field as usize]
                            .get(start + offset + k)
                            .copied()
                            .flatten()
                            .ok_or(EmulationError::StageUnwritten)?;
                        self.set(dst, lane, bits);
                    }
                }
            }
            Op::TurnRing => {
                let ring = self.plane_ring()?;
                self.ring_phase = (self.ring_phase + 1) % ring.slots;
            }
            Op::StoreVector { srcs, field, at, row, .. } => {
                let output = *field as usize;
                for lane in 0..warp {
                    let x = self.origin[0] + at.element(lane as u32) as i64;
                    let (first, last) = (self.output_at(*row, x), self.output_at(*row, x + srcs.len() as i64 - 1));
                    let i = match (first, last) {
                        (Some(i), Some(_)) if i % srcs.len() == 0 => i,
                        _ => {
                            let len = self.out_lens[output];
                            let (first, width) = (first.map_or(x, |i| i as i64), srcs.len());
                            return Err(
                                EmulationError::Access { what: "whole-tile vector store", first, width, len }.into()
                            );
                        }
                    };
                    for (k, &src) in srcs.iter().enumerate() {
                        self.stores.push(Store { field: *field, index: i + k, bits: self.get(src, lane) });
                    }
                }
            }
        }
        Ok(())
    }

    /// Fused time steps: the boundary rule on the step's `values` (lane `l`'s element `j` is
    /// tile element `l * k + j`), into `dsts`. Under `clamp` each edge value comes from the
    /// element at the edge's index clamped into the tile, as the PTX broadcasts it.
    fn step_rule(&mut self, values: &[Reg], dsts: &[Reg]) {
        let (k, warp) = (values.len() as i64, self.warp as i64);
        let (origin, n) = (self.origin_x(), self.in_shape[0] as i64);
        let element_at = |tile: &Self, g: i64| {
            let e = (g - origin).clamp(0, warp * k - 1);
            tile.get(values[(e % k) as usize], (e / k) as usize)
        };
        let (first, last) = (element_at(self, 0), element_at(self, n - 1));
        let boundary = self.program.pattern.boundary();
        for lane in 0..self.warp {
            for (j, (&value, &dst)) in values.iter().zip(dsts).enumerate() {
                let g = origin + lane as i64 * k + j as i64;
                let bits = match (boundary, g < 0, g >= n) {
                    (_, false, false) => self.get(value, lane),
                    (Boundary::Clamp, true, _) => first,
                    (Boundary::Clamp, _, true) => last,
                    _ => 0,
                };
                self.set(dst, lane, bits);
            }
        }
    }

    /// Fused time steps in 2D: the boundary rule along y on a step's new row ([`Op::RowRule`]).
    fn row_rule(&mut self, row: &[Reg], window: &[Vec<Reg>], at: u32, first: bool) {
        let ny = self.in_shape[1] as i64;
        let y = self.input_row(at)[0];
        let copy = |emulator: &mut Self, dsts: &[Reg], srcs: Option<&[Reg]>| {
            for lane in 0..emulator.warp {
                for (e, &d) in dsts.iter().enumerate() {
                    let bits = srcs.map_or(0, |srcs| emulator.get(srcs[e], lane));
                    emulator.set(d, lane, bits);
                }
            }
        };
        match self.program.pattern.boundary() {
            Boundary::Zero if !(0..ny).contains(&y) => copy(self, row, None),
            Boundary::Clamp if y >= ny => {
                if let Some(newest) = window.last() {
                    copy(self, row, Some(newest));
                }
            }
            Boundary::Clamp if first && y == 0 => {
                for above in window {
                    copy(self, above, Some(row));
                }
            }
            _ => {}
        }
    }

    /// Fused time steps in 3D: a plane's box rows `first..` read through the boundary rule along y.
    fn plane_rows_rule(&mut self, rows: &[Vec<Reg>], first: u32, dsts: &[Vec<Reg>]) {
        let ny = self.in_shape[1] as i64;
        let y0 = self.input_row(first)[0];
        let boundary = self.program.pattern.boundary();
        for (j, dst) in dsts.iter().enumerate() {
            let y = y0 + j as i64;
            let source = match (boundary, (0..ny).contains(&y)) {
                (_, true) => Some(&rows[j]),
                (Boundary::Clamp, false) => Some(rows.get((y.clamp(0, ny - 1) - y0) as usize).unwrap_or(&rows[j])),
                _ => None,
            };
            for lane in 0..self.warp {
                for (e, &d) in dst.iter().enumerate() {
                    let bits = source.map_or(0, |row| self.get(row[e], lane));
                    self.set(d, lane, bits);
                }
            }
        }
    }

    /// Fused time steps in 3D: box planes `first..` read through the boundary rule along z, in
    /// place (the planes at the edges it copies lie inside, so no copy reads a changed plane).
    fn plane_rule(&mut self, planes: &[Vec<Reg>], first: u32) {
        let nz = self.in_shape[2] as i64;
        let z0 = self.origin[2] + first as i64 - self.program.pattern.shift_along(2) as i64;
        let boundary = self.program.pattern.boundary();
        for (j, plane) in planes.iter().enumerate() {
            let z = z0 + j as i64;
            let source = match (boundary, (0..nz).contains(&z)) {
                (_, true) => continue,
                (Boundary::Clamp, false) => match planes.get((z.clamp(0, nz - 1) - z0) as usize) {
                    Some(edge) => Some(edge),
                    None => continue,
                },
                _ => None,
            };
            for lane in 0..self.warp {
                for (e, &d) in plane.iter().enumerate() {
                    let bits = source.map_or(0, |edge| self.get(edge[e], lane));
                    self.set(d, lane, bits);
                }
            }
        }
    }

    /// Fused time steps: lane `l`'s element `j` goes to tile output `l * k + j - lead` of
    /// output row `row` of output field `field` where that is one of the tile's outputs, in
    /// accesses of `width` elements.
    fn store_owned(&mut self, srcs: &[Reg], field: u32, lead: u32, width: usize, row: u32) -> Result<(), Error> {
        let output = field as usize;
        let (k, outputs) = (srcs.len() as i64, self.program.pattern.tile_outputs() as i64);
        for lane in 0..self.warp {
            for (c, chunk) in srcs.chunks(width).enumerate() {
                let o = lane as i64 * k + (c * width) as i64 - lead as i64;
                if o < 0 || o >= outputs {
                    continue;
                }
                let x = self.origin[0] + o;
                let (first, last) = (self.output_at(row, x), self.output_at(row, x + width as i64 - 1));
                let i = match (first, last) {
                    (Some(i), Some(_)) if i % width == 0 && o + width as i64 <= outputs => i,
                    (Some(_), None) | (None, _) if width == 1 => continue,
                    _ => {
                        let (first, len) = (first.map_or(x, |i| i as i64), self.out_lens[output]);
                        return Err(
                            EmulationError::Access { what: "fused tile vector store", first, width, len }.into()
                        );
                    }
                };
                for (m, &src) in chunk.iter().enumerate() {
                    self.stores.push(Store { field, index: i + m, bits: self.get(src, lane) });
                }
            }
        }
        Ok(())
    }

    /// The warp's copy of input field `field` into its region: vectors where every element it
    /// copies lies inside the input, element by element under the boundary rule otherwise; each
    /// element at its padded position.
    fn stage_warp(&mut self, stage: &WarpStage, field: u32) -> Result<(), Error> {
        let width = stage.padding.width as usize;
        let origin = self.origin[0] - stage.lead as i64;
        let vectors = origin >= 0 && origin + (stage.chunks as usize * width) as i64 <= self.in_shape[0] as i64;
        let size = stage.region_bytes / self.program.element.bytes();
        let mut region = vec![0; size as usize];
        for round in 0..stage.rounds(self.warp as u32) as usize {
            for lane in 0..self.warp {
                let chunk = round * self.warp + lane;
                if chunk >= stage.chunks as usize {
                    continue;
                }
                let g = origin + (chunk * width) as i64;
                let values = match vectors {
                    true => self.read_vector(field, 0, g, width, "stage vector load")?,
                    false => (0..width as i64).map(|k| self.read_bounded(field, 0, g + k)).collect(),
                };
                for (k, bits) in values.into_iter().enumerate() {
                    let position = stage.padding.position((chunk * width + k) as u32) as usize;
                    *region.get_mut(position).ok_or(EmulationError::StageOverflow { position, size })? = bits;
                }
            }
        }
        self.stages[field as usize] = region;
        self.warp_stage = Some(*stage);
        Ok(())
    }

    fn plane_ring(&self) -> Result<PlaneRing, Error> {
        Ok(self.program.ring.ok_or(EmulationError::StageUnwritten)?)
    }

    /// Staged planes: the block's copy of box plane `plane` of input field `field`, as its
    /// threads fetch it: copy vector `c` is row `c / chunks_per_row` of the block's rows,
    /// elements `width * (c % chunks_per_row)..` of the tile's row; vectors where the whole
    /// plane lies inside the input (rows whole vectors long), element by element under the
    /// boundary rule in each dimension otherwise.
    fn fetch_plane(&mut self, plane: u32, field: u32) -> Result<(), Error> {
        let ring = self.plane_ring()?;
        let pattern = self.program.pattern;
        let width = ring.width as usize;
        let x0 = self.origin_x();
        let y0 =
            self.origin[1] - (self.warp_in_block as u32 * ring.rows_per_warp) as i64 - pattern.shift_along(1) as i64;
        let z = self.origin[2] + plane as i64 - pattern.shift_along(2) as i64;
        let [nx, ny, nz] = self.in_shape.map(|n| n as i64);
        let along = |start: i64, len: u32, n: i64| start >= 0 && start + len as i64 <= n;
        let inside =
            along(x0, ring.row_elements, nx) && along(y0, ring.rows, ny) && along(z, 1, nz) && nx % width as i64 == 0;
        let cpr = ring.chunks_per_row() as i64;
        let boundary = pattern.boundary();
        let mut values = Vec::with_capacity(ring.chunks() as usize * width);
        for c in 0..ring.chunks() as i64 {
            let (y, x) = (y0 + c / cpr, x0 + c % cpr * width as i64);
            // The whole plane inside, or rows whole vectors long and this vector inside along x
            // (its row under the rule along y and z): one vector load.
            let row = boundary.place(&self.in_shape[1..], &[y, z]).map(|row| row as i64 * nx);
            let vector = inside || (nx % width as i64 == 0 && (0..nx).contains(&x));
            if let (true, Some(row)) = (vector, row) {
                let linear = (row + x) as usize;
                if linear % width != 0 {
                    return Err(EmulationError::Access {
                        what: "plane vector load",
                        first: linear as i64,
                        width,
                        len: self.inputs.len(field as usize),
                    }
                    .into());
                }
                self.inputs.extend_bits(field as usize, linear, width, &mut values);
                continue;
            }
            for k in 0..width as i64 {
                values.push(self.read_point(field, [x + k, y, z]));
            }
        }
        self.fetched[field as usize] = values;
        Ok(())
    }

    /// Input point `at` (innermost first, possibly outside) of input field `field` under the
    /// boundary rule in each dimension (zero outside for `valid` and `zero`).
    fn read_point(&self, field: u32, at: [i64; MAX_DIMS]) -> u64 {
        self.program.pattern.boundary().place(&self.in_shape, &at).map_or(0, |i| self.inputs.bits(field as usize, i))
    }

    /// Per lane: every quotient by the fast path; where one of them fails its range check,
    /// all of them by IEEE division (adding the `+0.0` a normalized dividend left out).
    fn divisions(&mut self, run: &[Division]) {
        let f32_of = |bits: u64| f32::from_bits(bits as u32);
        for lane in 0..self.warp {
            let mut exact = true;
            for d in run {
                let x = f32_of(self.get(d.dividend_on_fast_path(), lane));
                let (y, minus_b) = (d.fast.reciprocal, -d.fast.divisor);
                let q0 = x * y;
                let r = q0.mul_add(minus_b, x);
                let q = r.mul_add(y, q0);
                exact &= q.abs() >= d.fast.min_quotient;
                self.set(d.dst, lane, q.to_bits() as u64);
            }
            if exact {
                continue;
            }
            for d in run {
                if let Some(sum) = d.sum {
                    let bits = ops::binary(BinaryOp::Add, ScalarType::F32, self.get(sum, lane), Scalar::f32(0.0).bits);
                    self.set(d.dividend, lane, bits);
                }
                let q =
                    ops::binary(BinaryOp::Div, ScalarType::F32, self.get(d.dividend, lane), self.get(d.divisor, lane));
                self.set(d.dst, lane, q);
            }
        }
    }

    fn compute(&mut self, instr: &Instr) {
        let program = self.program;
        let warp = self.warp;
        match instr {
            Instr::Pick { dst, pieces } => {
                for lane in 0..warp {
                    let bits = self.get(pieces.at(lane as u32), lane);
                    self.set(*dst, lane, bits);
                }
            }
            Instr::Shuffle { dst, src, rotate, .. } => {
                for lane in 0..warp {
                    let bits = self.get(*src, (lane + *rotate as usize) % warp);
                    self.set(*dst, lane, bits);
                }
            }
            Instr::Pack { dst, lo, hi } => self.lanes(*dst, &[*lo, *hi], |x| (x[0] & 0xffff) | (x[1] & 0xffff) << 16),
            Instr::Straddle { dst, lo, hi } => {
                self.lanes(*dst, &[*lo, *hi], |x| (x[0] >> 16 & 0xffff) | (x[1] & 0xffff) << 16)
            }
            Instr::Unpack { dst, src, high } => {
                let shift = if *high { 16 } else { 0 };
                self.lanes(*dst, &[*src], |x| (x[0] >> shift) & 0xffff);
            }
            Instr::Param { dst, index } => {
                let bits = self.params.get(*index as usize).map_or(0, |s| s.bits);
                self.regs[*dst as usize * warp..][..warp].fill(bits);
            }
            Instr::Const { dst, value } => self.regs[*dst as usize * warp..][..warp].fill(value.bits),
            Instr::Unary { dst, op, a } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a], |x| ops::unary(*op, ty, x[0]));
            }
            Instr::Binary { dst, op, a, b } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a, *b], |x| ops::binary(*op, ty, x[0], x[1]));
            }
            Instr::Compare { dst, op, a, b } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a, *b], |x| ops::compare(*op, ty, x[0], x[1]));
            }
            Instr::Select { dst, cond, then, otherwise } => {
                self.lanes(*dst, &[*cond, *then, *otherwise], |x| if x[0] != 0 { x[1] } else { x[2] });
            }
            Instr::Cast { dst, a } => {
                let (from, to) = (program.reg_type(*a), program.reg_type(*dst));
                self.lanes(*dst, &[*a], |x| ops::cast(from, to, x[0]));
            }
            Instr::MulAdd { dst, a, b, c } => {
                let ty = program.reg_type(*a);
                self.lanes(*dst, &[*a, *b, *c], |x| ops::mul_add(ty, x[0], x[1], x[2]));
            }
            // Memory instructions reach the machine program as its own operations.
            Instr::Load { .. } | Instr::Stage { .. } | Instr::Shared { .. } | Instr::Store { .. } => {}
        }
    }

    /// `dst = f(operands)` in every lane.
    fn lanes(&mut self, dst: u32, operands: &[u32], f: impl Fn(&[u64]) -> u64) {
        let mut x = [0u64; 3];
        for lane in 0..self.warp {
            for (slot, &reg) in x.iter_mut().zip(operands) {
                *slot = self.get(reg, lane);
            }
            let bits = f(&x[..operands.len()]);
            self.set(dst, lane, bits);
        }
    }
}
