//! The benchmark's kernels: the article's (2r+1)-tap average `B[i] = (A[i] + ... + A[i+2r]) / (2r+1)`
//! (boundary valid, warp 32) for every radius, outputs per thread and strategy, in f32 and f64.
//!
//! Radius and outputs per thread fix the register cache and the shuffle schedule printed into
//! the PTX, so each combination is its own `#[stencil]`, written out by `macro_rules!` (the
//! literals reach the attribute as they are).

use rc::prelude::*;
use rc::{Layout, Strategy};

/// Calls `$make!(ELEMENT, STRATEGY: (name, radius, outputs per thread, taps as a float), ...)`
/// with every pattern of the benchmark: the one list of what is compiled.
macro_rules! with_patterns {
    ($make:ident, $t:ident, $strategy:ident) => {
        $make!($t, $strategy:
            (box_r1_p1, 1, 1, 3.0), (box_r1_p2, 1, 2, 3.0), (box_r1_p4, 1, 4, 3.0), (box_r1_p8, 1, 8, 3.0),
            (box_r2_p1, 2, 1, 5.0), (box_r2_p2, 2, 2, 5.0), (box_r2_p4, 2, 4, 5.0), (box_r2_p8, 2, 8, 5.0),
            (box_r4_p1, 4, 1, 9.0), (box_r4_p2, 4, 2, 9.0), (box_r4_p4, 4, 4, 9.0), (box_r4_p8, 4, 8, 9.0),
            (box_r8_p1, 8, 1, 17.0), (box_r8_p2, 8, 2, 17.0), (box_r8_p4, 8, 4, 17.0), (box_r8_p8, 8, 8, 17.0),
            (box_r12_p1, 12, 1, 25.0), (box_r12_p2, 12, 2, 25.0), (box_r12_p4, 12, 4, 25.0), (box_r12_p8, 12, 8, 25.0),
            (box_r16_p1, 16, 1, 33.0), (box_r16_p2, 16, 2, 33.0), (box_r16_p4, 16, 4, 33.0), (box_r16_p8, 16, 8, 33.0),
            (box_r24_p1, 24, 1, 49.0), (box_r24_p2, 24, 2, 49.0), (box_r24_p4, 24, 4, 49.0), (box_r24_p8, 24, 8, 49.0),
            (box_r32_p1, 32, 1, 65.0), (box_r32_p2, 32, 2, 65.0), (box_r32_p4, 32, 4, 65.0), (box_r32_p8, 32, 8, 65.0),
            (box_r64_p1, 64, 1, 129.0), (box_r64_p2, 64, 2, 129.0), (box_r64_p4, 64, 4, 129.0), (box_r64_p8, 64, 8, 129.0)
        );
    };
}

/// The register cache with one row of V = P consecutive outputs per lane, over `$layout(V)`:
/// granules (only the halo crosses lanes, 2r/V shuffles per output) or windows (the halo is
/// loaded too, no shuffles).
macro_rules! row_stencils {
    ($t:ident, $layout:ident: $(($name:ident, $r:literal, $p:literal, $taps:literal)),* $(,)?) => {
        $(box_stencil!($t, $name, $r, $p, $taps, distribution = $layout($p));)*

        pub const ALL: &[Stencil<$t, ()>] = &[$($name::KERNEL),*];
    };
}

