use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    (|x: f32| x * 2.0)(w[0])
}

fn main() {}
