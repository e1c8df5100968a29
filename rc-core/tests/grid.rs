//! 2D and 3D warp programs, emulated, against the body evaluated point by point under the
//! boundary rule in each dimension: every distribution and strategy, tile shapes, grid shapes
//! smaller than a tile, one row, one column, and every boundary.

use rc_core::body::{BinaryOp, Body, Node};
use rc_core::{Boundary, Extent, Layout, Offset, Pattern, Radius, Scalar, ScalarType, Strategy, WarpProgram};

/// A sum of `taps` with distinct weights (so a misplaced tap shows), over f32.
fn weighted(radius: Radius, taps: &[Offset]) -> Body {
    let mut nodes = Vec::new();
    let mut acc = None;
    for (k, &d) in taps.iter().enumerate() {
        nodes.push(Node::Tap(d));
        nodes.push(Node::Const(Scalar::f32(1.0 + k as f32 * 0.25)));
        nodes.push(Node::Binary(BinaryOp::Mul, nodes.len() as u32 - 2, nodes.len() as u32 - 1));
        let term = nodes.len() as u32 - 1;
        acc = Some(match acc {
            None => term,
            Some(a) => {
                nodes.push(Node::Binary(BinaryOp::Add, a, term));
                nodes.len() as u32 - 1
            }
        });
    }
    let result = acc.expect("taps");
    Body::new(ScalarType::F32, vec![], radius, nodes, result).expect("a valid body")
}

/// Every offset within `radius` (a box), or only those on the axes (a star).
fn taps(radius: Radius, star: bool) -> Vec<Offset> {
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

fn reference(body: &Body, pattern: Pattern, input: &[f32], shape: Extent) -> Vec<f32> {
    let out = pattern.output_shape(shape).expect("an output");
    let radius = pattern.radius();
    let dims = radius.dims().count();
    let lens = out.components();
    (0..out.len().expect("fits"))
        .map(|o| {
            let mut rest = o;
            let mut centre = vec![0i64; dims];
            for axis in (0..dims).rev() {
                let ax = dims - 1 - axis;
                centre[axis] = (rest % lens[axis]) as i64 + (radius.along(ax) - pattern.shift_along(ax)) as i64;
                rest /= lens[axis];
            }
            let tap = |d: Offset| {
                let at: Vec<i64> = centre.iter().zip(d.components()).map(|(&c, d)| c + d as i64).collect();
                Scalar::f32(pattern.boundary().locate(shape, &at).map_or(0.0, |i| input[i]))
            };
            f32::from_bits(body.eval(tap, &[]).bits as u32)
        })
        .collect()
}

fn check(body: &Body, pattern: Pattern, strategy: Strategy, layout: Layout, shapes: &[Extent]) {
    let program = match WarpProgram::compile_for(pattern, strategy, layout, body) {
        Ok(p) => p,
        Err(e) => panic!("{pattern} {strategy} {layout}: {e}"),
    };
    for &shape in shapes {
        if pattern.output_shape(shape).is_err() {
            continue;
        }
        let n = shape.len().expect("fits");
        let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 * 0.125 - 50.0).collect();
        let want = reference(body, pattern, &input, shape);
        let mut got = vec![f32::NAN; want.len()];
        if let Err(e) = program.emulate_grid(&input, shape, &mut got, &[]) {
            panic!("{pattern} {strategy} {layout} shape {shape}: {e}");
        }
        let bad = want.iter().zip(&got).position(|(a, b)| a.to_bits() != b.to_bits());
        assert!(bad.is_none(), "{pattern} {strategy} {layout} shape {shape}: output {bad:?}: want {:?} got {:?}", bad.map(|i| want[i]), bad.map(|i| got[i]));
    }
}

#[test]
fn two_d_stencils_emulate_their_reference_in_every_layout_and_boundary() {
    let shapes: Vec<Extent> = [[1, 1], [1, 40], [40, 1], [3, 5], [9, 130], [17, 257], [33, 64]].into_iter().map(Extent::from).collect();
    for (radius, star) in [(Radius::yx(1, 1), true), (Radius::yx(1, 1), false), (Radius::yx(2, 1), false), (Radius::yx(1, 3), true)] {
        let body = weighted(radius, &taps(radius, star));
        for boundary in Boundary::ALL {
            for (outputs, rows, layout, strategy) in [
                (1, 1, Layout::RoundRobin, Strategy::RegisterCache),
                (2, 4, Layout::RoundRobin, Strategy::RegisterCache),
                (4, 3, Layout::Granule(4), Strategy::RegisterCache),
                (4, 8, Layout::Window(4), Strategy::RegisterCache),
                (2, 2, Layout::RoundRobin, Strategy::Naive),
                (2, 3, Layout::RoundRobin, Strategy::SharedMemory),
            ] {
                let pattern = Pattern::grid(radius, 32, outputs, rows, 1, boundary).expect("valid");
                check(&body, pattern, strategy, layout, &shapes);
            }
        }
    }
}

#[test]
fn three_d_stencils_emulate_their_reference() {
    let shapes: Vec<Extent> = [[1, 1, 1], [2, 3, 70], [5, 6, 7], [9, 4, 33]].into_iter().map(Extent::from).collect();
    for (radius, star) in [(Radius::zyx(1, 1, 1), true), (Radius::zyx(1, 1, 1), false), (Radius::zyx(1, 2, 1), true)] {
        let body = weighted(radius, &taps(radius, star));
        for boundary in Boundary::ALL {
            for (outputs, rows, planes, layout, strategy) in [
                (1, 1, 1, Layout::RoundRobin, Strategy::RegisterCache),
                (4, 2, 3, Layout::Granule(4), Strategy::RegisterCache),
                (1, 2, 2, Layout::RoundRobin, Strategy::SharedMemory),
                (1, 1, 2, Layout::RoundRobin, Strategy::Naive),
            ] {
                let pattern = Pattern::grid(radius, 32, outputs, rows, planes, boundary).expect("valid");
                check(&body, pattern, strategy, layout, &shapes);
            }
        }
    }
}
