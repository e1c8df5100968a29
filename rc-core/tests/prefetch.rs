//! The L2 prefetch of 2D tiles bound by issue (`rc_core::prefetch`): the distance a launch
//! passes, where the machine program puts the prefetch, what the PTX prints, that the emulation
//! is the same with or without it, which tiles the cost model gives it, and which patterns
//! refuse it.

mod common;

use common::grid_sum;
use rc_core::launch_map::LaunchMap;
use rc_core::machine::Kernel;
use rc_core::machine::{Op, Stmt, TileTest};
use rc_core::prefetch::rows_ahead;
use rc_core::{Boundary, Dims, Extent, LaunchShape, Layout, Pattern, PatternError, Radius, Strategy, WarpProgram};

/// 2D box r = 4's default tile: 4 outputs per lane, 4 rows per warp, 4-warp blocks.
fn box4_tile(boundary: Boundary) -> Pattern {
    Pattern::grid(Radius::yx(4, 4), 32, 4, 4, 1, boundary).and_then(|p| p.with_launch_bounds(128, None)).expect("valid")
}

/// The launch of `pattern` over an output of shape `output`.
fn launch(pattern: &Pattern, output: Extent) -> LaunchShape {
    let stacked = Layout::Window(4).stacks_warps(Strategy::RegisterCache, pattern);
    // A one-step launch's shape depends on the output alone.
    LaunchMap::new(*pattern, stacked)
        .launch_shape(Kernel::Whole, output, output, rc_core::OutputRows::all(output))
        .expect("fits")
        .expect("a launch")
}

/// Half the resident blocks over the block columns, rounded, in bands of the block's 16 rows:
/// the distances the H200 probes measured (132 SMs x 8 blocks of 4 warps; 128-output tiles).
#[test]
fn the_distance_is_half_the_resident_blocks_over_the_block_columns() {
    let pattern = box4_tile(Boundary::Clamp);
    let resident = 132 * 8;
    let rows = |rows: usize, cols: usize| rows_ahead(&pattern, resident, &launch(&pattern, Extent::yx(rows, cols)));
    // 64 columns: 1056 / 128 = 8.25 bands.
    assert_eq!(rows(8192, 8192), 8 * 16);
    // 256 columns: 2.06 bands; 512 columns: 1.03.
    assert_eq!(rows(2048, 32768), 2 * 16);
    assert_eq!(rows(1024, 65536), 16);
    // 8 columns: 66 bands.
    assert_eq!(rows(65536, 1024), 66 * 16);
    // Rounded to the nearest band: 1056 / (2 * 1408) = 0.375 bands is none, 1056 / (2 * 704) =
    // 0.75 is one.
    assert_eq!(rows(64, 1408 * 128), 0);
    assert_eq!(rows(64, 704 * 128), 16);
    // A partial column counts as a column: 65 columns, 8.12 bands.
    assert_eq!(rows(8192, 8193), 8 * 16);
    assert_eq!(rows_ahead(&pattern, 0, &launch(&pattern, Extent::yx(8192, 8192))), 0);
}

/// The statements the interior path of `program` starts with, and every prefetch anywhere.
fn prefetches(program: &WarpProgram) -> (Vec<Op>, usize) {
    let Some(Stmt::Branch { test: TileTest::Inside { .. }, taken, .. }) = program.machine.body.first() else {
        panic!("a 2D vector tile starts with its interior test: {:?}", program.machine.body.first());
    };
    let leading = taken.iter().map_while(|s| match s {
        Stmt::Op(op @ Op::PrefetchL2 { .. }) => Some(op.clone()),
        _ => None,
    });
    let mut all = 0;
    program.machine.visit(&mut |op| all += usize::from(matches!(op, Op::PrefetchL2 { .. })));
    (leading.collect(), all)
}

