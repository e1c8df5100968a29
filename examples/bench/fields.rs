//! `--fields`: what a second input field costs. Variable-coefficient diffusion
//! `u[0] + k[0] * (u[-1] - 2 u[0] + u[1])` reads two f32 fields and writes one, 12 bytes per
//! element; the target (16) is that it costs no more than those bytes: at least 0.90 of
//! the device-to-device copy measured in the same run, its bandwidth counted as 3 x 4 bytes per
//! output. Beside it, the one-field stencil with a constant coefficient, `u[0] + 0.25 * (u[-1] -
//! 2 u[0] + u[1])` (8 bytes per element), for scale. Both through `#[stencil]` with the cost
//! model's choice (no distribution, no outputs per thread), boundary valid, warp 32. Each kernel
//! is checked bit-exact against `run_cpu` on a poisoned output before it is timed.

use std::fmt::Write as _;
use std::path::Path;

use rc::prelude::*;
use rc::runtime::cust::memory::{AsyncCopyDestination, CopyDestination, DeviceSlice};
use rc::runtime::GpuInfo;

use crate::bench::options::Options;
use crate::common::{compare, fail, During, Gpu, Result};

/// The target: a two-field r = 1 stencil at this fraction of the copy or more.
pub const TARGET: f64 = 0.90;

#[stencil(radius = 1)]
pub fn two_fields(u: Window<f32>, k: Window<f32>) -> f32 {
    u[0] + k[0] * (u[-1] - 2.0 * u[0] + u[1])
}

#[stencil(radius = 1)]
pub fn one_field(u: Window<f32>) -> f32 {
    u[0] + 0.25 * (u[-1] - 2.0 * u[0] + u[1])
}

/// Each kernel with its label and the input fields it reads.
pub const KERNELS: [(&str, Stencil<f32, ()>, usize); 2] =
    [("two fields", two_fields::KERNEL, 2), ("one field", one_field::KERNEL, 1)];

/// The temperature `u` (a noisy sine) and the coefficient field `k` (in 0.05 ..= 0.25, as a
/// stable explicit step keeps it).
fn fields(n: usize) -> [Vec<f32>; 2] {
    let mut rng = rc::testdata::Rng::new(16);
    let u = (0..n).map(|i| ((i as f64 * 1e-3).sin() + 0.1 * rng.uniform(-1.0, 1.0)) as f32).collect();
    let k = (0..n).map(|_| rng.uniform(0.05, 0.25) as f32).collect();
    [u, k]
}

/// `run_cpu` over `inputs`, in chunks on every core (boundary valid: output i reads inputs
/// i..=i+2, so each chunk of outputs takes its inputs and 2 more).
fn reference(kernel: &Stencil<f32, ()>, inputs: &[&[f32]]) -> Result<Vec<f32>> {
    let r = kernel.pattern().radius().along_x() as usize;
    let n_out = kernel.output_len(inputs[0].len())?;
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let chunk = n_out.div_ceil(threads).max(1);
    let mut out = vec![0.0; n_out];
    let failed = std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, part)| {
                let parts: Vec<&[f32]> = inputs.iter().map(|f| &f[i * chunk..i * chunk + part.len() + 2 * r]).collect();
                s.spawn(move || kernel.run_cpu(&parts, &mut [part], ()).is_err())
            })
            .collect();
        handles.into_iter().any(|h| h.join().unwrap_or(true))
    });
    if failed {
        return Err(fail("run_cpu failed on a chunk of the input".to_owned()));
    }
    Ok(out)
}

