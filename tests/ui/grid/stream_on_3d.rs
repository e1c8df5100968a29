use rc::prelude::*;

#[stencil(radius = 1, stream = true)]
fn f(w: Window3<f32>) -> f32 {
    w[(-1, 0, 0)] + w[(1, 0, 0)]
}

fn main() {}
