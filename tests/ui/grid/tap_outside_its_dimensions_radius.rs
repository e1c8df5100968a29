use rc::prelude::*;

#[stencil(radius = (1, 3))]
fn f(w: Window2<f32>) -> f32 {
    // dx = 3 is inside rx = 3; dy = 2 is outside ry = 1.
    w[(0, 3)] + w[(2, 0)]
}

#[stencil(radius = (1, 2, 1))]
fn g(w: Window3<f32>) -> f32 {
    let mut s = 0.0;
    for dz in -1..=1 {
        s += w[(dz, 0, 2)];
    }
    s
}

fn main() {}
