use rc::prelude::*;

// `prefetch` before `stream`: the pair is checked once both are read.
#[stencil(radius = 1, prefetch = true, stream = true)]
fn f(w: Window2<f32>) -> f32 {
    w[(-1, 0)] + w[(1, 0)]
}

fn main() {}
