//! Explicit heat-equation steps `u' = u + alpha * (u[-1] - 2u + u[1])`, with `alpha` a run-time
//! parameter and insulated ends (boundary `clamp`: the edge sees itself as its neighbour).
//!
//! The state lives on the GPU for the whole run: each step reads one device buffer and writes the
//! other, then they swap (ping-pong). The final state must equal, bit for bit, the same number of
//! `heat::run_cpu` steps on the CPU. On the GPU it also prints the kernel's resource report.

mod common;

use std::error::Error;
use std::time::Instant;

use common::{Backend, Gpu, Speed, Timing};
use rc::prelude::*;
use rc::runtime::cust::memory::DeviceBuffer;
use rc::testdata::{awkward, poison};

#[stencil(radius = 1, warp = 32, outputs_per_thread = 4, boundary = clamp)]
fn heat(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

/// Stable for alpha <= 0.5.
const ALPHA: f32 = 0.25;
const STEPS: usize = 1000;
/// The checked run's length: the CPU reference does every step too, on one thread.
const CHECK_N: usize = 1 << 15;

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[(heat::ENTRY, heat::PTX)])? {
        return Ok(());
    }
    let backend = Backend::detect()?;
    let n = args.n.unwrap_or(backend.default_n());

    backend.check(&heat::KERNEL, &awkward(n.min(common::AWKWARD_N), 1), (ALPHA,), "one step on awkward data")?;

    let check_n = n.min(CHECK_N);
    let initial = common::noisy_sine(check_n);
    let want = simulate_cpu(&initial, heat::run_cpu)?;
    let start = Instant::now();
    let got = match &backend {
        Backend::Gpu(gpu) => gpu.download(&simulate_gpu(gpu, &initial)?.0)?,
        Backend::Emulation => simulate_cpu(&initial, heat::emulate)?,
    };
    let elapsed = start.elapsed();
    let what = format!("{STEPS} steps from a noisy sine, n = {check_n}");
    backend.compare(&heat::KERNEL, &got, &want, &what)?;
    println!("heat, alpha = {ALPHA}: check: passed (one step on awkward data; {what}; bit-exact against run_cpu)");
    backend.print_resources(&heat::KERNEL)?;

    match &backend {
        Backend::Gpu(gpu) => {
            // Timed on a longer state than the checked run, whose CPU reference would take minutes.
            let (_, timing) = simulate_gpu(gpu, &common::noisy_sine(n))?;
            let total_ms = timing.total_ms;
            let speed = Speed::Gpu { bytes: 2 * n * std::mem::size_of::<f32>(), timing };
            println!("{STEPS} steps over {n} f32: per step {speed}; {total_ms:.1} ms for all the timed steps");
        }
        Backend::Emulation => println!("{STEPS} steps over {check_n} f32: {}", Speed::Emulated(elapsed)),
    }
    Ok(())
}

/// One step on the CPU: `heat::run_cpu` or `heat::emulate`.
type CpuStep = fn(&[f32], &mut [f32], f32) -> Result<(), rc::Error>;

/// `STEPS` steps on the CPU.
fn simulate_cpu(initial: &[f32], step: CpuStep) -> Result<Vec<f32>, Box<dyn Error>> {
    let mut current = initial.to_vec();
    let mut next = vec![poison::<f32>(); initial.len()];
    for _ in 0..STEPS {
        step(&current, &mut next, ALPHA)?;
        std::mem::swap(&mut current, &mut next);
    }
    Ok(current)
}

/// `STEPS` steps on the GPU between two device buffers, each timed with CUDA events except the
/// first (a warm-up); returns the buffer holding the final state.
fn simulate_gpu(gpu: &Gpu, initial: &[f32]) -> Result<(DeviceBuffer<f32>, Timing), Box<dyn Error>> {
    let mut current = gpu.upload(initial)?;
    let mut next = gpu.poisoned::<f32>(initial.len())?;
    let timing = gpu.time(1, STEPS - 1, || {
        heat::launch(gpu.stream(), &current, &mut next, ALPHA)?;
        std::mem::swap(&mut current, &mut next);
        Ok(())
    })?;
    Ok((current, timing))
}