/// The run: the copy, then per kernel the check and the timing; a table on stdout and in
/// summary.txt, and results.csv, in `out`.
pub fn run(options: &Options, info: &GpuInfo, out: &Path) -> Result<()> {
    let gpu = Gpu::new()?;
    let n = options.n.unwrap_or(crate::bench::options::DEFAULT_N_F32);
    println!("fields: n = {n}, making the input fields");
    let inputs = fields(n);
    let d_inputs = [gpu.upload(&inputs[0])?, gpu.upload(&inputs[1])?];
    let mut d_output = gpu.poisoned::<f32>(n)?;
    let d_poison = gpu.poisoned::<f32>(n)?;
    let copy = gpu.time(options.warm_up, options.reps, || {
        // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
        unsafe { d_output.async_copy_from(&d_inputs[0], gpu.stream()) }.during("cuMemcpyDtoDAsync")
    })?;
    let copy_gb = copy.gb_per_s(2 * n * 4);
    println!("device-to-device copy {:.4} ms, {copy_gb:.1} GB/s", copy.median_ms);
    let mut summary = String::new();
    let _ = writeln!(summary, "device: {info}");
    let _ = writeln!(
        summary,
        "f32 r = 1 diffusion, boundary valid, n = {n}, the cost model's choice; bandwidth = (fields + 1) x 4 bytes per output; \
         median of {} timed launches after {} warm-ups (CUDA events); target: two fields >= {TARGET:.2} of copy",
        options.reps, options.warm_up
    );
    let _ = writeln!(
        summary,
        "{:<11} {:<24} {:>10} {:>9} {:>9} {:>8} {:>5}",
        "stencil", "distribution", "time ms", "GB/s", "copy GB/s", "of copy", "regs"
    );
    let mut csv = String::from(
        "stencil,fields,distribution,outputs_per_thread,n,time_ms,gb_per_s,copy_gb_per_s,fraction_of_copy,registers\n",
    );
    let _ = writeln!(csv, "copy,1,,,{n},{},{copy_gb},{copy_gb},1,", copy.median_ms);
    let mut failures = Vec::new();
    for (label, kernel, count) in &KERNELS {
        let host: Vec<&[f32]> = inputs[..*count].iter().map(Vec::as_slice).collect();
        let start = std::time::Instant::now();
        let want = reference(kernel, &host)?;
        println!("{label}: CPU reference in {:.2} s", start.elapsed().as_secs_f64());
        let n_out = want.len();
        let mut out = d_output.index(..n_out);
        let device: Vec<&DeviceSlice<f32>> = d_inputs[..*count].iter().map(|b| &**b).collect();
        let launch = |out: &mut DeviceSlice<f32>| -> Result<()> {
            Ok(rc::runtime::launch(kernel, gpu.stream(), &device, &mut [out], ())?)
        };
        let checked = (|| -> Result<()> {
            out.copy_from(&d_poison.index(..n_out)).during("poisoning the output (cuMemcpyDtoD)")?;
            launch(&mut out)?;
            gpu.stream().synchronize().during("waiting for the GPU")?;
            let mut got = vec![0.0f32; n_out];
            out.copy_to(&mut got[..]).during("copying the output from the GPU")?;
            compare(&got, &want, label)
        })();
        if let Err(e) = checked {
            println!("{label}: {e}; not timed");
            failures.push(e.to_string());
            continue;
        }
        let timing = gpu.time(options.warm_up, options.reps, || launch(&mut out))?;
        let gb = timing.gb_per_s((count * n + n_out) * 4);
        let registers = rc::runtime::resources(kernel)?.registers_per_thread;
        let (layout, p) = (kernel.layout().to_string(), kernel.pattern().outputs_per_thread());
        let distribution = format!("{layout} x {p}");
        let line = format!(
            "{label:<11} {distribution:<24} {:>10.4} {gb:>9.1} {copy_gb:>9.1} {:>8.3} {registers:>5}",
            timing.median_ms,
            gb / copy_gb
        );
        println!("{line}");
        let _ = writeln!(summary, "{line}");
        let _ = writeln!(
            csv,
            "{label},{count},{layout},{p},{n},{},{gb},{copy_gb},{},{registers}",
            timing.median_ms,
            gb / copy_gb
        );
    }
    crate::common::write_summary(out, &summary, &csv)?;
    if !failures.is_empty() {
        return Err(fail(format!(
            "{} kernels FAILED their check (not timed):\n{}",
            failures.len(),
            failures.join("\n")
        )));
    }
    Ok(())
}

/// No GPU: each kernel on the CPU emulation against `run_cpu`; returns how many.
pub fn emulate_all(n: usize) -> Result<usize> {
    let inputs = fields(n);
    for (label, kernel, count) in &KERNELS {
        let host: Vec<&[f32]> = inputs[..*count].iter().map(Vec::as_slice).collect();
        let want = kernel.reference_vec(&host, ())?.remove(0);
        compare(
            &kernel.emulate_vec(&host, ())?.remove(0),
            &want,
            &format!("{label} ({}) in the CPU emulation", kernel.name()),
        )?;
    }
    Ok(KERNELS.len())
}

/// Each kernel's PTX, as `fields_<entry>.ptx`.
pub fn emit_ptx(dir: &Path) -> Result<usize> {
    for (_, kernel, _) in &KERNELS {
        std::fs::write(dir.join(format!("fields_{}.ptx", kernel.entry())), kernel.ptx())?;
    }
    Ok(KERNELS.len())
}
