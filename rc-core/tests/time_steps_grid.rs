//! Fused time steps in 2D and 3D: one fused launch of `T` steps, emulated lane by lane, equals
//! `T` applications of the body by the definition of each boundary rule, bit for bit, for random
//! bodies (every operation on every type, 1 to 3 input fields, parameters) over random tap
//! sets (boxes, stars, subsets), radii per dimension, steps (1, 2, T - 1, T, the most that
//! fit), shapes (smaller than the halo, one tile, several tiles and strips or columns, one
//! plane) and element types.
//!
//! Seeded: case `i` comes from seed `BASE_SEED + i`; rerun one with
//! `RC_STEPS_SEED=<seed> cargo test -p rc-stencil-core --test time_steps_grid`.

use rc_core::geometry::Axis;
use rc_core::launch_map::{StripGeometry, TileOrder};
use rc_core::machine::{Kernel, Op, Stmt};
use rc_core::testdata::{awkward, first_difference, poison, Rng};
use rc_core::time_steps::FusedTile;
use rc_core::{Body, Boundary, Element, Extent, Offset, OutputRows, Pattern, Radius, Scalar, WarpProgram};

mod bodies;
mod common;
use bodies::{case_body, pick, random_fields, random_params, Taps};

const BASE_SEED: u64 = 0x57E9_2D00_0000;
const CASES: u64 = 160;

/// One step by the definition: output `index` (outermost first) is the body over the windows
/// centred on input `index + r - shift` of every field, each read under the boundary rule.
fn step_by_definition<T: Element>(
    body: &Body,
    pattern: &Pattern,
    inputs: &[&[T]],
    shape: &[usize],
    params: &[Scalar],
) -> (Vec<T>, Vec<usize>) {
    let dims = shape.len();
    let out = pattern.output_shape(Extent::new(shape).expect("1-3 dims")).expect("long enough").components();
    let offset: Vec<i64> =
        (0..dims).map(|i| (pattern.radius().along(dims - 1 - i) - pattern.shift_along(dims - 1 - i)) as i64).collect();
    let mut result = Vec::with_capacity(out.iter().product());
    for linear in 0..out.iter().product::<usize>() {
        let (mut rest, mut centre) = (linear, vec![0i64; dims]);
        for i in (0..dims).rev() {
            centre[i] = (rest % out[i]) as i64 + offset[i];
            rest /= out[i];
        }
        let tap = |field: u32, d: Offset| {
            let at: Vec<i64> = (0..dims).map(|i| centre[i] + d.along(dims - 1 - i) as i64).collect();
            pattern
                .boundary()
                .locate(Extent::new(shape).expect("1-3 dims"), &at)
                .map_or(*T::zero_ref(), |i| inputs[field as usize][i])
                .to_scalar()
        };
        result.push(T::from_bits(body.eval(tap, params)[0].bits));
    }
    (result, out)
}

/// `steps` steps by the definition: field 0 steps, the others stay, cut under `valid` to
/// where the state lies.
fn steps_by_definition<T: Element>(
    body: &Body,
    pattern: &Pattern,
    inputs: &[Vec<T>],
    shape: &[usize],
    steps: usize,
    params: &[Scalar],
) -> Vec<T> {
    let dims = shape.len();
    let (mut state, mut now) = (inputs[0].clone(), shape.to_vec());
    for done in 0..steps {
        let trim: Vec<usize> = match pattern.boundary() {
            Boundary::Valid => (0..dims).map(|i| pattern.radius().along(dims - 1 - i) as usize * done).collect(),
            _ => vec![0; dims],
        };
        // Each element of the state's shape `now`, at its place in the coefficient's `shape`.
        let cut = |c: &Vec<T>| -> Vec<T> {
            (0..now.iter().product::<usize>())
                .map(|linear| {
                    let (mut rest, mut at) = (linear, 0);
                    let mut index = vec![0; dims];
                    for i in (0..dims).rev() {
                        index[i] = rest % now[i] + trim[i];
                        rest /= now[i];
                    }
                    for i in 0..dims {
                        at = at * shape[i] + index[i];
                    }
                    c[at]
                })
                .collect()
        };
        let cut: Vec<Vec<T>> = inputs[1..].iter().map(cut).collect();
        let fields: Vec<&[T]> = std::iter::once(state.as_slice()).chain(cut.iter().map(|c| c.as_slice())).collect();
        (state, now) = step_by_definition(body, pattern, &fields, &now, params);
    }
    state
}

