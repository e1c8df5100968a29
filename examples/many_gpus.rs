//! Gray-Scott on a 2048 x 2048 torus split into bands over every visible GPU (at least two
//! ranks, so one GPU runs two), halos exchanged on the device every fused launch, checked bit
//! for bit against one GPU's `run_steps`. Without a GPU, or built without the `cudarc` feature
//! (`cargo run --release --features cudarc --example many_gpus`), the same split runs on the CPU
//! (each band by the kernels' emulation, halos copied in host memory) on 128 x 128 and is checked
//! against `run_cpu_steps`; it says which ran.

mod common;

use std::error::Error;

use rc::prelude::*;
use rc::split::{run_split_steps, CpuSteps, Decomposition};

/// u is fed at rate `f`, v dies at rate `f + k`; they react as u + 2v -> 3v.
#[stencil(radius = 1, boundary = wrap)]
fn gray_scott(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (u[(0, 0)] + 0.2 * lap_u - uvv + f * (1.0 - u[(0, 0)]), v[(0, 0)] + 0.1 * lap_v + uvv - (f + k) * v[(0, 0)])
}

const FEED: f32 = 0.037;
const KILL: f32 = 0.06;

/// u = 1 everywhere, a square of v in the middle: u and v at global point `p = [row, col]` of
/// a grid of `[rows, cols]`.
fn seed([rows, cols]: [usize; 2], p: &[usize]) -> (f32, f32) {
    let inside = p[0].abs_diff(rows / 2) < rows / 25 && p[1].abs_diff(cols / 2) < cols / 25;
    if inside {
        (0.5, 0.25)
    } else {
        (1.0, 0.0)
    }
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[(gray_scott::ENTRY, gray_scott::PTX), (gray_scott::FUSED_ENTRY, gray_scott::FUSED_PTX)])? {
        return Ok(());
    }
    match on_gpus()? {
        Some(why_not) => on_cpu(&why_not),
        None => Ok(()),
    }
}

/// The split on the CPU: 4 ranks, an exchange every fused launch, each band by the emulation.
fn on_cpu(why: &str) -> Result<(), Box<dyn Error>> {
    let shape = [128, 128];
    let (steps, ranks, per_exchange) = (20, 4, gray_scott::STEPS_PER_LAUNCH as usize);
    let (u, v): (Vec<f32>, Vec<f32>) = (0..128 * 128).map(|i| seed(shape, &[i / 128, i % 128])).unzip();
    let split = Decomposition::new(&gray_scott::KERNEL.pattern(), shape, ranks, per_exchange)?;
    let (mut su, mut sv) = (vec![0.0; u.len()], vec![0.0; u.len()]);
    run_split_steps(
        &gray_scott::KERNEL,
        &split,
        &[&u, &v],
        &mut [&mut su, &mut sv],
        steps,
        (FEED, KILL),
        CpuSteps::Emulation,
    )?;
    let (mut want_u, mut want_v) = (vec![0.0; u.len()], vec![0.0; u.len()]);
    gray_scott::run_cpu_steps(&u, &v, shape, &mut want_u, &mut want_v, steps, FEED, KILL)?;
    let same = bits(&su) == bits(&want_u) && bits(&sv) == bits(&want_v);
    println!(
        "many_gpus: {why}; ran the split on the CPU instead: {steps} steps of Gray-Scott on 128 x 128 over {ranks} \
         bands (halo {} rows, an exchange every {per_exchange} steps), each band by the kernels' emulation; \
         bit-exact against run_cpu_steps of the whole grid: {same}",
        split.halo()
    );
    if !same {
        return Err("the split's result differs from run_cpu_steps".into());
    }
    Ok(())
}

/// Why the GPUs cannot run it, or `None` once they did.
#[cfg(not(feature = "cudarc"))]
fn on_gpus() -> Result<Option<String>, Box<dyn Error>> {
    Ok(Some("built without the `cudarc` feature (cargo run --release --features cudarc --example many_gpus)".into()))
}

/// The split over every visible GPU against one GPU's `run_steps`; why not, without a GPU.
#[cfg(feature = "cudarc")]
fn on_gpus() -> Result<Option<String>, Box<dyn Error>> {
    use rc::split::SplitGrid;
    let shape = [2048, 2048];
    let steps = 1000;
    let per_exchange = gray_scott::STEPS_PER_LAUNCH as usize;
    let gpus = match rc::runtime::gpu() {
        Ok(_) => rc::runtime::cudarc::driver::CudaContext::device_count().map_err(|e| format!("{e:?}"))? as usize,
        Err(e) if e.is_no_device() => return Ok(Some(format!("no GPU ({e})"))),
        Err(e) => return Err(e.into()),
    };
    let ranks = gpus.max(2);
    let split = Decomposition::new(&gray_scott::KERNEL.pattern(), shape, ranks, per_exchange)?;
    let halo = split.halo();
    let mut grid = SplitGrid::new(&gray_scott::KERNEL, split)?;
    // Each rank computes its own band's points from their global coordinates.
    grid.fill(0, |p| seed(shape, p).0)?;
    grid.fill(1, |p| seed(shape, p).1)?;
    let start = std::time::Instant::now();
    grid.run_steps(steps, (FEED, KILL))?;
    let split_state = grid.gather()?;
    let took = start.elapsed();
    let (u, v): (Vec<f32>, Vec<f32>) =
        (0..shape[0] * shape[1]).map(|i| seed(shape, &[i / shape[1], i % shape[1]])).unzip();
    let one = rc::runtime::run_steps_cudarc_grid(&gray_scott::KERNEL, &[&u, &v], shape, steps, (FEED, KILL))?;
    let same = split_state.iter().zip(&one).all(|(a, b)| bits(a) == bits(b));
    let spread = split_state[1].iter().filter(|&&v| v > 0.1).count();
    println!(
        "many_gpus: {steps} steps of Gray-Scott on {} x {} over {ranks} ranks on GPUs {:?} (halo {halo} rows, an exchange \
         every {per_exchange} steps) in {:.1} ms with copies in and out: v > 0.1 at {spread} points; bit-exact against \
         one GPU's run_steps: {same}",
        shape[0],
        shape[1],
        grid.devices(),
        took.as_secs_f64() * 1e3
    );
    if !same {
        return Err("the split's result differs from one GPU's run_steps".into());
    }
    Ok(None)
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}
