//! `--split`: a grid split over the GPUs of this process (`rc::split::SplitGrid`), weak scaling
//! from 1 to G GPUs (G: every visible GPU), each GPU holding the same band: the 2D 5-point heat
//! step at 16384 x 16384 per GPU, one step per launch and fused, and the 3D 7-point step at
//! 512^3 per GPU, one step per launch; each with an exchange after every launch, and with
//! `Decomposition::balanced_steps_per_exchange` (deeper halos, an exchange every few launches:
//! fewer exchanges against a few rows computed twice). Each case is first
//! checked bit-exact against one GPU's `run_steps` (and that against `run_cpu_steps`) on a
//! smaller grid split the same way; then the median of the timed rounds (a round: the steps
//! between two exchanges on every rank, and the exchange) after warm-up, by CUDA events on
//! every rank's stream. Reported per GPU: throughput (8 bytes per point and step: a read and a
//! write of f32), efficiency against 1 GPU, and the exchange's share of a round; the
//! device-to-device copy of one GPU, measured in the same run, as the bandwidth to compare with.
//! In 2D also strong scaling: one GPU's 16384 x 16384 split over 1 to G GPUs, and its speedup.
//! Written: summary.txt, results.csv and efficiency.svg.
//!
//! Without a GPU (or built without the `cudarc` feature) it checks the same cases on the CPU
//! split (each band by the kernels' emulation, small grids) against `run_cpu_steps` and says
//! that it timed nothing.

use rc::prelude::*;
use rc::split::{run_split_steps, CpuSteps, Decomposition};
use rc::Extent;

use crate::common::{compare, Result};

/// The 5-point heat step (Jacobi with a source-free update), zero outside the domain.
#[stencil(radius = 1, boundary = zero)]
pub fn heat2d(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

/// The 7-point heat step, zero outside the domain.
#[stencil(radius = 1, boundary = zero)]
pub fn heat3d(w: Window3<f32>, alpha: f32) -> f32 {
    w[(0, 0, 0)]
        + alpha
            * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
                - 6.0 * w[(0, 0, 0)])
}

const ALPHA_2D: f32 = 0.2;
const ALPHA_3D: f32 = 0.1;

/// The value of the initial field at global point `p`: smooth, nowhere zero.
fn initial(p: &[usize]) -> f32 {
    let hash = p.iter().fold(17usize, |h, &c| h.wrapping_mul(31).wrapping_add(c));
    1.0 + (hash % 1013) as f32 / 1013.0
}

/// A whole grid of `shape` from [`initial`].
fn whole(shape: Extent) -> Vec<f32> {
    let dims = shape.components();
    let n = shape.len().unwrap_or(0);
    let mut point = vec![0; dims.len()];
    (0..n)
        .map(|i| {
            let mut rest = i;
            for axis in (0..dims.len()).rev() {
                point[axis] = rest % dims[axis];
                rest /= dims[axis];
            }
            initial(&point)
        })
        .collect()
}

/// One benchmarked case: a stencil, the grid each GPU holds, the steps between exchanges.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    /// 2D or 3D; one step per launch or the fused kernel's steps.
    three_d: bool,
    fused: bool,
    /// An exchange after every launch, or every
    /// [`Decomposition::balanced_steps_per_exchange`] steps (whole launches; deeper halos).
    balanced: bool,
}

const CASES: [Case; 6] = [
    Case { name: "2D 5-point heat, one step per launch", three_d: false, fused: false, balanced: false },
    Case { name: "2D 5-point heat, one step per launch, balanced", three_d: false, fused: false, balanced: true },
    Case { name: "2D 5-point heat, fused", three_d: false, fused: true, balanced: false },
    Case { name: "2D 5-point heat, fused, balanced", three_d: false, fused: true, balanced: true },
    Case { name: "3D 7-point heat, one step per launch", three_d: true, fused: false, balanced: false },
    Case { name: "3D 7-point heat, one step per launch, balanced", three_d: true, fused: false, balanced: true },
];

