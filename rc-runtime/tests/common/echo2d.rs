//! A 2D kernel written by hand to the 2D kernel ABI (`KernelParam::list(Dims::Two, 1, 1, [f32])`,
//! whose `first_row` it takes and ignores):
//! thread 0 of block 0 writes what the launch passed, so a test can check the argument block's
//! order on a GPU without rc-core's 2D PTX back end.

use rc_core::body::{Body, Node};
use rc_core::BodyError;
use rc_core::{Boundary, Layout, Offset, Pattern, Radius, ScalarType, Stencil, Strategy, Window};

/// `output[0..9] = [n, n_out, in_y, in_x, out_y, out_x, p0, input[0], prefetch_rows]` (the
/// lengths, extents and distance converted to f32; the distance only where `n_out >= 9`),
/// written by thread 0 of block 0 only; every other output is left as it was.
/// (In its own file so that `ptxas` can assemble it as it is, and rc's tests of the generated
/// 2D functions can use it too.)
pub const ECHO_2D_PTX: &str = include_str!("echo2d.ptx");

fn echo_body() -> Result<Body, BodyError> {
    Body::new(
        ScalarType::F32,
        1,
        vec![ScalarType::F32],
        Radius::yx(1, 1),
        vec![Node::Tap(0, Offset::yx(0, 0))],
        vec![0],
    )
}

fn echo_reference(w: &[Window<'_, f32>], _: (f32,), out: &mut [f32]) {
    // One output field.
    out[0] = w[0][0];
}

/// Radius (1, 1), boundary `valid`: an input of shape [4, 6] gives an output of shape [2, 4], the
/// first 8 elements the kernel writes; of shape [4, 7], an output of shape [2, 5] that holds all
/// 9. Its pattern prefetches, so launches compute and pass the distance.
pub static ECHO_2D: Stencil<f32, (f32,)> = Stencil::from_parts(
    "echo2d",
    Pattern::grid_unchecked(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Valid).with_prefetch_unchecked(true),
    Strategy::RegisterCache,
    Layout::RoundRobin,
    ECHO_2D_PTX,
    "rc_test_echo2d",
    1,
    1,
    echo_body,
    echo_reference,
);