macro_rules! row_module {
    // Every radius, rows of 4, 8, 16 and 32.
    ($module:ident, $t:ident, $layout:ident) => {
        row_module!(@rows $module, $t, $layout;
            (box_r1_p32, 1, 32, 3.0), (box_r2_p32, 2, 32, 5.0), (box_r4_p32, 4, 32, 9.0), (box_r8_p32, 8, 32, 17.0),
            (box_r12_p32, 12, 32, 25.0), (box_r16_p32, 16, 32, 33.0), (box_r24_p32, 24, 32, 49.0), (box_r32_p32, 32, 32, 65.0),
            (box_r64_p4, 64, 4, 129.0), (box_r64_p8, 64, 8, 129.0), (box_r64_p16, 64, 16, 129.0), (box_r64_p32, 64, 32, 129.0));
    };
    // Radii up to 32.
    ($module:ident, $t:ident, $layout:ident; no_r64) => {
        row_module!(@rows $module, $t, $layout;
            (box_r1_p32, 1, 32, 3.0), (box_r2_p32, 2, 32, 5.0), (box_r4_p32, 4, 32, 9.0), (box_r8_p32, 8, 32, 17.0),
            (box_r12_p32, 12, 32, 25.0), (box_r16_p32, 16, 32, 33.0), (box_r24_p32, 24, 32, 49.0), (box_r32_p32, 32, 32, 65.0));
    };
    // Rows of 4, 8 and 16.
    ($module:ident, $t:ident, $layout:ident; no_p32) => {
        row_module!(@rows $module, $t, $layout; (box_r64_p4, 64, 4, 129.0), (box_r64_p8, 64, 8, 129.0), (box_r64_p16, 64, 16, 129.0));
    };
    // Radii up to 32 with rows of 4, 8 and 16, and `$extra`.
    (@rows $module:ident, $t:ident, $layout:ident; $($extra:tt),*) => {
        pub mod $module {
            use rc::prelude::*;
            row_stencils!($t, $layout:
                (box_r1_p4, 1, 4, 3.0), (box_r1_p8, 1, 8, 3.0), (box_r1_p16, 1, 16, 3.0),
                (box_r2_p4, 2, 4, 5.0), (box_r2_p8, 2, 8, 5.0), (box_r2_p16, 2, 16, 5.0),
                (box_r4_p4, 4, 4, 9.0), (box_r4_p8, 4, 8, 9.0), (box_r4_p16, 4, 16, 9.0),
                (box_r8_p4, 8, 4, 17.0), (box_r8_p8, 8, 8, 17.0), (box_r8_p16, 8, 16, 17.0),
                (box_r12_p4, 12, 4, 25.0), (box_r12_p8, 12, 8, 25.0), (box_r12_p16, 12, 16, 25.0),
                (box_r16_p4, 16, 4, 33.0), (box_r16_p8, 16, 8, 33.0), (box_r16_p16, 16, 16, 33.0),
                (box_r24_p4, 24, 4, 49.0), (box_r24_p8, 24, 8, 49.0), (box_r24_p16, 24, 16, 49.0),
                (box_r32_p4, 32, 4, 65.0), (box_r32_p8, 32, 8, 65.0), (box_r32_p16, 32, 16, 65.0)
                $(, $extra)*
            );
        }
    };
}

/// Outputs per thread (= granule or window size V) of the row kernels.
pub const ROW_OUTPUTS: [u32; 4] = [4, 8, 16, 32];

/// How a variant's register cache lays out elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The article's round-robin (and the layout-free baselines).
    RoundRobin,
    Granule,
    Window,
    Staged,
}

impl Family {
    fn of(layout: Layout) -> Family {
        match layout {
            Layout::RoundRobin => Family::RoundRobin,
            Layout::Granule(_) => Family::Granule,
            Layout::Window(_) => Family::Window,
            // 3D planes staged in a shared ring: windows read from shared memory, as staged ones.
            Layout::Staged(_) | Layout::Planes(_) => Family::Staged,
        }
    }
}

/// What the bench compares: the three strategies, and the register cache over granules and
/// over windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The `strategy` column of the results.
    pub label: &'static str,
    pub strategy: Strategy,
    pub family: Family,
}

/// The `strategy` label of the `distribution = auto` rows (not a [`Variant`]: its kernels'
/// layouts are those of the swept variants).
pub const AUTO: &str = "register_cache_auto";

pub const VARIANTS: [Variant; 6] = [
    Variant { label: "register_cache", strategy: Strategy::RegisterCache, family: Family::RoundRobin },
    Variant { label: "register_cache_granule", strategy: Strategy::RegisterCache, family: Family::Granule },
    Variant { label: "register_cache_window", strategy: Strategy::RegisterCache, family: Family::Window },
    Variant { label: "register_cache_staged", strategy: Strategy::RegisterCache, family: Family::Staged },
    Variant { label: "shared_memory", strategy: Strategy::SharedMemory, family: Family::RoundRobin },
    Variant { label: "naive", strategy: Strategy::Naive, family: Family::RoundRobin },
];

