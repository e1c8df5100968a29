use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    w[0].clamp(1.0, -1.0) + w[1].clamp(0.0, f32::NAN)
}

fn main() {}
