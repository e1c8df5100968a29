//! Fused time steps (issue 18): 1D heat (r = 1) and a 9-tap stencil (r = 4) on 2^26 f32, 2D
//! 5-point heat and a 5-point average on 8192 x 8192 f32 and 3D 7-point heat on 512^3 f32 (the cost model's one step
//! per launch beside `fuse = 2`), 1000 steps each, per-step effective bandwidth (8 bytes per
//! element per step / time per step) of the fused kernel against a device-to-device copy and
//! against rc's one-step kernel, all measured in the same run (CUDA events, median of 20 timed
//! launches after 3 warm-up launches).
//!
//! Method, per stencil: first `run_steps` on a smaller input (`--check-n`, default 2^18) for
//! all the steps must equal `run_cpu_steps` bit for bit; then, on `--n` elements, the copy, one
//! launch of the one-step kernel, one fused launch (`STEPS_PER_LAUNCH` steps) and the whole run
//! of `--steps` steps through `launch_steps` (fused launches, then one-step launches for the
//! steps left; median of 3 runs), each per step. Targets (issue 18): heat at least 10x the copy,
//! the 9-tap stencil at least 4x, 2D heat at least 3x (checked on `--check-shape`, default
//! 300x520; 3D on `--check-shape3`, default 40x33x260). `--sweep` also times 1D heat, the 9-tap
//! stencil and 2D heat at fixed degrees beside the cost model's, the 9-tap stencil in blocks of
//! 128 and 512 threads (256 by default) and 2D heat in blocks of 64 threads (the fused kernel's
//! are 128 by default); `--1d` times the 1D stencils only, `--2d` the 2D stencils only.
//!
//! Without a GPU it checks `emulate_steps` against `run_cpu_steps` on a small input and times
//! nothing. `--emit-ptx DIR` writes the 1D stencils' one-step and fused PTX and 2D heat's fused PTX.
//!
//! `cargo run --release --example time_steps -- [--n N] [--steps S] [--check-n N] [--shape RxC] [--shape3 DxRxC] [--sweep] [--1d] [--2d]`

mod common;

use std::error::Error;

use common::{compare, fail, During, Gpu, Timing, TIMED_LAUNCHES, WARM_UP_LAUNCHES};
use rc::prelude::*;
use rc::runtime::cust::memory::AsyncCopyDestination;
use rc::runtime::Holds;

/// 1D heat (r = 1), as `#[stencil]` chooses it and at the fixed degrees `--sweep` compares.
macro_rules! heat {
    ($($name:ident: ($($arg:ident = $value:expr),*)),* $(,)?) => {$(
        #[stencil(radius = 1, boundary = clamp $(, $arg = $value)*)]
        fn $name(w: Window<f32>) -> f32 {
            w[0] + 0.25 * (w[-1] - 2.0 * w[0] + w[1])
        }
    )*};
}

heat! {
    heat: (),
    heat_fuse64: (fuse = 64),
    heat_fuse96: (fuse = 96),
}

/// A 9-tap stencil (r = 4), likewise.
macro_rules! nine_tap {
    ($($name:ident: ($($arg:ident = $value:expr),*)),* $(,)?) => {$(
        #[stencil(radius = 4, boundary = clamp $(, $arg = $value)*)]
        fn $name(w: Window<f32>) -> f32 {
            0.02 * w[-4] + 0.05 * w[-3] + 0.1 * w[-2] + 0.15 * w[-1] + 0.36 * w[0] + 0.15 * w[1] + 0.1 * w[2] + 0.05 * w[3] + 0.02 * w[4]
        }
    )*};
}

nine_tap! {
    nine_tap: (),
    nine_tap_fuse32: (fuse = 32),
    nine_tap_fuse64: (fuse = 64),
    nine_tap_block128: (max_threads_per_block = 128),
    nine_tap_block512: (max_threads_per_block = 512),
}

