use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    let g = |x: f32| x * 2.0;
    g(w[0])
}

fn main() {}
