use rc::prelude::*;

#[stencil(radius = 4000, outputs_per_thread = 8, boundary = zero, distribution = round_robin)]
fn huge(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for k in -4000..=4000 {
        s += w[k];
    }
    s
}

fn main() {}
