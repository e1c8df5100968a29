//! `zero_start::hoist`: a sum that starts from `+0.0` may add the `0.0` last, bit for bit; the
//! rewrite happens only where a fast division follows, and the PTX then adds the `0.0` on the
//! division's slow path only, or where a multiplication by a positive constant follows, which
//! then adds the `0.0` in one fused operation.

use rc_core::body::{BinaryOp, Body, Node};
use rc_core::zero_start::hoist;
use rc_core::{ptx, Boundary, Layout, Offset, Pattern, Scalar, ScalarType, Strategy, WarpProgram};

/// `(0.0 + w[-r] + ... + w[r]) / divisor`, as `let mut s = 0.0; s += ...` lowers.
fn box_body(r: u32, divisor: f32) -> Body {
    let mut nodes = vec![Node::Const(Scalar::f32(0.0))];
    for k in -(r as i32)..=(r as i32) {
        nodes.push(Node::Tap(0, Offset::x(k)));
        let (acc, tap) = (nodes.len() as u32 - 2, nodes.len() as u32 - 1);
        nodes.push(Node::Binary(BinaryOp::Add, acc, tap));
    }
    let sum = nodes.len() as u32 - 1;
    nodes.push(Node::Const(Scalar::f32(divisor)));
    nodes.push(Node::Binary(BinaryOp::Div, sum, nodes.len() as u32 - 1));
    let result = nodes.len() as u32 - 1;
    Body::new(ScalarType::F32, 1, vec![], r, nodes, vec![result]).expect("valid body")
}

/// Values where the sign of zero, NaN and infinities matter, and ordinary ones.
const SPECIAL: [f32; 9] = [-0.0, 0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-45, -3.5];

fn same(a: Scalar, b: Scalar) -> bool {
    let nan = |s: Scalar| f32::from_bits(s.bits as u32).is_nan();
    a.bits == b.bits || (nan(a) && nan(b))
}

/// Calls `check` with every window of `taps` values drawn from [`SPECIAL`].
fn every_window(taps: usize, mut check: impl FnMut(&[f32])) {
    let mut index = vec![0usize; taps];
    loop {
        let window: Vec<f32> = index.iter().map(|&i| SPECIAL[i]).collect();
        check(&window);
        let Some(k) = index.iter().position(|&i| i + 1 < SPECIAL.len()) else { break };
        index[k] += 1;
        index[..k].iter_mut().for_each(|i| *i = 0);
    }
}

fn adds(body: &Body) -> usize {
    body.nodes().iter().filter(|n| matches!(n, Node::Binary(BinaryOp::Add, ..))).count()
}

#[test]
fn a_sum_from_zero_adds_the_zero_last_and_keeps_every_bit() {
    for r in 1..=2u32 {
        let body = box_body(r, (2 * r + 1) as f32);
        let hoisted = hoist(&body);
        assert_eq!(adds(&hoisted), adds(&body), "r = {r}: one addition moves, none is lost");
        // The first addition no longer reads the zero; the one before the division does.
        let first_add = hoisted.nodes().iter().find(|n| matches!(n, Node::Binary(BinaryOp::Add, ..))).expect("an add");
        let Node::Binary(_, a, b) = *first_add else { unreachable!() };
        assert!(
            matches!(hoisted.nodes()[a as usize], Node::Tap(..))
                && matches!(hoisted.nodes()[b as usize], Node::Tap(..))
        );
        // Every combination of special values in the window.
        every_window(2 * r as usize + 1, |window| {
            let tap = |_: u32, d: Offset| Scalar::f32(window[(d.along_x() + r as i32) as usize]);
            let (want, got) = (body.eval(tap, &[])[0], hoisted.eval(tap, &[])[0]);
            assert!(same(want, got), "r = {r}, window {window:?}: {want:?} became {got:?}");
        });
    }
}

