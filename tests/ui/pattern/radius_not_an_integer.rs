use rc::prelude::*;

#[stencil(radius = 2.5)]
fn f(w: Window<f32>) -> f32 {
    w[0]
}

fn main() {}
