//! The grid benchmark's kernels: 2D and 3D stars and boxes whose output is the sum of their taps
//! times 1 / taps (boundary clamp, CuPy's mode 'nearest'), each as `#[stencil]` writes it: the
//! default (the cost model's distribution, the default tile), every distribution the cost model
//! weighs in 2D and 3D (16-byte windows and granules), a few tile shapes given as attribute
//! arguments, and the generated shared-memory and naive baselines.
//!
//! Each kernel is its own `#[stencil]`, written out by `macro_rules!` (the literals reach the
//! attribute as they are).

use rc::prelude::*;
use rc::Extent;

use crate::bench::kernels::BenchElement;

/// The 2D grid of the benchmark (issue 17): 8192 x 8192.
pub const SHAPE_2D: [usize; 2] = [8192, 8192];
/// The 3D grid: 512^3.
pub const SHAPE_3D: [usize; 3] = [512, 512, 512];

/// A 2D star: the centre and 4r arms, summed arm by arm, times 1 / taps.
macro_rules! star2d {
    ($t:ident, $name:ident, $r:literal, $taps:literal $(, $arg:ident = $value:expr)*) => {
        #[stencil(radius = $r, boundary = clamp $(, $arg = $value)*)]
        pub fn $name(w: Window2<$t>) -> $t {
            let mut s = w[(0, 0)];
            for d in 1..=$r {
                s += w[(-d, 0)] + w[(d, 0)] + w[(0, -d)] + w[(0, d)];
            }
            s * (1.0 / $taps)
        }
    };
}

/// A 2D box: every tap of the (2r+1)^2 square, row after row, times 1 / taps.
macro_rules! box2d {
    ($t:ident, $name:ident, $r:literal, $taps:literal $(, $arg:ident = $value:expr)*) => {
        #[stencil(radius = $r, boundary = clamp $(, $arg = $value)*)]
        pub fn $name(w: Window2<$t>) -> $t {
            let mut s = 0.0;
            for dy in -$r..=$r {
                for dx in -$r..=$r {
                    s += w[(dy, dx)];
                }
            }
            s * (1.0 / $taps)
        }
    };
}

/// A 3D star: the centre and 6r arms, times 1 / taps.
macro_rules! star3d {
    ($t:ident, $name:ident, $r:literal, $taps:literal $(, $arg:ident = $value:expr)*) => {
        #[stencil(radius = $r, boundary = clamp $(, $arg = $value)*)]
        pub fn $name(w: Window3<$t>) -> $t {
            let mut s = w[(0, 0, 0)];
            for d in 1..=$r {
                s += w[(-d, 0, 0)] + w[(d, 0, 0)] + w[(0, -d, 0)] + w[(0, d, 0)] + w[(0, 0, -d)] + w[(0, 0, d)];
            }
            s * (1.0 / $taps)
        }
    };
}

/// A 3D box: every tap of the (2r+1)^3 cube, times 1 / taps.
macro_rules! box3d {
    ($t:ident, $name:ident, $r:literal, $taps:literal $(, $arg:ident = $value:expr)*) => {
        #[stencil(radius = $r, boundary = clamp $(, $arg = $value)*)]
        pub fn $name(w: Window3<$t>) -> $t {
            let mut s = 0.0;
            for dz in -$r..=$r {
                for dy in -$r..=$r {
                    for dx in -$r..=$r {
                        s += w[(dz, dy, dx)];
                    }
                }
            }
            s * (1.0 / $taps)
        }
    };
}

