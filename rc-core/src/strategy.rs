//! How a kernel gets each tap's element to the lane that needs it. The register cache is the
//! product; the other two are the baselines it is measured against, generated from the same
//! annotation so that the comparison is between strategies and nothing else.

use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Inputs live in the warp's registers; reads of other lanes' elements are warp shuffles.
    #[default]
    RegisterCache,
    /// The block stages its inputs plus halo in shared memory, waits at a barrier, then reads
    /// (the article's listing 1, coarsened by outputs per thread).
    SharedMemory,
    /// Every tap is a load from global memory; the caches do whatever they can.
    Naive,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::RegisterCache, Strategy::SharedMemory, Strategy::Naive];

    /// The name used in `#[stencil(strategy = ...)]`.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::RegisterCache => "register_cache",
            Strategy::SharedMemory => "shared_memory",
            Strategy::Naive => "naive",
        }
    }

    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
