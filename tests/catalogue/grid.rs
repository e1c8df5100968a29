//! 2D and 3D stencils: every element type, every boundary, symmetric and asymmetric radii, stars
//! and boxes, and every argument that shapes a grid tile (`rows_per_warp`, `planes_per_warp`,
//! `outputs_per_thread`, a named distribution, the baseline strategies). `tests/grid.rs` checks
//! each one's emulated warp program against the function itself over grids of many shapes.
// `w[(0, 0)]`-style taps read as written in the papers these stencils come from.
#![allow(clippy::identity_op)]

use half::{bf16, f16};
use rc::prelude::*;

use super::Visit;

/// A heat step on a grid: the 5-point Laplacian with a runtime coefficient.
#[stencil(radius = (1, 1), boundary = clamp)]
pub fn heat2d(w: Window2<f32>, alpha: f32) -> f32 {
    let laplacian = w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)];
    w[(0, 0)] + alpha * laplacian
}

/// The 3x3 mean, loops over dy and dx unrolled.
#[stencil(radius = 1, boundary = zero)]
pub fn box3x3(w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            s += w[(dy, dx)];
        }
    }
    s / 9.0
}

/// A 5x5 binomial blur: weights from a const array indexed by both loop variables.
#[stencil(radius = (2, 2), boundary = wrap)]
pub fn gauss5x5(w: Window2<f32>) -> f32 {
    const B: [f32; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];
    let mut s = 0.0;
    for dy in -2..=2 {
        for dx in -2..=2 {
            s += B[(dy + 2) as usize] * B[(dx + 2) as usize] * w[(dy, dx)];
        }
    }
    s / 256.0
}

/// The Sobel gradient's magnitude.
#[stencil(radius = 1, boundary = clamp)]
pub fn sobel(w: Window2<f32>) -> f32 {
    let gx = (w[(-1, 1)] + 2.0 * w[(0, 1)] + w[(1, 1)]) - (w[(-1, -1)] + 2.0 * w[(0, -1)] + w[(1, -1)]);
    let gy = (w[(1, -1)] + 2.0 * w[(1, 0)] + w[(1, 1)]) - (w[(-1, -1)] + 2.0 * w[(-1, 0)] + w[(-1, 1)]);
    (gx * gx + gy * gy).sqrt()
}

/// A wider reach along x than along y, under `valid`: distinct weights per tap, so a tap read
/// from the wrong row or column shows.
#[stencil(radius = (1, 3))]
pub fn asymmetric(w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -3..=3 {
            s += (1.0 + 0.125 * (dy * 7 + dx) as f32) * w[(dy, dx)];
        }
    }
    s
}

/// One tap away from the centre in both dimensions: the output at (y, x) is the input at
/// (y + 1, x - 2), or 0 off the grid.
#[stencil(radius = (1, 2), boundary = zero)]
pub fn shifted(w: Window2<f32>) -> f32 {
    w[(1, -2)]
}

#[stencil(radius = 1, boundary = clamp)]
pub fn laplacian_i32_2d(w: Window2<i32>) -> i32 {
    w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4 * w[(0, 0)]
}

/// A max filter over a 3x5 box, with a floor passed at the call.
#[stencil(radius = (1, 2), boundary = wrap)]
pub fn max_u32_2d(w: Window2<u32>, floor: u32) -> u32 {
    let mut m = floor;
    for dy in -1..=1 {
        for dx in -2..=2 {
            m = m.max(w[(dy, dx)]);
        }
    }
    m
}

/// A 9-point star in f64 (two 32-bit shuffles per value).
#[stencil(radius = 2, boundary = zero)]
pub fn star_f64(w: Window2<f64>, h: f64) -> f64 {
    let mut s = -10.0 * w[(0, 0)];
    for d in 1..=2 {
        let c = if d == 1 { 2.0 } else { 0.5 };
        s += c * (w[(-d, 0)] + w[(d, 0)] + w[(0, -d)] + w[(0, d)]);
    }
    s / (h * h)
}