/// Every kernel of one stencil, in a module named after it: `$shape!` writes the body; `$v` is
/// a 16-byte vector's elements (4 for f32, 2 for f64); `tiles` are the tile shapes beyond the
/// default, each `name: arguments`.
macro_rules! grid_stencil {
    (
        $module:ident, $shape:ident, $t:ident, r = $r:literal, taps = $taps:literal, v = $v:literal,
        tiles: [$($tile:ident: ($($arg:ident = $value:expr),*)),* $(,)?]
    ) => {
        pub mod $module {
            use rc::prelude::*;
            $shape!($t, default, $r, $taps);
            $shape!($t, window, $r, $taps, distribution = window($v), outputs_per_thread = $v);
            $shape!($t, granule, $r, $taps, distribution = granule($v), outputs_per_thread = $v);
            $($shape!($t, $tile, $r, $taps $(, $arg = $value)*);)*
            // Rows of 4: a 3D box r = 2 at 8 rows would stage 68 KiB per block, past the 48 KiB limit.
            $shape!($t, shared_memory, $r, $taps, strategy = shared_memory, rows_per_warp = 4);
            $shape!($t, naive, $r, $taps, strategy = naive);

            pub const STENCIL: super::super::GridStencil<$t> = super::super::GridStencil {
                name: stringify!($module),
                taps: $taps as u32,
                default: default::KERNEL,
                others: &[window::KERNEL, granule::KERNEL, $($tile::KERNEL,)* shared_memory::KERNEL, naive::KERNEL],
            };
        }
    };
}

/// One stencil of the benchmark: its kernels, all computing the same function.
#[derive(Clone, Copy)]
pub struct GridStencil<T: rc::Element> {
    /// `star2d_r1`, `box3d_r2`, ...
    pub name: &'static str,
    /// Taps per output: the adds one output needs, for the arithmetic bound.
    pub taps: u32,
    /// `#[stencil]` with no tiling argument: what a user gets.
    pub default: Stencil<T, ()>,
    /// The named distributions, the tile shapes and the baselines.
    pub others: &'static [Stencil<T, ()>],
}

impl<T: rc::Element> GridStencil<T> {
    /// The benchmark's grid for this stencil's dimensions.
    pub fn shape(&self, shape_2d: [usize; 2], shape_3d: [usize; 3]) -> Extent {
        match self.default.pattern().dims() {
            rc::core::Dims::Three => shape_3d.into(),
            _ => shape_2d.into(),
        }
    }

    /// Every distinct kernel, the default first: a named variant that compiled to the same
    /// strategy, distribution and tile as an earlier one (the cost model's choice is one of the
    /// named distributions) is left out.
    pub fn kernels(&self) -> Vec<Stencil<T, ()>> {
        let mut kernels: Vec<Stencil<T, ()>> = Vec::new();
        for k in std::iter::once(self.default).chain(self.others.iter().copied()) {
            let same = |o: &Stencil<T, ()>| {
                o.pattern() == k.pattern() && o.strategy() == k.strategy() && o.layout() == k.layout()
            };
            if !kernels.iter().any(same) {
                kernels.push(k);
            }
        }
        kernels
    }
}

/// An element type with grid stencils.
pub trait GridElement: BenchElement {
    fn stencils() -> &'static [GridStencil<Self>];
}

impl GridElement for f32 {
    fn stencils() -> &'static [GridStencil<f32>] {
        self::f32::ALL
    }
}

impl GridElement for f64 {
    fn stencils() -> &'static [GridStencil<f64>] {
        self::f64::ALL
    }
}

/// The names of every grid stencil, of any element type, in the order they run.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = <f32 as GridElement>::stencils().iter().map(|s| s.name).collect();
    for s in <f64 as GridElement>::stencils() {
        if !names.contains(&s.name) {
            names.push(s.name);
        }
    }
    names
}

