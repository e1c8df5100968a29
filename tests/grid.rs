//! 2D and 3D stencils from `#[stencil]`: the emulated warp programs equal the annotated
//! functions bit for bit over grids of every awkward shape, and the generated shape API
//! (`output_shape`, `run_cpu`, `emulate`) says what is wrong with a shape or a buffer.

mod catalogue;

use catalogue::grid::*;
use rc::testdata::poison;
use rc::{Element, Extent, Params, Stencil};

/// One element, one row, one column, smaller than a tile, odd sizes, several tiles.
const SHAPES_2D: [[usize; 2]; 9] = [[1, 1], [1, 40], [40, 1], [3, 5], [5, 3], [7, 13], [33, 130], [70, 300], [9, 1000]];
/// One element, one row of one plane, one column, a small odd box, several tiles along each.
const SHAPES_3D: [[usize; 3]; 7] =
    [[1, 1, 1], [1, 1, 40], [1, 40, 1], [40, 1, 1], [3, 5, 7], [9, 17, 70], [5, 33, 130]];

/// `emulate` against `run_cpu` over a grid of shape `shape` of awkward data (NaN, infinities,
/// signed zeros), both outputs poisoned first so a skipped output shows. A shape `output_shape`
/// refuses (too small under `valid`) must be refused by both, with a message naming the shape.
fn emulation_matches<T: Element, P: Params>(
    k: &Stencil<T, P>,
    shape: Extent,
    seed: u64,
    params: P,
) -> Result<(), String> {
    let name = k.name();
    let inputs = catalogue::awkward_inputs(k, shape.len().expect("a small shape"), seed);
    let input = catalogue::slices(&inputs);
    let out_shape = match k.output_shape(shape) {
        Ok(s) => s,
        Err(e) => {
            if !e.to_string().contains(&format!("shape {}", shape.as_array())) {
                return Err(format!("{name} {shape}: the refusal `{e}` does not name the shape"));
            }
            let (cpu, emulated) = (
                k.run_cpu_grid(&input, shape, &mut [&mut []], params),
                k.emulate_grid(&input, shape, &mut [&mut []], params),
            );
            return match (cpu, emulated) {
                (Err(a), Err(b)) if a == e && b == e => Ok(()),
                other => Err(format!("{name} {shape}: expected `{e}` from both, got {other:?}")),
            };
        }
    };
    let n_out = out_shape.len().expect("a small shape");
    let mut reference = vec![poison::<T>(); n_out];
    let mut emulated = vec![poison::<T>(); n_out];
    k.run_cpu_grid(&input, shape, &mut [&mut reference], params)
        .map_err(|e| format!("{name} {shape}: run_cpu: {e}"))?;
    k.emulate_grid(&input, shape, &mut [&mut emulated], params).map_err(|e| format!("{name} {shape}: emulate: {e}"))?;
    match catalogue::compare_outputs(k, &emulated, &reference) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{name} {shape} ({}, seed {seed}): output {i} of {n_out}: emulate gave {:?}, run_cpu {:?}",
            k.pattern(),
            emulated.get(i),
            reference.get(i)
        )),
    }
}

struct EmulationMatchesReference {
    checked: usize,
}

impl catalogue::Visit for EmulationMatchesReference {
    fn visit<T: Element, P: Params + std::fmt::Debug>(&mut self, k: &Stencil<T, P>, params: P) {
        self.check(k, params);
    }
}

impl catalogue::VisitHalf for EmulationMatchesReference {
    fn visit<T: Element, P: Params + std::fmt::Debug>(&mut self, k: &Stencil<T, P>, params: P) {
        self.check(k, params);
    }
}

impl EmulationMatchesReference {
    fn check<T: Element, P: Params>(&mut self, k: &Stencil<T, P>, params: P) {
        let shapes: Vec<Extent> = match k.pattern().dims() {
            rc::core::Dims::Two => SHAPES_2D.into_iter().map(Extent::from).collect(),
            rc::core::Dims::Three => SHAPES_3D.into_iter().map(Extent::from).collect(),
            rc::core::Dims::One => panic!("{}: the grid catalogue holds 2D and 3D stencils", k.name()),
        };
        for (i, shape) in shapes.into_iter().enumerate() {
            if let Err(e) = emulation_matches(k, shape, 7000 + i as u64, params) {
                panic!("{e}");
            }
        }
        self.checked += 1;
    }
}

#[test]
fn every_grid_stencil_emulates_its_reference_on_every_shape() {
    let mut check = EmulationMatchesReference { checked: 0 };
    visit_all(&mut check);
    assert!(check.checked >= 19, "only {} stencils visited", check.checked);
}

#[test]
fn every_16_bit_grid_stencil_emulates_its_reference_on_every_shape() {
    let mut check = EmulationMatchesReference { checked: 0 };
    visit_half(&mut check);
    assert_eq!(check.checked, 3);
}

