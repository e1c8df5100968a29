//! The GPU run for one element type: per radius, the CPU reference and a device-to-device copy;
//! per kernel, the bit-exact check on a poisoned output, then the timing, then the resources.

use std::time::Instant;

use rc::runtime::cust::memory::{mem_get_info, AsyncCopyDestination, CopyDestination, DeviceBuffer};
use rc::runtime::GpuInfo;
use rc::{Element, Stencil};

use crate::bench::kernels::{find, signal, BenchElement, Variant, AUTO, VARIANTS};
use crate::bench::options::Options;
use crate::bench::report::{arithmetic_bound, roofline, Row, COPY};
use crate::common::{compare, fail, During, Gpu, Result, Timing};

/// The rows of one element type, and the kernels that failed their check (not timed).
pub struct Measured {
    pub rows: Vec<Row>,
    pub failures: Vec<String>,
}

/// Device memory the run holds at once: input, output (the copy writes all n) and the poison
/// the output is reset from before each check.
const BUFFERS: usize = 3;

pub fn element<T: BenchElement>(gpu: &Gpu, info: &GpuInfo, options: &Options) -> Result<Measured> {
    let element = T::TYPE;
    let n = options.n_for(element);
    let size = std::mem::size_of::<T>();
    let largest = options.radii.iter().copied().max().unwrap_or(1) as usize;
    if n < 2 * largest + 1 {
        return Err(fail(format!("--n {n} is shorter than one window of radius {largest} ({})", 2 * largest + 1)));
    }
    let (free, total) = mem_get_info().during("cuMemGetInfo")?;
    let needed = BUFFERS * n * size;
    let gib = |bytes: usize| bytes as f64 / f64::from(1u32 << 30);
    if needed + (256 << 20) > free {
        return Err(fail(format!(
            "{element}: n = {n} needs {:.2} GiB of GPU memory ({BUFFERS} buffers of {:.2} GiB), {:.2} of {:.2} GiB are free; pass a smaller --n",
            gib(needed),
            gib(n * size),
            gib(free),
            gib(total)
        )));
    }

    println!("{element}: n = {n} ({:.2} GiB per buffer), making the input signal", gib(n * size));
    let input = signal::<T>(n);
    let input_dev = gpu.upload(&input)?;
    let mut output_dev: DeviceBuffer<T> = gpu.poisoned(n)?;
    let poison_dev: DeviceBuffer<T> = gpu.poisoned(n)?;
    let kernels = T::kernels();
    let total_kernels: usize =
        options.radii.len() * (options.variants().iter().map(|v| v.outputs_per_thread(&options.outputs_per_thread).len()).sum::<usize>() + usize::from(options.auto));
    let mut done = 0;
    let mut rows = Vec::new();
    let mut failures = Vec::new();

    for (i, &radius) in options.radii.iter().enumerate() {
        let arithmetic = arithmetic_bound(info, element, radius);
        let n_out = n - 2 * radius as usize;

        let start = Instant::now();
        let any = find(&kernels, radius, options.outputs_per_thread[0], VARIANTS[0])
            .ok_or_else(|| fail(format!("no compiled {element} kernel for radius {radius}")))?;
        // Every kernel of this radius computes the same function, so one reference serves all.
        let want = any.reference_vec(&[&input], ())?;
        println!("{element} r={radius}: CPU reference (run_cpu) in {:.2} s", start.elapsed().as_secs_f64());

        // The copy moves n elements in and n out: the same bytes as a kernel, give or take 2r.
        if i == 0 {
            output_dev.copy_from(&input_dev).during("copying the input on the GPU (cuMemcpyDtoD)")?;
            compare(&gpu.download(&output_dev)?, &input, "device-to-device copy")?;
        }
        let copy = gpu.time(options.warm_up, options.reps, || {
            // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
            unsafe { output_dev.async_copy_from(&input_dev, gpu.stream()) }.during("cuMemcpyDtoDAsync")
        })?;
        let copy_gb = copy.gb_per_s(2 * n * size);
        let roof = roofline(Some(copy_gb), arithmetic);
        println!(
            "{element} r={radius}: device-to-device copy {:.4} ms, {copy_gb:.1} GB/s; roofline {}",
            copy.median_ms,
            roof.map_or_else(|| "unknown".to_owned(), |r| format!("{r:.1} GB/s"))
        );
        rows.push(Row {
            strategy: COPY.to_owned(),
            element: element.to_string(),
            radius,
            n,
            time_ms: copy.median_ms,
            gb_per_s: copy_gb,
            copy_gb_per_s: Some(copy_gb),
            arithmetic_bound_gb_per_s: arithmetic,
            roofline_gb_per_s: roof,
            fraction_of_roofline: roof.map(|r| copy_gb / r),
            launches: copy.launches,
            gpu: info.name.clone(),
            ..Row::default()
        });

        // Checks `kernel` bit-exact on a poisoned output, then times it: its row, or `None`
        // (recorded in `failures`) if it is wrong.
        let mut measure = |what: &str, kernel: &Stencil<T, ()>| -> Result<Option<Row>> {
            let mut out = output_dev.index(..n_out);
            let checked = (|| -> Result<()> {
                out.copy_from(&poison_dev.index(..n_out)).during("poisoning the output (cuMemcpyDtoD)")?;
                rc::runtime::launch(kernel, gpu.stream(), &[&input_dev], &mut out, ())?;
                compare(&gpu.download(&out)?, &want, &format!("{what} on the GPU, n = {n}"))
            })();
            if let Err(e) = checked {
                println!("{what}: {e}; not timed");
                failures.push(e.to_string());
                return Ok(None);
            }
            let timing =
                gpu.time(options.warm_up, options.reps, || Ok(rc::runtime::launch(kernel, gpu.stream(), &[&input_dev], &mut out, ())?))?;
            kernel_row(kernel, info, n, n_out, &timing, copy_gb, arithmetic).map(Some)
        };
        for variant in options.variants() {
            for p in variant.outputs_per_thread(&options.outputs_per_thread) {
                done += 1;
                let what = format!("[{done:>3}/{total_kernels}] {element} r={radius} P={p} {}", variant.label);
                let Some(kernel) = find(&kernels, radius, p, variant) else {
                    if variant.rows() {
                        // Not every window fits in registers (f64 at r = 64); those are not compiled.
                        println!("{what}: not compiled, skipped");
                        continue;
                    }
                    return Err(fail(format!("{what}: no compiled kernel")));
                };
                if let Some(row) = measure(&what, &kernel)? {
                    println!("{what}: {}", progress(&row));
                    rows.push(row);
                }
            }
        }
        if options.auto {
            done += 1;
            let what = format!("[{done:>3}/{total_kernels}] {element} r={radius} {AUTO}");
            let Some(kernel) = T::auto_kernels().iter().find(|k| k.pattern().radius().along_x() == radius).copied() else {
                return Err(fail(format!("{what}: no compiled kernel")));
            };
            let what = format!("{what} (chose {}, P={})", kernel.layout(), kernel.pattern().outputs_per_thread());
            if let Some(mut row) = measure(&what, &kernel)? {
                row.strategy = AUTO.to_owned();
                println!("{what}: {}", progress(&row));
                rows.push(row);
            }
        }
    }
    Ok(Measured { rows, failures })
}

