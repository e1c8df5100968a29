//! `--math`: what a correctly rounded `exp` costs in a stencil. Perona-Malik diffusion on
//! 8192 x 8192 f32 (each direction's flux scaled by the conductance `exp(-(d/K)^2)`, four `exp`
//! per point), one step per launch, beside the same stencil without the conductance (linear
//! diffusion, the same bytes) and the device-to-device copy, all in one run. The target:
//! Perona-Malik at least 0.85 of the copy, bandwidth counted as 8 bytes per point. Each kernel is
//! checked bit-exact against `run_cpu` on a poisoned output before it is timed.

use std::fmt::Write as _;
use std::path::Path;

use rc::prelude::*;
use rc::runtime::cust::memory::AsyncCopyDestination;
use rc::runtime::GpuInfo;

use crate::bench::options::Options;
use crate::common::{compare, During, Gpu, Result};

/// The target: Perona-Malik at this fraction of the copy or more.
pub const TARGET: f64 = 0.85;

const SHAPE: [usize; 2] = [8192, 8192];
/// 1 / K^2 and the time step.
const PARAMS: (f32, f32) = (4.0, 0.2);

/// Perona-Malik: the flux `d` toward each neighbour scaled by `exp(-(d/K)^2)` (a correctly
/// rounded `exp`, the same bits on the CPU and the GPU).
#[stencil(radius = 1, boundary = clamp, fuse = 1)]
pub fn perona_malik(w: Window2<f32>, inv_k2: f32, dt: f32) -> f32 {
    let flux = |d: f32| (-(d * d) * inv_k2).exp() * d;
    let c = w[(0, 0)];
    c + dt * (flux(w[(-1, 0)] - c) + flux(w[(1, 0)] - c) + flux(w[(0, -1)] - c) + flux(w[(0, 1)] - c))
}

/// Perona-Malik with fewer outputs per thread than the cost model's choice: a shorter kernel
/// (four `exp` per output, each printed inline), for what the instruction cache costs.
#[stencil(radius = 1, boundary = clamp, fuse = 1, outputs_per_thread = 2)]
pub fn perona_malik_p2(w: Window2<f32>, inv_k2: f32, dt: f32) -> f32 {
    let flux = |d: f32| (-(d * d) * inv_k2).exp() * d;
    let c = w[(0, 0)];
    c + dt * (flux(w[(-1, 0)] - c) + flux(w[(1, 0)] - c) + flux(w[(0, -1)] - c) + flux(w[(0, 1)] - c))
}

/// One output per thread.
#[stencil(radius = 1, boundary = clamp, fuse = 1, outputs_per_thread = 1)]
pub fn perona_malik_p1(w: Window2<f32>, inv_k2: f32, dt: f32) -> f32 {
    let flux = |d: f32| (-(d * d) * inv_k2).exp() * d;
    let c = w[(0, 0)];
    c + dt * (flux(w[(-1, 0)] - c) + flux(w[(1, 0)] - c) + flux(w[(0, -1)] - c) + flux(w[(0, 1)] - c))
}

/// The same diffusion without the conductance, for scale.
#[stencil(radius = 1, boundary = clamp, fuse = 1)]
pub fn linear(w: Window2<f32>, inv_k2: f32, dt: f32) -> f32 {
    let flux = |d: f32| d * inv_k2;
    let c = w[(0, 0)];
    c + dt * (flux(w[(-1, 0)] - c) + flux(w[(1, 0)] - c) + flux(w[(0, -1)] - c) + flux(w[(0, 1)] - c))
}

/// A diffusion stencil of this benchmark: 1 / K^2 and the time step.
type Diffusion = Stencil<f32, (f32, f32)>;

pub const KERNELS: [(&str, Diffusion); 4] = [
    ("perona-malik", perona_malik::KERNEL),
    ("perona-malik p2", perona_malik_p2::KERNEL),
    ("perona-malik p1", perona_malik_p1::KERNEL),
    ("linear", linear::KERNEL),
];

/// An image-like field: smooth regions in [0, 1] with edges and noise, so the conductance spans
/// its range.
fn image([rows, cols]: [usize; 2]) -> Vec<f32> {
    let mut rng = rc::testdata::Rng::new(36);
    (0..rows * cols)
        .map(|i| {
            let (y, x) = (i / cols, i % cols);
            let block = ((y / 97 + x / 131) % 3) as f32 * 0.4;
            block + 0.05 * rng.uniform(-1.0, 1.0) as f32
        })
        .collect()
}