impl Case {
    fn steps_per_launch(&self) -> usize {
        match (self.fused, self.three_d) {
            (false, _) => 1,
            (true, false) => heat2d::STEPS_PER_LAUNCH as usize,
            (true, true) => heat3d::STEPS_PER_LAUNCH as usize,
        }
    }

    /// Steps per exchange for the whole grid `shape` over `ranks` ranks.
    fn steps_per_exchange(&self, shape: Extent, ranks: usize) -> usize {
        let launch = self.steps_per_launch();
        match self.balanced {
            false => launch,
            true => Decomposition::balanced_steps_per_exchange(&self.pattern(), shape, ranks, launch),
        }
    }

    /// The 2D case's stencil: fused, or one step per launch (the same handle without its fused
    /// kernel, as `fuse = 1` makes it).
    fn heat2d(&self) -> rc::Stencil<f32, (f32,)> {
        if self.fused {
            heat2d::KERNEL
        } else {
            heat2d::KERNEL.with_fused(1, "", "", "")
        }
    }

    /// The pattern of the case's stencil (one for every kernel of its dimensions).
    fn pattern(&self) -> rc::core::Pattern {
        if self.three_d {
            heat3d::KERNEL.pattern()
        } else {
            heat2d::KERNEL.pattern()
        }
    }

    /// The whole grid of `ranks` bands of shape `band` each, stacked along the outermost dimension.
    fn shape(&self, ranks: usize, band: &[usize]) -> Extent {
        let mut shape = band.to_vec();
        shape[0] *= ranks;
        Extent::new(&shape).unwrap_or_else(|| Extent::from([0, 0]))
    }
}

/// No GPU: every case's split on the CPU (bands emulated) over 1 to 3 ranks against
/// `run_cpu_steps`, on small grids. Returns the splits checked.
pub fn check_on_cpu() -> Result<usize> {
    let mut checked = 0;
    for case in CASES {
        let band = if case.three_d { vec![10, 9, 40] } else { vec![24, 64] };
        for ranks in 1..=3 {
            let shape = case.shape(ranks, &band);
            let per_exchange = case.steps_per_exchange(shape, ranks);
            let steps = 2 * per_exchange + 1;
            let input = whole(shape);
            let mut want = vec![0.0; input.len()];
            let mut got = vec![0.0; input.len()];
            let what = format!("{} over {ranks} ranks of {}", case.name, shape.as_array());
            if case.three_d {
                let kernel = heat3d::KERNEL;
                let split = Decomposition::new(&kernel.pattern(), shape, ranks, per_exchange)?;
                kernel.run_cpu_steps_grid(&[&input], shape, &mut [&mut want], steps, (ALPHA_3D,))?;
                run_split_steps(&kernel, &split, &[&input], &mut [&mut got], steps, (ALPHA_3D,), CpuSteps::Emulation)?;
            } else {
                let kernel = case.heat2d();
                let split = Decomposition::new(&kernel.pattern(), shape, ranks, per_exchange)?;
                kernel.run_cpu_steps_grid(&[&input], shape, &mut [&mut want], steps, (ALPHA_2D,))?;
                run_split_steps(&kernel, &split, &[&input], &mut [&mut got], steps, (ALPHA_2D,), CpuSteps::Emulation)?;
            }
            compare(&got, &want, &what)?;
            checked += 1;
        }
    }
    Ok(checked)
}

/// Why the GPUs cannot run it (then nothing is timed), or `None` once they did.
#[cfg(not(feature = "cudarc"))]
pub fn run(_options: &crate::bench::options::Options) -> Result<Option<String>> {
    Ok(Some(
        "built without the `cudarc` feature (cargo run --release --features cudarc --example bench -- --split)".into(),
    ))
}

#[cfg(feature = "cudarc")]
pub use on_gpus::run;

#[cfg(feature = "cudarc")]
mod on_gpus {
    use std::fmt::Write as _;
    use std::path::Path;
    use std::sync::Arc;

    use plotters::prelude::*;

