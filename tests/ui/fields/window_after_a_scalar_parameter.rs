use rc::prelude::*;

#[stencil(radius = 1)]
fn step(u: Window<f32>, dt: f32, k: Window<f32>) -> f32 {
    u[0] + dt * (k[1] * (u[1] - u[0]) - k[-1] * (u[0] - u[-1]))
}

fn main() {}
