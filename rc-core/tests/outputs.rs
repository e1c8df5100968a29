//! Bodies of several output fields: the outputs are a list everywhere (the body's results, the
//! stores, the kernel's parameters, the emulator's buffers, the fused tiles' state), with one
//! element in every stencil `#[stencil]` makes today. A body with two results stores both
//! fields on every path, and the emulator writes both bit for bit as evaluating the body point
//! by point does; fused time steps carry two state fields as they carry one.

use rc_core::abi::KernelParam;
use rc_core::auto::estimate;
use rc_core::body::{BinaryOp, Body, Node, NodeId};
use rc_core::machine::Op;
use rc_core::testdata::{awkward, first_difference, poison};
use rc_core::{
    BodyError, Boundary, Dims, Error, Extent, Instr, Layout, LengthError, Offset, Pattern, Radius, Scalar, ScalarType,
    ScheduleError, Strategy, WarpProgram,
};

/// Appends `node` and returns its id.
fn push(nodes: &mut Vec<Node>, node: Node) -> NodeId {
    nodes.push(node);
    nodes.len() as NodeId - 1
}

/// Two outputs of the taps `taps` of field 0 (offsets in the body's dimensions): their sum, and
/// `2 * w[centre] - w[last tap]`.
fn pair(radius: Radius, taps: &[Offset]) -> Body {
    let mut nodes = Vec::new();
    let mut sum = push(&mut nodes, Node::Tap(0, taps[0]));
    for &d in &taps[1..] {
        let tap = push(&mut nodes, Node::Tap(0, d));
        sum = push(&mut nodes, Node::Binary(BinaryOp::Add, sum, tap));
    }
    let centre = push(&mut nodes, Node::Tap(0, Offset::new(&vec![0; radius.dims().count()]).expect("1-3 dims")));
    let two = push(&mut nodes, Node::Const(Scalar::f32(2.0)));
    let twice = push(&mut nodes, Node::Binary(BinaryOp::Mul, centre, two));
    let last = push(&mut nodes, Node::Tap(0, taps[taps.len() - 1]));
    let difference = push(&mut nodes, Node::Binary(BinaryOp::Sub, twice, last));
    Body::new(ScalarType::F32, 1, vec![], radius, nodes, vec![sum, difference]).expect("a valid body")
}

/// The taps `-r..=r` along x.
fn line(r: i32) -> Vec<Offset> {
    (-r..=r).map(Offset::x).collect()
}

/// The box of radius 1 in 2D.
fn box_2d() -> Vec<Offset> {
    (-1..=1).flat_map(|y| (-1..=1).map(move |x| Offset::yx(y, x))).collect()
}

/// The star of radius 1 in 3D.
fn star_3d() -> Vec<Offset> {
    let mut taps = vec![Offset::zyx(0, 0, 0)];
    for d in [-1, 1] {
        taps.extend([Offset::zyx(d, 0, 0), Offset::zyx(0, d, 0), Offset::zyx(0, 0, d)]);
    }
    taps
}

/// Every output field of `body` over `inputs` (one grid of shape `shape` per input field) by
/// the definition: output point `o` (outermost first) is the body over the windows centred on
/// input `o + r - shift` of every field, each read under the boundary rule.
fn by_definition(body: &Body, pattern: &Pattern, inputs: &[&[f32]], shape: Extent) -> Vec<Vec<f32>> {
    let (lens, out) = (shape.components(), pattern.output_shape(shape).expect("long enough").components());
    let dims = lens.len();
    let offset: Vec<i64> =
        (0..dims).map(|i| (pattern.radius().along(dims - 1 - i) - pattern.shift_along(dims - 1 - i)) as i64).collect();
    let mut outputs = vec![Vec::new(); body.output_fields() as usize];
    for linear in 0..out.iter().product::<usize>() {
        let (mut rest, mut centre) = (linear, vec![0i64; dims]);
        for i in (0..dims).rev() {
            centre[i] = (rest % out[i]) as i64 + offset[i];
            rest /= out[i];
        }
        let tap = |field: u32, d: Offset| {
            let at: Vec<i64> = (0..dims).map(|i| centre[i] + d.along(dims - 1 - i) as i64).collect();
            Scalar::f32(pattern.boundary().locate(shape, &at).map_or(0.0, |i| inputs[field as usize][i]))
        };
        for (output, value) in outputs.iter_mut().zip(body.eval(tap, &[])) {
            output.push(f32::from_bits(value.bits as u32));
        }
    }
    outputs
}

