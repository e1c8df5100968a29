//! The register-cache article's k-stencil: `B[i] = (A[i] + ... + A[i+2k]) / (2k+1)`, with
//! `|B| = n - 2k` (boundary `valid`), for several radii k.
//!
//! One `#[stencil]` per radius, because the radius is part of the kernel: it fixes the register
//! cache and the shuffle schedule printed into the PTX. Compare the GB/s with a device-to-device
//! copy (read + write) on the same GPU: that is the ceiling for every k up to about 31. On the GPU,
//! each kernel's resource report follows its line: registers, local memory, occupancy.

mod common;

use std::error::Error;

use rc::prelude::*;

#[stencil(radius = 1, warp = 32, outputs_per_thread = 4)]
fn box_k1(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for d in -1..=1 {
        s += w[d];
    }
    s / 3.0
}

#[stencil(radius = 4, warp = 32, outputs_per_thread = 4)]
fn box_k4(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for d in -4..=4 {
        s += w[d];
    }
    s / 9.0
}

#[stencil(radius = 16, warp = 32, outputs_per_thread = 4)]
fn box_k16(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for d in -16..=16 {
        s += w[d];
    }
    s / 33.0
}

#[stencil(radius = 32, warp = 32, outputs_per_thread = 4)]
fn box_k32(w: Window<f32>) -> f32 {
    let mut s = 0.0;
    for d in -32..=32 {
        s += w[d];
    }
    s / 65.0
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    let kernels = [
        (box_k1::ENTRY, box_k1::PTX),
        (box_k4::ENTRY, box_k4::PTX),
        (box_k16::ENTRY, box_k16::PTX),
        (box_k32::ENTRY, box_k32::PTX),
    ];
    if args.emit_ptx(&kernels)? {
        return Ok(());
    }
    let backend = common::Backend::detect()?;
    let n = args.n.unwrap_or(backend.default_n());
    let input = common::noisy_sine(n);

    println!("box average over {n} f32, outputs_per_thread 4, boundary valid:");
    println!("k = 1: {}", backend.measure(&box_k1::KERNEL, &input, ())?);
    backend.print_resources(&box_k1::KERNEL)?;
    println!("k = 4: {}", backend.measure(&box_k4::KERNEL, &input, ())?);
    backend.print_resources(&box_k4::KERNEL)?;
    println!("k = 16: {}", backend.measure(&box_k16::KERNEL, &input, ())?);
    backend.print_resources(&box_k16::KERNEL)?;
    println!("k = 32: {}", backend.measure(&box_k32::KERNEL, &input, ())?);
    backend.print_resources(&box_k32::KERNEL)?;
    Ok(())
}
