//! The machine program's text form ([`WarpProgram::machine_text`]) for a few kernels, compared
//! with the snapshots in `tests/snapshots/`: a change to what a kernel runs shows up as a diff
//! of those files. After a change meant to alter the machine program, `RC_BLESS=1 cargo test -p
//! rc-core --test machine_text` rewrites them (then review the diff); code generation that must
//! not change leaves them as they are.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{box_body, grid_sum};
use rc_core::body::{BinaryOp, Body, Node};
use rc_core::machine::{Op, Stmt};
use rc_core::{Boundary, Explanation, Layout, Offset, Pattern, Radius, Scalar, ScalarType, Strategy, WarpProgram};

/// `0.25 w[-1] + 0.5 w[0] + 0.25 w[1]`: one step of the heat equation.
fn heat() -> Body {
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
    Body::new(ScalarType::F32, 1, vec![], 1, nodes, vec![10]).expect("a valid body")
}

/// 1D heat, r = 1, round-robin: loads, shuffles, arithmetic, stores.
fn heat_1d() -> WarpProgram {
    let pattern = Pattern::new(1, 32, 2, Boundary::Clamp).expect("a pattern");
    WarpProgram::compile(pattern, &heat()).expect("compiles")
}

/// A 7-point box average in windows of 4 outputs per lane: vector loads on interior tiles, the
/// boundary rule on the others, whole-row vector stores, divisions by a constant.
fn window_1d() -> WarpProgram {
    let pattern = Pattern::new(3, 32, 4, Boundary::Zero).expect("a pattern");
    WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &box_body(3, ScalarType::F32))
        .expect("compiles")
}

/// A 2D 5-point star on a 4-lane warp of 2 rows, in windows of 2.
fn star_2d() -> WarpProgram {
    let pattern = Pattern::grid(Radius::yx(1, 1), 4, 2, 2, 1, Boundary::Clamp).expect("a pattern");
    WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(2), &grid_sum(Radius::yx(1, 1), false))
        .expect("compiles")
}

/// A 3D 7-point star on a 4-lane warp streaming 4 planes along z: a loop over the planes that
/// carries values to the next one.
fn star_3d() -> WarpProgram {
    let radius = Radius::zyx(1, 1, 1);
    let pattern = Pattern::grid(radius, 4, 1, 2, 4, Boundary::Zero).expect("a pattern");
    WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::RoundRobin, &grid_sum(radius, false))
        .expect("compiles")
}

/// 1D heat, 4 time steps fused in one launch: neighbour exchanges, the rule after each step,
/// the owned outputs' stores.
fn fused_heat_1d() -> WarpProgram {
    let pattern = Pattern::new(1, 32, 1, Boundary::Clamp).expect("a pattern");
    WarpProgram::compile_steps(pattern, &heat(), 4).expect("compiles")
}

/// Programs beyond the snapshots' that use the other operations: taps read straight from memory
/// (naive), the block's stage (shared memory), staged windows, a ring of staged planes, 16-bit
/// elements packed in words, fused steps in 2D and 3D, a 2D tile that prefetches into L2 and
/// declares launch bounds.
fn more_programs() -> Vec<(&'static str, WarpProgram)> {
    let line = |radius, outputs, boundary, strategy, layout, ty| {
        let pattern = Pattern::new(radius, 32, outputs, boundary).expect("a pattern");
        WarpProgram::compile_for(pattern, strategy, layout, &box_body(radius, ty)).expect("compiles")
    };
    let (plane, plane_3d) = (Radius::yx(1, 1), Radius::zyx(1, 1, 1));
    let fused_2d = Pattern::grid(plane, 32, 1, 1, 1, Boundary::Zero).expect("a pattern");
    let fused_3d = Pattern::grid(plane_3d, 32, 1, 1, 1, Boundary::Clamp).expect("a pattern");
    let ring = Pattern::grid(plane_3d, 32, 4, 4, 8, Boundary::Zero).expect("a pattern");
    let prefetch = Pattern::grid(plane, 32, 4, 4, 1, Boundary::Clamp)
        .and_then(|p| p.with_launch_bounds(128, Some(2)))
        .and_then(|p| p.with_prefetch(true))
        .expect("a pattern");
    vec![
        ("naive", line(2, 1, Boundary::Zero, Strategy::Naive, Layout::RoundRobin, ScalarType::F32)),
        ("shared", line(2, 2, Boundary::Clamp, Strategy::SharedMemory, Layout::RoundRobin, ScalarType::F32)),
        ("staged", line(5, 16, Boundary::Clamp, Strategy::RegisterCache, Layout::Staged(16), ScalarType::F32)),
        ("f16", line(3, 2, Boundary::Wrap, Strategy::RegisterCache, Layout::RoundRobin, ScalarType::F16)),
        ("fused_2d", WarpProgram::compile_steps(fused_2d, &grid_sum(plane, false), 4).expect("compiles")),
        ("fused_3d", WarpProgram::compile_steps(fused_3d, &grid_sum(plane_3d, false), 2).expect("compiles")),
        (
            "prefetch",
            WarpProgram::compile_for(prefetch, Strategy::RegisterCache, Layout::Window(4), &grid_sum(plane, true))
                .expect("compiles"),
        ),
        (
            "planes",
            WarpProgram::compile_for(ring, Strategy::RegisterCache, Layout::Planes(4), &grid_sum(plane_3d, false))
                .expect("compiles"),
        ),
    ]
}