// The tiles beyond the default: fewer rows with launch bounds that cap registers for occupancy
// (the fastest r <= 2 tiles of the first H100 sweep, bench/results/HISTORY.md: 2026-11-23-h100-grid.md),
// more rows, more outputs per thread; for the large boxes, fewer rows instead of caps that spill;
// for box r = 4 the default tile (blocks of 4 warps, bound by issue) in blocks of 8 and 16 warps
// (the same 64 registers per thread) and without its L2 prefetch; box r = 2 and star r = 4 with
// the prefetch the cost model gives only tiles bound by issue.
pub mod f32 {
    grid_stencil!(star2d_r1, star2d, f32, r = 1, taps = 5.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb4: (rows_per_warp = 8, min_blocks_per_sm = 4),
                rows16: (rows_per_warp = 16), p8: (outputs_per_thread = 8)]);
    grid_stencil!(box2d_r1, box2d, f32, r = 1, taps = 9.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb4: (rows_per_warp = 8, min_blocks_per_sm = 4),
                rows16: (rows_per_warp = 16), p8: (outputs_per_thread = 8)]);
    grid_stencil!(star2d_r2, star2d, f32, r = 2, taps = 9.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb3: (rows_per_warp = 8, min_blocks_per_sm = 3),
                rows16: (rows_per_warp = 16), p8: (outputs_per_thread = 8)]);
    grid_stencil!(box2d_r2, box2d, f32, r = 2, taps = 25.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb2: (rows_per_warp = 8, min_blocks_per_sm = 2),
                rows16: (rows_per_warp = 16), p8: (outputs_per_thread = 8), prefetch: (prefetch = true)]);
    grid_stencil!(star2d_r4, star2d, f32, r = 4, taps = 17.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb2: (rows_per_warp = 8, min_blocks_per_sm = 2),
                rows16: (rows_per_warp = 16), p8: (outputs_per_thread = 8), prefetch: (prefetch = true)]);
    grid_stencil!(box2d_r4, box2d, f32, r = 4, taps = 81.0, v = 4,
        tiles: [rows2: (rows_per_warp = 2), rows4: (rows_per_warp = 4), rows8_mb2: (rows_per_warp = 8, min_blocks_per_sm = 2),
                rows16: (rows_per_warp = 16), streamed: (stream = true), streamed_mb2: (stream = true, min_blocks_per_sm = 2),
                streamed_w8: (stream = true, distribution = window(8), outputs_per_thread = 8, min_blocks_per_sm = 2),
                t256_mb4: (max_threads_per_block = 256, min_blocks_per_sm = 4, outputs_per_thread = 4, distribution = window(4)),
                t512_mb2: (max_threads_per_block = 512, min_blocks_per_sm = 2, outputs_per_thread = 4, distribution = window(4)),
                no_prefetch: (prefetch = false)]);
    grid_stencil!(star3d_r1, star3d, f32, r = 1, taps = 7.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb3: (rows_per_warp = 8, min_blocks_per_sm = 3),
                rows4_planes2: (rows_per_warp = 4, planes_per_warp = 2)]);
    grid_stencil!(box3d_r1, box3d, f32, r = 1, taps = 27.0, v = 4,
        tiles: [rows4: (rows_per_warp = 4), rows4_mb2: (rows_per_warp = 4, min_blocks_per_sm = 2),
                rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows4_planes2: (rows_per_warp = 4, planes_per_warp = 2)]);
    grid_stencil!(star3d_r2, star3d, f32, r = 2, taps = 13.0, v = 4,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb3: (rows_per_warp = 8, min_blocks_per_sm = 3),
                rows4_planes2: (rows_per_warp = 4, planes_per_warp = 2)]);
    grid_stencil!(box3d_r2, box3d, f32, r = 2, taps = 125.0, v = 4,
        tiles: [rows2: (rows_per_warp = 2), rows4: (rows_per_warp = 4), rows2_planes2: (rows_per_warp = 2, planes_per_warp = 2)]);

    pub const ALL: &[super::GridStencil<f32>] = &[
        star2d_r1::STENCIL,
        box2d_r1::STENCIL,
        star2d_r2::STENCIL,
        box2d_r2::STENCIL,
        star2d_r4::STENCIL,
        box2d_r4::STENCIL,
        star3d_r1::STENCIL,
        box3d_r1::STENCIL,
        star3d_r2::STENCIL,
        box3d_r2::STENCIL,
    ];
}

pub mod f64 {
    grid_stencil!(star2d_r1, star2d, f64, r = 1, taps = 5.0, v = 2,
        tiles: [rows4_mb3: (rows_per_warp = 4, min_blocks_per_sm = 3), rows8_mb4: (rows_per_warp = 8, min_blocks_per_sm = 4),
                rows16: (rows_per_warp = 16), p4: (outputs_per_thread = 4)]);

    pub const ALL: &[super::GridStencil<f64>] = &[star2d_r1::STENCIL];
}
