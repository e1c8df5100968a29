use rc::prelude::*;

#[stencil(radius = 1, strategy = shared_memory, prefetch = true)]
fn f(w: Window2<f32>) -> f32 {
    w[(-1, 0)] + w[(0, 1)]
}

fn main() {}
