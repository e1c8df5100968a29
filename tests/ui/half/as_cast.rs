use half::bf16;
use rc::prelude::*;

#[stencil(radius = 1)]
fn double(w: Window<bf16>) -> bf16 {
    bf16::from_f32(w[0] as f32 * 2.0)
}

fn main() {}
