use rc::prelude::*;

#[stencil(radius = 1, rows_per_warp = 0, planes_per_warp = 1025)]
fn f(w: Window3<f32>) -> f32 {
    w[(0, 0, 0)]
}

fn main() {}
