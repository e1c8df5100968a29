//! Stencils that are not weighted sums: a running maximum (dilation) over 17 elements of a
//! periodic signal, and the total variation `sum |u[k+1] - u[k]|` over a 17-element window with
//! zeros beyond the ends. A register cache serves any function of the window, not only linear ones.
//! On the GPU, each kernel's resource report follows its line.

mod common;

use std::error::Error;

use rc::prelude::*;

#[stencil(radius = 8, warp = 32, outputs_per_thread = 4, boundary = wrap)]
fn max_filter(w: Window<f32>) -> f32 {
    let mut m = f32::NEG_INFINITY;
    for k in -8..=8 {
        m = m.max(w[k]);
    }
    m
}

#[stencil(radius = 8, warp = 32, outputs_per_thread = 4, boundary = zero)]
fn total_variation(w: Window<f32>) -> f32 {
    let mut tv = 0.0;
    for k in -8..8 {
        tv += (w[k + 1] - w[k]).abs();
    }
    tv
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[(max_filter::ENTRY, max_filter::PTX), (total_variation::ENTRY, total_variation::PTX)])? {
        return Ok(());
    }
    let backend = common::Backend::detect()?;
    let n = args.n.unwrap_or(backend.default_n());
    let input = common::noisy_sine(n);

    println!("over {n} f32:");
    println!("max_filter ({}): {}", max_filter::KERNEL.pattern(), backend.measure(&max_filter::KERNEL, &input, ())?);
    backend.print_resources(&max_filter::KERNEL)?;
    println!(
        "total_variation ({}): {}",
        total_variation::KERNEL.pattern(),
        backend.measure(&total_variation::KERNEL, &input, ())?
    );
    backend.print_resources(&total_variation::KERNEL)?;
    Ok(())
}
