//! The GPU is the final truth: every kernel, launched through rc-runtime on a real GPU, must equal
//! the CPU reference bit for bit (NaN equals NaN). Outputs are poisoned before each launch and
//! checked to be fully written; guard elements on both sides must stay untouched.
//!
//! Every test here needs a GPU and is `#[ignore]`d: `cargo test` (CI has no GPU) reports them
//! as ignored, and the GPU machine runs these binaries with `--include-ignored` (see
//! docs/gpu-runs/ for the committed records); without a GPU they then print why they skipped.

mod catalogue;

mod support;
use std::fmt::Debug;
use support::{gpu, launch_guarded, runs_length, sample};

use rc::core::body::{BinaryOp, Body, Node};
use rc::core::error::BodyError;
use rc::core::ptx;
use rc::core::stencil::Reference;
use rc::core::Layout;
use rc::runtime::cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};
use rc::runtime::cust::stream::Stream;
use rc::runtime::DeviceElement;
use rc::testdata::{awkward, poison, signed_zeros};
use rc::{Boundary, Element, Offset, Params, Pattern, Scalar, ScalarType, Stencil, Strategy, WarpProgram, Window};

/// Launches `k` over `inputs` (one per input field, all of one length) on the GPU and compares
/// with `run_cpu`.
fn gpu_matches_reference<T: Element + DeviceCopy, P: Params + Debug>(
    k: &Stencil<T, P>,
    inputs: &[&[T]],
    params: P,
    stream: &Stream,
) -> Result<(), String> {
    let n = inputs.first().map_or(0, |input| input.len());
    let what = |m: String| format!("{} (n={n}, params {params:?}): {m}", k.name());
    // A one-element buffer stands in for an empty input (the driver rejects empty allocations).
    let stand_in = [poison::<T>()];
    let d_in = inputs
        .iter()
        .map(|&input| DeviceBuffer::from_slice(if input.is_empty() { &stand_in[..] } else { input }))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| what(e.to_string()))?;
    let d_in: Vec<DeviceSlice<T>> = d_in.iter().zip(inputs).map(|(d, input)| d.index(0..input.len())).collect();
    let d_in: Vec<&DeviceSlice<T>> = d_in.iter().collect();
    let n_out = match k.output_len(n) {
        Ok(len) => len,
        Err(_) => {
            // No output exists: the launch must refuse with a length error, before any launch.
            let d_out = DeviceBuffer::from_slice(&[poison::<T>()]).map_err(|e| what(e.to_string()))?;
            let mut empty = d_out.index(0..0);
            return match rc::runtime::launch(k, stream, &d_in, &mut [&mut empty], params) {
                Err(rc::runtime::Error::Length { .. }) => Ok(()),
                other => Err(what(format!("expected a length error, got {other:?}"))),
            };
        }
    };
    let mut want = vec![poison::<T>(); n_out];
    k.run_cpu(inputs, &mut [&mut want], params).map_err(|e| what(e.to_string()))?;
    let got = launch_guarded(n_out, poison(), stream, |out| {
        rc::runtime::launch(k, stream, &d_in, &mut [out], params).map_err(|e| e.to_string())
    })
    .map_err(what)?;
    let got = &got[..];
    match catalogue::compare_outputs(k, got, &want) {
        None => Ok(()),
        Some(i) => Err(what(format!("output {i}: GPU gave {:?}, CPU reference {:?}", got[i], want[i]))),
    }
}

struct OnGpu<'a> {
    stream: &'a Stream,
    failures: Vec<String>,
    checked: usize,
}

impl catalogue::Visit for OnGpu<'_> {
    fn visit<T: Element + DeviceCopy, P: Params + Debug>(&mut self, k: &Stencil<T, P>, params: P) {
        let r = k.pattern().radius().along_x() as usize;
        let tile = k.pattern().tile_outputs() as usize;
        for (i, n) in [0, 1, 2 * r, 2 * r + 1, tile + 2 * r + 3, 4099, 1_000_003]
            .into_iter()
            .enumerate()
            .filter(|&(_, n)| runs_length(n))
        {
            let inputs = catalogue::awkward_inputs(k, n, 7 + i as u64);
            if let Err(e) = gpu_matches_reference(k, &catalogue::slices(&inputs), params, self.stream) {
                self.failures.push(e);
            }
            self.checked += 1;
        }
    }
}