/// The 7-point Laplacian of 3D diffusion.
#[stencil(radius = (1, 1, 1), boundary = clamp)]
pub fn laplace7(w: Window3<f32>, alpha: f32) -> f32 {
    let faces = w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)];
    w[(0, 0, 0)] + alpha * (faces - 6.0 * w[(0, 0, 0)])
}

/// The 3x3x3 mean.
#[stencil(radius = 1, boundary = zero)]
pub fn box27(w: Window3<f32>) -> f32 {
    let mut s = 0.0;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                s += w[(dz, dy, dx)];
            }
        }
    }
    s / 27.0
}

/// A reach of 2 along y only, under `valid`, with distinct weights per tap.
#[stencil(radius = (1, 2, 1))]
pub fn asymmetric3d(w: Window3<f32>) -> f32 {
    let mut s = 0.0;
    for dz in -1..=1 {
        for dy in -2..=2 {
            for dx in -1..=1 {
                s += (dz * 100 + dy * 10 + dx) as f32 * w[(dz, dy, dx)];
            }
        }
    }
    s
}

/// Three output rows per warp (not a power of two) and four outputs per thread.
#[stencil(radius = 1, rows_per_warp = 3, outputs_per_thread = 4, boundary = wrap)]
pub fn heat2d_rows3(w: Window2<f32>, alpha: f32) -> f32 {
    w[(0, 0)] + alpha * (w[(-1, 0)] + w[(1, 0)] + w[(0, -1)] + w[(0, 1)] - 4.0 * w[(0, 0)])
}

/// Two rows and three planes per warp in 3D, on a 16-lane warp.
#[stencil(radius = 1, warp = 16, rows_per_warp = 2, planes_per_warp = 3, boundary = zero)]
pub fn laplace7_tiled(w: Window3<f32>) -> f32 {
    w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)] - 6.0 * w[(0, 0, 0)]
}

/// Granules of four consecutive outputs per lane, only the halo shuffled.
#[stencil(radius = (1, 2), outputs_per_thread = 4, distribution = granule(4), boundary = clamp)]
pub fn box3x5_granule(w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -2..=2 {
            s += w[(dy, dx)];
        }
    }
    s / 15.0
}

/// Granules in 3D.
#[stencil(radius = 1, outputs_per_thread = 4, rows_per_warp = 2, distribution = granule(4), boundary = wrap)]
pub fn laplace7_granule(w: Window3<f64>) -> f64 {
    w[(-1, 0, 0)] + w[(1, 0, 0)] + w[(0, -1, 0)] + w[(0, 1, 0)] + w[(0, 0, -1)] + w[(0, 0, 1)] - 6.0 * w[(0, 0, 0)]
}

/// Each lane caches its outputs' whole windows along x.
#[stencil(radius = 2, outputs_per_thread = 4, distribution = window(4), boundary = zero)]
pub fn sobel_like_window(w: Window2<f32>) -> f32 {
    (w[(-2, 2)] - w[(-2, -2)]) + 2.0 * (w[(0, 2)] - w[(0, -2)]) + (w[(2, 2)] - w[(2, -2)])
}

/// Staged planes: the block's 4 warps of 2 rows stack along y and read their windows from a
/// ring of input planes in shared memory (static: 3 slots of 10 rows, and their heads and tails).
#[stencil(radius = 1, outputs_per_thread = 4, rows_per_warp = 2, planes_per_warp = 4, max_threads_per_block = 128, distribution = planes(4), boundary = wrap)]
pub fn box27_planes(w: Window3<f32>) -> f32 {
    let mut s = 0.0;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                // Weights 1, 1/2, 1/4, 1/8 by the tap's distance: exact, order-sensitive sums.
                let c = 1.0 / (1 << (dz * dz + dy * dy + dx * dx)) as f32;
                s += c * w[(dz, dy, dx)];
            }
        }
    }
    s
}

