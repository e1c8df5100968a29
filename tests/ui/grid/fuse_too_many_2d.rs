use rc::prelude::*;

#[stencil(radius = (2, 1), boundary = clamp, fuse = 40)]
fn heat2d(w: Window2<f32>) -> f32 {
    w[(0, 0)] + w[(-2, 0)] + w[(2, 0)] + w[(0, -1)] + w[(0, 1)]
}

fn main() {}