/// Every snapshot case: its file name and its program.
fn cases() -> Vec<(&'static str, WarpProgram)> {
    vec![
        ("heat_1d", heat_1d()),
        ("window_1d", window_1d()),
        ("star_2d", star_2d()),
        ("star_3d", star_3d()),
        ("fused_heat_1d", fused_heat_1d()),
    ]
}

fn snapshot(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("snapshots").join(format!("{name}.txt"))
}

/// The first line where `got` and `want` differ, as a message, or `None` if they are equal.
fn first_difference(got: &str, want: &str) -> Option<String> {
    let (got_lines, want_lines): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    for k in 0..got_lines.len().max(want_lines.len()) {
        let (g, w) = (got_lines.get(k), want_lines.get(k));
        if g != w {
            return Some(format!("line {}: got {g:?}, the snapshot has {w:?}", k + 1));
        }
    }
    (got != want).then(|| "the texts differ in their line endings".to_string())
}

#[test]
fn each_kernel_prints_its_snapshot() {
    let bless = std::env::var_os("RC_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, program) in cases() {
        let text = program.machine_text().to_string();
        let path = snapshot(name);
        if bless {
            std::fs::create_dir_all(path.parent().expect("a snapshot directory")).expect("creates the directory");
            std::fs::write(&path, &text).expect("writes the snapshot");
            continue;
        }
        let want =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (RC_BLESS=1 writes it)", path.display()));
        if let Some(difference) = first_difference(&text, &want) {
            stale.push(format!("{name}: {difference}"));
        }
    }
    assert!(
        stale.is_empty(),
        "machine programs differ from their snapshots (if meant, RC_BLESS=1 rewrites them; review the diff):\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_changed_operation_changes_the_text() {
    let program = window_1d();
    let mut moved = program.clone();
    let mut changed = false;
    edit(&mut moved.machine.body, &mut |op| {
        if let Op::LoadVector { at, .. } = op {
            at.base += 4;
            changed = true;
        }
    });
    assert!(changed, "the program has vector loads");
    let (before, after) = (program.machine_text().to_string(), moved.machine_text().to_string());
    assert!(first_difference(&after, &before).is_some(), "moving a load left the text as it was");
}

fn edit(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Op)) {
    for stmt in stmts {
        match stmt {
            Stmt::Op(op) => f(op),
            Stmt::Branch { taken, fallback, .. } => {
                edit(taken, f);
                edit(fallback, f);
            }
            Stmt::Loop { body, .. } => edit(body, f),
        }
    }
}

