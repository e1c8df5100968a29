use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>) -> i32 {
    w[0].rotate_left(w[1])
}

fn main() {}
