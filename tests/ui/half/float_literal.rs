use half::f16;
use rc::prelude::*;

#[stencil(radius = 1)]
fn halve(w: Window<f16>) -> f16 {
    (w[-1] + w[1]) * 0.5
}

fn main() {}
