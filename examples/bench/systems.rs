//! `--systems`: what a system of two fields costs, one step per launch and fused. Gray-Scott
//! reaction-diffusion on a torus (the `gray_scott` example's stencil): each step reads u and v
//! and writes both, 16 bytes per point. The targets: one step per launch at least 0.90
//! of the device-to-device copy measured in the same run (bandwidth counted as those 16 bytes),
//! and the fused `launch_steps` over a whole run of 1000 steps at least 3 times the copy per
//! step (the 16 bytes of every step over the time per step). Both are checked bit-exact against
//! `run_cpu` / `run_cpu_steps` before they are timed, on poisoned outputs.

use std::fmt::Write as _;
use std::path::Path;

use rc::prelude::*;
use rc::runtime::cust::memory::{AsyncCopyDestination, DeviceBuffer};
use rc::runtime::{GpuInfo, Holds};

use crate::bench::options::Options;
use crate::common::{compare, During, Gpu, Result};

/// The targets: one step per launch at this fraction of the copy or more, and the fused
/// run at this multiple of it per step.
pub const ONE_STEP_TARGET: f64 = 0.90;
pub const FUSED_TARGET: f64 = 3.0;

/// The timed grid, and the steps of the timed fused run.
const SHAPE: [usize; 2] = [8192, 8192];
const STEPS: usize = 1000;
/// The fused kernels are checked on a smaller torus (the CPU runs every step): the interior
/// tiles, the edge strips and the wrap all occur in it.
const CHECK_SHAPE: [usize; 2] = [512, 512];
const FEED: f32 = 0.037;
const KILL: f32 = 0.06;

/// u is fed at rate `f`, v dies at rate `f + k`; they react as u + 2v -> 3v. The same body as
/// examples/gray_scott.rs (an example cannot be imported).
#[stencil(radius = 1, boundary = wrap)]
pub fn gray_scott(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (u[(0, 0)] + 0.2 * lap_u - uvv + f * (1.0 - u[(0, 0)]), v[(0, 0)] + 0.1 * lap_v + uvv - (f + k) * v[(0, 0)])
}

/// u = 1 with noise, v = 0, and squares of u = 0.5, v = 0.25 seeded over the grid, so that the
/// reaction runs everywhere from the start.
fn fields([rows, cols]: [usize; 2]) -> [Vec<f32>; 2] {
    let mut rng = rc::testdata::Rng::new(34);
    let seeded = |i: usize| (i / cols) % 64 < 12 && (i % cols) % 64 < 12;
    let u = (0..rows * cols).map(|i| if seeded(i) { 0.5 } else { 1.0 - 0.01 * rng.uniform(0.0, 1.0) as f32 }).collect();
    let v = (0..rows * cols).map(|i| if seeded(i) { 0.25 } else { 0.0 }).collect();
    [u, v]
}

/// `steps` steps of `run_cpu_steps_grid` (`emulate`: of `emulate_steps_grid`), u and v.
fn steps_on_cpu(inputs: &[&[f32]; 2], shape: [usize; 2], steps: usize, emulate: bool) -> Result<[Vec<f32>; 2]> {
    let kernel = gray_scott::KERNEL;
    let (mut u, mut v) = (vec![0.0; inputs[0].len()], vec![0.0; inputs[0].len()]);
    let outputs: &mut [&mut [f32]] = &mut [&mut u, &mut v];
    match emulate {
        false => kernel.run_cpu_steps_grid(inputs, shape, outputs, steps, (FEED, KILL))?,
        true => kernel.emulate_steps_grid(inputs, shape, outputs, steps, (FEED, KILL))?,
    }
    Ok([u, v])
}

/// Whether the run's state is in `a` or `b` after `launch_steps`.
fn pick<'a>(holds: Holds, a: &'a [DeviceBuffer<f32>; 2], b: &'a [DeviceBuffer<f32>; 2]) -> &'a [DeviceBuffer<f32>; 2] {
    match holds {
        Holds::A => a,
        Holds::B => b,
    }
}

