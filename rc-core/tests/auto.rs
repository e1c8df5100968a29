//! `distribution = auto`: the cost model's choices compile, are correct, respect what the user
//! fixed, and follow the measurements they were calibrated on.

mod common;

use common::*;
use rc_core::auto::{choose, choose_given, Given};
use rc_core::{Boundary, Layout, Pattern, Radius, ScalarType, Strategy, WarpProgram};

#[test]
fn the_choice_is_the_fastest_prediction_or_a_tie_with_it_and_emulates_bit_exact() {
    for ty in [ScalarType::F32, ScalarType::F64] {
        for r in [1u32, 3, 8, 16, 24, 32, 64] {
            let pattern = Pattern::new(r, 32, 1, Boundary::Clamp).expect("valid");
            let body = box_body(r, ty);
            let choice = choose(pattern, false, &body).expect("a choice");
            let chosen = choice
                .estimates
                .iter()
                .find(|e| e.layout == choice.layout && e.outputs_per_thread == choice.pattern.outputs_per_thread())
                .expect("the choice is one of the weighed candidates");
            let fastest = choice.estimates[0].cycles();
            assert!(
                chosen.cycles() <= fastest * 1.03 + 1e-12,
                "{ty} r={r}: chose {} at {:.3}, fastest {fastest:.3}",
                choice.layout,
                chosen.cycles()
            );
            let program = WarpProgram::compile_for(choice.pattern, Strategy::RegisterCache, choice.layout, &body)
                .expect("compiles");
            let n = 3 * choice.pattern.tile_outputs() as usize + 2 * r as usize + 7;
            if ty == ScalarType::F32 {
                let input: Vec<f32> = awkward(n, r as u64);
                let mut out = vec![poison::<f32>(); choice.pattern.output_len(n).expect("length")];
                program.emulate(&[&input], &mut out, &[]).expect("emulates");
                assert_eq!(
                    first_difference(&out, &reference_f32(&choice.pattern, &input)),
                    None,
                    "{ty} r={r}: {}",
                    choice.layout
                );
            } else {
                let input: Vec<f64> = awkward(n, r as u64);
                let mut out = vec![poison::<f64>(); choice.pattern.output_len(n).expect("length")];
                program.emulate(&[&input], &mut out, &[]).expect("emulates");
                assert_eq!(
                    first_difference(&out, &reference_f64(&choice.pattern, &input)),
                    None,
                    "{ty} r={r}: {}",
                    choice.layout
                );
            }
        }
    }
}

#[test]
fn fixed_outputs_per_thread_are_kept_and_only_dividing_granules_weighed() {
    let body = box_body(8, ScalarType::F32);
    for p in [1u32, 3, 4, 6, 8, 12, 16, 24, 32] {
        let pattern = Pattern::new(8, 32, p, Boundary::Valid).expect("valid");
        let choice = choose(pattern, true, &body).expect("a choice");
        assert_eq!(choice.pattern.outputs_per_thread(), p);
        for e in &choice.estimates {
            assert_eq!(e.outputs_per_thread, p);
            if let Layout::Granule(v) | Layout::Window(v) | Layout::Staged(v) = e.layout {
                assert_eq!(p % v, 0, "{} weighed for P = {p}", e.layout);
            }
        }
        // No granule of 4 or more divides 1, 3 or 6: only the article's round-robin remains.
        if p % 4 != 0 {
            assert_eq!(choice.layout, Layout::RoundRobin, "P = {p}");
        }
    }
}

/// Pins the model's choices for the benchmark's box averages (f32, H200 calibration): a change
/// to the model that moves them needs a new benchmark run (`bench/results/`).
#[test]
fn box_averages_choose_windows_of_4_then_staged_windows_of_8_then_of_16() {
    for r in [1u32, 2, 4, 8, 12, 16, 24, 32, 64] {
        let pattern = Pattern::new(r, 32, 1, Boundary::Valid).expect("valid");
        let choice = choose(pattern, false, &box_body(r, ScalarType::F32)).expect("a choice");
        let want = match r {
            1..=8 => (Layout::Window(4), 4),
            9..=24 => (Layout::Staged(8), 8),
            _ => (Layout::Staged(16), 16),
        };
        assert_eq!((choice.layout, choice.pattern.outputs_per_thread()), want, "r={r}\n{choice}");
    }
}