fn kernel_row<T: Element>(
    kernel: &Stencil<T, ()>,
    info: &GpuInfo,
    n: usize,
    n_out: usize,
    timing: &Timing,
    copy_gb: f64,
    arithmetic: Option<f64>,
) -> Result<Row> {
    let gb = timing.gb_per_s((n + n_out) * std::mem::size_of::<T>());
    let roof = roofline(Some(copy_gb), arithmetic);
    let resources = rc::runtime::resources(kernel)?;
    Ok(Row {
        strategy: Variant::of(kernel).map_or(kernel.strategy().name(), |v| v.label).to_owned(),
        element: T::TYPE.to_string(),
        radius: kernel.pattern().radius().along_x(),
        outputs_per_thread: Some(kernel.pattern().outputs_per_thread()),
        n,
        time_ms: timing.median_ms,
        gb_per_s: gb,
        copy_gb_per_s: Some(copy_gb),
        arithmetic_bound_gb_per_s: arithmetic,
        roofline_gb_per_s: roof,
        fraction_of_roofline: roof.map(|r| gb / r),
        registers: Some(resources.registers_per_thread),
        local_bytes: Some(resources.local_bytes_per_thread),
        shared_bytes: Some(resources.static_shared_bytes_per_block),
        max_threads_per_block: Some(resources.max_threads_per_block),
        blocks_per_sm: Some(resources.blocks_per_multiprocessor),
        occupancy: Some(resources.occupancy()),
        shuffles_per_output: Some(kernel.program()?.shuffles_per_output()),
        speedup_vs_shared_memory: None, // filled in once the shared-memory row is there
        max_rel_error: Some(0.0),
        launches: timing.launches,
        gpu: info.name.clone(),
    })
}

fn progress(row: &Row) -> String {
    format!(
        "bit-exact; {:.4} ms, {:.1} GB/s = {} of roofline; {} regs, {} B local, {} B shared, occupancy {}, {:.2} shuffles/output",
        row.time_ms,
        row.gb_per_s,
        row.fraction_of_roofline.map_or_else(|| "?".to_owned(), |f| format!("{f:.3}")),
        row.registers.unwrap_or(0),
        row.local_bytes.unwrap_or(0),
        row.shared_bytes.unwrap_or(0),
        row.occupancy.map_or_else(|| "?".to_owned(), |o| format!("{o:.2}")),
        row.shuffles_per_output.unwrap_or(0.0),
    )
}
