//! Time steps on the GPU: `launch_steps` on poisoned ping-pong buffers (views between poisoned
//! guards) and `run_steps` equal `run_cpu_steps` bit for bit, for every boundary, element type,
//! radii 1 to 4, coefficient fields, step counts that are and are not multiples of the fused
//! degree, and lengths from shorter than the halo to a million; in 2D the same over shapes from
//! one point to 600 x 1030 (several tiles and strips), in 3D over shapes from one point and one
//! plane to 70 x 33 x 260 (several tiles and columns), coefficient fields under `valid` too.
//!
//! Every test needs a GPU and is `#[ignore]`d, as in `tests/gpu.rs`.

mod support;
use support::{gpu, runs_length, GUARD};

use rc::prelude::*;
use rc::runtime::cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use rc::runtime::cust::stream::Stream;
use rc::runtime::Holds;
use rc::testdata::{awkward, first_difference, poison};
use rc::{Element, Error};

#[stencil(radius = 1, boundary = clamp)]
fn heat_clamp(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 1, boundary = zero)]
fn heat_zero(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 1, boundary = wrap, fuse = 8)]
fn heat_wrap(w: Window<f64>, alpha: f64) -> f64 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 1, boundary = valid, fuse = 13)]
fn heat_valid(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

#[stencil(radius = 4, boundary = clamp)]
fn nine_tap(w: Window<f32>) -> f32 {
    0.02 * w[-4]
        + 0.05 * w[-3]
        + 0.1 * w[-2]
        + 0.15 * w[-1]
        + 0.36 * w[0]
        + 0.15 * w[1]
        + 0.1 * w[2]
        + 0.05 * w[3]
        + 0.02 * w[4]
}

#[stencil(radius = 3, boundary = zero, fuse = 5)]
fn average_i32(w: Window<i32>) -> i32 {
    (w[-3] + w[-1] + w[0] + w[2] + w[3]) / 5
}

#[stencil(radius = 2, boundary = wrap, warp = 16)]
fn automaton(w: Window<u32>) -> u32 {
    (w[-2] ^ w[1]) | (w[0] & w[2]) ^ w[-1]
}

/// 96 threads are no power of two: warp tiles, each warp recomputing its own halo.
#[stencil(radius = 2, boundary = clamp, max_threads_per_block = 96)]
fn warp_tile_clamp(w: Window<f32>) -> f32 {
    0.1 * w[-2] + 0.2 * w[-1] + 0.4 * w[0] + 0.2 * w[1] + 0.1 * w[2]
}

/// A block tile of 1024 lanes (32 warps swapping edges).
#[stencil(radius = 1, boundary = zero, fuse = 9, max_threads_per_block = 1024)]
fn block1024_zero(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-1] - 2.0 * w[0] + w[1])
}

/// A block tile of 64 lanes under `valid`, f64, radius 3 (its lead is no whole vector).
#[stencil(radius = 3, boundary = valid, fuse = 11, max_threads_per_block = 64)]
fn block64_valid(w: Window<f64>) -> f64 {
    0.25 * w[-3] + 0.5 * w[0] - 0.125 * w[2] + 0.375 * w[3]
}

#[stencil(radius = 1, boundary = valid, fuse = 6)]
fn varying(u: Window<f32>, k: Window<f32>) -> f32 {
    u[0] + k[0] * (u[-1] - 2.0 * u[0] + u[1])
}

#[stencil(radius = 2, boundary = clamp, fuse = 7)]
fn varying_clamp(u: Window<f64>, k: Window<f64>) -> f64 {
    u[0] + k[0] * (u[-1] - 2.0 * u[0] + u[2]) + 0.5 * k[-2]
}

#[stencil(radius = 1, boundary = zero)]
fn heat2d_zero(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 3)]
fn heat2d_clamp(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[stencil(radius = 1, boundary = wrap, fuse = 4)]
fn box2d_wrap(w: Window2<f64>) -> f64 {
    (w[(-1, -1)] + w[(-1, 0)] + w[(-1, 1)] + w[(0, -1)] + w[(0, 0)] + w[(0, 1)] + w[(1, -1)] + w[(1, 0)] + w[(1, 1)])
        / 9.0
}

#[stencil(radius = (2, 1), boundary = valid, fuse = 2)]
fn tall2d_valid(w: Window2<f32>) -> f32 {
    0.1 * w[(-2, 0)]
        + 0.2 * w[(-1, 0)]
        + 0.4 * w[(0, 0)]
        + 0.2 * w[(1, 0)]
        + 0.1 * w[(2, 0)]
        + 0.5 * (w[(0, -1)] - w[(0, 1)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 5)]
fn average2d_i32(w: Window2<i32>) -> i32 {
    (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)]) / 4 + (w[(0, 0)] >> 1)
}

