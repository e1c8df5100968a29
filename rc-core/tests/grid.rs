//! 2D and 3D warp programs, emulated, against the body evaluated point by point under the
//! boundary rule in each dimension: every distribution and strategy, tile shapes, grid shapes
//! smaller than a tile, one row, one column, and every boundary.

mod common;

use common::grid_taps as taps;
use rc_core::abi::KernelParam;
use rc_core::body::{BinaryOp, Body, Node};
use rc_core::launch_map::TileOrder;
use rc_core::machine::Kernel;
use rc_core::{
    Boundary, Extent, Layout, Offset, OutputRows, Pattern, Radius, Scalar, ScalarType, Strategy, WarpProgram,
};

/// A sum of `taps` with distinct weights (so a misplaced tap shows), over f32.
fn weighted(radius: Radius, taps: &[Offset]) -> Body {
    let mut nodes = Vec::new();
    let mut acc = None;
    for (k, &d) in taps.iter().enumerate() {
        nodes.push(Node::Tap(0, d));
        nodes.push(Node::Const(Scalar::f32(1.0 + k as f32 * 0.25)));
        nodes.push(Node::Binary(BinaryOp::Mul, nodes.len() as u32 - 2, nodes.len() as u32 - 1));
        let term = nodes.len() as u32 - 1;
        acc = Some(match acc {
            None => term,
            Some(a) => {
                nodes.push(Node::Binary(BinaryOp::Add, a, term));
                nodes.len() as u32 - 1
            }
        });
    }
    let result = acc.expect("taps");
    Body::new(ScalarType::F32, 1, vec![], radius, nodes, vec![result]).expect("a valid body")
}

/// A plain sum times 1 / taps: one add per tap (the benchmark's body).
fn mean(radius: Radius, taps: &[Offset]) -> Body {
    let mut nodes: Vec<Node> = taps.iter().map(|&d| Node::Tap(0, d)).collect();
    let mut acc = 0u32;
    for t in 1..taps.len() as u32 {
        nodes.push(Node::Binary(BinaryOp::Add, acc, t));
        acc = nodes.len() as u32 - 1;
    }
    nodes.push(Node::Const(Scalar::f32(1.0 / taps.len() as f32)));
    nodes.push(Node::Binary(BinaryOp::Mul, acc, nodes.len() as u32 - 1));
    Body::new(ScalarType::F32, 1, vec![], radius, nodes.clone(), vec![nodes.len() as u32 - 1]).expect("valid")
}

fn reference(body: &Body, pattern: Pattern, input: &[f32], shape: Extent) -> Vec<f32> {
    let out = pattern.output_shape(shape).expect("an output");
    let radius = pattern.radius();
    let dims = radius.dims().count();
    let lens = out.components();
    (0..out.len().expect("fits"))
        .map(|o| {
            let mut rest = o;
            let mut centre = vec![0i64; dims];
            for axis in (0..dims).rev() {
                let ax = dims - 1 - axis;
                centre[axis] = (rest % lens[axis]) as i64 + (radius.along(ax) - pattern.shift_along(ax)) as i64;
                rest /= lens[axis];
            }
            let tap = |_: u32, d: Offset| {
                let at: Vec<i64> = centre.iter().zip(d.components()).map(|(&c, d)| c + d as i64).collect();
                Scalar::f32(pattern.boundary().locate(shape, &at).map_or(0.0, |i| input[i]))
            };
            f32::from_bits(body.eval(tap, &[])[0].bits as u32)
        })
        .collect()
}

fn check(body: &Body, pattern: Pattern, strategy: Strategy, layout: Layout, shapes: &[Extent]) {
    let program = match WarpProgram::compile_for(pattern, strategy, layout, body) {
        Ok(p) => p,
        Err(e) => panic!("{pattern} {strategy} {layout}: {e}"),
    };
    for &shape in shapes {
        if pattern.output_shape(shape).is_err() {
            continue;
        }
        let n = shape.len().expect("fits");
        let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 * 0.125 - 50.0).collect();
        let want = reference(body, pattern, &input, shape);
        let mut got = vec![f32::NAN; want.len()];
        if let Err(e) = program.emulate_grid(&[&input], shape, &mut got, &[]) {
            panic!("{pattern} {strategy} {layout} shape {shape}: {e}");
        }
        let bad = want.iter().zip(&got).position(|(a, b)| a.to_bits() != b.to_bits());
        assert!(
            bad.is_none(),
            "{pattern} {strategy} {layout} shape {shape}: output {bad:?}: want {:?} got {:?}",
            bad.map(|i| want[i]),
            bad.map(|i| got[i])
        );
    }
}

#[test]
fn two_d_stencils_emulate_their_reference_in_every_layout_and_boundary() {
    let shapes: Vec<Extent> =
        [[1, 1], [1, 40], [40, 1], [3, 5], [9, 130], [17, 257], [33, 64]].into_iter().map(Extent::from).collect();
    for (radius, star) in
        [(Radius::yx(1, 1), true), (Radius::yx(1, 1), false), (Radius::yx(2, 1), false), (Radius::yx(1, 3), true)]
    {
        let body = weighted(radius, &taps(radius, star));
        for boundary in Boundary::ALL {
            for (outputs, rows, layout, strategy) in [
                (1, 1, Layout::RoundRobin, Strategy::RegisterCache),
                (2, 4, Layout::RoundRobin, Strategy::RegisterCache),
                (4, 3, Layout::Granule(4), Strategy::RegisterCache),
                (4, 8, Layout::Window(4), Strategy::RegisterCache),
                (2, 2, Layout::RoundRobin, Strategy::Naive),
                (2, 3, Layout::RoundRobin, Strategy::SharedMemory),
            ] {
                let pattern = Pattern::grid(radius, 32, outputs, rows, 1, boundary).expect("valid");
                check(&body, pattern, strategy, layout, &shapes);
            }
        }
    }
}

/// A 2D tile that streams its rows is the 3D pipeline on `[rows, 1, cols]`: the same outputs,
/// bit for bit, for every boundary, radius and distribution, and for shapes shorter than a
/// tile's rows or its halo.
#[test]
fn two_d_tiles_that_stream_their_rows_emulate_their_reference() {
    let shapes: Vec<Extent> = [[1, 1], [1, 40], [40, 1], [3, 5], [9, 130], [17, 257], [70, 33], [100, 392], [75, 520]]
        .into_iter()
        .map(Extent::from)
        .collect();
    for (radius, star) in
        [(Radius::yx(1, 1), true), (Radius::yx(2, 2), false), (Radius::yx(3, 1), false), (Radius::yx(1, 4), true)]
    {
        let body = weighted(radius, &taps(radius, star));
        for boundary in Boundary::ALL {
            for (outputs, rows, layout) in [
                (1, 1, Layout::RoundRobin),
                (2, 5, Layout::RoundRobin),
                (4, 16, Layout::Granule(4)),
                (4, 32, Layout::Window(4)),
                (8, 3, Layout::Window(4)),
            ] {
                let pattern = Pattern::grid(radius, 32, outputs, rows, 1, boundary)
                    .and_then(|p| p.with_streamed_rows(true))
                    .expect("valid");
                let program =
                    WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &body).expect("compiles");
                assert!(program.pipeline.is_some() || rows == 1, "{pattern}: rows are steps of a pipelined loop");
                check(&body, pattern, Strategy::RegisterCache, layout, &shapes);
            }
        }
    }
}