    use rc::runtime::cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
    use rc::split::{Decomposition, SplitGrid};
    use rc::{Extent, Params, Stencil};

    use super::{heat3d, initial, whole, Case, ALPHA_2D, ALPHA_3D, CASES};
    use crate::bench::options::Options;
    use crate::bench::plot::{chart, Frame, COLOURS};
    use crate::common::{compare, fail, Result};

    /// What each GPU holds (weak scaling): rows x cols, planes x rows x cols.
    const BAND_2D: [usize; 2] = [16384, 16384];
    const BAND_3D: [usize; 3] = [512, 512, 512];

    impl Case {
        fn band(&self) -> Vec<usize> {
            if self.three_d {
                BAND_3D.to_vec()
            } else {
                BAND_2D.to_vec()
            }
        }

        /// The grid each rank holds in the bit-exact check: small, several tiles.
        fn check_band(&self) -> Vec<usize> {
            if self.three_d {
                vec![24, 33, 70]
            } else {
                vec![96, 300]
            }
        }
    }

    /// One case on some GPUs: the median round, the median exchange (both the slowest rank's),
    /// and the points each GPU steps per round.
    #[derive(Clone, Copy)]
    struct Measured {
        round_ms: f64,
        exchange_ms: f64,
        points_per_gpu: usize,
        steps_per_round: usize,
    }

    impl Measured {
        /// A round's time per step (rounds of different cases run different steps).
        fn step_ms(&self) -> f64 {
            self.round_ms / self.steps_per_round as f64
        }

        /// Effective GB/s of one GPU: 8 bytes per point and step.
        fn gb_per_s(&self) -> f64 {
            8.0 * self.points_per_gpu as f64 * self.steps_per_round as f64 / (self.round_ms * 1e-3) / 1e9
        }
    }

    fn cuda<T>(what: &str, result: std::result::Result<T, rc::runtime::cudarc::driver::DriverError>) -> Result<T> {
        result.map_err(|e| fail(format!("{what}: {e:?}")))
    }

