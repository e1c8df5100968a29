use rc::prelude::*;

#[stencil(radius = (1, 1))]
fn f(w: Window2<f32>, k: [[f32; 3]; 3]) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            s += k[(dy + 1) as usize][(dx + 1) as usize] * w[(dy, dx)];
        }
    }
    s
}

fn main() {}
