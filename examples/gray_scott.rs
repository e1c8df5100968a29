//! Gray-Scott reaction-diffusion, a system of two fields: one stencil returns the next u and the
//! next v, and `run_steps` evolves both together, several steps per launch of the fused kernel.
//! 1000 steps on a 512 x 512 torus on the GPU (or, without one, 200 steps by the CPU emulation
//! of the same warp programs, saying so), checked bit for bit against `run_cpu_steps`.

mod common;

use std::error::Error;

use rc::prelude::*;

/// u is fed at rate `f`, v dies at rate `f + k`; they react as u + 2v -> 3v.
#[stencil(radius = 1, boundary = wrap)]
fn gray_scott(u: Window2<f32>, v: Window2<f32>, f: f32, k: f32) -> (f32, f32) {
    let lap_u = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u[(0, 0)];
    let lap_v = v[(-1, 0)] + v[(1, 0)] + v[(0, -1)] + v[(0, 1)] - 4.0 * v[(0, 0)];
    let uvv = u[(0, 0)] * v[(0, 0)] * v[(0, 0)];
    (u[(0, 0)] + 0.2 * lap_u - uvv + f * (1.0 - u[(0, 0)]), v[(0, 0)] + 0.1 * lap_v + uvv - (f + k) * v[(0, 0)])
}

const SHAPE: [usize; 2] = [512, 512];
const FEED: f32 = 0.037;
const KILL: f32 = 0.06;

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = common::Args::parse()?;
    if args.emit_ptx(&[(gray_scott::ENTRY, gray_scott::PTX), (gray_scott::FUSED_ENTRY, gray_scott::FUSED_PTX)])? {
        return Ok(());
    }
    let [rows, cols] = SHAPE;
    // u = 1 everywhere, a square of v in the middle.
    let seeded = |i: usize| (i / cols).abs_diff(rows / 2) < 20 && (i % cols).abs_diff(cols / 2) < 20;
    let u: Vec<f32> = (0..rows * cols).map(|i| if seeded(i) { 0.5 } else { 1.0 }).collect();
    let v: Vec<f32> = (0..rows * cols).map(|i| if seeded(i) { 0.25 } else { 0.0 }).collect();
    let (steps, (got_u, got_v), on) = match gray_scott::run_steps(&u, &v, SHAPE, 1000, FEED, KILL) {
        Ok(state) => (1000, state, "the GPU"),
        Err(e) if e.is_no_device() => {
            let (mut eu, mut ev) = (vec![0.0; u.len()], vec![0.0; v.len()]);
            gray_scott::emulate_steps(&u, &v, SHAPE, &mut eu, &mut ev, 200, FEED, KILL)?;
            (200, (eu, ev), "the CPU emulation of the kernels (no GPU)")
        }
        Err(e) => return Err(e.into()),
    };
    let (mut want_u, mut want_v) = (vec![0.0; u.len()], vec![0.0; v.len()]);
    gray_scott::run_cpu_steps(&u, &v, SHAPE, &mut want_u, &mut want_v, steps, FEED, KILL)?;
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let same = bits(&got_u) == bits(&want_u) && bits(&got_v) == bits(&want_v);
    let spread = got_v.iter().filter(|&&v| v > 0.1).count();
    println!(
        "gray_scott: {steps} steps of u and v on {rows} x {cols} ({} per launch) on {on}: v > 0.1 at {spread} points; \
         bit-exact against run_cpu_steps: {same}",
        gray_scott::STEPS_PER_LAUNCH
    );
    if !same {
        return Err("the kernels' result differs from run_cpu_steps".into());
    }
    Ok(())
}
