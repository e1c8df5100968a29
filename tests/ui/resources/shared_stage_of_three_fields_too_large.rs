use rc::prelude::*;

// Each of the three fields stages 2128 f64 per block: 51072 bytes in all.
#[stencil(radius = 40, outputs_per_thread = 8, strategy = shared_memory)]
fn weighted(u: Window<f64>, v: Window<f64>, w: Window<f64>) -> f64 {
    u[-40] * v[0] + w[40]
}

fn main() {}
