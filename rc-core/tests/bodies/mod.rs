//! Random stencil bodies for the property suites (`property.rs` in 1D, `property_grid.rs` in 2D
//! and 3D): typed DAGs over taps, parameters and constants that use every operation on every
//! type, built so that they type-check (integer `/ % << >>` by the constants the body language
//! admits). `random_params` draws parameter lists, with arrays among them as runs of one type, which is
//! how a kernel takes them. The taps come from a [`Taps`] set: the whole line
//! `-r..=r` in 1D (exactly the draws the 1D suite made before it was shared), any subset of a
//! 2D or 3D box otherwise; each tap reads one of the body's input fields. A body of one field
//! draws exactly what the suites drew before bodies had several, so their cases are unchanged.

// Each suite uses its own part of this module.
#![allow(dead_code)]

use rc_core::testdata::Rng;
use rc_core::typing::right_operand;
use rc_core::{BinaryOp, Body, CompareOp, Node, NodeId, Offset, Radius, Scalar, ScalarType, UnaryOp};

use ScalarType::{Bool, BF16, F16, F32, F64, I32, U32};
pub const NUMBERS: [ScalarType; 4] = [F32, F64, I32, U32];
/// The 16-bit float types, drawn apart from `NUMBERS` so that the cases of the others stay what
/// they were before rc had them.
pub const HALVES: [ScalarType; 2] = [F16, BF16];

/// The taps a body may read, in a fixed order (row-major: outermost component first), and the
/// radius the body declares (which may reach further than any tap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taps {
    pub radius: Radius,
    taps: Vec<Offset>,
}

impl Taps {
    /// Every 1D tap `-r..=r`.
    pub fn line(r: u32) -> Taps {
        Taps::new(Radius::x(r), (-(r as i32)..=r as i32).map(Offset::x).collect())
    }

    /// `taps` (at least one, each covered by `radius`), sorted and without repeats.
    pub fn new(radius: Radius, mut taps: Vec<Offset>) -> Taps {
        taps.sort_unstable_by_key(|d| d.components());
        taps.dedup();
        assert!(!taps.is_empty() && taps.iter().all(|&d| radius.covers(d)), "taps {taps:?} within {radius}");
        Taps { radius, taps }
    }

    pub fn len(&self) -> usize {
        self.taps.len()
    }

    pub fn at(&self, i: usize) -> Offset {
        self.taps[i]
    }

    pub fn all(&self) -> &[Offset] {
        &self.taps
    }

    pub fn contains(&self, d: Offset) -> bool {
        self.taps.contains(&d)
    }

    /// The offset 0 in every dimension.
    pub fn centre(&self) -> Offset {
        self.centre_row(0)
    }

    /// The offset `dx` along x in the centre row (and plane).
    pub fn centre_row(&self, dx: i32) -> Offset {
        let mut c = vec![0; self.radius.dims().count()];
        *c.last_mut().expect("1 to 3 dims") = dx;
        Offset::new(&c).expect("1 to 3 dims")
    }
}

pub fn pick<T: Copy>(rng: &mut Rng, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize]
}

pub fn chance(rng: &mut Rng, p: f64) -> bool {
    rng.uniform(0.0, 1.0) < p
}

