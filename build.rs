//! Lets this package's tests, examples and benches start on a machine without an NVIDIA driver.
//!
//! rc-cuda-stub's build script decides whether binaries built here need its stub `libcuda.so.1`
//! at run time (no driver on this machine) and passes the directory as DEP_RC_CUDA_STUB_RPATH
//! (empty otherwise). `cargo:rustc-link-arg` only reaches the binaries of the package that prints
//! it, so every package with tests, examples or binaries that link cust needs these lines (see
//! rc-runtime/build.rs and rc-cuda-stub/src/lib.rs). `--enable-new-dtags` makes it a RUNPATH,
//! which LD_LIBRARY_PATH can still override.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(dir) = std::env::var("DEP_RC_CUDA_STUB_RPATH") {
        if !dir.is_empty() {
            println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{dir}");
        }
    }
}