/// A prefetching 2D tile's interior path starts with one prefetch per input field of the input
/// rows its output rows centre on, in its own columns; no other path prefetches, and without `prefetch`
/// nothing does. The PTX loads `prefetch_rows`, tests it and each row against the input's
/// rows, and issues one `prefetch.global.L2` per round of 32 lines (box r = 4: 4 rows of 4 lines,
/// half the lanes); every 2D kernel declares the parameter.
#[test]
fn the_interior_path_prefetches_the_rows_its_outputs_centre_on_first() {
    for boundary in Boundary::ALL {
        let body = grid_sum(Radius::yx(4, 4), true);
        let pattern = box4_tile(boundary).with_prefetch(true).expect("2D");
        for layout in [Layout::Window(4), Layout::Granule(4)] {
            let program = WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &body).expect("compiles");
            let (leading, all) = prefetches(&program);
            // Box rows 4..8 of 12; 128 outputs, 512 bytes: 4 lines each, 16 lines in 1 round.
            assert_eq!(
                leading,
                [Op::PrefetchL2 { field: 0, first: 4, rows: 4, elements: 128 }],
                "{boundary}, {layout}"
            );
            assert_eq!(all, 1);
            assert!(program.machine.prefetches());
            let ptx = rc_core::ptx::print(&program, "k");
            assert_eq!(ptx.matches("prefetch.global.L2").count(), 1, "{boundary}, {layout}");
            assert!(ptx.contains(".param .u64 k_prefetch_rows"), "{ptx}");
            assert!(ptx.contains("ld.param.u64 %a") && ptx.contains("[k_prefetch_rows];"), "{ptx}");
            // 16 lines: lanes 16..32 have none.
            assert_eq!(ptx.matches("setp.lt.and.u32").count(), 1, "{ptx}");
            assert!(ptx.contains(", 16, %q"), "{ptx}");
            // Box row 4 centres the tile's first output row: tile_y + 4 under `valid` (box row 0
            // is tile_y), else tile_y itself (box row 0 is tile_y - 4), so no offset.
            let block = &ptx[ptx.find("// L2 prefetch").expect("printed")..];
            let first_lines: Vec<&str> = block.lines().take(6).collect();
            let offsets = first_lines.iter().filter(|l| l.contains("add.s64") && l.ends_with(", 4;")).count();
            assert_eq!(offsets, usize::from(boundary == Boundary::Valid), "{boundary}: {first_lines:?}");

            let plain = WarpProgram::compile_for(box4_tile(boundary), Strategy::RegisterCache, layout, &body)
                .expect("compiles");
            assert_eq!(prefetches(&plain), (Vec::new(), 0));
            let ptx = rc_core::ptx::print(&plain, "k");
            assert!(!ptx.contains("prefetch.global"), "{ptx}");
            assert!(ptx.contains(".param .u64 k_prefetch_rows"), "every 2D kernel takes the distance");
        }
    }
}

/// Rows of lines that do not fill the last round leave its last lanes out; f64 rows span twice
/// the lines.
#[test]
fn rounds_cover_every_line_and_no_more() {
    // 2D star r = 1, 5 rows per warp: 5 rows of 4 lines, 20 lines in one round.
    let body = grid_sum(Radius::yx(1, 1), false);
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 5, 1, Boundary::Zero)
        .and_then(|p| p.with_prefetch(true))
        .expect("valid");
    let program =
        WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
    assert_eq!(prefetches(&program).0, [Op::PrefetchL2 { field: 0, first: 1, rows: 5, elements: 128 }]);
    let ptx = rc_core::ptx::print(&program, "k");
    assert_eq!(ptx.matches("prefetch.global.L2").count(), 1);
    assert!(ptx.contains("setp.lt.and.u32 %q") && ptx.contains(", 20, %q"), "lanes 20..32 have no line: {ptx}");
    assert_eq!(rc_core::prefetch::rounds(5, 128, 4, 32), 1);
    assert_eq!(rc_core::prefetch::rounds(12, 128, 8, 32), 3);
    assert_eq!(rc_core::prefetch::lines_per_row(130, 4), 5);
}

/// The prefetch changes no value: the emulation of a prefetching tile is the emulation without
/// it, bit for bit, on grids with interior tiles, and equals the body evaluated point by point.
#[test]
fn a_prefetching_tile_emulates_as_the_tile_without_it() {
    let body = grid_sum(Radius::yx(4, 4), true);
    for boundary in Boundary::ALL {
        let plain = box4_tile(boundary);
        let with = plain.with_prefetch(true).expect("2D");
        for shape in [Extent::yx(70, 520), Extent::yx(9, 9), Extent::yx(33, 1024)] {
            let Ok(out_shape) = plain.output_shape(shape) else { continue };
            let n = shape.len().expect("fits");
            let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 * 0.125 - 50.0).collect();
            let run = |pattern: Pattern| {
                let program = WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body)
                    .expect("compiles");
                let mut out = vec![f32::NAN; out_shape.len().expect("fits")];
                program.emulate_grid(&[&input], shape, &mut out, &[]).expect("emulates");
                out.iter().map(|x| x.to_bits()).collect::<Vec<u32>>()
            };
            assert_eq!(run(with), run(plain), "{boundary}, {shape}");
        }
    }
}

/// The cost model gives the prefetch to 2D tiles bound by issue (box r = 4) and not to those
/// bound by DRAM (star r = 1); what the attribute gave stays.
#[test]
fn the_cost_model_prefetches_where_a_tile_is_bound_by_issue() {
    let choose = |radius: Radius, full_box: bool, pattern: Pattern, given: bool| {
        let given = rc_core::auto::Given { outputs: false, rows: false, bounds: false, prefetch: given };
        rc_core::auto::choose_given(pattern, given, &grid_sum(radius, full_box)).expect("a choice")
    };
    let default = |radius| Pattern::grid(radius, 32, 1, 4, 1, Boundary::Clamp).expect("valid");
    let box4 = choose(Radius::yx(4, 4), true, default(Radius::yx(4, 4)), false);
    assert!(box4.pattern.prefetches(), "{}", box4.pattern);
    let star1 = choose(Radius::yx(1, 1), false, default(Radius::yx(1, 1)), false);
    assert!(!star1.pattern.prefetches(), "{}", star1.pattern);
    // `prefetch = false` given: box r = 4 keeps it off; `true` given: star r = 1 keeps it on.
    assert!(!choose(Radius::yx(4, 4), true, default(Radius::yx(4, 4)), true).pattern.prefetches());
    let on = default(Radius::yx(1, 1)).with_prefetch(true).expect("2D");
    assert!(choose(Radius::yx(1, 1), false, on, true).pattern.prefetches());
    // 3D tiles never prefetch.
    let three = Pattern::grid(Radius::zyx(2, 2, 2), 32, 1, 4, 8, Boundary::Clamp).expect("valid");
    assert!(!choose(Radius::zyx(2, 2, 2), true, three, false).pattern.prefetches());
}

