//! The grid benchmark's GPU run for one element type: per grid shape, the input and the buffers;
//! per stencil, the CPU reference and a device-to-device copy; per kernel, the bit-exact check
//! on a poisoned output, then the timing, then the resources.

use std::time::Instant;

use rc::runtime::cust::memory::DeviceSlice;
use rc::runtime::GpuInfo;
use rc::{Extent, Stencil};

use crate::bench::grid::kernels::{GridElement, GridStencil};
use crate::bench::grid::report::{Row, COPY};
use crate::bench::kernels::signal;
use crate::bench::measure::{gib, Buffers, Figures, Measured};
use crate::bench::options::Options;
use crate::bench::roofline::{arithmetic_bound, roofline};
use crate::common::{Gpu, Result, Timing};

pub fn element<T: GridElement>(gpu: &Gpu, info: &GpuInfo, options: &Options) -> Result<Measured<Row>> {
    let element = T::TYPE;
    let stencils: Vec<&GridStencil<T>> =
        T::stencils().iter().filter(|s| options.stencils.iter().any(|n| n == s.name)).collect();
    let mut shapes: Vec<Extent> = Vec::new();
    for stencil in &stencils {
        let shape = stencil.shape(options.shape_2d, options.shape_3d);
        if !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    let mut measured = Measured { rows: Vec::new(), failures: Vec::new() };
    for shape in shapes {
        let n = shape.len().unwrap_or(0);
        let what = format!("{element} {}", shape_text(shape));
        Buffers::<T>::fit(n, &what, "pass a smaller --shape-2d or --shape-3d")?;
        println!("{what}: {:.2} GiB per buffer, making the input signal", gib(n * std::mem::size_of::<T>()));
        let input = signal::<T>(n);
        let mut buffers = Buffers::new(gpu, &input)?;
        for stencil in stencils.iter().filter(|s| s.shape(options.shape_2d, options.shape_3d) == shape) {
            stencil_rows(gpu, info, options, stencil, shape, &input, &mut buffers, &mut measured)?;
        }
    }
    Ok(measured)
}

/// Every kernel of `stencil` over `input`, after the copy that sets its roofline.
#[allow(clippy::too_many_arguments)]
fn stencil_rows<T: GridElement>(
    gpu: &Gpu,
    info: &GpuInfo,
    options: &Options,
    stencil: &GridStencil<T>,
    shape: Extent,
    input: &[T],
    buffers: &mut Buffers<T>,
    measured: &mut Measured<Row>,
) -> Result<()> {
    let (element, size, name) = (T::TYPE, std::mem::size_of::<T>(), stencil.name);
    let n = input.len();
    let start = Instant::now();
    // Every kernel of the stencil computes the same function, so one reference serves all.
    let want = stencil.default.reference_grid_vec(&[input], shape, ())?.remove(0);
    println!("{name} {element}: CPU reference (run_cpu) in {:.2} s", start.elapsed().as_secs_f64());

    let arithmetic = arithmetic_bound(info, element, stencil.taps);
    let copy = buffers.time_copy(gpu, options)?;
    let copy_gb = copy.gb_per_s(2 * n * size);
    let roof = roofline(Some(copy_gb), arithmetic);
    println!(
        "{name} {element}: device-to-device copy {:.4} ms, {copy_gb:.1} GB/s; roofline {}",
        copy.median_ms,
        roof.map_or_else(|| "unknown".to_owned(), |r| format!("{r:.1} GB/s"))
    );
    let base = Row {
        stencil: name.to_owned(),
        element: element.to_string(),
        shape: shape_text(shape),
        taps: stencil.taps,
        copy_gb_per_s: Some(copy_gb),
        arithmetic_bound_gb_per_s: arithmetic,
        roofline_gb_per_s: roof,
        elements: n,
        gpu: info.name.clone(),
        ..Row::default()
    };
    measured.rows.push(Row {
        strategy: COPY.to_owned(),
        time_ms: copy.median_ms,
        gb_per_s: copy_gb,
        fraction_of_roofline: roof.map(|r| copy_gb / r),
        launches: copy.launches,
        ..base.clone()
    });

    let kernels = stencil.kernels();
    let count = kernels.len();
    for (i, kernel) in kernels.into_iter().enumerate() {
        let mut row = Row::of_kernel(&base, &kernel, i == 0);
        let what = format!("[{:>2}/{count}] {name} {element} {} {} ({})", i + 1, row.strategy, row.kernel, row.tile());
        let launch = |input: &DeviceSlice<T>, out: &mut DeviceSlice<T>| {
            Ok(rc::runtime::launch_grid(&kernel, gpu.stream(), &[input], &mut [out], shape, ())?)
        };
        let checked = format!("{what} on the GPU, shape {}", shape_text(shape));
        let Some(timing) = buffers.check_and_time(gpu, options, &want, &checked, &mut measured.failures, launch)?
        else {
            continue;
        };
        measure_row(&mut row, &kernel, &timing, want.len())?;
        println!("{what}: {}", progress(&row));
        measured.rows.push(row);
    }
    Ok(())
}

/// Fills `row` (made by [`Row::of_kernel`]) with the timing, its fraction of the row's roofline
/// and the kernel's resources.
fn measure_row<T: GridElement>(row: &mut Row, kernel: &Stencil<T, ()>, timing: &Timing, n_out: usize) -> Result<()> {
    let gb = timing.gb_per_s((row.elements + n_out) * std::mem::size_of::<T>());
    let resources = rc::runtime::resources(kernel)?;
    row.time_ms = timing.median_ms;
    row.gb_per_s = gb;
    row.fraction_of_roofline = row.roofline_gb_per_s.map(|r| gb / r);
    row.registers = Some(resources.registers_per_thread);
    row.local_bytes = Some(resources.local_bytes_per_thread);
    row.shared_bytes = Some(resources.static_shared_bytes_per_block + resources.dynamic_shared_bytes_per_block);
    row.blocks_per_sm = Some(resources.blocks_per_multiprocessor);
    row.occupancy = Some(resources.occupancy());
    row.shuffles_per_output = Some(kernel.program()?.shuffles_per_output());
    row.max_rel_error = Some(0.0);
    row.launches = timing.launches;
    Ok(())
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
    kernel.to_string()
}

/// `8192x8192`: the shape as the CSV and bench/peers.py write it, outermost first.
pub fn shape_text(shape: Extent) -> String {
    shape.components().iter().map(usize::to_string).collect::<Vec<_>>().join("x")
}
