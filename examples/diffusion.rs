//! Variable-coefficient diffusion on a plate, `u' = u + dt * div(k grad u)`: the conductivity `k`
//! is a second input field beside the temperature `u`, so the stencil has two windows,
//! `fn diffuse(u: Window2<f32>, k: Window2<f32>, dt: f32)`, and every generated function takes
//! one input per window: `diffuse::launch(stream, &u, &k, &mut next, shape, dt)`,
//! `diffuse::emulate(&u, &k, shape, &mut next, dt)`.
//!
//! A hot square sits in a plate of poor conductor crossed by a good one (a bar 50 times as
//! conductive); the edges are insulated (boundary `clamp`). The state stays on the GPU for every
//! step, ping-ponging between two device buffers, `k` uploaded once; without a GPU the CPU
//! emulation of the same warp program runs instead, and says so. The final state must equal,
//! bit for bit, the same steps of `diffuse::run_cpu`, the function itself.

mod common;

use std::error::Error;
use std::time::Instant;

use common::{Backend, Gpu, Speed, Timing};
use rc::prelude::*;
use rc::runtime::cust::memory::DeviceBuffer;
use rc::testdata::poison;

#[stencil(radius = 1, boundary = clamp)]
fn diffuse(u: Window2<f32>, k: Window2<f32>, dt: f32) -> f32 {
    // The flux through each face: its conductivity (the mean of the two cells it separates)
    // times the difference across it.
    let centre = u[(0, 0)];
    let north = 0.5 * (k[(0, 0)] + k[(-1, 0)]) * (u[(-1, 0)] - centre);
    let south = 0.5 * (k[(0, 0)] + k[(1, 0)]) * (u[(1, 0)] - centre);
    let west = 0.5 * (k[(0, 0)] + k[(0, -1)]) * (u[(0, -1)] - centre);
    let east = 0.5 * (k[(0, 0)] + k[(0, 1)]) * (u[(0, 1)] - centre);
    centre + dt * (north + south + west + east)
}

/// The plate on a GPU, and for the CPU emulation (which runs every lane of every warp in turn).
const GPU_SHAPE: [usize; 2] = [1024, 1024];
const EMULATION_SHAPE: [usize; 2] = [256, 256];
/// Stable while dt * k_max <= 1/4.
const DT: f32 = 0.004;
const STEPS: usize = 200;

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[(diffuse::ENTRY, diffuse::PTX)])? {
        return Ok(());
    }
    let backend = Backend::detect()?;
    let shape = match backend {
        Backend::Gpu(_) => GPU_SHAPE,
        Backend::Emulation => EMULATION_SHAPE,
    };
    let (u, k) = plate(shape);
    let want = simulate_cpu(&u, &k, shape, diffuse::run_cpu)?;
    let start = Instant::now();
    let (got, timing) = match &backend {
        Backend::Gpu(gpu) => {
            let (state, timing) = simulate_gpu(gpu, &u, &k, shape)?;
            (gpu.download(&state)?, Some(timing))
        }
        Backend::Emulation => (simulate_cpu(&u, &k, shape, diffuse::emulate)?, None),
    };
    let elapsed = start.elapsed();
    let [rows, cols] = shape;
    backend.compare(&diffuse::KERNEL, &got, &want, &format!("{STEPS} steps on a {rows} x {cols} plate"))?;
    // Insulated edges: the flux form moves heat between cells and loses none (up to rounding).
    let heat = |state: &[f32]| state.iter().map(|&x| f64::from(x)).sum::<f64>();
    println!(
        "diffusion: {STEPS} steps of a {rows} x {cols} plate (two input fields: temperature and conductivity): \
         bit-exact against run_cpu; total heat {:.1} before, {:.1} after",
        heat(&u),
        heat(&got)
    );
    match timing {
        // Each step reads both fields and writes one.
        Some(timing) => {
            println!("per step: {}", Speed::Gpu { bytes: 3 * rows * cols * std::mem::size_of::<f32>(), timing })
        }
        None => println!("on the CPU emulation (no GPU): {}", Speed::Emulated(elapsed)),
    }
    backend.print_resources(&diffuse::KERNEL)?;
    Ok(())
}

/// The initial temperature (a hot square) and the conductivity (a good conductor crossing a
/// poor one), row-major.
fn plate([rows, cols]: [usize; 2]) -> (Vec<f32>, Vec<f32>) {
    let hot = |y: usize, x: usize| y.abs_diff(rows / 3) < rows / 8 && x.abs_diff(cols / 3) < cols / 8;
    let conductor = |y: usize, _: usize| y.abs_diff(rows / 2) < rows / 16;
    let cells = || (0..rows * cols).map(|i| (i / cols, i % cols));
    let u = cells().map(|(y, x)| if hot(y, x) { 100.0 } else { 0.0 }).collect();
    let k = cells().map(|(y, x)| if conductor(y, x) { 50.0 } else { 1.0 }).collect();
    (u, k)
}

/// One step on the CPU: `diffuse::run_cpu` or `diffuse::emulate`.
type CpuStep = fn(&[f32], &[f32], [usize; 2], &mut [f32], f32) -> Result<(), rc::Error>;

/// `STEPS` steps on the CPU.
fn simulate_cpu(u: &[f32], k: &[f32], shape: [usize; 2], step: CpuStep) -> Result<Vec<f32>, Box<dyn Error>> {
    let mut current = u.to_vec();
    let mut next = vec![poison::<f32>(); u.len()];
    for _ in 0..STEPS {
        step(&current, k, shape, &mut next, DT)?;
        std::mem::swap(&mut current, &mut next);
    }
    Ok(current)
}

/// `STEPS` steps on the GPU between two device buffers, `k` uploaded once, each step timed with
/// CUDA events except the first (a warm-up); returns the buffer holding the final state.
fn simulate_gpu(
    gpu: &Gpu,
    u: &[f32],
    k: &[f32],
    shape: [usize; 2],
) -> Result<(DeviceBuffer<f32>, Timing), Box<dyn Error>> {
    let (mut current, conductivity) = (gpu.upload(u)?, gpu.upload(k)?);
    let mut next = gpu.poisoned::<f32>(u.len())?;
    let timing = gpu.time(1, STEPS - 1, || {
        diffuse::launch(gpu.stream(), &current, &conductivity, &mut next, shape, DT)?;
        std::mem::swap(&mut current, &mut next);
        Ok(())
    })?;
    Ok((current, timing))
}
