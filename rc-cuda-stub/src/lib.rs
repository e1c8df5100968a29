//! A link stub for the CUDA driver library, `libcuda.so.1`. This crate has no Rust items; all of
//! it is in `build.rs`:
//!
//! - cust 0.3.2 links `-lcuda` (through cust_raw), so every binary that uses it needs a
//!   `libcuda.so` at link time and a `libcuda.so.1` at start-up. On a machine without an NVIDIA
//!   driver (CI, laptops) neither exists. `build.rs` compiles a stub with that soname in which
//!   every driver function returns `CUDA_ERROR_NO_DEVICE`, and adds its directory to the link
//!   search path of every package that depends on this one.
//! - Binaries record only the soname (`NEEDED libcuda.so.1`), so on a GPU machine the real
//!   driver is loaded, not the stub.
//! - So that binaries built on a machine without a driver also *start* there, `build.rs`
//!   publishes the stub's directory as `DEP_RC_CUDA_STUB_RPATH` (empty when the build machine
//!   has a real driver), and the packages whose binaries run (`rc`, `rc-runtime`) add it to
//!   their binaries' `RUNPATH` in their own build scripts (`cargo:rustc-link-arg` does not reach
//!   dependents).
//!
//! The environment variable `RC_CUDA_STUB_RPATH` overrides the driver detection at build time:
//! `never` (no RUNPATH entry) or `always` (add it even though a driver was found).
#![no_std]
