//! A crate depending on rc with `default-features = false, features = ["cudarc"]`: launches through cudarc.

#[path = "../../common.rs"]
mod common;
#[path = "../../gpu.rs"]
mod gpu;

fn main() -> std::process::ExitCode {
    gpu::main("cudarc")
}
