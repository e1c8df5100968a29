//! `Stencil`: the handle `#[stencil]` generates for each annotated function. It carries the
//! pattern, the PTX the macro printed, the lowered body, and the user's function itself (the CPU
//! reference). The runtime crate launches it; this crate runs it on the CPU.

use std::collections::btree_map::{BTreeMap, Entry};
use std::marker::PhantomData;
use std::ops::Range;

use crate::body::Body;
use crate::error::{BodyError, Error, LengthError};
use crate::explain::Explanation;
use crate::geometry::Extent;
use crate::launch_map::{LaunchMap, OutputRows};
use crate::layout::Layout;
use crate::machine::Kernel;
use crate::pattern::{LaunchShape, Pattern};
use crate::program::WarpProgram;
use crate::scalar::{Element, Params};
use crate::strategy::Strategy;
use crate::time_steps::{self, StepPlan};
use crate::window::Window;

/// The kernel that runs several time steps per launch, printed by the macro beside the
/// one-step kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedKernel {
    /// Time steps per launch; 1: no fused kernel.
    pub steps: u32,
    pub ptx: &'static str,
    pub entry: &'static str,
    /// The `.entry` of the second kernel of a launch that splits
    /// ([`crate::time_steps::FusedTile::splits`]): [`crate::ptx::kernel_entry`] of `entry`.
    pub edges: &'static str,
}

/// The user's function, called with one window per input field (in the order the function
/// declares them) and a tuple of its extra parameters; it writes what it returns into the last
/// argument, one element per output field ([`Stencil::output_fields`]), in order.
pub type Reference<T, P> = for<'a> fn(&[Window<'a, T>], P, &mut [T]);

/// A compiled stencil over elements `T` with extra parameters `P` (a tuple).
pub struct Stencil<T: Element, P: Params> {
    name: &'static str,
    pattern: Pattern,
    strategy: Strategy,
    layout: Layout,
    ptx: &'static str,
    entry: &'static str,
    fields: u32,
    outputs: u32,
    body: fn() -> Result<Body, BodyError>,
    reference: Reference<T, P>,
    /// The fused kernel (`fuse = T` or the macro's choice); `None`: the cost model's choice,
    /// with no PTX.
    fused: Option<FusedKernel>,
    /// Bytes of dynamic shared memory each block of the kernel is launched with (0: none).
    dynamic_shared_bytes: u32,
    /// The edges kernel of a split 2D fused launch of this tile: its launch covers only the
    /// edge strips ([`Stencil::launch_shape`]).
    edges_of: Option<time_steps::FusedTile>,
    _types: PhantomData<fn(T, P) -> T>,
}