/// What a walk of the body says the text's body lines are: per line, its depth and whether it
/// opens a branch (`if`), its other arm (`} else {`), a loop, a run of divisions, or closes a
/// block.
fn expected_lines(stmts: &[Stmt], depth: usize, out: &mut Vec<(usize, &'static str)>) {
    for stmt in stmts {
        match stmt {
            Stmt::Op(Op::Divisions(run)) => {
                out.push((depth, "divisions"));
                out.extend(run.iter().map(|_| (depth + 1, "=")));
                out.push((depth, "}"));
            }
            Stmt::Op(_) => out.push((depth, "")),
            Stmt::Branch { taken, fallback, .. } => {
                out.push((depth, "if "));
                expected_lines(taken, depth + 1, out);
                out.push((depth, "} else {"));
                expected_lines(fallback, depth + 1, out);
                out.push((depth, "}"));
            }
            Stmt::Loop { body, .. } => {
                out.push((depth, "loop "));
                expected_lines(body, depth + 1, out);
                out.push((depth, "}"));
            }
        }
    }
}

#[test]
fn every_statement_has_its_line_at_its_depth() {
    for (name, program) in cases().into_iter().chain(more_programs()) {
        let text = program.machine_text().to_string();
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.iter().position(|&l| l == "body {").expect("a body") + 1;
        assert_eq!(lines.last(), Some(&"}"), "{name}: the body is closed");
        let body = &lines[start..lines.len() - 1];
        let mut want = Vec::new();
        expected_lines(&program.machine.body, 1, &mut want);
        assert_eq!(body.len(), want.len(), "{name}: one line per statement\n{text}");
        for (k, (line, (depth, starts))) in body.iter().zip(&want).enumerate() {
            let indent = line.len() - line.trim_start().len();
            assert_eq!(indent, 4 * depth, "{name}: body line {} at depth {depth}: {line:?}", k + 1);
            let words = line.trim_start();
            let kind = match *starts {
                "=" => words.contains(" = div "),
                "" => !words.starts_with("if ") && !words.starts_with("loop ") && !words.starts_with('}'),
                starts => words.starts_with(starts),
            };
            assert!(kind, "{name}: body line {} is {starts:?}: {line:?}", k + 1);
        }
    }
}

/// The registers a line shows with a type (`r4: f32`, `r4..=r7: f32`), and the type.
fn typed(line: &str) -> Vec<(u32, String)> {
    let words: Vec<&str> = line.split([' ', ',', '[', ']']).filter(|w| !w.is_empty()).collect();
    let mut out = Vec::new();
    for pair in words.windows(2) {
        let Some(item) = pair[0].strip_suffix(':') else { continue };
        let Some(item) = item.strip_prefix('r') else { continue };
        let (first, last) = item.split_once("..=r").unwrap_or((item, item));
        let (Ok(first), Ok(last)) = (first.parse::<u32>(), last.parse::<u32>()) else { continue };
        out.extend((first..=last).map(|reg| (reg, pair[1].to_string())));
    }
    out
}

/// Every register the program writes shows its type exactly once, where the text first writes
/// it, and that type is the register's.
#[test]
fn each_written_register_shows_its_type_once() {
    for (name, program) in cases().into_iter().chain(more_programs()) {
        let text = program.machine_text().to_string();
        let mut written = BTreeSet::new();
        program.machine.visit(&mut |op| {
            written.extend(op.defs());
            // A division's slow path writes the dividend it adds `+0.0` to.
            if let Op::Divisions(run) = op {
                written.extend(run.iter().filter(|d| d.sum.is_some()).map(|d| d.dividend));
            }
        });
        let body = &text[text.find("\nbody {\n").expect("a body")..];
        let mut shown = BTreeSet::new();
        for (reg, ty) in body.lines().flat_map(typed) {
            assert!(shown.insert(reg), "{name}: r{reg}'s type shows twice\n{text}");
            assert_eq!(ty, program.reg_type(reg).to_string(), "{name}: r{reg}'s type");
        }
        assert_eq!(shown, written, "{name}: the registers shown with a type are those written\n{text}");
    }
}

#[test]
fn explain_gives_the_machine_program() {
    let program = star_2d();
    let explanation = Explanation::new("star", &program);
    assert_eq!(explanation.machine_program(), program.machine_text().to_string());
    // The plain text stays the schedule alone; the alternate form adds the machine program.
    let (plain, alternate) = (explanation.to_string(), format!("{explanation:#}"));
    assert!(!plain.contains("machine program"));
    assert_eq!(alternate, format!("{plain}\n{}", explanation.machine_program()));
}
