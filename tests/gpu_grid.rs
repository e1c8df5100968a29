//! 2D and 3D stencils on the GPU: every grid catalogue stencil, launched through rc-runtime over
//! grids of awkward shapes, equals `run_cpu` bit for bit; outputs are poisoned before each
//! launch and guard elements on both sides must stay untouched; a grid of more than 2^31
//! elements is indexed with 64 bits. Every test needs a GPU and is `#[ignore]`d (`--include-ignored` runs them).

mod catalogue;

mod support;
use std::fmt::Debug;
use support::{gpu, launch_guarded, sample};

use catalogue::grid::*;
use rc::runtime::cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};
use rc::runtime::cust::stream::Stream;
use rc::runtime::DeviceElement;
use rc::testdata::{awkward, poison, signed_zeros};
use rc::{Element, Extent, Params, Stencil};

const SHAPES_2D: [[usize; 2]; 10] =
    [[1, 1], [1, 40], [40, 1], [3, 5], [7, 13], [33, 130], [70, 300], [9, 1000], [257, 1024], [1000, 1003]];
const SHAPES_3D: [[usize; 3]; 7] =
    [[1, 1, 1], [1, 1, 40], [40, 1, 1], [3, 5, 7], [9, 17, 70], [5, 33, 128], [64, 64, 64]];

/// An element to what its buffer holds, and back.
type Conversions<T, D> = (fn(T) -> D, fn(D) -> T);

/// Launches `k` over grids of shape `shape` (`inputs`, one per input field) and compares with
/// `run_cpu`. The buffers hold `D`, made of each element by `to` and back by `from`: the element
/// itself, or the bits of a 16-bit float (`rc::runtime::DeviceElement`).
fn gpu_matches_reference<T: Element, D: DeviceElement<T> + PartialEq, P: Params + Debug>(
    k: &Stencil<T, P>,
    shape: Extent,
    inputs: &[&[T]],
    params: P,
    stream: &Stream,
    (to, from): Conversions<T, D>,
) -> Result<(), String> {
    let what = |m: String| format!("{} (shape {shape}, params {params:?}): {m}", k.name());
    let d_in = inputs
        .iter()
        .map(|input| DeviceBuffer::from_slice(&input.iter().map(|&x| to(x)).collect::<Vec<D>>()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| what(e.to_string()))?;
    let d_in: Vec<&DeviceSlice<D>> = d_in.iter().map(|d| &**d).collect();
    let out_shape = match k.output_shape(shape) {
        Ok(s) => s,
        Err(_) => {
            // No output exists: the launch must refuse with a length error before launching.
            let d_out = DeviceBuffer::from_slice(&[to(poison::<T>())]).map_err(|e| what(e.to_string()))?;
            let mut empty = d_out.index(0..0);
            return match rc::runtime::launch_grid(k, stream, &d_in, &mut [&mut empty], shape, params) {
                Err(rc::runtime::Error::Length { .. }) => Ok(()),
                other => Err(what(format!("expected a length error, got {other:?}"))),
            };
        }
    };
    let n_out = out_shape.len().ok_or_else(|| what("output too large".into()))?;
    let mut want = vec![poison::<T>(); n_out];
    k.run_cpu_grid(inputs, shape, &mut [&mut want], params).map_err(|e| what(e.to_string()))?;
    let got = launch_guarded(n_out, to(poison()), stream, |out| {
        rc::runtime::launch_grid(k, stream, &d_in, &mut [out], shape, params).map_err(|e| e.to_string())
    })
    .map_err(what)?;
    let got: Vec<T> = got.into_iter().map(from).collect();
    match catalogue::compare_outputs(k, &got, &want) {
        None => Ok(()),
        Some(i) => {
            Err(what(format!("output {i} of shape {out_shape}: GPU gave {:?}, CPU reference {:?}", got[i], want[i])))
        }
    }
}

struct OnGpu<'a> {
    stream: &'a Stream,
    failures: Vec<String>,
    checked: usize,
}