/// The run: the copy, the one-step launch and the fused run, each checked then timed; a table
/// on stdout and in summary.txt, and results.csv, in `out`.
pub fn run(options: &Options, info: &GpuInfo, out: &Path) -> Result<()> {
    let gpu = Gpu::new()?;
    let kernel = gray_scott::KERNEL;
    let params = (FEED, KILL);
    let n = SHAPE[0] * SHAPE[1];
    let bytes_per_step = 4 * n * 4;

    // The fused run, checked on the small torus over a whole run of STEPS.
    let small = fields(CHECK_SHAPE);
    let want = steps_on_cpu(&[&small[0], &small[1]], CHECK_SHAPE, STEPS, false)?;
    let mut a = [gpu.upload(&small[0])?, gpu.upload(&small[1])?];
    let mut b = [gpu.poisoned::<f32>(small[0].len())?, gpu.poisoned::<f32>(small[0].len())?];
    let holds = {
        let [a0, a1] = &mut a;
        let [b0, b1] = &mut b;
        rc::runtime::launch_steps_grid(
            &kernel,
            gpu.stream(),
            &mut [a0, a1],
            &mut [b0, b1],
            &[],
            CHECK_SHAPE,
            STEPS,
            params,
        )?
    };
    for (field, name) in ["u", "v"].iter().enumerate() {
        let got = gpu.download(&pick(holds, &a, &b)[field])?;
        compare(&got, &want[field], &format!("gray_scott {name}: launch_steps, {STEPS} steps of {CHECK_SHAPE:?}"))?;
    }
    println!("systems: launch_steps equals run_cpu_steps bit for bit ({STEPS} steps of {CHECK_SHAPE:?}, u and v)");

    // The timed grid: one step checked against run_cpu.
    println!("systems: {SHAPE:?}, making the fields");
    let host = fields(SHAPE);
    let one = kernel.reference_grid_vec(&[&host[0], &host[1]], SHAPE, params)?;
    let d_in = [gpu.upload(&host[0])?, gpu.upload(&host[1])?];
    let mut d_out = [gpu.poisoned::<f32>(n)?, gpu.poisoned::<f32>(n)?];
    let launch_one = |d_out: &mut [DeviceBuffer<f32>; 2]| -> Result<()> {
        let [o0, o1] = d_out;
        Ok(rc::runtime::launch_grid(&kernel, gpu.stream(), &[&d_in[0], &d_in[1]], &mut [o0, o1], SHAPE, params)?)
    };
    launch_one(&mut d_out)?;
    for (field, name) in ["u", "v"].iter().enumerate() {
        compare(&gpu.download(&d_out[field])?, &one[field], &format!("gray_scott {name}: one step of {SHAPE:?}"))?;
    }

    let copy = gpu.time(options.warm_up, options.reps, || {
        // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
        unsafe { d_out[0].async_copy_from(&d_in[0], gpu.stream()) }.during("cuMemcpyDtoDAsync")
    })?;
    let copy_gb = copy.gb_per_s(2 * n * 4);
    let one_step = gpu.time(options.warm_up, options.reps, || launch_one(&mut d_out))?;
    let one_gb = one_step.gb_per_s(bytes_per_step);

    let mut a = [gpu.upload(&host[0])?, gpu.upload(&host[1])?];
    let mut b = [gpu.poisoned::<f32>(n)?, gpu.poisoned::<f32>(n)?];
    // Each timed run starts from whatever the last left: the time of a step does not depend on
    // the values (no branches on them in the body).
    let fused = gpu.time(options.warm_up, options.reps, || {
        let [a0, a1] = &mut a;
        let [b0, b1] = &mut b;
        rc::runtime::launch_steps_grid(&kernel, gpu.stream(), &mut [a0, a1], &mut [b0, b1], &[], SHAPE, STEPS, params)?;
        Ok(())
    })?;
    let step_ms = fused.median_ms / STEPS as f64;
    let fused_gb = bytes_per_step as f64 / (step_ms * 1e-3) / 1e9;
    let registers = rc::runtime::resources(&kernel)?.registers_per_thread;

    let mut summary = String::new();
    let _ = writeln!(summary, "device: {info}");
    let _ = writeln!(
        summary,
        "Gray-Scott (u and v, r = 1, wrap), f32, {SHAPE:?}; bandwidth = 16 bytes per point and step; median of {} timed \
         launches (fused: whole runs of {STEPS} steps) after {} warm-ups (CUDA events); fused runs bit-exact with \
         run_cpu_steps on {CHECK_SHAPE:?}; targets: one step >= {ONE_STEP_TARGET:.2} of copy, fused >= {FUSED_TARGET:.1}x copy per step",
        options.reps, options.warm_up
    );
    let _ = writeln!(summary, "device-to-device copy {:.4} ms, {copy_gb:.1} GB/s", copy.median_ms);
    let _ = writeln!(
        summary,
        "one step per launch: {:.4} ms, {one_gb:.1} GB/s, {:.3} of copy, {registers} registers",
        one_step.median_ms,
        one_gb / copy_gb
    );
    let _ = writeln!(
        summary,
        "fused, {} steps per launch: {:.2} ms per {STEPS} steps, {:.5} ms per step, {fused_gb:.1} GB/s effective, {:.2}x copy per step",
        kernel.steps_per_launch()?,
        fused.median_ms,
        step_ms,
        fused_gb / copy_gb
    );
    print!("{summary}");
    let mut csv = String::from("kernel,steps_per_launch,time_ms_per_step,gb_per_s,copy_gb_per_s,fraction_of_copy\n");
    let _ = writeln!(csv, "copy,,{},{copy_gb},{copy_gb},1", copy.median_ms);
    let _ = writeln!(csv, "one step,1,{},{one_gb},{copy_gb},{}", one_step.median_ms, one_gb / copy_gb);
    let _ = writeln!(csv, "fused,{},{step_ms},{fused_gb},{copy_gb},{}", kernel.steps_per_launch()?, fused_gb / copy_gb);
    crate::common::write_summary(out, &summary, &csv)?;
    Ok(())
}

