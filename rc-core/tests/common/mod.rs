//! Bodies built by hand, mirroring what the macro produces for the Rust functions beside them.
#![allow(dead_code)]

use rc_core::body::{BinaryOp, Body, Node};
use rc_core::{Boundary, Element, Pattern, Scalar, ScalarType, Window};

/// `let mut s = 0.0; for k in -r..=r { s += w[k]; } s / (2r + 1) as T`
pub fn box_body(r: u32, ty: ScalarType) -> Body {
    let zero = match ty {
        ScalarType::F64 => Scalar::f64(0.0),
        _ => Scalar::f32(0.0),
    };
    let div = match ty {
        ScalarType::F64 => Scalar::f64((2 * r + 1) as f64),
        _ => Scalar::f32((2 * r + 1) as f32),
    };
    let mut nodes = vec![Node::Const(zero)];
    let mut acc = 0;
    for k in -(r as i32)..=(r as i32) {
        nodes.push(Node::Tap(k));
        nodes.push(Node::Binary(BinaryOp::Add, acc, nodes.len() as u32 - 1));
        acc = nodes.len() as u32 - 1;
    }
    nodes.push(Node::Const(div));
    nodes.push(Node::Binary(BinaryOp::Div, acc, nodes.len() as u32 - 1));
    let result = nodes.len() as u32 - 1;
    Body::new(ty, vec![], r, nodes, result).expect("box body type-checks")
}

pub fn box_reference<T: Element + Into<f64>>(w: Window<T>, r: u32) -> f64 {
    let mut s = 0.0f64;
    for k in -(r as i32)..=(r as i32) {
        s += w[k].into();
    }
    s
}

/// The reference by the definition: centre of output i is i + r - shift.
pub fn reference_f32(pattern: &Pattern, input: &[f32]) -> Vec<f32> {
    let r = pattern.radius();
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
    let r = pattern.radius();
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

/// Deterministic data with the awkward values mixed in: NaN, infinities, -0.0, subnormals.
pub fn data_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 53 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => -0.0,
                4 => f32::from_bits(1 + (x >> 40) as u32 % 1000),
                _ => ((x >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0) as f32,
            }
        })
        .collect()
}

pub fn data_f64(n: usize, seed: u64) -> Vec<f64> {
    data_f32(n, seed).into_iter().map(|v| v as f64 * 1.000_000_1).collect()
}

pub fn same_bits_f32(a: &[f32], b: &[f32]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(usize::MAX);
    }
    a.iter().zip(b).position(|(x, y)| !x.same_value(*y))
}

pub fn same_bits_f64(a: &[f64], b: &[f64]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(usize::MAX);
    }
    a.iter().zip(b).position(|(x, y)| !x.same_value(*y))
}

pub const WARPS: [u32; 5] = [2, 4, 8, 16, 32];
pub const BOUNDARIES: [Boundary; 4] = Boundary::ALL;
