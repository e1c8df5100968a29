//! What the test binaries share: the stencils several of them step, and for the GPU tests
//! contexts, guarded launches and sampling.

// The cust helpers below need the `cust` feature, which the split tests do not: `gpu_split`
// builds with `cudarc` alone and `split` with neither, so only the helpers that name cust are
// left out without it.
pub mod stencils;

#[cfg(feature = "cust")]
use rc::runtime::cust::context::Context;
#[cfg(feature = "cust")]
use rc::runtime::cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
#[cfg(feature = "cust")]
use rc::runtime::cust::stream::{Stream, StreamFlags};

/// Elements on each side of an output that a kernel must not write. A multiple of 4, so the
/// output view stays aligned for 16-byte vector stores.
#[allow(dead_code)]
pub const GUARD: usize = 32;

/// Runs `launch` on an output of `n_out` elements `poison` between two guards of `GUARD` of
/// them, waits, and returns the output; an error if the guards changed. `D` is what the
/// buffer holds: the element, or its bits (`u16` for f16 and bf16, see `rc::runtime::DeviceElement`).
#[cfg(feature = "cust")]
#[allow(dead_code)]
pub fn launch_guarded<D: DeviceCopy + PartialEq>(
    n_out: usize,
    poison: D,
    stream: &Stream,
    launch: impl FnOnce(&mut DeviceSlice<D>) -> Result<(), String>,
) -> Result<Vec<D>, String> {
    let d_out = DeviceBuffer::from_slice(&vec![poison; n_out + 2 * GUARD]).map_err(|e| e.to_string())?;
    // A view of the middle: the guards on both sides must come back untouched.
    let mut out = d_out.index(GUARD..GUARD + n_out);
    launch(&mut out)?;
    stream.synchronize().map_err(|e| format!("kernel failed: {e:?}"))?;
    let mut got = vec![poison; n_out + 2 * GUARD];
    d_out.copy_to(&mut got[..]).map_err(|e| e.to_string())?;
    let untouched = |g: &[D]| g.iter().all(|v| *v == poison);
    if !untouched(&got[..GUARD]) || !untouched(&got[GUARD + n_out..]) {
        return Err("the kernel wrote outside its output".into());
    }
    Ok(got[GUARD..GUARD + n_out].to_vec())
}

/// A context for this test's thread, or `None` (after saying so) on a machine without a GPU.
#[cfg(feature = "cust")]
#[allow(dead_code)]
pub fn gpu(test: &str) -> Option<(Context, Stream)> {
    match rc::runtime::gpu() {
        Ok(info) => {
            let context = rc::runtime::cust::quick_init().expect("a GPU is present, so its context must start");
            let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
            eprintln!("{test}: running on {info}");
            Some((context, stream))
        }
        Err(e) if e.is_no_device() => {
            eprintln!("skipping {test}: no GPU ({e})");
            None
        }
        Err(e) => panic!("{test}: the GPU is there but unusable: {e}"),
    }
}

/// `RC_GPU_SAMPLE=N` runs every N-th pattern of the sweeps (N = 1: all of them), with lengths up
/// to 4099 only, and skips the 2^31-element test: the suite under compute-sanitizer, which is
/// 10-100x slower. Unset: everything, at every length.
#[allow(dead_code)]
pub fn sample() -> Option<usize> {
    let value = std::env::var("RC_GPU_SAMPLE").ok()?;
    Some(value.parse().ok().filter(|&n: &usize| n >= 1).unwrap_or(1))
}

/// The longest input a sampled run uses.
#[allow(dead_code)]
pub const SAMPLED_MAX_LENGTH: usize = 4099;

/// Whether input length `n` runs in this run.
#[allow(dead_code)]
pub fn runs_length(n: usize) -> bool {
    sample().is_none() || n <= SAMPLED_MAX_LENGTH
}
