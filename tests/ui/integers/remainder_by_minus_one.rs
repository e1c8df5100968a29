use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>) -> i32 {
    let m = -1;
    w[-1] % m + w[1]
}

fn main() {}
