//! `--half`: the 1D box average `B[i] = (A[i] + ... + A[i+2r]) / (2r+1)` in f16 (the half
//! crate's arithmetic: every partial sum rounds to 16 bits), boundary valid, warp 32, at r = 1,
//! 2, 4, 8, 16, against a device-to-device copy of the same 2-byte elements in the same run.
//! Each kernel is checked bit-exact against `run_cpu` on a poisoned output before it is timed.
//! The buffers are cust buffers of the elements' bits (`u16`, `rc::runtime::DeviceElement`).

use std::fmt::Write as _;
use std::path::Path;

use half::f16;
use rc::prelude::*;
use rc::runtime::cust::memory::{AsyncCopyDestination, CopyDestination, DeviceSlice};
use rc::runtime::GpuInfo;

use crate::bench::options::Options;
use crate::common::{compare, fail, During, Gpu, Result};

/// The radii of the target (issue 16): at least 0.90 of the copy for r <= 8, 0.80 at r = 16.
pub const RADII: [u32; 5] = [1, 2, 4, 8, 16];

macro_rules! half_box {
    ($name:ident, $r:literal, $taps:literal, $($attr:tt)*) => {
        #[stencil(radius = $r, warp = 32, $($attr)*)]
        pub fn $name(w: Window<f16>) -> f16 {
            let mut s = f16::ZERO;
            for d in -$r..=$r {
                s += w[d];
            }
            s / f16::from_f32($taps)
        }
    };
}

macro_rules! half_kernels {
    ($(($r:literal, $taps:literal, $auto:ident, $granule:ident, $window:ident, $round_robin:ident)),*) => {
        $(
            half_box!($auto, $r, $taps, distribution = auto);
            half_box!($granule, $r, $taps, outputs_per_thread = 8, distribution = granule(8));
            half_box!($window, $r, $taps, outputs_per_thread = 8, distribution = window(8));
            half_box!($round_robin, $r, $taps, outputs_per_thread = 8, distribution = round_robin);
        )*
        /// Every kernel, with the label of its distribution.
        pub const KERNELS: &[(&str, Stencil<f16, ()>)] = &[
            $(("auto", $auto::KERNEL), ("granule(8)", $granule::KERNEL), ("window(8)", $window::KERNEL), ("round_robin", $round_robin::KERNEL),)*
        ];
    };
}

half_kernels!(
    (1, 3.0, box_r1_auto, box_r1_granule8, box_r1_window8, box_r1_round_robin),
    (2, 5.0, box_r2_auto, box_r2_granule8, box_r2_window8, box_r2_round_robin),
    (4, 9.0, box_r4_auto, box_r4_granule8, box_r4_window8, box_r4_round_robin),
    (8, 17.0, box_r8_auto, box_r8_granule8, box_r8_window8, box_r8_round_robin),
    (16, 33.0, box_r16_auto, box_r16_granule8, box_r16_window8, box_r16_round_robin)
);

fn kernels_of(radius: u32) -> impl Iterator<Item = &'static (&'static str, Stencil<f16, ()>)> {
    KERNELS.iter().filter(move |(_, k)| k.pattern().radius().along_x() == radius)
}

/// `n` samples of a sine with 10% noise, in f16.
fn signal(n: usize) -> Vec<f16> {
    let mut rng = rc::testdata::Rng::new(7);
    (0..n).map(|i| f16::from_f64((i as f64 * 1e-3).sin() + 0.1 * rng.uniform(-1.0, 1.0))).collect()
}

/// `run_cpu` over `input`, in chunks on every core (boundary valid: output i reads inputs
/// i..=i+2r, so each chunk of outputs takes its inputs and 2r more).
fn reference(kernel: &Stencil<f16, ()>, input: &[f16]) -> Result<Vec<f16>> {
    let r = kernel.pattern().radius().along_x() as usize;
    let n_out = kernel.output_len(input.len())?;
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let chunk = n_out.div_ceil(threads).max(1);
    let mut out = vec![f16::ZERO; n_out];
    let failed = std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, part)| {
                s.spawn(move || {
                    kernel.run_cpu(&[&input[i * chunk..i * chunk + part.len() + 2 * r]], &mut [part], ()).is_err()
                })
            })
            .collect();
        handles.into_iter().any(|h| h.join().unwrap_or(true))
    });
    if failed {
        return Err(fail("run_cpu failed on a chunk of the input".to_owned()));
    }
    Ok(out)
}

