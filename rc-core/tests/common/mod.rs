//! Bodies built by hand, mirroring what the macro produces for the Rust functions beside them.
#![allow(dead_code)]

use rc_core::body::{BinaryOp, Body, Node};
#[allow(unused_imports)]
pub use rc_core::testdata::{awkward, first_difference, poison};
use rc_core::{Boundary, Offset, Pattern, Radius, Scalar, ScalarType, Window};

/// `let mut s = 0.0; for k in -r..=r { s += w[k]; } s / (2r + 1) as T`
pub fn box_body(r: u32, ty: ScalarType) -> Body {
    let constant = |v: u32| match (ty, ty.half()) {
        (ScalarType::F64, _) => Scalar::f64(v as f64),
        // `f16::from_f32(v as f32)`, exact for these small integers.
        (_, Some(format)) => Scalar::new(ty, format.round(v as f32) as u64),
        _ => Scalar::f32(v as f32),
    };
    let (zero, div) = (constant(0), constant(2 * r + 1));
    let mut nodes = vec![Node::Const(zero)];
    let mut acc = 0;
    for k in -(r as i32)..=(r as i32) {
        nodes.push(Node::Tap(0, Offset::x(k)));
        nodes.push(Node::Binary(BinaryOp::Add, acc, nodes.len() as u32 - 1));
        acc = nodes.len() as u32 - 1;
    }
    nodes.push(Node::Const(div));
    nodes.push(Node::Binary(BinaryOp::Div, acc, nodes.len() as u32 - 1));
    let result = nodes.len() as u32 - 1;
    Body::new(ty, 1, vec![], r, nodes, vec![result]).expect("box body type-checks")
}

/// The sum of a 2D or 3D star's taps (the centre, then each axis' arms, outermost axis first)
/// or, with `full_box`, of every tap of the box in row-major order, in f32.
pub fn grid_sum(radius: Radius, full_box: bool) -> Body {
    grid_sum_of(ScalarType::F32, radius, full_box)
}

/// [`grid_sum`] over `ty`.
pub fn grid_sum_of(ty: ScalarType, radius: Radius, full_box: bool) -> Body {
    sum_of(ty, radius, &if full_box { grid_taps(radius, false) } else { star_taps(radius) })
}

/// The sum of a star's taps in row-major order, as loops over `dz`, `dy`, `dx` skipping the
/// taps off the axes write it.
pub fn star_sum_row_major(radius: Radius) -> Body {
    sum_of(ScalarType::F32, radius, &grid_taps(radius, true))
}

/// The sum of `taps` over `ty`, in their order.
fn sum_of(ty: ScalarType, radius: Radius, taps: &[Offset]) -> Body {
    let mut nodes: Vec<Node> = taps.iter().map(|&d| Node::Tap(0, d)).collect();
    let mut sum = 0;
    for tap in 1..taps.len() as u32 {
        nodes.push(Node::Binary(BinaryOp::Add, sum, tap));
        sum = nodes.len() as u32 - 1;
    }
    Body::new(ty, 1, vec![], radius, nodes, vec![sum]).expect("a valid body")
}

/// Every tap of the box of `radius` in row-major order, outermost first (with `star`, only
/// those on the axes), as loops over `dz`, `dy`, `dx` write them.
pub fn grid_taps(radius: Radius, star: bool) -> Vec<Offset> {
    let r = radius.components();
    let ranges: Vec<Vec<i32>> = r.iter().map(|&r| (-(r as i32)..=r as i32).collect()).collect();
    let mut out: Vec<Vec<i32>> = vec![vec![]];
    for range in &ranges {
        out = out.iter().flat_map(|prefix| range.iter().map(move |&d| [prefix.clone(), vec![d]].concat())).collect();
    }
    out.into_iter()
        .filter(|d| !star || d.iter().filter(|&&c| c != 0).count() <= 1)
        .map(|d| Offset::new(&d).expect("1-3 dims"))
        .collect()
}

