use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) {
    let _ = w[0];
}

fn main() {}
