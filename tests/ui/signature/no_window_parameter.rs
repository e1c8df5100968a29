use rc::prelude::*;

#[stencil(radius = 1)]
fn f() -> f32 {
    1.0
}

fn main() {}
