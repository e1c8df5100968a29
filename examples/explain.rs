//! What the compiler decided, as tables: which lane keeps which input element in which register,
//! and per shuffle phase what each lane publishes and reads.
//!
//! `one_stencil` on a 4-lane warp, with the article's round-robin distribution, is the
//! register-cache article's Table 2 case; `box7` is the quickstart's stencil on a full warp, in
//! the distribution the cost model chose for it; `laplace` is a 2D 5-point Laplacian on a 4-lane
//! warp computing 2 rows: its tile, the input rows each lane keeps, which input rows each output
//! row reads and what it shuffles. Then all three run in the CPU emulation of their warp
//! programs, checked bit for bit against the plain functions. Nothing is launched on a GPU; if
//! there is one, the driver compiles both kernels for it so that the register counts it gives
//! them can be read beside the estimates in the tables.

mod common;

use std::error::Error;

use rc::prelude::*;
use rc::testdata::awkward;

#[stencil(radius = 1, warp = 4, distribution = round_robin)]
fn one_stencil(w: Window<f32>) -> f32 {
    (w[-1] + w[0] + w[1]) / 3.0
}

#[stencil(radius = 3, warp = 32, outputs_per_thread = 4)]
fn box7(w: Window<f32>) -> f32 {
    (w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3]) / 7.0
}

#[stencil(radius = (1, 1), warp = 4, rows_per_warp = 2, distribution = round_robin, boundary = clamp)]
fn laplace(w: Window2<f32>) -> f32 {
    w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)]
}

/// The grid the 2D emulation is checked on: odd sizes, so the last tiles are partial.
const GRID: [usize; 2] = [61, 97];

/// The emulation is checked on this many elements unless `--n` says otherwise.
const DEFAULT_N: usize = 100_003;

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[
        (one_stencil::ENTRY, one_stencil::PTX),
        (box7::ENTRY, box7::PTX),
        (laplace::ENTRY, laplace::PTX),
    ])? {
        return Ok(());
    }
    println!("{}", one_stencil::explain()?);
    println!("{}", box7::explain()?);
    println!("{}", laplace::explain()?);
    if common::find_gpu()? {
        println!("what the driver's compiler gave each kernel on this GPU (the tables above have rc's estimates):");
        common::print_resources(&one_stencil::KERNEL)?;
        common::print_resources(&box7::KERNEL)?;
        common::print_resources(&laplace::KERNEL)?;
    }

    let n = args.n.unwrap_or(DEFAULT_N);
    println!("running on: the CPU (the emulation of each warp program), n = {n}");
    check(&one_stencil::KERNEL, n)?;
    check(&box7::KERNEL, n)?;
    check_grid(&laplace::KERNEL, GRID)?;
    Ok(())
}

/// `check` for a 2D stencil over a grid of shape `shape`.
fn check_grid(stencil: &rc::Stencil<f32, ()>, shape: [usize; 2]) -> Result<(), Box<dyn Error>> {
    let n = shape[0] * shape[1];
    for (data, input) in [("awkward data", awkward(n, 1)), ("a noisy sine", common::noisy_sine(n))] {
        let emulated = stencil.emulate_grid_vec(&[&input], shape, ())?.remove(0);
        let reference = stencil.reference_grid_vec(&[&input], shape, ())?.remove(0);
        common::compare(
            &emulated,
            &reference,
            &format!("stencil `{}` emulated on {data}, {} x {}", stencil.name(), shape[0], shape[1]),
        )?;
    }
    println!(
        "{}: check: passed (emulation = run_cpu, bit for bit, on awkward data and a noisy sine, {} x {})",
        stencil.name(),
        shape[0],
        shape[1]
    );
    Ok(())
}

/// The emulated warp program against the plain function, on awkward data and on a smooth signal.
fn check(stencil: &rc::Stencil<f32, ()>, n: usize) -> Result<(), Box<dyn Error>> {
    for (data, input) in [("awkward data", awkward(n, 1)), ("a noisy sine", common::noisy_sine(n))] {
        let emulated = stencil.emulate_vec(&[&input], ())?.remove(0);
        let reference = stencil.reference_vec(&[&input], ())?.remove(0);
        common::compare(&emulated, &reference, &format!("stencil `{}` emulated on {data}", stencil.name()))?;
    }
    println!("{}: check: passed (emulation = run_cpu, bit for bit, on awkward data and a noisy sine)", stencil.name());
    Ok(())
}
