//! Errors of the GPU paths. Each says what was expected and what was got.
//!
//! One error type for both back ends (cust and cudarc). Driver errors are kept as the raw code
//! plus the driver's own name and description, taken when the error is made. They are
//! deliberately not `cust::error::CudaError` or `cudarc::driver::DriverError` sources: cust's
//! `Display` asks the driver for the text and returns `fmt::Error` when the driver cannot answer
//! (which makes `format!`/`to_string` panic), and cudarc's prints its `Debug` form.

use std::fmt;

use rc_core::LengthError;
use thiserror::Error;

use crate::driver::{self, CuResult};

/// A failed CUDA driver call: its `CUresult` code and what the driver says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverError {
    code: u32,
    name: String,
    description: String,
}

impl DriverError {
    /// Describes `code` by asking the driver.
    pub(crate) fn new(code: CuResult) -> DriverError {
        let (name, description) = driver::describe(code);
        DriverError { code, name, description }
    }

    /// From an error cust returned. cust's own codes above the driver's range
    /// (`InvalidMemoryAllocation`, `OptixError`) have no driver description: use cust's name.
    #[cfg(feature = "cust")]
    pub(crate) fn from_cust(error: cust::error::CudaError) -> DriverError {
        let code = error as u32;
        if code <= 999 {
            DriverError::new(code)
        } else {
            DriverError { code, name: format!("{error:?}"), description: "an error cust reports itself".into() }
        }
    }

    /// The `CUresult` value, e.g. 100 for `CUDA_ERROR_NO_DEVICE`.
    pub fn code(&self) -> u32 {
        self.code
    }
    /// The driver's name for the code, e.g. `CUDA_ERROR_NO_DEVICE`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The driver's description of the code.
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.name, self.code, self.description)
    }
}

impl std::error::Error for DriverError {}

/// The driver's JIT compiler rejected a stencil's PTX. `log` is its error log; the PTX itself is
/// in `ptx` (it is long, so neither `Display` nor `Debug` prints it).
#[derive(Error)]
#[error(
    "loading the PTX of stencil `{stencil}` (entry `{entry}`) failed: expected the driver to \
     compile it for the current GPU, got {error}\nJIT error log:\n{}\n(the {} lines of PTX \
     are in this error's `ptx` field, or `Error::ptx()`)",
    if log.trim().is_empty() { "(empty)" } else { log.trim_end() },
    ptx.lines().count()
)]
pub struct ModuleLoadError {
    pub stencil: &'static str,
    pub entry: &'static str,
    pub error: DriverError,
    pub log: String,
    pub ptx: &'static str,
}

// By hand, so that an error returned from `main` (printed with Debug) does not dump the kernel.
impl fmt::Debug for ModuleLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModuleLoadError")
            .field("stencil", &self.stencil)
            .field("entry", &self.entry)
            .field("error", &self.error)
            .field("log", &self.log)
            .field("ptx", &format_args!("<{} lines>", self.ptx.lines().count()))
            .finish()
    }
}

