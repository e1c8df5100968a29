use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>, h: [f32; 3]) -> f32 {
    h * w[0]
}

fn main() {}
