use rc::prelude::*;

#[stencil(radius = (1, 2))]
fn f(w: Window<f32>) -> f32 {
    w[0]
}

fn main() {}
