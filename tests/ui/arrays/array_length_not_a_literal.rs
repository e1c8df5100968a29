use rc::prelude::*;

const TAPS: usize = 5;

#[stencil(radius = 2)]
fn fir(w: Window<f32>, h: [f32; TAPS]) -> f32 {
    let mut s = 0.0;
    for k in -2..=2 {
        s += h[(k + 2) as usize] * w[k];
    }
    s
}

fn main() {}
