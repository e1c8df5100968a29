use rc::prelude::*;

#[stencil(radius = 1)]
fn step(u: Window<f32>, k: Window<f64>, dt: f32) -> f32 {
    u[0] + dt * (u[1] - u[0])
}

fn main() {}
