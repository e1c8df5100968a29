use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>, alpha: &f32) -> f32 {
    *alpha * w[0]
}

fn main() {}
