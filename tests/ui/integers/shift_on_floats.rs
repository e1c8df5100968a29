use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f64>) -> f64 {
    (w[-1] >> 1) + w[1]
}

fn main() {}
