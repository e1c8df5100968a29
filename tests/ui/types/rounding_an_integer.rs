use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<i32>) -> i32 {
    w[0].round() + w[1].count_ones() as i32
}

fn main() {}
