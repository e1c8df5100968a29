//! An image filter: a 5 x 5 binomial (Gaussian) blur and a Sobel edge magnitude over a 720 x 1280
//! image, edges clamped, on the GPU (or the CPU emulation of the same kernel, saying so),
//! checked bit for bit against the functions themselves.

use std::error::Error;

use rc::prelude::*;

/// The binomial 5 x 5 blur: weights (1 4 6 4 1) x (1 4 6 4 1) / 256.
#[stencil(radius = (2, 2), boundary = clamp)]
fn blur(w: Window2<f32>) -> f32 {
    const B: [f32; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];
    let mut s = 0.0;
    for dy in -2..=2 {
        for dx in -2..=2 {
            s += B[(dy + 2) as usize] * B[(dx + 2) as usize] * w[(dy, dx)];
        }
    }
    s / 256.0
}

/// The Sobel gradient magnitude.
#[stencil(radius = 1, boundary = clamp)]
fn sobel(w: Window2<f32>) -> f32 {
    let gx = (w[(-1, 1)] + 2.0 * w[(0, 1)] + w[(1, 1)]) - (w[(-1, -1)] + 2.0 * w[(0, -1)] + w[(1, -1)]);
    let gy = (w[(1, -1)] + 2.0 * w[(1, 0)] + w[(1, 1)]) - (w[(-1, -1)] + 2.0 * w[(-1, 0)] + w[(-1, 1)]);
    (gx * gx + gy * gy).sqrt()
}

const SHAPE: [usize; 2] = [720, 1280];

/// Runs `gpu` or, without a GPU, `emulate`; says which.
fn on_device(
    gpu: impl Fn() -> Result<Vec<f32>, rc::runtime::Error>,
    emulate: impl Fn() -> Result<Vec<f32>, rc::Error>,
) -> Result<(Vec<f32>, &'static str), Box<dyn Error>> {
    match gpu() {
        Ok(out) => Ok((out, "the GPU")),
        Err(e) if e.is_no_device() => Ok((emulate()?, "the CPU emulation of the kernel (no GPU)")),
        Err(e) => Err(e.into()),
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let [rows, cols] = SHAPE;
    // Rings of light and dark: edges in every direction.
    let image: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let (y, x) = ((i / cols) as f32 - rows as f32 / 2.0, (i % cols) as f32 - cols as f32 / 2.0);
            if ((x * x + y * y).sqrt() / 40.0) as u32 % 2 == 0 {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let n = rows * cols;
    let mut want = vec![0.0; n];
    blur::run_cpu(&image, SHAPE, &mut want)?;
    let (blurred, on) = on_device(
        || blur::run(&image, SHAPE),
        || blur::KERNEL.emulate_grid_vec(&[&image], SHAPE, ()).map(|mut fields| fields.remove(0)),
    )?;
    let same_blur = blurred.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
    sobel::run_cpu(&blurred, SHAPE, &mut want)?;
    let (edges, _) = on_device(
        || sobel::run(&blurred, SHAPE),
        || sobel::KERNEL.emulate_grid_vec(&[&blurred], SHAPE, ()).map(|mut fields| fields.remove(0)),
    )?;
    let same_edges = edges.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
    let strong = edges.iter().filter(|&&e| e > 0.5).count();
    println!("blur + sobel on a {rows} x {cols} image on {on}: {strong} strong-edge pixels; bit-exact against run_cpu: blur {same_blur}, sobel {same_edges}");
    if !(same_blur && same_edges) {
        return Err("a kernel's result differs from run_cpu".into());
    }
    Ok(())
}
