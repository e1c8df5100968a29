use rc::prelude::*;

// 8 warps x 32 lanes x 32 f64 outputs: a stage of 64 KiB, more than a kernel may declare.
#[stencil(radius = 8, outputs_per_thread = 32, distribution = staged(32))]
fn blur(w: Window<f64>) -> f64 {
    (w[-8] + w[0] + w[8]) / 3.0
}

fn main() {}
