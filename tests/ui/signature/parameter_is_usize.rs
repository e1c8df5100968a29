use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>, n: usize) -> f32 {
    w[0] * n as f32
}

fn main() {}
