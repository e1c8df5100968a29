//! The checks after each pass of the driver ([`rc_core::driver::checks`]), the machine
//! program's verifier among them ([`rc_core::machine::verify`]), pass what the compiler builds
//! (every test compiles in a debug build, where the driver runs them) and refuse a result
//! broken in each way they check.

mod common;

use rc_core::distribution::{AffineLoad, RoundRobin};
use rc_core::driver::checks::{after, CheckError};
use rc_core::driver::{run_through, Draft, Pass, Steps};
use rc_core::machine::verify::{verify, VerifyError};
use rc_core::machine::{Op, Stmt, TileTest};
use rc_core::program::Instr;
use rc_core::schedule::Source;
use rc_core::{Boundary, Layout, Pattern, Radius, Strategy, WarpProgram};

/// A 2D window tile: vector loads on its interior path, whole-row vector stores.
fn window_2d() -> WarpProgram {
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 2, 1, Boundary::Clamp).expect("valid");
    WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &body).expect("compiles")
}

/// The first operation `pick` chooses, anywhere in `stmts`.
fn find(stmts: &[Stmt], pick: &dyn Fn(&Op) -> bool) -> Option<Op> {
    stmts.iter().find_map(|stmt| match stmt {
        Stmt::Op(op) => pick(op).then(|| op.clone()),
        Stmt::Branch { taken, fallback, .. } => find(taken, pick).or_else(|| find(fallback, pick)),
        Stmt::Loop { body, .. } => find(body, pick),
    })
}

#[test]
fn compiled_programs_verify() {
    verify(&window_2d()).expect("a compiled program verifies");
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Zero).expect("valid");
    verify(&WarpProgram::compile_steps(pattern, &body, 3).expect("compiles")).expect("a fused program verifies");
}

#[test]
fn a_vector_load_outside_the_interior_path_is_refused() {
    let mut program = window_2d();
    let load = find(&program.machine.body, &|op| matches!(op, Op::LoadVector { .. })).expect("a vector load");
    program.machine.body.insert(0, Stmt::Op(load));
    assert!(matches!(verify(&program), Err(VerifyError::Unguarded { .. })), "{:?}", verify(&program));
}

#[test]
fn a_vector_store_of_a_row_that_may_not_exist_is_refused() {
    let mut program = window_2d();
    let store = find(&program.machine.body, &|op| matches!(op, Op::StoreVector { .. })).expect("a vector store");
    // On the boundary path, under a test of another row.
    let Op::StoreVector { row, .. } = store else { unreachable!() };
    let other = Stmt::Branch { test: TileTest::Whole { row: row + 1 }, taken: vec![Stmt::Op(store)], fallback: vec![] };
    program.machine.body.push(other);
    assert!(matches!(verify(&program), Err(VerifyError::Unguarded { .. })), "{:?}", verify(&program));
}

#[test]
fn a_store_of_a_register_nothing_wrote_is_refused() {
    let mut program = window_2d();
    let unwritten = program.reg_types().len() as u32 + 7;
    let store = Op::Store { src: unwritten, field: 0, output: 0, at: AffineLoad { base: 0, stride: 1 }, row: 0 };
    program.machine.body.insert(0, Stmt::Op(store));
    assert_eq!(
        verify(&program),
        Err(VerifyError::ReadBeforeWrite { reg: unwritten, what: "the operation Store".to_string() })
    );
    // Written in only one arm of a branch, it is still unwritten after it.
    let mut program = window_2d();
    let load = Op::Load {
        dst: unwritten,
        cache: None,
        at: AffineLoad { base: 0, stride: 1 },
        lanes: (0, 32),
        field: 0,
        row: 0,
    };
    let one_arm = Stmt::Branch { test: TileTest::RowsInside, taken: vec![Stmt::Op(load)], fallback: vec![] };
    let store = Op::Store { src: unwritten, field: 0, output: 0, at: AffineLoad { base: 0, stride: 1 }, row: 0 };
    program.machine.body.extend([one_arm, Stmt::Op(store)]);
    assert!(matches!(verify(&program), Err(VerifyError::ReadBeforeWrite { .. })), "{:?}", verify(&program));
}

/// A 2D window tile of the register cache (its fetches shuffle) after the passes up to `through`.
fn window_2d_after(through: Pass) -> Draft<'static> {
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 2, 1, Boundary::Clamp).expect("valid");
    let distribution: &'static RoundRobin = Box::leak(Box::new(RoundRobin::new(&pattern)));
    let steps = Steps::One { strategy: Strategy::RegisterCache, distribution };
    run_through(pattern, &body, steps, through).expect("compiles")
}