fn bits(values: &[f16]) -> Vec<u16> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The run: per radius the reference and the copy, per kernel the check and the timing; a table
/// on stdout and in summary.txt, and results.csv, in `out`.
pub fn run(options: &Options, info: &GpuInfo, out: &Path) -> Result<()> {
    let gpu = Gpu::new()?;
    let n = options.n.unwrap_or(crate::bench::options::DEFAULT_N_F32);
    let radii: Vec<u32> = options.radii.iter().copied().filter(|r| RADII.contains(r)).collect();
    if radii.is_empty() {
        return Err(fail(format!("--half runs radii {:?}; none of them was asked for", RADII)));
    }
    println!("f16: n = {n}, making the input signal");
    let input = signal(n);
    let d_input = gpu.upload(&bits(&input))?;
    let poison = bits(&[rc::testdata::poison::<f16>()])[0];
    let mut d_output = gpu.upload(&vec![poison; n])?;
    let d_poison = gpu.upload(&vec![poison; n])?;
    let mut summary = String::new();
    let _ = writeln!(summary, "device: {info}");
    let _ = writeln!(
        summary,
        "f16 box average, boundary valid, n = {n}; median of {} timed launches after {} warm-ups (CUDA events)",
        options.reps, options.warm_up
    );
    let _ = writeln!(
        summary,
        "{:>3} {:<12} {:>3} {:>10} {:>9} {:>9} {:>8} {:>5}",
        "r", "distribution", "P", "time ms", "GB/s", "copy GB/s", "of copy", "regs"
    );
    let mut csv = String::from(
        "strategy,element,radius,outputs_per_thread,n,time_ms,gb_per_s,copy_gb_per_s,fraction_of_copy,registers\n",
    );
    let mut failures = Vec::new();
    for &radius in &radii {
        let first = kernels_of(radius)
            .next()
            .map(|(_, k)| *k)
            .ok_or_else(|| fail(format!("no f16 kernel of radius {radius}")))?;
        let start = std::time::Instant::now();
        let want = reference(&first, &input)?;
        println!("f16 r={radius}: CPU reference in {:.2} s", start.elapsed().as_secs_f64());
        let copy = gpu.time(options.warm_up, options.reps, || {
            // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
            unsafe { d_output.async_copy_from(&d_input, gpu.stream()) }.during("cuMemcpyDtoDAsync")
        })?;
        let copy_gb = copy.gb_per_s(2 * n * 2);
        println!("f16 r={radius}: device-to-device copy {:.4} ms, {copy_gb:.1} GB/s", copy.median_ms);
        let _ = writeln!(csv, "copy,f16,{radius},,{n},{},{copy_gb},{copy_gb},1,", copy.median_ms);
        for (label, kernel) in kernels_of(radius) {
            let what = format!("f16 r={radius} {label} (P={})", kernel.pattern().outputs_per_thread());
            let n_out = want.len();
            let mut out = d_output.index(..n_out);
            let launch = |out: &mut DeviceSlice<u16>| -> Result<()> {
                Ok(rc::runtime::launch(kernel, gpu.stream(), &[&*d_input], &mut [out], ())?)
            };
            let checked = (|| -> Result<()> {
                out.copy_from(&d_poison.index(..n_out)).during("poisoning the output (cuMemcpyDtoD)")?;
                launch(&mut out)?;
                gpu.stream().synchronize().during("waiting for the GPU")?;
                let mut got = vec![0u16; n_out];
                out.copy_to(&mut got[..]).during("copying the output from the GPU")?;
                let got: Vec<f16> = got.into_iter().map(f16::from_bits).collect();
                compare(&got, &want, &what)
            })();
            if let Err(e) = checked {
                println!("{what}: {e}; not timed");
                failures.push(e.to_string());
                continue;
            }
            let timing = gpu.time(options.warm_up, options.reps, || launch(&mut out))?;
            let gb = timing.gb_per_s((n + n_out) * 2);
            let registers = rc::runtime::resources(kernel)?.registers_per_thread;
            let p = kernel.pattern().outputs_per_thread();
            let line = format!(
                "{radius:>3} {label:<12} {p:>3} {:>10.4} {gb:>9.1} {copy_gb:>9.1} {:>8.3} {registers:>5}",
                timing.median_ms,
                gb / copy_gb
            );
            println!("{line}");
            let _ = writeln!(summary, "{line}");
            let _ = writeln!(
                csv,
                "{label},f16,{radius},{p},{n},{},{gb},{copy_gb},{},{registers}",
                timing.median_ms,
                gb / copy_gb
            );
        }
    }
    crate::common::write_summary(out, &summary, &csv)?;
    if !failures.is_empty() {
        return Err(fail(format!(
            "{} f16 kernels FAILED their check (not timed):\n{}",
            failures.len(),
            failures.join("\n")
        )));
    }
    Ok(())
}

/// No GPU: every f16 kernel on the CPU emulation against `run_cpu`; returns how many.
pub fn emulate_all(n: usize) -> Result<usize> {
    let input = signal(n);
    for (label, kernel) in KERNELS {
        let want = kernel.reference_vec(&[&input], ())?.remove(0);
        compare(
            &kernel.emulate_vec(&[&input], ())?.remove(0),
            &want,
            &format!("f16 {} {label} in the CPU emulation", kernel.name()),
        )?;
    }
    Ok(KERNELS.len())
}

/// Every f16 kernel's PTX, as `half_<distribution>_<entry>.ptx`.
pub fn emit_ptx(dir: &Path) -> Result<usize> {
    for (label, kernel) in KERNELS {
        let label: String = label.chars().filter(char::is_ascii_alphanumeric).collect();
        std::fs::write(dir.join(format!("half_{label}_{}.ptx", kernel.entry())), kernel.ptx())?;
    }
    Ok(KERNELS.len())
}
