//! Bodies of several input fields: what a field adds to a compiled program. Each field has its
//! own cache registers, loads, pointer and stage, on the one x schedule of the first: a field
//! that reads the same taps as the first doubles the loads and shuffles, not the fetches; the
//! cost model counts its bytes and the register estimate its address.

use rc_core::abi::KernelParam;
use rc_core::auto::estimate;
use rc_core::body::{BinaryOp, Body, Node, NodeId};
use rc_core::machine::Op;
use rc_core::{BodyError, Boundary, Dims, Instr, Layout, Offset, Pattern, Scalar, ScalarType, Strategy, WarpProgram};

/// `sum over d of w0[d] + w1[d] + ...` for every field and every `d` in `-r..=r`.
fn sum_of_fields(fields: u32, r: u32) -> Body {
    let mut nodes = vec![Node::Const(Scalar::f32(0.0))];
    for field in 0..fields {
        for d in -(r as i32)..=r as i32 {
            nodes.push(Node::Tap(field, Offset::x(d)));
            let (acc, tap) = (nodes.len() as NodeId - 2, nodes.len() as NodeId - 1);
            nodes.push(Node::Binary(BinaryOp::Add, acc, tap));
        }
    }
    let result = nodes.len() as NodeId - 1;
    Body::new(ScalarType::F32, fields, vec![], r, nodes, vec![result]).expect("a valid body")
}

fn compile(fields: u32, strategy: Strategy, layout: Layout) -> WarpProgram {
    let pattern = Pattern::new(3, 32, 8, Boundary::Zero).expect("valid");
    WarpProgram::compile_for(pattern, strategy, layout, &sum_of_fields(fields, 3)).expect("compiles")
}

/// What each operation of the program's interior path that reads input field `field` from
/// memory reads: where, in which lanes and rows, how wide (not into which registers).
fn memory_reads(program: &WarpProgram, field: u32) -> Vec<String> {
    program
        .machine
        .path(|_| true)
        .into_iter()
        .filter_map(|op| match *op {
            Op::Load { field: f, at, lanes, row, cache, .. } if f == field => {
                Some(format!("load {at:?} {lanes:?} {row} {}", cache.is_some()))
            }
            Op::LoadVector { field: f, at, lanes, row, ref dsts, .. } if f == field => {
                Some(format!("vector {at:?} {lanes:?} {row} {}", dsts.len()))
            }
            Op::ReadStage { field: f, at, ref dsts, .. } if f == field => {
                Some(format!("read stage {at:?} {}", dsts.len()))
            }
            Op::StageBlock { field: f, lead, elements } if f == field => Some(format!("stage block {lead} {elements}")),
            Op::Shared { field: f, at, row, .. } if f == field => Some(format!("shared {at:?} {row}")),
            Op::StageWarp { field: f, stage } if f == field => Some(format!("stage warp {stage:?}")),
            _ => None,
        })
        .collect()
}

#[test]
fn a_body_reads_only_the_fields_it_declares() {
    let tap = |field| vec![Node::Tap(field, Offset::x(0))];
    let err = Body::new(ScalarType::F32, 2, vec![], 1, tap(2), vec![0]).expect_err("field 2 of 2");
    assert_eq!(err, BodyError::NoSuchField { node: 0, field: 2, fields: 2 });
    assert_eq!(err.to_string(), "node 0: tap of input field 2, but the body has 2 (numbered from 0)");
    assert_eq!(Body::new(ScalarType::F32, 0, vec![], 1, tap(0), vec![0]), Err(BodyError::NoFields));
    let body = Body::new(ScalarType::F32, 3, vec![], 1, tap(1), vec![0]).expect("field 1 of 3");
    assert_eq!((body.fields(), body.used_field_taps()), (3, vec![(1, Offset::x(0))]));
    // `eval` asks for the field it reads.
    let value = body.eval(|field, d| Scalar::f32(10.0 * field as f32 + d.along_x() as f32), &[]);
    assert_eq!(value, vec![Scalar::f32(10.0)]);
    assert_eq!(body.to_string(), "%0 = w1[0] : f32\nreturn %0");
}

