//! A 2D kernel written by hand to the 2D kernel ABI (`KernelParam::list(Dims::Two, [f32])`):
//! thread 0 of block 0 writes what the launch passed, so a test can check the argument block's
//! order on a GPU without rc-core's 2D PTX back end.

use rc_core::body::{Body, Node};
use rc_core::BodyError;
use rc_core::{Boundary, Layout, Offset, Pattern, Radius, ScalarType, Stencil, Strategy, Window};

/// `output[0..8] = [n, n_out, in_y, in_x, out_y, out_x, p0, input[0]]` (the lengths and extents
/// converted to f32), written by thread 0 of block 0 only; every other output is left as it was.
pub const ECHO_2D_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry rc_test_echo2d(
    .param .u64 rc_test_echo2d_input,
    .param .u64 rc_test_echo2d_output,
    .param .u64 rc_test_echo2d_n,
    .param .u64 rc_test_echo2d_n_out,
    .param .u64 rc_test_echo2d_in_y,
    .param .u64 rc_test_echo2d_in_x,
    .param .u64 rc_test_echo2d_out_y,
    .param .u64 rc_test_echo2d_out_x,
    .param .f32 rc_test_echo2d_p0
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<9>;
    .reg .f32 %f<9>;

    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    or.b32 %r1, %r1, %r2;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [rc_test_echo2d_input];
    ld.param.u64 %rd2, [rc_test_echo2d_output];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    ld.param.u64 %rd3, [rc_test_echo2d_n];
    ld.param.u64 %rd4, [rc_test_echo2d_n_out];
    ld.param.u64 %rd5, [rc_test_echo2d_in_y];
    ld.param.u64 %rd6, [rc_test_echo2d_in_x];
    ld.param.u64 %rd7, [rc_test_echo2d_out_y];
    ld.param.u64 %rd8, [rc_test_echo2d_out_x];
    cvt.rn.f32.u64 %f1, %rd3;
    cvt.rn.f32.u64 %f2, %rd4;
    cvt.rn.f32.u64 %f3, %rd5;
    cvt.rn.f32.u64 %f4, %rd6;
    cvt.rn.f32.u64 %f5, %rd7;
    cvt.rn.f32.u64 %f6, %rd8;
    ld.param.f32 %f7, [rc_test_echo2d_p0];
    ld.global.f32 %f8, [%rd1];
    st.global.f32 [%rd2], %f1;
    st.global.f32 [%rd2+4], %f2;
    st.global.f32 [%rd2+8], %f3;
    st.global.f32 [%rd2+12], %f4;
    st.global.f32 [%rd2+16], %f5;
    st.global.f32 [%rd2+20], %f6;
    st.global.f32 [%rd2+24], %f7;
    st.global.f32 [%rd2+28], %f8;
DONE:
    ret;
}
"#;

fn echo_body() -> Result<Body, BodyError> {
    Body::new(ScalarType::F32, vec![ScalarType::F32], Radius::yx(1, 1), vec![Node::Tap(Offset::yx(0, 0))], 0)
}

fn echo_reference(w: Window<'_, f32>, _: (f32,)) -> f32 {
    w[0]
}

/// Radius (1, 1), boundary `valid`: an input of shape (4, 6) gives an output of shape (2, 4),
/// exactly the 8 elements the kernel writes.
pub static ECHO_2D: Stencil<f32, (f32,)> = Stencil::from_parts(
    "echo2d",
    Pattern::grid_unchecked(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Valid),
    Strategy::RegisterCache,
    Layout::RoundRobin,
    ECHO_2D_PTX,
    "rc_test_echo2d",
    echo_body,
    echo_reference,
);
