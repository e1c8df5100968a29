use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f64>, a: [f64; 300], b: [f64; 300]) -> f64 {
    a[0] * w[-1] + b[299] * w[1]
}

fn main() {}
