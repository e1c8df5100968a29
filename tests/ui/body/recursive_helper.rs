use rc::prelude::*;

#[stencil(radius = 1)]
fn f(w: Window<f32>) -> f32 {
    fn halve(x: f32) -> f32 {
        if x > 1.0 { halve(x / 2.0) } else { x }
    }
    halve(w[0])
}

fn main() {}
