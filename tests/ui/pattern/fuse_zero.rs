use rc::prelude::*;

#[stencil(radius = 1, fuse = 0)]
fn heat(w: Window<f32>) -> f32 {
    0.25 * w[-1] + 0.5 * w[0] + 0.25 * w[1]
}

fn main() {}