impl OnGpu<'_> {
    /// `k` over every shape of its dimensions, its buffers of `D` (see [`gpu_matches_reference`]).
    fn check<T: Element, D: DeviceElement<T> + PartialEq, P: Params + Debug>(
        &mut self,
        k: &Stencil<T, P>,
        params: P,
        device: Conversions<T, D>,
    ) {
        let shapes: Vec<Extent> = match k.pattern().dims() {
            rc::core::Dims::Three => SHAPES_3D.into_iter().map(Extent::from).collect(),
            _ => SHAPES_2D.into_iter().map(Extent::from).collect(),
        };
        for (i, shape) in shapes.into_iter().enumerate() {
            let n = shape.len().expect("small");
            // A sampled run (under compute-sanitizer) keeps to small grids.
            if sample().is_some() && n > 100_000 {
                continue;
            }
            let inputs = catalogue::awkward_inputs(k, n, 11 + i as u64);
            if let Err(e) = gpu_matches_reference(k, shape, &catalogue::slices(&inputs), params, self.stream, device) {
                self.failures.push(e);
            }
            self.checked += 1;
        }
    }
}

impl catalogue::Visit for OnGpu<'_> {
    fn visit<T: Element + DeviceCopy, P: Params + Debug>(&mut self, k: &Stencil<T, P>, params: P) {
        self.check(k, params, (|x| x, |x| x));
    }
}

