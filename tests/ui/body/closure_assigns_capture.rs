use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    let mut total = 0.0;
    let mut add = |x: f32| {
        total += x;
        total
    };
    add(w[-1]) + add(w[1])
}

fn main() {}
