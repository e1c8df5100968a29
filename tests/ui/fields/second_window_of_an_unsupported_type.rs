use rc::prelude::*;

#[stencil(radius = 1)]
fn step(u: Window<f32>, k: Window<u8>) -> f32 {
    u[0]
}

fn main() {}