/// Sums from 0.0 times a positive constant emulate as one fused product of the sum without its
/// first addition (`rc_core::zero_start`): over signed zeros, NaN and infinities still the
/// annotated function's bits.
#[test]
fn scaled_sums_of_signed_zeros_emulate_their_reference() {
    for k in [&mean5x5::KERNEL, &box9x9::KERNEL] {
        for kind in 0..3 {
            let shape = Extent::yx(33, 130);
            let input = rc::testdata::signed_zeros(shape.len().expect("small"), kind, 3 + u64::from(kind));
            let mut reference = vec![poison::<f32>(); shape.len().expect("small")];
            let mut emulated = reference.clone();
            k.run_cpu_grid(&[&input], shape, &mut [&mut reference], ()).expect("runs");
            k.emulate_grid(&[&input], shape, &mut [&mut emulated], ()).expect("emulates");
            let differ = reference
                .iter()
                .zip(&emulated)
                .position(|(a, b)| a.to_bits() != b.to_bits() && !(a.is_nan() && b.is_nan()));
            assert_eq!(differ, None, "{} over signed zeros (kind {kind})", k.name());
        }
    }
}

#[test]
fn a_tap_reads_the_element_its_offsets_name_along_each_dimension() {
    // Element (y, x) is 100 y + x; `shifted` reads (y + 1, x - 2), 0 off the grid.
    let (rows, cols) = (6, 9);
    let input: Vec<f32> = (0..rows * cols).map(|i| (100 * (i / cols) + i % cols) as f32).collect();
    let want: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let (y, x) = (i / cols, i % cols);
            if y + 1 < rows && x >= 2 {
                (100 * (y + 1) + x - 2) as f32
            } else {
                0.0
            }
        })
        .collect();
    let mut got = vec![f32::NAN; rows * cols];
    shifted::run_cpu(&input, [rows, cols], &mut got).expect("runs");
    assert_eq!(got, want, "run_cpu");
    let mut got = vec![f32::NAN; rows * cols];
    shifted::emulate(&input, [rows, cols], &mut got).expect("runs");
    assert_eq!(got, want, "emulate");
}

#[test]
fn the_generated_output_shape_shrinks_each_dimension_by_twice_its_radius_under_valid() {
    assert_eq!(asymmetric::output_shape([10, 20]).expect("fits"), [8, 14]);
    assert_eq!(asymmetric3d::output_shape([9, 17, 70]).expect("fits"), [7, 13, 68]);
    assert_eq!(heat2d::output_shape([1, 1]).expect("clamp keeps the shape"), [1, 1]);
    assert_eq!(box27::output_shape([3, 5, 7]).expect("zero keeps the shape"), [3, 5, 7]);
}

#[test]
fn the_generated_output_shape_refuses_empty_and_too_small_shapes_naming_them() {
    let e = heat2d::output_shape([0, 5]).expect_err("an empty dimension");
    assert_eq!(
        e.to_string(),
        "shape [0, 5] has an empty dimension; a 2D or 3D stencil needs at least one element along each"
    );
    let e = asymmetric::output_shape([3, 6]).expect_err("6 columns are fewer than a window of 7");
    assert_eq!(
        e.to_string(),
        "shape [3, 6] is smaller than one window [3, 7] (2 * radius + 1 along each dimension), which boundary `valid` needs"
    );
    let e = asymmetric3d::output_shape([3, 4, 3]).expect_err("4 rows are fewer than a window of 5");
    assert!(e.to_string().starts_with("shape [3, 4, 3] is smaller than one window [3, 5, 3]"), "{e}");
}

#[test]
fn run_cpu_and_emulate_refuse_an_input_whose_length_is_not_the_shapes() {
    let input = vec![0.0f32; 11];
    let mut output = vec![0.0f32; 12];
    for e in [heat2d::run_cpu(&input, [3, 4], &mut output, 0.5), heat2d::emulate(&input, [3, 4], &mut output, 0.5)] {
        assert_eq!(
            e.expect_err("11 elements for 3 x 4").to_string(),
            "input has 11 elements, expected 12 for shape [3, 4]"
        );
    }
}

#[test]
fn run_cpu_and_emulate_refuse_an_output_whose_length_is_not_the_output_shapes() {
    let input = vec![0.0f32; 5 * 9];
    let mut output = vec![0.0f32; 5 * 9];
    for e in [asymmetric::run_cpu(&input, [5, 9], &mut output), asymmetric::emulate(&input, [5, 9], &mut output)] {
        assert_eq!(
            e.expect_err("valid shrinks 5 x 9 to 3 x 3").to_string(),
            "output has 45 elements, expected 9 (shape [3, 3]) for an input of shape [5, 9] with boundary `valid`"
        );
    }
    let mut output = vec![0i32; 23];
    let e = box3d_naive::run_cpu(&[0; 24], [2, 3, 4], &mut output, 0).expect_err("one output short");
    assert_eq!(
        e.to_string(),
        "output has 23 elements, expected 24 (shape [2, 3, 4]) for an input of shape [2, 3, 4] with boundary `clamp`"
    );
    assert!(
        box3d_naive::run_cpu(&[0; 24], [2, 3, 4], &mut [0; 24], 0).is_ok(),
        "the same call with the right output runs"
    );
}

