//! The fused kernels of a run's last launch, printed when a run first needs one.
//!
//! `steps` time steps run as launches of the fused kernel's degree `T` and, where `T` does not
//! divide `steps`, one launch of `steps % T` steps. Printing every degree below `T` in the macro
//! would put `T - 2` more kernels into every stencil's binary (30 for f32 heat's 32) for the one
//! a run uses; so each is printed from the same body the first time a run asks for it and kept
//! for the rest of the process, as the runtime keeps its loaded modules.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::error::Error;
use crate::program::WarpProgram;

/// The PTX of `program` (the fused kernel of `steps` steps of the stencil whose full-degree fused
/// PTX is `fused_ptx`) with entry `entry`, printed once per process.
pub(crate) fn ptx(
    fused_ptx: &'static str,
    steps: u32,
    entry: &'static str,
    program: impl FnOnce() -> Result<WarpProgram, Error>,
) -> Result<&'static str, Error> {
    static PRINTED: OnceLock<Mutex<HashMap<(usize, u32), &'static str>>> = OnceLock::new();
    // The full-degree PTX's address names the stencil: each `#[stencil]` has its own.
    let key = (fused_ptx.as_ptr() as usize, steps);
    let printed = PRINTED.get_or_init(|| Mutex::new(HashMap::new()));
    let mut printed = printed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&ptx) = printed.get(&key) {
        return Ok(ptx);
    }
    // Kept for the process, as a kernel loaded from it is: at most T - 2 per stencil.
    let ptx: &'static str = Box::leak(crate::ptx::print(&program()?, entry).into_boxed_str());
    printed.insert(key, ptx);
    Ok(ptx)
}
