use rc::prelude::*;

#[stencil(radius = 2, prefetch = true)]
fn f(w: Window<f32>) -> f32 {
    w[-2] + w[2]
}

fn main() {}