#[test]
fn run_cpu_and_emulate_refuse_an_empty_dimension() {
    let mut output = vec![0.0f32; 0];
    for e in [box27::run_cpu(&[], [4, 0, 3], &mut output), box27::emulate(&[], [4, 0, 3], &mut output)] {
        assert_eq!(
            e.expect_err("no rows").to_string(),
            "shape [4, 0, 3] has an empty dimension; a 2D or 3D stencil needs at least one element along each"
        );
    }
}

#[test]
fn a_grid_stencils_kernel_has_the_declared_tile_and_defaults() {
    let p = heat2d::KERNEL.pattern();
    assert_eq!((p.radius(), p.rows_per_warp(), p.planes_per_warp()), (rc::Radius::yx(1, 1), 4, 1));
    let p = laplace7_tiled::KERNEL.pattern();
    assert_eq!((p.radius(), p.warp(), p.rows_per_warp(), p.planes_per_warp()), (rc::Radius::zyx(1, 1, 1), 16, 2, 3));
    // Reaching 2 along y, it gets staged planes, which take 4 rows per warp unless given.
    let p = asymmetric3d::KERNEL.pattern();
    assert_eq!(asymmetric3d::KERNEL.layout(), rc::Layout::Planes(4));
    assert_eq!(
        (p.radius(), (p.rows_per_warp(), p.planes_per_warp())),
        (rc::Radius::zyx(1, 2, 1), (4, rc::Pattern::default_planes_per_warp(p.dims())))
    );
    assert_eq!(box3x5_granule::KERNEL.layout(), rc::Layout::Granule(4));
    assert_eq!(box3x3_shared::KERNEL.strategy(), rc::Strategy::SharedMemory);
    assert_eq!(box3d_naive::KERNEL.strategy(), rc::Strategy::Naive);
    // `stream = true` streams the default rows unless rows_per_warp says otherwise; no
    // stream, no streaming.
    let p = box9x9::KERNEL.pattern();
    assert_eq!((p.streams_rows(), p.rows_per_warp()), (true, rc::Pattern::DEFAULT_STREAMED_ROWS));
    assert!(!heat2d::KERNEL.pattern().streams_rows());
    let p = streamed_weighted::KERNEL.pattern();
    assert_eq!((p.streams_rows(), p.rows_per_warp(), p.outputs_per_thread()), (true, 5, 4));
    // Staged planes: a ring within 48 KiB is declared in the PTX, a larger one is launched
    // with dynamic shared memory.
    assert_eq!(
        (box27_planes::KERNEL.layout(), box27_planes::KERNEL.dynamic_shared_bytes()),
        (rc::Layout::Planes(4), 0)
    );
    // 3 slots of 10 rows x 136 elements (16320 bytes), then one element per copy vector twice.
    assert!(box27_planes::PTX.contains("\t.shared .align 16 .b8 rc_stage[24480];"));
    assert_eq!(star3d2_planes::KERNEL.dynamic_shared_bytes(), 97920);
    assert!(star3d2_planes::PTX.contains(".extern .shared .align 16 .b8 rc_stage[];"));
    // A 3D box at radius 1 gets staged planes of the model's block (128 threads) unless the
    // attribute gives one: an explicit 256 threads, the default's size, stays.
    let (model, given) = (box27_model_block::KERNEL.pattern(), box27_given_block::KERNEL.pattern());
    assert_eq!((box27_model_block::KERNEL.layout(), model.threads_per_block()), (rc::Layout::Planes(4), 128));
    assert_eq!((box27_given_block::KERNEL.layout(), given.threads_per_block()), (rc::Layout::Planes(4), 256));
}

/// A 3D box at radius 1 with the tile left to the cost model.
#[rc::stencil(radius = 1, boundary = clamp)]
fn box27_model_block(w: rc::prelude::Window3<f32>) -> f32 {
    w[(-1, -1, -1)] + w[(0, 0, 0)] + w[(1, 1, 1)]
}

/// The same with the block of 256 threads given.
#[rc::stencil(radius = 1, boundary = clamp, max_threads_per_block = 256)]
fn box27_given_block(w: rc::prelude::Window3<f32>) -> f32 {
    w[(-1, -1, -1)] + w[(0, 0, 0)] + w[(1, 1, 1)]
}
