//! Time steps of a grid split into bands ([`crate::decomposition`]), run on the CPU as the GPUs
//! run them: each rank's local grid (own rows and halos) stepped on its own, by the reference or
//! by the emulation of the kernels, `steps_per_exchange` steps at a time, then every halo
//! refreshed from the neighbours' own rows (in host memory, the copies an exchange makes on the
//! GPUs), and at the end each rank's own rows gathered. Bit for bit the whole grid's steps: this
//! is what proves the split's argument on a machine without GPUs.

use crate::decomposition::Decomposition;
use crate::error::{DecompositionError, Error, LengthError};
use crate::scalar::{Element, Params};
use crate::stencil::Stencil;
use crate::time_steps::check_steps_inputs;

/// What steps each rank's band on the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuSteps {
    /// [`Stencil::run_cpu_steps_grid`]: the function itself, one step at a time.
    Reference,
    /// [`Stencil::emulate_steps_grid`]: the kernels' warp programs, fused as the GPU launches them.
    Emulation,
}

/// `steps` time steps of `stencil` over the grid `split` splits, on the CPU: `inputs` are the
/// whole grids (the state fields, then the coefficient fields, as for
/// [`Stencil::run_cpu_steps_grid`]), `outputs` the final state, one whole grid per state field.
/// Each rank's band is stepped by `how`; bit for bit the whole grid's `run_cpu_steps`.
pub fn run_split_steps<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    split: &Decomposition,
    inputs: &[&[T]],
    outputs: &mut [&mut [T]],
    steps: usize,
    params: P,
    how: CpuSteps,
) -> Result<(), Error> {
    let shape = split.shape();
    let pattern = stencil.pattern();
    if shape.dims() != pattern.dims() {
        return Err(LengthError::Dimensions { expected: pattern.dims(), got: shape.dims() }.into());
    }
    split.fits(&pattern)?;
    let lens: Vec<usize> = inputs.iter().map(|input| input.len()).collect();
    let out_lens: Vec<usize> = outputs.iter().map(|output| output.len()).collect();
    check_steps_inputs(&pattern, shape, &lens, stencil.fields(), &out_lens, stencil.output_fields(), steps)?;
    let states = stencil.output_fields() as usize;
    // Each rank's local grid of every field, halos filled from the whole grid.
    let parts = |fields: &[&[T]]| -> Result<Vec<Vec<Vec<T>>>, DecompositionError> {
        (0..split.ranks()).map(|rank| fields.iter().map(|f| split.local_part(rank, f)).collect()).collect()
    };
    let mut state = parts(&inputs[..states])?;
    let coefficients = parts(&inputs[states..])?;
    let row_len = split.row_len();
    let mut left = steps;
    while left > 0 {
        let now = left.min(split.steps_per_exchange());
        for (rank, fields) in state.iter_mut().enumerate() {
            *fields = step_band(stencil, split, rank, fields, &coefficients[rank], now, params, how)?;
        }
        left -= now;
        if left > 0 {
            let rows = |r: &std::ops::Range<usize>| r.start * row_len..r.end * row_len;
            for copy in split.exchange() {
                let halos: Vec<Vec<T>> = state[copy.from].iter().map(|f| f[rows(&copy.from_rows)].to_vec()).collect();
                for (field, halo) in state[copy.to].iter_mut().zip(&halos) {
                    field[rows(&copy.to_rows)].copy_from_slice(halo);
                }
            }
        }
    }
    for (rank, fields) in state.iter().enumerate() {
        for (output, local) in outputs.iter_mut().zip(fields) {
            split.put_own(rank, local, output)?;
        }
    }
    Ok(())
}

/// `steps` steps (right after an exchange) of rank `rank`'s local grid, from its state fields
/// `fields` and its coefficient fields: the new state fields. The emulation computes in each
/// launch only the rows still exact ([`Decomposition::exact_rows`]), as the GPUs do; the
/// reference every row.
#[allow(clippy::too_many_arguments)]
fn step_band<T: Element, P: Params>(
    stencil: &Stencil<T, P>,
    split: &Decomposition,
    rank: usize,
    fields: &[Vec<T>],
    coefficients: &[Vec<T>],
    steps: usize,
    params: P,
    how: CpuSteps,
) -> Result<Vec<Vec<T>>, Error> {
    let local = split.local_shape(rank);
    let inputs: Vec<&[T]> = fields.iter().chain(coefficients).map(Vec::as_slice).collect();
    let mut next: Vec<Vec<T>> = fields.iter().map(|f| vec![*T::zero_ref(); f.len()]).collect();
    let mut outputs: Vec<&mut [T]> = next.iter_mut().map(Vec::as_mut_slice).collect();
    match how {
        CpuSteps::Reference => stencil.run_cpu_steps_grid(&inputs, local, &mut outputs, steps, params)?,
        CpuSteps::Emulation => {
            let band = split.band(rank)?;
            let rows = |done: usize| split.exact_rows(band, done);
            stencil.emulate_steps_rows(&inputs, local, &mut outputs, steps, params, Some(&rows))?
        }
    }
    Ok(next)
}
