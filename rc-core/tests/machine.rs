//! The emulator runs the machine program the PTX back end prints, including the paths that only
//! the GPU took before: interior vector loads, the staged windows' stage and reads, the fast
//! division and its slow path, vector stores. Each test changes one operation of one path and
//! shows that the emulation's answer changes (or that the emulator refuses the access), so the
//! path really runs; the unchanged program matches the reference.

mod common;

use common::{awkward, box_body};
use rc_core::machine::{Op, Stmt, TileTest};
use rc_core::{BinaryOp, Boundary, EmulationError, Error, Instr, Layout, Pattern, ScalarType, Strategy, WarpProgram};

fn compile(radius: u32, outputs: u32, boundary: Boundary, layout: Layout) -> WarpProgram {
    let pattern = Pattern::new(radius, 32, outputs, boundary).expect("valid pattern");
    WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &box_body(radius, ScalarType::F32))
        .expect("compiles")
}

fn emulate(program: &WarpProgram, input: &[f32]) -> Result<Vec<f32>, Error> {
    let mut out = vec![f32::NAN; program.pattern.output_len(input.len()).expect("long enough")];
    program.emulate(&[input], &mut out, &[])?;
    Ok(out)
}

fn reference(program: &WarpProgram, input: &[f32]) -> Vec<f32> {
    common::reference_f32(&program.pattern, input)
}

/// Applies `f` to every operation on the arm of each branch that `arm` picks.
fn edit(stmts: &mut [Stmt], arm: &dyn Fn(TileTest) -> bool, f: &mut dyn FnMut(&mut Op)) {
    for stmt in stmts {
        match stmt {
            Stmt::Op(op) => f(op),
            Stmt::Branch { test, taken, fallback } => {
                let chosen = if arm(*test) { taken } else { fallback };
                edit(chosen, arm, f);
            }
            Stmt::Loop { body, .. } => edit(body, arm, f),
        }
    }
}

/// Outputs whose bits differ (NaN payloads aside: CPUs and GPUs pick them differently).
fn differences(a: &[f32], b: &[f32]) -> Vec<usize> {
    let same = |x: &f32, y: &f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    a.iter().zip(b).enumerate().filter(|(_, (x, y))| !same(x, y)).map(|(i, _)| i).collect()
}

#[test]
fn interior_tiles_run_the_vector_loads_and_boundary_tiles_the_checked_ones() {
    let program = compile(3, 8, Boundary::Zero, Layout::Window(8));
    let input: Vec<f32> = awkward(5000, 7);
    let good = emulate(&program, &input).expect("emulates");
    assert!(differences(&good, &reference(&program, &input)).is_empty());
    let tile = program.pattern.tile_outputs() as usize;
    let mut interior = program.clone();
    // Each interior vector load reads its neighbour's elements: aligned, inside, wrong.
    edit(&mut interior.machine.body, &|_| true, &mut |op| {
        if let Op::LoadVector { at, dsts, .. } = op {
            at.base += dsts.len() as u32;
        }
    });
    let wrong = differences(&emulate(&interior, &input).expect("still inside the input"), &good);
    assert!(!wrong.is_empty(), "the interior path's vector loads were not run");
    assert!(wrong.iter().all(|&i| i >= tile), "the first tile (a boundary tile) did not change: {wrong:?}");
    let mut boundary = program.clone();
    // Fallback at the interior test; either arm of the stores' test.
    edit(&mut boundary.machine.body, &|test| matches!(test, TileTest::Whole { .. }), &mut |op| {
        if let Op::Load { at, .. } = op {
            at.base += 1;
        }
    });
    let wrong = differences(&emulate(&boundary, &input).expect("emulates"), &good);
    assert!(
        !wrong.is_empty() && wrong.iter().all(|&i| i < tile || i >= good.len() - 2 * tile),
        "only edge tiles changed: {wrong:?}"
    );
}

#[test]
fn a_misaligned_or_outside_vector_load_is_refused_as_the_gpu_would_fault() {
    let mut program = compile(3, 8, Boundary::Zero, Layout::Window(8));
    edit(&mut program.machine.body, &|_| true, &mut |op| {
        if let Op::LoadVector { at, .. } = op {
            at.base += 1;
        }
    });
    let input: Vec<f32> = awkward(5000, 7);
    assert!(matches!(emulate(&program, &input), Err(Error::Emulation(EmulationError::Access { .. }))));
}

#[test]
fn staged_windows_run_the_stage_copy_and_the_window_reads() {
    // f32 granules of 16: 64 bytes each, so every granule is followed by 16 bytes of padding.
    let program = compile(5, 16, Boundary::Clamp, Layout::Staged(16));
    let input: Vec<f32> = awkward(9000, 3);
    let good = emulate(&program, &input).expect("emulates");
    assert_eq!(differences(&good, &reference(&program, &input)), Vec::<usize>::new());
    let mut shifted_copy = program.clone();
    edit(&mut shifted_copy.machine.body, &|_| true, &mut |op| {
        if let Op::StageWarp { stage, .. } = op {
            assert!(stage.padding.pad > 0, "this layout pads its stage");
            stage.lead += stage.padding.width;
        }
    });
    // The warp copies from one vector earlier: every window is shifted.
    assert!(
        !differences(&emulate(&shifted_copy, &input).expect("emulates"), &good).is_empty(),
        "the stage copy was not run"
    );
    let mut shifted_reads = program.clone();
    edit(&mut shifted_reads.machine.body, &|_| true, &mut |op| {
        if let Op::ReadStage { dsts, .. } = op {
            dsts.reverse();
        }
    });
    assert!(
        !differences(&emulate(&shifted_reads, &input).expect("emulates"), &good).is_empty(),
        "the stage reads were not run"
    );
}

