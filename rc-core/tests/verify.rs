//! The machine program's verifier ([`rc_core::machine::verify`]) passes what the compiler
//! builds (every test compiles in a debug build, where both builders run it) and refuses a
//! program broken in each way it checks.

mod common;

use rc_core::distribution::AffineLoad;
use rc_core::machine::verify::{verify, VerifyError};
use rc_core::machine::{Op, Stmt, TileTest};
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
