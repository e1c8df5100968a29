use rc::prelude::*;

#[stencil(radius = 1)]
fn step(u: Window2<f32>, k: Window<f32>, dt: f32) -> f32 {
    u[(0, 0)] + dt * (u[(0, 1)] - u[(0, 0)])
}

fn main() {}