#[test]
fn three_d_stencils_emulate_their_reference() {
    let shapes: Vec<Extent> = [[1, 1, 1], [2, 3, 70], [5, 6, 7], [9, 4, 33]].into_iter().map(Extent::from).collect();
    for (radius, star) in [(Radius::zyx(1, 1, 1), true), (Radius::zyx(1, 1, 1), false), (Radius::zyx(1, 2, 1), true)] {
        let body = weighted(radius, &taps(radius, star));
        for boundary in Boundary::ALL {
            for (outputs, rows, planes, layout, strategy) in [
                (1, 1, 1, Layout::RoundRobin, Strategy::RegisterCache),
                (4, 2, 3, Layout::Granule(4), Strategy::RegisterCache),
                (1, 2, 2, Layout::RoundRobin, Strategy::SharedMemory),
                (1, 1, 2, Layout::RoundRobin, Strategy::Naive),
            ] {
                let pattern = Pattern::grid(radius, 32, outputs, rows, planes, boundary).expect("valid");
                check(&body, pattern, strategy, layout, &shapes);
            }
        }
    }
}

/// The kernels the GPU-facing tests below print for a weighted star or box of `radius`: 3 rows
/// (and 5 planes in 3D, streamed along z) per warp, every boundary, round-robin, 16-byte granules and windows, and
/// the two baselines; in 2D also 16-byte windows with 7 rows streamed.
fn gpu_kernels(radius: Radius, star: bool) -> (Body, Vec<(Pattern, Strategy, Layout, WarpProgram)>) {
    let body = weighted(radius, &taps(radius, star));
    let (rows, planes) = (3, if radius.dims() == rc_core::Dims::Three { 5 } else { 1 });
    let mut kernels = Vec::new();
    for boundary in Boundary::ALL {
        for (outputs, layout, strategy) in [
            (2, Layout::RoundRobin, Strategy::RegisterCache),
            (4, Layout::Granule(4), Strategy::RegisterCache),
            (4, Layout::Window(4), Strategy::RegisterCache),
            (1, Layout::RoundRobin, Strategy::Naive),
            (1, Layout::RoundRobin, Strategy::SharedMemory),
        ] {
            let pattern = Pattern::grid(radius, 32, outputs, rows, planes, boundary).expect("valid");
            // 2D windows prefetch into L2 from their interior path (granules do not): both paths
            // run on the GPU.
            let pattern = match (radius.dims(), layout) {
                (rc_core::Dims::Two, Layout::Window(_)) => pattern.with_prefetch(true).expect("a 2D tile"),
                _ => pattern,
            };
            let program = WarpProgram::compile_for(pattern, strategy, layout, &body).expect("compiles");
            assert_eq!(program.machine.prefetches(), pattern.prefetches(), "{pattern}");
            kernels.push((pattern, strategy, layout, program));
        }
        if radius.dims() == rc_core::Dims::Three {
            // Staged planes: blocks of 4 warps stacked along y (12 rows), a ring of input planes.
            let pattern = Pattern::grid(radius, 32, 4, rows, planes, boundary)
                .and_then(|p| p.with_launch_bounds(128, None))
                .expect("valid");
            let program =
                WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Planes(4), &body).expect("compiles");
            kernels.push((pattern, Strategy::RegisterCache, Layout::Planes(4), program));
            // Blocks of 8 warps of 4 rows: a ring past 48 KiB, in dynamic shared memory.
            let pattern = Pattern::grid(radius, 32, 4, 4, planes, boundary)
                .and_then(|p| p.with_launch_bounds(256, None))
                .expect("valid");
            let program =
                WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Planes(4), &body).expect("compiles");
            assert!(
                program.machine.dynamic_shared_bytes() > 48 * 1024,
                "{pattern}: {:?}",
                program.machine.shared_bytes
            );
            kernels.push((pattern, Strategy::RegisterCache, Layout::Planes(4), program));
        }
        if radius.dims() == rc_core::Dims::Two {
            let pattern =
                Pattern::grid(radius, 32, 4, 7, 1, boundary).and_then(|p| p.with_streamed_rows(true)).expect("valid");
            let program =
                WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
            kernels.push((pattern, Strategy::RegisterCache, Layout::Window(4), program));
        }
    }
    (body, kernels)
}

