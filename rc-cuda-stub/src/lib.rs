//! A static `libcuda` for cust: the CUDA driver's entry points, each loading the real driver on
//! first use. This crate has no Rust items; all of it is in `build.rs`.
//!
//! cust 0.3.2 links `-lcuda` (through cust_raw), so a binary that uses it normally records
//! `NEEDED libcuda.so.1` and does not even start where no NVIDIA driver is installed ("error
//! while loading shared libraries"). Linked with this crate (x86-64 Linux), the binary instead
//! carries one small forwarding function per driver entry point: the first call opens
//! `libcuda.so.1` with `dlopen` and jumps to the driver's functions from then on; without a
//! driver every call returns `CUDA_ERROR_NO_DEVICE`, which rc reports as "no GPU". So the same
//! binary starts everywhere, and uses the GPU wherever there is a driver, whether or not the
//! build machine had one.
#![no_std]
