use rc::prelude::*;

#[stencil(raduis = 3)]
fn f(w: Window<f32>) -> f32 {
    w[0]
}

fn main() {}
