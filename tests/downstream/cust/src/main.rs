//! A crate depending on rc with the defaults: launches through cust.

#[path = "../../common.rs"]
mod common;
#[path = "../../gpu.rs"]
mod gpu;

fn main() -> std::process::ExitCode {
    gpu::main("cust")
}
