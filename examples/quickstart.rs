//! The first thing to run: `cargo run --release --example quickstart`.
//!
//! `#[stencil]` keeps `box7` as a plain Rust function (the CPU reference) and generates beside it
//! a type `box7` with the kernel: `box7::PTX`, `box7::launch` (your stream, your device buffers),
//! `box7::run` (host slices), `box7::run_cpu`, `box7::emulate` and `box7::explain`.
//!
//! This example runs it on the GPU, or without one on the CPU emulation of the exact warp
//! program; checks the result bit for bit against `box7::run_cpu`; and reports the time and the
//! effective bandwidth (input read once + output written once). On the GPU it also prints what
//! the driver's compiler gave the kernel: registers, local memory (spills), shared memory and
//! occupancy, with a warning if it spills.

mod common;

use std::error::Error;

use rc::prelude::*;

#[stencil(radius = 3, warp = 32, outputs_per_thread = 4)]
fn box7(w: Window<f32>) -> f32 {
    (w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3]) / 7.0
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[(box7::ENTRY, box7::PTX)])? {
        return Ok(());
    }
    let backend = common::Backend::detect()?;
    let n = args.n.unwrap_or(backend.default_n());
    let input = common::noisy_sine(n);

    println!("box7 ({}) over {n} f32:", box7::KERNEL.pattern());
    println!("{}", backend.measure(&box7::KERNEL, &input, ())?);
    backend.print_resources(&box7::KERNEL)?;
    Ok(())
}