/// Every configuration above prints a kernel ptxas accepts (CI sets RC_PTXAS), with the 2D/3D
/// parameter list and no 1D-only addressing.
#[test]
fn two_and_three_d_kernels_assemble() {
    let mut kernels = Vec::new();
    for (radius, star) in [
        (Radius::yx(1, 1), true),
        (Radius::yx(2, 1), false),
        (Radius::zyx(1, 1, 1), true),
        (Radius::zyx(1, 2, 1), false),
    ] {
        for (pattern, strategy, layout, program) in gpu_kernels(radius, star).1 {
            let ptx = rc_core::ptx::print(&program, "k");
            assert!(ptx.contains(".param .u64 k_in_y") && ptx.contains(".param .u64 k_out_x"), "{ptx}");
            kernels.push((format!("{pattern} {strategy} {layout}"), ptx));
        }
    }
    let Some(ptxas) = std::env::var_os("RC_PTXAS") else { return };
    for (i, (what, ptx)) in kernels.iter().enumerate() {
        let file = std::env::temp_dir().join(format!("rc-grid-{}-{i}.ptx", std::process::id()));
        std::fs::write(&file, ptx).expect("writes the PTX");
        let out = std::process::Command::new(&ptxas)
            .args(["-arch=sm_90", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("runs ptxas");
        assert!(out.status.success(), "ptxas refused {what}: {}\n{ptx}", String::from_utf8_lossy(&out.stderr));
        let _ = std::fs::remove_file(&file);
    }
}

/// The launch map stacks a block's warps along y where the layout says so (2D windows and
/// granules of the register cache in bands, staged planes in numbered blocks), and numbers one
/// tile per warp, row-major, everywhere else (round-robin, the baselines, streamed rows, 3D
/// register tiles, fused time steps); the PTX prints the map's numbering. Every launch's warps
/// cover every tile exactly once. A grid of 13 tile rows by 16 tiles tells the launches apart
/// (32 blocks stacked, 26 row-major).
#[test]
fn the_launch_map_stacks_warps_where_the_layout_says_and_places_every_tile_once() {
    let shapes = [
        (Radius::yx(1, 1), Extent::yx(13 * 3, 16 * 128 - 5)),
        (Radius::zyx(1, 1, 1), Extent::zyx(10, 13 * 3, 16 * 128 - 5)),
    ];
    for (radius, shape) in shapes {
        let (_, kernels) = gpu_kernels(radius, true);
        for (pattern, strategy, layout, program) in kernels {
            let what = format!("{pattern} {strategy} {layout}");
            let ptx = rc_core::ptx::print(&program, "k");
            let out_shape = pattern.output_shape(shape).expect("an output");
            let launch = program
                .launch_shape(Kernel::Whole, shape, out_shape, OutputRows::all(out_shape))
                .expect("fits")
                .expect("a launch");
            let stacked = pattern.stacked_launch_shape(out_shape).expect("fits");
            let expected = layout.stacks_warps(strategy, &pattern);
            let numbers_blocks = ptx.contains("computes block tile b");
            assert_eq!((program.launch.stacks_warps(), numbers_blocks), (expected, expected), "{what}");
            assert_eq!(launch == stacked, expected, "{what}");
            let order = program.launch.order;
            match (expected, radius.dims()) {
                (true, rc_core::Dims::Two) => assert_eq!(order, TileOrder::Bands, "{what}"),
                (true, _) => assert_eq!(order, TileOrder::StackedBlocks, "{what}"),
                (false, _) => assert_eq!(order, TileOrder::RowMajor, "{what}"),
            }
            let wanted = matches!(layout, Layout::Planes(_))
                || (radius.dims() == rc_core::Dims::Two
                    && strategy == Strategy::RegisterCache
                    && layout != Layout::RoundRobin
                    && !pattern.streams_rows());
            assert_eq!(expected, wanted, "{what}");
            let lifted = (pattern.lifted_shape(shape), pattern.lifted_shape(out_shape));
            let tile = program.pattern.tile().components().into_iter().rev().collect::<Vec<_>>();
            let tiles = program.pattern.tiles_along(lifted.1).components().into_iter().rev().collect::<Vec<_>>();
            let out = lifted.1.components().into_iter().rev().collect::<Vec<_>>();
            let mut placed = std::collections::HashSet::new();
            for warp in program.launch.warps(launch, lifted.0, lifted.1, rc_core::OutputRows::all(lifted.1)) {
                if warp.start.iter().zip(&out).any(|(&s, &n)| s >= n as u64) {
                    continue;
                }
                let at: Vec<u64> = warp.start.iter().zip(&tile).map(|(&s, &t)| s / t as u64).collect();
                assert!(warp.start.iter().zip(&tile).all(|(&s, &t)| s % t as u64 == 0), "{what}: {warp:?}");
                assert!(placed.insert(at), "{what}: {warp:?} runs a tile another warp runs");
            }
            assert_eq!(placed.len(), tiles.iter().product::<usize>(), "{what}: tiles placed");
        }
    }
    // Fused time steps launch over their own pattern, row-major (2D: edge strips first).
    let radius = Radius::yx(1, 1);
    let body = weighted(radius, &taps(radius, true));
    let pattern = Pattern::grid(radius, 32, 4, 4, 1, Boundary::Clamp).expect("valid");
    let fused = WarpProgram::compile_steps(pattern, &body, 4).expect("compiles");
    assert!(!fused.launch.stacks_warps() && !rc_core::ptx::print(&fused, "k").contains("computes block tile b"));
    assert!(matches!(fused.launch.order, TileOrder::EdgesFirst(_)));
}

/// A 2D launch of stacked block tiles is a grid of the block tiles along x by the bands of
/// rows, the bands past 65535 (CUDA's most along y) folded into z; staged planes stay a 1D grid.
#[test]
fn a_2d_launch_is_a_grid_of_columns_by_bands() {
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 4, 1, Boundary::Clamp).expect("valid");
    let band = 4 * pattern.tiles_per_block() as usize;
    let shape = |rows: usize, cols: usize| pattern.stacked_launch_shape(Extent::yx(rows, cols)).expect("fits");
    assert_eq!(shape(3 * band, 1000).grid, [8, 3, 1]);
    assert_eq!(shape(3 * band + 1, 128).grid, [1, 4, 1]);
    assert_eq!(shape(65_535 * band, 4).grid, [1, 65_535, 1]);
    assert_eq!(shape(65_535 * band + 1, 4).grid, [1, 65_535, 2]);
    assert_eq!(shape(70_000 * band, 4).blocks(), 2 * 65_535);
    let planes = Pattern::grid(Radius::zyx(1, 1, 1), 32, 4, 4, 1, Boundary::Clamp).expect("valid");
    assert_eq!(planes.stacked_launch_shape(Extent::zyx(3, 4 * band, 300)).expect("fits").grid, [3 * 4 * 3, 1, 1]);
}

/// A 2D or 3D row holds at most 2^32 - 1 elements (the kernels step between rows in 32-bit
/// lengths): a longer one is a length error naming the limit.
#[test]
fn rows_longer_than_32_bits_are_refused() {
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 4, 1, Boundary::Clamp).expect("valid");
    let max = Pattern::MAX_ROW;
    assert_eq!(pattern.output_shape(Extent::yx(2, max)), Ok(Extent::yx(2, max)));
    let long = Extent::yx(2, max + 1);
    let e = pattern.output_shape(long).expect_err("too long");
    assert_eq!(e, rc_core::LengthError::RowTooLong { shape: long, got: max + 1, max });
    assert!(e.to_string().contains("at most 4294967295") && e.to_string().contains("1D stencil"), "{e}");
}

/// What the GPU cases' outputs hold before a launch (a quiet NaN), and keep outside the rows a
/// launch over a sub-grid computes (docs/gpu-runs/grid_cases.py fills the output with it).
const GPU_CASE_POISON: u32 = 0x7FC0_DEAD;

