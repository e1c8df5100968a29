use rc::prelude::*;

// 600 steps of radius 4 spoil 2400 elements at each end of a block tile of at most 4096 (256
// lanes of 16 f64).
#[stencil(radius = 4, boundary = clamp, fuse = 600)]
fn nine_tap(w: Window<f64>) -> f64 {
    w[-4] + w[-2] + w[0] + w[2] + w[4]
}

fn main() {}