/// Emulates `program` over `inputs` into one poisoned buffer per output field.
fn emulate(program: &WarpProgram, inputs: &[&[f32]], shape: Extent) -> Result<Vec<Vec<f32>>, Error> {
    let n_out = program.declared.output_shape(shape)?.len().unwrap_or(0);
    let mut outputs = vec![vec![poison::<f32>(); n_out]; program.output_fields as usize];
    let mut slices: Vec<&mut [f32]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
    program.emulate_grid_outputs(inputs, shape, &mut slices, &[])?;
    Ok(outputs)
}

/// Each output field's stores in the warp program: `(field, row, output)` in order.
fn stores(program: &WarpProgram) -> Vec<(u32, u32, u32)> {
    let stores = program.instrs.iter().filter_map(|i| match *i {
        Instr::Store { field, row, output, .. } => Some((field, row, output)),
        _ => None,
    });
    stores.collect()
}

/// Compiles `body` on `pattern` with `strategy` and `layout`, checks that every output of the
/// tile is stored in both fields, and that the emulator writes both fields as the definition
/// does, over each of `shapes`.
fn check(body: &Body, pattern: Pattern, strategy: Strategy, layout: Layout, shapes: &[Extent]) {
    let what = format!("{pattern}, {strategy}, {layout}");
    let program = WarpProgram::compile_for(pattern, strategy, layout, body).expect("compiles");
    assert_eq!(program.output_fields, 2, "{what}");
    let stores = stores(&program);
    for field in 0..2 {
        let of_field: Vec<(u32, u32)> =
            stores.iter().filter(|s| s.0 == field).map(|&(_, row, output)| (row, output)).collect();
        let step = program.pattern.step();
        let every: Vec<(u32, u32)> = (0..step.output_rows())
            .flat_map(|row| (0..program.pattern.outputs_per_thread()).map(move |p| (row, p)))
            .collect();
        let mut sorted = of_field.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, every, "{what}: field {field} stores every output of the step once");
    }
    for &shape in shapes {
        let input: Vec<f32> = awkward(shape.len().expect("small"), 7);
        let want = by_definition(body, &pattern, &[&input], shape);
        let got = emulate(&program, &[&input], shape).unwrap_or_else(|e| panic!("{what}, {shape}: {e}"));
        for field in 0..2 {
            let at = first_difference(&got[field], &want[field]);
            assert_eq!(at, None, "{what}, shape {shape}: output field {field} differs");
        }
    }
}

#[test]
fn two_results_store_both_fields_and_emulate_as_the_definition_in_1d() {
    let body = pair(Radius::x(2), &line(2));
    let shapes = [Extent::x(1), Extent::x(37), Extent::x(1000)];
    for boundary in [Boundary::Zero, Boundary::Clamp, Boundary::Wrap, Boundary::Valid] {
        let shapes: Vec<Extent> =
            shapes.iter().copied().filter(|s| boundary != Boundary::Valid || s.along_x() >= 5).collect();
        let pattern = Pattern::new(2, 32, 8, boundary).expect("valid");
        for layout in [Layout::RoundRobin, Layout::Granule(4), Layout::Window(4), Layout::Staged(4)] {
            check(&body, pattern, Strategy::RegisterCache, layout, &shapes);
        }
        for strategy in [Strategy::SharedMemory, Strategy::Naive] {
            check(&body, pattern, strategy, Layout::RoundRobin, &shapes);
        }
    }
}