/// With RC_GRID_CASES=DIR: writes each configuration's PTX, the emulated output (of the input
/// below, which the checker computes itself; every fourth case over a sub-grid of rows, the
/// others poison), the launch, and the kernel's scalar arguments in its parameter order (for a
/// GPU without Rust to check the PTX against the emulation; see docs/gpu-runs/grid_cases.py).
/// Without it, nothing.
#[test]
fn write_gpu_cases() {
    let Some(dir) = std::env::var_os("RC_GRID_CASES").map(std::path::PathBuf::from) else { return };
    std::fs::create_dir_all(&dir).expect("creates the folder");
    let mut index = String::new();
    let configs: [(Radius, bool, Vec<Extent>); 6] = [
        (
            Radius::yx(1, 1),
            true,
            vec![
                Extent::yx(300, 520),
                Extent::yx(7, 13),
                Extent::yx(1, 300),
                Extent::yx(301, 1),
                Extent::yx(130, 1026),
            ],
        ),
        (Radius::yx(2, 1), false, vec![Extent::yx(517, 640), Extent::yx(33, 130)]),
        // A box wider than tall: its tiles evaluate input row after input row.
        (Radius::yx(1, 2), false, vec![Extent::yx(131, 264), Extent::yx(5, 70), Extent::yx(40, 9)]),
        // With interior tiles along every dimension (rows a whole number of vectors): the vector
        // path.
        (
            Radius::zyx(1, 1, 1),
            true,
            vec![
                Extent::zyx(20, 30, 64),
                Extent::zyx(3, 5, 7),
                Extent::zyx(9, 17, 70),
                Extent::zyx(20, 12, 392),
                Extent::zyx(7, 75, 140),
            ],
        ),
        (Radius::zyx(1, 2, 1), false, vec![Extent::zyx(20, 33, 128), Extent::zyx(20, 14, 264)]),
        // Two along x: staged planes read each lane's window as 2 + 4 + 2 elements.
        (Radius::zyx(2, 1, 2), true, vec![Extent::zyx(11, 21, 136), Extent::zyx(6, 9, 30)]),
    ];
    let mut k = 0;
    for (radius, star, shapes) in configs {
        let (body, kernels) = gpu_kernels(radius, star);
        for (pattern, strategy, layout, program) in kernels {
            let ptx = rc_core::ptx::print(&program, "k");
            for &shape in &shapes {
                let Ok(out_shape) = pattern.output_shape(shape) else { continue };
                let n = shape.len().expect("fits");
                let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 * 0.125 - 50.0).collect();
                let mut got = vec![0.0f32; out_shape.len().expect("fits")];
                program.emulate_grid(&[&input], shape, &mut got, &[]).expect("emulates");
                let whole = reference(&body, pattern, &input, shape);
                assert_eq!(got, whole, "emulation of {pattern}");
                // Every fourth case a launch over the middle third of the rows (the rest of the
                // output keeps the poison the script fills it with); the others every row.
                let outer = out_shape.components()[0];
                let rows = match k % 4 {
                    3 => OutputRows::of(out_shape, outer / 3, outer - outer / 3).expect("rows of the output"),
                    _ => OutputRows::all(out_shape),
                };
                let mut got = vec![f32::from_bits(GPU_CASE_POISON); got.len()];
                let range = Some(rows.first..rows.end);
                program.emulate_grid_rows(&[&input], shape, range, &mut [&mut got], &[]).expect("emulates");
                let row_len = whole.len() / outer;
                assert_eq!(
                    got[rows.first * row_len..rows.end * row_len],
                    whole[rows.first * row_len..rows.end * row_len]
                );
                let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
                std::fs::write(dir.join(format!("{k}.ptx")), &ptx).expect("writes");
                std::fs::write(dir.join(format!("{k}.want")), bytes(&got)).expect("writes");
                let launch =
                    program.launch_shape(Kernel::Whole, shape, out_shape, rows).expect("fits").expect("a launch");
                let dims = |e: Extent| e.components().iter().map(|c| c.to_string()).collect::<Vec<_>>().join("x");
                // 2D kernels' prefetch distance: none, about half the rows, past the last row.
                let prefetch_rows = (k % 3) as u64 * (out_shape.along(1) as u64 / 2 + 1);
                // The scalars after the buffers, in the kernel's parameter order (the ABI's).
                let scalars: Vec<String> = KernelParam::list(pattern.dims(), 1, 1, &[])
                    .into_iter()
                    .filter_map(|param| match param {
                        KernelParam::Len => Some(shape.len().expect("fits") as u64),
                        KernelParam::OutputLen => Some(out_shape.len().expect("fits") as u64),
                        KernelParam::Extent { axis, output: false } => Some(shape.along(axis as usize) as u64),
                        KernelParam::Extent { axis, output: true } => {
                            Some(rows.given(out_shape).along(axis as usize) as u64)
                        }
                        KernelParam::FirstRow => Some(rows.first as u64),
                        KernelParam::PrefetchRows => Some(prefetch_rows),
                        KernelParam::Input { .. } | KernelParam::Output { .. } | KernelParam::Value { .. } => None,
                    })
                    .map(|value| value.to_string())
                    .collect();
                index.push_str(&format!(
                    "{k} {} {} {} {} {} {} {}\n",
                    dims(shape),
                    dims(out_shape),
                    launch.grid.map(|b| b.to_string()).join(","),
                    launch.threads_per_block,
                    format!("{pattern}|{strategy}|{layout}|rows_{}..{}", rows.first, rows.end).replace(' ', "_"),
                    program.machine.dynamic_shared_bytes(),
                    scalars.join(",")
                ));
                k += 1;
            }
        }
    }
    std::fs::write(dir.join("index.txt"), index).expect("writes the index");
}

/// Every 2D and 3D kernel the GPU cases print reads only registers set on every path to the
/// read (`rc_core::ptx::defined`): what the emulation cannot see of the printer.
#[test]
fn printed_kernels_read_no_register_a_path_leaves_unset() {
    let configs = [
        (Radius::yx(1, 1), true),
        (Radius::yx(2, 1), false),
        (Radius::yx(1, 2), false),
        (Radius::zyx(1, 1, 1), true),
        (Radius::zyx(1, 2, 1), false),
        (Radius::zyx(2, 1, 2), true),
    ];
    for (radius, star) in configs {
        for (pattern, strategy, layout, program) in gpu_kernels(radius, star).1 {
            let unset = rc_core::ptx::defined::unset_reads(&rc_core::ptx::print(&program, "k"));
            let lines: Vec<String> = unset.iter().map(|r| r.to_string()).collect();
            assert!(unset.is_empty(), "{pattern} {strategy} {layout}:\n{}", lines.join("\n"));
        }
    }
}

