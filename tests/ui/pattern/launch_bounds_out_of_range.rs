use rc::prelude::*;

#[stencil(radius = 1, max_threads_per_block = 2048, min_blocks_per_sm = 0)]
fn blur(w: Window<f32>) -> f32 {
    w[-1] + w[0] + w[1]
}

fn main() {}