#[stencil(radius = 1, boundary = zero, fuse = 3)]
fn varying2d(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(0, 0)] + k[(0, 0)] * (u[(-1, 0)] + u[(1, 0)] - 2.0 * u[(0, 0)]) + k[(0, 1)] * (u[(0, -1)] - u[(0, 0)])
}

#[stencil(radius = 1, boundary = valid, fuse = 3)]
fn varying2d_valid(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(0, 0)] + k[(0, 0)] * (u[(-1, 0)] + u[(1, 0)] - 2.0 * u[(0, 0)]) + k[(1, -1)] * (u[(0, -1)] - u[(0, 0)])
}

#[stencil(radius = 1, boundary = valid, fuse = 1)]
fn varying2d_valid_one_step(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(0, 0)] + k[(0, 0)] * (u[(-1, 0)] + u[(1, 0)] - 2.0 * u[(0, 0)]) + k[(1, -1)] * (u[(0, -1)] - u[(0, 0)])
}

#[stencil(radius = 1, boundary = zero, fuse = 2)]
fn heat3d_zero(w: Window3<f32>, alpha: f32) -> f32 {
    w[(0, 0, 0)]
        + alpha
            * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
                - 6.0 * w[(0, 0, 0)])
}

#[stencil(radius = 1, boundary = clamp)]
fn heat3d_clamp_one_step(w: Window3<f32>, alpha: f32) -> f32 {
    w[(0, 0, 0)]
        + alpha
            * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
                - 6.0 * w[(0, 0, 0)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 2, planes_per_warp = 8)]
fn heat3d_clamp(w: Window3<f32>, alpha: f32) -> f32 {
    w[(0, 0, 0)]
        + alpha
            * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
                - 6.0 * w[(0, 0, 0)])
}

#[stencil(radius = 1, boundary = wrap, fuse = 2, planes_per_warp = 5)]
fn box3d_wrap(w: Window3<f64>) -> f64 {
    let mut s = 0.0;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                s += w[(dz, dy, dx)];
            }
        }
    }
    s / 27.0
}

#[stencil(radius = 1, boundary = valid, fuse = 2)]
fn heat3d_valid(w: Window3<f32>) -> f32 {
    0.4 * w[(0, 0, 0)]
        + 0.1 * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 2, planes_per_warp = 3)]
fn average3d_i32(w: Window3<i32>) -> i32 {
    (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]) / 6
        + (w[(0, 0, 0)] >> 1)
}

#[stencil(radius = 1, boundary = zero, fuse = 2, planes_per_warp = 4)]
fn varying3d(u: Window3<f32>, k: Window3<f32>) -> f32 {
    u[(0, 0, 0)]
        + k[(0, 0, 0)] * (u[(-1, 0, 0)] + u[(1, 0, 0)] - 2.0 * u[(0, 0, 0)])
        + k[(1, 0, 1)] * (u[(0, -1, 0)] - u[(0, 0, 1)])
}

#[stencil(radius = 1, boundary = valid, fuse = 2, planes_per_warp = 4)]
fn varying3d_valid(u: Window3<f32>, k: Window3<f32>) -> f32 {
    u[(0, 0, 0)]
        + k[(0, 0, 0)] * (u[(-1, 0, 0)] + u[(1, 0, 0)] - 2.0 * u[(0, 0, 0)])
        + k[(1, -1, 1)] * (u[(0, -1, 0)] - u[(0, 0, 1)])
}

const LENGTHS: [usize; 8] = [1, 3, 17, 200, 256, 1000, 4099, (1 << 20) + 3];

fn step_counts(t: u32) -> Vec<usize> {
    let t = t as usize;
    vec![1, 2, t - 1, t, t + 1, 3 * t + 2, 100]
}

/// A device buffer of `n` elements between two poisoned guards, holding `values` or poison.
struct Guarded<T: DeviceCopy> {
    buffer: DeviceBuffer<T>,
    n: usize,
}

