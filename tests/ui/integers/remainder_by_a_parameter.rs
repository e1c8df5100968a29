use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<u32>, n: u32) -> u32 {
    w[-1] % n + w[1]
}

fn main() {}
