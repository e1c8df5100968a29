use rc::prelude::*;

#[stencil(radius = 3)]
fn f(w: Window<f32>, k: i32) -> f32 {
    let a = w[4] + w[0].sin();
    let b = w[k] + foo(w[1]);
    a + b + SCALE
}

fn main() {}
