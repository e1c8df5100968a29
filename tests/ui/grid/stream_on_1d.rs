use rc::prelude::*;

#[stencil(radius = 1, stream = true)]
fn f(w: Window<f32>) -> f32 {
    w[-1] + w[1]
}

fn main() {}
