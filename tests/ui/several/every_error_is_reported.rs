use rc::prelude::*;

#[stencil(radius = 3, warp = 24, boundary = reflect)]
fn f<T>(w: Window<f32>) -> f32 {
    w[-3] + w[4] + w[0].sin()
}

fn main() {}