/// Everything that can go wrong loading and launching a stencil on a GPU.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The driver could not be loaded or initialised, or has no device. This is what a machine
    /// without an NVIDIA GPU gets; `reason` says which (e.g. that `libcuda.so.1` is not there).
    #[error("no CUDA device: {reason}")]
    NoDevice { reason: String },

    /// A driver call failed. `call` names the call and what it was for.
    #[error("{call} failed: expected CUDA_SUCCESS, got {error}")]
    Driver { call: String, error: DriverError },

    /// The driver's JIT compiler rejected the stencil's PTX (boxed: it carries the log and PTX).
    #[error(transparent)]
    ModuleLoad(Box<ModuleLoadError>),

    /// The PTX text contains a NUL byte, which the driver's C interface cannot take.
    #[error("the PTX of stencil `{stencil}` contains a NUL byte at byte {offset} of {len}; expected PTX text without NUL bytes")]
    NulInPtx { stencil: &'static str, offset: usize, len: usize },

    /// The PTX contains a character other than ASCII, which ptxas rejects wherever it is.
    #[error(
        "the PTX of stencil `{stencil}` has the non-ASCII character `{character}` (U+{:04X}) at line {line}, \
         column {column}; expected ASCII only (ptxas rejects anything else, even in comments)",
        *character as u32
    )]
    NonAsciiPtx { stencil: &'static str, line: usize, column: usize, character: char },

    /// The PTX has no readable `.entry` of the stencil's entry name.
    #[error("cannot read the parameters of `.entry {entry}` in the PTX of stencil `{stencil}`: {problem}")]
    PtxEntry { stencil: &'static str, entry: &'static str, problem: String },

    /// The PTX's kernel entry does not take the parameters rc-runtime passes (see `abi`).
    #[error("kernel ABI mismatch for stencil `{stencil}`: expected `.entry {entry}` taking ({expected}), got {got}")]
    KernelAbi { stencil: &'static str, entry: &'static str, expected: String, got: String },

    /// The input's shape or the buffers' lengths do not fit the stencil's pattern, or need too
    /// large a grid: in 1D the lengths, in 2D and 3D also a shape with another number of
    /// dimensions, an empty dimension, one shorter than a window under `valid`, or buffers
    /// whose element counts are not the shapes'.
    #[error("stencil `{stencil}`: {source}")]
    Length {
        stencil: &'static str,
        #[source]
        source: LengthError,
    },

    /// The stencil's body or fused program could not be built (a hand-made handle whose body
    /// does not compile for the fused tile; `#[stencil]` refuses those at compile time).
    #[error("stencil `{stencil}`: {source}")]
    Program {
        stencil: &'static str,
        #[source]
        source: rc_core::Error,
    },

    /// A buffer's address is not a multiple of the stencil's vector access size (a sub-slice
    /// that starts mid-vector): the kernel would misread it, so it is not launched.
    #[error(
        "stencil `{stencil}`: the {buffer} buffer must start at a multiple of {required} bytes (its \
         distribution loads and stores {required}-byte vectors), got address {address:#x}; use a \
         buffer from its own allocation, or distribution round_robin"
    )]
    Misaligned { stencil: &'static str, buffer: String, required: u32, address: u64 },

    /// The loaded kernel cannot run blocks as large as the stencil's launch uses (the driver's
    /// compiler gave it too many registers per thread for that many threads), so it is not
    /// launched.
    #[error(
        "stencil `{stencil}`: the launch uses blocks of {expected} threads (max_threads_per_block), but the \
         kernel compiled for this GPU allows at most {got} (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: it needs \
         too many registers per thread); expected at least {expected}: lower max_threads_per_block, the radius \
         or outputs_per_thread"
    )]
    LaunchBounds { stencil: &'static str, expected: u32, got: u32 },

    /// An output's bytes overlap an input's (two views of one allocation), so it is not
    /// launched: threads would read input elements that other threads have already overwritten,
    /// in no defined order. `input` and `output` are the byte ranges `[start, end)` of the two
    /// buffers' device addresses; `buffer` names the input (`input`, or `input 1` of several),
    /// `written` the output (`output`, or `output 1` of several).
    #[error(
        "stencil `{stencil}`: the {written} buffer (device bytes {:#x}..{:#x}) overlaps the {buffer} buffer (device \
         bytes {:#x}..{:#x}) in {} bytes; expected disjoint buffers: a stencil cannot run in place, since its \
         threads read input elements that other threads' outputs overwrite",
        output.0, output.1, input.0, input.1, crate::buffers::overlap_bytes(*input, *output)
    )]
    Aliasing { stencil: &'static str, buffer: String, written: String, input: (u64, u64), output: (u64, u64) },

    /// Two output buffers' bytes overlap, so it is not launched: the kernel's threads would
    /// write both fields' elements to the same bytes, in no defined order. `a` and `b` are the
    /// byte ranges `[start, end)` of the `first` and `second` outputs' device addresses.
    #[error(
        "stencil `{stencil}`: the {first} buffer (device bytes {:#x}..{:#x}) overlaps the {second} buffer (device \
         bytes {:#x}..{:#x}) in {} bytes; expected disjoint output buffers: each output field's elements are \
         written by the kernel's threads, in no defined order between fields",
        a.0, a.1, b.0, b.1, crate::buffers::overlap_bytes(*a, *b)
    )]
    OutputsOverlap { stencil: &'static str, first: String, second: String, a: (u64, u64), b: (u64, u64) },

    /// The driver reports that a buffer belongs to another CUDA context than the launch's, and
    /// the launch's context cannot reach it (device memory of another context on the same GPU,
    /// or on a GPU without peer access to this one), so it is not launched.
    #[error(
        "stencil `{stencil}`: the {buffer} buffer (device address {address:#x}) was allocated in CUDA context \
         {owner:#x}, but the launch runs in context {current:#x}; expected a buffer the launch's context can \
         reach (allocated in it, managed, pinned host memory, or on a peer GPU): allocate it while the \
         launch's context is current"
    )]
    ForeignBuffer { stencil: &'static str, buffer: String, address: u64, owner: usize, current: usize },

    /// A grid split ([`crate::SplitGrid`]) that does not fit the stencil, or cannot be made.
    #[error("stencil `{stencil}`: {source}")]
    Split {
        stencil: &'static str,
        #[source]
        source: rc_core::DecompositionError,
    },

    /// A split grid's ranks asked for devices this machine does not have.
    #[error("a split grid runs its ranks on devices {devices:?}; expected at least one, each below the {count} devices the driver reports")]
    SplitDevices { devices: Vec<usize>, count: usize },

    /// A split grid was given another number of fields than the stencil has.
    #[error(
        "stencil `{stencil}`: expected {expected} fields (the state fields, then the coefficient fields), got {got}"
    )]
    SplitFields { stencil: &'static str, expected: usize, got: usize },

    /// A split grid was asked for a field the stencil does not have.
    #[error("stencil `{stencil}` has fields 0 to {} (the state fields, then the coefficient fields); expected one of them, got field {field}", fields - 1)]
    SplitNoField { stencil: &'static str, field: usize, fields: usize },

    /// A field given to a split grid is not a whole grid of its shape.
    #[error(
        "stencil `{stencil}`: field {field} has {got} elements, expected {expected} (a whole grid of shape {shape:?})"
    )]
    SplitFieldLength { stencil: &'static str, field: usize, shape: Vec<usize>, expected: usize, got: usize },

    /// More steps between two exchanges than the split's halo covers.
    #[error(
        "stencil `{stencil}`: {steps} steps between two exchanges, but the halo of {halo} rows covers at most {most}; \
         expected at most {most} (run_steps exchanges as often as needed)"
    )]
    SplitSteps { stencil: &'static str, steps: usize, most: usize, halo: usize },

    /// `launch` was called on a thread with no current CUDA context.
    #[error("no CUDA context is current on this thread; expected the stream's context ({stream:#x}) to be current")]
    NoCurrentContext { stream: usize },

    /// The stream belongs to a different context from the current one.
    #[error("the stream belongs to CUDA context {stream:#x}, but the current context of this thread is {current:#x}; expected them to be the same")]
    ContextMismatch { stream: usize, current: usize },

    /// The current context is not a device's primary context (see `module` for why only primary
    /// contexts are supported).
    #[error(
        "the current CUDA context {context:#x} is not the primary context of device {device}; \
         expected a primary context (cust's Context or quick_init, cudarc's CudaContext::new): \
         rc-runtime caches loaded kernels per context and can keep only primary contexts alive for them"
    )]
    NotPrimaryContext { context: usize, device: i32 },
}

