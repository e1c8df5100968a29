use rc::prelude::*;

#[stencil(radius = 3)]
fn f(w: Window<f32>) -> f32 {
    w[-3] + w[0] + w[4]
}

fn main() {}