/// A constant of type `ty`, often one that breaks sloppy code: NaNs (quiet, negative, with a
/// payload), infinities, zeros of both signs, subnormals, the extremes.
pub fn constant(rng: &mut Rng, ty: ScalarType) -> Scalar {
    match ty {
        F32 => {
            let bits: u32 = match rng.below(22) {
                0 => 0x7fc0_0000,
                1 => 0xffc0_0000,
                2 => 0x7f80_0001,
                3 => 0x7fa0_beef,
                4 => f32::INFINITY.to_bits(),
                5 => f32::NEG_INFINITY.to_bits(),
                6 => 0,
                7 => 0x8000_0000,
                8 => 1,
                9 => 0x8000_0001,
                10 => 0x007f_ffff,
                11 => f32::MIN_POSITIVE.to_bits(),
                12 => f32::MAX.to_bits(),
                13 => f32::MIN.to_bits(),
                14 => f32::EPSILON.to_bits(),
                15 => 1.0f32.to_bits(),
                16 => (-1.0f32).to_bits(),
                17 => 0.5f32.to_bits(),
                18 => 16_777_217.0f32.to_bits(),
                19 => rng.next_u64() as u32,
                _ => (rng.uniform(-100.0, 100.0) as f32).to_bits(),
            };
            Scalar::new(F32, bits as u64)
        }
        F64 => {
            let bits: u64 = match rng.below(22) {
                0 => 0x7ff8_0000_0000_0000,
                1 => 0xfff8_0000_0000_0000,
                2 => 0x7ff0_0000_0000_0001,
                3 => 0x7ff4_dead_beef_0000,
                4 => f64::INFINITY.to_bits(),
                5 => f64::NEG_INFINITY.to_bits(),
                6 => 0,
                7 => 0x8000_0000_0000_0000,
                8 => 1,
                9 => 0x8000_0000_0000_0001,
                10 => 0x000f_ffff_ffff_ffff,
                11 => f64::MIN_POSITIVE.to_bits(),
                12 => f64::MAX.to_bits(),
                13 => f64::MIN.to_bits(),
                14 => f64::EPSILON.to_bits(),
                15 => 1.0f64.to_bits(),
                16 => (-1.0f64).to_bits(),
                17 => 0.5f64.to_bits(),
                18 => (f32::MAX as f64 * 2.0).to_bits(),
                19 => rng.next_u64(),
                _ => rng.uniform(-100.0, 100.0).to_bits(),
            };
            Scalar::new(F64, bits)
        }
        I32 => Scalar::i32(match rng.below(10) {
            0 => 0,
            1 => 1,
            2 => -1,
            3 => i32::MIN,
            4 => i32::MAX,
            5 => 46_341, // squares past i32::MAX
            6 => rng.next_u64() as i32,
            _ => rng.below(2001) as i32 - 1000,
        }),
        U32 => Scalar::u32(match rng.below(9) {
            0 => 0,
            1 => 1,
            2 => u32::MAX,
            3 => 0x8000_0000,
            4 => 65_536,
            5 => rng.next_u64() as u32,
            _ => rng.below(1000) as u32,
        }),
        Bool => Scalar::bool(rng.below(2) == 1),
        F16 | BF16 => {
            let format = ty.half().expect("a 16-bit float");
            let (infinity, quiet, one) = match ty {
                F16 => (0x7c00u16, 0x0200u16, 0x3c00u16),
                _ => (0x7f80, 0x0040, 0x3f80),
            };
            let bits = match rng.below(16) {
                0 => infinity | quiet,
                1 => 0x8000 | infinity | quiet | 1,
                2 => infinity,
                3 => 0x8000 | infinity,
                4 => 0,
                5 => 0x8000,
                6 => 1,
                7 => 0x8000 | (quiet * 2 - 1),
                8 => infinity - 1,
                9 => one,
                10 => 0x8000 | one,
                11 => rng.next_u64() as u16,
                _ => format.round(rng.uniform(-100.0, 100.0) as f32),
            };
            Scalar::new(ty, bits as u64)
        }
    }
}

/// `x` (a node of type `from`) as type `to`: directly, or through f32 where Rust converts 16-bit
/// floats only to and from f32.
fn convert(g: &mut BodyGen, to: ScalarType, from: ScalarType, x: NodeId) -> NodeId {
    if rc_core::typing::cast(from, to).is_ok() {
        return g.push(Node::Cast(to, x), to);
    }
    let widened = if from == F32 { x } else { g.push(Node::Cast(F32, x), F32) };
    if to == F32 {
        widened
    } else {
        g.push(Node::Cast(to, widened), to)
    }
}

/// Builds a random body that type-checks by construction: every operand is made (or reused) with
/// the type its operation needs.
pub struct BodyGen<'a> {
    rng: &'a mut Rng,
    element: ScalarType,
    fields: u32,
    params: Vec<ScalarType>,
    taps: &'a Taps,
    nodes: Vec<Node>,
    types: Vec<ScalarType>,
    budget: usize,
}

