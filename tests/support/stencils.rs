//! The stencils several test binaries step: defined once, so that the split tests (`split`,
//! `gpu_split`) and the whole grid's (`time_steps_grid`) check the very same kernels. A binary
//! that uses only some of them leaves the others unused: the macro's items allow that.

use rc::prelude::*;

#[stencil(radius = 1, boundary = zero)]
pub fn heat_zero(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[stencil(radius = 1, boundary = clamp, fuse = 3)]
pub fn heat_clamp(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

#[stencil(radius = 1, boundary = wrap, fuse = 4)]
pub fn box_wrap(w: Window2<f64>) -> f64 {
    (w[(-1, -1)] + w[(-1, 0)] + w[(-1, 1)] + w[(0, -1)] + w[(0, 0)] + w[(0, 1)] + w[(1, -1)] + w[(1, 0)] + w[(1, 1)])
        / 9.0
}

/// Radius 2 along the split dimension, 1 across.
#[stencil(radius = (2, 1), boundary = clamp, fuse = 2)]
pub fn tall_clamp(w: Window2<f32>) -> f32 {
    0.1 * w[(-2, 0)] + 0.2 * w[(-1, 0)] + 0.4 * w[(0, 0)] + 0.2 * w[(1, 0)] + 0.1 * w[(2, 0)]
        - 0.05 * (w[(0, -1)] - w[(0, 1)])
}

/// A coefficient field `k`, read one row below as well.
#[stencil(radius = 1, boundary = zero, fuse = 3)]
pub fn varying(u: Window2<f32>, k: Window2<f32>) -> f32 {
    u[(0, 0)] + k[(0, 0)] * (u[(-1, 0)] + u[(1, 0)] - 2.0 * u[(0, 0)]) + k[(1, 0)] * (u[(0, -1)] - u[(0, 0)])
}

#[stencil(radius = 1, boundary = zero)]
pub fn heat3d_zero(w: Window3<f32>, alpha: f32) -> f32 {
    w[(0, 0, 0)]
        + alpha
            * (w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
                - 6.0 * w[(0, 0, 0)])
}

#[stencil(radius = (2, 1, 1), boundary = wrap, fuse = 2)]
pub fn deep3d_wrap(w: Window3<f32>) -> f32 {
    0.3 * w[(0, 0, 0)] + 0.2 * (w[(-2, 0, 0)] + w[(2, 0, 0)]) + 0.1 * (w[(-1, 0, 0)] + w[(1, 0, 0)])
        - 0.05 * (w[(0, -1, 0)] - w[(0, 1, 0)] + w[(0, 0, -1)] - w[(0, 0, 1)])
}
