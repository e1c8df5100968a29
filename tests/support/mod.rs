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
