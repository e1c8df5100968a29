use half::f16;
use rc::prelude::*;

#[stencil(radius = 1)]
fn scale(w: Window<f16>, gain: f32) -> f16 {
    w[0] * gain
}

fn main() {}
