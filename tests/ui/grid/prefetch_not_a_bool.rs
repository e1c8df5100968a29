use rc::prelude::*;

#[stencil(radius = 1, prefetch = "yes")]
fn f(w: Window2<f32>) -> f32 {
    w[(-1, 0)] + w[(1, 0)]
}

fn main() {}