    /// The run: the copy, then each case's check and weak scaling over 1 to G GPUs; a table on
    /// stdout and in summary.txt, and results.csv, in `--out` (default
    /// bench/results/<date>-<gpu>-split/). `None` once timed; why not, without a GPU.
    pub fn run(options: &Options) -> Result<Option<String>> {
        let info = match rc::runtime::gpu() {
            Ok(info) => info,
            Err(e) if e.is_no_device() => return Ok(Some(format!("no GPU ({e})"))),
            Err(e) => return Err(e.into()),
        };
        let gpus = cuda("counting devices", CudaContext::device_count())?.max(1) as usize;
        let out = options.out.clone().unwrap_or_else(|| crate::default_out_dir(&info, "-split"));
        let copy_gb = copy_gb_per_s(options)?;
        let mut summary = String::new();
        let _ = writeln!(summary, "device 0: {info}; {gpus} GPU(s) visible");
        let _ = writeln!(
            summary,
            "weak scaling: each GPU holds {}x{} (2D) or {}^3 (3D) f32 points; strong scaling (2D): one GPU's grid \
             split over all; bandwidth = 8 bytes per point and \
             step; median of {} timed rounds after {} warm-ups (CUDA events on every rank's stream; a round: the steps \
             between two exchanges, then the exchange; its time the slowest rank's); each case bit-exact with one \
             GPU's run_steps first",
            BAND_2D[0], BAND_2D[1], BAND_3D[0], options.reps, options.warm_up
        );
        let _ = writeln!(summary, "device-to-device copy on GPU 0 (1 GiB): {copy_gb:.1} GB/s");
        print!("{summary}");
        let mut csv = String::from(
            "case,scaling,gpus,steps_per_exchange,round_ms,exchange_ms,exchange_share,gb_per_s_per_gpu,fraction_of_copy,efficiency,speedup\n",
        );
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for case in CASES {
            check(&case, gpus)?;
            println!("split: {}: bit-exact with one GPU on 1 to {gpus} GPUs", case.name);
            // Weak scaling for every case; strong scaling (one GPU's grid split over all) in 2D.
            let scalings: &[Scaling] = if case.three_d { &[Scaling::Weak] } else { &[Scaling::Weak, Scaling::Strong] };
            for &scaling in scalings {
                let mut first: Option<Measured> = None;
                let mut points = Vec::new();
                for g in 1..=gpus {
                    let measured = measure(&case, g, scaling, options)?;
                    let gb = measured.gb_per_s();
                    let one = first.get_or_insert(measured);
                    // Weak: throughput per GPU against one GPU's; strong: speedup over one GPU per GPU.
                    let (efficiency, speedup) = (gb / one.gb_per_s(), one.step_ms() / measured.step_ms());
                    let share = measured.exchange_ms / measured.round_ms;
                    points.push((g as f64, efficiency));
                    let line = format!(
                        "{} ({}), {g} GPU(s), {} steps per exchange: {:.4} ms per round, exchange {:.4} ms ({:.1}%), \
                         {gb:.1} GB/s per GPU ({:.3} of copy), efficiency {efficiency:.3}, speedup {speedup:.2}x",
                        case.name,
                        scaling.name(),
                        measured.steps_per_round,
                        measured.round_ms,
                        measured.exchange_ms,
                        100.0 * share,
                        gb / copy_gb
                    );
                    println!("{line}");
                    let _ = writeln!(summary, "{line}");
                    let _ = writeln!(
                        csv,
                        "{},{},{g},{},{},{},{share},{gb},{},{efficiency},{speedup}",
                        case.name,
                        scaling.name(),
                        measured.steps_per_round,
                        measured.round_ms,
                        measured.exchange_ms,
                        gb / copy_gb
                    );
                }
                series.push((format!("{} ({} scaling)", case.name, scaling.name()), points));
            }
        }
        crate::common::write_summary(&out, &summary, &csv)?;
        let plot = out.join("efficiency.svg");
        plot_efficiency(&series, gpus, &info.name, &plot)?;
        println!("wrote {}", plot.display());
        Ok(None)
    }

