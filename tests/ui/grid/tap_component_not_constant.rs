use rc::prelude::*;

#[stencil(radius = (1, 1))]
fn f(w: Window2<f32>, k: i32) -> f32 {
    w[(0, 0)] + w[(k, 1)]
}

fn main() {}