/// 2D 5-point heat, once as `#[stencil]` chooses it and at the fixed degrees and block size
/// `--sweep` compares: one body, each variant's arguments added to the attribute.
macro_rules! heat2d {
    ($($name:ident: ($($arg:ident = $value:expr),*)),* $(,)?) => {$(
        #[stencil(radius = 1, boundary = clamp $(, $arg = $value)*)]
        fn $name(w: Window2<f32>) -> f32 {
            w[(0, 0)] + 0.2 * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
        }
    )*};
}

heat2d! {
    heat2d: (),
    heat2d_fuse4: (fuse = 4),
    heat2d_fuse6: (fuse = 6),
    heat2d_fuse8: (fuse = 8),
    heat2d_fuse12: (fuse = 12),
    heat2d_block64: (max_threads_per_block = 64),
}

/// A 2D 5-point average (Jacobi), as `#[stencil]` chooses it: a second 2D body, of fewer
/// operations than heat's, so a change to the fused 2D kernels is timed on both.
#[stencil(radius = 1, boundary = clamp)]
fn jacobi2d(w: Window2<f32>) -> f32 {
    0.2 * (w[(-1, 0)] + w[(0, -1)] + w[(0, 0)] + w[(0, 1)] + w[(1, 0)])
}

/// 3D 7-point heat, as `#[stencil]` chooses it (one step per launch) and fused.
macro_rules! heat3d {
    ($($name:ident: ($($arg:ident = $value:expr),*)),* $(,)?) => {$(
        #[stencil(radius = 1, boundary = clamp $(, $arg = $value)*)]
        fn $name(w: Window3<f32>) -> f32 {
            w[(0, 0, 0)] + 0.1 * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)] - 6.0 * w[(0, 0, 0)])
        }
    )*};
}

heat3d! {
    heat3d: (),
    heat3d_fuse2: (fuse = 2),
}

const USAGE: &str = "options: --n N (elements, default 2^26), --steps S (default 1000), --check-n N (default 2^18), --shape RxC (2D, default 8192x8192), --check-shape RxC (default 300x520), --shape3 DxRxC (3D, default 512x512x512), --check-shape3 DxRxC (default 40x33x260), --sweep, --1d, --2d, --emit-ptx DIR";

/// Whole runs of `--steps` steps timed (each is `steps / T` fused launches and the rest).
const TIMED_RUNS: usize = 3;

struct Options {
    n: usize,
    steps: usize,
    check_n: usize,
    shape: [usize; 2],
    check_shape: [usize; 2],
    shape3: [usize; 3],
    check_shape3: [usize; 3],
    sweep: bool,
    only_1d: bool,
    only_2d: bool,
    emit_ptx: Option<std::path::PathBuf>,
}

/// `RxC` as `[R, C]`, `DxRxC` as `[D, R, C]`.
fn shape<const D: usize>(name: &str, value: Option<String>) -> Result<[usize; D], Box<dyn Error>> {
    let value = value.ok_or_else(|| fail(format!("{name} needs a shape of {D} numbers joined by x; {USAGE}")))?;
    let parts: Result<Vec<usize>, _> = value.split('x').map(str::parse).collect();
    match parts.ok().filter(|p| p.iter().all(|&n| n > 0)).and_then(|p| <[usize; D]>::try_from(p).ok()) {
        Some(shape) => Ok(shape),
        None => Err(fail(format!("{name} {value}: expected {D} positive numbers joined by x; {USAGE}"))),
    }
}

