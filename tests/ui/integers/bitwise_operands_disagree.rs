use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>, mask: u32) -> i32 {
    (w[-1] & mask) + w[1]
}

fn main() {}
