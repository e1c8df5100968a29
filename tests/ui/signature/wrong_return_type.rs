use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f64 {
    w[0] as f64
}

fn main() {}
