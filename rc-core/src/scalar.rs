//! The value types a stencil computes with, and typed constants that keep their exact bits.

use std::fmt;

/// A type a stencil value can have. `Bool` only appears inside bodies (comparisons, `if`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    F32,
    F64,
    I32,
    U32,
    Bool,
}

impl ScalarType {
    /// The Rust spelling, as a user writes it.
    pub const fn rust_name(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::Bool => "bool",
        }
    }

    /// Size in memory, in bytes.
    pub const fn bytes(self) -> u32 {
        match self {
            ScalarType::F64 => 8,
            ScalarType::Bool => 1,
            _ => 4,
        }
    }

    /// How many 32-bit registers (and so warp shuffles) one value takes.
    pub const fn words(self) -> u32 {
        match self {
            ScalarType::F64 => 2,
            _ => 1,
        }
    }

    pub const fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    pub const fn is_integer(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::U32)
    }

    /// The type named `name` in Rust source, if a stencil may use it for elements and parameters.
    pub fn from_rust_name(name: &str) -> Option<ScalarType> {
        match name {
            "f32" => Some(ScalarType::F32),
            "f64" => Some(ScalarType::F64),
            "i32" => Some(ScalarType::I32),
            "u32" => Some(ScalarType::U32),
            _ => None,
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// A typed constant. Stored as bits so that `-0.0` and NaN payloads survive every round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scalar {
    pub ty: ScalarType,
    pub bits: u64,
}

impl Scalar {
    pub const fn new(ty: ScalarType, bits: u64) -> Scalar {
        Scalar { ty, bits }
    }
    pub fn f32(v: f32) -> Scalar {
        Scalar::new(ScalarType::F32, v.to_bits() as u64)
    }
    pub fn f64(v: f64) -> Scalar {
        Scalar::new(ScalarType::F64, v.to_bits())
    }
    pub fn i32(v: i32) -> Scalar {
        Scalar::new(ScalarType::I32, v as u32 as u64)
    }
    pub fn u32(v: u32) -> Scalar {
        Scalar::new(ScalarType::U32, v as u64)
    }
    pub fn bool(v: bool) -> Scalar {
        Scalar::new(ScalarType::Bool, v as u64)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ty {
            ScalarType::F32 => write!(f, "{:?}f32", f32::from_bits(self.bits as u32)),
            ScalarType::F64 => write!(f, "{:?}f64", f64::from_bits(self.bits)),
            ScalarType::I32 => write!(f, "{}i32", self.bits as u32 as i32),
            ScalarType::U32 => write!(f, "{}u32", self.bits as u32),
            ScalarType::Bool => write!(f, "{}", self.bits != 0),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

/// A Rust type that can be a stencil's element or parameter: `f32`, `f64`, `i32`, `u32`.
pub trait Element: Copy + Default + Send + Sync + PartialEq + fmt::Debug + sealed::Sealed + 'static {
    const TYPE: ScalarType;
    fn to_scalar(self) -> Scalar;
    fn from_bits(bits: u64) -> Self;
    /// A `'static` zero, for window taps that fall outside the input under `boundary = zero`.
    fn zero_ref() -> &'static Self;
    /// Equal bits, or both NaN (GPUs and CPUs produce different NaN payloads; nothing a stencil
    /// body can do turns two NaNs with different payloads into different non-NaN values).
    fn same_value(self, other: Self) -> bool;
}

macro_rules! element {
    ($t:ty, $variant:ident, $zero:expr, |$v:ident| $to_bits:expr, |$b:ident| $from_bits:expr, |$x:ident, $y:ident| $same:expr) => {
        impl Element for $t {
            const TYPE: ScalarType = ScalarType::$variant;
            fn to_scalar(self) -> Scalar {
                let $v = self;
                Scalar::new(ScalarType::$variant, $to_bits)
            }
            fn from_bits($b: u64) -> Self {
                $from_bits
            }
            fn zero_ref() -> &'static Self {
                &$zero
            }
            fn same_value(self, other: Self) -> bool {
                let ($x, $y) = (self, other);
                $same
            }
        }
    };
}

element!(f32, F32, 0.0f32, |v| v.to_bits() as u64, |b| f32::from_bits(b as u32),
    |x, y| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
element!(f64, F64, 0.0f64, |v| v.to_bits(), |b| f64::from_bits(b),
    |x, y| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
element!(i32, I32, 0i32, |v| v as u32 as u64, |b| b as u32 as i32, |x, y| x == y);
element!(u32, U32, 0u32, |v| v as u64, |b| b as u32, |x, y| x == y);

/// The extra scalar parameters of a stencil, as a tuple: `()`, `(f32,)`, `(f32, i32)`, ...
pub trait Params: Copy + Send + Sync + 'static {
    const TYPES: &'static [ScalarType];
    fn scalars(&self) -> Vec<Scalar>;
}

impl Params for () {
    const TYPES: &'static [ScalarType] = &[];
    fn scalars(&self) -> Vec<Scalar> {
        Vec::new()
    }
}

macro_rules! params_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: Element),+> Params for ($($name,)+) {
            const TYPES: &'static [ScalarType] = &[$($name::TYPE),+];
            fn scalars(&self) -> Vec<Scalar> {
                vec![$(self.$idx.to_scalar()),+]
            }
        }
    };
}

params_tuple!(A 0);
params_tuple!(A 0, B 1);
params_tuple!(A 0, B 1, C 2);
params_tuple!(A 0, B 1, C 2, D 3);
params_tuple!(A 0, B 1, C 2, D 3, E 4);
params_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
params_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
params_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
