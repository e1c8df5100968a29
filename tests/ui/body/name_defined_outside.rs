use rc::prelude::*;

const SCALE: f32 = 0.5;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    SCALE * (w[-1] + w[1])
}

fn main() {}
