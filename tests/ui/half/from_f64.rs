use half::f16;
use rc::prelude::*;

#[stencil(radius = 1)]
fn narrow(w: Window<f64>) -> f64 {
    f16::from_f64(w[0]).to_f64()
}

fn main() {}