impl<T: Element + DeviceCopy> Guarded<T> {
    fn new(n: usize, values: Option<&[T]>) -> Guarded<T> {
        let mut host = vec![poison::<T>(); n + 2 * GUARD];
        if let Some(values) = values {
            host[GUARD..GUARD + n].copy_from_slice(values);
        }
        Guarded { buffer: DeviceBuffer::from_slice(&host).expect("allocates"), n }
    }

    fn view(&self) -> DeviceSlice<T> {
        self.buffer.index(GUARD..GUARD + self.n)
    }

    /// The first `len` elements of the view; an error if a guard changed.
    fn read(&self, len: usize) -> Result<Vec<T>, String> {
        let mut host = vec![poison::<T>(); self.n + 2 * GUARD];
        self.buffer.copy_to(&mut host[..]).map_err(|e| e.to_string())?;
        let untouched = |g: &[T]| g.iter().all(|v| v.to_scalar().bits == poison::<T>().to_scalar().bits);
        if !untouched(&host[..GUARD]) || !untouched(&host[GUARD + self.n..]) {
            return Err("a launch wrote outside its buffers".into());
        }
        Ok(host[GUARD..GUARD + len].to_vec())
    }
}

type LaunchSteps<T> = dyn Fn(
    &Stream,
    &mut DeviceSlice<T>,
    &mut DeviceSlice<T>,
    &[&DeviceSlice<T>],
    usize,
) -> Result<Holds, rc::runtime::Error>;

/// A stencil under test: its name, its input fields and the steps one fused launch runs.
struct Case<'a> {
    what: &'a str,
    fields: usize,
    t: u32,
}

/// `launch_steps` and `run_steps` against `run_cpu_steps` for every length and step count.
fn check<T: Element + DeviceCopy>(
    Case { what, fields, t }: Case,
    stream: &Stream,
    out_len: impl Fn(usize, usize) -> Option<usize>,
    launch_steps: &LaunchSteps<T>,
    run_steps: impl Fn(&[&[T]], usize) -> Result<Vec<T>, rc::runtime::Error>,
    run_cpu_steps: impl Fn(&[&[T]], &mut [T], usize) -> Result<(), Error>,
) -> Result<(), String> {
    for n in LENGTHS.into_iter().filter(|&n| runs_length(n)) {
        for steps in step_counts(t) {
            let Some(out) = out_len(n, steps) else { continue };
            let inputs: Vec<Vec<T>> = (0..fields).map(|f| awkward::<T>(n, (n * 7 + steps * 3 + f) as u64)).collect();
            let slices: Vec<&[T]> = inputs.iter().map(|v| v.as_slice()).collect();
            let mut want = vec![poison::<T>(); out];
            run_cpu_steps(&slices, &mut want, steps).map_err(|e| e.to_string())?;
            let context = |m: String| format!("{what}: n = {n}, {steps} steps: {m}");
            let (a, b) = (Guarded::new(n, Some(&inputs[0])), Guarded::<T>::new(n, None));
            let coefficients: Vec<Guarded<T>> = inputs[1..].iter().map(|c| Guarded::new(n, Some(c))).collect();
            let views: Vec<DeviceSlice<T>> = coefficients.iter().map(|c| c.view()).collect();
            let views: Vec<&DeviceSlice<T>> = views.iter().collect();
            let holds = launch_steps(stream, &mut a.view(), &mut b.view(), &views, steps)
                .map_err(|e| context(e.to_string()))?;
            stream.synchronize().map_err(|e| context(format!("kernel failed: {e:?}")))?;
            let got = match holds {
                Holds::A => a.read(out),
                Holds::B => b.read(out),
            }
            .map_err(context)?;
            if let Some(i) = first_difference(&got, &want) {
                return Err(context(format!("launch_steps: output {i} got {:?} want {:?}", got.get(i), want.get(i))));
            }
            let got = run_steps(&slices, steps).map_err(|e| context(e.to_string()))?;
            if let Some(i) = first_difference(&got, &want) {
                return Err(context(format!("run_steps: output {i} got {:?} want {:?}", got.get(i), want.get(i))));
            }
        }
    }
    Ok(())
}