#[test]
fn every_field_is_loaded_as_the_first_on_one_schedule() {
    for layout in [Layout::RoundRobin, Layout::Granule(4), Layout::Window(8), Layout::Staged(8)] {
        let (one, two) = (compile(1, Strategy::RegisterCache, layout), compile(2, Strategy::RegisterCache, layout));
        // One schedule: the same fetches, each made once per field.
        assert_eq!(one.schedule.fetches.len(), two.schedule.fetches.len(), "{layout}");
        let shuffles = |p: &WarpProgram| p.instrs.iter().filter(|i| matches!(i, Instr::Shuffle { .. })).count();
        assert_eq!(2 * shuffles(&one), shuffles(&two), "{layout}");
        // Each field reads what the one field of the other program reads.
        let reads = memory_reads(&one, 0);
        assert!(!reads.is_empty(), "{layout}");
        assert_eq!(memory_reads(&two, 0), reads, "{layout}");
        assert_eq!(memory_reads(&two, 1), reads, "{layout}");
    }
}

#[test]
fn every_field_has_its_own_stage() {
    for (strategy, layout) in
        [(Strategy::SharedMemory, Layout::RoundRobin), (Strategy::RegisterCache, Layout::Staged(8))]
    {
        let (one, three) = (compile(1, strategy, layout), compile(3, strategy, layout));
        let bytes = one.machine.shared_bytes.expect("a stage");
        assert_eq!(three.machine.shared_bytes, Some(3 * bytes), "{strategy}, {layout}");
        let ptx = rc_core::ptx::print(&three, "rc_t");
        assert!(ptx.contains(&format!(".shared .align 16 .b8 rc_stage[{}];", 3 * bytes)), "{ptx}");
        for field in 1..3 {
            assert!(ptx.contains(&format!(" of field {field} ")), "{strategy}, {layout}: field {field} is staged");
        }
    }
}

#[test]
fn each_field_has_its_own_pointer_and_one_field_kernels_keep_theirs() {
    let names = |fields| -> Vec<String> {
        KernelParam::list(Dims::Two, fields, 1, &[ScalarType::F32]).into_iter().map(|p| p.suffix()).collect()
    };
    assert_eq!(
        names(1),
        ["input", "output", "n", "n_out", "in_y", "in_x", "out_y", "out_x", "first_row", "prefetch_rows", "p0"]
    );
    assert_eq!(
        names(3),
        [
            "input",
            "input1",
            "input2",
            "output",
            "n",
            "n_out",
            "in_y",
            "in_x",
            "out_y",
            "out_x",
            "first_row",
            "prefetch_rows",
            "p0"
        ]
    );
    let one = rc_core::ptx::print(&compile(1, Strategy::RegisterCache, Layout::Granule(4)), "rc_t");
    let two = rc_core::ptx::print(&compile(2, Strategy::RegisterCache, Layout::Granule(4)), "rc_t");
    assert!(!one.contains("input1"));
    // Field 1's address: loaded, converted to a global address, and read through.
    assert!(two.contains(".param .u64 rc_t_input1"), "{two}");
    assert!(two.contains("ld.param.u64 %a6, [rc_t_input1];\n\tcvta.to.global.u64 %a6, %a6;"), "{two}");
    assert!(two.contains(", %a6;"), "field 1 is read through its own address: {two}");
}

#[test]
fn the_cost_model_and_the_register_estimate_count_every_field() {
    let layout = Layout::Granule(4);
    let (one, two) = (compile(1, Strategy::RegisterCache, layout), compile(2, Strategy::RegisterCache, layout));
    let (e1, e2) = (estimate(&one, layout), estimate(&two, layout));
    // Two fields read and one output written: 3 elements of DRAM traffic per output, not 2 (and
    // more clocks still where the second field's registers lower the occupancy).
    assert!(e2.dram >= 1.5 * e1.dram * (1.0 - 1e-12), "{} vs {}", e2.dram, e1.dram);
    assert!(e2.instructions > e1.instructions && e2.wavefronts > e1.wavefronts);
    let (r1, r2) = (one.register_estimate(), two.register_estimate());
    // One more 64-bit address, and at least as many cache registers.
    assert_eq!(r2.addressing, r1.addressing + 2);
    assert!(r2.cache >= r1.cache, "{r2} vs {r1}");
    assert!(rc_core::Explanation::new("t", &two).to_string().contains("input fields: 2"));
}
