//! The CUDA driver, loaded at run time: `dlopen("libcuda.so.1")` on first use, each entry point
//! looked up by name. Both back ends (cust, cudarc) reach the driver through these functions, so
//! module loading, queries and launches are the same code whichever one the caller uses.
//!
//! Why at run time: a binary that links `libcuda.so.1` does not start where there is no driver,
//! and rc's binaries must start anywhere (and fall back to the CPU). When the library cannot be
//! loaded, every function here returns `CUDA_ERROR_NO_DEVICE`, and [`describe`] says why the
//! driver could not be loaded; a function the loaded driver lacks returns `CUDA_ERROR_NOT_FOUND`.
//!
//! Why a plain `u32` result: bindings that declare `CUresult` as a Rust enum (cust_raw's, from
//! CUDA 11.4's `cuda.h`) are undefined behaviour for codes newer drivers return. The `_v2` names
//! are the symbols `cuda.h` maps the plain names to.

#![allow(non_snake_case)]

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// A `CUresult`.
pub(crate) type CuResult = u32;
pub(crate) const CUDA_SUCCESS: CuResult = 0;
pub(crate) const CUDA_ERROR_NO_DEVICE: CuResult = 100;
pub(crate) const CUDA_ERROR_NOT_FOUND: CuResult = 500;

pub(crate) type CuDevice = c_int;
/// Opaque driver handles. They name driver objects; none of them is tied to a thread.
pub(crate) type CuContext = *mut c_void;
pub(crate) type CuModule = *mut c_void;
pub(crate) type CuFunction = *mut c_void;
pub(crate) type CuStream = *mut c_void;
pub(crate) type CuEvent = *mut c_void;

