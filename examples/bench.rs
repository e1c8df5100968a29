//! The benchmark harness: every strategy (register cache, shared memory, naive) at every radius
//! and outputs per thread, on the register-cache article's (2r+1)-tap average
//! `B[i] = (A[i] + ... + A[i+2r]) / (2r+1)` (boundary valid, warp 32), against a
//! device-to-device copy measured in the same run and the peers measured by bench/peers.py.
//!
//! Method, per kernel: the output is poisoned, the kernel runs once and its whole output must
//! equal the CPU reference (`run_cpu`) bit for bit; then warm-up launches, then the median of the
//! timed launches (CUDA events). Outputs: a table on stdout and in summary.txt, results.csv, and
//! the SVG plots speedup_<type>.svg and roofline_<type>.svg. bench/README.md has the command
//! that reproduces everything and what each column means.
//!
//! Without a GPU it checks a few kernels on the CPU emulation and says that it timed nothing;
//! `--plot-only results.csv` re-plots a finished run anywhere.

mod common;

mod bench {
    pub mod csv;
    pub mod fields;
    pub mod half;
    pub mod grid {
        pub mod kernels;
        pub mod measure;
        pub mod plot;
        pub mod report;
        pub mod run;
    }
    pub mod kernels;
    pub mod math;
    pub mod measure;
    pub mod options;
    pub mod peers;
    pub mod plot;
    pub mod report;
    pub mod roofline;
    pub mod split;
    pub mod systems;
}

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rc::runtime::GpuInfo;
use rc::ScalarType;