#[test]
fn two_results_store_both_fields_and_emulate_as_the_definition_in_2d_and_3d() {
    let plane = pair(Radius::yx(1, 1), &box_2d());
    let shapes = [Extent::yx(3, 5), Extent::yx(19, 70), Extent::yx(16, 128)];
    for boundary in [Boundary::Zero, Boundary::Clamp, Boundary::Valid] {
        let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 2, 1, boundary).expect("valid");
        for layout in [Layout::RoundRobin, Layout::Granule(4), Layout::Window(4)] {
            check(&plane, pattern, Strategy::RegisterCache, layout, &shapes);
        }
    }
    let volume = pair(Radius::zyx(1, 1, 1), &star_3d());
    let shapes = [Extent::zyx(3, 4, 5), Extent::zyx(9, 10, 70)];
    for boundary in [Boundary::Zero, Boundary::Valid] {
        let streaming = Pattern::grid(Radius::zyx(1, 1, 1), 32, 4, 2, 4, boundary).expect("valid");
        check(&volume, streaming, Strategy::RegisterCache, Layout::Granule(4), &shapes);
        let staged = Pattern::grid(Radius::zyx(1, 1, 1), 32, 4, 1, 4, boundary).expect("valid");
        check(&volume, staged, Strategy::RegisterCache, Layout::Planes(4), &shapes);
    }
}

#[test]
fn each_output_field_stores_its_own_vectors() {
    let body = pair(Radius::yx(1, 1), &box_2d());
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 4, 2, 1, Boundary::Zero).expect("valid");
    let program = WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Granule(4), &body).expect("ok");
    // The interior path: one vector store per output row of each field, never two fields' mixed.
    let vectors: Vec<(u32, u32, usize)> = program
        .machine
        .path(|_| true)
        .into_iter()
        .filter_map(|op| match op {
            Op::StoreVector { srcs, field, row, .. } => Some((*field, *row, srcs.len())),
            _ => None,
        })
        .collect();
    assert_eq!(vectors, [(0, 0, 4), (1, 0, 4), (0, 1, 4), (1, 1, 4)]);
}

#[test]
fn a_body_has_one_result_or_more_each_of_the_element_type() {
    let nodes = vec![Node::Tap(0, Offset::x(0)), Node::Cast(ScalarType::I32, 0)];
    assert_eq!(Body::new(ScalarType::F32, 1, vec![], 1, nodes.clone(), vec![]), Err(BodyError::NoResults));
    let err = Body::new(ScalarType::F32, 1, vec![], 1, nodes.clone(), vec![0, 1]).expect_err("an i32 result");
    assert_eq!(err, BodyError::ResultType { output: 1, expected: ScalarType::F32, got: ScalarType::I32 });
    assert_eq!(err.to_string(), "the body returns i32 for output field 1, expected the element type f32");
    assert_eq!(BodyError::NoResults.to_string(), "a body returns at least one value (one per output field), got none");
    // Both results are live, and one node may be two fields' result.
    let body = pair(Radius::x(1), &line(1));
    assert_eq!(body.output_fields(), 2);
    assert!(body.results().iter().all(|&r| body.live()[r as usize]));
    assert!(body.to_string().ends_with("return (%4, %9)"), "{body}");
    let same = Body::new(ScalarType::F32, 1, vec![], 1, vec![Node::Tap(0, Offset::x(0))], vec![0, 0]).expect("ok");
    let values = same.eval(|_, _| Scalar::f32(1.5), &[]);
    assert_eq!(values, [Scalar::f32(1.5), Scalar::f32(1.5)]);
    let program = WarpProgram::compile(Pattern::new(1, 32, 1, Boundary::Zero).expect("valid"), &same).expect("ok");
    assert_eq!(stores(&program), [(0, 0, 0), (1, 0, 0)]);
}

#[test]
fn the_kernel_takes_one_pointer_per_output_field_after_the_inputs() {
    let names = |fields, outputs| -> Vec<String> {
        KernelParam::list(Dims::One, fields, outputs, &[ScalarType::F32]).into_iter().map(|p| p.suffix()).collect()
    };
    assert_eq!(names(1, 1), ["input", "output", "n", "n_out", "p0"]);
    assert_eq!(names(2, 2), ["input", "input1", "output", "output1", "n", "n_out", "p0"]);
    let body = pair(Radius::x(2), &line(2));
    let pattern = Pattern::new(2, 32, 8, Boundary::Zero).expect("valid");
    let program = WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Granule(4), &body).expect("ok");
    let ptx = rc_core::ptx::print(&program, "rc_t");
    assert!(ptx.contains("\t.param .u64 rc_t_output,\n\t.param .u64 rc_t_output1,\n\t.param .u64 rc_t_n,"), "{ptx}");
    // Output field 1's address: loaded after the inputs', converted, and stored through.
    assert!(ptx.contains("ld.param.u64 %a6, [rc_t_output1];\n\tcvta.to.global.u64 %a6, %a6;"), "{ptx}");
    assert!(ptx.contains(", %a6;") && ptx.contains(" of output field 1"), "field 1 is stored through its own: {ptx}");
    let one = WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Granule(4), &single(&body))
        .expect("compiles");
    assert!(!rc_core::ptx::print(&one, "rc_t").contains("output1"));
    let text = program.machine_text().to_string();
    assert!(text.contains("output fields: 2") && text.contains(" to field 1 row 0 "), "{text}");
}

