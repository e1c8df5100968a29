use rc::prelude::*;

#[stencil(radius = 1)]
struct S;

fn main() {}