fn case<T: Element>(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let (rx, ry) = (1 + rng.below(3) as u32, 1 + rng.below(2) as u32);
    let radius = Radius::yx(ry, rx);
    let boundary = pick(&mut rng, &Boundary::ALL);
    let warp = pick(&mut rng, &[32, 32, 16, 8, 4]);
    let pattern = Pattern::grid(radius, warp, 1, 1, 1, boundary).expect("valid");
    let most = FusedTile::max_steps(&pattern, T::TYPE);
    if most == 0 {
        return Err(format!("seed {seed:#x}: no fused tile for {pattern}"));
    }
    let steps = pick(&mut rng, &[1, 2, 3, most - 1, most]).clamp(1, most);
    let star = rng.below(2) == 0;
    let taps = Taps::new(radius, common::grid_taps(radius, star));
    let fields = random_fields(seed);
    let param_types = random_params(&mut rng);
    let body = case_body(seed, &mut rng, T::TYPE, fields, param_types.clone(), &taps);
    let params: Vec<Scalar> = param_types.iter().map(|&ty| bodies::constant(&mut rng, ty)).collect();
    let program = WarpProgram::compile_steps(pattern, &body, steps).map_err(|e| format!("seed {seed:#x}: {e}"))?;
    let tile = program.fused.ok_or("no fused tile")?;
    let (hy, hx) = ((steps * ry) as usize, tile.halo() as usize);
    // Smaller than the halo, about one tile, several tiles and strips.
    let shape = match rng.below(3) {
        0 => [1 + rng.below(2 * hy as u64 + 2) as usize, 1 + rng.below(2 * hx as u64 + 3) as usize],
        1 => [tile.rows as usize - 2 + rng.below(5) as usize, tile.elements() as usize - 2 + rng.below(5) as usize],
        _ => [1 + rng.below(3 * tile.rows as u64) as usize, 1 + rng.below(3 * tile.elements() as u64) as usize],
    };
    if boundary == Boundary::Valid && (shape[0] <= 2 * hy || shape[1] <= 2 * hx) {
        return Ok(());
    }
    let n = shape[0] * shape[1];
    let inputs: Vec<Vec<T>> = (0..fields).map(|f| awkward::<T>(n, seed ^ ((f as u64 + 1) * 0x9e37))).collect();
    let want = steps_by_definition(&body, &pattern, &inputs, &shape, steps as usize, &params);
    let slices: Vec<&[T]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut got = vec![poison::<T>(); want.len()];
    program
        .emulate_grid(&slices, Extent::from(shape), &mut got, &params)
        .map_err(|e| format!("seed {seed:#x}: {e}"))?;
    if let Some(i) = first_difference(&got, &want) {
        return Err(format!(
            "seed {seed:#x}: {} r={radius} warp={warp} {boundary} T={steps} shape={shape:?} fields={fields}: output {i} got {:?} want {:?}\n{body}",
            T::TYPE,
            got.get(i),
            want.get(i)
        ));
    }
    rows_of_one_launch(seed, &mut rng, &program, &pattern, steps, &slices, Extent::from(shape), &want, &params)
}

/// A launch over rows `first..end` of the output along its outermost dimension (the rows a band
/// of a split grid computes), drawn from `rng`: those rows are the whole launch's (`want`), every
/// other output is left as it was (poison).
#[allow(clippy::too_many_arguments)]
fn rows_of_one_launch<T: Element>(
    seed: u64,
    rng: &mut Rng,
    program: &WarpProgram,
    pattern: &Pattern,
    steps: u32,
    inputs: &[&[T]],
    shape: Extent,
    want: &[T],
    params: &[Scalar],
) -> Result<(), String> {
    let out = rc_core::time_steps::steps_output_shape(pattern, shape, steps as usize)
        .map_err(|e| format!("seed {seed:#x}: {e}"))?;
    let rows = out.components()[0];
    let row_len = want.len() / rows.max(1);
    let first = rng.below(rows as u64 + 1) as usize;
    let end = first + rng.below((rows - first) as u64 + 1) as usize;
    let mut got = vec![poison::<T>(); want.len()];
    program
        .emulate_grid_rows(inputs, shape, Some(first..end), &mut [&mut got], params)
        .map_err(|e| format!("seed {seed:#x}: rows {first}..{end}: {e}"))?;
    let inside = first * row_len..end * row_len;
    let expected: Vec<T> = (0..want.len()).map(|i| if inside.contains(&i) { want[i] } else { poison::<T>() }).collect();
    match first_difference(&got, &expected) {
        None => Ok(()),
        Some(i) => Err(format!(
            "seed {seed:#x}: a launch over rows {first}..{end} of {rows}, shape {}: output {i} got {:?} want {:?}",
            shape.as_array(),
            got.get(i),
            expected.get(i)
        )),
    }
}