/// `CU_STREAM_NON_BLOCKING`: a stream that does not wait for the legacy default stream.
pub(crate) const CU_STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_DISABLE_TIMING`: an event only for ordering, the cheapest kind to record.
pub(crate) const CU_EVENT_DISABLE_TIMING: c_uint = 2;

/// `CUjit_option` values (an `int`-sized C enum).
pub(crate) const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
pub(crate) const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// `CUDA_MEMCPY3D` (cuda.h): a copy of a box of `width_bytes` x `height` x `depth` between
/// pitched 3D layouts. Device to device here: the host and array fields stay null.
#[repr(C)]
pub(crate) struct Memcpy3d {
    pub src_x_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    /// A `CUmemorytype`: 2 is device memory.
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: u64,
    pub src_array: *mut c_void,
    pub reserved0: *mut c_void,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: u64,
    pub dst_array: *mut c_void,
    pub reserved1: *mut c_void,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

/// `CU_MEMORYTYPE_DEVICE`.
pub(crate) const CU_MEMORYTYPE_DEVICE: c_uint = 2;

/// The driver library's file name.
const LIBRARY: &str = "libcuda.so.1";

/// Declares each entry point once: a field of [`Functions`], and a `pub(crate) unsafe fn` of the
/// same name and signature that calls it (the caller upholds the driver's contract for it).
macro_rules! driver_functions {
    ($( fn $name:ident($($arg:ident: $ty:ty),* $(,)?); )*) => {
        /// The entry points of the loaded driver; `None` where it has no such symbol.
        struct Functions {
            $( $name: Option<unsafe extern "C" fn($($ty),*) -> CuResult>, )*
        }

        impl Functions {
            fn resolve(library: &Library) -> Functions {
                Functions {
                    $( $name: library.symbol(concat!(stringify!($name), "\0")).map(|address| {
                        // SAFETY: the driver exports this symbol as a C function with this
                        // signature (cuda.h); a function pointer and a data pointer have the same
                        // size on every platform CUDA supports.
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) -> CuResult>(address) }
                    }), )*
                }
            }
        }

        $(
            // The driver's own parameter lists, however long.
            #[allow(clippy::too_many_arguments)]
            pub(crate) unsafe fn $name($($arg: $ty),*) -> CuResult {
                match driver() {
                    Ok(driver) => match driver.functions.$name {
                        Some(function) => function($($arg),*),
                        None => CUDA_ERROR_NOT_FOUND,
                    },
                    Err(_) => CUDA_ERROR_NO_DEVICE,
                }
            }
        )*
    };
}

driver_functions! {
    fn cuInit(flags: c_uint);
    fn cuDriverGetVersion(version: *mut c_int);
    fn cuGetErrorName(error: CuResult, name: *mut *const c_char);
    fn cuGetErrorString(error: CuResult, text: *mut *const c_char);

    fn cuDeviceGetCount(count: *mut c_int);
    fn cuDeviceGet(device: *mut CuDevice, ordinal: c_int);
    fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CuDevice);
    fn cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: CuDevice);
    fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CuDevice);
    fn cuDeviceCanAccessPeer(can_access: *mut c_int, device: CuDevice, peer: CuDevice);

    fn cuDevicePrimaryCtxRetain(context: *mut CuContext, device: CuDevice);
    fn cuDevicePrimaryCtxRelease_v2(device: CuDevice);
    fn cuDevicePrimaryCtxGetState(device: CuDevice, flags: *mut c_uint, active: *mut c_int);

    fn cuCtxGetCurrent(context: *mut CuContext);
    fn cuCtxSetCurrent(context: CuContext);
    fn cuCtxGetDevice(device: *mut CuDevice);
    fn cuCtxPushCurrent_v2(context: CuContext);
    fn cuCtxPopCurrent_v2(context: *mut CuContext);
    fn cuCtxSynchronize();
    fn cuStreamGetCtx(stream: CuStream, context: *mut CuContext);
    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int);
    fn cuStreamCreateWithPriority(stream: *mut CuStream, flags: c_uint, priority: c_int);
    fn cuStreamDestroy_v2(stream: CuStream);
    fn cuStreamWaitEvent(stream: CuStream, event: CuEvent, flags: c_uint);
    fn cuEventCreate(event: *mut CuEvent, flags: c_uint);
    fn cuEventRecord(event: CuEvent, stream: CuStream);
    fn cuEventDestroy_v2(event: CuEvent);

    // `attribute` is a `CUpointer_attribute`; `address` a `CUdeviceptr`.
    fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, address: u64);

    fn cuModuleLoadDataEx(
        module: *mut CuModule,
        image: *const c_void,
        num_options: c_uint,
        options: *mut c_int,
        option_values: *mut *mut c_void,
    );
    fn cuModuleGetFunction(function: *mut CuFunction, module: CuModule, name: *const c_char);
    fn cuModuleUnload(module: CuModule);
    fn cuFuncGetAttribute(value: *mut c_int, attribute: c_int, function: CuFunction);
    fn cuFuncSetAttribute(function: CuFunction, attribute: c_int, value: c_int);
    fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks: *mut c_int,
        function: CuFunction,
        block_size: c_int,
        dynamic_shared_bytes: usize,
    );

    fn cuMemcpy3DAsync_v2(copy: *const Memcpy3d, stream: CuStream);

    fn cuLaunchKernel(
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
    );
}

/// A `dlopen` handle. Never closed: kernels, contexts and the caller's own CUDA objects use the
/// driver until the process ends.
struct Library(*mut c_void);

// SAFETY: a dlopen handle is a process-wide token; dlsym may be called with it from any thread.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    fn open(name: &str) -> Result<Library, String> {
        let c_name = CString::new(name).map_err(|_| format!("the library name `{name}` contains a NUL byte"))?;
        // SAFETY: a NUL-terminated name; RTLD_LOCAL keeps the driver's symbols out of the global
        // namespace, where rc-cuda-stub's forwarding functions of the same names live.
        let handle = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(last_dl_error().unwrap_or_else(|| format!("dlopen(\"{name}\") failed without a message")));
        }
        Ok(Library(handle))
    }

    /// The address of `name` (NUL-terminated), or `None` if the library has no such symbol.
    fn symbol(&self, name: &str) -> Option<*mut c_void> {
        let name = CStr::from_bytes_with_nul(name.as_bytes()).ok()?;
        // SAFETY: a live handle and a NUL-terminated name.
        let address = unsafe { libc::dlsym(self.0, name.as_ptr()) };
        (!address.is_null()).then_some(address)
    }
}

/// The text of the last `dlopen`/`dlsym` failure on this thread.
fn last_dl_error() -> Option<String> {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl* call on
    // this thread; it is copied at once.
    let text = unsafe { libc::dlerror() };
    (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

struct Driver {
    functions: Functions,
    _library: Library,
}

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();

/// The loaded driver, or why it could not be loaded (the loader's message).
fn driver() -> Result<&'static Driver, &'static str> {
    DRIVER
        .get_or_init(|| {
            let library = Library::open(LIBRARY)?;
            Ok(Driver { functions: Functions::resolve(&library), _library: library })
        })
        .as_ref()
        .map_err(String::as_str)
}

/// The driver's name and description of `code`, e.g. `("CUDA_ERROR_NO_DEVICE", "no
/// CUDA-capable device is detected")`. Both calls work before `cuInit`. Without a driver, the
/// description says why it could not be loaded; a code the driver cannot describe gets a name
/// from a short table.
pub(crate) fn describe(code: CuResult) -> (String, String) {
    let ask = |f: unsafe fn(CuResult, *mut *const c_char) -> CuResult| {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: `text` is a valid out-pointer; on success the driver points it at a static,
        // NUL-terminated string.
        let status = unsafe { f(code, &mut text) };
        (status == CUDA_SUCCESS && !text.is_null())
            // SAFETY: checked non-null above; the driver's strings are static and NUL-terminated.
            .then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
    };
    let name = ask(cuGetErrorName).unwrap_or_else(|| fallback_name(code).to_owned());
    let text = match driver() {
        Err(why) => format!("the NVIDIA driver could not be loaded ({why})"),
        Ok(_) => ask(cuGetErrorString).unwrap_or_else(|| "no description from the driver".to_owned()),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_is_not_there_is_an_error_that_names_it() {
        let err = Library::open("librc-no-such-library.so.1").err().expect("no such library");
        assert!(err.contains("librc-no-such-library.so.1"), "{err}");
    }

    #[test]
    fn without_a_driver_every_call_says_no_device_and_why() {
        if driver().is_ok() {
            eprintln!("skipping without_a_driver_every_call_says_no_device_and_why: a driver is installed");
            return;
        }
        // SAFETY: nothing is called without a driver.
        assert_eq!(unsafe { cuInit(0) }, CUDA_ERROR_NO_DEVICE);
        let (name, text) = describe(CUDA_ERROR_NO_DEVICE);
        assert_eq!(name, "CUDA_ERROR_NO_DEVICE");
        assert!(text.starts_with("the NVIDIA driver could not be loaded (libcuda.so.1: "), "{text}");
    }
}
