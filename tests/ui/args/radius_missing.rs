use rc::prelude::*;

#[stencil(warp = 32)]
fn f(w: Window<f32>) -> f32 {
    w[0]
}

fn main() {}