#[test]
fn one_fused_2d_launch_is_its_steps_applied_one_by_one() {
    common::run_seeded(BASE_SEED, CASES, |seed, ty| by_type!(case, seed, ty));
}

#[test]
fn the_2d_tile_streams_its_strip_with_one_window_per_step() {
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Zero).expect("valid");
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let program = WarpProgram::compile_steps(pattern, &body, 4).expect("compiles");
    let tile = program.fused.expect("fused");
    // 4 steps of 2 rows of 4 f32 per lane: 32 words of windows.
    assert_eq!(
        (tile.per_lane, tile.elements(), tile.halo(), tile.radius_y, tile.rows, tile.window_words()),
        (4, 128, 4, 1, 64, 32)
    );
    // Every element exact after the 4 steps is stored: 128 less the halo of 4 on each side.
    assert_eq!((tile.outputs(), program.pattern.tile_outputs()), (120, 120));
    let [Stmt::Branch { taken, fallback, .. }] = program.machine.body.as_slice() else {
        panic!("one branch on the strip")
    };
    let count =
        |stmts: &[Stmt], f: fn(&Op) -> bool| stmts.iter().filter(|s| matches!(s, Stmt::Op(op) if f(op))).count();
    // A window's rows take 2 * ry + 1 register rows on the interior path, 2 * ry on the edges'.
    for (path, rules, sets) in [(taken, false, 3), (fallback, true, 2)] {
        let loops: Vec<(u32, &Vec<Stmt>)> = path
            .iter()
            .filter_map(|s| if let Stmt::Loop { times, body } = s { Some((*times, body)) } else { None })
            .collect();
        // The windows fill over 2 * T * ry = 8 rows, unrolled, then one iteration per output row
        // (64): the first 63 one per register row per loop iteration (the registers' roles
        // turn), the rest after it.
        assert_eq!(loops.iter().map(|l| l.0).collect::<Vec<_>>(), [63 / sets]);
        let body = loops[0].1;
        // Each step but the last puts its new row through the rule along y, once.
        assert_eq!(count(body, |op| matches!(op, Op::RowRule { .. })), if rules { sets as usize * 3 } else { 0 });
        assert_eq!(count(body, |op| matches!(op, Op::StepRule { .. })), if rules { sets as usize * 4 } else { 0 });
        assert_eq!(count(body, |op| matches!(op, Op::Stream { axis: Axis::Y, by: 1 })), sets as usize);
        assert_eq!(
            count(path, |op| matches!(op, Op::Stream { axis: Axis::Y, by: 1 })),
            8 + 63 % sets as usize + 1,
            "8 filling, the rest after the loop"
        );
        // No row moves between registers but the new ones: per iteration and step one copy of
        // the row the step before produced (for step 1 the input row) into its window.
        assert_eq!(count(body, |op| matches!(op, Op::Carry(_))), sets as usize * 4);
        // Filling, the iteration whose newest input is box row f runs f / 2 steps.
        let steps_run = |stmts: &[Stmt]| count(stmts, |op| matches!(op, Op::Neighbour { .. })) / 2;
        let fill: Vec<&[Stmt]> =
            path.split(|s| matches!(s, Stmt::Op(Op::Stream { axis: Axis::Y, by: 1 }))).take(8).collect();
        assert_eq!(fill.iter().map(|i| steps_run(i)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2, 3, 3]);
    }
}