#[test]
fn the_table_names_every_candidate_and_the_choice() {
    let pattern = Pattern::new(32, 32, 1, Boundary::Valid).expect("valid");
    let choice = choose(pattern, false, &box_body(32, ScalarType::F32)).expect("a choice");
    let table = choice.to_string();
    assert!(table.starts_with("distribution = auto chose staged(16), outputs_per_thread = 16"), "{table}");
    for layout in ["window(4)", "granule(8)", "staged(32)"] {
        assert!(table.contains(layout), "{layout} missing:\n{table}");
    }
}

/// A tile's rows and planes are outputs too: the same body on the same lanes costs about the
/// same per output whether a warp stores 1 row or 8, not 8 times as much.
#[test]
fn grid_costs_are_per_output_of_every_row_and_plane() {
    let body = grid_sum(Radius::yx(1, 1), false);
    let per_output = |rows| {
        let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, rows, 1, Boundary::Clamp).expect("a pattern");
        let program =
            WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
        rc_core::auto::estimate(&program, Layout::Window(4)).instructions
    };
    let (one, eight) = (per_output(1), per_output(8));
    assert!(
        eight < one,
        "8 rows share their loads and the tile's overhead: {eight:.1} instructions per output, 1 row {one:.1}"
    );
    assert!(eight > one / 4.0, "8 rows: {eight:.1} instructions per output, 1 row {one:.1}");
}

/// A 2D tile gets launch bounds from its register estimate: 4 blocks of 256 threads per SM for
/// a 2D star r = 1; the user's bounds stay, and 1D asks nothing. A 3D stencil gets staged planes
/// instead, with the bounds it was given, or at radius 1 the model's (a star's: 4 blocks of 128
/// threads). The bounded kernel computes what the unbounded one does.
#[test]
fn grid_tiles_are_bounded_unless_the_user_chose() {
    let default_tile = |radius: Radius| {
        let dims = radius.dims();
        Pattern::grid(
            radius,
            32,
            4,
            Pattern::default_rows_per_warp(dims),
            Pattern::default_planes_per_warp(dims),
            Boundary::Clamp,
        )
        .expect("a pattern")
    };
    let star3d1 = grid_sum(Radius::zyx(1, 1, 1), false);
    let choice = choose(default_tile(Radius::zyx(1, 1, 1)), false, &star3d1).expect("a choice");
    let p = choice.pattern;
    assert_eq!(
        (choice.layout, p.threads_per_block(), p.min_blocks_per_sm()),
        (Layout::Planes(4), 128, Some(4)),
        "3D star r = 1\n{choice}"
    );
    assert!(choice.to_string().contains("min_blocks_per_sm = 4"), "{choice}");
    let program = WarpProgram::compile_for(p, Strategy::RegisterCache, choice.layout, &star3d1).expect("compiles");
    let shape = [5usize, 9, 70];
    let input: Vec<f32> = awkward(shape.iter().product(), 3);
    let mut bounded = vec![poison::<f32>(); input.len()];
    program.emulate_grid(&[&input], shape.into(), &mut bounded, &[]).expect("emulates");
    let unbounded = WarpProgram::compile_for(
        p.with_launch_bounds_unchecked(128, None),
        Strategy::RegisterCache,
        choice.layout,
        &star3d1,
    )
    .expect("compiles");
    let mut free = vec![poison::<f32>(); input.len()];
    unbounded.emulate_grid(&[&input], shape.into(), &mut free, &[]).expect("emulates");
    assert_eq!(first_difference(&bounded, &free), None);

    let box3d2 = grid_sum(Radius::zyx(2, 2, 2), false);
    let choice = choose(default_tile(Radius::zyx(2, 2, 2)), false, &box3d2).expect("a choice");
    assert_eq!(
        (choice.layout, choice.pattern.min_blocks_per_sm()),
        (Layout::Planes(4), None),
        "3D box r = 2\n{choice}"
    );
    // Rows per warp the attribute left open: 4 for staged planes; given ones stay.
    assert_eq!(choice.pattern.rows_per_warp(), 2, "choose keeps the pattern's rows\n{choice}");
    let open = choose_given(
        default_tile(Radius::zyx(2, 2, 2)),
        Given { outputs: false, rows: false, bounds: false, prefetch: false },
        &box3d2,
    )
    .expect("a choice");
    assert_eq!((open.layout, open.pattern.rows_per_warp()), (Layout::Planes(4), 4), "{open}");
    let star = choose_given(
        default_tile(Radius::zyx(1, 1, 1)),
        Given { outputs: false, rows: false, bounds: false, prefetch: false },
        &star3d1,
    )
    .expect("a choice");
    assert_eq!((star.layout, star.pattern.rows_per_warp()), (Layout::Planes(4), 4), "{star}");

    let star2d1 = grid_sum(Radius::yx(1, 1), false);
    let choice = choose(default_tile(Radius::yx(1, 1)), false, &star2d1).expect("a choice");
    assert_eq!(choice.pattern.min_blocks_per_sm(), Some(4), "2D star r = 1\n{choice}");
    let fixed = default_tile(Radius::zyx(2, 2, 2)).with_launch_bounds(256, Some(1)).expect("bounds");
    assert_eq!(
        choose(fixed, false, &box3d2).expect("a choice").pattern.min_blocks_per_sm(),
        Some(1),
        "the user's bounds stay"
    );
    let line = Pattern::new(16, 32, 1, Boundary::Clamp).expect("valid");
    assert_eq!(
        choose(line, false, &box_body(16, ScalarType::F32)).expect("a choice").pattern.min_blocks_per_sm(),
        None,
        "1D"
    );
}

