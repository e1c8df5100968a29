use rc::prelude::*;

// A tuple element of another type than the windows'.
#[stencil(radius = 1)]
fn mixed(u: Window<f32>, v: Window<f32>) -> (f32, f64) {
    (u[0], v[0] as f64)
}

// An array whose length is not a literal.
const N: usize = 2;
#[stencil(radius = 1)]
fn named_length(u: Window<f32>) -> [f32; N] {
    [u[0], u[1]]
}

// No element at all.
#[stencil(radius = 1)]
fn unit(u: Window<f32>) -> () {
    let _ = u[0];
}

fn main() {}