#[test]
fn a_2d_launch_runs_as_an_interior_kernel_and_an_edges_kernel_that_share_out_its_strips() {
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    for boundary in Boundary::ALL {
        let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, boundary).expect("valid");
        let program = WarpProgram::compile_steps(pattern, &body, 4).expect("compiles");
        assert_eq!(program.machine.kernels(), [Kernel::Interior, Kernel::Edges], "{boundary}");
        // Several strips along each dimension, so some lie inside and some cross an edge.
        let shape = [300usize, 520];
        let input = awkward::<f32>(shape[0] * shape[1], 7);
        let out_len = program.declared.output_shape(Extent::from(shape)).expect("an output").len().expect("finite");
        let run = |program: &WarpProgram| {
            let mut out = vec![poison::<f32>(); out_len];
            program.emulate_grid(&[&input], Extent::from(shape), &mut out, &[]).expect("emulates");
            out
        };
        let whole = run(&program);
        assert!(whole.iter().all(|v| v.to_bits() != poison::<f32>().to_bits()), "{boundary}: every output stored");
        // Each kernel alone: a program whose one kernel is that kernel's body.
        let alone = |kernel: Kernel| {
            let mut one = program.clone();
            one.machine.body = program.machine.kernel_body(kernel).into_owned();
            one.machine.split = false;
            run(&one)
        };
        let (interior, edges) = (alone(Kernel::Interior), alone(Kernel::Edges));
        let stored = |v: &f32| v.to_bits() != poison::<f32>().to_bits();
        for (i, want) in whole.iter().enumerate() {
            let (a, b) = (stored(&interior[i]), stored(&edges[i]));
            assert!(a != b, "{boundary}: output {i} stored by {} kernels", u8::from(a) + u8::from(b));
            let got = if a { interior[i] } else { edges[i] };
            assert_eq!(got.to_bits(), want.to_bits(), "{boundary}: output {i}");
        }
        assert!(interior.iter().any(stored) && edges.iter().any(stored), "{boundary}: both kernels store");
    }
}

/// The emulator runs the launch map, as the GPU runs the PTX it prints: a map whose strips
/// disagree with the tiles' interior test (its lead short by one vector) leaves the edges
/// kernel's launch short of the edge strips, and their outputs stay unwritten, on the CPU.
#[test]
fn a_launch_map_that_misplaces_edge_strips_fails_in_the_emulator() {
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Clamp).expect("valid");
    let program = WarpProgram::compile_steps(pattern, &body, 4).expect("compiles");
    let shape = Extent::yx(300, 520);
    let input = awkward::<f32>(shape.len().expect("finite"), 7);
    let out_len = program.declared.output_shape(shape).expect("an output").len().expect("finite");
    let unwritten = |program: &WarpProgram| {
        let mut out = vec![poison::<f32>(); out_len];
        program.emulate_grid(&[&input], shape, &mut out, &[]).expect("emulates");
        out.iter().filter(|v| v.to_bits() == poison::<f32>().to_bits()).count()
    };
    assert_eq!(unwritten(&program), 0, "the map as compiled");
    let mut broken = program.clone();
    let TileOrder::EdgesFirst(strips) = program.launch.order else { panic!("{:?}", program.launch.order) };
    // The map believes each strip's input starts a vector later: the first column's strips
    // count as interior, and the interior kernel's strips skip the edge path.
    broken.launch.order = TileOrder::EdgesFirst(StripGeometry { lead: strips.lead - strips.width, ..strips });
    assert!(unwritten(&broken) > 0, "a misplaced map must leave outputs unwritten");
}

