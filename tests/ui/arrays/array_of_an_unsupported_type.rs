use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>, on: [bool; 3]) -> f32 {
    let mut s = 0.0;
    for k in -1..=1 {
        if on[(k + 1) as usize] {
            s += w[k];
        }
    }
    s
}

fn main() {}
