use rc::prelude::*;

// 900 steps of radius 4 spoil 3600 elements at each end of a block tile of at most 7168 (256
// lanes of 28 f64).
#[stencil(radius = 4, boundary = clamp, fuse = 900)]
fn nine_tap(w: Window<f64>) -> f64 {
    w[-4] + w[-2] + w[0] + w[2] + w[4]
}

fn main() {}