/// A fused 2D launch numbers its strips edge strips first ([`TileOrder::EdgesFirst`]): the
/// launch map's warps below the strips' count compute each strip once, the strips whose input
/// box crosses an edge (the interior test fails) before every interior one, so each kernel's
/// strips fill whole blocks; warps past them compute none; the edges kernel's launch covers
/// exactly the edge strips. The PTX prints the map's index program and the emulator runs it,
/// for every warp of grids from one point to several edge and interior columns and bands.
#[test]
fn fused_2d_strips_are_numbered_edge_strips_first() {
    for (radius, boundary, steps) in [
        (Radius::yx(1, 1), Boundary::Clamp, 10),
        (Radius::yx(1, 1), Boundary::Zero, 3),
        (Radius::yx(2, 1), Boundary::Valid, 2),
        (Radius::yx(1, 2), Boundary::Wrap, 4),
    ] {
        let body = common::star_sum_row_major(radius);
        let pattern = Pattern::grid(radius, 32, 1, Pattern::default_rows_per_warp(rc_core::Dims::Two), 1, boundary)
            .expect("valid");
        let program = WarpProgram::compile_steps(pattern, &body, steps).expect("compiles");
        let (launch, tile) = (program.pattern, program.fused.expect("fused"));
        assert!(matches!(program.launch.order, TileOrder::EdgesFirst(_)), "{boundary}: {:?}", program.launch.order);
        let (outputs, rows) = (u64::from(launch.tile_outputs()), u64::from(launch.rows_per_warp()));
        for (in_y, in_x) in [(1, 1), (5, 3), (64, 130), (100, 232), (300, 520), (330, 1032), (700, 1030)] {
            let input = Extent::yx(in_y, in_x);
            let Ok(out) = launch.output_shape(input) else { continue };
            let (out_y, out_x) = (out.along(1) as u64, out.along(0) as u64);
            let (tiles_x, bands) = (out_x.div_ceil(outputs), out_y.div_ceil(rows));
            let inside = |x: u64, y: u64| {
                let (x0, y0) = (
                    (x * outputs) as i64 - i64::from(program.schedule.lead),
                    (y * rows) as i64 - i64::from(launch.shift_along(1)),
                );
                let width = i64::from(program.machine.width);
                x0 >= 0
                    && x0 + i64::from(tile.elements()) <= in_x as i64
                    && y0 >= 0
                    && y0 + i64::from(launch.box_rows().1) <= in_y as i64
                    && in_x as i64 % width == 0
            };
            let mut seen = std::collections::HashSet::new();
            let mut interior_from = None;
            let shape = program
                .launch
                .launch_shape(Kernel::Whole, input, out, OutputRows::all(out))
                .expect("fits")
                .expect("a launch");
            for (t, warp) in program.launch.warps(shape, input, out, OutputRows::all(out)).enumerate() {
                let t = t as u64;
                let (x, y) = (warp.start[0] / outputs, warp.start[1] / rows);
                let what = format!("{boundary} T={steps}, {in_y} x {in_x}: warp {t} computes strip ({x}, {y})");
                if t >= tiles_x * bands {
                    assert!(y >= bands, "{what}: past the strips, it computes one");
                    continue;
                }
                assert!(x < tiles_x && y < bands && seen.insert((x, y)), "{what}: not a strip, or one computed twice");
                match inside(x, y) {
                    true => interior_from = interior_from.or(Some(t)),
                    false => assert!(interior_from.is_none(), "{what}: an edge strip after interior ones"),
                }
            }
            assert_eq!(seen.len() as u64, tiles_x * bands, "{boundary} T={steps}, {in_y} x {in_x}: strips");
            // The edges kernel's launch covers the edge strips' blocks, none past them.
            let edges = interior_from.unwrap_or(tiles_x * bands);
            let edge_launch =
                program.launch.launch_shape(Kernel::Edges, input, out, OutputRows::all(out)).expect("fits");
            let per_block = u64::from(launch.tiles_per_block());
            assert_eq!(
                edge_launch.map_or(0, |l| l.blocks()),
                edges.div_ceil(per_block),
                "{boundary} T={steps}, {in_y} x {in_x}: edge strips"
            );
        }
    }
}

