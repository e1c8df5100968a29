use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>, k: i32) -> i32 {
    match k {
        0 => w[0],
        _ => w[1],
    }
}

fn main() {}
