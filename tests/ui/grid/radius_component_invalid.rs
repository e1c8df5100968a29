use rc::prelude::*;

// Each component is checked as a 1D radius, and each wrong one is reported.
#[stencil(radius = (0, 5000))]
fn f(w: Window2<f32>) -> f32 {
    w[(0, 0)]
}

fn main() {}
