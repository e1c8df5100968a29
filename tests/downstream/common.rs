//! The stencils and the CPU check every downstream binary runs.

use rc::prelude::*;

/// A heat step with a runtime coefficient: clamped boundary, the cost model's distribution.
#[stencil(radius = 2, boundary = clamp)]
pub fn smooth(w: Window<f32>, alpha: f32) -> f32 {
    w[0] + alpha * (w[-2] + w[-1] - 4.0 * w[0] + w[1] + w[2])
}

/// An f64 filter with an integer parameter, on the article's distribution.
#[stencil(radius = 3, outputs_per_thread = 2, distribution = round_robin)]
pub fn weighted(w: Window<f64>, scale: i32) -> f64 {
    let mut sum = 0.0;
    for k in -3..=3 {
        sum += w[k] * (4 - k.abs()) as f64;
    }
    sum / 16.0 * scale as f64
}

/// The input: long enough for many blocks, not a multiple of any tile.
pub fn input_f32() -> Vec<f32> {
    (0..(1 << 20) + 13).map(|i| (i as f32 * 1e-3).sin()).collect()
}

pub fn input_f64() -> Vec<f64> {
    (0..(1 << 18) + 7).map(|i| (i as f64 * 3e-3).cos()).collect()
}

/// `run_cpu` (the functions themselves) and `emulate` (the kernels' warp programs on the CPU),
/// compared bit for bit. Returns the references, or a description of the first difference.
pub fn check_cpu(f32_input: &[f32], f64_input: &[f64]) -> Result<(Vec<f32>, Vec<f64>), String> {
    let n = smooth::KERNEL.output_len(f32_input.len()).map_err(|e| e.to_string())?;
    let (mut reference, mut emulated) = (vec![0.0; n], vec![0.0; n]);
    smooth::run_cpu(f32_input, &mut reference, 0.2).map_err(|e| e.to_string())?;
    smooth::emulate(f32_input, &mut emulated, 0.2).map_err(|e| e.to_string())?;
    first_difference("smooth: emulate", &reference, &emulated, f32::to_bits)?;

    let n = weighted::KERNEL.output_len(f64_input.len()).map_err(|e| e.to_string())?;
    let (mut reference64, mut emulated64) = (vec![0.0; n], vec![0.0; n]);
    weighted::run_cpu(f64_input, &mut reference64, 3).map_err(|e| e.to_string())?;
    weighted::emulate(f64_input, &mut emulated64, 3).map_err(|e| e.to_string())?;
    first_difference("weighted: emulate", &reference64, &emulated64, f64::to_bits)?;
    println!(
        "run_cpu and emulate agree bit for bit: smooth ({} outputs, {}), weighted ({} outputs, {})",
        reference.len(),
        smooth::KERNEL.layout(),
        reference64.len(),
        weighted::KERNEL.layout()
    );
    Ok((reference, reference64))
}

/// `Err` naming the first element where `got` differs from `expected` in its bits.
pub fn first_difference<T: Copy + std::fmt::Debug, B: PartialEq>(
    what: &str,
    expected: &[T],
    got: &[T],
    bits: fn(T) -> B,
) -> Result<(), String> {
    if expected.len() != got.len() {
        return Err(format!("{what}: {} outputs, expected {}", got.len(), expected.len()));
    }
    match expected.iter().zip(got).position(|(&e, &g)| bits(e) != bits(g)) {
        Some(i) => Err(format!("{what}: output {i} is {:?}, expected {:?} (run_cpu)", got[i], expected[i])),
        None => Ok(()),
    }
}
