//! What the examples share: their two options, choosing the GPU or the CPU emulation, checking a
//! stencil bit for bit against its CPU reference, timing it with CUDA events, and printing what
//! the driver's compiler gave each kernel on the GPU (`print_resources`).

// Each example uses only part of this module.
#![allow(dead_code)]

use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rc::runtime::{cust, Resources};
use rc::testdata::{awkward, first_difference, poison, Rng};
use rc::{Element, Params, Stencil};

use cust::context::Context;
use cust::error::CudaResult;
use cust::event::{Event, EventFlags};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::stream::{Stream, StreamFlags};

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Input length on a GPU: large enough that launch overhead does not count.
pub const GPU_N: usize = 1 << 26;
/// Input length for the CPU emulation, which runs every lane of every warp one after another.
pub const EMULATION_N: usize = 1 << 20;
/// Length of the awkward-data check: odd, so the last tile is partial.
pub const AWKWARD_N: usize = 1_000_003;
/// Launches before timing (module load, clocks ramping up) and launches timed.
pub const WARM_UP_LAUNCHES: usize = 3;
pub const TIMED_LAUNCHES: usize = 20;

const USAGE: &str =
    "options: --n N (input length), --emit-ptx DIR (write each kernel's PTX to DIR/<entry>.ptx and exit)";

/// The examples' command line.
pub struct Args {
    /// `--n N`: the input length, instead of the example's default.
    pub n: Option<usize>,
    /// `--emit-ptx DIR`: only write the PTX (CI assembles it with ptxas).
    pub emit_ptx: Option<PathBuf>,
}

impl Args {
    pub fn parse() -> Result<Args> {
        let mut args = Args { n: None, emit_ptx: None };
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            match word.as_str() {
                "--n" => {
                    let value = words.next().ok_or_else(|| fail(format!("--n needs a number; {USAGE}")))?;
                    let n: usize = value.parse().map_err(|e| fail(format!("--n {value}: {e}; {USAGE}")))?;
                    if n == 0 {
                        return Err(fail(format!("--n must be at least 1; {USAGE}")));
                    }
                    args.n = Some(n);
                }
                "--emit-ptx" => {
                    let dir = words.next().ok_or_else(|| fail(format!("--emit-ptx needs a directory; {USAGE}")))?;
                    args.emit_ptx = Some(dir.into());
                }
                other => return Err(fail(format!("unknown argument `{other}`; {USAGE}"))),
            }
        }
        Ok(args)
    }

    /// With `--emit-ptx DIR`, writes each `(entry, ptx)` to `DIR/<entry>.ptx` and returns true:
    /// the example then exits without running anything.
    pub fn emit_ptx(&self, kernels: &[(&str, &str)]) -> Result<bool> {
        let Some(dir) = &self.emit_ptx else {
            return Ok(false);
        };
        std::fs::create_dir_all(dir).map_err(|e| fail(format!("creating {}: {e}", dir.display())))?;
        for (entry, ptx) in kernels {
            let path = dir.join(format!("{entry}.ptx"));
            std::fs::write(&path, ptx).map_err(|e| fail(format!("writing {}: {e}", path.display())))?;
            println!("wrote {}", path.display());
        }
        Ok(true)
    }
}

