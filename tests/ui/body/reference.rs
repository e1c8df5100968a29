use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    let r = &w[0];
    *r
}

fn main() {}
