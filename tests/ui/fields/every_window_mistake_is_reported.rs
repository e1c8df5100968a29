use rc::prelude::*;

#[stencil(radius = 1)]
fn step(u: Window<f32>, dt: f32, k: Window<f64>, v: Window2<f32>) -> f32 {
    u[0] * dt
}

fn main() {}
