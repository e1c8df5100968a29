use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<u32>) -> u32 {
    w[-1].wrapping_shl(-3) + w[1]
}

fn main() {}
