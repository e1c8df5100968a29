use rc::prelude::*;

#[stencil(radius = 3)]
fn f(w: Window<f32>, k: i32) -> f32 {
    w[0] + w[k]
}

fn main() {}