/// `check` of the `#[stencil]` module `$s`: its `launch_steps`, `run_steps` and `run_cpu_steps`
/// with its input fields (1, or 2: the state and one coefficient field) and the parameters given.
macro_rules! steps_case {
    ($record:ident, $stream:expr, $ty:ty, $what:expr, $s:ident, fields 1, t $t:expr, $out:expr, ($($p:expr),*)) => {
        $record(check::<$ty>(
            Case { what: $what, fields: 1, t: $t },
            $stream,
            $out,
            &|s, a, b, _, steps| $s::launch_steps(s, a, b, steps $(, $p)*),
            |i, steps| $s::run_steps(i[0], steps $(, $p)*),
            |i, o, steps| $s::run_cpu_steps(i[0], o, steps $(, $p)*),
        ))
    };
    ($record:ident, $stream:expr, $ty:ty, $what:expr, $s:ident, fields 2, t $t:expr, $out:expr, ($($p:expr),*)) => {
        $record(check::<$ty>(
            Case { what: $what, fields: 2, t: $t },
            $stream,
            $out,
            &|s, a, b, c, steps| $s::launch_steps(s, a, b, c[0], steps $(, $p)*),
            |i, steps| $s::run_steps(i[0], i[1], steps $(, $p)*),
            |i, o, steps| $s::run_cpu_steps(i[0], i[1], o, steps $(, $p)*),
        ))
    };
}

/// [`steps_case`] over grids of `$d` dimensions: `check_grid` over `$shapes`, `$valid` the radius
/// a `valid` output shrinks by (or `None`).
macro_rules! grid_steps_case {
    ($record:ident, $stream:expr, $ty:ty, $d:literal, $what:expr, $s:ident, fields 1, t $t:expr, $shapes:expr, $valid:expr, ($($p:expr),*)) => {
        $record(check_grid::<$ty, $d>(
            Case { what: $what, fields: 1, t: $t },
            $stream,
            $shapes,
            $valid,
            &|s, a, b, _, shape, steps| $s::launch_steps(s, a, b, shape, steps $(, $p)*),
            |i, shape, steps| $s::run_steps(i[0], shape, steps $(, $p)*),
            |i, shape, o, steps| $s::run_cpu_steps(i[0], shape, o, steps $(, $p)*),
        ))
    };
    ($record:ident, $stream:expr, $ty:ty, $d:literal, $what:expr, $s:ident, fields 2, t $t:expr, $shapes:expr, $valid:expr, ($($p:expr),*)) => {
        $record(check_grid::<$ty, $d>(
            Case { what: $what, fields: 2, t: $t },
            $stream,
            $shapes,
            $valid,
            &|s, a, b, c, shape, steps| $s::launch_steps(s, a, b, c[0], shape, steps $(, $p)*),
            |i, shape, steps| $s::run_steps(i[0], i[1], shape, steps $(, $p)*),
            |i, shape, o, steps| $s::run_cpu_steps(i[0], i[1], shape, o, steps $(, $p)*),
        ))
    };
}

fn same(n: usize, _: usize) -> Option<usize> {
    Some(n)
}

