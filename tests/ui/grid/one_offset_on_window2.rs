use rc::prelude::*;

#[stencil(radius = (1, 2))]
fn f(w: Window2<f32>) -> f32 {
    w[(0, 0)] + w[1] + w[-2]
}

#[stencil(radius = 1)]
fn g(w: Window3<f64>) -> f64 {
    w[(0, 0, 0)] - w[1]
}

fn main() {}
