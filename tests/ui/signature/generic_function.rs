use rc::prelude::*;

#[stencil(radius = 1)]
fn f<T>(w: Window<f32>) -> f32 {
    w[0]
}

fn main() {}