impl Variant {
    pub fn of<T: rc::Element, P: rc::Params>(k: &Stencil<T, P>) -> Option<Variant> {
        VARIANTS.into_iter().find(|v| v.matches(k))
    }
    fn matches<T: rc::Element, P: rc::Params>(&self, k: &Stencil<T, P>) -> bool {
        k.strategy() == self.strategy && Family::of(k.layout()) == self.family
    }
    /// Whether this variant exists at its own outputs per thread ([`ROW_OUTPUTS`]).
    pub fn rows(&self) -> bool {
        self.family != Family::RoundRobin
    }
    /// The outputs per thread this variant runs at, given those asked for.
    pub fn outputs_per_thread(&self, asked: &[u32]) -> Vec<u32> {
        if self.rows() {
            ROW_OUTPUTS.to_vec()
        } else {
            asked.to_vec()
        }
    }
    pub fn is_label(label: &str) -> bool {
        VARIANTS.iter().any(|v| v.label == label)
    }
}

/// One (2r+1)-tap average; `$attr` is the rest of the attribute (strategy or distribution).
macro_rules! box_stencil {
    ($t:ident, $name:ident, $r:literal, $p:literal, $taps:literal, $($attr:tt)*) => {
        #[stencil(radius = $r, warp = 32, outputs_per_thread = $p, $($attr)*)]
        pub fn $name(w: Window<$t>) -> $t {
            let mut s = 0.0;
            for d in -$r..=$r {
                s += w[d];
            }
            s / $taps
        }
    };
}

/// `distribution = auto` (no outputs per thread: the cost model picks both), one per radius.
macro_rules! auto_module {
    ($t:ident) => {
        pub mod register_cache_auto {
            use rc::prelude::*;
            auto_stencils!($t:
                (box_r1, 1, 3.0), (box_r2, 2, 5.0), (box_r4, 4, 9.0), (box_r8, 8, 17.0), (box_r12, 12, 25.0),
                (box_r16, 16, 33.0), (box_r24, 24, 49.0), (box_r32, 32, 65.0), (box_r64, 64, 129.0)
            );
        }
    };
}

macro_rules! auto_stencils {
    ($t:ident: $(($name:ident, $r:literal, $taps:literal)),* $(,)?) => {
        $(
            #[stencil(radius = $r, warp = 32, distribution = auto)]
            pub fn $name(w: Window<$t>) -> $t {
                let mut s = 0.0;
                for d in -$r..=$r {
                    s += w[d];
                }
                s / $taps
            }
        )*

        pub const ALL: &[Stencil<$t, ()>] = &[$($name::KERNEL),*];
    };
}

/// One `#[stencil]` per pattern, and `ALL`, their handles. The register cache is the article's
/// round-robin (without `distribution`, the cost model would choose).
macro_rules! box_stencils {
    ($t:ident, register_cache: $(($name:ident, $r:literal, $p:literal, $taps:literal)),* $(,)?) => {
        $(box_stencil!($t, $name, $r, $p, $taps, strategy = register_cache, distribution = round_robin);)*

        pub const ALL: &[Stencil<$t, ()>] = &[$($name::KERNEL),*];
    };
    ($t:ident, $strategy:ident: $(($name:ident, $r:literal, $p:literal, $taps:literal)),* $(,)?) => {
        $(box_stencil!($t, $name, $r, $p, $taps, strategy = $strategy);)*

        pub const ALL: &[Stencil<$t, ()>] = &[$($name::KERNEL),*];
    };
}

macro_rules! strategy_module {
    ($module:ident, $t:ident, $strategy:ident) => {
        pub mod $module {
            use rc::prelude::*;
            with_patterns!(box_stencils, $t, $strategy);
        }
    };
}

pub mod f32 {
    row_module!(register_cache_granule, f32, granule);
    row_module!(register_cache_window, f32, window);
    row_module!(register_cache_staged, f32, staged);
    auto_module!(f32);
    strategy_module!(register_cache, f32, register_cache);
    strategy_module!(shared_memory, f32, shared_memory);
    strategy_module!(naive, f32, naive);
}

