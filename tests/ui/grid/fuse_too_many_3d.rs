use rc::prelude::*;

#[stencil(radius = 1, boundary = zero, fuse = 8)]
fn heat3d(w: Window3<f32>) -> f32 {
    w[(0, 0, 0)] + w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)]
}

fn main() {}