/// With RC_GRID_PERF=DIR: writes the PTX of the tile shapes a 2D/3D benchmark tries, with the
/// launch for a large grid, for a GPU without Rust to time (docs/gpu-runs/grid_perf.py).
#[test]
fn write_perf_cases() {
    let Some(dir) = std::env::var_os("RC_GRID_PERF").map(std::path::PathBuf::from) else { return };
    std::fs::create_dir_all(&dir).expect("creates the folder");
    let mut index = String::new();
    let mut k = 0;
    let kinds: Vec<(&str, Radius, bool, Extent)> = vec![
        ("star1", Radius::yx(1, 1), true, Extent::yx(8192, 8192)),
        ("box1", Radius::yx(1, 1), false, Extent::yx(8192, 8192)),
        ("star2", Radius::yx(2, 2), true, Extent::yx(8192, 8192)),
        ("box2", Radius::yx(2, 2), false, Extent::yx(8192, 8192)),
        ("star4", Radius::yx(4, 4), true, Extent::yx(8192, 8192)),
        ("box4", Radius::yx(4, 4), false, Extent::yx(8192, 8192)),
        ("star3d1", Radius::zyx(1, 1, 1), true, Extent::zyx(512, 512, 512)),
        ("box3d1", Radius::zyx(1, 1, 1), false, Extent::zyx(512, 512, 512)),
        ("star3d2", Radius::zyx(2, 2, 2), true, Extent::zyx(512, 512, 512)),
        ("box3d2", Radius::zyx(2, 2, 2), false, Extent::zyx(512, 512, 512)),
    ];
    for (name, radius, star, shape) in kinds {
        let body = mean(radius, &taps(radius, star));
        let three = radius.dims() == rc_core::Dims::Three;
        // (strategy, layout, outputs, rows, planes, min_blocks_per_sm)
        type Tile = (Strategy, Layout, u32, u32, u32, Option<u32>);
        let rc = Strategy::RegisterCache;
        let mut tiles: Vec<Tile> = if three {
            // One plane per warp, and tiles streaming 8 to 64 planes along z.
            let mut tiles = vec![
                (rc, Layout::Window(4), 4, 4, 1, None),
                (rc, Layout::Window(4), 4, 8, 1, Some(3)),
                (rc, Layout::RoundRobin, 1, 4, 1, Some(4)),
            ];
            for rows in [1, 2, 4] {
                for planes in [16, 32, 64] {
                    for min_blocks in [None, Some(2), Some(3)] {
                        tiles.push((rc, Layout::Window(4), 4, rows, planes, min_blocks));
                    }
                }
            }
            // Two vectors per thread along x, with and without two-block launch bounds.
            for rows in [1, 2] {
                for planes in [16, 32] {
                    for min_blocks in [None, Some(2)] {
                        tiles.push((rc, Layout::Window(4), 8, rows, planes, min_blocks));
                    }
                }
            }
            tiles.push((rc, Layout::Granule(4), 4, 2, 16, None));
            tiles.push((rc, Layout::Window(2), 2, 2, 16, None));
            tiles
        } else {
            let mut tiles = vec![
                (rc, Layout::Window(4), 4, 8, 1, None),
                (rc, Layout::Window(4), 4, 4, 1, None),
                (rc, Layout::Window(4), 4, 4, 1, Some(2)),
                (rc, Layout::Window(4), 4, 4, 1, Some(3)),
                (rc, Layout::Window(4), 4, 4, 1, Some(4)),
                (rc, Layout::Window(4), 4, 8, 1, Some(2)),
                (rc, Layout::Window(4), 4, 8, 1, Some(3)),
                (rc, Layout::Window(4), 4, 8, 1, Some(4)),
                (rc, Layout::Window(4), 4, 16, 1, Some(3)),
                (rc, Layout::Window(4), 4, 16, 1, Some(2)),
                (rc, Layout::Window(4), 8, 8, 1, Some(2)),
                (rc, Layout::Window(2), 2, 8, 1, Some(4)),
                (rc, Layout::RoundRobin, 1, 8, 1, Some(4)),
            ];
            // Two vectors per thread (side by side or one window of 8) under every bound: on an
            // H200 the H100's choice (one vector) issues too many instructions per output.
            for (layout, rows, min_blocks) in [
                (4, 4, None),
                (4, 4, Some(2)),
                (4, 4, Some(3)),
                (4, 4, Some(4)),
                (4, 2, Some(3)),
                (4, 2, Some(4)),
                (4, 8, Some(3)),
                (8, 4, Some(2)),
                (8, 4, Some(3)),
                (8, 2, Some(4)),
            ] {
                tiles.push((rc, Layout::Window(layout), 8, rows, 1, min_blocks));
            }
            tiles.push((rc, Layout::Window(4), 4, 2, 1, Some(4)));
            tiles.push((rc, Layout::Window(4), 4, 8, 1, Some(5)));
            tiles.push((rc, Layout::Window(4), 4, 16, 1, Some(4)));
            for (outputs, rows, min_blocks) in
                [(4, 4, Some(4)), (4, 8, Some(4)), (4, 4, Some(3)), (8, 4, Some(3)), (8, 4, Some(4))]
            {
                tiles.push((rc, Layout::Granule(4), outputs, rows, 1, min_blocks));
            }
            tiles.push((rc, Layout::Window(8), 8, 64, 0, Some(2)));
            tiles.push((rc, Layout::Window(8), 8, 64, 0, Some(3)));
            tiles.push((rc, Layout::Window(4), 8, 128, 0, Some(2)));
            // Rows streamed (one per step, partial results carried): planes 0 marks them.
            for outputs in [4, 8] {
                for rows in [16, 32, 64] {
                    for min_blocks in [None, Some(2), Some(3)] {
                        tiles.push((rc, Layout::Window(4), outputs, rows, 0, min_blocks));
                    }
                }
            }
            tiles
        };
        tiles.push((Strategy::Naive, Layout::RoundRobin, 1, 4, 1, None));
        tiles.push((Strategy::SharedMemory, Layout::RoundRobin, 1, 4, 1, None));
        if three {
            tiles.push((Strategy::SharedMemory, Layout::RoundRobin, 1, 4, 16, None));
        }
        // What #[stencil] compiles by default: the default tile, the cost model's distribution.
        let dims = radius.dims();
        let default = Pattern::grid(
            radius,
            32,
            1,
            Pattern::default_rows_per_warp(dims),
            Pattern::default_planes_per_warp(dims),
            Boundary::Clamp,
        )
        .expect("valid");
        let choice = rc_core::auto::choose_given(
            default,
            rc_core::auto::Given { outputs: false, rows: false, bounds: false, prefetch: false },
            &body,
        )
        .expect("a choice");
        let mut programs: Vec<(String, Pattern, WarpProgram)> = Vec::new();
        let chosen = WarpProgram::compile_for(choice.pattern, rc, choice.layout, &body).expect("compiles");
        let bounds = choice.pattern.min_blocks_per_sm().unwrap_or(0);
        let streamed = if choice.pattern.streams_rows() { "|streamed" } else { "" };
        let what = format!(
            "default|{}|p{}|r{}|z{}|mb{bounds}{streamed}",
            choice.layout,
            choice.pattern.outputs_per_thread(),
            choice.pattern.rows_per_warp(),
            choice.pattern.planes_per_warp()
        );
        programs.push((what.replace(' ', "_"), choice.pattern, chosen));
        for (strategy, layout, outputs, rows, planes, min_blocks) in tiles {
            let Ok(pattern) = Pattern::grid(radius, 32, outputs, rows, planes.max(1), Boundary::Clamp)
                .and_then(|p| p.with_streamed_rows(planes == 0))
                .and_then(|p| p.with_launch_bounds(256, min_blocks))
            else {
                continue;
            };
            let Ok(program) = WarpProgram::compile_for(pattern, strategy, layout, &body) else { continue };
            let streamed = if planes == 0 { "|streamed" } else { "" };
            let what = format!(
                "{strategy}|{layout}|p{outputs}|r{rows}|z{}|mb{}{streamed}",
                planes.max(1),
                min_blocks.unwrap_or(0)
            )
            .replace(' ', "_");
            programs.push((what, pattern, program));
        }
        // Staged planes: blocks of 4 or 8 warps stacked along y, as the probe
        // (bench/probes/staged3d.cu) ran them; rings past 48 KiB are dynamic shared memory.
        let staged = [
            (4, 128, 4, None),
            (4, 256, 4, None),
            (4, 256, 2, None),
            (4, 128, 2, None),
            (4, 128, 4, Some(4)),
            (4, 128, 4, Some(3)),
            (4, 128, 2, Some(3)),
            (4, 128, 2, Some(4)),
            (4, 256, 2, Some(2)),
            (4, 256, 1, None),
            (4, 128, 1, Some(4)),
            (4, 64, 4, None),
            (4, 64, 8, None),
            (4, 128, 8, None),
        ];
        // Windows of 8 outputs (bench/results/HISTORY.md: 2026-11-24-h200-planes3d2).
        let wide = [
            (8, 128, 4, None),
            (8, 128, 2, None),
            (8, 256, 2, None),
            (8, 256, 4, None),
            (8, 128, 2, Some(4)),
            (8, 128, 4, Some(3)),
            (8, 64, 4, None),
            (8, 64, 8, None),
        ];
        for (outputs, threads, rows, min_blocks) in staged.into_iter().chain(wide) {
            let layout = Layout::Planes(outputs);
            let Ok(pattern) = Pattern::grid(radius, 32, outputs, rows, 32, Boundary::Clamp)
                .and_then(|p| p.with_launch_bounds(threads, min_blocks))
            else {
                continue;
            };
            if !three {
                continue;
            }
            let Ok(program) = WarpProgram::compile_for(pattern, rc, layout, &body) else { continue };
            let what = format!("{rc}|{layout}|p{outputs}|r{rows}|z32|mb{}|t{threads}", min_blocks.unwrap_or(0))
                .replace(' ', "_");
            programs.push((what, pattern, program));
        }
        // 2D blocks of 16 and 32 warps stacked along y: more of each block's input rows shared
        // through its L1 (the y halo re-read from L2 shrinks).
        for (threads, outputs, rows, min_blocks) in [
            (512, 4, 4, None),
            (512, 4, 4, Some(2)),
            (512, 8, 4, Some(1)),
            (512, 4, 8, Some(1)),
            (1024, 4, 4, None),
            (1024, 4, 4, Some(1)),
            (1024, 8, 2, Some(1)),
        ] {
            let layout = Layout::Window(4);
            let Ok(pattern) = Pattern::grid(radius, 32, outputs, rows, 1, Boundary::Clamp)
                .and_then(|p| p.with_launch_bounds(threads, min_blocks))
            else {
                continue;
            };
            if three {
                continue;
            }
            let Ok(program) = WarpProgram::compile_for(pattern, rc, layout, &body) else { continue };
            let what = format!("{rc}|{layout}|p{outputs}|r{rows}|z1|mb{}|t{threads}", min_blocks.unwrap_or(0))
                .replace(' ', "_");
            programs.push((what, pattern, program));
        }
        for (what, pattern, program) in programs {
            let out_shape = pattern.output_shape(shape).expect("an output");
            let launch = program
                .launch_shape(Kernel::Whole, shape, out_shape, OutputRows::all(out_shape))
                .expect("fits")
                .expect("a launch");
            std::fs::write(dir.join(format!("{k}.ptx")), rc_core::ptx::print(&program, "k")).expect("writes");
            let dims = |e: Extent| e.components().iter().map(|c| c.to_string()).collect::<Vec<_>>().join("x");
            let what = format!("{name}|{what}");
            let dynamic = program.machine.dynamic_shared_bytes();
            index.push_str(&format!(
                "{k} {} {} {} {} {what} {dynamic}\n",
                dims(shape),
                dims(out_shape),
                launch.grid.map(|b| b.to_string()).join(","),
                launch.threads_per_block
            ));
            k += 1;
        }
    }
    std::fs::write(dir.join("index.txt"), index).expect("writes the index");
}