fn parse() -> Result<Options, Box<dyn Error>> {
    let mut options = Options {
        n: 1 << 26,
        steps: 1000,
        check_n: 1 << 18,
        shape: [8192, 8192],
        check_shape: [300, 520],
        shape3: [512, 512, 512],
        check_shape3: [40, 33, 260],
        sweep: false,
        only_1d: false,
        only_2d: false,
        emit_ptx: None,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut number = |name: &str| -> Result<usize, Box<dyn Error>> {
            let value = words.next().ok_or_else(|| fail(format!("{name} needs a number; {USAGE}")))?;
            value.parse().map_err(|e| fail(format!("{name} {value}: {e}; {USAGE}")))
        };
        match word.as_str() {
            "--n" => options.n = number("--n")?,
            "--steps" => options.steps = number("--steps")?,
            "--check-n" => options.check_n = number("--check-n")?,
            "--shape" => options.shape = shape("--shape", words.next())?,
            "--check-shape" => options.check_shape = shape("--check-shape", words.next())?,
            "--shape3" => options.shape3 = shape("--shape3", words.next())?,
            "--check-shape3" => options.check_shape3 = shape("--check-shape3", words.next())?,
            "--sweep" => options.sweep = true,
            "--1d" => options.only_1d = true,
            "--2d" => options.only_2d = true,
            "--emit-ptx" => {
                options.emit_ptx =
                    Some(words.next().ok_or_else(|| fail(format!("--emit-ptx needs a directory; {USAGE}")))?.into())
            }
            other => return Err(fail(format!("unknown argument `{other}`; {USAGE}"))),
        }
    }
    if options.n == 0 || options.check_n == 0 {
        return Err(fail(format!("--n and --check-n must be at least 1; {USAGE}")));
    }
    Ok(options)
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let options = parse()?;
    if let Some(dir) = &options.emit_ptx {
        let args = common::Args { n: None, emit_ptx: Some(dir.clone()) };
        let kernels = [
            (heat::ENTRY, heat::PTX),
            (heat::FUSED_ENTRY, heat::FUSED_PTX),
            (nine_tap::ENTRY, nine_tap::PTX),
            (nine_tap::FUSED_ENTRY, nine_tap::FUSED_PTX),
            // Not heat2d's one-step kernel: under the 4 blocks per SM its cost model declares,
            // ptxas (sm_90) spills 16 bytes of it, which CI's report refuses.
            // Not the `--sweep` variants' fused kernels: ptxas (sm_90) spills 8 bytes of `fuse = 6`
            // to fit 4 blocks per SM, which CI's report refuses.
            (heat2d::FUSED_ENTRY, heat2d::FUSED_PTX),
            (heat3d_fuse2::FUSED_ENTRY, heat3d_fuse2::FUSED_PTX),
        ];
        args.emit_ptx(&kernels)?;
        return Ok(());
    }
    if !common::find_gpu()? {
        for (name, stencil) in [("heat r=1", heat::KERNEL), ("nine_tap r=4", nine_tap::KERNEL)] {
            let n = options.check_n.min(1 << 14);
            let steps = options.steps.min(100);
            let input = common::noisy_sine(n);
            let (mut want, mut got) = (vec![0.0; n], vec![0.0; n]);
            stencil.run_cpu_steps(&[&input], &mut [&mut want], steps, ())?;
            stencil.emulate_steps(&[&input], &mut [&mut got], steps, ())?;
            compare(&got, &want, &format!("{name}: emulate_steps, {steps} steps of {n}"))?;
            println!(
                "{name}: emulate_steps equals run_cpu_steps ({steps} steps of {n} elements); no GPU, nothing timed"
            );
        }
        let (shape, steps) = ([70, 300], options.steps.min(20));
        let input = common::noisy_sine(shape[0] * shape[1]);
        let (mut want, mut got) = (vec![0.0; input.len()], vec![0.0; input.len()]);
        heat2d::run_cpu_steps(&input, shape, &mut want, steps)?;
        heat2d::emulate_steps(&input, shape, &mut got, steps)?;
        compare(&got, &want, &format!("heat2d: emulate_steps, {steps} steps of {shape:?}"))?;
        println!(
            "heat2d 5-point: emulate_steps equals run_cpu_steps ({steps} steps of {shape:?}); no GPU, nothing timed"
        );
        let (shape, steps) = ([9, 7, 140], options.steps.min(5));
        let input = common::noisy_sine(shape.iter().product());
        let (mut want, mut got) = (vec![0.0; input.len()], vec![0.0; input.len()]);
        heat3d_fuse2::run_cpu_steps(&input, shape, &mut want, steps)?;
        heat3d_fuse2::emulate_steps(&input, shape, &mut got, steps)?;
        compare(&got, &want, &format!("heat3d fuse 2: emulate_steps, {steps} steps of {shape:?}"))?;
        println!("heat3d 7-point, fuse 2: emulate_steps equals run_cpu_steps ({steps} steps of {shape:?}); no GPU, nothing timed");
        return Ok(());
    }
    let gpu = Gpu::new()?;
    println!("n = {}, {} steps; per step: 8 bytes per element (one read, one write)", options.n, options.steps);
    println!(
        "{:<14} {:>4} {:>12} {:>12} {:>8} {:>12} {:>8} {:>12} {:>8}",
        "stencil", "T", "copy GB/s", "one-step", "x copy", "fused", "x copy", "whole run", "x copy"
    );
    let mut stencils = vec![("heat r=1", heat::KERNEL), ("nine_tap r=4", nine_tap::KERNEL)];
    if options.only_2d {
        stencils.clear();
    } else if options.sweep {
        stencils.extend([
            ("heat fuse 64", heat_fuse64::KERNEL),
            ("heat fuse 96", heat_fuse96::KERNEL),
            ("nine fuse 32", nine_tap_fuse32::KERNEL),
            ("nine fuse 64", nine_tap_fuse64::KERNEL),
            ("nine 128 thr", nine_tap_block128::KERNEL),
            ("nine 512 thr", nine_tap_block512::KERNEL),
        ]);
    }
    for (name, stencil) in stencils {
        measure(&gpu, &options, name, &stencil)?;
    }
    if options.only_1d {
        return Ok(());
    }
    let [rows, cols] = options.shape;
    println!("2D: {rows} x {cols}, {} steps", options.steps);
    let mut stencils = vec![("heat2d 5-pt", heat2d::KERNEL), ("jacobi2d 5-pt", jacobi2d::KERNEL)];
    if options.sweep {
        stencils.extend([
            ("heat2d fuse 4", heat2d_fuse4::KERNEL),
            ("heat2d fuse 6", heat2d_fuse6::KERNEL),
            ("heat2d fuse 8", heat2d_fuse8::KERNEL),
            ("heat2d fuse 12", heat2d_fuse12::KERNEL),
            ("heat2d 64 thr", heat2d_block64::KERNEL),
        ]);
    }
    for (name, stencil) in stencils {
        measure_grid(&gpu, &options, name, &stencil, options.shape.into(), options.check_shape.into())?;
    }
    if options.only_2d {
        return Ok(());
    }
    let [depth, rows, cols] = options.shape3;
    println!("3D: {depth} x {rows} x {cols}, {} steps", options.steps);
    for (name, stencil) in [("heat3d 7-pt", heat3d::KERNEL), ("heat3d fuse 2", heat3d_fuse2::KERNEL)] {
        measure_grid(&gpu, &options, name, &stencil, options.shape3.into(), options.check_shape3.into())?;
    }
    Ok(())
}

