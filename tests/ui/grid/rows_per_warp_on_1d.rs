use rc::prelude::*;

#[stencil(radius = 1, rows_per_warp = 4)]
fn f(w: Window<f32>) -> f32 {
    w[-1] + w[1]
}

fn main() {}
