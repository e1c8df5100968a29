//! The roofline every kernel is measured against: min(the device-to-device copy of the same run,
//! the arithmetic bound of the adds its taps need).

use rc::runtime::GpuInfo;
use rc::ScalarType;

/// Per-clock, per-SM throughput of the adds the stencil is made of, from the CUDA C
/// Programming Guide's arithmetic-instruction throughput table. An assumption, printed with the
/// results: the driver does not report it.
pub fn adds_per_clock_per_sm(compute_capability: (u32, u32), element: ScalarType) -> u32 {
    match (element, compute_capability) {
        // GV100, GA100: 64 FP32 lanes per SM; GH100 and later (and GA10x, AD10x): 128.
        (ScalarType::F32, (7, _) | (8, 0)) => 64,
        (ScalarType::F32, _) => 128,
        // FP64: 32 per SM on GV100/GA100, 64 on GH100 (H100/H200) and GB100, 2 elsewhere.
        (_, (7, 0) | (8, 0)) => 32,
        (_, (9, 0) | (10, 0)) => 64,
        _ => 2,
    }
}

/// The arithmetic bound in GB/s: each output needs `adds` adds (one per tap) and moves 2
/// elements (one read, one write), so `element bytes * 2 * SMs * clock * adds per clock per SM
/// / adds`. `None` when the driver does not report the clock.
pub fn arithmetic_bound(gpu: &GpuInfo, element: ScalarType, adds: u32) -> Option<f64> {
    let clock_hz = f64::from(gpu.clock_mhz?) * 1e6;
    let adds_per_s =
        f64::from(gpu.multiprocessors) * clock_hz * f64::from(adds_per_clock_per_sm(gpu.compute_capability, element));
    Some(f64::from(element.bytes()) * 2.0 * adds_per_s / f64::from(adds) / 1e9)
}

/// The assumption behind [`arithmetic_bound`], said once in the output; `adds` says how many
/// adds an output needs (`(2r+1)`, `taps`).
pub fn arithmetic_assumption(gpu: &GpuInfo, element: ScalarType, adds: &str) -> String {
    let (major, minor) = gpu.compute_capability;
    match gpu.clock_mhz {
        Some(mhz) => format!(
            "{element} arithmetic bound = {} B * 2 * {} SMs * {mhz} MHz (peak) * {} adds/clock/SM (assumed for compute {major}.{minor}) / {adds} adds per output",
            element.bytes(),
            gpu.multiprocessors,
            adds_per_clock_per_sm(gpu.compute_capability, element),
        ),
        None => format!("{element} arithmetic bound: unknown (the driver reports no clock); roofline = copy"),
    }
}

pub fn roofline(copy: Option<f64>, arithmetic: Option<f64>) -> Option<f64> {
    match (copy, arithmetic) {
        (Some(c), Some(a)) => Some(c.min(a)),
        (c, a) => c.or(a),
    }
}
