use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>, d: i32) -> i32 {
    w[-1].wrapping_div(d) + w[1]
}

fn main() {}