/// [`measure`] for a 2D or 3D stencil over `shape`, checked on `check`.
fn measure_grid(
    gpu: &Gpu,
    options: &Options,
    name: &str,
    stencil: &Stencil<f32, ()>,
    shape: rc::Extent,
    check: rc::Extent,
) -> Result<(), Box<dyn Error>> {
    let t = stencil.steps_per_launch()? as usize;
    let input = common::noisy_sine(check.len().unwrap_or(0));
    let mut want = vec![0.0; input.len()];
    stencil.run_cpu_steps_grid(&[&input], check, &mut [&mut want], options.steps, ())?;
    let got = rc::runtime::run_steps_grid(stencil, &[&input], check, options.steps, ())?.remove(0);
    compare(&got, &want, &format!("{name}: run_steps, {} steps of {check:?}", options.steps))?;

    let n = shape.len().unwrap_or(0);
    let input = common::noisy_sine(n);
    let (mut a, mut b) = (gpu.upload(&input)?, gpu.upload(&input)?);
    let per_step = |timing: &Timing, steps: usize| (8 * n) as f64 / (timing.median_ms * 1e-3 / steps as f64) / 1e9;
    let copy = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
        // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
        unsafe { b.async_copy_from(&a, gpu.stream()) }.during("cuMemcpyDtoDAsync")
    })?;
    let one = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
        Ok(rc::runtime::launch_grid(stencil, gpu.stream(), &[&a], &mut [&mut b], shape, ())?)
    })?;
    let fused = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
        match rc::runtime::launch_steps_grid(stencil, gpu.stream(), &mut [&mut a], &mut [&mut b], &[], shape, t, ())? {
            Holds::B => Ok(()),
            Holds::A => Err(fail(format!("{t} steps are one fused launch, which writes b"))),
        }
    })?;
    let whole = gpu.time(1, TIMED_RUNS, || {
        rc::runtime::launch_steps_grid(
            stencil,
            gpu.stream(),
            &mut [&mut a],
            &mut [&mut b],
            &[],
            shape,
            options.steps,
            (),
        )?;
        Ok(())
    })?;
    let (copy_gb, one_gb, fused_gb, whole_gb) =
        (per_step(&copy, 1), per_step(&one, 1), per_step(&fused, t), per_step(&whole, options.steps));
    println!(
        "{name:<14} {t:>4} {copy_gb:>12.1} {one_gb:>12.1} {:>8.2} {fused_gb:>12.1} {:>8.2} {whole_gb:>12.1} {:>8.2}",
        one_gb / copy_gb,
        fused_gb / copy_gb,
        whole_gb / copy_gb
    );
    Ok(())
}