impl Error {
    /// The PTX text, for a [`Error::ModuleLoad`].
    pub fn ptx(&self) -> Option<&'static str> {
        match self {
            Error::ModuleLoad(failure) => Some(failure.ptx),
            _ => None,
        }
    }

    /// The JIT compiler's error log, for a [`Error::ModuleLoad`].
    pub fn jit_log(&self) -> Option<&str> {
        match self {
            Error::ModuleLoad(failure) => Some(&failure.log),
            _ => None,
        }
    }

    /// Whether this says there is no usable GPU (so a caller may fall back to the CPU).
    pub fn is_no_device(&self) -> bool {
        matches!(self, Error::NoDevice { .. })
    }

    /// A failed driver call `call`.
    pub(crate) fn driver(call: impl Into<String>, code: CuResult) -> Error {
        Error::Driver { call: call.into(), error: DriverError::new(code) }
    }

    /// A failed cust call `call`.
    #[cfg(feature = "cust")]
    pub(crate) fn cust(call: impl Into<String>, error: cust::error::CudaError) -> Error {
        Error::Driver { call: call.into(), error: DriverError::from_cust(error) }
    }

    /// A failed cudarc call `call`.
    #[cfg(feature = "cudarc")]
    pub(crate) fn cudarc(call: impl Into<String>, error: cudarc::driver::DriverError) -> Error {
        Error::Driver { call: call.into(), error: DriverError::new(error.0 as CuResult) }
    }
}