/// The cost model weighs 16-byte windows and granules in 2D and 3D (no staged windows, which
/// are 1D only; a 3D stencil reaching along y or z gets staged planes of 16-byte vectors) and
/// keeps the rows and planes it was given.
#[test]
fn auto_chooses_a_16_byte_distribution_for_2d_and_3d() {
    for (radius, element) in [
        (Radius::yx(1, 1), ScalarType::F32),
        (Radius::zyx(1, 1, 1), ScalarType::F32),
        (Radius::yx(2, 2), ScalarType::F64),
    ] {
        let body = weighted(radius, &taps(radius, true));
        let body = if element == ScalarType::F32 {
            body
        } else {
            let nodes = vec![Node::Tap(0, Offset::new(&vec![0; radius.dims().count()]).expect("dims"))];
            Body::new(element, 1, vec![], radius, nodes, vec![0]).expect("valid")
        };
        let pattern = Pattern::grid(radius, 32, 1, 8, 1, Boundary::Clamp).expect("valid");
        let choice = rc_core::auto::choose(pattern, false, &body).expect("a choice");
        let v = 16 / element.bytes();
        assert!(
            matches!(choice.layout, Layout::Window(w) | Layout::Granule(w) | Layout::Planes(w) if w == v),
            "{radius}: {}",
            choice.layout
        );
        assert_eq!((choice.pattern.rows_per_warp(), choice.pattern.radius()), (8, radius));
        assert!(choice.estimates.iter().all(|e| !matches!(e.layout, Layout::Staged(_))));
    }
}

/// A 2D box tile evaluates its outputs input row after input row: each input row is loaded
/// once, added to every output row that needs it, and then dies, so the values live at once
/// are the tile's partial sums and one row's window, not the rows a later output row still
/// reads. For box r = 4, 4 outputs x 4 rows: 16 sums and a row of 12 cached elements, against
/// 9 rows of 12 in the program's order. The emulation equals the reference under every
/// boundary.
#[test]
fn two_d_boxes_evaluate_input_row_after_input_row() {
    use rc_core::machine::Op;
    let radius = Radius::yx(4, 4);
    let body = mean(radius, &taps(radius, false));
    for boundary in Boundary::ALL {
        let pattern = Pattern::grid(radius, 32, 4, 4, 1, boundary).expect("valid");
        let program =
            WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
        let estimate = program.register_estimate();
        assert!(estimate.cache + estimate.live_values <= 16 + 2 * 12, "{boundary}: {estimate}");
        // On the interior path, the rows' vector loads come in row order.
        let rows: Vec<u32> = program
            .machine
            .path(|_| true)
            .iter()
            .filter_map(|op| match op {
                Op::LoadVector { row, .. } => Some(*row),
                _ => None,
            })
            .collect();
        assert!(rows.windows(2).all(|w| w[0] <= w[1]), "{boundary}: {rows:?}");
        assert!(program.evaluates_by_input_rows(), "{boundary}");
        let text = rc_core::Explanation::new("box", &program).to_string();
        assert!(text.contains("evaluated input row after input row"), "{text}");
        assert!(text.contains("  row 1 (y 1): reads input rows 1 2 3 4 5 6 7 8 9; loads 9 (12 registers), and took rows 1 2 3 4 5 6 7 8 when earlier output rows loaded them; 0 shuffles"), "{text}");
        check(
            &body,
            pattern,
            Strategy::RegisterCache,
            Layout::Window(4),
            &[Extent::yx(37, 300), Extent::yx(3, 5), Extent::yx(20, 129)],
        );
    }
    // A star keeps the program's order: its centre row stays live until its last arm's row.
    let star = mean(radius, &taps(radius, true));
    let pattern = Pattern::grid(radius, 32, 4, 4, 1, Boundary::Clamp).expect("valid");
    let program =
        WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &star).expect("compiles");
    assert!(!program.evaluates_by_input_rows());
}

/// A 2D tile whose loads lie inside the input stores its rows as vectors without testing
/// them: every output it computes exists (under `valid` where the rows it trims along x keep
/// vectors aligned: 2 r_x a multiple of 4). Under `valid` at r_x = 1 the rows keep their tests.
/// The emulation equals the reference either way, on shapes whose rows are and are not aligned.
#[test]
fn interior_2d_tiles_store_without_row_tests_where_every_output_exists() {
    use rc_core::machine::{Stmt, TileTest};
    fn row_tests(stmts: &[Stmt]) -> usize {
        stmts
            .iter()
            .map(|s| match s {
                Stmt::Branch { test: TileTest::Whole { .. }, taken, fallback } => {
                    1 + row_tests(taken) + row_tests(fallback)
                }
                Stmt::Branch { taken, fallback, .. } => row_tests(taken) + row_tests(fallback),
                Stmt::Loop { body, .. } => row_tests(body),
                Stmt::Op(_) => 0,
            })
            .sum()
    }
    for (radius, boundary, tested) in [
        (Radius::yx(2, 2), Boundary::Clamp, false),
        (Radius::yx(1, 1), Boundary::Wrap, false),
        (Radius::yx(1, 2), Boundary::Valid, false),
        (Radius::yx(2, 1), Boundary::Valid, true),
    ] {
        let body = weighted(radius, &taps(radius, false));
        let pattern = Pattern::grid(radius, 32, 4, 4, 1, boundary).expect("valid");
        let program =
            WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
        let [Stmt::Branch { test: TileTest::Inside { .. }, taken, fallback }] = program.machine.body.as_slice() else {
            panic!("{pattern}: one interior test, got {:?}", program.machine.body)
        };
        assert_eq!(row_tests(taken), if tested { 4 } else { 0 }, "{pattern}");
        // The boundary path's two arms (vectors under the rule along x where rows lie inside,
        // elements elsewhere) test every row.
        let [Stmt::Branch { test: TileTest::RowsInside, taken: vectors, fallback: elements }] = fallback.as_slice()
        else {
            panic!("{pattern}: one rows-inside test on the boundary path, got {fallback:?}")
        };
        assert_eq!((row_tests(vectors), row_tests(elements)), (4, 4), "{pattern}");
        check(
            &body,
            pattern,
            Strategy::RegisterCache,
            Layout::Window(4),
            &[Extent::yx(13, 256), Extent::yx(9, 258), Extent::yx(20, 131)],
        );
    }
}