#[test]
fn divisions_by_constants_run_the_fast_path_and_fall_back_where_its_check_fails() {
    let program = compile(2, 4, Boundary::Zero, Layout::Window(4));
    let mut runs = 0;
    program.machine.visit(&mut |op| runs += matches!(op, Op::Divisions(_)) as usize);
    assert!(runs > 0, "x / 5.0 has a fast path");
    let input: Vec<f32> = awkward(3000, 11);
    let good = emulate(&program, &input).expect("emulates");
    assert!(differences(&good, &reference(&program, &input)).is_empty());
    // A wrong reciprocal changes the quotients where the fast path's check passes.
    let mut fast = program.clone();
    edit(&mut fast.machine.body, &|_| true, &mut |op| {
        if let Op::Divisions(run) = op {
            run.iter_mut().for_each(|d| d.fast.reciprocal *= 1.5);
        }
    });
    assert!(!differences(&emulate(&fast, &input).expect("emulates"), &good).is_empty(), "the fast path was not run");
    // Windows of -0.0 fail the check (|q| is below its bound) and take the slow path, which
    // adds the `+0.0` the sum left out: (-0 + ... + -0) + 0.0 = +0, so the quotient is +0.
    let signed = vec![-0.0f32; 3000];
    let slow = emulate(&program, &signed).expect("emulates");
    assert!(slow.iter().all(|q| q.to_bits() == 0), "(-0 + ... + -0) + 0.0 is +0");
    // A slow path that divides the sum itself gives -0: the slow path is what ran.
    let mut forgetful = program.clone();
    edit(&mut forgetful.machine.body, &|_| true, &mut |op| {
        if let Op::Divisions(run) = op {
            for d in run.iter_mut() {
                d.dividend = d.sum.take().expect("box sums start from 0.0");
            }
        }
    });
    let forgot = emulate(&forgetful, &signed).expect("emulates");
    assert!(forgot.iter().any(|q| q.to_bits() == (-0.0f32).to_bits()), "the slow path was not run");
}

#[test]
fn whole_tiles_store_with_vectors_and_the_last_tile_output_by_output() {
    let program = compile(1, 4, Boundary::Wrap, Layout::Granule(4));
    let input: Vec<f32> = awkward(1000, 5);
    let good = emulate(&program, &input).expect("emulates");
    let mut shifted = program.clone();
    edit(&mut shifted.machine.body, &|_| true, &mut |op| {
        if let Op::StoreVector { srcs, .. } = op {
            srcs.rotate_left(1);
        }
    });
    let tile = program.pattern.tile_outputs() as usize;
    let wrong = differences(&emulate(&shifted, &input).expect("emulates"), &good);
    // 1000 outputs: 7 whole tiles of 128 and a last one of 104, stored output by output.
    assert!(
        !wrong.is_empty() && wrong.iter().all(|&i| i < good.len() / tile * tile),
        "only whole tiles changed: {wrong:?}"
    );
}

#[test]
fn a_loop_runs_its_body_once_per_iteration_in_the_emulator_and_in_the_ptx() {
    // Round-robin, one output per thread: straight-line, with shuffles, the store last. Before
    // it, a loop of 3 iterations doubles the stored value (x + x: exact), carried from one
    // iteration to the next.
    let mut program = compile(4, 1, Boundary::Clamp, Layout::RoundRobin);
    let first_store =
        program.machine.body.iter().position(|s| matches!(s, Stmt::Op(Op::Store { .. }))).expect("stores");
    let doubled: Vec<Stmt> = program.machine.body[first_store..]
        .iter()
        .filter_map(|s| match s {
            Stmt::Op(Op::Store { src, .. }) => {
                Some(Stmt::Op(Op::Compute(Instr::Binary { dst: *src, op: BinaryOp::Add, a: *src, b: *src })))
            }
            _ => None,
        })
        .collect();
    program.machine.body.insert(first_store, Stmt::Loop { times: 3, body: doubled });
    let input: Vec<f32> = awkward(3000, 13);
    let want: Vec<f32> =
        reference(&program, &input).iter().map(|&x| ((x + x) + (x + x)) + ((x + x) + (x + x))).collect();
    assert_eq!(differences(&emulate(&program, &input).expect("emulates"), &want), Vec::<usize>::new());
    let ptx = rc_core::ptx::print(&program, "k");
    assert!(ptx.contains("// loop: 3 iterations") && ptx.contains("bra $rc_loop_"), "{ptx}");
    // CI sets RC_PTXAS: the loop must assemble.
    if let Some(ptxas) = std::env::var_os("RC_PTXAS") {
        let file = std::env::temp_dir().join(format!("rc-loop-{}.ptx", std::process::id()));
        std::fs::write(&file, &ptx).expect("writes the PTX");
        let status = std::process::Command::new(ptxas)
            .args(["-arch=sm_80", "-o", "/dev/null"])
            .arg(&file)
            .status()
            .expect("runs ptxas");
        assert!(status.success(), "ptxas refused the loop:\n{ptx}");
    }
}
