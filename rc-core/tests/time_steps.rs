//! Fused time steps: one fused launch of `T` steps, emulated lane by lane, equals `T`
//! applications of the body by the definition of each boundary rule, bit for bit, for random
//! bodies (every operation on every type, 1 to 3 input fields, parameters), radii, steps,
//! lengths (shorter than the halo, one tile, many) and element types; `emulate_steps` equals
//! `run_cpu_steps` for any number of steps (fused launches and the one launch of the steps left).
//!
//! Seeded: case `i` comes from seed `BASE_SEED + i`; rerun one with
//! `RC_STEPS_SEED=<seed> cargo test -p rc-stencil-core --test time_steps`.

use rc_core::machine::{Op, Stmt};
use rc_core::testdata::{awkward, first_difference, poison, Rng};
use rc_core::time_steps::{FusedTile, StepPlan};
use rc_core::{
    Body, Boundary, Element, Error, Layout, LengthError, Offset, Pattern, Scalar, ScalarType, Stencil, Strategy,
    WarpProgram, Window,
};

mod bodies;
mod common;
use bodies::{case_body, constant, pick, random_fields, random_params, Taps};
use ScalarType::{F32, F64, I32, U32};

const BASE_SEED: u64 = 0x57E9_0000_0000;
const CASES: u64 = 400;
/// The most steps a case fuses.
const MOST_STEPS: u32 = 160;

/// One step by the definition: output `i` is the body over the windows centred on input
/// `i + r - shift` of every field, each read under the boundary rule.
fn step_by_definition<T: Element>(body: &Body, pattern: &Pattern, inputs: &[&[T]], params: &[Scalar]) -> Vec<T> {
    let n = inputs[0].len();
    let out = pattern.output_len(n).expect("long enough");
    let offset = (pattern.radius().along_x() - pattern.shift()) as i64;
    (0..out)
        .map(|i| {
            let centre = i as i64 + offset;
            let tap = |field: u32, d: Offset| {
                pattern.boundary().read(inputs[field as usize], centre + d.along_x() as i64).to_scalar()
            };
            T::from_bits(body.eval(tap, params)[0].bits)
        })
        .collect()
}

/// `steps` steps by the definition: field 0 steps, the others stay, trimmed under `valid` to
/// where the state lies.
fn steps_by_definition<T: Element>(
    body: &Body,
    pattern: &Pattern,
    inputs: &[Vec<T>],
    steps: usize,
    params: &[Scalar],
) -> Vec<T> {
    let mut state = inputs[0].clone();
    let r = pattern.radius().along_x() as usize;
    for done in 0..steps {
        let trim = if pattern.boundary() == Boundary::Valid { r * done } else { 0 };
        let mut fields: Vec<&[T]> = vec![&state];
        fields.extend(inputs[1..].iter().map(|c| &c[trim..trim + state.len()]));
        state = step_by_definition(body, pattern, &fields, params);
    }
    state
}