/// A 3D box at radius 1 (taps off the axes) gets staged planes of 4 warps x 2 rows, with the
/// ring's heads and tails, where the attribute left rows and launch bounds open; given ones stay.
/// A star at radius 1 gets 4 warps x 4 rows under 4 blocks per SM. The chosen kernel emulates
/// bit-exact.
#[test]
fn a_3d_box_at_radius_1_gets_staged_planes_of_four_warps_of_two_rows() {
    let radius = Radius::zyx(1, 1, 1);
    let tile = Pattern::grid(radius, 32, 4, Pattern::default_rows_per_warp(radius.dims()), 32, Boundary::Clamp)
        .expect("a pattern");
    let open = Given { outputs: false, rows: false, bounds: false, prefetch: false };
    let box3d1 = grid_sum(radius, true);
    let choice = choose_given(tile, open, &box3d1).expect("a choice");
    let p = choice.pattern;
    assert_eq!(
        (choice.layout, p.rows_per_warp(), p.threads_per_block(), p.min_blocks_per_sm()),
        (Layout::Planes(4), 2, 128, None),
        "{choice}"
    );
    let program = WarpProgram::compile_for(p, Strategy::RegisterCache, choice.layout, &box3d1).expect("compiles");
    assert_eq!(program.ring.map(|ring| ring.side), Some(1));
    let shape = [7usize, 11, 70];
    let input: Vec<f32> = awkward(shape.iter().product(), 5);
    let mut got = vec![poison::<f32>(); input.len()];
    program.emulate_grid(&[&input], shape.into(), &mut got, &[]).expect("emulates");
    let mut want = vec![poison::<f32>(); input.len()];
    let reference = WarpProgram::compile_for(p, Strategy::Naive, Layout::RoundRobin, &box3d1).expect("compiles");
    reference.emulate_grid(&[&input], shape.into(), &mut want, &[]).expect("emulates");
    assert_eq!(first_difference(&got, &want), None);
    // Given launch bounds (an explicit block of the default 256 threads too) and rows stay.
    for threads in [64, 256] {
        let given = Given { bounds: true, ..open };
        let bounded =
            choose_given(tile.with_launch_bounds(threads, None).expect("bounds"), given, &box3d1).expect("a choice");
        assert_eq!(
            (bounded.layout, bounded.pattern.threads_per_block(), bounded.pattern.rows_per_warp()),
            (Layout::Planes(4), threads, 2),
            "{bounded}"
        );
    }
    let rows = choose_given(tile, Given { outputs: false, rows: true, bounds: false, prefetch: false }, &box3d1)
        .expect("a choice");
    assert_eq!((rows.pattern.rows_per_warp(), rows.pattern.threads_per_block()), (tile.rows_per_warp(), 128), "{rows}");
    let star = choose_given(tile, open, &grid_sum(radius, false)).expect("a choice");
    let p = star.pattern;
    assert_eq!(
        (star.layout, p.rows_per_warp(), p.threads_per_block(), p.min_blocks_per_sm()),
        (Layout::Planes(4), 4, 128, Some(4)),
        "3D star r = 1\n{star}"
    );
}