/// The run: the copy, then per kernel the check and the timing; summary.txt and results.csv in
/// `out`.
pub fn run(options: &Options, info: &GpuInfo, out: &Path) -> Result<()> {
    let gpu = Gpu::new()?;
    let n = SHAPE[0] * SHAPE[1];
    println!("math: {SHAPE:?}, making the image");
    let host = image(SHAPE);
    let d_in = gpu.upload(&host)?;
    let mut d_out = gpu.poisoned::<f32>(n)?;
    let copy = gpu.time(options.warm_up, options.reps, || {
        // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
        unsafe { d_out.async_copy_from(&d_in, gpu.stream()) }.during("cuMemcpyDtoDAsync")
    })?;
    let copy_gb = copy.gb_per_s(2 * n * 4);
    let mut summary = String::new();
    let _ = writeln!(summary, "device: {info}");
    let _ = writeln!(
        summary,
        "2D r = 1 diffusion, clamp, f32, {SHAPE:?}, one step per launch; bandwidth = 8 bytes per point; median of {} \
         timed launches after {} warm-ups (CUDA events); each kernel bit-exact with run_cpu first; target: perona-malik \
         (4 correctly rounded exp per point) >= {TARGET:.2} of copy",
        options.reps, options.warm_up
    );
    let _ = writeln!(summary, "device-to-device copy {:.4} ms, {copy_gb:.1} GB/s", copy.median_ms);
    let mut csv = String::from("stencil,time_ms,gb_per_s,copy_gb_per_s,fraction_of_copy,registers\n");
    let _ = writeln!(csv, "copy,{},{copy_gb},{copy_gb},1,", copy.median_ms);
    for (label, kernel) in &KERNELS {
        let start = std::time::Instant::now();
        let want = kernel.reference_grid_vec(&[&host], SHAPE, PARAMS)?;
        println!("{label}: CPU reference in {:.2} s", start.elapsed().as_secs_f64());
        let mut d_out = gpu.poisoned::<f32>(n)?;
        let launch = |out: &mut _| -> Result<()> {
            Ok(rc::runtime::launch_grid(kernel, gpu.stream(), &[&d_in], &mut [out], SHAPE, PARAMS)?)
        };
        launch(&mut d_out)?;
        compare(&gpu.download(&d_out)?, &want[0], &format!("{label}: one step of {SHAPE:?}"))?;
        let timing = gpu.time(options.warm_up, options.reps, || launch(&mut d_out))?;
        let gb = timing.gb_per_s(2 * n * 4);
        let registers = rc::runtime::resources(kernel)?.registers_per_thread;
        let line = format!(
            "{label:<16} {:.4} ms, {gb:.1} GB/s, {:.3} of copy, {registers} registers",
            timing.median_ms,
            gb / copy_gb
        );
        println!("{line}");
        let _ = writeln!(summary, "{line}");
        let _ = writeln!(csv, "{label},{},{gb},{copy_gb},{},{registers}", timing.median_ms, gb / copy_gb);
    }
    print!("{summary}");
    crate::common::write_summary(out, &summary, &csv)?;
    Ok(())
}

/// No GPU: each kernel's warp program on the CPU emulation against `run_cpu`, on a small image.
pub fn emulate_all() -> Result<usize> {
    let shape = [130, 200];
    let host = image(shape);
    for (label, kernel) in &KERNELS {
        let want = kernel.reference_grid_vec(&[&host], shape, PARAMS)?;
        let got = kernel.emulate_grid_vec(&[&host], shape, PARAMS)?;
        compare(&got[0], &want[0], &format!("{label} in the CPU emulation"))?;
    }
    Ok(KERNELS.len())
}

/// Each kernel's PTX, as `math_<entry>.ptx`.
pub fn emit_ptx(dir: &Path) -> Result<usize> {
    for (text, entry) in [
        (perona_malik::PTX, perona_malik::ENTRY),
        (perona_malik_p2::PTX, perona_malik_p2::ENTRY),
        (perona_malik_p1::PTX, perona_malik_p1::ENTRY),
        (linear::PTX, linear::ENTRY),
    ] {
        std::fs::write(dir.join(format!("math_{entry}.ptx")), text)?;
    }
    Ok(KERNELS.len())
}
