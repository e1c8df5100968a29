use rc::prelude::*;

#[stencil(radius = 2, strategy = shared_memory, distribution = auto)]
fn blur(w: Window<f32>) -> f32 {
    (w[-2] + w[-1] + w[0] + w[1] + w[2]) / 5.0
}

fn main() {}