pub mod f64 {
    row_module!(register_cache_granule, f64, granule);
    // An f64 window at r = 64 is 2 x 136 registers: more than a thread has (a compile error).
    row_module!(register_cache_window, f64, window; no_r64);
    // 256 threads x 32 f64 outputs need 64 KiB of stage: more than a kernel may declare.
    row_module!(register_cache_staged, f64, staged; no_p32);
    auto_module!(f64);
    strategy_module!(register_cache, f64, register_cache);
    strategy_module!(shared_memory, f64, shared_memory);
    strategy_module!(naive, f64, naive);
}

/// An element type the benchmark runs: its compiled kernels and its test signal.
pub trait BenchElement: rc::Element + rc::runtime::cust::memory::DeviceCopy {
    /// Every compiled kernel over this element type, all strategies.
    fn kernels() -> Vec<Stencil<Self, ()>>;
    /// The `distribution = auto` kernels, one per radius (kept apart: each is also one of the
    /// swept kernels, same layout and outputs per thread).
    fn auto_kernels() -> &'static [Stencil<Self, ()>];
    fn from_f64(value: f64) -> Self;
}

impl BenchElement for f32 {
    fn kernels() -> Vec<Stencil<f32, ()>> {
        [
            self::f32::register_cache::ALL,
            self::f32::register_cache_granule::ALL,
            self::f32::register_cache_window::ALL,
            self::f32::register_cache_staged::ALL,
            self::f32::shared_memory::ALL,
            self::f32::naive::ALL,
        ]
        .concat()
    }
    fn auto_kernels() -> &'static [Stencil<f32, ()>] {
        self::f32::register_cache_auto::ALL
    }
    fn from_f64(value: f64) -> f32 {
        value as f32
    }
}

impl BenchElement for f64 {
    fn kernels() -> Vec<Stencil<f64, ()>> {
        [
            self::f64::register_cache::ALL,
            self::f64::register_cache_granule::ALL,
            self::f64::register_cache_window::ALL,
            self::f64::register_cache_staged::ALL,
            self::f64::shared_memory::ALL,
            self::f64::naive::ALL,
        ]
        .concat()
    }
    fn auto_kernels() -> &'static [Stencil<f64, ()>] {
        self::f64::register_cache_auto::ALL
    }
    fn from_f64(value: f64) -> f64 {
        value
    }
}

/// The compiled kernel for `radius`, `outputs_per_thread` and `variant`, if there is one.
pub fn find<T: BenchElement>(
    kernels: &[Stencil<T, ()>],
    radius: u32,
    outputs_per_thread: u32,
    variant: Variant,
) -> Option<Stencil<T, ()>> {
    kernels.iter().copied().find(|k| {
        let pattern = k.pattern();
        pattern.radius().along_x() == radius && pattern.outputs_per_thread() == outputs_per_thread && variant.matches(k)
    })
}

/// The radii and the outputs per thread that have compiled kernels (the same for every
/// element type and strategy: `with_patterns!` is the one list).
pub fn compiled() -> (Vec<u32>, Vec<u32>) {
    let kernels: Vec<Stencil<f32, ()>> =
        <f32 as BenchElement>::kernels().into_iter().filter(|k| Variant::of(k).is_some_and(|v| !v.rows())).collect();
    let mut radii: Vec<u32> = kernels.iter().map(|k| k.pattern().radius().along_x()).collect();
    let mut ps: Vec<u32> = kernels.iter().map(|k| k.pattern().outputs_per_thread()).collect();
    for values in [&mut radii, &mut ps] {
        values.sort_unstable();
        values.dedup();
    }
    (radii, ps)
}

/// `n` samples of a sine with 10% noise (the signal of the other examples), in `T`.
pub fn signal<T: BenchElement>(n: usize) -> Vec<T> {
    let mut rng = rc::testdata::Rng::new(7);
    (0..n).map(|i| T::from_f64((i as f64 * 1e-3).sin() + 0.1 * rng.uniform(-1.0, 1.0))).collect()
}