impl BodyGen<'_> {
    fn push(&mut self, node: Node, ty: ScalarType) -> NodeId {
        self.nodes.push(node);
        self.types.push(ty);
        (self.nodes.len() - 1) as NodeId
    }

    /// A tap of the set: often one at its ends, the centre or next to the centre along x (where
    /// off-by-one errors live), else any. For a 1D line `-r..=r` these are the draws the 1D
    /// suite always made, so its cases are unchanged.
    fn tap_offset(&mut self) -> Offset {
        let taps = self.taps;
        let n = taps.len() as u64;
        match self.rng.below(6) {
            0 => taps.at(0),
            1 => taps.at(n as usize - 1),
            2 if taps.contains(taps.centre()) => taps.centre(),
            3 => {
                let dx = pick(self.rng, &[-1, 1]).clamp(-(taps.radius.along_x() as i32), taps.radius.along_x() as i32);
                let near = taps.centre_row(dx);
                if taps.contains(near) {
                    near
                } else {
                    taps.at(self.rng.below(n) as usize)
                }
            }
            _ => taps.at(self.rng.below(n) as usize),
        }
    }

    /// A tap node: an offset as [`BodyGen::tap_offset`] draws it, of a field drawn uniformly (no
    /// draw for a body of one field).
    fn tap(&mut self) -> Node {
        let d = self.tap_offset();
        Node::Tap(self.field(), d)
    }

    /// An input field, drawn uniformly (no draw for a body of one field).
    fn field(&mut self) -> u32 {
        match self.fields {
            1 => 0,
            n => self.rng.below(n as u64) as u32,
        }
    }

    /// An existing node of type `ty`, preferring recent ones (so the DAG shares values).
    fn existing(&mut self, ty: ScalarType) -> Option<NodeId> {
        let of_ty: Vec<NodeId> = (0..self.nodes.len() as NodeId).filter(|&i| self.types[i as usize] == ty).collect();
        if of_ty.is_empty() {
            return None;
        }
        let k = of_ty.len() as u64;
        // Biased towards the end: the max of two uniform draws.
        let i = self.rng.below(k).max(self.rng.below(k));
        Some(of_ty[i as usize])
    }

    fn leaf(&mut self, ty: ScalarType) -> NodeId {
        let params: Vec<u32> = (0..self.params.len() as u32).filter(|&p| self.params[p as usize] == ty).collect();
        loop {
            match self.rng.below(10) {
                0..=4 if ty == self.element => {
                    let tap = self.tap();
                    return self.push(tap, ty);
                }
                5 | 6 if !params.is_empty() => {
                    let p = pick(self.rng, &params);
                    return self.push(Node::Param(p), ty);
                }
                7 | 8 => {
                    let c = constant(self.rng, ty);
                    return self.push(Node::Const(c), ty);
                }
                9 if ty == Bool => {
                    let t = match self.element.half() {
                        Some(_) if chance(self.rng, 0.5) => self.element,
                        _ => pick(self.rng, &NUMBERS),
                    };
                    let (a, b) = (self.value(t, 0), self.value(t, 0));
                    let op = pick(self.rng, &COMPARES);
                    return self.push(Node::Compare(op, a, b), Bool);
                }
                9 if ty != self.element => {
                    // A tap converted: keeps the body depending on the data.
                    let tap = self.tap();
                    let tap = self.push(tap, self.element);
                    return convert(self, ty, self.element, tap);
                }
                _ if ty != self.element && params.is_empty() && ty != Bool && self.rng.below(4) == 0 => {
                    let c = constant(self.rng, ty);
                    return self.push(Node::Const(c), ty);
                }
                _ => {}
            }
        }
    }

    /// The right operand of integer `op` (`/`, `%`, `<<`, `>>`): a constant the body language
    /// admits (a divisor other than 0 and, on i32, -1; an amount below the width), often an
    /// awkward one.
    fn right_constant(&mut self, op: BinaryOp, ty: ScalarType) -> NodeId {
        let c = loop {
            let c = match op {
                BinaryOp::Shl | BinaryOp::Shr => Scalar::new(ty, self.rng.below(ty.bits() as u64)),
                _ => constant(self.rng, ty),
            };
            if right_operand(op, ty, c.integer()).is_ok() {
                break c;
            }
        };
        self.push(Node::Const(c), ty)
    }

    /// A value of type `ty`: reused, a leaf, or an operation of depth at most `depth`.
    fn value(&mut self, ty: ScalarType, depth: u32) -> NodeId {
        if self.nodes.len() >= self.budget || depth == 0 || chance(self.rng, 0.15) {
            if chance(self.rng, 0.4) {
                if let Some(id) = self.existing(ty) {
                    return id;
                }
            }
            return self.leaf(ty);
        }
        if chance(self.rng, 0.15) {
            if let Some(id) = self.existing(ty) {
                return id;
            }
        }
        let d = depth - 1;
        loop {
            let node = match (self.rng.below(9), ty) {
                (0, F32 | F64 | I32) => {
                    let op = pick(self.rng, &[UnaryOp::Neg, UnaryOp::Abs]);
                    Node::Unary(op, self.value(ty, d))
                }
                (0, Bool | U32) => Node::Unary(UnaryOp::Not, self.value(ty, d)),
                (1, F32 | F64) => {
                    let ops = [
                        UnaryOp::Sqrt,
                        UnaryOp::Floor,
                        UnaryOp::Ceil,
                        UnaryOp::Trunc,
                        UnaryOp::Round,
                        UnaryOp::RoundTiesEven,
                    ];
                    match ty == F32 && chance(self.rng, 0.15) {
                        true => Node::Unary(UnaryOp::Exp, self.value(ty, d)),
                        false => Node::Unary(pick(self.rng, &ops), self.value(ty, d)),
                    }
                }
                (1, I32) => Node::Unary(UnaryOp::Not, self.value(ty, d)),
                // The half crate's operators, min, max and conversions through f32 (it has no
                // abs, sqrt or mul_add).
                (0, F16 | BF16) => Node::Unary(UnaryOp::Neg, self.value(ty, d)),
                (2 | 3, F16 | BF16) => {
                    let op = pick(
                        self.rng,
                        &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Min, BinaryOp::Max],
                    );
                    Node::Binary(op, self.value(ty, d), self.value(ty, d))
                }
                (5, F16 | BF16) => Node::Cast(ty, self.value(F32, d)),
                (5, F32) if self.element.half().is_some() && chance(self.rng, 0.5) => {
                    Node::Cast(F32, self.value(self.element, d))
                }
                (2 | 3, F32 | F64) => {
                    let op = pick(
                        self.rng,
                        &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Min, BinaryOp::Max],
                    );
                    Node::Binary(op, self.value(ty, d), self.value(ty, d))
                }
                (2 | 3, I32 | U32) => {
                    let op =
                        pick(self.rng, &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Min, BinaryOp::Max]);
                    Node::Binary(op, self.value(ty, d), self.value(ty, d))
                }
                (2, Bool) => {
                    let op = pick(self.rng, &[BinaryOp::And, BinaryOp::Or]);
                    Node::Binary(op, self.value(Bool, d), self.value(Bool, d))
                }
                (3, Bool) => {
                    let t = match self.element.half() {
                        Some(_) if chance(self.rng, 0.5) => self.element,
                        _ => pick(self.rng, &[F32, F64, I32, U32, Bool]),
                    };
                    let op = if t == Bool {
                        pick(self.rng, &[CompareOp::Eq, CompareOp::Ne])
                    } else {
                        pick(self.rng, &COMPARES)
                    };
                    Node::Compare(op, self.value(t, d), self.value(t, d))
                }
                (4, _) => {
                    let cond = self.value(Bool, d);
                    Node::Select { cond, then: self.value(ty, d), otherwise: self.value(ty, d) }
                }
                (8, I32 | U32) => {
                    let ops = [
                        BinaryOp::Div,
                        BinaryOp::Rem,
                        BinaryOp::BitAnd,
                        BinaryOp::BitOr,
                        BinaryOp::BitXor,
                        BinaryOp::Shl,
                        BinaryOp::Shr,
                    ];
                    let op = pick(self.rng, &ops);
                    let a = self.value(ty, d);
                    let b = match op {
                        BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => self.right_constant(op, ty),
                        _ => self.value(ty, d),
                    };
                    Node::Binary(op, a, b)
                }
                (8, Bool) => {
                    let op = pick(self.rng, &[BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor]);
                    Node::Binary(op, self.value(Bool, d), self.value(Bool, d))
                }
                (5, F32 | F64 | I32 | U32) => {
                    let from = if ty.is_integer() && chance(self.rng, 0.15) { Bool } else { pick(self.rng, &NUMBERS) };
                    Node::Cast(ty, self.value(from, d))
                }
                (6, F32 | F64) if chance(self.rng, 0.2) => {
                    // The sign from a value loaded as it is (a tap, a parameter, a constant): the
                    // sign of a NaN computed by arithmetic is the platform's.
                    let sign = match (ty == self.element, (0..self.params.len()).find(|&p| self.params[p] == ty)) {
                        (true, _) => {
                            let tap = self.tap();
                            self.push(tap, ty)
                        }
                        (false, Some(p)) => self.push(Node::Param(p as u32), ty),
                        (false, None) => {
                            let c = constant(self.rng, ty);
                            self.push(Node::Const(c), ty)
                        }
                    };
                    Node::Binary(BinaryOp::CopySign, self.value(ty, d), sign)
                }
                (6, F32 | F64) => Node::MulAdd(self.value(ty, d), self.value(ty, d), self.value(ty, d)),
                (6, U32) => {
                    let ops = [UnaryOp::CountOnes, UnaryOp::LeadingZeros, UnaryOp::TrailingZeros, UnaryOp::ReverseBits];
                    Node::Unary(pick(self.rng, &ops), self.value(U32, d))
                }
                (6, I32) => {
                    let op = pick(self.rng, &[BinaryOp::RotateLeft, BinaryOp::RotateRight]);
                    Node::Binary(op, self.value(I32, d), self.value(I32, d))
                }
                (7, _) => {
                    // A reduction over many taps, as real stencils have: a sum, min or max chain.
                    if ty != self.element || ty == Bool {
                        continue;
                    }
                    let k = 1 + self.rng.below(self.taps.len() as u64);
                    let op = match ty {
                        F32 | F64 | F16 | BF16 => {
                            pick(self.rng, &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Min, BinaryOp::Max, BinaryOp::Mul])
                        }
                        _ => pick(self.rng, &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Min, BinaryOp::Max]),
                    };
                    let mut acc = self.value(ty, d.min(1));
                    for _ in 0..k {
                        let tap = self.tap();
                        let tap = self.push(tap, ty);
                        acc = if ty.is_float() && ty.half().is_none() && chance(self.rng, 0.2) {
                            let c = self.value(ty, 0);
                            self.push(Node::MulAdd(tap, c, acc), ty)
                        } else {
                            self.push(Node::Binary(op, acc, tap), ty)
                        };
                    }
                    return acc;
                }
                _ => continue,
            };
            return self.push(node, ty);
        }
    }
}

