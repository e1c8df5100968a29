use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    w[0].count_ones() as f32
}

fn main() {}
