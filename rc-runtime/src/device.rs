//! Is there a GPU, and which: what examples and benchmarks print, and how they decide between
//! the GPU and the CPU emulation.

use std::fmt;
use std::os::raw::{c_char, c_int};

use crate::context;
use crate::driver::{self, CuDevice, CUDA_SUCCESS};
use crate::error::{check, Error};

/// A CUDA device as the driver describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// Device ordinal.
    pub ordinal: i32,
    pub name: String,
    /// (major, minor), e.g. (9, 0) for an H100/H200.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Peak SM clock. `None` if the driver no longer reports it.
    pub clock_mhz: Option<u32>,
    /// Peak memory clock. `None` if the driver no longer reports it.
    pub memory_clock_mhz: Option<u32>,
    pub memory_bus_width_bits: Option<u32>,
    pub total_memory_bytes: u64,
    /// The CUDA version the driver supports, (major, minor), e.g. (13, 0).
    pub driver_version: (u32, u32),
}

impl fmt::Display for GpuInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.compute_capability;
        write!(f, "{} (device {}, compute {major}.{minor}, {} SMs", self.name, self.ordinal, self.multiprocessors)?;
        if let Some(mhz) = self.clock_mhz {
            write!(f, " at {mhz} MHz")?;
        }
        let gib = self.total_memory_bytes as f64 / (1u64 << 30) as f64;
        let (dmajor, dminor) = self.driver_version;
        write!(f, ", {gib:.1} GiB, driver for CUDA {dmajor}.{dminor})")
    }
}

/// The GPU that `run` would use: the current context's device, or device 0. Fails with
/// [`Error::NoDevice`] (saying why) when there is no driver or no device.
///
/// ```
/// match rc_runtime::gpu() {
///     Ok(gpu) => println!("running on {gpu}"),
///     Err(e) => println!("no GPU found ({e}); running the CPU emulation instead"),
/// }
/// ```
pub fn gpu() -> Result<GpuInfo, Error> {
    context::init()?;
    let device = match context::current()? {
        Some(_) => {
            let mut device: CuDevice = 0;
            // SAFETY: valid out-pointer; a context is current.
            check(unsafe { driver::cuCtxGetDevice(&mut device) }, || "cuCtxGetDevice for the current context")?;
            device
        }
        None => {
            let mut device: CuDevice = 0;
            // SAFETY: valid out-pointer.
            check(unsafe { driver::cuDeviceGet(&mut device, 0) }, || "cuDeviceGet for device 0")?;
            device
        }
    };
    info(device)
}

fn info(device: CuDevice) -> Result<GpuInfo, Error> {
    let mut name = [0 as c_char; 256];
    // SAFETY: the buffer is 256 bytes, as passed; the driver NUL-terminates within it.
    check(unsafe { driver::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, device) }, || {
        format!("cuDeviceGetName for device {device}")
    })?;
    let name_bytes: Vec<u8> = name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();

    let mut bytes = 0usize;
    // SAFETY: valid out-pointer.
    check(unsafe { driver::cuDeviceTotalMem_v2(&mut bytes, device) }, || {
        format!("cuDeviceTotalMem for device {device}")
    })?;
    let mut version: c_int = 0;
    // SAFETY: valid out-pointer.
    check(unsafe { driver::cuDriverGetVersion(&mut version) }, || "cuDriverGetVersion")?;

    let required = |attribute: Attribute| {
        attribute_of(device, attribute)
            .map_err(|code| Error::driver(format!("cuDeviceGetAttribute({attribute:?}) for device {device}"), code))
    };
    let optional = |attribute: Attribute| attribute_of(device, attribute).ok().filter(|&v| v > 0);
    Ok(GpuInfo {
        ordinal: device,
        name: String::from_utf8_lossy(&name_bytes).into_owned(),
        compute_capability: (
            required(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            required(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        multiprocessors: required(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        clock_mhz: optional(Attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|khz| khz / 1000),
        memory_clock_mhz: optional(Attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).map(|khz| khz / 1000),
        memory_bus_width_bits: optional(Attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        total_memory_bytes: bytes as u64,
        driver_version: (version as u32 / 1000, (version as u32 % 1000) / 10),
    })
}

/// The `CUdevice_attribute` values (an `int`-sized C enum, from `cuda.h`) rc-runtime asks for,
/// under their C names for messages.
#[allow(non_camel_case_types, clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug)]
pub(crate) enum Attribute {
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
}

/// One attribute as a non-negative number, or the driver's error code.
pub(crate) fn attribute_of(device: CuDevice, attribute: Attribute) -> Result<u32, u32> {
    let mut value: c_int = 0;
    // SAFETY: valid out-pointer; the attribute is one of cuda.h's values.
    let code = unsafe { driver::cuDeviceGetAttribute(&mut value, attribute as c_int, device) };
    if code == CUDA_SUCCESS {
        Ok(value.max(0) as u32)
    } else {
        Err(code)
    }
}
