use rc::prelude::*;

#[stencil(radius = 3)]
fn f(w: Window<f32>, h: [f32; 6]) -> f32 {
    let mut s = 0.0;
    for k in -3..=3 {
        s += h[(k + 3) as usize] * w[k];
    }
    s
}

fn main() {}
