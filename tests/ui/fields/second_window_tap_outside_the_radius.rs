use rc::prelude::*;

#[stencil(radius = (1, 2))]
fn step(u: Window2<f32>, k: Window2<f32>, dt: f32) -> f32 {
    u[(0, 0)] + dt * k[(2, 0)] * u[(0, 2)] - k[0]
}

fn main() {}