/// The failure of the check after `pass`, which must fail.
fn refused(pass: Pass, draft: &Draft) -> CheckError {
    let error = after(pass, draft).expect_err("the broken result is refused");
    assert_eq!(error.pass, pass);
    error
}

#[test]
fn every_route_runs_its_passes_in_order_and_the_program_records_them() {
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 2, 1, Boundary::Clamp).expect("valid");
    let one = WarpProgram::compile(pattern, &body).expect("compiles");
    let distribution = RoundRobin::new(&pattern);
    let route = Steps::One { strategy: Strategy::RegisterCache, distribution: &distribution };
    assert_eq!(one.passes, route.passes());
    assert_eq!(one.passes.first(), Some(&Pass::Normalize));
    assert_eq!(one.passes.last(), Some(&Pass::Lower));
    let fused = WarpProgram::compile_steps(pattern, &body, 3).expect("compiles");
    assert_eq!(fused.passes, Steps::Fused(3).passes());
    assert!(!fused.passes.contains(&Pass::Select), "fused steps lower their tile directly");
    assert!(one
        .machine_text()
        .to_string()
        .contains("passes: normalize, admit, schedule, select, pipeline, place, lower"));
    // A draft stops after the pass asked for.
    let draft = window_2d_after(Pass::Schedule);
    assert_eq!(draft.passes, [Pass::Normalize, Pass::Admit, Pass::Schedule]);
    assert!(draft.schedule.is_some() && draft.selected.is_none() && draft.program.is_none());
}

#[test]
fn a_fetch_of_the_wrong_element_or_from_a_register_that_does_not_hold_it_is_refused() {
    let draft = window_2d_after(Pass::Schedule);
    after(Pass::Schedule, &draft).expect("the schedule as planned passes");
    let shuffles = |draft: &Draft| {
        let schedule = draft.schedule.as_ref().expect("scheduled");
        schedule.fetches.iter().position(|f| matches!(f.source, Source::Shuffle(_))).expect("a shuffled fetch")
    };
    // The element a lane fetches is not the one its output's tap needs.
    let mut wrong = window_2d_after(Pass::Schedule);
    let id = shuffles(&wrong);
    wrong.schedule.as_mut().expect("scheduled").fetches[id].elements[3] += 1;
    assert!(refused(Pass::Schedule, &wrong).failure.contains("lane 3 fetches element"));
    // A lane reads another register of its source lane than the one holding the element.
    let mut misread = window_2d_after(Pass::Schedule);
    let id = shuffles(&misread);
    let Source::Shuffle(phase) = &mut misread.schedule.as_mut().expect("scheduled").fetches[id].source else {
        unreachable!()
    };
    phase.reads[5].reg += 1;
    let failure = refused(Pass::Schedule, &misread).failure;
    assert!(failure.contains("does not hold the element") || failure.contains("publishes two registers"), "{failure}");
}

#[test]
fn a_register_read_before_it_is_written_or_an_output_stored_twice_or_never_is_refused() {
    let draft = window_2d_after(Pass::Select);
    after(Pass::Select, &draft).expect("the selected instructions pass");
    // An instruction moved before the one that writes what it reads.
    let mut early = window_2d_after(Pass::Select);
    let list = instrs(&mut early);
    let reader = list.iter().position(|i| matches!(i, Instr::Binary { .. })).expect("an operation");
    let moved = list.remove(reader);
    list.insert(0, moved);
    assert!(refused(Pass::Select, &early).failure.contains("before any instruction writes it"));
    // A store twice.
    let mut twice = window_2d_after(Pass::Select);
    let list = instrs(&mut twice);
    let store = list.iter().rev().find(|i| matches!(i, Instr::Store { .. })).expect("a store").clone();
    list.push(store);
    assert!(refused(Pass::Select, &twice).failure.contains("stored twice"));
    // An output never stored.
    let mut missing = window_2d_after(Pass::Select);
    let list = instrs(&mut missing);
    let store = list.iter().rposition(|i| matches!(i, Instr::Store { .. })).expect("a store");
    list.remove(store);
    assert!(refused(Pass::Select, &missing).failure.contains("stores where the step has"));
}

/// The selected instructions of `draft`.
fn instrs<'d>(draft: &'d mut Draft) -> &'d mut Vec<Instr> {
    &mut draft.selected.as_mut().expect("selected").instrs
}

#[test]
fn a_body_of_other_dimensions_than_its_tile_after_normalizing_is_refused() {
    let mut draft = window_2d_after(Pass::Normalize);
    after(Pass::Normalize, &draft).expect("the normalized body passes");
    draft.pattern = Pattern::grid(Radius::zyx(1, 1, 1), 32, 1, 1, 1, Boundary::Clamp).expect("valid");
    assert!(refused(Pass::Normalize, &draft).failure.contains("body on a"));
}