/// A 2D tile at the input's edge along x whose input rows lie inside the grid (rows whole
/// vectors) loads vectors under the rule along x, no element; the rest of the boundary path
/// (rows outside along y, rows of part vectors) loads element by element. The emulation equals
/// the reference under every boundary, for windows and granules of one and two vectors per
/// lane, on rows of one vector (lanes wholly past the end), shorter than a tile, a tile and a
/// vector, and of part vectors.
#[test]
fn edge_tiles_whose_rows_lie_inside_load_vectors_under_the_rule_along_x() {
    use rc_core::machine::{Op, Stmt, TileTest};
    fn ops<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a Op>) {
        for stmt in stmts {
            match stmt {
                Stmt::Op(op) => out.push(op),
                Stmt::Branch { taken, fallback, .. } => {
                    ops(taken, out);
                    ops(fallback, out);
                }
                Stmt::Loop { body, .. } => ops(body, out),
            }
        }
    }
    let shapes: Vec<Extent> =
        [[12, 4], [14, 8], [20, 132], [11, 260], [9, 64], [13, 130], [3, 256]].into_iter().map(Extent::from).collect();
    for (radius, star) in
        [(Radius::yx(1, 1), false), (Radius::yx(2, 2), false), (Radius::yx(1, 3), true), (Radius::yx(2, 4), false)]
    {
        let body = weighted(radius, &taps(radius, star));
        for boundary in Boundary::ALL {
            for (outputs, rows, layout) in [
                (4, 4, Layout::Window(4)),
                (8, 2, Layout::Window(4)),
                (4, 3, Layout::Granule(4)),
                (8, 4, Layout::Granule(4)),
            ] {
                let pattern = Pattern::grid(radius, 32, outputs, rows, 1, boundary).expect("valid");
                let program =
                    WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &body).expect("compiles");
                let [Stmt::Branch { test: TileTest::Inside { .. }, fallback, .. }] = program.machine.body.as_slice()
                else {
                    panic!("{pattern} {layout}: one interior test, got {:?}", program.machine.body)
                };
                let [Stmt::Branch { test: TileTest::RowsInside, taken, fallback: elements }] = fallback.as_slice()
                else {
                    panic!("{pattern} {layout}: one rows-inside test on the boundary path, got {fallback:?}")
                };
                let (mut vectors, mut singles) = (Vec::new(), Vec::new());
                ops(taken, &mut vectors);
                ops(elements, &mut singles);
                let count = |ops: &[&Op], f: fn(&Op) -> bool| ops.iter().filter(|op| f(op)).count();
                let (rule, element) = (
                    |op: &Op| matches!(op, Op::LoadVectorRule { .. }),
                    |op: &Op| matches!(op, Op::Load { .. } | Op::LoadVector { .. }),
                );
                assert!(
                    count(&vectors, rule) > 0 && count(&vectors, element) == 0,
                    "{pattern} {layout}: vectors under the rule only"
                );
                assert!(
                    count(&singles, rule) == 0 && count(&singles, element) > 0,
                    "{pattern} {layout}: elements only"
                );
                check(&body, pattern, Strategy::RegisterCache, layout, &shapes);
            }
        }
    }
}

/// A granule's rows load a lane's first element both in a vector (one input row) and alone
/// (another row, where the tile needs fewer elements): under `clamp` the PTX places each on the
/// row by its own width, the vector at the row's last vector and the element at the row's last
/// element. (One place for both read the vector's first element for the element past the end:
/// 196 outputs wrong on the GPU, bench/results/HISTORY.md: 2026-11-24-h200-box4.) Read from the printed
/// rows-inside path: every load under the rule follows a placement of its own start, stride and
/// width since the last row's stores (a branch, after which the printer computes places anew).
#[test]
fn a_single_element_and_a_vector_at_one_start_are_placed_by_their_own_widths() {
    let radius = Radius::yx(1, 1);
    let body = weighted(radius, &taps(radius, true));
    let pattern = Pattern::grid(radius, 32, 4, 3, 1, Boundary::Clamp).expect("valid");
    let program =
        WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Granule(4), &body).expect("compiles");
    let ptx = rc_core::ptx::print(&program, "k");
    let lines: Vec<&str> = ptx.lines().collect();
    let label = |done: bool| {
        lines.iter().position(|l| l.starts_with("$rc_rows_inside_") && l.ends_with(':') && l.contains("done") == done)
    };
    let (start, end) = (label(false).expect("the rows-inside path"), label(true).expect("its end"));
    // "tile elements B.. + lane * S" -> (B, S)
    let run = |line: &str| -> (u32, u32) {
        let rest = &line[line.find("tile elements ").expect("elements") + 14..];
        let base = rest[..rest.find("..").expect("..")].parse().expect("a base");
        let rest = &rest[rest.find("lane * ").expect("stride") + 7..];
        (base, rest.split(|c: char| !c.is_ascii_digit()).next().and_then(|s| s.parse().ok()).expect("a stride"))
    };
    let (mut placed, mut widths) = (std::collections::HashSet::new(), std::collections::BTreeSet::new());
    for line in &lines[start..end] {
        if line.contains("whole row: every output") {
            placed.clear();
        } else if let Some(at) = line.find("where the lane's ") {
            let width: u32 = line[at + 17..line.find("-element").expect("a width")].parse().expect("a width");
            placed.insert((run(line), width));
        } else if line.contains("one vector under the rule along x") {
            let (from, to) = (line.find("rc[").expect("rc[") + 3, line.find("] =").expect("] ="));
            let (a, b) = line[from..to].split_once("..").expect("a range");
            let width = b.parse::<u32>().expect("an end") - a.parse::<u32>().expect("a start");
            assert!(
                placed.contains(&(run(line), width)),
                "{}: no place for its width since the last stores\n{}",
                line.trim(),
                lines[start..end].join("\n")
            );
            widths.insert(width);
        }
    }
    assert_eq!(widths.into_iter().collect::<Vec<_>>(), vec![1, 4], "{pattern}: runs of one element and of a vector");
    check(&body, pattern, Strategy::RegisterCache, Layout::Granule(4), &[Extent::yx(300, 520), Extent::yx(12, 132)]);
}

