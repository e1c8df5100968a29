use rc::prelude::*;

#[stencil(radius = 1, warp = 24)]
fn f(w: Window<f32>) -> f32 {
    w[-1] + w[0] + w[1]
}

fn main() {}