    /// `efficiency.svg`: each case's efficiency against 1 GPU over the GPUs.
    fn plot_efficiency(series: &[(String, Vec<(f64, f64)>)], gpus: usize, gpu: &str, path: &Path) -> Result<()> {
        let x = 0.5..gpus as f64 + 0.5;
        let frame = Frame {
            size: (960, 600),
            caption: format!("a grid split over GPUs: efficiency against 1 GPU ({gpu})"),
            label_areas: (48, 64),
        };
        chart(path, frame, x.clone(), 0.0..1.4, |chart| {
            chart
                .configure_mesh()
                .x_desc("GPUs")
                .y_desc("efficiency (weak: per-GPU throughput / 1 GPU's; strong: speedup / GPUs)")
                .x_labels(gpus.max(2))
                .x_label_formatter(&|g| format!("{g:.0}"))
                .draw()?;
            chart
                .draw_series(DashedLineSeries::new(vec![(x.start, 1.0), (x.end, 1.0)], 6, 6, BLACK.stroke_width(1)))?
                .label("1.0 = perfect scaling")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK));
            for (i, (label, points)) in series.iter().enumerate() {
                let colour = COLOURS[i % COLOURS.len()];
                chart
                    .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
                    .label(label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
                chart.draw_series(points.iter().map(|&pt| Circle::new(pt, 4, colour.filled())))?;
            }
            Ok(())
        })
    }

    /// The device-to-device copy of 1 GiB on GPU 0: median GB/s (a read and a write per byte).
    fn copy_gb_per_s(options: &Options) -> Result<f64> {
        let context = cuda("CudaContext::new(0)", CudaContext::new(0))?;
        let stream = cuda("a stream", context.new_stream())?;
        let n = 1 << 28;
        let from = cuda("allocating", stream.alloc_zeros::<f32>(n))?;
        let mut to = cuda("allocating", stream.alloc_zeros::<f32>(n))?;
        let streams = [&stream];
        let times = time_rounds(&streams, options, || {
            cuda("cuMemcpyDtoDAsync", stream.memcpy_dtod(&from, &mut to))?;
            Ok(())
        })?;
        Ok(2.0 * 4.0 * n as f64 / (median(times.into_iter()) * 1e-3) / 1e9)
    }

    /// Each case split over 1 to `gpus` GPUs (one rank per GPU, and twice as many ranks as
    /// GPUs) equals one GPU's `run_steps`, which equals `run_cpu_steps`.
    fn check(case: &Case, gpus: usize) -> Result<()> {
        for ranks in (1..=gpus).chain([2 * gpus]) {
            let shape = case.shape(ranks, &case.check_band());
            let per_exchange = case.steps_per_exchange(shape, ranks);
            let steps = 2 * per_exchange + 1;
            if case.three_d {
                check_one(&heat3d::KERNEL, case, shape, ranks, per_exchange, steps, (ALPHA_3D,))?;
            } else {
                check_one(&case.heat2d(), case, shape, ranks, per_exchange, steps, (ALPHA_2D,))?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn check_one<P: Params>(
        kernel: &Stencil<f32, P>,
        case: &Case,
        shape: Extent,
        ranks: usize,
        per_exchange: usize,
        steps: usize,
        params: P,
    ) -> Result<()> {
        let split = Decomposition::new(&kernel.pattern(), shape, ranks, per_exchange)?;
        let mut grid = SplitGrid::new(kernel, split)?;
        let input = whole(shape);
        grid.scatter(&[&input])?;
        grid.run_steps(steps, params)?;
        let got = grid.gather()?.remove(0);
        let one = rc::runtime::run_steps_cudarc_grid(kernel, &[&input], shape, steps, params)?.remove(0);
        let mut cpu = vec![0.0; input.len()];
        kernel.run_cpu_steps_grid(&[&input], shape, &mut [&mut cpu], steps, params)?;
        let what = format!("{} over {ranks} ranks of {}", case.name, shape.as_array());
        compare(&one, &cpu, &format!("{what}: one GPU against run_cpu_steps"))?;
        compare(&got, &one, &format!("{what}: the split against one GPU"))?;
        Ok(())
    }

    /// Weak scaling: each GPU holds the case's band; strong: one GPU's band split over all.
    #[derive(Clone, Copy)]
    enum Scaling {
        Weak,
        Strong,
    }

    impl Scaling {
        fn name(self) -> &'static str {
            match self {
                Scaling::Weak => "weak",
                Scaling::Strong => "strong",
            }
        }
    }

    /// The case on GPUs 0..gpus, filled from global coordinates, timed round by round.
    fn measure(case: &Case, gpus: usize, scaling: Scaling, options: &Options) -> Result<Measured> {
        let band = case.band();
        let shape = match scaling {
            Scaling::Weak => case.shape(gpus, &band),
            Scaling::Strong => case.shape(1, &band),
        };
        let devices: Vec<usize> = (0..gpus).collect();
        let per_exchange = case.steps_per_exchange(shape, gpus);
        let points_per_gpu = shape.len().unwrap_or(0) / gpus;
        let (round_ms, exchange_ms) = if case.three_d {
            measure_one(&heat3d::KERNEL, shape, gpus, per_exchange, &devices, (ALPHA_3D,), options)?
        } else {
            measure_one(&case.heat2d(), shape, gpus, per_exchange, &devices, (ALPHA_2D,), options)?
        };
        Ok(Measured { round_ms, exchange_ms, points_per_gpu, steps_per_round: per_exchange })
    }

    #[allow(clippy::too_many_arguments)]
    fn measure_one<P: Params>(
        kernel: &Stencil<f32, P>,
        shape: Extent,
        ranks: usize,
        per_exchange: usize,
        devices: &[usize],
        params: P,
        options: &Options,
    ) -> Result<(f64, f64)> {
        let split = Decomposition::new(&kernel.pattern(), shape, ranks, per_exchange)?;
        let mut grid = SplitGrid::on_devices(kernel, split, devices)?;
        grid.fill(0, initial)?;
        let streams: Vec<Arc<CudaStream>> = grid.streams().into_iter().cloned().collect();
        let streams: Vec<&Arc<CudaStream>> = streams.iter().collect();
        let mut exchanged: Vec<(CudaEvent, CudaEvent)> = Vec::new();
        // The steps and the exchange of a round, an event between them on every rank's stream.
        let times = time_rounds(&streams, options, || {
            grid.step_bands(per_exchange, params)?;
            let marks = streams
                .iter()
                .map(|s| cuda("recording an event", s.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))))
                .collect::<Result<Vec<_>>>()?;
            grid.exchange()?;
            let ends = streams
                .iter()
                .map(|s| cuda("recording an event", s.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))))
                .collect::<Result<Vec<_>>>()?;
            exchanged.extend(marks.into_iter().zip(ends));
            Ok(())
        })?;
        grid.synchronize()?;
        // The exchange of each timed round: the last `reps` rounds' marks, the slowest rank's.
        let ranks = streams.len();
        let timed = &exchanged[exchanged.len() - options.reps * ranks..];
        let exchange_ms = timed
            .chunks(ranks)
            .map(|round| {
                round
                    .iter()
                    .map(|(mark, end)| mark.elapsed_ms(end).map(f64::from))
                    .try_fold(0.0f64, |most, t| t.map(|t| most.max(t)))
            })
            .collect::<std::result::Result<Vec<f64>, _>>()
            .map_err(|e| fail(format!("reading an event time: {e:?}")))?;
        Ok((median(times.into_iter()), median(exchange_ms.into_iter())))
    }

    /// Runs `round` `warm_up` times, then `reps` times between events recorded on every stream:
    /// each timed round's time, the slowest stream's.
    fn time_rounds(
        streams: &[&Arc<CudaStream>],
        options: &Options,
        mut round: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        for _ in 0..options.warm_up {
            round()?;
        }
        let record = |s: &Arc<CudaStream>| {
            cuda("recording an event", s.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)))
        };
        let mut events = Vec::with_capacity(options.reps);
        for _ in 0..options.reps {
            let starts = streams.iter().map(|s| record(s)).collect::<Result<Vec<_>>>()?;
            round()?;
            let ends = streams.iter().map(|s| record(s)).collect::<Result<Vec<_>>>()?;
            events.push((starts, ends));
        }
        let mut times = Vec::with_capacity(events.len());
        for (starts, ends) in &events {
            let mut slowest = 0.0f64;
            for (start, end) in starts.iter().zip(ends) {
                slowest = slowest.max(f64::from(cuda("reading an event time", start.elapsed_ms(end))?));
            }
            times.push(slowest);
        }
        Ok(times)
    }

    fn median(values: impl Iterator<Item = f64>) -> f64 {
        let mut values: Vec<f64> = values.collect();
        values.sort_by(f64::total_cmp);
        match values.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => values[n / 2],
            n => 0.5 * (values[n / 2 - 1] + values[n / 2]),
        }
    }
}

/// The kernels' PTX, as `split_<entry>.ptx`: each one-step kernel, and the fused kernel of each
/// stencil that has one (3D heat runs one step per launch: its fused PTX is empty).
pub fn emit_ptx(dir: &std::path::Path) -> Result<usize> {
    let mut written = 0;
    for (entry, ptx) in [
        (heat2d::ENTRY, heat2d::PTX),
        (heat2d::FUSED_ENTRY, heat2d::FUSED_PTX),
        (heat3d::ENTRY, heat3d::PTX),
        (heat3d::FUSED_ENTRY, heat3d::FUSED_PTX),
    ] {
        if !ptx.is_empty() {
            std::fs::write(dir.join(format!("split_{entry}.ptx")), ptx)?;
            written += 1;
        }
    }
    Ok(written)
}