/// A 3D star r = 2 (staged planes), with loads enough in flight at one vector, keeps one. 2D
/// tiles keep one vector (H200, bench/results/HISTORY.md: 2026-11-24-h200-grid2d4, call 3: star r = 1 under
/// 4 blocks 0.97 of the roofline against two vectors' 0.94), a box r = 2 evaluated input row
/// after input row under 4 blocks (0.89 of copy against two vectors' 0.82, call 1).
#[test]
fn grid_tiles_keep_one_vector_per_thread_where_it_keeps_loads_enough_in_flight() {
    let tile = |radius: Radius| {
        let dims = radius.dims();
        Pattern::grid(
            radius,
            32,
            4,
            Pattern::default_rows_per_warp(dims),
            Pattern::default_planes_per_warp(dims),
            Boundary::Clamp,
        )
        .expect("a pattern")
    };
    // Where one vector keeps loads enough in flight, the larger tile's registers are only a risk:
    // 3D star r = 2 with 8 outputs per thread spilled and ran at 0.45 of copy, 0.645 with 4.
    let star3d2 =
        choose(tile(Radius::zyx(2, 2, 2)), false, &star_sum_row_major(Radius::zyx(2, 2, 2))).expect("a choice");
    assert_eq!(star3d2.pattern.outputs_per_thread(), 4, "{star3d2}");
    let star2d1 = choose(tile(Radius::yx(1, 1)), false, &grid_sum(Radius::yx(1, 1), false)).expect("a choice");
    assert_eq!(
        (star2d1.layout, star2d1.pattern.outputs_per_thread(), star2d1.pattern.min_blocks_per_sm()),
        (Layout::Window(4), 4, Some(4)),
        "{star2d1}"
    );
    let box2d2 = choose(tile(Radius::yx(2, 2)), false, &grid_sum(Radius::yx(2, 2), true)).expect("a choice");
    assert_eq!((box2d2.pattern.outputs_per_thread(), box2d2.pattern.min_blocks_per_sm()), (4, Some(4)), "{box2d2}");
    let program = WarpProgram::compile_for(
        box2d2.pattern,
        Strategy::RegisterCache,
        box2d2.layout,
        &grid_sum(Radius::yx(2, 2), true),
    )
    .expect("compiles");
    assert!(program.evaluates_by_input_rows(), "{box2d2}");
    // Under the user's 3 blocks too: there its two vectors spilled 256 bytes (0.64 of copy
    // against 0.77).
    let capped = tile(Radius::yx(2, 2)).with_launch_bounds(256, Some(3)).expect("bounds");
    let box2d2 = choose(capped, false, &grid_sum(Radius::yx(2, 2), true)).expect("a choice");
    assert_eq!(box2d2.pattern.outputs_per_thread(), 4, "{box2d2}");
}
