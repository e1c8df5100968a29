use rc::prelude::*;

// A window of 8 outputs per lane with 12 outputs per thread: one and a half rows.
#[stencil(radius = 2, outputs_per_thread = 12, distribution = window(8))]
fn f(w: Window<f32>) -> f32 {
    w[-2] + w[2]
}

fn main() {}