/// No GPU: the one-step and the fused warp programs on the CPU emulation against `run_cpu`,
/// on a small torus.
pub fn emulate_all() -> Result<usize> {
    let kernel = gray_scott::KERNEL;
    let shape = [96, 80];
    let host = fields(shape);
    let inputs: [&[f32]; 2] = [&host[0], &host[1]];
    let params = (FEED, KILL);
    let one = kernel.reference_grid_vec(&inputs, shape, params)?;
    let emulated = kernel.emulate_grid_vec(&inputs, shape, params)?;
    let steps = 3 * kernel.steps_per_launch()? as usize + 1;
    let many = steps_on_cpu(&inputs, shape, steps, false)?;
    let emulated_many = steps_on_cpu(&inputs, shape, steps, true)?;
    for field in 0..2 {
        compare(&emulated[field], &one[field], "gray_scott one step in the CPU emulation")?;
        compare(&emulated_many[field], &many[field], &format!("gray_scott {steps} steps in the CPU emulation"))?;
    }
    Ok(2)
}

/// The one-step and fused kernels' PTX, as `systems_<entry>.ptx`.
pub fn emit_ptx(dir: &Path) -> Result<usize> {
    std::fs::write(dir.join(format!("systems_{}.ptx", gray_scott::ENTRY)), gray_scott::PTX)?;
    std::fs::write(dir.join(format!("systems_{}.ptx", gray_scott::FUSED_ENTRY)), gray_scott::FUSED_PTX)?;
    Ok(2)
}
