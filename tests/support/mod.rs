//! What the GPU test binaries share.

use rc::runtime::cust::context::Context;
use rc::runtime::cust::stream::{Stream, StreamFlags};

/// A context for this test's thread, or `None` (after saying so) on a machine without a GPU.
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
