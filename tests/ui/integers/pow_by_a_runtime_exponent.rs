use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>, k: u32) -> i32 {
    w[0].pow(k)
}

fn main() {}