/// A 3D tile of several planes streams them in a loop, and what it carries from one step to
/// the next is partial results: for a weighted box of radius 1 summed plane after plane, two
/// partial sums per output (after the first plane and after the second), and no input row.
/// The emulation of the pipelined loop equals the reference on grids of whole and partial
/// plane columns, under every boundary.
#[test]
fn streamed_3d_boxes_carry_partial_sums_not_input_rows() {
    use rc_core::machine::{Op, Stmt};
    let radius = Radius::zyx(1, 1, 1);
    let body = weighted(radius, &taps(radius, false));
    for boundary in Boundary::ALL {
        let pattern = Pattern::grid(radius, 32, 4, 2, 16, boundary).expect("valid");
        let program =
            WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles");
        let loops: Vec<u32> = program
            .machine
            .body
            .iter()
            .flat_map(|s| match s {
                Stmt::Branch { taken, fallback, .. } => [taken, fallback]
                    .into_iter()
                    .flatten()
                    .filter_map(|s| match s {
                        Stmt::Loop { times, .. } => Some(*times),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        assert_eq!(loops, vec![16, 16], "{boundary}: a loop of 16 planes on each path");
        let mut cache_regs = std::collections::HashSet::new();
        let mut carried = Vec::new();
        program.machine.visit(&mut |op| {
            if op.loads_cache() {
                cache_regs.extend(op.defs());
            }
            if let Op::Carry(moves) = op {
                carried.extend(moves.iter().map(|&(_, src)| src));
            }
        });
        carried.sort_unstable();
        carried.dedup();
        assert_eq!(carried.len(), 2 * 2 * 4, "{boundary}: two partial sums for each of 2 rows x 4 outputs");
        assert!(carried.iter().all(|r| !cache_regs.contains(r)), "{boundary}: an input row is carried");
        for shape in [Extent::zyx(40, 5, 130), Extent::zyx(16, 2, 128), Extent::zyx(3, 3, 9), Extent::zyx(1, 4, 4)] {
            let Ok(out_shape) = pattern.output_shape(shape) else { continue };
            let n = shape.len().expect("fits");
            let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 * 0.125 - 50.0).collect();
            let mut got = vec![f32::NAN; out_shape.len().expect("fits")];
            program.emulate_grid(&[&input], shape, &mut got, &[]).expect("emulates");
            assert_eq!(got, reference(&body, pattern, &input, shape), "{pattern} on {shape:?}");
        }
    }
}

/// explain() of staged planes says which warp computes which rows and how the ring turns.
#[test]
fn explain_names_the_ring_of_staged_planes() {
    let radius = Radius::zyx(1, 1, 1);
    let body = weighted(radius, &taps(radius, true));
    let explain = |rows: u32| {
        let pattern = Pattern::grid(radius, 32, 4, rows, 32, Boundary::Clamp)
            .and_then(|p| p.with_launch_bounds(128, None))
            .expect("valid");
        let program =
            WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Planes(4), &body).expect("compiles");
        (rc_core::explain::Explanation::new("k", &program).to_string(), program.machine.shared_bytes)
    };
    let (text, bytes) = explain(2);
    assert!(text.contains("ring of staged planes: the block's 4 warps stack along y"), "{text}");
    // The slots (16320 bytes), then each copy vector's first and last element again.
    assert!(text.contains("3 slots of 10 rows x 136 elements in shared memory (24480 bytes per block)"), "{text}");
    assert!(text.contains("each copy vector's first and last 1 element(s) again (heads and tails)"), "{text}");
    assert_eq!(bytes, Some(16320 + 2 * 3 * 10 * 34 * 4));
    // Warps of 4 rows keep none.
    let (text, bytes) = explain(4);
    assert!(text.contains("3 slots of 18 rows x 136 elements in shared memory (29376 bytes per block)"), "{text}");
    assert!(!text.contains("heads and tails"), "{text}");
    assert_eq!(bytes, Some(29376));
}

/// A ring past the 48 KiB a kernel may declare statically is dynamic shared memory (declared
/// `.extern`, sized at launch); past what a block may have at all it is refused, naming its size.
#[test]
fn rings_past_48_kib_are_dynamic_and_past_227_kib_refused() {
    let radius = Radius::zyx(2, 2, 2);
    let body = weighted(radius, &taps(radius, false));
    let planes = |threads: u32, rows: u32| {
        let pattern = Pattern::grid(radius, 32, 4, rows, 32, Boundary::Clamp)
            .and_then(|p| p.with_launch_bounds(threads, None))
            .expect("valid");
        WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Planes(4), &body)
    };
    // 4 warps of 2 rows: 5 slots of 12 rows x 136 elements = 32640 bytes, declared statically.
    let small = planes(128, 2).expect("compiles");
    assert_eq!((small.machine.shared_bytes, small.machine.dynamic_shared_bytes()), (Some(32640), 0));
    let ptx = rc_core::ptx::print(&small, "k");
    assert!(ptx.contains("\t.shared .align 16 .b8 rc_stage[32640];") && !ptx.contains(".extern"), "{ptx}");
    // 8 warps of 4 rows (the probe's best r = 2 tile): 5 slots of 36 rows = 97920 bytes.
    let large = planes(256, 4).expect("compiles");
    assert_eq!((large.machine.shared_bytes, large.machine.dynamic_shared_bytes()), (Some(97920), 97920));
    let ptx = rc_core::ptx::print(&large, "k");
    assert!(ptx.contains("\n.extern .shared .align 16 .b8 rc_stage[];\n") && !ptx.contains("\t.shared"), "{ptx}");
    let text = rc_core::explain::Explanation::new("k", &large).to_string();
    assert!(text.contains("(97920 bytes per block, dynamic: more than the 48 KiB a kernel may declare)"), "{text}");
    // 32 warps of 8 rows: 5 slots of 260 rows = 707200 bytes.
    let err = planes(1024, 8).expect_err("too large for a block").to_string();
    assert!(
        err.contains("planes(4) stages 5 planes of 260 rows x 136 elements in shared memory, 707200 bytes per block, more than the 232448"),
        "{err}"
    );
}

/// ptxas' registers and spill stores (bytes) of `ptx`, compiled for sm_90.
fn ptxas_registers(ptxas: &std::ffi::OsStr, ptx: &str, what: &str) -> (u32, u32) {
    let file = std::env::temp_dir().join(format!("rc-planes-{}-{what}.ptx", std::process::id()));
    std::fs::write(&file, ptx).expect("writes the PTX");
    let out = std::process::Command::new(ptxas)
        .args(["-arch=sm_90", "-v", "-o", "/dev/null"])
        .arg(&file)
        .output()
        .expect("runs ptxas");
    let _ = std::fs::remove_file(&file);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ptxas refused {what}: {text}");
    let number_before = |marker: &str| -> u32 {
        let at = text.find(marker).unwrap_or_else(|| panic!("no `{marker}` in {text}"));
        text[..at].split_whitespace().last().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{text}"))
    };
    (number_before(" registers"), number_before(" bytes spill stores"))
}

/// The staged-plane tiles the probe measured best (4 and 8 warps of 4 rows, star and box at
/// r = 1 and 2) fit in registers without spilling: a row's x outputs in lock step and the rows
/// along the input rows, each window read once (bench/probes/staged3d.cu: 64 to 94 registers;
/// box r = 2 took 245 before). With RC_PTXAS.
#[test]
fn staged_plane_tiles_fit_in_registers() {
    let Some(ptxas) = std::env::var_os("RC_PTXAS") else { return };
    for (r, star) in [(1, true), (1, false), (2, true), (2, false)] {
        let radius = Radius::zyx(r, r, r);
        // Weighted (a product per tap) and the benchmark's plain sum.
        for (name, body) in
            [("weighted", weighted(radius, &taps(radius, star))), ("mean", mean(radius, &taps(radius, star)))]
        {
            for threads in [128, 256] {
                let pattern = Pattern::grid(radius, 32, 4, 4, 32, Boundary::Clamp)
                    .and_then(|p| p.with_launch_bounds(threads, None))
                    .expect("valid");
                let program = WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Planes(4), &body)
                    .expect("compiles");
                let what = format!("{name}-{}{r}-{threads}", if star { "star" } else { "box" });
                let (registers, spills) = ptxas_registers(&ptxas, &rc_core::ptx::print(&program, "k"), &what);
                let shared = program.machine.shared_bytes.unwrap_or(0);
                eprintln!("{what}: {registers} registers, {spills} bytes spilled, {shared} bytes of shared memory");
                assert_eq!(spills, 0, "{what} spills");
                assert!(registers <= 128, "{what}: {registers} registers");
            }
        }
    }
}
