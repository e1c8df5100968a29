use rc::prelude::*;

// 900 steps of radius 4 spoil 3600 elements at each end of a tile of at most 1024.
#[stencil(radius = 4, boundary = clamp, fuse = 900)]
fn nine_tap(w: Window<f32>) -> f32 {
    w[-4] + w[-2] + w[0] + w[2] + w[4]
}

fn main() {}
