//! rc inside an existing cust program, the way a Rust-CUDA project would use it: your context,
//! your stream, your device buffers, your own kernels, and an rc stencil launched between them.
//!
//! Three steps queued on one stream, with one synchronize at the end:
//!   a = 2 x          (our own hand-written PTX kernel, launched with cust's `launch!`)
//!   b = box7(a)      (`box7::launch`, boundary `valid`: n - 6 outputs)
//!   c = 0.5 b        (our kernel again)
//! and `c` checked bit for bit against the same three steps on the CPU. On the GPU, box7's
//! resource report follows (what the driver's compiler gave it in this context).

mod common;

use std::error::Error;

use rc::prelude::*;
use rc::runtime::{cust, Resources};
use rc::testdata::poison;

use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::{Module, ModuleJitOption};
use cust::stream::{Stream, StreamFlags};

#[stencil(radius = 3, warp = 32, outputs_per_thread = 4)]
fn box7(w: Window<f32>) -> f32 {
    (w[-3] + w[-2] + w[-1] + w[0] + w[1] + w[2] + w[3]) / 7.0
}

/// `y[i] = a * x[i]` for `i < n`, one thread per element. `mul.rn` is IEEE round-to-nearest, the
/// same as `a * x` in Rust, so the CPU can check it bit for bit.
const SCALE_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry scale(
    .param .u64 x,
    .param .u64 y,
    .param .f32 a,
    .param .u64 n
)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<4>;
    .reg .f32   %f<4>;
    .reg .b64   %rd<9>;

    ld.param.u64    %rd1, [x];
    ld.param.u64    %rd2, [y];
    ld.param.f32    %f1, [a];
    ld.param.u64    %rd3, [n];
    mov.u32         %r1, %ctaid.x;
    mov.u32         %r2, %ntid.x;
    mov.u32         %r3, %tid.x;
    mul.wide.u32    %rd4, %r1, %r2;
    cvt.u64.u32     %rd5, %r3;
    add.u64         %rd4, %rd4, %rd5;
    setp.ge.u64     %p1, %rd4, %rd3;
    @%p1 bra        DONE;
    cvta.to.global.u64  %rd1, %rd1;
    cvta.to.global.u64  %rd2, %rd2;
    shl.b64         %rd6, %rd4, 2;
    add.u64         %rd7, %rd1, %rd6;
    ld.global.f32   %f2, [%rd7];
    mul.rn.f32      %f3, %f1, %f2;
    add.u64         %rd8, %rd2, %rd6;
    st.global.f32   [%rd8], %f3;
DONE:
    ret;
}
"#;

const THREADS_PER_BLOCK: u32 = 256;

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[("scale", SCALE_PTX), (box7::ENTRY, box7::PTX)])? {
        return Ok(());
    }
    let on_gpu = common::find_gpu()?;
    let n = args.n.unwrap_or(common::default_n(on_gpu));
    let x = common::noisy_sine(n);

    let want = three_steps_on_cpu(&x, box7::run_cpu)?;
    let (got, resources, ran) = if on_gpu {
        let (got, resources) = three_steps_on_gpu(&x)?;
        (got, Some(resources), "on one CUDA stream")
    } else {
        (three_steps_on_cpu(&x, box7::emulate)?, None, "with box7 in the CPU emulation")
    };
    common::compare(&got, &want, &format!("scale -> box7 -> scale {ran}, n = {n}"))?;
    println!("scale -> box7 -> scale over {n} f32 {ran}: check: passed (bit-exact against the same steps on the CPU)");
    if let Some(resources) = &resources {
        common::print_report(resources);
    }
    Ok(())
}

/// The three steps on the GPU, as an existing cust program would queue them, and box7's
/// resources in this program's context (asked while the context is alive).
fn three_steps_on_gpu(x: &[f32]) -> Result<(Vec<f32>, Resources), Box<dyn Error>> {
    // Declared first, dropped last: everything below lives in this context.
    let _context = cust::quick_init()?;
    // Not NON_BLOCKING: the stream must wait for `DeviceBuffer::from_slice`'s copies, which cust
    // makes on the legacy default stream.
    let stream = Stream::new(StreamFlags::DEFAULT, None)?;
    // The PTX says sm_70; let the driver compile it for whatever GPU this is.
    let module = Module::from_ptx(SCALE_PTX, &[ModuleJitOption::DetermineTargetFromContext])?;
    let scale = module.get_function("scale")?;

    let n = x.len();
    let n_box = box7::KERNEL.output_len(n)?;
    let x_dev = DeviceBuffer::from_slice(x)?;
    // Poisoned, so that any element a kernel fails to write shows up in the check.
    let a_dev = DeviceBuffer::from_slice(&vec![poison::<f32>(); n])?;
    let mut b_dev = DeviceBuffer::from_slice(&vec![poison::<f32>(); n_box])?;
    let c_dev = DeviceBuffer::from_slice(&vec![poison::<f32>(); n_box])?;

    // SAFETY: `scale` takes (u64 x, u64 y, f32 a, u64 n), which is what is passed; x and y are
    // live device buffers of at least n elements, and the kernel touches only indices below n.
    unsafe {
        launch!(scale<<<blocks(n)?, THREADS_PER_BLOCK, 0, stream>>>(
            x_dev.as_device_ptr(), a_dev.as_device_ptr(), 2.0f32, n as u64
        ))?;
    }
    box7::launch(&stream, &a_dev, &mut b_dev)?;
    // SAFETY: as above, with b and c of n_box elements.
    unsafe {
        launch!(scale<<<blocks(n_box)?, THREADS_PER_BLOCK, 0, stream>>>(
            b_dev.as_device_ptr(), c_dev.as_device_ptr(), 0.5f32, n_box as u64
        ))?;
    }
    stream.synchronize()?;

    let mut c = vec![0.0f32; n_box];
    c_dev.copy_to(&mut c[..])?;
    Ok((c, rc::runtime::resources(&box7::KERNEL)?))
}

/// Thread blocks for one thread per element.
fn blocks(n: usize) -> Result<u32, Box<dyn Error>> {
    Ok(u32::try_from(n.div_ceil(THREADS_PER_BLOCK as usize))?)
}

/// The three steps on the CPU, with `box_step` either `box7::run_cpu` (the reference) or
/// `box7::emulate` (the warp program the GPU would run).
fn three_steps_on_cpu(
    x: &[f32],
    box_step: fn(&[f32], &mut [f32]) -> Result<(), rc::Error>,
) -> Result<Vec<f32>, Box<dyn Error>> {
    let a: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    let mut b = vec![poison::<f32>(); box7::KERNEL.output_len(a.len())?];
    box_step(&a, &mut b)?;
    Ok(b.iter().map(|v| 0.5 * v).collect())
}
