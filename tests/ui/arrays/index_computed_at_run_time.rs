use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>, h: [f32; 4], i: u32) -> f32 {
    h[i as usize] * w[0]
}

fn main() {}