#[test]
fn sums_whose_partial_results_are_read_elsewhere_or_not_divided_stay_as_written() {
    // The partial sum 0.0 + w[-1] is also the result's other operand: not rewritten.
    let nodes = vec![
        Node::Const(Scalar::f32(0.0)),
        Node::Tap(0, Offset::x(-1)),
        Node::Binary(BinaryOp::Add, 0, 1),
        Node::Tap(0, Offset::x(1)),
        Node::Binary(BinaryOp::Add, 2, 3),
        Node::Binary(BinaryOp::Mul, 4, 2),
        Node::Const(Scalar::f32(3.0)),
        Node::Binary(BinaryOp::Div, 5, 6),
    ];
    let shared = Body::new(ScalarType::F32, 1, vec![], 1, nodes, vec![7]).expect("valid");
    assert_eq!(hoist(&shared), shared);
    // A sum that is not divided gains nothing from moving its first addition.
    let mut nodes = box_body(1, 3.0).nodes().to_vec();
    nodes.truncate(nodes.len() - 2);
    let undivided =
        Body::new(ScalarType::F32, 1, vec![], 1, nodes.clone(), vec![nodes.len() as u32 - 1]).expect("valid");
    assert_eq!(hoist(&undivided), undivided);
    // Dividing by a constant without a fast path (a power of two is exact anyway; 0 is not normal).
    let by_zero = box_body(1, 0.0);
    assert_eq!(hoist(&by_zero), by_zero);
}

#[test]
fn the_ptx_adds_the_zero_only_on_the_division_slow_path() {
    let pattern = Pattern::new(3, 32, 4, Boundary::Valid).expect("valid");
    let program = WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(4), &box_body(3, 7.0))
        .expect("compiles");
    let mut normalized = 0;
    program.machine.visit(&mut |op| {
        if let rc_core::machine::Op::Divisions(run) = op {
            normalized += run.iter().filter(|d| d.sum.is_some()).count();
        }
    });
    // Each of the two tile paths divides the four outputs' sums.
    assert_eq!(normalized, 8, "one per output and path");
    let text = ptx::print(&program, "k");
    let zero_adds: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("add.rn.f32") && l.contains("0f00000000"))
        .map(|(i, _)| i)
        .collect();
    // Two tile paths (interior and boundary), four outputs each, each just before its div.rn.
    assert_eq!(zero_adds.len(), 8, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        zero_adds.iter().all(|&i| lines[i + 1].contains("div.rn.f32")),
        "each zero addition feeds the slow division"
    );
    // The zero constant's register feeds no addition any more: the sums start with two taps.
    let zero_regs: Vec<&str> =
        lines.iter().filter_map(|l| l.trim().strip_prefix("mov.f32 ")?.strip_suffix(", 0f00000000;")).collect();
    for l in lines.iter().filter(|l| l.contains("add.rn.f32")) {
        let operands: Vec<&str> =
            l.trim().trim_end_matches(';').split([' ', ',']).filter(|s| !s.is_empty()).skip(2).collect();
        assert!(!operands.iter().any(|o| zero_regs.contains(o)), "{l} adds the zero register");
    }
}

/// `(0.0 + w[-r] + ... + w[r]) * scale` in `ty`, as `s * (1.0 / taps)` lowers.
fn scaled_body(r: u32, ty: ScalarType, scale: f64) -> Body {
    let constant = |v: f64| Node::Const(if ty == ScalarType::F32 { Scalar::f32(v as f32) } else { Scalar::f64(v) });
    let mut nodes = vec![constant(0.0)];
    for k in -(r as i32)..=(r as i32) {
        nodes.push(Node::Tap(0, Offset::x(k)));
        let (acc, tap) = (nodes.len() as u32 - 2, nodes.len() as u32 - 1);
        nodes.push(Node::Binary(BinaryOp::Add, acc, tap));
    }
    let sum = nodes.len() as u32 - 1;
    nodes.push(constant(scale));
    // The constant first for one radius, second for the other: both orders qualify.
    let (a, b) = if r % 2 == 0 { (sum, sum + 1) } else { (sum + 1, sum) };
    nodes.push(Node::Binary(BinaryOp::Mul, a, b));
    let result = nodes.len() as u32 - 1;
    Body::new(ty, 1, vec![], r, nodes, vec![result]).expect("valid body")
}