/// Staged planes of 8 warps of 4 rows at radius 2 (the probe's best tile): a ring of 97920
/// bytes, past the 48 KiB a kernel may declare, launched with dynamic shared memory.
#[stencil(radius = 2, outputs_per_thread = 4, rows_per_warp = 4, planes_per_warp = 8, max_threads_per_block = 256, distribution = planes(4), boundary = clamp)]
pub fn star3d2_planes(w: Window3<f32>, alpha: f32) -> f32 {
    let mut s = -12.0 * w[(0, 0, 0)];
    for d in 1..=2 {
        s += w[(-d, 0, 0)] + w[(d, 0, 0)] + w[(0, -d, 0)] + w[(0, d, 0)] + w[(0, 0, -d)] + w[(0, 0, d)];
    }
    w[(0, 0, 0)] + alpha * s
}

/// The shared-memory baseline from the same body.
#[stencil(radius = 1, rows_per_warp = 4, outputs_per_thread = 2, strategy = shared_memory, boundary = clamp)]
pub fn box3x3_shared(w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            s += w[(dy, dx)];
        }
    }
    s / 9.0
}

/// The naive baseline: every tap a load.
#[stencil(radius = (1, 1, 2), planes_per_warp = 2, strategy = naive, boundary = clamp)]
pub fn box3d_naive(w: Window3<i32>, bias: i32) -> i32 {
    let mut s = bias;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -2..=2 {
                s += w[(dz, dy, dx)];
            }
        }
    }
    s
}

/// Variable-coefficient diffusion on a grid, one explicit step: `u` diffuses with the
/// conductivity `k` (a second input field), averaged onto each face.
#[stencil(radius = 1, boundary = clamp)]
pub fn diffuse2d(u: Window2<f32>, k: Window2<f32>, dt: f32) -> f32 {
    let flux = |kn: f32, du: f32| 0.5 * (k[(0, 0)] + kn) * du;
    let c = u[(0, 0)];
    let div = flux(k[(0, 1)], u[(0, 1)] - c) - flux(k[(0, -1)], c - u[(0, -1)]) + flux(k[(1, 0)], u[(1, 0)] - c)
        - flux(k[(-1, 0)], c - u[(-1, 0)]);
    c + dt * div
}

/// Two fields through the shared-memory baseline in 2D: each warp stages both boxes.
#[stencil(radius = (1, 2), rows_per_warp = 2, outputs_per_thread = 2, strategy = shared_memory, boundary = zero)]
pub fn weighted_shared2d(u: Window2<f32>, w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -2..=2 {
            s += w[(dy, dx)] * u[(-dy, dx)];
        }
    }
    s
}

/// Three fields in 3D, windows of f32 (vector loads of each field, row by row).
#[stencil(radius = 1, outputs_per_thread = 4, rows_per_warp = 2, distribution = window(4), boundary = wrap)]
pub fn three_fields3d(a: Window3<f32>, b: Window3<f32>, c: Window3<f32>) -> f32 {
    a[(-1, 0, 0)] * b[(1, 0, 0)] + b[(0, -1, 1)] - c[(0, 1, -1)] + a[(0, 0, 0)] * c[(1, 1, 1)]
}

/// A 3x3 convolution whose kernel is chosen at run time: an array parameter indexed by the
/// unrolled loops' constants.
#[stencil(radius = 1, outputs_per_thread = 2, boundary = clamp)]
pub fn conv3x3(w: Window2<f32>, k: [f32; 9]) -> f32 {
    let mut s = 0.0;
    for dy in -1..=1 {
        for dx in -1..=1 {
            s += k[(3 * (dy + 1) + dx + 1) as usize] * w[(dy, dx)];
        }
    }
    s
}

