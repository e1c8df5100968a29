//! `Stencil`: the handle `#[stencil]` generates for each annotated function. It carries the
//! pattern, the PTX the macro printed, the lowered body, and the user's function itself (the CPU
//! reference). The runtime crate launches it; this crate runs it on the CPU.

use std::marker::PhantomData;

use crate::body::Body;
use crate::distribution::Layout;
use crate::error::{BodyError, Error};
use crate::explain::Explanation;
use crate::geometry::Extent;
use crate::pattern::Pattern;
use crate::program::WarpProgram;
use crate::scalar::{Element, Params};
use crate::strategy::Strategy;
use crate::window::Window;

/// The user's function, called with a tuple of its extra parameters.
pub type Reference<T, P> = for<'a> fn(Window<'a, T>, P) -> T;

/// A compiled stencil over elements `T` with extra parameters `P` (a tuple).
pub struct Stencil<T: Element, P: Params> {
    name: &'static str,
    pattern: Pattern,
    strategy: Strategy,
    layout: Layout,
    ptx: &'static str,
    entry: &'static str,
    body: fn() -> Result<Body, BodyError>,
    reference: Reference<T, P>,
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
        body: fn() -> Result<Body, BodyError>,
        reference: Reference<T, P>,
    ) -> Stencil<T, P> {
        Stencil { name, pattern, strategy, layout, ptx, entry, body, reference, _types: PhantomData }
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
    /// The body as the compiler sees it: one output's computation over window taps.
    pub fn body(&self) -> Result<Body, Error> {
        Ok((self.body)()?)
    }

    /// The warp program: exactly what the PTX back end prints and what `emulate` runs.
    pub fn program(&self) -> Result<WarpProgram, Error> {
        WarpProgram::compile_for(self.pattern, self.strategy, self.layout, &self.body()?)
    }

    /// The output length for `input_len` inputs.
    pub fn output_len(&self, input_len: usize) -> Result<usize, Error> {
        Ok(self.pattern.output_len(input_len)?)
    }

    /// The output's shape for an input of shape `shape` (`[len]`, `[rows, cols]` or `[depth,
    /// rows, cols]`), or why there is none.
    pub fn output_shape(&self, shape: impl Into<Extent>) -> Result<Extent, Error> {
        Ok(self.pattern.output_shape(shape.into())?)
    }

    /// The reference: the user's function, called once per output on the CPU. Outputs are
    /// independent, so large inputs are split across the machine's cores; every output is still
    /// one call of the function on its own window, so the result does not depend on the split.
    pub fn run_cpu(&self, input: &[T], output: &mut [T], params: P) -> Result<(), Error> {
        self.run_cpu_grid(input, Extent::x(input.len()), output, params)
    }

    /// [`Stencil::run_cpu`] over a grid of shape `shape` (row-major, x fastest): the output has
    /// [`Stencil::output_shape`]'s shape.
    pub fn run_cpu_grid(&self, input: &[T], shape: impl Into<Extent>, output: &mut [T], params: P) -> Result<(), Error> {
        let shape = shape.into();
        let out_shape = self.pattern.check_shapes(shape, input.len(), output.len())?;
        let n_out = out_shape.len().unwrap_or(0);
        let (pattern, reference) = (self.pattern, self.reference);
        let radius = pattern.radius();
        let dims = radius.dims().count();
        // Output point o is centred on input point o + r - shift along each dimension (r under
        // `valid`, 0 otherwise).
        let offset: Vec<i64> = (0..dims).rev().map(|axis| (radius.along(axis) - pattern.shift_along(axis)) as i64).collect();
        let out_lens = out_shape.components();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Below this, starting threads costs more than it saves.
        let chunk = n_out.div_ceil(threads).max(1 << 15);
        std::thread::scope(|scope| {
            for (c, outputs) in output[..n_out].chunks_mut(chunk).enumerate() {
                let (offset, out_lens) = (&offset, &out_lens);
                scope.spawn(move || {
                    let mut centre = vec![0i64; dims];
                    for (j, out) in outputs.iter_mut().enumerate() {
                        let mut rest = c * chunk + j;
                        for axis in (0..dims).rev() {
                            centre[axis] = (rest % out_lens[axis]) as i64 + offset[axis];
                            rest /= out_lens[axis];
                        }
                        *out = reference(Window::grid(input, shape, &centre, radius, pattern.boundary()), params);
                    }
                });
            }
        });
        Ok(())
    }

    /// Runs the lowered warp program on the CPU: lanes in lockstep, shuffles as permutations,
    /// the same instruction sequence the PTX back end prints.
    pub fn emulate(&self, input: &[T], output: &mut [T], params: P) -> Result<(), Error> {
        self.emulate_grid(input, Extent::x(input.len()), output, params)
    }

    /// [`Stencil::emulate`] over a grid of shape `shape`.
    pub fn emulate_grid(&self, input: &[T], shape: impl Into<Extent>, output: &mut [T], params: P) -> Result<(), Error> {
        self.program()?.emulate_grid(input, shape.into(), output, &params.scalars())
    }

    /// `run_cpu` into a new vector.
    pub fn reference_vec(&self, input: &[T], params: P) -> Result<Vec<T>, Error> {
        let mut out = vec![*T::zero_ref(); self.output_len(input.len())?];
        self.run_cpu(input, &mut out, params)?;
        Ok(out)
    }

    /// `emulate` into a new vector.
    pub fn emulate_vec(&self, input: &[T], params: P) -> Result<Vec<T>, Error> {
        let mut out = vec![*T::zero_ref(); self.output_len(input.len())?];
        self.emulate(input, &mut out, params)?;
        Ok(out)
    }

    /// `run_cpu_grid` into a new vector.
    pub fn reference_grid_vec(&self, input: &[T], shape: impl Into<Extent>, params: P) -> Result<Vec<T>, Error> {
        let shape = shape.into();
        let mut out = vec![*T::zero_ref(); self.output_shape(shape)?.len().unwrap_or(0)];
        self.run_cpu_grid(input, shape, &mut out, params)?;
        Ok(out)
    }

    /// `emulate_grid` into a new vector.
    pub fn emulate_grid_vec(&self, input: &[T], shape: impl Into<Extent>, params: P) -> Result<Vec<T>, Error> {
        let shape = shape.into();
        let mut out = vec![*T::zero_ref(); self.output_shape(shape)?.len().unwrap_or(0)];
        self.emulate_grid(input, shape, &mut out, params)?;
        Ok(out)
    }

    /// The schedule as a table to check against the register-cache article's Table 2.
    pub fn explain(&self) -> Result<Explanation, Error> {
        Ok(Explanation::new(self.name, &self.program()?))
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
            .finish_non_exhaustive()
    }
}