fn fused(body: &Body) -> usize {
    body.nodes().iter().filter(|n| matches!(n, Node::MulAdd(..))).count()
}

#[test]
fn a_sum_from_zero_times_a_positive_constant_becomes_one_fused_operation_and_keeps_every_bit() {
    for (ty, scale) in [
        (ScalarType::F32, 1.0 / 81.0),
        (ScalarType::F32, 3.0),
        (ScalarType::F32, f64::INFINITY),
        (ScalarType::F64, 1.0 / 9.0),
        (ScalarType::F64, 1e-300),
    ] {
        for r in 1..=2u32 {
            let body = scaled_body(r, ty, scale);
            let hoisted = hoist(&body);
            assert_eq!(
                (adds(&hoisted), fused(&hoisted)),
                (adds(&body) - 1, 1),
                "{ty:?} * {scale}, r = {r}: the zero's addition folds into the product"
            );
            let value = |x: f32| if ty == ScalarType::F32 { Scalar::f32(x) } else { Scalar::f64(f64::from(x)) };
            let same = |a: Scalar, b: Scalar| {
                let nan = |s: Scalar| {
                    if ty == ScalarType::F32 {
                        f32::from_bits(s.bits as u32).is_nan()
                    } else {
                        f64::from_bits(s.bits).is_nan()
                    }
                };
                a.bits == b.bits || (nan(a) && nan(b))
            };
            every_window(2 * r as usize + 1, |window| {
                let tap = |_: u32, d: Offset| value(window[(d.along_x() + r as i32) as usize]);
                let (want, got) = (body.eval(tap, &[])[0], hoisted.eval(tap, &[])[0]);
                assert!(same(want, got), "{ty:?} * {scale}, r = {r}, window {window:?}: {want:?} became {got:?}");
            });
        }
    }
}

#[test]
fn a_sum_from_zero_times_zero_a_negative_constant_or_a_parameter_stays_as_written() {
    // -1.0 * 0.0 is -0.0 where the fused form gives +0.0; a negative scale flips every zero.
    for scale in [0.0, -0.0, -2.0, f64::NAN] {
        let body = scaled_body(1, ScalarType::F32, scale);
        assert_eq!(hoist(&body), body, "scale {scale}");
    }
    let mut nodes = scaled_body(1, ScalarType::F32, 2.0).nodes().to_vec();
    let last = nodes.len() - 2;
    nodes[last] = Node::Param(0);
    let by_param = Body::new(ScalarType::F32, 1, vec![ScalarType::F32], 1, nodes.clone(), vec![nodes.len() as u32 - 1])
        .expect("valid");
    assert_eq!(hoist(&by_param), by_param);
    // Without the zero's -0.0 case the rewrite would be wrong: check that it matters.
    let body = scaled_body(1, ScalarType::F32, 3.0);
    let zeros = |_: u32, _: Offset| Scalar::f32(-0.0);
    assert_eq!(body.eval(zeros, &[])[0].bits, 0, "(0.0 + -0.0 + -0.0 + -0.0) * 3.0 is +0.0");
}

#[test]
fn the_ptx_of_a_scaled_sum_fuses_the_zero_into_the_product() {
    let pattern = Pattern::new(3, 32, 4, Boundary::Valid).expect("valid");
    let program = WarpProgram::compile_for(
        pattern,
        Strategy::RegisterCache,
        Layout::Window(4),
        &scaled_body(3, ScalarType::F32, 1.0 / 7.0),
    )
    .expect("compiles");
    let text = ptx::print(&program, "k");
    let lines: Vec<&str> = text.lines().collect();
    // Two tile paths of four outputs: 6 additions each (7 taps, none from zero), one fma.
    assert_eq!(lines.iter().filter(|l| l.contains("add.rn.f32")).count(), 2 * 4 * 6, "{text}");
    assert_eq!(lines.iter().filter(|l| l.contains("fma.rn.f32")).count(), 2 * 4, "{text}");
    assert_eq!(lines.iter().filter(|l| l.contains("mul.rn.f32")).count(), 0, "{text}");
}