/// `Ok(())` for `CUDA_SUCCESS`, else the error for the call named by `call()` (a closure, so the
/// name is only formatted on failure).
pub(crate) fn check<S: Into<String>>(code: CuResult, call: impl FnOnce() -> S) -> Result<(), Error> {
    if code == driver::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::driver(call(), code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_errors_name_the_call_and_the_code() {
        // The names come from the driver (or, without one, rc-runtime's table); both spell this
        // one the same way.
        let err = Error::driver("cuModuleGetFunction for entry `k`", 500);
        let text = err.to_string();
        assert!(
            text.starts_with("cuModuleGetFunction for entry `k` failed: expected CUDA_SUCCESS, got CUDA_ERROR_"),
            "{text}"
        );
        assert!(text.contains(" (500): "), "{text}");
        let Error::Driver { error, .. } = &err else { panic!("{err:?}") };
        assert_eq!(error.code(), 500);
    }

    #[test]
    #[cfg(feature = "cust")]
    fn cust_errors_never_ask_cust_for_text() {
        // cust's `Display` would panic without a driver that can describe codes; ours does not.
        let err = Error::cust("allocating", cust::error::CudaError::InvalidMemoryAllocation);
        assert_eq!(
            err.to_string(),
            "allocating failed: expected CUDA_SUCCESS, got InvalidMemoryAllocation (100100): an error cust reports itself"
        );
        let err = Error::cust("cuInit", cust::error::CudaError::NoDevice);
        assert!(err.to_string().starts_with("cuInit failed: expected CUDA_SUCCESS, got CUDA_ERROR_NO_DEVICE (100): "));
    }

    #[test]
    fn module_load_errors_show_the_log_but_not_the_ptx() {
        let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n  bogus;\n}\n";
        let err = Error::ModuleLoad(Box::new(ModuleLoadError {
            stencil: "blur",
            entry: "k",
            error: DriverError {
                code: 218,
                name: "CUDA_ERROR_INVALID_PTX".into(),
                description: "a PTX JIT compilation failed".into(),
            },
            log: "ptxas application ptx input, line 6; error   : Unknown instruction 'bogus'\n".into(),
            ptx,
        }));
        assert_eq!(
            err.to_string(),
            "loading the PTX of stencil `blur` (entry `k`) failed: expected the driver to compile it for the \
             current GPU, got CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed\nJIT error log:\n\
             ptxas application ptx input, line 6; error   : Unknown instruction 'bogus'\n\
             (the 7 lines of PTX are in this error's `ptx` field, or `Error::ptx()`)"
        );
        assert_eq!(err.ptx(), Some(ptx));
        assert_eq!(
            err.jit_log().map(str::trim_end),
            Some("ptxas application ptx input, line 6; error   : Unknown instruction 'bogus'")
        );
    }

    #[test]
    fn context_errors_say_what_was_expected() {
        let err = Error::ContextMismatch { stream: 0x10, current: 0x20 };
        assert_eq!(
            err.to_string(),
            "the stream belongs to CUDA context 0x10, but the current context of this thread is 0x20; expected them to be the same"
        );
        let err = Error::NotPrimaryContext { context: 0x30, device: 1 };
        assert!(err.to_string().starts_with(
            "the current CUDA context 0x30 is not the primary context of device 1; expected a primary context"
        ));
        assert!(!err.is_no_device());
        assert!(Error::NoDevice { reason: "x".into() }.is_no_device());
    }
}