/// ptxas over 2D fused kernels of a 5-point sum: no kernel spills, and at the cost model's
/// degree the interior kernel, printed without the boundary path, fits 168 registers, 12 warps
/// per SM in blocks of 128 (in one kernel with it, 2D heat took 152 at T = 8). With its windows
/// in `2 * ry + 1` register rows it takes 146-148 at T = 10 (128 in `2 * ry`, 16 warps), yet ran
/// faster for the copies it no longer needs (a 5-point average: 4.24x the copy against 4.06x,
/// bench/results/HISTORY.md: 2026-11-24-h200-heat2d4). CI sets RC_PTXAS; without it only the printing runs.
#[test]
fn fused_2d_kernels_assemble_without_spills() {
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let mut kernels = Vec::new();
    for boundary in Boundary::ALL {
        let pattern =
            Pattern::grid(Radius::yx(1, 1), 32, 1, Pattern::default_rows_per_warp(rc_core::Dims::Two), 1, boundary)
                .expect("valid");
        let chosen = rc_core::auto::steps_per_launch(&pattern, &body);
        for steps in [2, 8, chosen] {
            let program = WarpProgram::compile_steps(pattern, &body, steps).expect("compiles");
            kernels.push((
                format!("sum f32 T={steps} {boundary}"),
                steps == chosen,
                rc_core::ptx::print(&program, "k"),
            ));
        }
    }
    let Some(ptxas) = std::env::var_os("RC_PTXAS") else { return };
    for (i, (what, at_chosen, ptx)) in kernels.iter().enumerate() {
        let file = std::env::temp_dir().join(format!("rc-steps2-{}-{i}.ptx", std::process::id()));
        std::fs::write(&file, ptx).expect("writes the PTX");
        let out = std::process::Command::new(&ptxas)
            .args(["-arch=sm_90", "-v", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("runs ptxas");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "ptxas refused {what}: {log}");
        let _ = std::fs::remove_file(&file);
        // Per entry: its name, then its spills, then its registers.
        let registers = |entry: &str| -> u32 {
            let from = log
                .find(&format!("Function properties for {entry}\n"))
                .unwrap_or_else(|| panic!("{what}: no entry {entry}: {log}"));
            let rest = &log[from..];
            assert!(
                rest.lines().nth(1).is_some_and(|l| l.contains("0 bytes spill stores, 0 bytes spill loads")),
                "{what}: {entry} spills: {log}"
            );
            let used = rest.split("Used ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok());
            used.unwrap_or_else(|| panic!("{what}: no register count for {entry}: {log}"))
        };
        let (interior, edges) = (registers("k"), registers("k_edges"));
        eprintln!("{what}: interior kernel {interior} registers, edges kernel {edges}");
        if *at_chosen {
            assert!(
                interior <= 168,
                "{what}: the interior kernel takes {interior} registers, more than 12 warps per SM allow"
            );
        }
    }
}

const BASE_SEED_3D: u64 = 0x57E9_3D00_0000;
const CASES_3D: u64 = 120;

fn case_3d<T: Element>(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let (rx, ry, rz) = (1 + rng.below(2) as u32, pick(&mut rng, &[1, 1, 2]), pick(&mut rng, &[1, 1, 2]));
    let radius = Radius::zyx(rz, ry, rx);
    let boundary = pick(&mut rng, &Boundary::ALL);
    let warp = pick(&mut rng, &[32, 16, 8, 4]);
    let (rows, planes) = (1 + rng.below(3) as u32, 1 + rng.below(4) as u32);
    let pattern = Pattern::grid(radius, warp, 1, rows, planes, boundary).expect("valid");
    let most = FusedTile::max_steps(&pattern, T::TYPE);
    if most == 0 {
        return Err(format!("seed {seed:#x}: no fused tile for {pattern}"));
    }
    let steps = pick(&mut rng, &[1, 2, most - 1, most]).clamp(1, most);
    let star = rng.below(2) == 0;
    let taps = Taps::new(radius, common::grid_taps(radius, star));
    let fields = random_fields(seed);
    let param_types = random_params(&mut rng);
    let body = case_body(seed, &mut rng, T::TYPE, fields, param_types.clone(), &taps);
    let params: Vec<Scalar> = param_types.iter().map(|&ty| bodies::constant(&mut rng, ty)).collect();
    let program = WarpProgram::compile_steps(pattern, &body, steps).map_err(|e| format!("seed {seed:#x}: {e}"))?;
    let tile = program.fused.ok_or("no fused tile")?;
    let (hz, hy, hx) = ((steps * rz) as usize, (steps * ry) as usize, tile.halo() as usize);
    let (column, plane_rows, row) = (tile.planes as usize, tile.rows as usize, tile.elements() as usize);
    // Smaller than the halo, one plane, a few tiles, several tiles and columns.
    let mut shape = match rng.below(4) {
        0 => [1 + rng.below(2 * hz as u64 + 2), 1 + rng.below(2 * hy as u64 + 2), 1 + rng.below(2 * hx as u64 + 3)]
            .map(|n| n as usize),
        1 => [1, 1 + rng.below(3 * plane_rows as u64 + 2) as usize, 1 + rng.below(2 * row as u64) as usize],
        // Tiles inside the input too: their rows whole vectors long.
        2 => [
            2 * column + 2 * hz + rng.below(3) as usize,
            3 * plane_rows + 2 * hy + rng.below(3) as usize,
            (2 * row + 2 * hx).next_multiple_of(4) + 4 * rng.below(2) as usize,
        ],
        _ => [
            1 + rng.below(3 * column as u64 + 4) as usize,
            1 + rng.below(3 * plane_rows as u64 + 4) as usize,
            1 + rng.below(2 * row as u64) as usize,
        ],
    };
    if boundary == Boundary::Valid {
        // The output keeps at least one element along each dimension.
        for (n, h) in shape.iter_mut().zip([hz, hy, hx]) {
            *n = (*n).max(2 * h + 1);
        }
    }
    let n: usize = shape.iter().product();
    let inputs: Vec<Vec<T>> = (0..fields).map(|f| awkward::<T>(n, seed ^ ((f as u64 + 1) * 0x9e37))).collect();
    let want = steps_by_definition(&body, &pattern, &inputs, &shape, steps as usize, &params);
    let slices: Vec<&[T]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut got = vec![poison::<T>(); want.len()];
    program
        .emulate_grid(&slices, Extent::from(shape), &mut got, &params)
        .map_err(|e| format!("seed {seed:#x}: {e}"))?;
    if let Some(i) = first_difference(&got, &want) {
        return Err(format!(
            "seed {seed:#x}: {} r={radius} warp={warp} rows={} planes={planes} {boundary} T={steps} shape={shape:?} fields={fields}: output {i} got {:?} want {:?}\n{body}",
            T::TYPE,
            tile.rows,
            got.get(i),
            want.get(i)
        ));
    }
    rows_of_one_launch(seed, &mut rng, &program, &pattern, steps, &slices, Extent::from(shape), &want, &params)
}

#[test]
fn one_fused_3d_launch_is_its_steps_applied_one_by_one() {
    common::run_seeded(BASE_SEED_3D, CASES_3D, |seed, ty| by_type!(case_3d, seed, ty));
}

/// 3D fused kernels of every boundary, with the default tile and the most steps that fit,
/// assemble and keep every value in registers (CI sets RC_PTXAS; without it only the printing
/// runs).
#[test]
fn fused_3d_kernels_assemble_without_spills() {
    use rc_core::ScalarType::{F32, F64};
    let mut kernels = Vec::new();
    for boundary in Boundary::ALL {
        for (radius, full_box, element) in [
            (Radius::zyx(1, 1, 1), false, F32),
            (Radius::zyx(1, 1, 1), true, F32),
            (Radius::zyx(1, 1, 1), false, F64),
            (Radius::zyx(2, 2, 2), false, F32),
        ] {
            let pattern = Pattern::grid(
                radius,
                32,
                1,
                Pattern::default_rows_per_warp(rc_core::Dims::Three),
                Pattern::default_planes_per_warp(rc_core::Dims::Three),
                boundary,
            )
            .expect("valid");
            let body = common::grid_sum_of(element, radius, full_box);
            for steps in 1..=FusedTile::max_steps(&pattern, element) {
                let program = WarpProgram::compile_steps(pattern, &body, steps).expect("compiles");
                let tile = program.fused.expect("fused");
                let what = format!(
                    "{element} r={radius} box={full_box} T={steps} rows={} k={} {boundary}",
                    tile.rows, tile.per_lane
                );
                kernels.push((what, rc_core::ptx::print(&program, "k")));
            }
        }
    }
    let Some(ptxas) = std::env::var_os("RC_PTXAS") else { return };
    for (i, (what, ptx)) in kernels.iter().enumerate() {
        let file = std::env::temp_dir().join(format!("rc-steps3-{}-{i}.ptx", std::process::id()));
        std::fs::write(&file, ptx).expect("writes the PTX");
        let out = std::process::Command::new(&ptxas)
            .args(["-arch=sm_90", "-v", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("runs ptxas");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "ptxas refused {what}: {log}");
        eprintln!(
            "{what}: {}",
            log.lines().filter(|l| l.contains("registers") || l.contains("spill")).collect::<Vec<_>>().join(" | ")
        );
        assert!(log.contains("0 bytes spill stores, 0 bytes spill loads"), "{what} spills: {log}");
        let _ = std::fs::remove_file(&file);
    }
}
