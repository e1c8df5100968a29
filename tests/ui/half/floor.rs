use half::f16;
use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f16>) -> f16 {
    w[0].floor()
}

fn main() {}
