use rc::prelude::*;

const N: usize = 3;

#[stencil(radius = 1)]
fn f(w: Window<i32>, h: [i32; N], d: i32, g: [f32; 2]) -> i32 {
    let a = h[0] + w[-1] / d;
    let b = (w[1] << 32) + w[0] % -1;
    let c = (g[0] & g[1]) as i32 + g[2] as i32;
    a + b + c
}

fn main() {}