/// Integer operations in 3D: a 7-point stencil of bit tricks on u32 with per-axis weights.
#[stencil(radius = 1, boundary = wrap)]
pub fn int_ops_3d(w: Window3<u32>, weights: [u32; 3]) -> u32 {
    let z = (w[(-1, 0, 0)] ^ w[(1, 0, 0)]) * weights[0];
    let y = (w[(0, -1, 0)] | w[(0, 1, 0)]) / 3 * weights[1];
    let x = ((w[(0, 0, -1)] << 3) & !w[(0, 0, 1)]) % 1000 * weights[2];
    (z + y + x) >> 2
}

/// A 9x9 box with its rows streamed (partial sums carried from row to row), the default rows.
#[stencil(radius = 4, stream = true, boundary = clamp)]
pub fn box9x9(w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -4..=4 {
        for dx in -4..=4 {
            s += w[(dy, dx)];
        }
    }
    s * (1.0 / 81.0)
}

/// The 5x5 mean as a scale, under `zero`: the sum from 0.0 and its product fuse into one
/// `fma` (`rc_core::zero_start`), whose sign of zero must match the reference's.
#[stencil(radius = 2, boundary = zero)]
pub fn mean5x5(w: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -2..=2 {
        for dx in -2..=2 {
            s += w[(dy, dx)];
        }
    }
    s * (1.0 / 25.0)
}

/// Rows streamed on request, few of them, distinct weights per tap, two fields, wrapping: a
/// value carried to the wrong step or a row loaded ahead from the wrong place shows.
#[stencil(radius = (2, 1), stream = true, rows_per_warp = 5, outputs_per_thread = 4, boundary = wrap)]
pub fn streamed_weighted(u: Window2<f32>, k: Window2<f32>) -> f32 {
    let mut s = 0.0;
    for dy in -2..=2 {
        for dx in -1..=1 {
            s += (1.0 + 0.125 * (dy * 3 + dx) as f32) * u[(dy, dx)];
        }
    }
    s * k[(0, 0)] - k[(2, -1)]
}

/// f16 heat on a grid, round-robin: the cache holds two elements a register and taps of two
/// outputs travel in one shuffle.
#[stencil(radius = (1, 2), outputs_per_thread = 3, rows_per_warp = 2, distribution = round_robin, boundary = clamp)]
pub fn heat2d_f16_round_robin(w: Window2<f16>, alpha: f16) -> f16 {
    let laplacian = w[(-1, 0)] + w[(1, 0)] + w[(0, -2)] + w[(0, 2)] - f16::from_f32(4.0) * w[(0, 0)];
    w[(0, 0)] + alpha * laplacian
}

/// The bf16 3x3x3 box over granules of 4, streaming along z: packed cache words carried plane
/// to plane.
#[stencil(radius = 1, outputs_per_thread = 8, planes_per_warp = 4, distribution = granule(4), boundary = zero)]
pub fn box27_bf16_granule(w: Window3<bf16>) -> bf16 {
    let mut s = bf16::ZERO;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                s += w[(dz, dy, dx)];
            }
        }
    }
    s / bf16::from_f32(27.0)
}

/// An f16 5x5 box over granules of 4 with its rows streamed: packed words in the lifted
/// pipeline.
#[stencil(radius = 2, stream = true, outputs_per_thread = 4, distribution = granule(4), boundary = wrap)]
pub fn box5x5_f16_streamed(w: Window2<f16>) -> f16 {
    let mut s = f16::ZERO;
    for dy in -2..=2 {
        for dx in -2..=2 {
            s += w[(dy, dx)];
        }
    }
    s
}

/// The exact roundings and signs in 2D, f64: ties from `trunc + 0.5`.
#[stencil(radius = (1, 1), boundary = clamp)]
pub fn roundings_2d(w: Window2<f64>) -> f64 {
    let tie = w[(0, 0)].trunc() + 0.5;
    let r = w[(-1, 0)].floor() + w[(1, 0)].ceil() - w[(0, -1)].round() + w[(0, 1)].round_ties_even();
    r + tie.round() - tie.round_ties_even() * 0.5 + w[(0, 0)].fract() + w[(1, 1)].copysign(w[(-1, -1)])
}