/// Prints the GPU the example runs on and returns true, or prints why there is none and returns
/// false. Any other failure (a driver that is there but broken) is an error, not a fallback.
pub fn find_gpu() -> Result<bool> {
    match rc::runtime::gpu() {
        Ok(gpu) => {
            println!("device: {gpu}");
            Ok(true)
        }
        Err(e) if e.is_no_device() => {
            println!("no GPU found ({e}); running the CPU emulation instead");
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

pub fn default_n(on_gpu: bool) -> usize {
    if on_gpu {
        GPU_N
    } else {
        EMULATION_N
    }
}

/// `n` samples of a sine with 10% noise: the finite, unremarkable signal the headline runs use.
pub fn noisy_sine(n: usize) -> Vec<f32> {
    let mut rng = Rng::new(7);
    (0..n).map(|i| ((i as f64 * 1e-3).sin() + 0.1 * rng.uniform(-1.0, 1.0)) as f32).collect()
}

/// Where the stencils run.
pub enum Backend {
    Gpu(Gpu),
    /// No GPU: the CPU emulation of the exact warp program (`emulate`).
    Emulation,
}

impl Backend {
    /// The GPU if there is one (printing which), else the emulation (printing why).
    pub fn detect() -> Result<Backend> {
        Ok(if find_gpu()? { Backend::Gpu(Gpu::new()?) } else { Backend::Emulation })
    }

    pub fn default_n(&self) -> usize {
        default_n(matches!(self, Backend::Gpu(_)))
    }

    /// Runs `stencil` over `input` into a poisoned output, and fails unless the result equals
    /// the CPU reference (`run_cpu`) bit for bit. `data` names the input in the failure.
    pub fn check<T, P>(&self, stencil: &Stencil<T, P>, input: &[T], params: P, data: &str) -> Result<()>
    where
        T: Element + DeviceCopy,
        P: Params,
    {
        let got = match self {
            Backend::Gpu(gpu) => {
                let input = gpu.upload(input)?;
                let mut output = gpu.poisoned(stencil.output_len(input.len())?)?;
                rc::runtime::launch(stencil, gpu.stream(), &[&input], &mut [&mut output], params)?;
                gpu.download(&output)?
            }
            Backend::Emulation => stencil.emulate_vec(&[input], params)?.remove(0),
        };
        self.compare(stencil, &got, &reference(stencil, input, params)?, data)
    }

    /// Checks `stencil` on awkward data (NaN, infinities, -0.0, subnormals), then on `input`, and
    /// times it on `input`. Fails on the first mismatch, before timing anything.
    pub fn measure<T, P>(&self, stencil: &Stencil<T, P>, input: &[T], params: P) -> Result<Measurement>
    where
        T: Element + DeviceCopy,
        P: Params,
    {
        let n = input.len();
        let awkward_n = n.min(AWKWARD_N);
        self.check(stencil, &awkward(awkward_n, 1), params, &format!("awkward data, n = {awkward_n}"))?;
        let want = reference(stencil, input, params)?;
        let data = format!("the signal, n = {n}");
        let speed = match self {
            Backend::Gpu(gpu) => {
                let input_dev = gpu.upload(input)?;
                let mut output_dev = gpu.poisoned(want.len())?;
                rc::runtime::launch(stencil, gpu.stream(), &[&input_dev], &mut [&mut output_dev], params)?;
                self.compare(stencil, &gpu.download(&output_dev)?, &want, &data)?;
                let timing = gpu.time(WARM_UP_LAUNCHES, TIMED_LAUNCHES, || {
                    Ok(rc::runtime::launch(stencil, gpu.stream(), &[&input_dev], &mut [&mut output_dev], params)?)
                })?;
                Speed::Gpu { timing, bytes: (n + want.len()) * std::mem::size_of::<T>() }
            }
            Backend::Emulation => {
                let mut got = vec![poison::<T>(); want.len()];
                let start = Instant::now();
                stencil.emulate(&[input], &mut [&mut got], params)?;
                let elapsed = start.elapsed();
                self.compare(stencil, &got, &want, &data)?;
                Speed::Emulated(elapsed)
            }
        };
        Ok(Measurement { speed })
    }

    /// On the GPU, prints `stencil`'s resource report ([`print_resources`]). The CPU emulation
    /// has no registers or occupancy to report, so it prints nothing there.
    pub fn print_resources<T: Element, P: Params>(&self, stencil: &Stencil<T, P>) -> Result<()> {
        match self {
            Backend::Gpu(_) => print_resources(stencil),
            Backend::Emulation => Ok(()),
        }
    }

    /// Fails with the first output where `got` differs from `want` (NaNs count as equal).
    pub fn compare<T: Element, P: Params>(
        &self,
        stencil: &Stencil<T, P>,
        got: &[T],
        want: &[T],
        data: &str,
    ) -> Result<()> {
        let on = match self {
            Backend::Gpu(_) => "on the GPU",
            Backend::Emulation => "in the CPU emulation",
        };
        compare(got, want, &format!("stencil `{}` {on}, {data}", stencil.name()))
    }
}

/// Prints what the driver's compiler gave `stencil` on the current context's GPU: registers,
/// local memory, shared memory, threads and blocks, occupancy, and a warning line if the kernel
/// spills. Indented, so that it reads as part of the line printed before it. Needs a GPU: the
/// report comes from the driver (`rc::runtime::resources`), which compiles the kernel if no launch
/// has yet.
pub fn print_resources<T: Element, P: Params>(stencil: &Stencil<T, P>) -> Result<()> {
    print_report(&rc::runtime::resources(stencil)?);
    Ok(())
}

/// Prints a resource report already asked for, as [`print_resources`] does.
pub fn print_report(report: &Resources) {
    for line in report.to_string().lines() {
        println!("  {line}");
    }
}

/// The CPU reference (`run_cpu`, which uses every core) into a new vector.
pub fn reference<T: Element, P: Params>(stencil: &Stencil<T, P>, input: &[T], params: P) -> Result<Vec<T>> {
    Ok(stencil.reference_vec(&[input], params)?.remove(0))
}

/// Fails with the first output where `got` (what was run) differs from `want` (the CPU
/// reference); `what` says what was run on which data.
pub fn compare<T: Element>(got: &[T], want: &[T], what: &str) -> Result<()> {
    let Some(index) = first_difference(got, want) else {
        return Ok(());
    };
    let found = match (got.get(index), want.get(index)) {
        (Some(g), Some(w)) if g.same_value(poison()) => {
            format!(
                "output {index} is {g:?} (the poison it was filled with: never written), the CPU reference gives {w:?}"
            )
        }
        (Some(g), Some(w)) => format!("output {index} is {g:?}, the CPU reference gives {w:?}"),
        _ => format!("{} outputs, the CPU reference has {}", got.len(), want.len()),
    };
    Err(fail(format!("check FAILED: {what}: {found}")))
}

/// An example's exit: success, or its error printed as prose (a `main` that returns `Err` would
/// print the error's `Debug` form instead).
pub fn exit(result: Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error that is just a message.
pub fn fail(message: String) -> Box<dyn Error> {
    Box::new(Failure(message))
}

/// `summary.txt` and `results.csv` into `out` (created if missing), each announced.
pub fn write_summary(out: &Path, summary: &str, csv: &str) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| fail(format!("creating {}: {e}", out.display())))?;
    for (name, text) in [("summary.txt", summary), ("results.csv", csv)] {
        std::fs::write(out.join(name), text).map_err(|e| fail(format!("writing {name}: {e}")))?;
        println!("wrote {}", out.join(name).display());
    }
    Ok(())
}

struct Failure(String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// `main` returning an error prints it with `Debug`: make that the message itself, unquoted.
impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Failure {}

/// A passed check and how fast it ran.
pub struct Measurement {
    pub speed: Speed,
}

impl fmt::Display for Measurement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check: passed, {}", self.speed)
    }
}

pub enum Speed {
    /// `bytes`: inputs read once plus outputs written once, the effective-bandwidth convention.
    Gpu { timing: Timing, bytes: usize },
    /// Wall time of the CPU emulation: says nothing about a GPU.
    Emulated(Duration),
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Speed::Gpu { timing, bytes } => write!(
                f,
                "{:.4} ms (median of {} launches), {:.1} GB/s effective",
                timing.median_ms,
                timing.launches,
                timing.gb_per_s(*bytes)
            ),
            Speed::Emulated(elapsed) => {
                write!(f, "{:.1} ms in the CPU emulation (not a GPU time)", elapsed.as_secs_f64() * 1e3)
            }
        }
    }
}

