use rc::prelude::*;

#[stencil(radius = 1, rows_per_warp = 4, planes_per_warp = 2)]
fn f(w: Window2<f32>) -> f32 {
    w[(-1, 0)] + w[(1, 0)]
}

fn main() {}
