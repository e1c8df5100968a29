use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>, bits: u32) -> i32 {
    (w[-1] << bits) + w[1]
}

fn main() {}