/// Launch times measured with CUDA events.
pub struct Timing {
    pub launches: usize,
    pub median_ms: f64,
    /// From the first launch's start to the last launch's end.
    pub total_ms: f64,
}

impl Timing {
    /// Effective bandwidth for `bytes` moved per launch, at the median time.
    pub fn gb_per_s(&self, bytes: usize) -> f64 {
        bytes as f64 / (self.median_ms * 1e-3) / 1e9
    }
}

/// A CUDA context and a stream on device 0.
pub struct Gpu {
    // Fields drop in order: the stream goes before the context it lives in.
    stream: Stream,
    _context: Context,
}

impl Gpu {
    pub fn new() -> Result<Gpu> {
        let context = cust::quick_init().during("creating a CUDA context (cust::quick_init)")?;
        // Not NON_BLOCKING: the stream must wait for the synchronous copies cust makes on the
        // legacy default stream (`DeviceBuffer::from_slice`), which may still be in flight.
        let stream = Stream::new(StreamFlags::DEFAULT, None).during("creating a CUDA stream")?;
        Ok(Gpu { stream, _context: context })
    }

    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::from_slice(data).during(&format!("copying {} elements to the GPU", data.len()))
    }

    /// A device buffer of `len` poison values, so that an output the kernel skips shows up.
    pub fn poisoned<T: Element + DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.upload(&vec![poison::<T>(); len])
    }

    /// Waits for everything queued on the stream, then copies `buffer` to the host.
    pub fn download<T: Element + DeviceCopy>(&self, buffer: &DeviceSlice<T>) -> Result<Vec<T>> {
        self.stream.synchronize().during("waiting for the GPU (stream synchronize)")?;
        let mut host = vec![poison::<T>(); buffer.len()];
        buffer.copy_to(&mut host[..]).during(&format!("copying {} elements from the GPU", buffer.len()))?;
        Ok(host)
    }

    /// Calls `launch` (which queues work on this stream) `warm_up` times untimed, then `count`
    /// times with a pair of CUDA events around each.
    pub fn time(&self, warm_up: usize, count: usize, mut launch: impl FnMut() -> Result<()>) -> Result<Timing> {
        for _ in 0..warm_up {
            launch()?;
        }
        // Made beforehand, so that the timed loop does nothing but queue work.
        let new_event = || Event::new(EventFlags::DEFAULT).during("creating a CUDA event");
        let events = (0..count).map(|_| Ok((new_event()?, new_event()?))).collect::<Result<Vec<_>>>()?;
        for (start, stop) in &events {
            start.record(&self.stream).during("recording a CUDA event")?;
            launch()?;
            stop.record(&self.stream).during("recording a CUDA event")?;
        }
        self.stream.synchronize().during("waiting for the timed launches (stream synchronize)")?;
        let mut times = Vec::with_capacity(count);
        for (start, stop) in &events {
            times.push(f64::from(stop.elapsed_time_f32(start).during("reading a CUDA event time")?));
        }
        let total_ms = match (events.first(), events.last()) {
            (Some((first, _)), Some((_, last))) => {
                f64::from(last.elapsed_time_f32(first).during("reading a CUDA event time")?)
            }
            _ => 0.0,
        };
        times.sort_by(f64::total_cmp);
        let median_ms = match times.len() {
            0 => f64::NAN,
            len if len % 2 == 1 => times[len / 2],
            len => (times[len / 2 - 1] + times[len / 2]) / 2.0,
        };
        Ok(Timing { launches: count, median_ms, total_ms })
    }
}

/// Says which CUDA call failed. cust's own `Display` asks the driver for the text and fails when
/// it cannot answer, so the error is shown with `Debug` (its name, e.g. `OutOfMemory`).
pub trait During<T> {
    fn during(self, what: &str) -> Result<T>;
}

impl<T> During<T> for CudaResult<T> {
    fn during(self, what: &str) -> Result<T> {
        self.map_err(|e| fail(format!("{what} failed: {e:?}")))
    }
}
