use rc::prelude::*;

// Two results declared, three returned.
#[stencil(radius = 1)]
fn three_for_two(u: Window<f32>, v: Window<f32>) -> (f32, f32) {
    (u[0], v[0], u[1])
}

// An array of two declared, a tuple returned.
#[stencil(radius = 1)]
fn tuple_for_array(u: Window<f32>) -> [f32; 2] {
    (u[0], u[1])
}

// A tuple declared, one value returned.
#[stencil(radius = 1)]
fn one_for_two(u: Window<f32>) -> (f32, f32) {
    u[0] + u[1]
}

fn main() {}