/// Only straight-line 2D tiles have the interior path a prefetch runs on: 1D, 3D and 2D tiles
/// that stream their rows refuse it, in either order of asking, and say what to write.
#[test]
fn only_straight_line_2d_tiles_prefetch() {
    let one = Pattern::new(2, 32, 1, Boundary::Zero).expect("valid");
    let err = one.with_prefetch(true).expect_err("1D");
    assert_eq!(err, PatternError::Prefetch { dims: Dims::One, stream_rows: false });
    assert_eq!(
        err.to_string(),
        "prefetch = true prefetches the rows a 2D tile's later bands read, but this stencil is 1D (a tile has no rows below it): remove `prefetch`"
    );
    assert_eq!(one.with_prefetch(false).map(|p| p.prefetches()), Ok(false));
    let three = Pattern::grid(Radius::zyx(1, 1, 1), 32, 1, 2, 4, Boundary::Zero).expect("valid");
    assert!(three.with_prefetch(true).expect_err("3D").to_string().contains("is 3D"));
    let two = Pattern::grid(Radius::yx(1, 1), 32, 1, 8, 1, Boundary::Zero).expect("valid");
    let streamed = two.with_streamed_rows(true).expect("2D");
    let err = streamed.with_prefetch(true).expect_err("streamed");
    assert!(err.to_string().contains("streams its rows (stream = true)"), "{err}");
    let err = two.with_prefetch(true).and_then(|p| p.with_streamed_rows(true)).expect_err("streamed after");
    assert_eq!(err, PatternError::Prefetch { dims: Dims::Two, stream_rows: true });
    let on = two.with_prefetch(true).expect("2D");
    assert!(on.prefetches() && on.to_string().contains(", prefetch,"), "{on}");
}

/// A stencil of two input fields prefetches each field's rows from that field's buffer.
#[test]
fn each_input_field_prefetches_its_own_rows() {
    use rc_core::body::{BinaryOp, Body, Node};
    use rc_core::{Offset, ScalarType};
    let nodes =
        vec![Node::Tap(0, Offset::yx(-1, 0)), Node::Tap(1, Offset::yx(1, 1)), Node::Binary(BinaryOp::Add, 0, 1)];
    let body = Body::new(ScalarType::F32, 2, vec![], Radius::yx(1, 1), nodes, vec![2]).expect("valid");
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 4, 1, Boundary::Clamp)
        .and_then(|p| p.with_prefetch(true))
        .expect("valid");
    let program =
        WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Granule(4), &body).expect("compiles");
    let field = |field| Op::PrefetchL2 { field, first: 1, rows: 4, elements: 128 };
    assert_eq!(prefetches(&program).0, [field(0), field(1)]);
    let ptx = rc_core::ptx::print(&program, "k");
    assert!(ptx.contains("// L2 prefetch of field 1:"), "{ptx}");
    // Field 1's pointer register, loaded in the prologue, is the base of its prefetch.
    let input1 = ptx
        .lines()
        .find(|l| l.contains("[k_input1];"))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("loads input1");
    let input1 = input1.trim_end_matches(',');
    let after = &ptx[ptx.find("// L2 prefetch of field 1:").expect("printed")..];
    assert!(
        after.lines().take(16).any(|l| l.contains("mad.lo.u64") && l.ends_with(&format!("4, {input1};"))),
        "{after}"
    );
}

/// `explain()` says what a prefetching tile asks of L2 and where the distance comes from; a tile
/// without the prefetch says nothing of it.
#[test]
fn explain_says_what_the_tile_prefetches() {
    let body = grid_sum(Radius::yx(4, 4), true);
    let explain = |pattern: Pattern| {
        let program =
            WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
        rc_core::Explanation::new("box9", &program).to_string()
    };
    let text = explain(box4_tile(Boundary::Clamp).with_prefetch(true).expect("2D"));
    assert!(
        text.contains(
            "prefetch: an interior tile first asks L2 for the lines of the 4 input rows its output rows centre on x its 128 columns (4 lines of 128 bytes each) prefetch_rows below its own, which the launch passes: half the blocks resident on the GPU over the grid's block columns, in bands of 16 rows"
        ),
        "{text}"
    );
    assert!(!explain(box4_tile(Boundary::Clamp)).contains("prefetch"));
}