fn case<T: Element>(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let radius = 1 + rng.below(5) as u32;
    let boundary = pick(&mut rng, &Boundary::ALL);
    let warp = pick(&mut rng, &[32, 32, 32, 16, 8, 4, 2]);
    // Block tiles (a power of two of threads: 64 to 1024 lanes), and warp tiles (96 threads).
    let threads = pick(&mut rng, &[256, 256, 128, 64, 96, 96, 1024]);
    let pattern =
        Pattern::new(radius, warp, 1, boundary).and_then(|p| p.with_launch_bounds(threads, None)).expect("valid");
    // A block tile fits thousands of steps; the emulation's time grows with them.
    let most = FusedTile::max_steps(&pattern, T::TYPE).min(MOST_STEPS);
    let steps = pick(&mut rng, &[1, 2, 3, 5, 8, 16, 40, most]).min(most).max(1);
    let fields = random_fields(seed);
    let param_types = random_params(&mut rng);
    let body = case_body(seed, &mut rng, T::TYPE, fields, param_types.clone(), &Taps::line(radius));
    let params: Vec<Scalar> = param_types.iter().map(|&ty| constant(&mut rng, ty)).collect();
    let program = WarpProgram::compile_steps(pattern, &body, steps).map_err(|e| format!("seed {seed:#x}: {e}"))?;
    let tile = program.fused.ok_or("no fused tile")?;
    let halo = tile.halo() as usize;
    // Shorter than the halo, about one tile, several tiles.
    let n = match rng.below(3) {
        0 => 1 + rng.below(halo as u64 + 2) as usize,
        1 => tile.elements() as usize - 3 + rng.below(6) as usize,
        _ => 1 + rng.below(4 * tile.elements() as u64) as usize,
    };
    if boundary == Boundary::Valid && n <= 2 * halo {
        return Ok(());
    }
    let inputs: Vec<Vec<T>> = (0..fields).map(|f| awkward::<T>(n, seed ^ ((f as u64 + 1) * 0x9e37))).collect();
    let want = steps_by_definition(&body, &pattern, &inputs, steps as usize, &params);
    let slices: Vec<&[T]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut got = vec![poison::<T>(); want.len()];
    program.emulate(&slices, &mut got, &params).map_err(|e| format!("seed {seed:#x}: {e}"))?;
    match first_difference(&got, &want) {
        None => Ok(()),
        Some(i) => Err(format!(
            "seed {seed:#x}: {} r={radius} warp={warp} threads={threads} {boundary} T={steps} n={n} fields={fields}: output {i} got {:?} want {:?}\n{body}",
            T::TYPE,
            got.get(i),
            want.get(i)
        )),
    }
}

#[test]
fn one_fused_launch_is_its_steps_applied_one_by_one() {
    common::run_seeded(BASE_SEED, CASES, |seed, ty| by_type!(case, seed, ty));
}

// ---- the whole plan through a stencil handle ------------------------------------------------------

/// `0.25 * w[-1] + 0.5 * w[0] + 0.25 * w[1]`, as the macro lowers it.
fn heat_body() -> Result<Body, rc_core::BodyError> {
    use rc_core::body::{BinaryOp, Node};
    let c = |v| Node::Const(Scalar::f32(v));
    let nodes = vec![
        c(0.25),
        Node::Tap(0, Offset::x(-1)),
        Node::Binary(BinaryOp::Mul, 0, 1),
        c(0.5),
        Node::Tap(0, Offset::x(0)),
        Node::Binary(BinaryOp::Mul, 3, 4),
        Node::Binary(BinaryOp::Add, 2, 5),
        c(0.25),
        Node::Tap(0, Offset::x(1)),
        Node::Binary(BinaryOp::Mul, 7, 8),
        Node::Binary(BinaryOp::Add, 6, 9),
    ];
    Body::new(F32, 1, vec![], 1, nodes, vec![10])
}

