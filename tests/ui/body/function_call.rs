use rc::prelude::*;

fn foo(x: f32) -> f32 {
    x * 2.0
}

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    foo(w[0])
}

fn main() {}
