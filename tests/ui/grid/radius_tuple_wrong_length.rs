use rc::prelude::*;

#[stencil(radius = (1, 1, 1))]
fn plane(w: Window2<f32>) -> f32 {
    w[(0, 0)]
}

#[stencil(radius = (1, 1))]
fn volume(w: Window3<f32>) -> f32 {
    w[(0, 0, 0)]
}

fn main() {}