fn shrunk(radius: usize) -> impl Fn(usize, usize) -> Option<usize> {
    move |n, steps| n.checked_sub(2 * radius * steps).filter(|&left| left > 0)
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn launch_steps_and_run_steps_equal_run_cpu_steps() {
    let Some((_context, stream)) = gpu("launch_steps_and_run_steps_equal_run_cpu_steps") else { return };
    let mut failures = Vec::new();
    let mut record = |result: Result<(), String>| failures.extend(result.err());
    const ALPHA: f32 = 0.25;
    steps_case!(record, &stream, f32, "heat clamp", heat_clamp, fields 1, t heat_clamp::STEPS_PER_LAUNCH, same, (ALPHA));
    steps_case!(record, &stream, f32, "heat zero", heat_zero, fields 1, t heat_zero::STEPS_PER_LAUNCH, same, (ALPHA));
    steps_case!(record, &stream, f64, "heat wrap f64", heat_wrap, fields 1, t 8, same, (0.2));
    steps_case!(record, &stream, f32, "heat valid", heat_valid, fields 1, t 13, shrunk(1), (ALPHA));
    steps_case!(record, &stream, f32, "nine tap", nine_tap, fields 1, t nine_tap::STEPS_PER_LAUNCH, same, ());
    steps_case!(record, &stream, i32, "average i32", average_i32, fields 1, t 5, same, ());
    steps_case!(record, &stream, f32, "warp tiles clamp (96 threads)", warp_tile_clamp, fields 1, t warp_tile_clamp::STEPS_PER_LAUNCH, same, ());
    steps_case!(record, &stream, f32, "block tile of 1024 lanes zero", block1024_zero, fields 1, t 9, same, (ALPHA));
    steps_case!(record, &stream, f64, "block tile of 64 lanes valid f64 r=3", block64_valid, fields 1, t 11, shrunk(3), ());
    steps_case!(record, &stream, u32, "automaton u32 warp 16", automaton, fields 1, t automaton::STEPS_PER_LAUNCH, same, ());
    steps_case!(record, &stream, f32, "varying valid", varying, fields 2, t 6, shrunk(1), ());
    steps_case!(record, &stream, f64, "varying clamp f64", varying_clamp, fields 2, t 7, same, ());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn ping_pong_buffers_of_other_lengths_are_refused_before_any_launch() {
    let Some((_context, stream)) = gpu("ping_pong_buffers_of_other_lengths_are_refused_before_any_launch") else {
        return;
    };
    let (a, b) = (Guarded::new(100, Some(&[1.0f32; 100])), Guarded::<f32>::new(99, None));
    let err = heat_clamp::launch_steps(&stream, &mut a.view(), &mut b.view(), 20, 0.25).expect_err("99 is not 100");
    assert!(err.to_string().contains("100 and 99 elements"), "{err}");
    // A view that starts mid-vector cannot take the fused kernel's vector accesses.
    let c = Guarded::<f32>::new(101, Some(&[1.0f32; 101]));
    let (mut odd, mut other) = (c.buffer.index(GUARD + 1..GUARD + 101), b.buffer.index(GUARD..GUARD + 100));
    let err = heat_clamp::launch_steps(&stream, &mut odd, &mut other, 20, 0.25).expect_err("misaligned");
    assert!(err.to_string().contains("multiple of 16 bytes"), "{err}");
}

/// 2D shapes: one point, smaller than the halo, one strip, several tiles and strips; rows of
/// whole vectors (520, 1032) give a fused launch interior strips, so both its kernels run.
const SHAPES: [[usize; 2]; 6] = [[1, 1], [3, 5], [130, 64], [300, 520], [600, 1030], [600, 1032]];

/// Shapes from one point and one plane to several tiles and columns of 3D fused tiles.
const SHAPES_3D: [[usize; 3]; 5] = [[1, 1, 1], [1, 6, 9], [5, 9, 70], [37, 12, 130], [70, 33, 260]];

type LaunchStepsGrid<T, const D: usize> = dyn Fn(
    &Stream,
    &mut DeviceSlice<T>,
    &mut DeviceSlice<T>,
    &[&DeviceSlice<T>],
    [usize; D],
    usize,
) -> Result<Holds, rc::runtime::Error>;

/// `launch_steps` and `run_steps` over grids of `shapes` against `run_cpu_steps`, for every
/// shape and step count; `radius` (outermost first) shrinks a `valid` output.
// One argument per part of a check: the case, the stream, the shapes, the radius, the three runs.
#[allow(clippy::too_many_arguments)]
fn check_grid<T: Element + DeviceCopy, const D: usize>(
    Case { what, fields, t }: Case,
    stream: &Stream,
    shapes: &[[usize; D]],
    valid: Option<[usize; D]>,
    launch_steps: &LaunchStepsGrid<T, D>,
    run_steps: impl Fn(&[&[T]], [usize; D], usize) -> Result<Vec<T>, rc::runtime::Error>,
    run_cpu_steps: impl Fn(&[&[T]], [usize; D], &mut [T], usize) -> Result<(), Error>,
) -> Result<(), String> {
    for &shape in shapes {
        let n = shape.iter().product();
        for steps in step_counts(t) {
            let out = match valid {
                Some(radius) => {
                    let left: Option<Vec<usize>> = shape
                        .iter()
                        .zip(radius)
                        .map(|(&n, r)| n.checked_sub(2 * r * steps).filter(|&m| m > 0))
                        .collect();
                    match left {
                        Some(left) => left.iter().product(),
                        None => continue,
                    }
                }
                None => n,
            };
            let inputs: Vec<Vec<T>> = (0..fields).map(|f| awkward::<T>(n, (n * 7 + steps * 3 + f) as u64)).collect();
            let slices: Vec<&[T]> = inputs.iter().map(|v| v.as_slice()).collect();
            let mut want = vec![poison::<T>(); out];
            run_cpu_steps(&slices, shape, &mut want, steps).map_err(|e| e.to_string())?;
            let context = |m: String| format!("{what}: shape {shape:?}, {steps} steps: {m}");
            let (a, b) = (Guarded::new(n, Some(&inputs[0])), Guarded::<T>::new(n, None));
            let coefficients: Vec<Guarded<T>> = inputs[1..].iter().map(|c| Guarded::new(n, Some(c))).collect();
            let views: Vec<DeviceSlice<T>> = coefficients.iter().map(|c| c.view()).collect();
            let views: Vec<&DeviceSlice<T>> = views.iter().collect();
            let holds = launch_steps(stream, &mut a.view(), &mut b.view(), &views, shape, steps)
                .map_err(|e| context(e.to_string()))?;
            stream.synchronize().map_err(|e| context(format!("kernel failed: {e:?}")))?;
            let got = match holds {
                Holds::A => a.read(out),
                Holds::B => b.read(out),
            }
            .map_err(context)?;
            if let Some(i) = first_difference(&got, &want) {
                return Err(context(format!("launch_steps: output {i} got {:?} want {:?}", got.get(i), want.get(i))));
            }
            let got = run_steps(&slices, shape, steps).map_err(|e| context(e.to_string()))?;
            if let Some(i) = first_difference(&got, &want) {
                return Err(context(format!("run_steps: output {i} got {:?} want {:?}", got.get(i), want.get(i))));
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn launch_steps_and_run_steps_equal_run_cpu_steps_in_2d() {
    let Some((_context, stream)) = gpu("launch_steps_and_run_steps_equal_run_cpu_steps_in_2d") else { return };
    let mut failures = Vec::new();
    let mut record = |result: Result<(), String>| failures.extend(result.err());
    const ALPHA: f32 = 0.2;
    grid_steps_case!(record, &stream, f32, 2, "heat2d zero", heat2d_zero, fields 1, t heat2d_zero::STEPS_PER_LAUNCH, &SHAPES, None, (ALPHA));
    grid_steps_case!(record, &stream, f32, 2, "heat2d clamp", heat2d_clamp, fields 1, t 3, &SHAPES, None, (ALPHA));
    grid_steps_case!(record, &stream, f64, 2, "box2d wrap f64", box2d_wrap, fields 1, t 4, &SHAPES, None, ());
    grid_steps_case!(record, &stream, f32, 2, "tall2d valid", tall2d_valid, fields 1, t 2, &SHAPES, Some([2, 1]), ());
    grid_steps_case!(record, &stream, i32, 2, "average2d i32", average2d_i32, fields 1, t 5, &SHAPES, None, ());
    grid_steps_case!(record, &stream, f32, 2, "varying2d zero", varying2d, fields 2, t 3, &SHAPES, None, ());
    // Under `valid` each launch after the first reads the coefficients where the state lies.
    grid_steps_case!(record, &stream, f32, 2, "varying2d valid", varying2d_valid, fields 2, t 3, &SHAPES, Some([1, 1]), ());
    grid_steps_case!(record, &stream, f32, 2, "varying2d valid, one step per launch", varying2d_valid_one_step, fields 2, t 3, &SHAPES, Some([1, 1]), ());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn launch_steps_and_run_steps_equal_run_cpu_steps_in_3d() {
    let Some((_context, stream)) = gpu("launch_steps_and_run_steps_equal_run_cpu_steps_in_3d") else { return };
    let mut failures = Vec::new();
    let mut record = |result: Result<(), String>| failures.extend(result.err());
    const ALPHA: f32 = 0.1;
    grid_steps_case!(record, &stream, f32, 3, "heat3d zero", heat3d_zero, fields 1, t heat3d_zero::STEPS_PER_LAUNCH, &SHAPES_3D, None, (ALPHA));
    grid_steps_case!(record, &stream, f32, 3, "heat3d clamp, one step per launch", heat3d_clamp_one_step, fields 1, t 2, &SHAPES_3D, None, (ALPHA));
    grid_steps_case!(record, &stream, f32, 3, "heat3d clamp", heat3d_clamp, fields 1, t 2, &SHAPES_3D, None, (ALPHA));
    grid_steps_case!(record, &stream, f64, 3, "box3d wrap f64", box3d_wrap, fields 1, t 2, &SHAPES_3D, None, ());
    grid_steps_case!(record, &stream, f32, 3, "heat3d valid", heat3d_valid, fields 1, t 2, &SHAPES_3D, Some([1, 1, 1]), ());
    grid_steps_case!(record, &stream, i32, 3, "average3d i32", average3d_i32, fields 1, t 2, &SHAPES_3D, None, ());
    grid_steps_case!(record, &stream, f32, 3, "varying3d zero", varying3d, fields 2, t 2, &SHAPES_3D, None, ());
    grid_steps_case!(record, &stream, f32, 3, "varying3d valid", varying3d_valid, fields 2, t 2, &SHAPES_3D, Some([1, 1, 1]), ());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Gray-Scott on a torus, fused 4 steps per launch: two state fields.
#[stencil(radius = 1, boundary = wrap, fuse = 4)]
fn gray_scott_gpu(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (u[(0, 0)] + 0.16 * lap_u - uvv + f * (1.0 - u[(0, 0)]), v[(0, 0)] + 0.08 * lap_v + uvv - (f + k) * v[(0, 0)])
}

/// Leapfrog waves in 1D with a speed field (a coefficient), fused 6 steps per launch.
#[stencil(radius = 1, boundary = clamp, fuse = 6)]
fn wave_gpu(u: Window<f32>, prev: Window<f32>, c2: Window<f32>) -> (f32, f32) {
    (2.0 * u[0] - prev[0] + c2[0] * (u[-1] - 2.0 * u[0] + u[1]), u[0])
}

/// Three f64 fields under `valid` in 2D with a coefficient: the coefficient's packed boxes.
#[stencil(radius = 1, boundary = valid, fuse = 2)]
fn cycle_valid(a: Window2<f64>, b: Window2<f64>, c: Window2<f64>, s: Window2<f64>) -> [f64; 3] {
    [
        a[(0, 0)] + s[(0, 0)] * (b[(1, 0)] - c[(0, -1)]),
        b[(0, 0)] + s[(0, 0)] * (c[(-1, 0)] - a[(0, 1)]),
        c[(0, 0)] - 0.5 * a[(0, 0)],
    ]
}

/// A 3D system, one step per launch or as the model fuses it.
#[stencil(radius = 1, boundary = zero)]
fn pair3d(u: Window3<f32>, v: Window3<f32>) -> (f32, f32) {
    (
        u[(0, 0, 0)] + 0.1 * (v[(1, 0, 0)] + v[(-1, 0, 0)] - 2.0 * u[(0, 0, 0)]),
        v[(0, 0, 0)] - 0.1 * (u[(0, 1, 0)] - u[(0, 0, -1)]),
    )
}

/// Every state field of a system read back after `launch_steps` on guarded, poisoned buffers.
fn read_states<T: Element + DeviceCopy>(
    holds: Holds,
    a: &[Guarded<T>],
    b: &[Guarded<T>],
    out: usize,
) -> Result<Vec<Vec<T>>, String> {
    let result = match holds {
        Holds::A => a,
        Holds::B => b,
    };
    result.iter().map(|field| field.read(out)).collect()
}

fn compare_fields<T: Element>(what: &str, got: &[Vec<T>], want: &[Vec<T>]) -> Result<(), String> {
    for (field, (got, want)) in got.iter().zip(want).enumerate() {
        if let Some(i) = first_difference(got, want) {
            return Err(format!("{what}: field {field}, element {i}: got {:?} want {:?}", got.get(i), want.get(i)));
        }
    }
    match got.len() == want.len() {
        true => Ok(()),
        false => Err(format!("{what}: {} fields, want {}", got.len(), want.len())),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn systems_step_every_field_together_on_the_gpu() {
    let Some((_context, stream)) = gpu("systems_step_every_field_together_on_the_gpu") else { return };
    let mut failures: Vec<String> = Vec::new();

    // Gray-Scott: run (one step), run_steps and launch_steps on every step count around T.
    let shape = [67, 131];
    let n = 67 * 131;
    let (u, v) = (awkward::<f32>(n, 1), awkward::<f32>(n, 2));
    let (u, v): (Vec<f32>, Vec<f32>) =
        (u.iter().map(|x| x.abs().fract()).collect(), v.iter().map(|x| x.abs().fract()).collect());
    match gray_scott_gpu::run(&u, &v, shape, 0.035, 0.065) {
        Ok(got) => {
            let want = gray_scott_gpu::KERNEL.reference_grid_vec(&[&u, &v], shape, (0.035, 0.065)).expect("reference");
            failures.extend(compare_fields("gray-scott run", &[got.0, got.1], &want).err());
        }
        Err(e) => failures.push(format!("gray-scott run: {e}")),
    }
    for steps in [1, 3, 4, 5, 9] {
        let (mut wu, mut wv) = (vec![poison::<f32>(); n], vec![poison::<f32>(); n]);
        gray_scott_gpu::run_cpu_steps(&u, &v, shape, &mut wu, &mut wv, steps, 0.035, 0.065).expect("reference");
        let want = vec![wu, wv];
        match gray_scott_gpu::run_steps(&u, &v, shape, steps, 0.035, 0.065) {
            Ok((gu, gv)) => {
                failures.extend(compare_fields(&format!("gray-scott run_steps {steps}"), &[gu, gv], &want).err())
            }
            Err(e) => failures.push(format!("gray-scott run_steps {steps}: {e}")),
        }
        let a = [Guarded::new(n, Some(&u)), Guarded::new(n, Some(&v))];
        let b = [Guarded::<f32>::new(n, None), Guarded::<f32>::new(n, None)];
        let launched = gray_scott_gpu::launch_steps(
            &stream,
            &mut a[0].view(),
            &mut b[0].view(),
            &mut a[1].view(),
            &mut b[1].view(),
            shape,
            steps,
            0.035,
            0.065,
        );
        let read = launched
            .map_err(|e| e.to_string())
            .and_then(|holds| stream.synchronize().map(|()| holds).map_err(|e| format!("kernel failed: {e:?}")))
            .and_then(|holds| read_states(holds, &a, &b, n));
        match read {
            Ok(got) => failures.extend(compare_fields(&format!("gray-scott launch_steps {steps}"), &got, &want).err()),
            Err(e) => failures.push(format!("gray-scott launch_steps {steps}: {e}")),
        }
    }

    // Leapfrog with a coefficient field, 1D.
    let n = 5000;
    let (u, prev, c2) = (awkward::<f32>(n, 3), awkward::<f32>(n, 4), vec![0.2f32; n]);
    for steps in [2, 6, 13] {
        let (mut wu, mut wp) = (vec![poison::<f32>(); n], vec![poison::<f32>(); n]);
        wave_gpu::run_cpu_steps(&u, &prev, &c2, &mut wu, &mut wp, steps).expect("reference");
        match wave_gpu::run_steps(&u, &prev, &c2, steps) {
            Ok((gu, gp)) => {
                failures.extend(compare_fields(&format!("wave run_steps {steps}"), &[gu, gp], &[wu, wp]).err())
            }
            Err(e) => failures.push(format!("wave run_steps {steps}: {e}")),
        }
    }

    // Three f64 fields under `valid` with a coefficient.
    let shape = [40, 70];
    let n = 40 * 70;
    let fields: Vec<Vec<f64>> =
        (0..4).map(|f| awkward::<f64>(n, 10 + f).iter().map(|x| x.abs().fract()).collect()).collect();
    for steps in [1, 2, 3, 5] {
        let out = (40 - 2 * steps) * (70 - 2 * steps);
        let mut want = vec![vec![poison::<f64>(); out]; 3];
        let [w0, w1, w2] = &mut want[..] else { unreachable!() };
        cycle_valid::run_cpu_steps(&fields[0], &fields[1], &fields[2], &fields[3], shape, w0, w1, w2, steps)
            .expect("reference");
        match cycle_valid::run_steps(&fields[0], &fields[1], &fields[2], &fields[3], shape, steps) {
            Ok(got) => failures.extend(compare_fields(&format!("valid system run_steps {steps}"), &got, &want).err()),
            Err(e) => failures.push(format!("valid system run_steps {steps}: {e}")),
        }
    }

    // 3D.
    let shape = [9, 13, 70];
    let n = 9 * 13 * 70;
    let (u, v) = (awkward::<f32>(n, 20), awkward::<f32>(n, 21));
    match pair3d::run(&u, &v, shape) {
        Ok((gu, gv)) => {
            let want = pair3d::KERNEL.reference_grid_vec(&[&u, &v], shape, ()).expect("reference");
            failures.extend(compare_fields("3D run", &[gu, gv], &want).err());
        }
        Err(e) => failures.push(format!("3D run: {e}")),
    }
    for steps in [1, 3] {
        let (mut wu, mut wv) = (vec![poison::<f32>(); n], vec![poison::<f32>(); n]);
        pair3d::run_cpu_steps(&u, &v, shape, &mut wu, &mut wv, steps).expect("reference");
        match pair3d::run_steps(&u, &v, shape, steps) {
            Ok((gu, gv)) => {
                failures.extend(compare_fields(&format!("3D run_steps {steps}"), &[gu, gv], &[wu, wv]).err())
            }
            Err(e) => failures.push(format!("3D run_steps {steps}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
