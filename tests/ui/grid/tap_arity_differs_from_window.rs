use rc::prelude::*;

// A 3-component tap on a 2D window, and a 2-component tap on a 3D one.
#[stencil(radius = 1)]
fn plane(w: Window2<f32>) -> f32 {
    w[(0, 0)] + w[(0, 1, 0)]
}

#[stencil(radius = 1)]
fn volume(w: Window3<f32>) -> f32 {
    w[(0, 0, 0)] + w[(1, 0)]
}

fn main() {}