/// 16-bit grids, on cust buffers of their bits.
impl catalogue::VisitHalf for OnGpu<'_> {
    fn visit<T: Element, P: Params + Debug>(&mut self, k: &Stencil<T, P>, params: P)
    where
        u16: DeviceElement<T>,
    {
        self.check(k, params, (|x: T| x.to_scalar().bits as u16, |b| T::from_bits(b as u64)));
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn grid_catalogue_stencils_equal_their_reference_on_the_gpu() {
    let Some((_context, stream)) = gpu("grid_catalogue_stencils_equal_their_reference_on_the_gpu") else { return };
    let mut v = OnGpu { stream: &stream, failures: Vec::new(), checked: 0 };
    catalogue::grid::visit_all(&mut v);
    eprintln!("grid catalogue: {} launches checked, {} failed", v.checked, v.failures.len());
    assert!(v.failures.is_empty(), "{}", v.failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn sixteen_bit_grid_stencils_equal_their_reference_on_the_gpu() {
    let Some((_context, stream)) = gpu("sixteen_bit_grid_stencils_equal_their_reference_on_the_gpu") else { return };
    let mut v = OnGpu { stream: &stream, failures: Vec::new(), checked: 0 };
    catalogue::grid::visit_half(&mut v);
    eprintln!("16-bit grid catalogue: {} launches checked, {} failed", v.checked, v.failures.len());
    assert!(v.failures.is_empty(), "{}", v.failures.join("\n"));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn a_grid_of_more_than_2_pow_31_elements_is_indexed_with_64_bits() {
    let Some((_context, stream)) = gpu("a_grid_of_more_than_2_pow_31_elements_is_indexed_with_64_bits") else { return };
    if sample().is_some() {
        eprintln!("skipping: RC_GPU_SAMPLE is set (a sampled run, e.g. under compute-sanitizer)");
        return;
    }
    // 65539 x 32772 = 2^31 + 393228 elements, rows of whole vectors: the vector path's row
    // addresses pass 2^31 elements.
    let shape = Extent::from([65539, 32772]);
    let n = shape.len().expect("fits");
    let bytes_needed = 2 * n * 4 + (1 << 30);
    let info = rc::runtime::gpu().expect("present");
    if (info.total_memory_bytes as usize) < bytes_needed {
        eprintln!("skipping: the GPU has {} bytes, this test needs {bytes_needed}", info.total_memory_bytes);
        return;
    }
    let input: Vec<f32> = awkward(n, 31);
    let result = gpu_matches_reference(&heat2d::KERNEL, shape, &[&input], (0.125,), &stream, (|x| x, |x| x));
    eprintln!("shape {shape} ({n} elements): {}", if result.is_ok() { "all outputs match" } else { "MISMATCH" });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Sums from 0.0 times a positive constant run as one `fma` of the sum without its first
/// addition (`rc_core::zero_start`): over windows of signed zeros, NaN and infinities the GPU
/// equals `run_cpu` bit for bit, the default 2D tile and a streamed one.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn scaled_sums_of_signed_zeros_keep_their_sign_on_the_gpu() {
    let Some((_context, stream)) = gpu("scaled_sums_of_signed_zeros_keep_their_sign_on_the_gpu") else { return };
    let mut failures = Vec::new();
    for k in [&mean5x5::KERNEL, &box9x9::KERNEL] {
        for kind in 0..3 {
            for shape in [[9, 9], [70, 300], [257, 1024]] {
                let shape = Extent::from(shape);
                let input = signed_zeros(shape.len().expect("small"), kind, 7 + u64::from(kind));
                if let Err(e) = gpu_matches_reference(k, shape, &[&input], (), &stream, (|x| x, |x| x)) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A 2D launch numbers its bands of blocks along the grid's y and z (CUDA allows 65535 along
/// y): a grid of more bands than that equals `run_cpu`, the bands past the last doing nothing.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn a_grid_of_more_bands_than_a_grid_column_holds_folds_them_into_z() {
    let Some((_context, stream)) = gpu("a_grid_of_more_bands_than_a_grid_column_holds_folds_them_into_z") else {
        return;
    };
    if sample().is_some() {
        eprintln!("skipping: RC_GPU_SAMPLE is set (a sampled run, e.g. under compute-sanitizer)");
        return;
    }
    let k = &heat2d::KERNEL;
    let rows_per_band = k.pattern().rows_per_warp() as usize * k.pattern().tiles_per_block() as usize;
    let shape = Extent::from([65_535 * rows_per_band + 3 * rows_per_band + 5, 12]);
    let launch = k.launch_shape(shape, k.output_shape(shape).expect("an output")).expect("fits").expect("blocks");
    assert_eq!(launch.grid, [1, 65_535, 2], "{launch}");
    let input: Vec<f32> = awkward(shape.len().expect("fits"), 37);
    if let Err(e) = gpu_matches_reference(k, shape, &[&input], (0.125,), &stream, (|x| x, |x| x)) {
        panic!("{e}");
    }
}

/// The generated 2D `run` and `launch` take an array parameter by value after the shape.
#[test]
#[ignore = "needs an NVIDIA GPU: run with `cargo test -- --include-ignored` where there is one"]
fn array_parameters_pass_through_the_generated_grid_functions() {
    let Some((_context, stream)) = gpu("array_parameters_pass_through_the_generated_grid_functions") else { return };
    let k = [0.0625, -0.125, 0.25, 0.5, -1.0, 0.5, 0.25, -0.125, 0.0625];
    let shape = [70, 301];
    let input: Vec<f32> = awkward(70 * 301, 43);
    let mut want = vec![poison::<f32>(); input.len()];
    conv3x3::run_cpu(&input, shape, &mut want, k).expect("run_cpu");
    let ran = conv3x3::run(&input, shape, k).expect("run");
    let d_in = DeviceBuffer::from_slice(&input).expect("upload");
    let launched = launch_guarded(input.len(), poison(), &stream, |out| {
        conv3x3::launch(&stream, &d_in, out, shape, k).map_err(|e| e.to_string())
    })
    .expect("launch");
    for (how, got) in [("run", ran), ("launch", launched)] {
        if let Some(i) = catalogue::compare_outputs(&conv3x3::KERNEL, &got, &want) {
            panic!("conv3x3::{how}: output {i}: GPU gave {}, CPU reference {}", got[i], want[i]);
        }
    }
}
