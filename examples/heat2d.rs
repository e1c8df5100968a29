//! A 2D heat step on a 1024 x 1024 plate, `u' = u + alpha * laplacian(u)` with insulated edges
//! (boundary `clamp`), run for 100 steps on the GPU (or, without one, by the CPU emulation of
//! the same warp program, saying so) and checked bit for bit against the function itself.

use std::error::Error;

use rc::prelude::*;

#[stencil(radius = (1, 1), boundary = clamp)]
fn laplace(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

const SHAPE: [usize; 2] = [1024, 1024];
const ALPHA: f32 = 0.2;
const STEPS: usize = 100;

fn main() -> Result<(), Box<dyn Error>> {
    let [rows, cols] = SHAPE;
    // A hot square in a cold plate.
    let initial: Vec<f32> = (0..rows * cols)
        .map(|i| if (i / cols).abs_diff(rows / 2) < 64 && (i % cols).abs_diff(cols / 2) < 64 { 100.0 } else { 0.0 })
        .collect();
    let mut want = initial.clone();
    let mut next = vec![0.0; want.len()];
    for _ in 0..STEPS {
        laplace::run_cpu(&want, SHAPE, &mut next, ALPHA)?;
        std::mem::swap(&mut want, &mut next);
    }
    let (mut got, mut on) = (initial, "the GPU");
    for step in 0..STEPS {
        got = match laplace::run(&got, SHAPE, ALPHA) {
            Ok(out) => out,
            Err(e) if e.is_no_device() && step == 0 => {
                on = "the CPU emulation of the kernel (no GPU)";
                laplace::emulate(&got, SHAPE, &mut next, ALPHA)?;
                next.clone()
            }
            Err(e) if e.is_no_device() => {
                laplace::emulate(&got, SHAPE, &mut next, ALPHA)?;
                next.clone()
            }
            Err(e) => return Err(e.into()),
        };
    }
    let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
    let centre = got[rows / 2 * cols + cols / 2];
    println!("heat2d: {STEPS} steps of {rows} x {cols} on {on}: centre {centre:.4}; bit-exact against run_cpu: {same}");
    if !same {
        return Err("the kernel's result differs from run_cpu".into());
    }
    Ok(())
}
