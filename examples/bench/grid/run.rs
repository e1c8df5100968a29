//! `bench --grid`: the 2D and 3D benchmark from start to files, its `--plot-only`, and its check
//! on the CPU emulation when there is no GPU.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rc::{Extent, ScalarType};

use crate::bench::grid::kernels::{GridElement, GridStencil};
use crate::bench::grid::measure::{self, shape_text};
use crate::bench::grid::{plot, report};
use crate::bench::kernels::signal;
use crate::bench::options::Options;
use crate::common::{compare, fail, Gpu, Result};

pub fn run(options: &Options) -> Result<()> {
    // Read before the long run, so that a bad file fails now.
    let peers = options.peers.as_deref().map(report::read_csv).transpose()?;
    let info = match rc::runtime::gpu() {
        Ok(info) => info,
        Err(e) if e.is_no_device() => return check_on_cpu(options, &e),
        Err(e) => return Err(e.into()),
    };
    let gpu = Gpu::new()?;
    let out = options.out.clone().unwrap_or_else(|| crate::default_out_dir(&info, "-grid"));
    std::fs::create_dir_all(&out).map_err(|e| fail(format!("creating {}: {e}", out.display())))?;

    let mut header = String::new();
    let _ = writeln!(header, "device: {info}");
    let _ = writeln!(
        header,
        "grids {} (2D) and {} (3D), boundary clamp, stencils {}; median of {} timed launches after {} warm-ups (CUDA events)",
        shape_text(options.shape_2d.into()),
        shape_text(options.shape_3d.into()),
        options.stencils.join(", "),
        options.reps,
        options.warm_up
    );
    for element in options.elements() {
        let _ = writeln!(header, "{}", crate::bench::roofline::arithmetic_assumption(&info, element, "taps"));
    }
    let _ = writeln!(
        header,
        "roofline = min(device-to-device copy GB/s measured before the stencil's kernels, arithmetic bound)"
    );
    print!("{header}");

    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for element in options.elements() {
        let measured = match element {
            ScalarType::F64 => measure::element::<f64>(&gpu, &info, options)?,
            _ => measure::element::<f32>(&gpu, &info, options)?,
        };
        rows.extend(measured.rows);
        failures.extend(measured.failures);
    }
    if let Some(peers) = peers {
        for note in report::merge_peers(&mut rows, peers) {
            let _ = writeln!(header, "{note}");
            println!("{note}");
        }
    }
    report::sort(&mut rows);
    if let Some(peers) = &options.peers {
        crate::keep_beside(peers, &out.join("peers.csv"))?;
    }
    for path in write(&rows, &out, Some(&header))? {
        println!("wrote {}", path.display());
    }
    if !failures.is_empty() {
        return Err(fail(format!(
            "{} kernels FAILED their check (not timed):\n{}",
            failures.len(),
            failures.join("\n")
        )));
    }
    Ok(())
}

/// summary.md and the plots into `out`; with the run's `header`, also results.csv and
/// summary.txt (the header and the table). Prints the table and the summary.
fn write(rows: &[report::Row], out: &Path, header: Option<&str>) -> Result<Vec<PathBuf>> {
    let table = report::table(rows);
    let summary = report::summary(rows);
    println!("\n{table}\n{summary}");
    let file = |name: &str, text: &str| -> Result<PathBuf> {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| fail(format!("writing {}: {e}", path.display())))?;
        Ok(path)
    };
    let mut files = Vec::new();
    if let Some(header) = header {
        files.push(file("summary.txt", &format!("{header}\n{table}"))?);
        let csv = out.join("results.csv");
        report::write_csv(rows, &csv)?;
        files.push(csv);
    }
    files.push(file("summary.md", &summary)?);
    files.extend(plot::all(rows, out)?);
    Ok(files)
}

/// `--grid --plot-only CSV`: the table, summary.md and the plots of a finished run, with
/// `--peers` merged in if given, into `--out` or beside the CSV (which is left as it is).
pub fn plot_only(options: &Options, csv: &Path) -> Result<()> {
    let mut rows = report::read_csv(csv)?;
    if let Some(peers) = &options.peers {
        for note in report::merge_peers(&mut rows, report::read_csv(peers)?) {
            println!("{note}");
        }
    }
    report::sort(&mut rows);
    for path in write(&rows, &crate::plot_dir(options, csv)?, None)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The grids of the CPU check: every boundary tile and a vector path, small enough to emulate.
const CHECK_2D: [usize; 2] = [37, 268];
const CHECK_3D: [usize; 3] = [11, 13, 136];

/// No GPU: check every kernel of the stencils asked for on the CPU emulation, say that nothing
/// was timed, succeed.
fn check_on_cpu(options: &Options, no_device: &rc::runtime::Error) -> Result<()> {
    let mut checked = 0;
    for element in options.elements() {
        checked += match element {
            ScalarType::F64 => emulate::<f64>(options)?,
            _ => emulate::<f32>(options)?,
        };
    }
    println!(
        "checked {checked} grid kernels on the CPU emulation ({} and {}): bit-exact with run_cpu. \
         No GPU ({no_device}): bench is a GPU program and timed nothing; run it on a machine with an NVIDIA GPU (bench/README.md).",
        shape_text(CHECK_2D.into()),
        shape_text(CHECK_3D.into())
    );
    Ok(())
}

fn emulate<T: GridElement>(options: &Options) -> Result<usize> {
    let mut checked = 0;
    for stencil in T::stencils().iter().filter(|s| options.stencils.iter().any(|n| n == s.name)) {
        checked += emulate_stencil(stencil, stencil.shape(CHECK_2D, CHECK_3D))?;
    }
    Ok(checked)
}

fn emulate_stencil<T: GridElement>(stencil: &GridStencil<T>, shape: Extent) -> Result<usize> {
    let input = signal::<T>(shape.len().unwrap_or(0));
    let want = stencil.default.reference_grid_vec(&[&input], shape, ())?.remove(0);
    let mut checked = 0;
    for kernel in stencil.kernels() {
        let what =
            format!("{} {} `{}` on {} in the CPU emulation", stencil.name, T::TYPE, kernel.name(), shape_text(shape));
        compare(&kernel.emulate_grid_vec(&[&input], shape, ())?.remove(0), &want, &what)?;
        checked += 1;
    }
    Ok(checked)
}