impl<T: Element, P: Params> Stencil<T, P> {
    /// Used by `#[stencil]`, which has validated every part.
    // One argument per field: generated code builds the handle in a `const`, where a builder's
    // non-const methods cannot run.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn from_parts(
        name: &'static str,
        pattern: Pattern,
        strategy: Strategy,
        layout: Layout,
        ptx: &'static str,
        entry: &'static str,
        fields: u32,
        outputs: u32,
        body: fn() -> Result<Body, BodyError>,
        reference: Reference<T, P>,
    ) -> Stencil<T, P> {
        Stencil {
            name,
            pattern,
            strategy,
            layout,
            ptx,
            entry,
            fields,
            outputs,
            body,
            reference,
            fused: None,
            dynamic_shared_bytes: 0,
            edges_of: None,
            _types: PhantomData,
        }
    }

    /// This handle with its fused kernel: `steps` time steps per launch (the attribute's
    /// `fuse`, or the macro's choice), printed as `ptx` with entry `entry` (and `edges`, the
    /// second kernel's, where a launch splits). With `steps` 1 there is no fused kernel (`ptx`
    /// is not read): every step is a launch of the one-step kernel.
    pub const fn with_fused(
        self,
        steps: u32,
        ptx: &'static str,
        entry: &'static str,
        edges: &'static str,
    ) -> Stencil<T, P> {
        Stencil { fused: Some(FusedKernel { steps, ptx, entry, edges }), ..self }
    }

    /// This handle with `bytes` of dynamic shared memory per block: what its PTX's ring of
    /// staged planes needs past the 48 KiB a kernel may declare
    /// ([`crate::machine::Machine::dynamic_shared_bytes`]); the launch passes it and lets the
    /// kernel have that much.
    pub const fn with_dynamic_shared_bytes(self, bytes: u32) -> Stencil<T, P> {
        Stencil { dynamic_shared_bytes: bytes, ..self }
    }

    /// Bytes of dynamic shared memory each block is launched with (0: none).
    pub const fn dynamic_shared_bytes(&self) -> u32 {
        self.dynamic_shared_bytes
    }

    /// Time steps one fused launch runs: the macro's ([`Stencil::with_fused`]), else the cost
    /// model's choice for this body ([`crate::auto::steps_per_launch`]).
    pub fn steps_per_launch(&self) -> Result<u32, Error> {
        match self.fused {
            Some(fused) => Ok(fused.steps),
            None => Ok(crate::auto::steps_per_launch(&self.pattern, &self.body()?)),
        }
    }

    /// The fused kernel's PTX and entry, if the macro printed one.
    pub const fn fused_kernel(&self) -> Option<FusedKernel> {
        self.fused
    }

    /// The program of one fused launch of `steps` steps ([`crate::time_steps`]): what the
    /// fused PTX of that many steps prints and `emulate_steps` runs.
    pub fn fused_program(&self, steps: u32) -> Result<WarpProgram, Error> {
        WarpProgram::compile_steps(self.pattern, &self.body()?, steps)
    }

    /// The handles a fused launch of `steps` steps goes through, one per kernel in launch order
    /// ([`crate::machine::Machine::kernels`]; each entry's): this stencil's name and body,
    /// the launch's pattern ([`crate::time_steps::FusedTile::launch_pattern`]) and the fused
    /// PTX of that many steps: the macro's for its degree, for fewer steps (a run's last launch)
    /// printed here the first time a run needs it, `""` where the macro printed none. Its
    /// `program()` is not its PTX: it exists to be launched (rc's runtime checks its lengths
    /// and launches it as any kernel). Its layout asks the buffers for no vector alignment: the
    /// coefficient fields, which a `valid` launch reads from an offset, load element by element,
    /// and whoever launches it checks the stepping buffers' alignment
    /// ([`crate::time_steps::FusedTile::width`]).
    #[doc(hidden)]
    pub fn fused_launch(&self, steps: u32) -> Result<(Vec<Stencil<T, P>>, crate::time_steps::FusedTile), Error> {
        // The tile alone, not the program: a run of time steps asks for it at every call.
        let tile = crate::time_steps::FusedTile::new(&self.pattern, T::TYPE, steps)?;
        let (ptx, entry, edges) = match self.fused {
            Some(f) if f.steps == steps => (f.ptx, f.entry, f.edges),
            Some(f) if f.steps > 1 => {
                (crate::remainder::ptx(f.ptx, steps, f.entry, || self.fused_program(steps))?, f.entry, f.edges)
            }
            Some(_) => ("", "", ""),
            None => ("", "", ""),
        };
        let launch = Stencil {
            pattern: tile.launch_pattern(&self.pattern),
            layout: Layout::RoundRobin,
            ptx,
            entry,
            fused: None,
            dynamic_shared_bytes: 0,
            ..*self
        };
        let kernels = match tile.splits() {
            true => vec![
                launch,
                Stencil {
                    entry: edges,
                    edges_of: Some(tile).filter(|tile| tile.dims == crate::geometry::Dims::Two),
                    ..launch
                },
            ],
            false => vec![launch],
        };
        Ok((kernels, tile))
    }

    /// Which block of a launch of this kernel runs which tile ([`crate::launch_map`]), and which
    /// kernel of its program the handle launches: the edges kernel of a split 2D fused launch,
    /// whose launch covers only the edge strips, or the whole program.
    pub fn launch_map(&self) -> (LaunchMap, Kernel) {
        match self.edges_of {
            Some(tile) => (LaunchMap::fused(&tile, self.pattern), Kernel::Edges),
            None => {
                let stacked = self.layout.stacks_warps(self.strategy, &self.pattern);
                (LaunchMap::new(self.pattern.lifted(), stacked), Kernel::Whole)
            }
        }
    }

    /// The launch of this kernel from an input of shape `input` to an output of shape `output`,
    /// as its launch map gives it ([`LaunchMap::launch_shape`]); none where it has no tile (the
    /// edges kernel of a fused launch whose strips are all interior).
    pub fn launch_shape(&self, input: Extent, output: Extent) -> Result<Option<LaunchShape>, LengthError> {
        self.launch_shape_of_rows(input, output, OutputRows::all(output))
    }

    /// [`Stencil::launch_shape`] of a launch over rows `rows` of the output ([`OutputRows`]).
    pub fn launch_shape_of_rows(
        &self,
        input: Extent,
        output: Extent,
        rows: OutputRows,
    ) -> Result<Option<LaunchShape>, LengthError> {
        let (map, kernel) = self.launch_map();
        map.launch_shape(kernel, self.pattern.lifted_shape(input), self.pattern.lifted_shape(output), rows)
    }

    /// The annotated function's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
    pub const fn pattern(&self) -> Pattern {
        self.pattern
    }
    /// How the kernel gets taps to lanes: the register cache, or a baseline.
    pub const fn strategy(&self) -> Strategy {
        self.strategy
    }
    /// Where the register cache keeps each element (unused by the baselines).
    pub const fn layout(&self) -> Layout {
        self.layout
    }
    /// The kernel's PTX text, printed by the macro at compile time.
    pub const fn ptx(&self) -> &'static str {
        self.ptx
    }
    /// The name of the kernel's `.entry` in [`Stencil::ptx`].
    pub const fn entry(&self) -> &'static str {
        self.entry
    }
    /// Input fields: the windows the function declares, one input buffer each, all of one
    /// length (one shape in 2D and 3D).
    pub const fn fields(&self) -> u32 {
        self.fields
    }
    /// Output fields, one output buffer each: one per element the function returns (one for
    /// `-> T`, two for `-> (T, T)`, N for `-> [T; N]`), in order; its body has one result each.
    pub const fn output_fields(&self) -> u32 {
        self.outputs
    }
    /// The body as the compiler sees it: one point's computation over window taps, one result
    /// per output field.
    pub fn body(&self) -> Result<Body, Error> {
        Ok((self.body)()?)
    }

    /// The warp program: exactly what the PTX back end prints and what `emulate` runs.
    pub fn program(&self) -> Result<WarpProgram, Error> {
        WarpProgram::compile_for(self.pattern, self.strategy, self.layout, &self.body()?)
    }

    /// The output length for inputs of `input_len` elements.
    pub fn output_len(&self, input_len: usize) -> Result<usize, Error> {
        Ok(self.pattern.output_len(input_len)?)
    }

    /// The output's shape for an input of shape `shape` (`[len]`, `[rows, cols]` or `[depth,
    /// rows, cols]`), or why there is none.
    pub fn output_shape(&self, shape: impl Into<Extent>) -> Result<Extent, Error> {
        Ok(self.pattern.output_shape(shape.into())?)
    }

    /// The reference: the user's function, called once per output point on the CPU. `inputs`
    /// has one slice per input field ([`Stencil::fields`], in the order the windows are
    /// declared), all of one length; `outputs` one per output field
    /// ([`Stencil::output_fields`]), each of the output length. Points are independent, so
    /// large inputs are split across the machine's cores; every point is still one call of the
    /// function on its own windows, so the result does not depend on the split.
    pub fn run_cpu(&self, inputs: &[&[T]], outputs: &mut [&mut [T]], params: P) -> Result<(), Error> {
        self.run_cpu_grid(inputs, Extent::x(first_len(inputs)), outputs, params)
    }

    /// [`Stencil::run_cpu`] over grids of shape `shape` (row-major, x fastest), one per input
    /// field: each output has [`Stencil::output_shape`]'s shape.
    pub fn run_cpu_grid(
        &self,
        inputs: &[&[T]],
        shape: impl Into<Extent>,
        outputs: &mut [&mut [T]],
        params: P,
    ) -> Result<(), Error> {
        let shape = shape.into();
        let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
        let out_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
        let out_shape = self.pattern.check_buffers(shape, &lens, self.fields, &out_lens, self.output_fields())?;
        let n_out = out_shape.len().unwrap_or(0);
        let (pattern, reference) = (self.pattern, self.reference);
        let radius = pattern.radius();
        let dims = radius.dims().count();
        // Output point o is centred on input point o + r - shift along each dimension (r under
        // `valid`, 0 otherwise).
        let offset: Vec<i64> =
            (0..dims).rev().map(|axis| (radius.along(axis) - pattern.shift_along(axis)) as i64).collect();
        let out_lens = out_shape.components();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Below this, starting threads costs more than it saves.
        let chunk = n_out.div_ceil(threads).max(1 << 15);
        let fields = outputs.len();
        // Chunk c of every output field, for one thread.
        let mut chunks: Vec<Vec<&mut [T]>> = Vec::new();
        for output in outputs.iter_mut() {
            for (c, part) in output[..n_out].chunks_mut(chunk).enumerate() {
                match chunks.get_mut(c) {
                    Some(parts) => parts.push(part),
                    None => chunks.push(vec![part]),
                }
            }
        }
        std::thread::scope(|scope| {
            for (c, mut parts) in chunks.into_iter().enumerate() {
                let (offset, out_lens) = (&offset, &out_lens);
                scope.spawn(move || {
                    let mut centre = vec![0i64; dims];
                    let mut windows = Vec::with_capacity(inputs.len());
                    let mut point = vec![*T::zero_ref(); fields];
                    let points = parts.first().map_or(0, |part| part.len());
                    for j in 0..points {
                        let mut rest = c * chunk + j;
                        for axis in (0..dims).rev() {
                            centre[axis] = (rest % out_lens[axis]) as i64 + offset[axis];
                            rest /= out_lens[axis];
                        }
                        windows.clear();
                        windows.extend(
                            inputs.iter().map(|input| Window::grid(input, shape, &centre, radius, pattern.boundary())),
                        );
                        reference(&windows, params, &mut point);
                        for (part, value) in parts.iter_mut().zip(&point) {
                            part[j] = *value;
                        }
                    }
                });
            }
        });
        Ok(())
    }

    /// Runs the lowered warp program on the CPU: lanes in lockstep, shuffles as permutations,
    /// the same instruction sequence the PTX back end prints. `inputs` and `outputs` as for
    /// [`Stencil::run_cpu`].
    pub fn emulate(&self, inputs: &[&[T]], outputs: &mut [&mut [T]], params: P) -> Result<(), Error> {
        self.emulate_grid(inputs, Extent::x(first_len(inputs)), outputs, params)
    }

    /// [`Stencil::emulate`] over grids of shape `shape`, one per input field.
    pub fn emulate_grid(
        &self,
        inputs: &[&[T]],
        shape: impl Into<Extent>,
        outputs: &mut [&mut [T]],
        params: P,
    ) -> Result<(), Error> {
        self.program()?.emulate_grid_outputs(inputs, shape.into(), outputs, &params.scalars())
    }

    /// `steps` time steps on the CPU: [`Stencil::run_cpu`] applied `steps` times, each step's
    /// output field k the next one's input field k (the state: the first
    /// [`Stencil::output_fields`] inputs); the other fields (coefficients) stay as given, read
    /// where the state lies ([`time_steps::step_inputs`]). Each of `outputs` (one per state
    /// field, the final state) has the input's length, or under `valid` `n - 2 * r * steps`.
    pub fn run_cpu_steps(
        &self,
        inputs: &[&[T]],
        outputs: &mut [&mut [T]],
        steps: usize,
        params: P,
    ) -> Result<(), Error> {
        self.run_cpu_steps_grid(inputs, Extent::x(first_len(inputs)), outputs, steps, params)
    }

    /// [`Stencil::run_cpu_steps`] over grids of shape `shape`, one per input field: under
    /// `valid` each dimension of the output shrinks by `2 * r * steps`.
    pub fn run_cpu_steps_grid(
        &self,
        inputs: &[&[T]],
        shape: impl Into<Extent>,
        outputs: &mut [&mut [T]],
        steps: usize,
        params: P,
    ) -> Result<(), Error> {
        // The reference knows no launches: one step at a time.
        let one_by_one = StepPlan::new(steps, 1);
        self.steps_with(inputs, shape.into(), outputs, steps, one_by_one, |_, _, inputs, shape, outputs| {
            self.run_cpu_grid(inputs, shape, outputs, params)
        })
    }

    /// `steps` time steps as the GPU runs them ([`time_steps::StepPlan`]): fused launches of
    /// [`Stencil::steps_per_launch`] steps, each the fused warp program emulated lane by lane,
    /// then one launch for the steps left (fused, or the one-step kernel for one step). Bit for
    /// bit [`Stencil::run_cpu_steps`].
    pub fn emulate_steps(
        &self,
        inputs: &[&[T]],
        outputs: &mut [&mut [T]],
        steps: usize,
        params: P,
    ) -> Result<(), Error> {
        self.emulate_steps_grid(inputs, Extent::x(first_len(inputs)), outputs, steps, params)
    }

    /// [`Stencil::emulate_steps`] over grids of shape `shape`, one per input field.
    pub fn emulate_steps_grid(
        &self,
        inputs: &[&[T]],
        shape: impl Into<Extent>,
        outputs: &mut [&mut [T]],
        steps: usize,
        params: P,
    ) -> Result<(), Error> {
        self.emulate_steps_rows(inputs, shape.into(), outputs, steps, params, None)
    }

    /// [`Stencil::emulate_steps_grid`] where each launch computes only rows `rows(done)` of
    /// its output along the outermost axis ([`OutputRows`]), `done` the steps run by the end
    /// of that launch; its other rows are zero. How a band of a grid split over GPUs computes
    /// only the rows still exact ([`crate::Decomposition::exact_rows`]): the result is right
    /// where every launch's rows read only rows the launch before computed.
    pub fn emulate_steps_rows(
        &self,
        inputs: &[&[T]],
        shape: Extent,
        outputs: &mut [&mut [T]],
        steps: usize,
        params: P,
        rows: Option<&dyn Fn(usize) -> Range<usize>>,
    ) -> Result<(), Error> {
        let plan = StepPlan::new(steps, self.steps_per_launch()?);
        let scalars = params.scalars();
        // Each program compiled once, when its first launch comes: by steps per launch.
        let mut programs: BTreeMap<u32, WarpProgram> = BTreeMap::new();
        let launch = |launch_steps: u32, done: usize, inputs: &[&[T]], shape: Extent, outputs: &mut [&mut [T]]| {
            let program = match programs.entry(launch_steps) {
                Entry::Occupied(program) => program.into_mut(),
                Entry::Vacant(slot) => {
                    slot.insert(if launch_steps > 1 { self.fused_program(launch_steps)? } else { self.program()? })
                }
            };
            program.emulate_grid_rows(inputs, shape, rows.map(|rows| rows(done)), outputs, &scalars)
        };
        self.steps_with(inputs, shape, outputs, steps, plan, launch)
    }

    /// Runs `steps` time steps as `plan` launches them, through `launch(steps of the launch,
    /// steps done by its end, inputs, their shape, outputs)`, ping-pong between two host buffers per state field (the
    /// first input fields, one per output field: [`time_steps::step_inputs`]).
    fn steps_with(
        &self,
        inputs: &[&[T]],
        shape: Extent,
        outputs: &mut [&mut [T]],
        steps: usize,
        plan: StepPlan,
        mut launch: impl FnMut(u32, usize, &[&[T]], Extent, &mut [&mut [T]]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
        if shape.dims() != self.pattern.dims() {
            return Err(LengthError::Dimensions { expected: self.pattern.dims(), got: shape.dims() }.into());
        }
        let out_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
        let output_fields = self.output_fields();
        time_steps::check_steps_inputs(&self.pattern, shape, &lens, self.fields, &out_lens, output_fields, steps)?;
        // The checks above made sure there are at least as many inputs as state fields.
        let mut state: Vec<Vec<T>> = inputs.iter().take(output_fields as usize).map(|input| input.to_vec()).collect();
        let mut done = 0;
        for launch_steps in plan.launches() {
            let advance = launch_steps as usize;
            let now = time_steps::steps_output_shape(&self.pattern, shape, done)?;
            let next_shape = time_steps::steps_output_shape(&self.pattern, shape, done + advance)?;
            let mut next = vec![vec![*T::zero_ref(); next_shape.len().unwrap_or(0)]; state.len()];
            let current: Vec<&[T]> = state.iter().map(Vec::as_slice).collect();
            let fields = time_steps::step_inputs(&self.pattern, shape, inputs, &current, done);
            let fields: Vec<&[T]> = fields.iter().map(|f| &**f).collect();
            let mut outs: Vec<&mut [T]> = next.iter_mut().map(Vec::as_mut_slice).collect();
            launch(launch_steps, done + advance, &fields, now, &mut outs)?;
            state = next;
            done += advance;
        }
        for (output, field) in outputs.iter_mut().zip(&state) {
            output.copy_from_slice(field);
        }
        Ok(())
    }

    /// `run_cpu` into new vectors, one per output field.
    pub fn reference_vec(&self, inputs: &[&[T]], params: P) -> Result<Vec<Vec<T>>, Error> {
        self.reference_grid_vec(inputs, Extent::x(first_len(inputs)), params)
    }

    /// `emulate` into new vectors, one per output field.
    pub fn emulate_vec(&self, inputs: &[&[T]], params: P) -> Result<Vec<Vec<T>>, Error> {
        self.emulate_grid_vec(inputs, Extent::x(first_len(inputs)), params)
    }

    /// `run_cpu_grid` into new vectors, one per output field.
    pub fn reference_grid_vec(
        &self,
        inputs: &[&[T]],
        shape: impl Into<Extent>,
        params: P,
    ) -> Result<Vec<Vec<T>>, Error> {
        let shape = shape.into();
        let mut outs = self.new_outputs(shape)?;
        let mut slices: Vec<&mut [T]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
        self.run_cpu_grid(inputs, shape, &mut slices, params)?;
        Ok(outs)
    }

    /// `emulate_grid` into new vectors, one per output field.
    pub fn emulate_grid_vec(&self, inputs: &[&[T]], shape: impl Into<Extent>, params: P) -> Result<Vec<Vec<T>>, Error> {
        let shape = shape.into();
        let mut outs = self.new_outputs(shape)?;
        let mut slices: Vec<&mut [T]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
        self.emulate_grid(inputs, shape, &mut slices, params)?;
        Ok(outs)
    }

    /// One zeroed buffer per output field, each of the output length for inputs of shape `shape`.
    fn new_outputs(&self, shape: Extent) -> Result<Vec<Vec<T>>, Error> {
        let len = self.output_shape(shape)?.len().unwrap_or(0);
        Ok(vec![vec![*T::zero_ref(); len]; self.outputs as usize])
    }

    /// The schedule as a table to check against the register-cache article's Table 2, and
    /// the fused kernel's tile and shrinking halo where there is one; the one-step kernel's
    /// machine program as text ([`Explanation::machine_program`]).
    pub fn explain(&self) -> Result<Explanation, Error> {
        let explanation = Explanation::new(self.name, &self.program()?);
        Ok(match self.fused {
            Some(fused) if fused.steps > 1 => {
                explanation.with_fused(&self.fused_launch(fused.steps)?.1, self.pattern.boundary())
            }
            _ => explanation,
        })
    }
}

impl<T: Element, P: Params> Clone for Stencil<T, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element, P: Params> Copy for Stencil<T, P> {}

impl<T: Element, P: Params> std::fmt::Debug for Stencil<T, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stencil")
            .field("name", &self.name)
            .field("pattern", &self.pattern)
            .field("strategy", &self.strategy)
            .field("layout", &self.layout)
            .field("entry", &self.entry)
            .field("fields", &self.fields)
            .finish_non_exhaustive()
    }
}

/// The length of input field 0, the one every field has (0 with no input at all, which the
/// checks then refuse for its count).
pub(crate) fn first_len<T>(inputs: &[&[T]]) -> usize {
    inputs.first().map_or(0, |input| input.len())
}