/// `body` with its first result only.
fn single(body: &Body) -> Body {
    let (nodes, results) = (body.nodes().to_vec(), vec![body.results()[0]]);
    Body::new(body.element(), body.fields(), body.params().to_vec(), body.radius(), nodes, results).expect("valid")
}

#[test]
fn the_emulator_takes_one_output_buffer_per_field() {
    let body = pair(Radius::x(1), &line(1));
    let program = WarpProgram::compile(Pattern::new(1, 32, 2, Boundary::Zero).expect("valid"), &body).expect("ok");
    let input = vec![1.0f32; 10];
    let mut output = vec![0.0f32; 10];
    // The one-output convenience refuses a program of two.
    let err = program.emulate(&[&input], &mut output, &[]).expect_err("one buffer for two fields");
    assert_eq!(err, Error::Length(LengthError::OutputCount { expected: 2, got: 1 }));
    assert_eq!(err.to_string(), "expected 2 outputs (one per output field, in the order the body returns them), got 1");
    let mut short = vec![0.0f32; 9];
    let err = program.emulate_outputs(&[&input], &mut [&mut output, &mut short], &[]).expect_err("output 1 short");
    assert_eq!(err, Error::Length(LengthError::OutputLength { output: 1, expected: 10, got: 9 }));
}

#[test]
fn the_cost_model_and_the_register_estimate_count_every_output_field() {
    let (two, layout) = (pair(Radius::x(2), &line(2)), Layout::Granule(4));
    let pattern = Pattern::new(2, 32, 8, Boundary::Zero).expect("valid");
    let compile = |body: &Body| WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, body).expect("ok");
    let (one, two) = (compile(&single(&two)), compile(&two));
    let (e1, e2) = (estimate(&one, layout), estimate(&two, layout));
    // One field read and two written: 3 elements of DRAM traffic per output point, not 2.
    assert!(e2.dram >= 1.5 * e1.dram * (1.0 - 1e-12), "{} vs {}", e2.dram, e1.dram);
    // Counted per output point, not per store.
    assert!(e2.instructions < 2.0 * e1.instructions, "{} vs {}", e2.instructions, e1.instructions);
    // Output field 1 keeps its own 64-bit address.
    assert_eq!(two.register_estimate().addressing, one.register_estimate().addressing + 2);
    let explanation = rc_core::Explanation::new("t", &two).to_string();
    assert!(explanation.contains("output fields: 2, each output point stores one element of each (8 bytes"));
}

