use rc::prelude::*;

#[stencil(radius = 1)]
fn f(alpha: f32, w: Window<f32>) -> f32 {
    alpha * w[0]
}

fn main() {}
