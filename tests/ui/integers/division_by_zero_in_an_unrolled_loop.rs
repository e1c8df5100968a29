use rc::prelude::*;

#[stencil(radius = 2)]
fn f(w: Window<u32>) -> u32 {
    let mut s = 0;
    for k in 0..3 {
        s += w[k] / k as u32;
    }
    s
}

fn main() {}
