use rc::prelude::*;

#[stencil(radius = 3)]
fn f(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    let mut k = -3;
    while k <= 3 {
        s += w[k];
        k += 1;
    }
    s
}

fn main() {}
