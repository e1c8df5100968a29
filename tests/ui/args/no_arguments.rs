use rc::prelude::*;

#[stencil]
fn f(w: Window<f32>) -> f32 {
    w[0]
}

fn main() {}