/// Parameter types: up to three scalars, and now and then an array `[T; n]`, which a body sees
/// as `n` consecutive scalars of type `T`.
pub fn random_params(rng: &mut Rng) -> Vec<ScalarType> {
    let mut types: Vec<ScalarType> = (0..rng.below(4)).map(|_| pick(rng, &NUMBERS)).collect();
    if chance(rng, 0.2) {
        let (ty, n) = (pick(rng, &NUMBERS), 1 + rng.below(9) as usize);
        let at = rng.below(types.len() as u64 + 1) as usize;
        types.splice(at..at, std::iter::repeat_n(ty, n));
    }
    types
}

pub const COMPARES: [CompareOp; 6] =
    [CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge, CompareOp::Eq, CompareOp::Ne];

/// A random body of `fields` input fields (at least one).
pub fn random_body(rng: &mut Rng, element: ScalarType, fields: u32, params: Vec<ScalarType>, taps: &Taps) -> Body {
    let budget = pick(rng, &[4, 12, 40, 120]);
    let mut g =
        BodyGen { rng, element, fields, params: params.clone(), taps, nodes: Vec::new(), types: Vec::new(), budget };
    // Sometimes dead code first: nodes nothing reads.
    if chance(g.rng, 0.2) {
        let t = pick(g.rng, &[F32, F64, I32, U32, Bool]);
        g.value(t, 2);
    }
    let depth = 1 + g.rng.below(6) as u32;
    let mut result = g.value(element, depth);
    // Often many taps, as real stencils have: the tap set (or a random run of it, in its order)
    // reduced into the result. The schedule (which lanes own which taps, which shuffles fetch
    // them, which input rows hold them) is the point.
    if chance(g.rng, 0.45) {
        let n = taps.len() as u64;
        let (lo, hi) = if chance(g.rng, 0.5) {
            (0, n as usize - 1)
        } else {
            let a = g.rng.below(n) as usize;
            let b = g.rng.below(n) as usize;
            (a.min(b), a.max(b))
        };
        let step = if chance(g.rng, 0.7) { 1 } else { 1 + g.rng.below(4) as usize };
        let op = pick(g.rng, &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Min, BinaryOp::Max, BinaryOp::Mul]);
        for i in (lo..=hi).step_by(step) {
            let field = g.field();
            let tap = g.push(Node::Tap(field, taps.at(i)), element);
            result = if element.is_float() && element.half().is_none() && chance(g.rng, 0.1) {
                let c = g.value(element, 1);
                g.push(Node::MulAdd(tap, c, result), element)
            } else {
                g.push(Node::Binary(op, result, tap), element)
            };
        }
    }
    // ...or after the result.
    if chance(g.rng, 0.1) {
        let t = pick(g.rng, &[F32, F64, I32, U32, Bool]);
        g.value(t, 2);
    }
    let nodes = g.nodes;
    Body::new(element, fields, params, taps.radius, nodes, vec![result])
        .expect("the generator builds well-typed bodies")
}

