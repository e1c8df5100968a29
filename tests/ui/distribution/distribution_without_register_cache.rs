use rc::prelude::*;

#[stencil(radius = 2, outputs_per_thread = 4, strategy = shared_memory, distribution = granule(4))]
fn f(w: Window<f32>) -> f32 {
    w[-2] + w[2]
}

fn main() {}
