use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    let rising = w[0] > w[-1];
    let falling = w[1] < w[0];
    if rising < falling { w[0] } else { w[1] }
}

fn main() {}