/// The body of case `seed`: one case in three a [`mirrored_body`], the others a
/// [`random_body`] (which of the two from a generator of its own, so the other cases stay what
/// they were).
pub fn case_body(
    seed: u64,
    rng: &mut Rng,
    element: ScalarType,
    fields: u32,
    params: Vec<ScalarType>,
    taps: &Taps,
) -> Body {
    match Rng::new(seed ^ 0x3141_5926_5358_0000).below(3) {
        0 => mirrored_body(rng, element, fields, params, taps),
        _ => random_body(rng, element, fields, params, taps),
    }
}

/// How many input fields a case's body reads: 1 to 3, drawn from its own generator seeded by
/// `seed`, so that the case's other draws stay what they were before bodies had several fields.
pub fn random_fields(seed: u64) -> u32 {
    1 + Rng::new(seed ^ 0xf1e1_d5f1_e1d5_0000).below(3) as u32
}

/// A body whose parts repeat one shape at many taps, as weighted stencils do (`0.02 * w[-4] +
/// ... + 0.02 * w[4]`), so a lane's outputs share them (rc-core's `terms.rs`): each tap `d` of
/// a run of the set contributes `term(d)`, one random shape around `w[d]` (an operation with a
/// weight, sometimes a second tap at a fixed distance, sometimes a sign or magnitude) whose
/// weight depends only on `|d|` in each dimension, so mirrored taps repeat it. The weight is a
/// constant written anew at each use (equal bits are one shape), or a parameter.
pub fn mirrored_body(rng: &mut Rng, element: ScalarType, fields: u32, params: Vec<ScalarType>, taps: &Taps) -> Body {
    let mut g =
        BodyGen { rng, element, fields, params: params.clone(), taps, nodes: Vec::new(), types: Vec::new(), budget: 0 };
    let ops = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Min, BinaryOp::Max];
    let (weigh, reduce, join) = (pick(g.rng, &ops), pick(g.rng, &ops), pick(g.rng, &ops));
    let weight_first = chance(g.rng, 0.5);
    let field = g.field();
    // A second tap at a fixed distance along x, where the set has it.
    let second = chance(g.rng, 0.3).then(|| pick(g.rng, &[-2, -1, 1, 2]));
    let unary = match element {
        I32 => pick(g.rng, &[None, None, Some(UnaryOp::Neg)]),
        U32 => None,
        _ => pick(g.rng, &[None, None, Some(UnaryOp::Neg), Some(UnaryOp::Abs)]),
    };
    let param = (0..params.len() as u32).find(|&p| params[p as usize] == element).filter(|_| chance(g.rng, 0.3));
    let (lo, hi) = match chance(g.rng, 0.7) {
        true => (0, taps.len() - 1),
        false => {
            let (a, b) = (g.rng.below(taps.len() as u64) as usize, g.rng.below(taps.len() as u64) as usize);
            (a.min(b), a.max(b))
        }
    };
    let mut weights: Vec<(Vec<i32>, Scalar)> = Vec::new();
    let mut result = None;
    for d in taps.all()[lo..=hi].iter().copied() {
        let size: Vec<i32> = d.components().iter().map(|c| c.abs()).collect();
        let weight = match param {
            Some(p) => g.push(Node::Param(p), element),
            None => {
                let c = match weights.iter().find(|(s, _)| *s == size) {
                    Some(&(_, c)) => c,
                    None => {
                        let c = constant(g.rng, element);
                        weights.push((size, c));
                        c
                    }
                };
                g.push(Node::Const(c), element)
            }
        };
        let tap = g.push(Node::Tap(field, d), element);
        let (a, b) = if weight_first { (weight, tap) } else { (tap, weight) };
        let mut term = g.push(Node::Binary(weigh, a, b), element);
        if let Some(dx) = second {
            let mut c = d.components();
            *c.last_mut().expect("1 to 3 dims") += dx;
            if let Some(e) = Offset::new(&c).filter(|&e| taps.contains(e)) {
                let other = g.push(Node::Tap(field, e), element);
                term = g.push(Node::Binary(join, term, other), element);
            }
        }
        if let Some(op) = unary {
            term = g.push(Node::Unary(op, term), element);
        }
        result = Some(match result {
            None => term,
            Some(sum) => g.push(Node::Binary(reduce, sum, term), element),
        });
    }
    let nodes = g.nodes;
    Body::new(element, fields, params, taps.radius, nodes, vec![result.expect("a run of at least one tap")])
        .expect("the generator builds well-typed bodies")
}
