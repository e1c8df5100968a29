use rc::prelude::*;

#[stencil(radius = 3)]
fn f(w: Window<f32>, n: i32) -> f32 {
    let mut s = 0.0;
    for k in 0..n {
        s += w[k];
    }
    s
}

fn main() {}
