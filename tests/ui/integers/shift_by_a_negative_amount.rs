use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>) -> i32 {
    (w[-1] << -2) + w[1]
}

fn main() {}
