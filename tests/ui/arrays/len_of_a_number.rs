use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for k in 0..w[0].len() {
        s += w[k as i32 - 1];
    }
    s
}

fn main() {}
