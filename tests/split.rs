//! A grid split into bands over ranks (`rc::split`), on the CPU: the decomposition as data (who
//! owns which rows, which halos, which copies an exchange makes), and time steps of the split
//! grid, each band stepped on its own and halos exchanged in host memory, bit for bit the whole
//! grid's `run_cpu_steps`: 1 to 7 ranks, every boundary rule that keeps the shape, 2D and 3D,
//! radius 1 and 2 along the split dimension, one step and several between exchanges, the
//! kernels' emulation (fused steps) as well as the reference, a system of two fields, a
//! coefficient field, uneven bands. `valid` and bands thinner than the halo are refused.

use proptest::prelude::*;
use rc::core::Dims;
use rc::prelude::*;
use rc::split::{run_split_steps, Band, CpuSteps, Decomposition, HaloCopy};
use rc::{DecompositionError, Element, Params};

mod support;
use support::stencils::{box_wrap, deep3d_wrap, heat3d_zero, heat_clamp, heat_zero, tall_clamp, varying};

#[stencil(radius = (2, 1), boundary = wrap)]
fn tall_wrap(w: Window2<f32>) -> f32 {
    0.1 * w[(-2, 0)] + 0.2 * w[(-1, 0)] + 0.4 * w[(0, 0)] + 0.2 * w[(1, 0)] + 0.1 * w[(2, 0)]
        - 0.05 * (w[(0, -1)] - w[(0, 1)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 3)]
fn gray_scott(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (u[(0, 0)] + 0.16 * lap_u - uvv + f * (1.0 - u[(0, 0)]), v[(0, 0)] + 0.08 * lap_v + uvv - (f + k) * v[(0, 0)])
}

#[stencil(radius = 1, boundary = valid)]
fn heat_valid(w: Window2<f32>) -> f32 {
    w[(0, 0)] + 0.2 * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

fn field<T: From<f32>>(n: usize, seed: u32) -> Vec<T> {
    (0..n).map(|i| T::from(((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) as f32 / 16777216.0)).collect()
}

/// The whole grid's steps, and the split grid's by `how`, over `ranks` even bands exchanged
/// every `per_exchange` steps: equal bit for bit (as `Vec`s of the same values; every element
/// here is finite).
#[allow(clippy::too_many_arguments)]
fn assert_split_matches<T: Element + PartialEq + std::fmt::Debug, P: Params>(
    stencil: &Stencil<T, P>,
    inputs: &[Vec<T>],
    shape: &[usize],
    own_rows: &[usize],
    per_exchange: usize,
    steps: usize,
    params: P,
    how: CpuSteps,
) {
    let inputs: Vec<&[T]> = inputs.iter().map(Vec::as_slice).collect();
    let shape = rc::Extent::new(shape).expect("a shape");
    let states = stencil.output_fields() as usize;
    let mut want = vec![vec![*T::zero_ref(); inputs[0].len()]; states];
    let mut outs: Vec<&mut [T]> = want.iter_mut().map(Vec::as_mut_slice).collect();
    stencil.run_cpu_steps_grid(&inputs, shape, &mut outs, steps, params).expect("whole grid");
    let split = Decomposition::with_bands(&stencil.pattern(), shape, own_rows, per_exchange).expect("split");
    let mut got = vec![vec![*T::zero_ref(); inputs[0].len()]; states];
    let mut outs: Vec<&mut [T]> = got.iter_mut().map(Vec::as_mut_slice).collect();
    run_split_steps(stencil, &split, &inputs, &mut outs, steps, params, how).expect("split grid");
    assert!(
        got == want,
        "{} over bands {own_rows:?} of {}, {per_exchange} steps per exchange, {steps} steps, {how:?}",
        stencil.name(),
        shape.as_array()
    );
}

/// `ranks` bands as even as can be: the first `rows % ranks` a row longer.
fn even(rows: usize, ranks: usize) -> Vec<usize> {
    Decomposition::new(&heat_zero::KERNEL.pattern(), [rows, 4], ranks, 1)
        .expect("even split")
        .bands()
        .iter()
        .map(|band| band.own.len())
        .collect()
}

#[test]
fn bands_are_as_even_as_can_be_and_own_every_row_once() {
    let split = Decomposition::new(&heat_clamp::KERNEL.pattern(), [10, 7], 3, 2).expect("split");
    assert_eq!(split.halo(), 2);
    assert_eq!(split.row_len(), 7);
    assert_eq!(
        split.bands(),
        &[
            Band { rank: 0, own: 0..4, before: 0, after: 2 },
            Band { rank: 1, own: 4..7, before: 2, after: 2 },
            Band { rank: 2, own: 7..10, before: 2, after: 0 },
        ]
    );
    assert_eq!(split.local_shape(1), [7, 7].into());
    // Each halo from the neighbour's own rows next to it.
    assert_eq!(
        split.exchange(),
        vec![
            HaloCopy { from: 1, from_rows: 2..4, to: 0, to_rows: 4..6 },
            HaloCopy { from: 0, from_rows: 2..4, to: 1, to_rows: 0..2 },
            HaloCopy { from: 2, from_rows: 2..4, to: 1, to_rows: 5..7 },
            HaloCopy { from: 1, from_rows: 3..5, to: 2, to_rows: 0..2 },
        ]
    );
}

#[test]
fn under_wrap_the_bands_form_a_ring_and_one_rank_has_no_halo() {
    let pattern = box_wrap::KERNEL.pattern();
    let split = Decomposition::new(&pattern, [9, 5], 3, 1).expect("split");
    assert!(split.bands().iter().all(|band| band.before == 1 && band.after == 1));
    let copies = split.exchange();
    assert_eq!(copies[0], HaloCopy { from: 2, from_rows: 3..4, to: 0, to_rows: 0..1 });
    assert_eq!(copies[5], HaloCopy { from: 0, from_rows: 1..2, to: 2, to_rows: 4..5 });
    // Rank 0's halo before its rows holds the grid's last row.
    assert_eq!(split.bands()[0].global_row(0, 9), 8);
    let alone = Decomposition::new(&pattern, [9, 5], 1, 1).expect("one rank");
    assert_eq!(alone.bands(), &[Band { rank: 0, own: 0..9, before: 0, after: 0 }]);
    assert!(alone.exchange().is_empty());
}

#[test]
fn the_most_ranks_that_fit_leave_every_band_the_halo() {
    let pattern = tall_clamp::KERNEL.pattern();
    // Radius 2 along y, 3 steps per exchange: 6 rows of halo, so 20 rows fit 3 ranks.
    assert!(Decomposition::new(&pattern, [20, 8], 3, 3).is_ok());
    assert_eq!(Decomposition::most_ranks(&pattern, [20, 8], 3), 3);
    assert_eq!(Decomposition::most_ranks(&pattern, [20, 8], 30), 1);
}

#[test]
fn after_an_exchange_each_step_leaves_r_fewer_rows_exact_at_each_side_with_a_neighbour() {
    let heat2d = heat_zero::KERNEL.pattern();
    // Rows 10, 10, 10 over three ranks, 3 steps per exchange, radius 1: halos of 3.
    let split = Decomposition::new(&heat2d, [30, 8], 3, 3).expect("fits");
    let [first, middle, last] = split.bands() else { panic!("three bands") };
    let exact = |band, steps| split.exact_rows(band, steps);
    assert_eq!((first.rows(), middle.rows(), last.rows()), (13, 16, 13));
    assert_eq!([0, 1, 3].map(|k| exact(first, k)), [0..13, 0..12, 0..10]);
    assert_eq!([0, 1, 3].map(|k| exact(middle, k)), [0..16, 1..15, 3..13]);
    assert_eq!([0, 1, 3].map(|k| exact(last, k)), [0..13, 1..13, 3..13]);
    // The last step before an exchange leaves the own rows, and no more steps than the halo
    // covers are counted.
    assert_eq!(exact(middle, 3), middle.own_local());
    assert_eq!(exact(middle, 5), middle.own_local());
    // Under `wrap` every band has both neighbours.
    let ring = Decomposition::new(&tall_wrap::KERNEL.pattern(), [30, 8], 3, 1).expect("fits");
    let radius = 2;
    assert!(ring.bands().iter().all(|band| ring.exact_rows(band, 1) == (radius..band.rows() - radius)));
}

#[test]
fn balanced_steps_per_exchange_weigh_the_exchange_against_the_halo_rows() {
    let heat2d = heat_zero::KERNEL.pattern();
    let heat3d = heat3d_zero::KERNEL.pattern();
    // sqrt(EXCHANGE_COST / (r row_len)): 24.7 for rows of 16384, 6.2 for planes of 512 x 512.
    assert_eq!(Decomposition::balanced_steps_per_exchange(&heat2d, [32768, 16384], 2, 1), 25);
    assert_eq!(Decomposition::balanced_steps_per_exchange(&heat3d, [1024, 512, 512], 2, 1), 6);
    // Whole launches of a fused kernel: 2.47 launches of 10 round to 2.
    assert_eq!(Decomposition::balanced_steps_per_exchange(&heat2d, [32768, 16384], 2, 10), 20);
    // At least one launch; at most what the thinnest band holds; one rank: one launch.
    assert_eq!(Decomposition::balanced_steps_per_exchange(&heat2d, [64, 1 << 26], 2, 3), 3);
    assert_eq!(Decomposition::balanced_steps_per_exchange(&heat2d, [40, 16], 4, 1), 10);
    assert_eq!(Decomposition::balanced_steps_per_exchange(&heat2d, [32768, 16384], 1, 1), 1);
    // Radius 2 along the split dimension halves the count's square.
    let tall = tall_clamp::KERNEL.pattern();
    assert_eq!(Decomposition::balanced_steps_per_exchange(&tall, [32768, 16384], 2, 1), 17);
    for ranks in 2..6 {
        let steps = Decomposition::balanced_steps_per_exchange(&heat2d, [100, 100000], ranks, 1);
        assert!(Decomposition::new(&heat2d, [100, 100000], ranks, steps).is_ok(), "{ranks} ranks, {steps} steps");
    }
}

/// A call's result with its value dropped and its error as `rc::Error`, so that the refusals of
/// different calls fit one table.
fn refusal<T>(result: Result<T, impl Into<rc::Error>>) -> Result<(), rc::Error> {
    result.map(drop).map_err(Into::into)
}

#[test]
fn splits_that_cannot_work_and_parts_that_are_not_whole_grids_are_refused_with_why() {
    let (tall, heat) = (tall_clamp::KERNEL.pattern(), heat_zero::KERNEL.pattern());
    let split = Decomposition::new(&heat, [20, 8], 2, 1).expect("split");
    let (input, mut out) = (field::<f32>(160, 1), vec![0.0; 160]);
    // Rank 0 of 6 x 4 rows over 2 ranks holds rows 0..4: its own 3 and 1 of halo, 16 elements.
    let small = Decomposition::new(&heat, [6, 4], 2, 1).expect("split");
    let (whole, mut back): (Vec<u32>, _) = ((0..24).collect(), vec![0; 24]);
    let part = |what: &str, expected: &str| DecompositionError::Part { what: what.into(), expected: expected.into() };
    // Each case: what is asked, what it returns, the error it must be, and words its message
    // must hold (what a user reads first).
    type Case = (&'static str, Result<(), rc::Error>, DecompositionError, &'static [&'static str]);
    let cases: Vec<Case> = vec![
        (
            // Radius 2 along y, 3 steps per exchange: 6 rows of halo, so 20 rows fit 3 ranks.
            "4 ranks of 20 rows, a halo of 6",
            refusal(Decomposition::new(&tall, [20, 8], 4, 3)),
            DecompositionError::BandTooThin { rank: 0, rows: 5, least: 6, halo: 6, ranks: 4, total: 20 },
            &["at least 6", "use at most 3 ranks"],
        ),
        (
            "bands of 19 rows in a grid of 20",
            refusal(Decomposition::with_bands(&tall, [20, 8], &[10, 9], 1)),
            DecompositionError::RowCount { shape: vec![20, 8], rows: 20, got: 19 },
            &["add up to the grid's 20 rows"],
        ),
        (
            "boundary valid",
            refusal(Decomposition::new(&heat_valid::KERNEL.pattern(), [20, 8], 2, 1)),
            DecompositionError::Valid,
            &["expected `zero`, `clamp` or `wrap`"],
        ),
        ("no ranks", refusal(Decomposition::new(&heat, [20, 8], 0, 1)), DecompositionError::NoRanks, &[]),
        (
            "no steps per exchange",
            refusal(Decomposition::new(&heat, [20, 8], 2, 0)),
            DecompositionError::NoStepsPerExchange,
            &[],
        ),
        (
            "a 2D stencil on a 3D grid",
            refusal(Decomposition::new(&heat, [20, 8, 3], 2, 1)),
            DecompositionError::Dimensions { stencil: Dims::Two, shape: Dims::Three },
            &[],
        ),
        (
            "a radius-2 stencil on a radius-1 split",
            refusal(run_split_steps(
                &tall_clamp::KERNEL,
                &split,
                &[&input],
                &mut [&mut out],
                1,
                (),
                CpuSteps::Reference,
            )),
            DecompositionError::Mismatch {
                split: "a 2D stencil of radius 1 along the split dimension".into(),
                stencil: "a 2D stencil of radius 2 along the split dimension".into(),
            },
            &["radius 1 along the split dimension"],
        ),
        (
            "a part of a whole grid one element short",
            refusal(small.local_part(1, &whole[..23])),
            part("the whole grid of 23 elements", "24 elements"),
            &["a split grid's part: got the whole grid of 23 elements, expected 24 elements"],
        ),
        ("a part for rank 2 of 2", refusal(small.local_part(2, &whole)), part("rank 2", "a rank below 2"), &[]),
        (
            "own rows put back from a local grid one element short",
            refusal(small.put_own(0, &whole[..15], &mut back)),
            part("a local grid of 15 elements", "16 elements"),
            &[],
        ),
    ];
    for (case, got, want, says) in cases {
        let Err(err) = got else { panic!("{case}: accepted, expected the error {want:?}") };
        assert_eq!(err, rc::Error::Decomposition(want), "{case}");
        let text = err.to_string();
        for words in says {
            assert!(text.contains(words), "{case}: the message says {text:?}, not {words:?}");
        }
    }
}

#[test]
fn split_steps_match_the_whole_grid_for_every_boundary_and_rank_count() {
    let shape = [23, 19];
    let n = 23 * 19;
    for ranks in 1..=7 {
        for (per_exchange, steps) in [(1, 1), (1, 5), (2, 5), (3, 7)] {
            let bands = even(23, ranks);
            let u = field::<f32>(n, ranks as u32);
            assert_split_matches(
                &heat_zero::KERNEL,
                std::slice::from_ref(&u),
                &shape,
                &bands,
                per_exchange,
                steps,
                (0.2,),
                CpuSteps::Reference,
            );
            assert_split_matches(
                &heat_clamp::KERNEL,
                &[u],
                &shape,
                &bands,
                per_exchange,
                steps,
                (0.2,),
                CpuSteps::Reference,
            );
            let w = field::<f64>(n, 9);
            assert_split_matches(&box_wrap::KERNEL, &[w], &shape, &bands, per_exchange, steps, (), CpuSteps::Reference);
        }
    }
}

#[test]
fn radius_two_along_the_split_needs_twice_the_halo_and_matches() {
    let shape = [30, 17];
    let u = field::<f32>(30 * 17, 3);
    for ranks in 1..=5 {
        for (per_exchange, steps) in [(1, 4), (3, 7)] {
            if 30 / ranks < 2 * per_exchange {
                continue;
            }
            let bands = even(30, ranks);
            assert_split_matches(
                &tall_clamp::KERNEL,
                std::slice::from_ref(&u),
                &shape,
                &bands,
                per_exchange,
                steps,
                (),
                CpuSteps::Reference,
            );
            assert_split_matches(
                &tall_wrap::KERNEL,
                std::slice::from_ref(&u),
                &shape,
                &bands,
                per_exchange,
                steps,
                (),
                CpuSteps::Reference,
            );
        }
    }
}

#[test]
fn the_kernels_emulation_fused_in_each_band_matches_the_whole_grid() {
    // Fused launches of 3 (heat_clamp), 4 (box_wrap), 2 (tall_clamp) steps, and steps per exchange
    // that are and are not multiples of them.
    let shape = [26, 40];
    let n = 26 * 40;
    for ranks in [2, 3, 4] {
        let bands = even(26, ranks);
        assert_split_matches(&heat_clamp::KERNEL, &[field(n, 1)], &shape, &bands, 3, 8, (0.2,), CpuSteps::Emulation);
        assert_split_matches(&box_wrap::KERNEL, &[field(n, 2)], &shape, &bands, 4, 9, (), CpuSteps::Emulation);
        assert_split_matches(&tall_clamp::KERNEL, &[field(n, 3)], &shape, &bands, 2, 5, (), CpuSteps::Emulation);
        assert_split_matches(&heat_zero::KERNEL, &[field(n, 4)], &shape, &bands, 1, 3, (0.2,), CpuSteps::Emulation);
    }
}

#[test]
fn in_3d_the_planes_are_split() {
    let shape = [17, 6, 20];
    let n = 17 * 6 * 20;
    for ranks in 1..=4 {
        let bands = even(17, ranks);
        assert_split_matches(&heat3d_zero::KERNEL, &[field(n, 5)], &shape, &bands, 1, 4, (0.1,), CpuSteps::Reference);
        assert_split_matches(&deep3d_wrap::KERNEL, &[field(n, 6)], &shape, &bands, 1, 5, (), CpuSteps::Reference);
    }
    // The 3D kernels' emulation is slower: one split each.
    assert_split_matches(&heat3d_zero::KERNEL, &[field(n, 5)], &shape, &even(17, 3), 2, 4, (0.1,), CpuSteps::Emulation);
    assert_split_matches(&deep3d_wrap::KERNEL, &[field(n, 6)], &shape, &even(17, 2), 2, 5, (), CpuSteps::Emulation);
}

#[test]
fn a_system_exchanges_every_state_field_and_a_coefficient_field_is_split_but_not_exchanged() {
    let shape = [21, 24];
    let n = 21 * 24;
    for ranks in [1, 2, 3, 5] {
        let bands = even(21, ranks);
        let emulation = [CpuSteps::Reference, CpuSteps::Emulation];
        for &how in &emulation[..1 + usize::from(ranks == 3)] {
            let (u, v) = (field(n, 7), field(n, 8));
            assert_split_matches(&gray_scott::KERNEL, &[u, v], &shape, &bands, 3, 7, (0.04, 0.06), how);
            let (u, k) = (field(n, 9), field::<f32>(n, 10).iter().map(|x| 0.2 * x).collect());
            assert_split_matches(&varying::KERNEL, &[u, k], &shape, &bands, 2, 6, (), how);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Uneven bands of random sizes (each at least the halo), random shapes and step counts.
    #[test]
    fn uneven_bands_match_the_whole_grid(
        cuts in proptest::collection::vec(0usize..1000, 0..6),
        cols in 1usize..24,
        per_exchange in 1usize..4,
        steps in 0usize..9,
        which in 0usize..4,
    ) {
        let ranks = cuts.len() + 1;
        let radius = if which == 3 { 2 } else { 1 };
        let least = per_exchange * radius;
        // Each band `least` rows plus a random share of 12 more.
        let rows = least * ranks + 12;
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % 13).collect();
        bounds.sort_unstable();
        let mut own = Vec::new();
        let mut last = 0;
        for b in bounds.iter().chain(std::iter::once(&12)) {
            own.push(least + b - last);
            last = *b;
        }
        prop_assert_eq!(own.iter().sum::<usize>(), rows);
        let shape = [rows, cols];
        let u = field::<f32>(rows * cols, steps as u32);
        match which {
            0 => assert_split_matches(&heat_zero::KERNEL, &[u], &shape, &own, per_exchange, steps, (0.2,), CpuSteps::Reference),
            1 => assert_split_matches(&heat_clamp::KERNEL, &[u], &shape, &own, per_exchange, steps, (0.2,), CpuSteps::Reference),
            2 => assert_split_matches(&box_wrap::KERNEL, &[u.iter().map(|&x| f64::from(x)).collect()], &shape, &own, per_exchange, steps, (), CpuSteps::Reference),
            _ => assert_split_matches(&tall_wrap::KERNEL, &[u], &shape, &own, per_exchange, steps, (), CpuSteps::Reference),
        }
    }
}

#[test]
fn a_ranks_part_holds_its_halo_and_its_own_rows_go_back_in_place() {
    let split = Decomposition::new(&heat_zero::KERNEL.pattern(), [6, 4], 2, 1).expect("split");
    let whole: Vec<u32> = (0..24).collect();
    // Rank 1 owns rows 3..6 and holds row 2 as its halo before them.
    assert_eq!(split.local_part(1, &whole).expect("a part"), (8..24).collect::<Vec<u32>>());
    let mut back = vec![0; 24];
    split.put_own(1, &split.local_part(1, &whole).expect("a part"), &mut back).expect("own rows back");
    assert_eq!(&back[12..], &whole[12..]);
}
