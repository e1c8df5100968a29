use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f64>) -> f64 {
    w[0].exp()
}

fn main() {}
