//! The CUDA driver functions rc-runtime calls itself, declared with a plain `u32` result.
//!
//! Why not `cust::sys`: cust_raw declares every driver function as returning `cudaError_enum`, a
//! Rust enum generated from CUDA 11.4's `cuda.h`. Today's drivers return codes that enum does not
//! list (CUDA 12 added several), and a value outside a Rust enum's variants is undefined
//! behaviour. These declarations name the same symbols, so they bind to the same library cust
//! links: the NVIDIA driver's `libcuda.so.1`, or rc-cuda-stub's stand-in on machines without one
//! (every name used here is in `rc-cuda-stub/cu_functions.txt`). The `_v2` names are the ones
//! `cuda.h` maps the plain names to.
//!
//! Everything else (memory, streams) goes through cust's safe API.

#![allow(non_snake_case)]

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_void};

/// A `CUresult`.
pub(crate) type CuResult = u32;
pub(crate) const CUDA_SUCCESS: CuResult = 0;

pub(crate) type CuDevice = c_int;
/// Opaque driver handles. They name driver objects; none of them is tied to a thread.
pub(crate) type CuContext = *mut c_void;
pub(crate) type CuModule = *mut c_void;
pub(crate) type CuFunction = *mut c_void;
pub(crate) type CuStream = *mut c_void;

/// `CUjit_option` values (an `int`-sized C enum).
pub(crate) const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
pub(crate) const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

extern "C" {
    pub(crate) fn cuInit(flags: c_uint) -> CuResult;
    pub(crate) fn cuDriverGetVersion(version: *mut c_int) -> CuResult;
    pub(crate) fn cuGetErrorName(error: CuResult, name: *mut *const c_char) -> CuResult;
    pub(crate) fn cuGetErrorString(error: CuResult, text: *mut *const c_char) -> CuResult;

    pub(crate) fn cuDeviceGetCount(count: *mut c_int) -> CuResult;
    pub(crate) fn cuDeviceGet(device: *mut CuDevice, ordinal: c_int) -> CuResult;
    pub(crate) fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CuDevice) -> CuResult;
    pub(crate) fn cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: CuDevice) -> CuResult;
    pub(crate) fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CuDevice) -> CuResult;
    pub(crate) fn cuDeviceCanAccessPeer(can_access: *mut c_int, device: CuDevice, peer: CuDevice) -> CuResult;

    pub(crate) fn cuDevicePrimaryCtxRetain(context: *mut CuContext, device: CuDevice) -> CuResult;
    pub(crate) fn cuDevicePrimaryCtxRelease_v2(device: CuDevice) -> CuResult;
    pub(crate) fn cuDevicePrimaryCtxGetState(device: CuDevice, flags: *mut c_uint, active: *mut c_int) -> CuResult;

    pub(crate) fn cuCtxGetCurrent(context: *mut CuContext) -> CuResult;
    pub(crate) fn cuCtxSetCurrent(context: CuContext) -> CuResult;
    pub(crate) fn cuCtxGetDevice(device: *mut CuDevice) -> CuResult;
    pub(crate) fn cuCtxPushCurrent_v2(context: CuContext) -> CuResult;
    pub(crate) fn cuCtxPopCurrent_v2(context: *mut CuContext) -> CuResult;
    pub(crate) fn cuCtxSynchronize() -> CuResult;
    pub(crate) fn cuStreamGetCtx(stream: CuStream, context: *mut CuContext) -> CuResult;

    /// `attribute` is a `CUpointer_attribute`; `address` a `CUdeviceptr`.
    pub(crate) fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, address: u64) -> CuResult;

    pub(crate) fn cuModuleLoadDataEx(
        module: *mut CuModule,
        image: *const c_void,
        num_options: c_uint,
        options: *mut c_int,
        option_values: *mut *mut c_void,
    ) -> CuResult;
    pub(crate) fn cuModuleGetFunction(function: *mut CuFunction, module: CuModule, name: *const c_char) -> CuResult;
    pub(crate) fn cuModuleUnload(module: CuModule) -> CuResult;

    pub(crate) fn cuLaunchKernel(
        function: CuFunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_mem_bytes: c_uint,
        stream: CuStream,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CuResult;
}

/// The driver's name and description of `code`, e.g. `("CUDA_ERROR_NO_DEVICE", "no
/// CUDA-capable device is detected")`. Both calls work before `cuInit`. Falls back to a short
/// table when the library cannot describe the code (a toolkit's link stub, a code newer than
/// the driver).
pub(crate) fn describe(code: CuResult) -> (String, String) {
    let ask = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: `text` is a valid out-pointer; on success the driver points it at a static,
        // NUL-terminated string.
        let status = unsafe { f(code, &mut text) };
        (status == CUDA_SUCCESS && !text.is_null())
            // SAFETY: checked non-null above; the driver's strings are static and NUL-terminated.
            .then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
    };
    let name = ask(cuGetErrorName).unwrap_or_else(|| fallback_name(code).to_owned());
    let text = ask(cuGetErrorString).unwrap_or_else(|| "no description from the driver".to_owned());
    (name, text)
}

fn fallback_name(code: CuResult) -> &'static str {
    match code {
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        4 => "CUDA_ERROR_DEINITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY",
        35 => "CUDA_ERROR_INSUFFICIENT_DRIVER",
        100 => "CUDA_ERROR_NO_DEVICE",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        200 => "CUDA_ERROR_INVALID_IMAGE",
        201 => "CUDA_ERROR_INVALID_CONTEXT",
        209 => "CUDA_ERROR_NO_BINARY_FOR_GPU",
        218 => "CUDA_ERROR_INVALID_PTX",
        222 => "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        400 => "CUDA_ERROR_INVALID_HANDLE",
        500 => "CUDA_ERROR_NOT_FOUND",
        700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
        701 => "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        719 => "CUDA_ERROR_LAUNCH_FAILED",
        _ => "CUDA_ERROR_(unknown code)",
    }
}