/// Perona-Malik diffusion: each direction's flux scaled by the conductance exp(-(d/k)^2).
#[stencil(radius = 1, boundary = clamp)]
pub fn perona_malik(w: Window2<f32>, inv_k2: f32, dt: f32) -> f32 {
    let flux = |d: f32| (-(d * d) * inv_k2).exp() * d;
    let c = w[(0, 0)];
    c + dt * (flux(w[(-1, 0)] - c) + flux(w[(1, 0)] - c) + flux(w[(0, -1)] - c) + flux(w[(0, 1)] - c))
}

/// Bit counts and rotations in 3D, u32.
#[stencil(radius = 1, boundary = wrap)]
pub fn bits_3d(w: Window3<u32>) -> u32 {
    let c = w[(0, 0, 0)].count_ones() + w[(1, 0, 0)].leading_zeros() + w[(0, -1, 0)].trailing_zeros();
    (c + w[(0, 0, -1)].abs_diff(300)) ^ w[(-1, 0, 0)].rotate_left(w[(0, 0, 1)]) ^ w[(0, 1, 0)].reverse_bits()
}

/// Visits every 16-bit stencil above, with the parameters it is checked with.
pub fn visit_half(v: &mut impl super::VisitHalf) {
    v.visit(&heat2d_f16_round_robin::KERNEL, (f16::from_f32(0.125),));
    v.visit(&box27_bf16_granule::KERNEL, ());
    v.visit(&box5x5_f16_streamed::KERNEL, ());
}

/// Visits every stencil above, with the parameters it is checked with.
pub fn visit_all(v: &mut impl Visit) {
    v.visit(&heat2d::KERNEL, (0.2,));
    v.visit(&box3x3::KERNEL, ());
    v.visit(&gauss5x5::KERNEL, ());
    v.visit(&sobel::KERNEL, ());
    v.visit(&asymmetric::KERNEL, ());
    v.visit(&shifted::KERNEL, ());
    v.visit(&laplacian_i32_2d::KERNEL, ());
    v.visit(&max_u32_2d::KERNEL, (1 << 20,));
    v.visit(&roundings_2d::KERNEL, ());
    v.visit(&bits_3d::KERNEL, ());
    v.visit(&perona_malik::KERNEL, (0.04, 0.2));
    v.visit(&star_f64::KERNEL, (0.5,));
    v.visit(&laplace7::KERNEL, (0.1,));
    v.visit(&box27::KERNEL, ());
    v.visit(&asymmetric3d::KERNEL, ());
    v.visit(&heat2d_rows3::KERNEL, (0.25,));
    v.visit(&laplace7_tiled::KERNEL, ());
    v.visit(&box3x5_granule::KERNEL, ());
    v.visit(&laplace7_granule::KERNEL, ());
    v.visit(&sobel_like_window::KERNEL, ());
    v.visit(&box27_planes::KERNEL, ());
    v.visit(&star3d2_planes::KERNEL, (0.05,));
    v.visit(&box3x3_shared::KERNEL, ());
    v.visit(&box3d_naive::KERNEL, (-7,));
    v.visit(&diffuse2d::KERNEL, (0.1,));
    v.visit(&weighted_shared2d::KERNEL, ());
    v.visit(&three_fields3d::KERNEL, ());
    v.visit(&conv3x3::KERNEL, ([0.0625, 0.125, 0.0625, 0.125, -0.75, 0.125, 0.0625, 0.125, 0.0625],));
    v.visit(&int_ops_3d::KERNEL, ([3, 5, 7],));
    v.visit(&box9x9::KERNEL, ());
    v.visit(&mean5x5::KERNEL, ());
    v.visit(&streamed_weighted::KERNEL, ());
}