fn report(test: &str, visitor: OnGpu<'_>) {
    eprintln!("{test}: {} launches checked, {} failed", visitor.checked, visitor.failures.len());
    assert!(visitor.failures.is_empty(), "{}", visitor.failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn catalogue_stencils_equal_their_reference_on_the_gpu() {
    let Some((_context, stream)) = gpu("catalogue_stencils_equal_their_reference_on_the_gpu") else { return };
    let mut v = OnGpu { stream: &stream, failures: Vec::new(), checked: 0 };
    catalogue::visit_all(&mut v);
    report("catalogue", v);
}

/// The 16-bit stencils, launched on cust buffers of their bits (`u16`).
impl catalogue::VisitHalf for OnGpu<'_> {
    fn visit<T: Element, P: Params + Debug>(&mut self, k: &Stencil<T, P>, params: P)
    where
        u16: DeviceElement<T>,
    {
        let r = k.pattern().radius().along_x() as usize;
        let tile = k.pattern().tile_outputs() as usize;
        let bits = |v: &[T]| -> Vec<u16> { v.iter().map(|x| x.to_scalar().bits as u16).collect() };
        // Lengths with outputs (the refusal of the others is the same for every element type).
        let lengths =
            [1, 2 * r + 1, tile + 2 * r + 3, 4099, 1_000_003].into_iter().filter(|&n| k.output_len(n).is_ok());
        for (i, n) in lengths.enumerate().filter(|&(_, n)| runs_length(n)) {
            let inputs = catalogue::awkward_inputs(k, n, 7 + i as u64);
            let what = |m: String| format!("{} (n={n}, params {params:?}): {m}", k.name());
            let outcome = (|| {
                let d_in = inputs
                    .iter()
                    .map(|input| DeviceBuffer::from_slice(&bits(input)))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                let d_in: Vec<&DeviceSlice<u16>> = d_in.iter().map(|d| &**d).collect();
                let n_out = k.output_len(n).map_err(|e| e.to_string())?;
                let mut want = vec![poison::<T>(); n_out];
                k.run_cpu(&catalogue::slices(&inputs), &mut [&mut want], params).map_err(|e| e.to_string())?;
                let poisoned = poison::<T>().to_scalar().bits as u16;
                let got = launch_guarded(n_out, poisoned, self.stream, |out| {
                    rc::runtime::launch(k, self.stream, &d_in, &mut [out], params).map_err(|e| e.to_string())
                })?;
                let got: Vec<T> = got.iter().map(|&b| T::from_bits(b as u64)).collect();
                match catalogue::compare_outputs(k, &got, &want) {
                    None => Ok(()),
                    Some(i) => Err(format!("output {i}: GPU gave {:?}, CPU reference {:?}", got[i], want[i])),
                }
            })();
            if let Err(e) = outcome {
                self.failures.push(what(e));
            }
            self.checked += 1;
        }
        // `run` copies bytes: the same results through it.
        let inputs = catalogue::awkward_inputs(k, 1000 + r, 3);
        let mut want = vec![poison::<T>(); k.output_len(1000 + r).unwrap_or(0)];
        match (
            rc::runtime::run(k, &catalogue::slices(&inputs), params).map(|mut fields| fields.remove(0)),
            k.run_cpu(&catalogue::slices(&inputs), &mut [&mut want], params),
        ) {
            (Ok(got), Ok(())) if catalogue::compare_outputs(k, &got, &want).is_none() => {}
            (got, cpu) => self.failures.push(format!("{}: run gave {got:?}, run_cpu {cpu:?}", k.name())),
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn sixteen_bit_stencils_equal_their_reference_on_the_gpu() {
    let Some((_context, stream)) = gpu("sixteen_bit_stencils_equal_their_reference_on_the_gpu") else { return };
    let mut v = OnGpu { stream: &stream, failures: Vec::new(), checked: 0 };
    catalogue::visit_half(&mut v);
    catalogue::random::visit_half(&mut v);
    report("16-bit", v);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn random_stencils_equal_their_reference_on_the_gpu() {
    let Some((_context, stream)) = gpu("random_stencils_equal_their_reference_on_the_gpu") else { return };
    let mut v = OnGpu { stream: &stream, failures: Vec::new(), checked: 0 };
    catalogue::random::visit_all(&mut v);
    report("random", v);
}

// ---- sweeps over the pattern space, with kernels compiled at run time ----------------------

/// `(body::<R>, reference::<R>)` for a radius known only at run time.
macro_rules! by_radius {
    ($r:expr, $($n:literal)*) => {
        match $r {
            $($n => (body::<$n>, reference::<$n>),)*
            r => panic!("the test's box stencil exists for radius 1..=40, not {r}"),
        }
    };
}

/// `let mut s = 0.0; for k in -R..=R { s += w[k]; } s / (2R + 1)`, as a body and as Rust, and
/// `kernel(pattern)`: that stencil for any pattern, its PTX printed now.
macro_rules! box_stencil {
    ($t:ty, $make:path) => {
        fn body<const R: u32>() -> Result<Body, BodyError> {
            let mut nodes = vec![Node::Const($make(0.0))];
            for k in -(R as i32)..=(R as i32) {
                nodes.push(Node::Tap(0, Offset::x(k)));
                let (acc, tap) = (nodes.len() as u32 - 2, nodes.len() as u32 - 1);
                nodes.push(Node::Binary(BinaryOp::Add, acc, tap));
            }
            let sum = nodes.len() as u32 - 1;
            nodes.push(Node::Const($make((2 * R + 1) as $t)));
            nodes.push(Node::Binary(BinaryOp::Div, sum, nodes.len() as u32 - 1));
            let result = nodes.len() as u32 - 1;
            Body::new(<$t as Element>::TYPE, 1, vec![], R, nodes, vec![result])
        }

        fn reference<const R: u32>(w: &[Window<'_, $t>], _: (), out: &mut [$t]) {
            // One output field.
            out[0] = {
            let mut s = 0.0;
            for k in -(R as i32)..=(R as i32) {
                s += w[0][k];
            }
            s / (2 * R + 1) as $t
            };
        }

        /// The strings are leaked: the runtime caches modules by the PTX's address, which must
        /// then stay valid (fine in a test).
        pub fn kernel(pattern: Pattern, strategy: Strategy, layout: Layout) -> Result<Stencil<$t, ()>, rc::core::Error> {
            let (body, reference): (fn() -> Result<Body, BodyError>, Reference<$t, ()>) = by_radius!(
                pattern.radius().along_x(),
                1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40
            );
            let name = format!(
                "box_{}_{}_r{}_w{}_p{}_{}_{}",
                strategy,
                layout.to_string().replace(['(', ')'], ""),
                pattern.radius(),
                pattern.warp(),
                pattern.outputs_per_thread(),
                pattern.boundary(),
                stringify!($t)
            );
            let entry: &'static str = Box::leak(format!("rc_{name}").into_boxed_str());
            let program = WarpProgram::compile_for(pattern, strategy, layout, &body()?)?;
            let ptx: &'static str = Box::leak(ptx::print(&program, entry).into_boxed_str());
            Ok(Stencil::from_parts(Box::leak(name.into_boxed_str()), pattern, strategy, layout, ptx, entry, 1, 1, body, reference))
        }
    };
}

mod box_f32 {
    use super::*;
    box_stencil!(f32, Scalar::f32);
}
mod box_f64 {
    use super::*;
    box_stencil!(f64, Scalar::f64);
}

/// `s = 0; for f in 0..F { for k in -R..=R { s += (f + 1) * w_f[k]; } }`: every tap of every
/// field weighted by its field's number, so a field read from another's input shows.
mod fields_f32 {
    use super::*;

    fn body<const R: u32, const F: u32>() -> Result<Body, BodyError> {
        let mut nodes = vec![Node::Const(Scalar::f32(0.0))];
        for field in 0..F {
            for k in -(R as i32)..=(R as i32) {
                nodes.push(Node::Tap(field, Offset::x(k)));
                nodes.push(Node::Const(Scalar::f32((field + 1) as f32)));
                let (acc, tap, weight) = (nodes.len() as u32 - 3, nodes.len() as u32 - 2, nodes.len() as u32 - 1);
                nodes.push(Node::Binary(BinaryOp::Mul, weight, tap));
                nodes.push(Node::Binary(BinaryOp::Add, acc, nodes.len() as u32 - 1));
            }
        }
        let result = nodes.len() as u32 - 1;
        Body::new(ScalarType::F32, F, vec![], R, nodes, vec![result])
    }

    fn reference<const R: u32>(w: &[Window<'_, f32>], _: (), out: &mut [f32]) {
        // One output field.
        out[0] = {
            let mut s = 0.0;
            for (field, window) in w.iter().enumerate() {
                for k in -(R as i32)..=(R as i32) {
                    s += (field + 1) as f32 * window[k];
                }
            }
            s
        };
    }

    /// The stencil over `fields` fields for `pattern` (radius 1, 3, 8, 17 or 40), its PTX
    /// printed now; the strings are leaked as `box_stencil!`'s are.
    fn kernel(
        pattern: Pattern,
        strategy: Strategy,
        layout: Layout,
        fields: u32,
    ) -> Result<Stencil<f32, ()>, rc::core::Error> {
        let body: fn() -> Result<Body, BodyError> = match (pattern.radius().along_x(), fields) {
            (1, 2) => body::<1, 2>,
            (1, 3) => body::<1, 3>,
            (3, 2) => body::<3, 2>,
            (3, 3) => body::<3, 3>,
            (8, 2) => body::<8, 2>,
            (8, 3) => body::<8, 3>,
            (17, 2) => body::<17, 2>,
            (17, 3) => body::<17, 3>,
            (40, 2) => body::<40, 2>,
            (40, 3) => body::<40, 3>,
            (r, f) => panic!("the test's stencil of several fields exists for radius 1, 3, 8, 17, 40 and 2 or 3 fields, not {r}, {f}"),
        };
        let reference: Reference<f32, ()> = match pattern.radius().along_x() {
            1 => reference::<1>,
            3 => reference::<3>,
            8 => reference::<8>,
            17 => reference::<17>,
            _ => reference::<40>,
        };
        let name = format!(
            "fields{fields}_{strategy}_{}_r{}_w{}_p{}_{}",
            layout.to_string().replace(['(', ')'], ""),
            pattern.radius(),
            pattern.warp(),
            pattern.outputs_per_thread(),
            pattern.boundary()
        );
        let entry: &'static str = Box::leak(format!("rc_{name}").into_boxed_str());
        let program = WarpProgram::compile_for(pattern, strategy, layout, &body()?)?;
        let ptx: &'static str = Box::leak(ptx::print(&program, entry).into_boxed_str());
        Ok(Stencil::from_parts(
            Box::leak(name.into_boxed_str()),
            pattern,
            strategy,
            layout,
            ptx,
            entry,
            fields,
            1,
            body,
            reference,
        ))
    }

    pub fn two(pattern: Pattern, strategy: Strategy, layout: Layout) -> Result<Stencil<f32, ()>, rc::core::Error> {
        kernel(pattern, strategy, layout, 2)
    }

    pub fn three(pattern: Pattern, strategy: Strategy, layout: Layout) -> Result<Stencil<f32, ()>, rc::core::Error> {
        kernel(pattern, strategy, layout, 3)
    }
}

/// Compiles the sweep's stencil for one pattern, strategy and distribution.
type Compile<T> = fn(Pattern, Strategy, Layout) -> Result<Stencil<T, ()>, rc::core::Error>;

fn sweep<T: Element + DeviceCopy>(
    kernel: Compile<T>,
    patterns: impl Iterator<Item = (Pattern, Strategy, Layout)>,
    lengths: impl Fn(&Pattern) -> Vec<usize>,
    stream: &Stream,
) -> (usize, Vec<String>) {
    let (mut checked, mut failures) = (0, Vec::new());
    let every = sample().unwrap_or(1);
    for (pattern, strategy, layout) in patterns.step_by(every) {
        let k = match kernel(pattern, strategy, layout) {
            Ok(k) => k,
            // A staged window whose stage exceeds shared memory is refused at compile time (the
            // macro reports it); nothing to launch.
            Err(rc::core::Error::Schedule(rc::core::ScheduleError::StageTooLarge { .. }))
                if matches!(layout, Layout::Staged(_)) =>
            {
                continue
            }
            // So is a shared-memory stage of several fields.
            Err(rc::core::Error::Schedule(rc::core::ScheduleError::BlockStageTooLarge { .. }))
                if strategy == Strategy::SharedMemory =>
            {
                continue
            }
            Err(e) => {
                failures.push(format!("{pattern}, {strategy}, {layout}: could not build the kernel: {e}"));
                continue;
            }
        };
        for n in lengths(&pattern).into_iter().filter(|&n| runs_length(n)) {
            let inputs = catalogue::awkward_inputs(&k, n, n as u64 ^ 0x5eed);
            if let Err(e) = gpu_matches_reference(&k, &catalogue::slices(&inputs), (), stream) {
                failures.push(e);
            }
            checked += 1;
        }
    }
    (checked, failures)
}

fn edge_lengths(p: &Pattern) -> Vec<usize> {
    let r = p.radius().along_x() as usize;
    vec![0, 1, 2 * r, 2 * r + 1, 3 * p.tile_outputs() as usize + 2 * r + 5]
}

/// [`edge_lengths`] and one over a million.
fn edge_and_long_lengths(p: &Pattern) -> Vec<usize> {
    let mut l = edge_lengths(p);
    l.push(1_000_003);
    l
}

/// [`sweep`] of two kernels over the same patterns at [`edge_and_long_lengths`], reported as
/// `what`; fails on any mismatch of either.
fn sweep_both<A, B, I>(what: &str, kernels: (Compile<A>, Compile<B>), patterns: impl Fn() -> I, stream: &Stream)
where
    A: Element + DeviceCopy,
    B: Element + DeviceCopy,
    I: Iterator<Item = (Pattern, Strategy, Layout)>,
{
    let (first, first_failures) = sweep(kernels.0, patterns(), edge_and_long_lengths, stream);
    let (second, second_failures) = sweep(kernels.1, patterns(), edge_and_long_lengths, stream);
    eprintln!("{what}: {} launches checked, {} failed", first + second, first_failures.len() + second_failures.len());
    let failures: Vec<String> = first_failures.into_iter().chain(second_failures).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn every_radius_1_to_40_with_every_coarsening_1_to_8_and_every_strategy_matches_on_the_gpu() {
    let Some((_context, stream)) =
        gpu("every_radius_1_to_40_with_every_coarsening_1_to_8_and_every_strategy_matches_on_the_gpu")
    else {
        return;
    };
    let patterns = (1..=40u32).flat_map(|r| {
        (1..=8u32).flat_map(move |p| {
            Strategy::ALL.map(|s| (Pattern::new(r, 32, p, Boundary::ALL[((r + p) % 4) as usize]).expect("valid"), s))
        })
    });
    let (checked, failures) =
        sweep(box_f32::kernel, patterns.map(|(p, s)| (p, s, Layout::RoundRobin)), edge_lengths, &stream);
    eprintln!("radius x coarsening: {checked} launches checked, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let patterns = (1..=40u32).flat_map(|r| {
        [1u32, 8].map(|p| (Pattern::new(r, 16, p, Boundary::Clamp).expect("valid"), Strategy::ALL[(r % 3) as usize]))
    });
    let (checked, failures) =
        sweep(box_f64::kernel, patterns.map(|(p, s)| (p, s, Layout::RoundRobin)), edge_lengths, &stream);
    eprintln!("f64 radius x coarsening: {checked} launches checked, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn every_warp_width_boundary_and_element_type_matches_on_the_gpu() {
    let Some((_context, stream)) = gpu("every_warp_width_boundary_and_element_type_matches_on_the_gpu") else { return };
    let patterns = || {
        [2u32, 4, 8, 16, 32].into_iter().flat_map(|w| {
            Boundary::ALL.into_iter().flat_map(move |b| {
                [1u32, 3, 8].into_iter().flat_map(move |p| {
                    [1u32, 7, 16, 40]
                        .map(|r| (Pattern::new(r, w, p, b).expect("valid"), Strategy::ALL[((w + r + p) % 3) as usize]))
                })
            })
        })
    };
    let with_layout = || patterns().map(|(p, s)| (p, s, Layout::RoundRobin));
    sweep_both("warp x boundary x type", (box_f32::kernel, box_f64::kernel), with_layout, &stream);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn granule_window_and_staged_distributions_match_on_the_gpu() {
    let Some((_context, stream)) = gpu("granule_window_and_staged_distributions_match_on_the_gpu") else { return };
    let patterns = || {
        [2u32, 4, 8, 16].into_iter().enumerate().flat_map(|(i, v)| {
            [1u32, 3, 8, 16, 32, 40].into_iter().enumerate().flat_map(move |(j, r)| {
                Boundary::ALL.into_iter().enumerate().flat_map(move |(k, b)| {
                    [
                        (1u32, Layout::Granule(v)),
                        (2, Layout::Granule(v)),
                        (1, Layout::Window(v)),
                        (2, Layout::Window(v)),
                        (1, Layout::Staged(v)),
                        (2, Layout::Staged(v)),
                    ]
                    .map(move |(rows, layout)| {
                        let warp = [32u32, 16, 8, 4][(i + j + k + rows as usize) % 4];
                        (Pattern::new(r, warp, v * rows, b).expect("valid"), Strategy::RegisterCache, layout)
                    })
                })
            })
        })
    };
    sweep_both("granules, windows and staged windows", (box_f32::kernel, box_f64::kernel), patterns, &stream);
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn several_fields_on_every_distribution_and_strategy_match_on_the_gpu() {
    let Some((_context, stream)) = gpu("several_fields_on_every_distribution_and_strategy_match_on_the_gpu") else {
        return;
    };
    let layouts = [
        (Strategy::RegisterCache, Layout::RoundRobin, 4u32),
        (Strategy::RegisterCache, Layout::Granule(4), 8),
        (Strategy::RegisterCache, Layout::Window(8), 8),
        (Strategy::RegisterCache, Layout::Staged(8), 8),
        (Strategy::RegisterCache, Layout::Staged(16), 16),
        (Strategy::SharedMemory, Layout::RoundRobin, 2),
        (Strategy::Naive, Layout::RoundRobin, 1),
    ];
    let patterns = || {
        [1u32, 3, 8, 17, 40].into_iter().enumerate().flat_map(move |(i, r)| {
            layouts.into_iter().flat_map(move |(strategy, layout, p)| {
                Boundary::ALL.map(|b| (Pattern::new(r, [32u32, 16][i % 2], p, b).expect("valid"), strategy, layout))
            })
        })
    };
    sweep_both("2 and 3 fields", (fields_f32::two, fields_f32::three), patterns, &stream);
}

#[test]
fn sums_of_signed_zeros_keep_their_sign_on_the_gpu() {
    // Sums that start from 0.0 skip that addition on the fast path of their division and add it
    // on the slow one (rc_core::zero_start): a window of -0.0 is where the addition matters.
    let Some((_context, stream)) = gpu("sums_of_signed_zeros_keep_their_sign_on_the_gpu") else { return };
    let layouts = [
        (Strategy::RegisterCache, Layout::RoundRobin, 4u32),
        (Strategy::SharedMemory, Layout::RoundRobin, 2),
        (Strategy::Naive, Layout::RoundRobin, 1),
        (Strategy::RegisterCache, Layout::Granule(4), 4),
        (Strategy::RegisterCache, Layout::Window(4), 8),
        (Strategy::RegisterCache, Layout::Staged(8), 8),
        (Strategy::RegisterCache, Layout::Staged(16), 16),
    ];
    let patterns = [1u32, 3, 8, 32].into_iter().flat_map(|r| {
        layouts.into_iter().flat_map(move |(strategy, layout, p)| {
            Boundary::ALL.map(|b| (Pattern::new(r, 32, p, b).expect("valid"), strategy, layout))
        })
    });
    let (mut checked, mut failures) = (0, Vec::new());
    for (pattern, strategy, layout) in patterns.step_by(sample().unwrap_or(1)) {
        let k = match box_f32::kernel(pattern, strategy, layout) {
            Ok(k) => k,
            Err(e) => {
                failures.push(format!("{pattern}, {strategy}, {layout}: could not build the kernel: {e}"));
                continue;
            }
        };
        for kind in 0..3 {
            for n in [2 * pattern.radius().along_x() as usize + 1, 4099] {
                if let Err(e) =
                    gpu_matches_reference(&k, &[&signed_zeros(n, kind, n as u64 + u64::from(kind))], (), &stream)
                {
                    failures.push(e);
                }
                checked += 1;
            }
        }
    }
    eprintln!("signed zeros: {checked} launches checked, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn an_input_longer_than_2_pow_31_is_indexed_with_64_bits() {
    let Some((_context, stream)) = gpu("an_input_longer_than_2_pow_31_is_indexed_with_64_bits") else { return };
    if sample().is_some() {
        eprintln!("skipping: RC_GPU_SAMPLE is set (a sampled run, e.g. under compute-sanitizer)");
        return;
    }
    let n = (1usize << 31) + 4099;
    let bytes_needed = 2 * n * 4 + (1 << 30);
    let info = rc::runtime::gpu().expect("present");
    if (info.total_memory_bytes as usize) < bytes_needed {
        eprintln!("skipping: the GPU has {} bytes, this test needs {bytes_needed}", info.total_memory_bytes);
        return;
    }
    let input: Vec<f32> = awkward(n, 31);
    for result in [
        gpu_matches_reference(&catalogue::box7::KERNEL, &[&input], (), &stream),
        gpu_matches_reference(&catalogue::box17_granule::KERNEL, &[&input], (), &stream),
    ] {
        eprintln!("n = {n}: {}", if result.is_ok() { "all outputs match" } else { "MISMATCH" });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}

/// The generated `run` and `launch` take an array parameter by value, as `run_cpu` does, and the
/// kernel reads its elements in order.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn array_parameters_pass_through_the_generated_gpu_functions() {
    let Some((_context, stream)) = gpu("array_parameters_pass_through_the_generated_gpu_functions") else { return };
    let (h, gain) = ([0.5, -0.25, 1.0, -0.75, 0.125], 1.5);
    let input: Vec<f32> = awkward(5003, 41);
    let mut want = vec![poison::<f32>(); input.len()];
    catalogue::fir5::run_cpu(&input, &mut want, h, gain).expect("run_cpu");
    let ran = catalogue::fir5::run(&input, h, gain).expect("run");
    let d_in = DeviceBuffer::from_slice(&input).expect("upload");
    let launched = launch_guarded(input.len(), poison(), &stream, |out| {
        catalogue::fir5::launch(&stream, &d_in, out, h, gain).map_err(|e| e.to_string())
    })
    .expect("launch");
    for (how, got) in [("run", ran), ("launch", launched)] {
        if let Some(i) = catalogue::compare_outputs(&catalogue::fir5::KERNEL, &got, &want) {
            panic!("fir5::{how}: output {i}: GPU gave {}, CPU reference {}", got[i], want[i]);
        }
    }
}

/// Every f32 bit pattern, in chunks of 2^28 consecutive ones (1 GiB), through `check`; its
/// failures, each prefixed with the chunk's first pattern.
fn every_f32(mut check: impl FnMut(&[f32]) -> Vec<String>) -> Vec<String> {
    const CHUNK: u64 = 1 << 28;
    let mut failures = Vec::new();
    for start in (0..1u64 << 32).step_by(CHUNK as usize) {
        let input: Vec<f32> = (start..start + CHUNK).map(|b| f32::from_bits(b as u32)).collect();
        failures.extend(check(&input).into_iter().map(|e| format!("bits from {start:#x}: {e}")));
    }
    failures
}

/// `$name`: one exact rounding of the centre of a window of `$t`, chosen by `op` (each a select
/// of all of them).
macro_rules! one_rounding {
    ($name:ident, $t:ty) => {
        #[rc::stencil(radius = 1, boundary = clamp)]
        fn $name(w: Window<$t>, op: u32) -> $t {
            let x = w[0];
            if op == 0 {
                x.floor()
            } else if op == 1 {
                x.ceil()
            } else if op == 2 {
                x.trunc()
            } else if op == 3 {
                x.round()
            } else if op == 4 {
                x.round_ties_even()
            } else if op == 5 {
                x.fract()
            } else {
                x.signum()
            }
        }
    };
}
one_rounding!(one_rounding_f32, f32);
one_rounding!(one_rounding_f64, f64);

/// Every f32 (all 2^32 bit patterns, in chunks) through `round` on the GPU, against Rust's own
/// method: it is printed as a sequence of instructions (no PTX rounding mode takes halves away
/// from zero), so a sample could miss the one input it gets wrong. The other roundings (one
/// conversion each, or `x - trunc(x)`) over every 13th pattern.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn every_f32_rounds_on_the_gpu_as_rust_does() {
    let Some((_context, stream)) = gpu("every_f32_rounds_on_the_gpu_as_rust_does") else { return };
    let failures = every_f32(|every| {
        let sampled: Vec<f32> = every.iter().copied().step_by(13).collect();
        (0..7)
            .filter_map(|op| {
                let input = if op == 3 { every } else { &sampled };
                gpu_matches_reference(&one_rounding_f32::KERNEL, &[input], (op,), &stream)
                    .err()
                    .map(|e| format!("op {op}: {e}"))
            })
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// f64 roundings at every binade's edges (±1 ulp around powers of two, 2^52 and 2^53 where the
/// fraction vanishes), at ties and near them, subnormals, zeros, infinities and NaN.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn f64_roundings_at_edges_equal_rust_on_the_gpu() {
    let Some((_context, stream)) = gpu("f64_roundings_at_edges_equal_rust_on_the_gpu") else { return };
    let mut input = vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE, 5e-324, -5e-324];
    let subnormals = (0..52).map(|k| f64::from_bits(1 << k));
    for p in (-1022..=1023).map(|e| 2f64.powi(e)).chain(subnormals) {
        for x in [p, p.next_up(), p.next_down(), 1.5 * p, (2.0 * p).next_down()] {
            input.extend([x, -x]);
        }
    }
    for k in -2000..2000 {
        let tie = k as f64 + 0.5;
        input.extend([tie, tie.next_up(), tie.next_down()]);
    }
    for op in 0..7 {
        gpu_matches_reference(&one_rounding_f64::KERNEL, &[&input], (op,), &stream).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[rc::stencil(radius = 1, boundary = clamp)]
fn exp_of(w: Window<f32>) -> f32 {
    w[0].exp()
}

/// Every f32 through `exp` on the GPU against the CPU reference (CORE-MATH's correctly rounded
/// `expf`): the kernel's port of the algorithm must agree on every input, the rare ones that
/// take its second polynomial and its subnormal and overflow paths included.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn every_f32_exp_on_the_gpu_is_correctly_rounded() {
    let Some((_context, stream)) = gpu("every_f32_exp_on_the_gpu_is_correctly_rounded") else { return };
    let failures =
        every_f32(|input| gpu_matches_reference(&exp_of::KERNEL, &[input], (), &stream).err().into_iter().collect());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
