//! Hand-written stencils for rc-runtime's tests: the PTX follows the kernel ABI (see
//! `src/abi.rs`) so these tests do not depend on rc-core's PTX back end.

#![allow(dead_code)]

pub mod echo2d;

use rc_core::body::{BinaryOp, Body, Node};
use rc_core::BodyError;
use rc_core::{Boundary, Layout, Offset, Pattern, ScalarType, Stencil, Strategy, Window};

/// `out[i] = (in[i] + in[i+1] + in[i+2]) * scale` for `i < n_out`, one thread per output:
/// radius 1, boundary `valid`, warp 32, one output per thread (so `launch_shape` gives at least
/// one thread per output). `.rn` keeps ptxas from contracting into an FMA, so the result is
/// bit-exact with the CPU reference.
pub const BOX3_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry rc_test_box3(
    .param .u64 rc_test_box3_input,
    .param .u64 rc_test_box3_output,
    .param .u64 rc_test_box3_n,
    .param .u64 rc_test_box3_n_out,
    .param .f32 rc_test_box3_param0
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<10>;
    .reg .f32 %f<7>;

    ld.param.u64 %rd1, [rc_test_box3_input];
    ld.param.u64 %rd2, [rc_test_box3_output];
    ld.param.u64 %rd3, [rc_test_box3_n_out];
    ld.param.f32 %f1, [rc_test_box3_param0];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    setp.ge.u64 %p1, %rd4, %rd3;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    shl.b64 %rd6, %rd4, 2;
    add.u64 %rd7, %rd1, %rd6;
    ld.global.f32 %f2, [%rd7];
    ld.global.f32 %f3, [%rd7+4];
    ld.global.f32 %f4, [%rd7+8];
    add.rn.f32 %f5, %f2, %f3;
    add.rn.f32 %f5, %f5, %f4;
    mul.rn.f32 %f6, %f5, %f1;
    add.u64 %rd8, %rd2, %rd6;
    st.global.f32 [%rd8], %f6;
DONE:
    ret;
}
"#;

pub fn box3_body() -> Result<Body, BodyError> {
    let nodes = vec![
        Node::Tap(0, Offset::x(-1)),
        Node::Tap(0, Offset::x(0)),
        Node::Tap(0, Offset::x(1)),
        Node::Binary(BinaryOp::Add, 0, 1),
        Node::Binary(BinaryOp::Add, 3, 2),
        Node::Param(0),
        Node::Binary(BinaryOp::Mul, 4, 5),
    ];
    Body::new(ScalarType::F32, 1, vec![ScalarType::F32], 1, nodes, vec![6])
}

pub fn box3_reference(w: &[Window<'_, f32>], (scale,): (f32,), out: &mut [f32]) {
    // One output field.
    out[0] = (w[0][-1] + w[0][0] + w[0][1]) * scale;
}

const PATTERN: Pattern = Pattern::new_unchecked(1, 32, 1, Boundary::Valid);

pub static BOX3: Stencil<f32, (f32,)> = Stencil::from_parts(
    "box3",
    PATTERN,
    Strategy::RegisterCache,
    Layout::RoundRobin,
    BOX3_PTX,
    "rc_test_box3",
    1,
    1,
    box3_body,
    box3_reference,
);

/// The same kernel, but the handle says it takes an `f64` parameter: the ABI check must refuse it.
pub static BOX3_WRONG_PARAMS: Stencil<f32, (f64,)> = Stencil::from_parts(
    "box3_wrong_params",
    PATTERN,
    Strategy::RegisterCache,
    Layout::RoundRobin,
    BOX3_PTX,
    "rc_test_box3",
    1,
    1,
    wrong_body,
    wrong_reference,
);

fn wrong_body() -> Result<Body, BodyError> {
    let nodes = vec![Node::Tap(0, Offset::x(0))];
    Body::new(ScalarType::F32, 1, vec![ScalarType::F64], 1, nodes, vec![0])
}

fn wrong_reference(w: &[Window<'_, f32>], _: (f64,), out: &mut [f32]) {
    // One output field.
    out[0] = w[0][0];
}

/// PTX the JIT compiler rejects (an unknown instruction), so loading it yields a log.
pub const BROKEN_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry rc_test_broken(
    .param .u64 a,
    .param .u64 b,
    .param .u64 n,
    .param .u64 n_out,
    .param .f32 s
)
{
    frobnicate.f32 %f1, %f2;
    ret;
}
"#;

pub static BROKEN: Stencil<f32, (f32,)> = Stencil::from_parts(
    "broken",
    PATTERN,
    Strategy::RegisterCache,
    Layout::RoundRobin,
    BROKEN_PTX,
    "rc_test_broken",
    1,
    1,
    box3_body,
    box3_reference,
);

/// PTX with a NUL byte in it.
pub static WITH_NUL: Stencil<f32, (f32,)> = Stencil::from_parts(
    "with_nul",
    PATTERN,
    Strategy::RegisterCache,
    Layout::RoundRobin,
    ".version 7.0\0",
    "rc_test_box3",
    1,
    1,
    box3_body,
    box3_reference,
);

/// The GPU, or `None` after printing why the calling test is skipped.
pub fn gpu_or_skip(test: &str) -> Option<rc_runtime::GpuInfo> {
    match rc_runtime::gpu() {
        Ok(info) => Some(info),
        Err(e) => {
            eprintln!("skipping {test}: no GPU ({e})");
            None
        }
    }
}

pub fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1000) as f32 * 0.013 - 6.5).collect()
}
