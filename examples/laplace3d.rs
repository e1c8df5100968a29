//! The 3D 7-point Laplacian on a 128^3 grid with zero outside (boundary `zero`), on the GPU (or
//! the CPU emulation of the same kernel, saying so), checked bit for bit against the function.

use std::error::Error;

use rc::prelude::*;

#[stencil(radius = (1, 1, 1), boundary = zero)]
fn laplace7(w: Window3<f32>, h2: f32) -> f32 {
    let neighbours = w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)];
    (neighbours - 6.0 * w[(0, 0, 0)]) / h2
}

const SHAPE: [usize; 3] = [128, 128, 128];

fn main() -> Result<(), Box<dyn Error>> {
    let n = SHAPE.iter().product::<usize>();
    let h = 1.0 / SHAPE[2] as f32;
    // f(x, y, z) = x^2 + y^2 + z^2, whose Laplacian is 6 away from the boundary.
    let field: Vec<f32> = (0..n)
        .map(|i| {
            let (z, y, x) = (i / (SHAPE[1] * SHAPE[2]), i / SHAPE[2] % SHAPE[1], i % SHAPE[2]);
            [z, y, x].iter().map(|&c| (c as f32 * h).powi(2)).sum()
        })
        .collect();
    let mut want = vec![0.0; n];
    laplace7::run_cpu(&field, SHAPE, &mut want, h * h)?;
    let (got, on) = match laplace7::run(&field, SHAPE, h * h) {
        Ok(out) => (out, "the GPU"),
        Err(e) if e.is_no_device() => (
            laplace7::KERNEL.emulate_grid_vec(&[&field], SHAPE, (h * h,))?.remove(0),
            "the CPU emulation of the kernel (no GPU)",
        ),
        Err(e) => return Err(e.into()),
    };
    let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
    let inner = got[(64 * SHAPE[1] + 64) * SHAPE[2] + 64];
    println!("laplace7 on {}^3 on {on}: interior value {inner:.3} (6 expected, up to rounding); bit-exact against run_cpu: {same}", SHAPE[0]);
    if !same {
        return Err("the kernel's result differs from run_cpu".into());
    }
    Ok(())
}
