use rc::prelude::*;

#[stencil(radius = 1, boundary = zero, fuse = 8)]
fn heat2d(w: Window2<f32>) -> f32 {
    w[(0, 0)] + w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)]
}

fn main() {}
