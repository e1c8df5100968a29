use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window2<f32>) -> f64 {
    w[(0, 0)] as f64
}

fn main() {}