use bench::grid::kernels::GridElement;
use bench::kernels::{find, signal, BenchElement, ROW_OUTPUTS, VARIANTS};
use bench::options::{list, Options};
use bench::report;
use common::{compare, fail, Gpu, Result};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<()> {
    let Some(options) = Options::parse()? else {
        return Ok(());
    };
    if let Some(dir) = &options.emit_ptx {
        return emit_ptx(dir);
    }
    if options.grid {
        return match &options.plot_only {
            Some(csv) => bench::grid::run::plot_only(&options, csv),
            None => bench::grid::run::run(&options),
        };
    }
    if let Some(csv) = &options.plot_only {
        return plot_only(&options, csv);
    }
    if options.half {
        return timed_or_emulated(&options, "-f16", bench::half::run, || {
            let checked = bench::half::emulate_all(20_000)?;
            Ok(format!("checked {checked} f16 kernels on the CPU emulation: bit-exact with run_cpu."))
        });
    }
    if options.systems {
        return timed_or_emulated(&options, "-systems", bench::systems::run, || {
            let checked = bench::systems::emulate_all()?;
            Ok(format!(
                "checked {checked} Gray-Scott kernels (one step, fused) on the CPU emulation: bit-exact with run_cpu."
            ))
        });
    }
    if options.math {
        return timed_or_emulated(&options, "-math", bench::math::run, || {
            let checked = bench::math::emulate_all()?;
            Ok(format!(
                "checked {checked} kernels (Perona-Malik with exp, linear diffusion) on the CPU emulation: bit-exact with run_cpu."
            ))
        });
    }
    if options.split {
        if let Some(why_not) = bench::split::run(&options)? {
            let checked = bench::split::check_on_cpu()?;
            println!("checked {checked} splits (2D heat one step and fused, 3D heat; 1 to 3 ranks) on the CPU, bands emulated: bit-exact with run_cpu_steps. {why_not}: timed nothing.");
        }
        return Ok(());
    }
    if options.fields {
        return timed_or_emulated(&options, "-fields", bench::fields::run, || {
            let checked = bench::fields::emulate_all(20_000)?;
            Ok(format!(
                "checked {checked} diffusion kernels (two fields, one field) on the CPU emulation: bit-exact with run_cpu."
            ))
        });
    }
    options.check_compiled()?;
    // Read before the long run, so that a bad file fails now.
    let peers = options.peers.as_deref().map(report::read_csv).transpose()?;
    let info = match rc::runtime::gpu() {
        Ok(info) => info,
        Err(e) if e.is_no_device() => return check_on_cpu(&options, &e),
        Err(e) => return Err(e.into()),
    };
    let gpu = Gpu::new()?;
    let out = options.out.clone().unwrap_or_else(|| default_out_dir(&info, ""));
    std::fs::create_dir_all(&out).map_err(|e| fail(format!("creating {}: {e}", out.display())))?;

    let mut header = String::new();
    let _ = writeln!(header, "device: {info}");
    let _ = writeln!(
        header,
        "radii {}, outputs per thread {}, strategies {}; median of {} timed launches after {} warm-ups (CUDA events)",
        list(&options.radii),
        list(&options.outputs_per_thread),
        VARIANTS.map(|v| v.label).join(", "),
        options.reps,
        options.warm_up
    );
    for element in options.elements() {
        let _ = writeln!(header, "{}", bench::roofline::arithmetic_assumption(&info, element, "(2r+1)"));
    }
    let _ = writeln!(header, "roofline = min(device-to-device copy GB/s of this run at that radius, arithmetic bound)");
    print!("{header}");

    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for element in options.elements() {
        let measured = match element {
            ScalarType::F64 => bench::measure::element::<f64>(&gpu, &info, &options)?,
            _ => bench::measure::element::<f32>(&gpu, &info, &options)?,
        };
        rows.extend(measured.rows);
        failures.extend(measured.failures);
    }
    report::fill_speedups(&mut rows);
    if let Some(peers) = peers {
        for note in report::merge_peers(&mut rows, peers) {
            let _ = writeln!(header, "{note}");
            println!("{note}");
        }
    }
    report::sort(&mut rows);
    if let Some(peers) = &options.peers {
        keep_beside(peers, &out.join("peers.csv"))?;
    }

    let csv = out.join("results.csv");
    report::write_csv(&rows, &csv)?;
    let table = report::table(&rows);
    println!("\n{table}");
    let summary = out.join("summary.txt");
    std::fs::write(&summary, format!("{header}\n{table}"))
        .map_err(|e| fail(format!("writing {}: {e}", summary.display())))?;
    for path in [csv, summary].into_iter().chain(bench::plot::all(&rows, &out)?) {
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

/// Every compiled kernel's PTX: 1D as `<variant>_<type>_<entry>.ptx` (entries repeat across
/// variants), grid as `grid_<stencil>_<type>_<entry>.ptx`.
fn emit_ptx(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    fn write<T: GridElement>(dir: &Path) -> Result<usize> {
        let kernels = T::kernels();
        for k in &kernels {
            let variant = bench::kernels::Variant::of(k).map_or("unknown", |v| v.label);
            std::fs::write(dir.join(format!("{variant}_{}_{}.ptx", T::TYPE, k.entry())), k.ptx())?;
        }
        for k in T::auto_kernels() {
            std::fs::write(dir.join(format!("{}_{}_{}.ptx", bench::kernels::AUTO, T::TYPE, k.entry())), k.ptx())?;
        }
        let mut grid = 0;
        for stencil in T::stencils() {
            for k in stencil.kernels() {
                std::fs::write(dir.join(format!("grid_{}_{}_{}.ptx", stencil.name, T::TYPE, k.entry())), k.ptx())?;
                grid += 1;
            }
        }
        Ok(kernels.len() + T::auto_kernels().len() + grid)
    }
    let written = write::<f32>(dir)?
        + write::<f64>(dir)?
        + bench::half::emit_ptx(dir)?
        + bench::fields::emit_ptx(dir)?
        + bench::systems::emit_ptx(dir)?
        + bench::math::emit_ptx(dir)?
        + bench::split::emit_ptx(dir)?;
    println!("wrote {written} kernels' PTX to {}", dir.display());
    Ok(())
}

/// `--plot-only CSV`: the table and the plots of a finished run, with `--peers` merged in if
/// given (results.csv itself is left as it is).
fn plot_only(options: &Options, csv: &Path) -> Result<()> {
    let mut rows = report::read_csv(csv)?;
    report::fill_speedups(&mut rows);
    if let Some(peers) = &options.peers {
        for note in report::merge_peers(&mut rows, report::read_csv(peers)?) {
            println!("{note}");
        }
    }
    report::sort(&mut rows);
    let out = plot_dir(options, csv)?;
    println!("{}", report::table(&rows));
    for path in bench::plot::all(&rows, &out)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Where `--plot-only CSV` writes: `--out`, or beside the CSV; made if it is not there.
fn plot_dir(options: &Options, csv: &Path) -> Result<PathBuf> {
    let out = match &options.out {
        Some(dir) => dir.clone(),
        None => csv.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    std::fs::create_dir_all(&out).map_err(|e| fail(format!("creating {}: {e}", out.display())))?;
    Ok(out)
}

/// Copies `file` to `to`, so that a results directory holds everything its plots were made from.
fn keep_beside(file: &Path, to: &Path) -> Result<()> {
    let same = matches!((file.canonicalize(), to.canonicalize()), (Ok(a), Ok(b)) if a == b);
    if !same {
        std::fs::copy(file, to).map_err(|e| fail(format!("copying {} to {}: {e}", file.display(), to.display())))?;
    }
    Ok(())
}

/// No GPU: check a few kernels on the CPU emulation, say that nothing was timed, succeed.
fn check_on_cpu(options: &Options, no_device: &rc::runtime::Error) -> Result<()> {
    const N: usize = 20_000;
    let mut checked = 0;
    for element in options.elements() {
        checked += match element {
            ScalarType::F64 => emulate_a_few::<f64>(options, N)?,
            _ => emulate_a_few::<f32>(options, N)?,
        };
    }
    println!(
        "checked {checked} kernels on the CPU emulation (n = {N}): bit-exact with run_cpu. \
         No GPU ({no_device}): bench is a GPU program and timed nothing; run it on a machine with an NVIDIA GPU (bench/README.md)."
    );
    Ok(())
}

/// Every strategy at the smallest and the largest radius and outputs per thread asked for.
fn emulate_a_few<T: BenchElement>(options: &Options, n: usize) -> Result<usize> {
    let kernels = T::kernels();
    let input = signal::<T>(n);
    let (r, p) = (&options.radii, &options.outputs_per_thread);
    let corners = [(r[0], p[0]), (r[r.len() - 1], p[p.len() - 1])];
    let mut checked = 0;
    for (radius, outputs) in corners {
        let want = find(&kernels, radius, outputs, VARIANTS[0])
            .ok_or_else(|| fail(format!("no kernel for radius {radius}")))?
            .reference_vec(&[&input], ())?
            .remove(0);
        for variant in VARIANTS {
            // Granule and window kernels exist at their own outputs per thread; check the largest.
            let p = if variant.rows() { ROW_OUTPUTS[ROW_OUTPUTS.len() - 1] } else { outputs };
            let Some(kernel) = find(&kernels, radius, p, variant) else {
                if variant.rows() {
                    continue; // a window that does not fit in registers is not compiled
                }
                return Err(fail(format!("no kernel for radius {radius}, P {p}, {}", variant.label)));
            };
            let what = format!("{} r={radius} P={p} {} in the CPU emulation", T::TYPE, variant.label);
            compare(&kernel.emulate_vec(&[&input], ())?.remove(0), &want, &what)?;
            checked += 1;
        }
    }
    Ok(checked)
}

/// `bench/results/<date>-<gpu><suffix>/` in this repository, e.g. `bench/results/<date>-h200/`.
/// A benchmark mode: timed by `run` on the GPU (results in `--out`, else a folder named for the
/// GPU and `suffix`), or without a GPU checked on the CPU emulation by `emulate`, which says what
/// it checked, and said so.
fn timed_or_emulated(
    options: &Options,
    suffix: &str,
    run: fn(&Options, &GpuInfo, &Path) -> Result<()>,
    emulate: impl FnOnce() -> Result<String>,
) -> Result<()> {
    match rc::runtime::gpu() {
        Ok(info) => run(options, &info, &options.out.clone().unwrap_or_else(|| default_out_dir(&info, suffix))),
        Err(e) if e.is_no_device() => {
            println!("{} No GPU ({e}): timed nothing.", emulate()?);
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

fn default_out_dir(info: &GpuInfo, suffix: &str) -> PathBuf {
    let mut slug = String::new();
    for c in info.name.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    let slug = slug.strip_prefix("nvidia-").unwrap_or(slug);
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench").join("results").join(format!("{}-{slug}{suffix}", today()))
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to a civil date (Howard Hinnant's `civil_from_days`).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