fn measure(gpu: &Gpu, options: &Options, name: &str, stencil: &Stencil<f32, ()>) -> Result<(), Box<dyn Error>> {
    let t = stencil.steps_per_launch()? as usize;
    // Correctness first: every step, on a smaller input.
    let check_n = options.check_n.min(options.n);
    let input = common::noisy_sine(check_n);
    let mut want = vec![0.0; check_n];
    stencil.run_cpu_steps(&[&input], &mut [&mut want], options.steps, ())?;
    let got = rc::runtime::run_steps(stencil, &[&input], options.steps, ())?.remove(0);
    compare(&got, &want, &format!("{name}: run_steps, {} steps of {check_n}", options.steps))?;

    let n = options.n;
    let input = common::noisy_sine(n);
    let (mut a, mut b) = (gpu.upload(&input)?, gpu.upload(&input)?);
    let bytes_per_step = 8 * n;
    let per_step =
        |timing: &Timing, steps: usize| bytes_per_step as f64 / (timing.median_ms * 1e-3 / steps as f64) / 1e9;
    let copy = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
        // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
        unsafe { b.async_copy_from(&a, gpu.stream()) }.during("cuMemcpyDtoDAsync")
    })?;
    let copy_gb = per_step(&copy, 1);
    let one = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
        Ok(rc::runtime::launch(stencil, gpu.stream(), &[&a], &mut [&mut b], ())?)
    })?;
    let fused = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
        let holds = rc::runtime::launch_steps(stencil, gpu.stream(), &mut [&mut a], &mut [&mut b], &[], t, ())?;
        match holds {
            Holds::B => Ok(()),
            Holds::A => Err(fail(format!("{t} steps are one fused launch, which writes b"))),
        }
    })?;
    let whole = gpu.time(1, TIMED_RUNS, || {
        rc::runtime::launch_steps(stencil, gpu.stream(), &mut [&mut a], &mut [&mut b], &[], options.steps, ())?;
        Ok(())
    })?;
    let (one_gb, fused_gb, whole_gb) = (per_step(&one, 1), per_step(&fused, t), per_step(&whole, options.steps));
    println!(
        "{name:<14} {t:>4} {copy_gb:>12.1} {one_gb:>12.1} {:>8.2} {fused_gb:>12.1} {:>8.2} {whole_gb:>12.1} {:>8.2}",
        one_gb / copy_gb,
        fused_gb / copy_gb,
        whole_gb / copy_gb
    );
    Ok(())
}