/// A star's taps: the centre, then each axis' arms, outermost axis first.
fn star_taps(radius: Radius) -> Vec<Offset> {
    let dims = radius.dims().count();
    let mut taps = vec![Offset::new(&vec![0; dims]).expect("1-3 dims")];
    for axis in 0..dims {
        for d in 1..=radius.components()[axis] as i32 {
            for side in [-d, d] {
                let mut offset = vec![0; dims];
                offset[axis] = side;
                taps.push(Offset::new(&offset).expect("1-3 dims"));
            }
        }
    }
    taps
}

/// The reference by the definition: centre of output i is i + r - shift.
pub fn reference_f32(pattern: &Pattern, input: &[f32]) -> Vec<f32> {
    let r = pattern.radius().along_x();
    let n_out = pattern.output_len(input.len()).expect("length");
    let off = (r - pattern.shift()) as i64;
    (0..n_out)
        .map(|i| {
            let w = Window::new(input, i as i64 + off, r, pattern.boundary());
            let mut s = 0.0f32;
            for k in -(r as i32)..=(r as i32) {
                s += w[k];
            }
            s / (2 * r + 1) as f32
        })
        .collect()
}

pub fn reference_f64(pattern: &Pattern, input: &[f64]) -> Vec<f64> {
    let r = pattern.radius().along_x();
    let n_out = pattern.output_len(input.len()).expect("length");
    let off = (r - pattern.shift()) as i64;
    (0..n_out)
        .map(|i| {
            let w = Window::new(input, i as i64 + off, r, pattern.boundary());
            let mut s = 0.0f64;
            for k in -(r as i32)..=(r as i32) {
                s += w[k];
            }
            s / (2 * r + 1) as f64
        })
        .collect()
}

pub const WARPS: [u32; 5] = [2, 4, 8, 16, 32];
pub const BOUNDARIES: [Boundary; 4] = Boundary::ALL;

/// Runs `case(seed, element type)` on every core for seeds `base..base + cases` (or the one hex
/// seed in `RC_STEPS_SEED`), each seed's element type drawn from it among f32, f64, i32 and u32,
/// and fails with every failing case's first line and the first failure in full.
pub fn run_seeded(base: u64, cases: u64, case: impl Fn(u64, ScalarType) -> Result<(), String> + Sync) {
    use ScalarType::{F32, F64, I32, U32};
    let seeds: Vec<u64> = match std::env::var("RC_STEPS_SEED") {
        Ok(s) => vec![u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("a hex seed")],
        Err(_) => (0..cases).map(|i| base + i).collect(),
    };
    let types = [F32, F64, I32, U32];
    let run = |seed: u64| case(seed, types[rc_core::testdata::Rng::new(seed ^ 0x7e).below(4) as usize]).err();
    // The cases on every core, thread t taking seeds t, t + threads, ...; failures in seed order.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(seeds.len().max(1));
    let mut failures: Vec<(usize, String)> = std::thread::scope(|scope| {
        let (run, seeds) = (&run, &seeds);
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..seeds.len()).step_by(threads).filter_map(|i| run(seeds[i]).map(|f| (i, f))).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a case panicked")).collect()
    });
    failures.sort_by_key(|(i, _)| *i);
    let failures: Vec<String> = failures.into_iter().map(|(_, f)| f).collect();
    let heads: Vec<&str> = failures.iter().filter_map(|f| f.lines().next()).collect();
    assert!(failures.is_empty(), "{} failures:\n{}\nfirst:\n{}", failures.len(), heads.join("\n"), failures[0]);
}

/// `case::<T>(seed)` for the element type `ty` (f32, f64, i32, else u32).
#[macro_export]
macro_rules! by_type {
    ($case:ident, $seed:expr, $ty:expr) => {
        match $ty {
            rc_core::ScalarType::F32 => $case::<f32>($seed),
            rc_core::ScalarType::F64 => $case::<f64>($seed),
            rc_core::ScalarType::I32 => $case::<i32>($seed),
            _ => $case::<u32>($seed),
        }
    };
}