fn heat_reference(w: &[Window<'_, f32>], (): (), out: &mut [f32]) {
    // One output field.
    out[0] = 0.25 * w[0][-1] + 0.5 * w[0][0] + 0.25 * w[0][1];
}

fn heat(boundary: Boundary, steps_per_launch: u32) -> Stencil<f32, ()> {
    let pattern = Pattern::new(1, 32, 1, boundary).expect("valid");
    Stencil::from_parts(
        "heat",
        pattern,
        Strategy::RegisterCache,
        Layout::RoundRobin,
        "",
        "rc_heat",
        1,
        1,
        heat_body,
        heat_reference,
    )
    .with_fused(steps_per_launch, "", "rc_heat_steps", "rc_heat_steps_edges")
}

#[test]
fn emulate_steps_is_run_cpu_steps_for_every_count_of_steps() {
    for boundary in Boundary::ALL {
        for t in [4, 16] {
            let stencil = heat(boundary, t);
            for n in [1, 5, 40, 255, 256, 1000, 3001] {
                for steps in [0, 1, 2, t as usize - 1, t as usize, t as usize + 1, 3 * t as usize + 2] {
                    let input = awkward::<f32>(n, n as u64 * 31 + steps as u64);
                    let out = match rc_core::time_steps::steps_output_len(&stencil.pattern(), n, steps) {
                        Ok(out) => out,
                        Err(_) => continue,
                    };
                    let (mut want, mut got) = (vec![poison::<f32>(); out], vec![poison::<f32>(); out]);
                    stencil.run_cpu_steps(&[&input], &mut [&mut want], steps, ()).expect("runs");
                    stencil.emulate_steps(&[&input], &mut [&mut got], steps, ()).expect("emulates");
                    assert_eq!(first_difference(&got, &want), None, "{boundary} T={t} n={n} steps={steps}");
                    // The reference itself is run_cpu applied step by step.
                    let mut state = input.clone();
                    for _ in 0..steps {
                        state = stencil.reference_vec(&[&state], ()).expect("one step").remove(0);
                    }
                    assert_eq!(first_difference(&want, &state), None, "{boundary} n={n} steps={steps}");
                }
            }
        }
    }
}

#[test]
fn valid_steps_that_leave_nothing_are_refused_with_the_numbers() {
    let stencil = heat(Boundary::Valid, 16);
    let input = vec![1.0f32; 10];
    let err = stencil.run_cpu_steps(&[&input], &mut [&mut []], 5, ()).expect_err("10 - 2 * 5 = 0");
    assert_eq!(err, Error::Length(LengthError::StepsOutlastInput { len: 10, radius: 1, steps: 5 }));
    assert_eq!(
        err.to_string(),
        "boundary `valid` shrinks the input by 2 * radius = 2 elements per step: 5 steps of an input of 10 elements leave 0, and at least 1 must be left"
    );
    let err = stencil.emulate_steps(&[&input], &mut [&mut [0.0; 3]], 3, ()).expect_err("10 - 6 = 4, not 3");
    assert_eq!(
        err.to_string(),
        "output has 3 elements, expected 4 for 3 steps on an input of 10 elements with boundary `valid`"
    );
}

#[test]
fn steps_run_as_fused_launches_then_one_launch_of_the_steps_left() {
    let launches = |steps, t| StepPlan::new(steps, t).launches().collect::<Vec<u32>>();
    let mut want = vec![16; 62];
    want.push(8);
    assert_eq!(launches(1000, 16), want);
    assert_eq!(launches(33, 16), [16, 16, 1]);
    assert_eq!(launches(15, 16), [15]);
    assert_eq!(launches(32, 16), [16, 16]);
    assert_eq!(launches(0, 16), [0; 0]);
    // One step per launch is the one-step kernel.
    assert_eq!(launches(3, 1), [1, 1, 1]);
}

#[test]
fn the_fused_tile_loads_once_steps_in_a_loop_and_stores_its_centre() {
    let block = Pattern::new(1, 32, 1, Boundary::Zero).expect("valid");
    let warp = block.with_launch_bounds(96, None).expect("valid");
    for (pattern, steps, iterations, straight) in
        [(block, 16, 8, 0), (block, 5, 2, 1), (warp, 16, 8, 0), (warp, 5, 2, 1)]
    {
        let program = WarpProgram::compile_steps(pattern, &heat_body().expect("valid"), steps).expect("compiles");
        let tile = program.fused.expect("fused");
        if (pattern, steps) == (block, 16) {
            // A block tile: 256 lanes of 20 elements, the halo only at the block's ends.
            assert_eq!(
                (tile.warp, tile.per_lane, tile.elements(), tile.outputs(), tile.halo(), tile.lead),
                (256, 20, 5120, 5088, 16, 16)
            );
            assert!(tile.spans_block() && program.machine.shared_bytes.is_some());
        }
        if (pattern, steps) == (warp, 16) {
            // 96 threads are no power of two: a warp tile of 16 elements per lane, 512 per warp,
            // 480 outputs (the halo is 1/16 of the tile).
            assert_eq!(
                (tile.warp, tile.per_lane, tile.elements(), tile.outputs(), tile.halo(), tile.lead),
                (32, 16, 512, 480, 16, 16)
            );
            assert!(!tile.spans_block() && program.machine.shared_bytes.is_none());
        }
        let [Stmt::Branch { taken, fallback, .. }] = program.machine.body.as_slice() else {
            panic!("one branch on the tile")
        };
        let ops = |stmts: &[Stmt]| -> Vec<Op> {
            stmts.iter().filter_map(|s| if let Stmt::Op(op) = s { Some(op.clone()) } else { None }).collect()
        };
        for (path, rule) in [(taken, false), (fallback, true)] {
            let loops: Vec<(u32, &Vec<Stmt>)> = path
                .iter()
                .filter_map(|s| if let Stmt::Loop { times, body } = s { Some((*times, body)) } else { None })
                .collect();
            // Two steps per iteration, the odd one after the loop.
            assert_eq!(loops.len(), 1);
            assert_eq!(loops[0].0, iterations);
            let inside = ops(loops[0].1);
            let count = |ops: &[Op], f: fn(&Op) -> bool| ops.iter().filter(|op| f(op)).count();
            // One shuffle for each neighbour's edge element per step, the rule only where the tile crosses an edge.
            assert_eq!(count(&inside, |op| matches!(op, Op::Neighbour { .. })), 4);
            assert_eq!(count(&inside, |op| matches!(op, Op::StepRule { .. })), if rule { 2 } else { 0 });
            let after = ops(path);
            assert_eq!(count(&after, |op| matches!(op, Op::Neighbour { .. })), 2 * straight, "{steps} steps");
        }
    }
}

/// The symmetric 9-tap `c4 * w[-4] + c3 * w[-3] + ... + c4 * w[4]` (`c[|d|]`), as the macro
/// lowers it: each product a constant node of its own, then the tap.
fn nine_tap_body() -> Body {
    use rc_core::body::{BinaryOp, Node};
    let weights = [0.36f32, 0.15, 0.1, 0.05, 0.02];
    let mut nodes = Vec::new();
    let mut sum = None;
    for d in -4i32..=4 {
        nodes.push(Node::Const(Scalar::f32(weights[d.unsigned_abs() as usize])));
        nodes.push(Node::Tap(0, Offset::x(d)));
        let n = nodes.len() as u32;
        nodes.push(Node::Binary(BinaryOp::Mul, n - 2, n - 1));
        if let Some(s) = sum {
            nodes.push(Node::Binary(BinaryOp::Add, s, nodes.len() as u32 - 1));
        }
        sum = Some(nodes.len() as u32 - 1);
    }
    Body::new(F32, 1, vec![], 4, nodes, vec![sum.expect("nine taps")]).expect("valid")
}

#[test]
fn a_lane_computes_each_shared_product_once_per_step() {
    use rc_core::body::BinaryOp;
    use rc_core::program::Instr;
    let pattern = Pattern::new(4, 32, 1, Boundary::Clamp).expect("valid");
    let program = WarpProgram::compile_steps(pattern, &nine_tap_body(), 16).expect("compiles");
    let k = program.fused.expect("fused").per_lane as i64;
    let [Stmt::Branch { taken, .. }] = program.machine.body.as_slice() else { panic!("one branch on the tile") };
    let Some(Stmt::Loop { body, .. }) = taken.iter().find(|s| matches!(s, Stmt::Loop { .. })) else {
        panic!("a loop of steps")
    };
    let count = |op: BinaryOp| {
        body.iter().filter(|s| matches!(s, Stmt::Op(Op::Compute(Instr::Binary { op: o, .. })) if *o == op)).count()
            as i64
    };
    // Two steps per iteration. A product is one weight (by |d|) times one element the lane
    // reads: element j + d of output j.
    let products: std::collections::BTreeSet<(i32, i64)> =
        (0..k).flat_map(|j| (-4i32..=4).map(move |d| (d.abs(), j + d as i64))).collect();
    assert_eq!(count(BinaryOp::Mul), 2 * products.len() as i64);
    assert!(products.len() as i64 <= 5 * k + 20, "{} products for {k} outputs", products.len());
    // The sums are each output's own.
    assert_eq!(count(BinaryOp::Add), 2 * 8 * k);
}

#[test]
fn too_many_steps_for_a_tile_are_refused_with_the_most_that_fit() {
    let pattern = Pattern::new(4, 32, 1, Boundary::Zero).expect("valid");
    let body = common::box_body(4, F64);
    let most = FusedTile::max_steps(&pattern, F64);
    assert!(WarpProgram::compile_steps(pattern, &body, most).is_ok());
    let err = WarpProgram::compile_steps(pattern, &body, most + 1).expect_err("too many");
    assert!(err.to_string().contains(&format!("at most {most} steps fit")), "{err}");
}

/// Fused kernels of every boundary, element type and a few radii assemble and keep every value
/// in registers (CI sets RC_PTXAS; without it only the printing runs).
#[test]
fn fused_kernels_assemble_without_spills() {
    let mut kernels = Vec::new();
    for boundary in Boundary::ALL {
        for (radius, element, steps, warp) in
            [(1, F32, 16, 32), (4, F32, 16, 32), (1, F64, 8, 32), (3, I32, 5, 16), (2, U32, 16, 32), (2, F32, 7, 8)]
        {
            let pattern = Pattern::new(radius, warp, 1, boundary).expect("valid");
            let body = match element {
                F32 | F64 => common::box_body(radius, element),
                _ => integer_body(radius, element),
            };
            let program = WarpProgram::compile_steps(pattern, &body, steps).expect("compiles");
            kernels.push((
                format!("{element} r={radius} T={steps} warp {warp} {boundary}"),
                rc_core::ptx::print(&program, "k"),
            ));
        }
        // Block tiles of 256 and 1024 lanes, and warp tiles (96 threads).
        for (radius, element, steps, threads) in
            [(1, F32, 124, 1024), (3, F64, 11, 256), (2, F32, 16, 96), (4, F32, 43, 256)]
        {
            let pattern =
                Pattern::new(radius, 32, 1, boundary).and_then(|p| p.with_launch_bounds(threads, None)).expect("valid");
            let program =
                WarpProgram::compile_steps(pattern, &common::box_body(radius, element), steps).expect("compiles");
            kernels.push((
                format!("{element} r={radius} T={steps} {threads} threads {boundary}"),
                rc_core::ptx::print(&program, "k"),
            ));
        }
    }
    let Some(ptxas) = std::env::var_os("RC_PTXAS") else { return };
    for (i, (what, ptx)) in kernels.iter().enumerate() {
        let file = std::env::temp_dir().join(format!("rc-steps-{}-{i}.ptx", std::process::id()));
        std::fs::write(&file, ptx).expect("writes the PTX");
        let out = std::process::Command::new(&ptxas)
            .args(["-arch=sm_90", "-v", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("runs ptxas");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "ptxas refused {what}: {log}\n{ptx}");
        assert!(log.contains("0 bytes spill stores, 0 bytes spill loads"), "{what} spills: {log}");
        let _ = std::fs::remove_file(&file);
    }
}

/// `(w[-r] + ... + w[r]) / 3` over an integer type.
fn integer_body(r: u32, ty: ScalarType) -> Body {
    use rc_core::body::{BinaryOp, Node};
    let three = if ty == I32 { Scalar::i32(3) } else { Scalar::u32(3) };
    let mut nodes = vec![Node::Tap(0, Offset::x(-(r as i32)))];
    for k in 1 - r as i32..=r as i32 {
        nodes.push(Node::Tap(0, Offset::x(k)));
        nodes.push(Node::Binary(BinaryOp::Add, nodes.len() as u32 - 2, nodes.len() as u32 - 1));
    }
    nodes.push(Node::Const(three));
    nodes.push(Node::Binary(BinaryOp::Div, nodes.len() as u32 - 2, nodes.len() as u32 - 1));
    let result = nodes.len() as u32 - 1;
    Body::new(ty, 1, vec![], r, nodes, vec![result]).expect("type-checks")
}
