use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    let x = w[-1] & w[1];
    x
}

fn main() {}
