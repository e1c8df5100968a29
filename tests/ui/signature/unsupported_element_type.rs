use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<u8>) -> u8 {
    w[0]
}

fn main() {}
