//! The GPU run for one element type: per radius, the CPU reference and a device-to-device copy;
//! per kernel, the bit-exact check on a poisoned output, then the timing, then the resources.

use std::time::Instant;

use rc::runtime::cust::memory::{
    mem_get_info, AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice,
};
use rc::runtime::GpuInfo;
use rc::{Element, Stencil};

use crate::bench::kernels::{find, signal, BenchElement, Variant, AUTO, VARIANTS};
use crate::bench::options::Options;
use crate::bench::report::{Row, COPY};
use crate::bench::roofline::{arithmetic_bound, roofline};
use crate::common::{compare, fail, During, Gpu, Result, Timing};

/// The rows of one element type, and the kernels that failed their check (not timed).
pub struct Measured<R = Row> {
    pub rows: Vec<R>,
    pub failures: Vec<String>,
}

pub fn element<T: BenchElement>(gpu: &Gpu, info: &GpuInfo, options: &Options) -> Result<Measured> {
    let element = T::TYPE;
    let n = options.n_for(element);
    let largest = options.radii.iter().copied().max().unwrap_or(1) as usize;
    if n < 2 * largest + 1 {
        return Err(fail(format!("--n {n} is shorter than one window of radius {largest} ({})", 2 * largest + 1)));
    }
    Buffers::<T>::fit(n, &format!("{element}: n = {n}"), "pass a smaller --n")?;
    println!("{element}: n = {n} ({:.2} GiB per buffer), making the input signal", gib(n * std::mem::size_of::<T>()));
    let input = signal::<T>(n);
    let mut buffers = Buffers::new(gpu, &input)?;
    let kernels = T::kernels();
    let total_kernels: usize = options.radii.len()
        * (options.variants().iter().map(|v| v.outputs_per_thread(&options.outputs_per_thread).len()).sum::<usize>()
            + usize::from(options.auto));
    let mut done = 0;
    let mut rows = Vec::new();
    let mut failures = Vec::new();

    for &radius in &options.radii {
        let arithmetic = arithmetic_bound(info, element, 2 * radius + 1);
        let n_out = n - 2 * radius as usize;

        let start = Instant::now();
        let any = find(&kernels, radius, options.outputs_per_thread[0], VARIANTS[0])
            .ok_or_else(|| fail(format!("no compiled {element} kernel for radius {radius}")))?;
        // Every kernel of this radius computes the same function, so one reference serves all.
        let want = any.reference_vec(&[&input], ())?.remove(0);
        println!("{element} r={radius}: CPU reference (run_cpu) in {:.2} s", start.elapsed().as_secs_f64());

        // The copy moves n elements in and n out: the same bytes as a kernel, give or take 2r.
        let copy = buffers.time_copy(gpu, options)?;
        let copy_gb = copy.gb_per_s(2 * n * std::mem::size_of::<T>());
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

        let mut measure = |what: &str, kernel: &Stencil<T, ()>| -> Result<Option<Row>> {
            let launch = |input: &DeviceSlice<T>, out: &mut DeviceSlice<T>| {
                Ok(rc::runtime::launch(kernel, gpu.stream(), &[input], &mut [out], ())?)
            };
            let Some(timing) = buffers.check_and_time(
                gpu,
                options,
                &want,
                &format!("{what} on the GPU, n = {n}"),
                &mut failures,
                launch,
            )?
            else {
                return Ok(None);
            };
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
            let Some(kernel) = T::auto_kernels().iter().find(|k| k.pattern().radius().along_x() == radius).copied()
            else {
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

/// Bytes as GiB.
pub fn gib(bytes: usize) -> f64 {
    bytes as f64 / f64::from(1u32 << 30)
}

/// The device memory a run holds: the input, an output as long (the copy writes all of it) and
/// the poison the output is reset from before each check.
pub struct Buffers<T: DeviceCopy> {
    input: DeviceBuffer<T>,
    output: DeviceBuffer<T>,
    poison: DeviceBuffer<T>,
}

impl<T: BenchElement> Buffers<T> {
    const COUNT: usize = 3;

    /// Fails, saying what to do (`smaller`), unless the buffers for `n` elements fit in the
    /// GPU's free memory; `what` names the run.
    pub fn fit(n: usize, what: &str, smaller: &str) -> Result<()> {
        let size = std::mem::size_of::<T>();
        let (free, total) = mem_get_info().during("cuMemGetInfo")?;
        let needed = Self::COUNT * n * size;
        if needed + (256 << 20) > free {
            return Err(fail(format!(
                "{what} needs {:.2} GiB of GPU memory ({} buffers of {:.2} GiB), {:.2} of {:.2} GiB are free; {smaller}",
                gib(needed),
                Self::COUNT,
                gib(n * size),
                gib(free),
                gib(total)
            )));
        }
        Ok(())
    }

    /// Uploads `input`, and checks that a device-to-device copy reproduces it.
    pub fn new(gpu: &Gpu, input: &[T]) -> Result<Buffers<T>> {
        let buffers = Buffers {
            input: gpu.upload(input)?,
            output: gpu.poisoned(input.len())?,
            poison: gpu.poisoned(input.len())?,
        };
        let mut output = buffers.output.index(..);
        output.copy_from(&buffers.input).during("copying the input on the GPU (cuMemcpyDtoD)")?;
        compare(&gpu.download(&output)?, input, "device-to-device copy")?;
        Ok(buffers)
    }

    /// The device-to-device copy of the whole input, timed as the kernels are.
    pub fn time_copy(&mut self, gpu: &Gpu, options: &Options) -> Result<Timing> {
        let (input, output) = (&self.input, &mut self.output);
        gpu.time(options.warm_up, options.reps, || {
            // SAFETY: both buffers outlive the copies; `time` waits for the stream before returning.
            unsafe { output.async_copy_from(input, gpu.stream()) }.during("cuMemcpyDtoDAsync")
        })
    }

    /// Runs `launch` (input, output) once into a poisoned output of `want.len()` elements and
    /// checks it bit-exact against `want`, then times it. `None` when it is wrong: said, with
    /// `what`, and recorded in `failures`; such a kernel is not timed.
    pub fn check_and_time(
        &mut self,
        gpu: &Gpu,
        options: &Options,
        want: &[T],
        what: &str,
        failures: &mut Vec<String>,
        launch: impl Fn(&DeviceSlice<T>, &mut DeviceSlice<T>) -> Result<()>,
    ) -> Result<Option<Timing>> {
        let n_out = want.len();
        let mut out = self.output.index(..n_out);
        let checked = (|| -> Result<()> {
            out.copy_from(&self.poison.index(..n_out)).during("poisoning the output (cuMemcpyDtoD)")?;
            launch(&self.input, &mut out)?;
            compare(&gpu.download(&out)?, want, what)
        })();
        if let Err(e) = checked {
            println!("{what}: {e}; not timed");
            failures.push(e.to_string());
            return Ok(None);
        }
        gpu.time(options.warm_up, options.reps, || launch(&self.input, &mut out)).map(Some)
    }
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
    let kernel = Figures {
        time_ms: row.time_ms,
        gb_per_s: row.gb_per_s,
        fraction_of_roofline: row.fraction_of_roofline,
        registers: row.registers,
        local_bytes: row.local_bytes,
        shared_bytes: row.shared_bytes,
        occupancy: row.occupancy,
    };
    format!("{kernel}, {:.2} shuffles/output", row.shuffles_per_output.unwrap_or(0.0))
}

/// A checked kernel's time, speed and resources, as its progress line says them.
pub struct Figures {
    pub time_ms: f64,
    pub gb_per_s: f64,
    pub fraction_of_roofline: Option<f64>,
    pub registers: Option<u32>,
    pub local_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub occupancy: Option<f64>,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bit-exact; {:.4} ms, {:.1} GB/s = {} of roofline; {} regs, {} B local, {} B shared, occupancy {}",
            self.time_ms,
            self.gb_per_s,
            self.fraction_of_roofline.map_or_else(|| "?".to_owned(), |f| format!("{f:.3}")),
            self.registers.unwrap_or(0),
            self.local_bytes.unwrap_or(0),
            self.shared_bytes.unwrap_or(0),
            self.occupancy.map_or_else(|| "?".to_owned(), |o| format!("{o:.2}")),
        )
    }
}
