use rc::prelude::*;

// 256 threads x 64 f32 outputs and the halo: a block stage of 64 KiB, more than a kernel may declare.
#[stencil(radius = 1, outputs_per_thread = 64, strategy = shared_memory)]
fn mean3(w: Window<f32>) -> f32 {
    (w[-1] + w[0] + w[1]) / 3.0
}

fn main() {}