/// Two state fields and a coefficient: `u' = u + k * (v[-1] - v[+1])` and `v' = v / 2 + u[-1]`
/// along x (and `+ v[y - 1]` on the first in 2D, `+ v[z + 1]` in 3D).
fn coupled(radius: Radius) -> Body {
    let dims = radius.dims().count();
    let at = |x: i32, y: i32, z: i32| Offset::new(&[z, y, x][3 - dims..]).expect("1-3 dims");
    let mut nodes = Vec::new();
    let u = push(&mut nodes, Node::Tap(0, at(0, 0, 0)));
    let k = push(&mut nodes, Node::Tap(2, at(0, 0, 0)));
    let before = push(&mut nodes, Node::Tap(1, at(-1, 0, 0)));
    let after = push(&mut nodes, Node::Tap(1, at(1, 0, 0)));
    let mut slope = push(&mut nodes, Node::Binary(BinaryOp::Sub, before, after));
    if dims >= 2 {
        let above = push(&mut nodes, Node::Tap(1, at(0, -1, 0)));
        slope = push(&mut nodes, Node::Binary(BinaryOp::Add, slope, above));
    }
    if dims == 3 {
        let next = push(&mut nodes, Node::Tap(1, at(0, 0, 1)));
        slope = push(&mut nodes, Node::Binary(BinaryOp::Add, slope, next));
    }
    let du = push(&mut nodes, Node::Binary(BinaryOp::Mul, k, slope));
    let new_u = push(&mut nodes, Node::Binary(BinaryOp::Add, u, du));
    let v = push(&mut nodes, Node::Tap(1, at(0, 0, 0)));
    let half = push(&mut nodes, Node::Const(Scalar::f32(0.5)));
    let scaled = push(&mut nodes, Node::Binary(BinaryOp::Mul, v, half));
    let left = push(&mut nodes, Node::Tap(0, at(-1, 0, 0)));
    let new_v = push(&mut nodes, Node::Binary(BinaryOp::Add, scaled, left));
    Body::new(ScalarType::F32, 3, vec![], radius, nodes, vec![new_u, new_v]).expect("a valid body")
}

/// `steps` steps of `body` by the definition: output field `f` of a step is input field `f` of
/// the next, the coefficient stays.
fn steps_by_definition(
    body: &Body,
    pattern: &Pattern,
    inputs: &[Vec<f32>],
    shape: Extent,
    steps: u32,
) -> Vec<Vec<f32>> {
    let mut state: Vec<Vec<f32>> = inputs[..2].to_vec();
    for _ in 0..steps {
        let fields: Vec<&[f32]> = state.iter().chain(&inputs[2..]).map(Vec::as_slice).collect();
        state = by_definition(body, pattern, &fields, shape);
    }
    state
}

#[test]
fn fused_time_steps_carry_every_state_field() {
    let cases = [
        (Radius::x(1), Pattern::new(1, 32, 1, Boundary::Zero), vec![Extent::x(5), Extent::x(1000)], 5),
        (Radius::x(1), Pattern::new(1, 32, 1, Boundary::Clamp), vec![Extent::x(300)], 4),
        (
            Radius::yx(1, 1),
            Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Zero),
            vec![Extent::yx(3, 7), Extent::yx(70, 150)],
            3,
        ),
        (Radius::yx(1, 1), Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Clamp), vec![Extent::yx(40, 90)], 2),
        (
            Radius::zyx(1, 1, 1),
            Pattern::grid(Radius::zyx(1, 1, 1), 32, 1, 1, 1, Boundary::Zero),
            vec![Extent::zyx(6, 9, 40)],
            2,
        ),
    ];
    for (radius, pattern, shapes, steps) in cases {
        let (body, pattern) = (coupled(radius), pattern.expect("valid"));
        let program = WarpProgram::compile_steps(pattern, &body, steps).expect("compiles");
        let what = format!("{pattern}, {steps} steps");
        for shape in shapes {
            let n = shape.len().expect("small");
            let inputs: Vec<Vec<f32>> =
                (0..3).map(|seed| awkward::<f32>(n, seed).iter().map(|v| v.clamp(-4.0, 4.0)).collect()).collect();
            let want = steps_by_definition(&body, &pattern, &inputs, shape, steps);
            let slices: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
            let got = emulate(&program, &slices, shape).unwrap_or_else(|e| panic!("{what}, {shape}: {e}"));
            for field in 0..2 {
                assert_eq!(first_difference(&got[field], &want[field]), None, "{what}, {shape}: state field {field}");
            }
        }
    }
}

#[test]
fn fused_time_steps_need_an_input_field_per_output_field() {
    let body = pair(Radius::x(1), &line(1));
    let pattern = Pattern::new(1, 32, 1, Boundary::Zero).expect("valid");
    let err = WarpProgram::compile_steps(pattern, &body, 4).expect_err("two outputs, one input field");
    assert_eq!(err, Error::Schedule(ScheduleError::StateFields { outputs: 2, fields: 1 }));
    assert_eq!(
        err.to_string(),
        "time steps feed each output field back as the input field of the same number: a body of 2 output fields \
         needs at least 2 input fields, got 1"
    );
}
