//! The value types a stencil computes with, and typed constants that keep their exact bits.

use std::fmt;

use crate::half_float;

/// A type a stencil value can have. `Bool` only appears inside bodies (comparisons, `if`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    // Each type's discriminant is its row of the type table.
    F32 = 0,
    F64 = 1,
    I32 = 2,
    U32 = 3,
    Bool = 4,
    /// `half::f16` (IEEE binary16), computed in f32 and rounded once per operation.
    F16 = 5,
    /// `half::bf16` (bfloat16), computed in f32 and rounded once per operation.
    BF16 = 6,
}

/// Everything rc knows about one type, in one row: how Rust spells it, how it sits in memory
/// and registers, and how the PTX back end names and writes it. A new element type is a new row.
#[derive(Debug)]
pub struct TypeInfo {
    /// The Rust spelling, as a user writes it.
    pub rust_name: &'static str,
    /// Size in memory, in bytes.
    pub bytes: u32,
    /// 32-bit registers (and so warp shuffles) one value takes.
    pub words: u32,
    pub float: bool,
    /// The PTX type of its arithmetic and registers (`f32`, `s32`, `pred`).
    pub ptx: &'static str,
    /// The PTX type that moves and selects its registers' bits (`mov`, `selp`): PTX has no
    /// `mov.f16` or `selp.f16`.
    pub bits_ptx: &'static str,
    /// Bits of one of its registers: what a sign bit or a zeroing move is counted in.
    pub register_bits: u32,
    /// Whether its registers hold its values widened to f32 (bf16: PTX before sm_90 has no bf16
    /// arithmetic), each operation computing in f32 and rounding back.
    pub widened: bool,
    /// How memory and kernel parameters hold it.
    pub storage: Storage,
    /// The oldest GPU architecture (`sm_XX`) whose PTX converts it.
    pub sm: u32,
    /// The prefix of its virtual registers in PTX (`%f7`), and of its scratch registers.
    pub register: &'static str,
    pub scratch: &'static str,
    /// How PTX writes a constant's bits: `0f3F800000` (bit pattern), `-3` or `1`.
    pub immediate: Immediate,
}

/// How memory holds a type's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// As its registers do, in the PTX type of its arithmetic.
    Register,
    /// In 16 bits (PTX `.b16`): binary16 or bfloat16 (registers hold them in 16 bits or widened
    /// to f32, [`TypeInfo::widened`]).
    Half(HalfFormat),
}

/// A 16-bit float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfFormat {
    Binary16,
    BFloat16,
}

impl HalfFormat {
    /// The f32 holding value `bits` exactly.
    pub fn widen(self, bits: u16) -> f32 {
        match self {
            HalfFormat::Binary16 => half_float::f16_to_f32(bits),
            HalfFormat::BFloat16 => half_float::bf16_to_f32(bits),
        }
    }
    /// `x` rounded to the format, to the nearest, ties to even.
    pub fn round(self, x: f32) -> u16 {
        match self {
            HalfFormat::Binary16 => half_float::f32_to_f16(x),
            HalfFormat::BFloat16 => half_float::f32_to_bf16(x),
        }
    }
    /// Instructions that widen a value to f32 (`cvt.f32.f16`; a bfloat16 is the top half of its
    /// f32: `cvt.u32.u16` and `shl`), as the PTX back end prints them.
    pub fn widen_instructions(self) -> u32 {
        match self {
            HalfFormat::Binary16 => 1,
            HalfFormat::BFloat16 => 2,
        }
    }
    /// The PTX name of the format in `cvt` (`f16`, `bf16`).
    pub fn ptx(self) -> &'static str {
        match self {
            HalfFormat::Binary16 => "f16",
            HalfFormat::BFloat16 => "bf16",
        }
    }
}

/// How PTX writes a constant of a type, bit-exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Immediate {
    /// `0f` and 8 hex digits.
    F32Bits,
    /// `0d` and 16 hex digits.
    F64Bits,
    Signed32,
    Unsigned32,
    Bit,
    /// The f32 bits of the 16-bit value, widened: `0f` and 8 hex digits.
    Widened(HalfFormat),
    /// The 16 bits: `0x` and 4 hex digits.
    Bits16,
}

use Storage::Register;
const HALF: Storage = Storage::Half(HalfFormat::Binary16);
const BFLOAT: Storage = Storage::Half(HalfFormat::BFloat16);

const TYPES: [TypeInfo; 7] = [
    TypeInfo {
        rust_name: "f32",
        bytes: 4,
        words: 1,
        float: true,
        ptx: "f32",
        bits_ptx: "f32",
        register_bits: 32,
        widened: false,
        storage: Register,
        sm: 70,
        register: "%f",
        scratch: "%sf",
        immediate: Immediate::F32Bits,
    },
    TypeInfo {
        rust_name: "f64",
        bytes: 8,
        words: 2,
        float: true,
        ptx: "f64",
        bits_ptx: "f64",
        register_bits: 64,
        widened: false,
        storage: Register,
        sm: 70,
        register: "%fd",
        scratch: "%sd",
        immediate: Immediate::F64Bits,
    },
    TypeInfo {
        rust_name: "i32",
        bytes: 4,
        words: 1,
        float: false,
        ptx: "s32",
        bits_ptx: "s32",
        register_bits: 32,
        widened: false,
        storage: Register,
        sm: 70,
        register: "%r",
        scratch: "%sr",
        immediate: Immediate::Signed32,
    },
    TypeInfo {
        rust_name: "u32",
        bytes: 4,
        words: 1,
        float: false,
        ptx: "u32",
        bits_ptx: "u32",
        register_bits: 32,
        widened: false,
        storage: Register,
        sm: 70,
        register: "%r",
        scratch: "%sr",
        immediate: Immediate::Unsigned32,
    },
    TypeInfo {
        rust_name: "bool",
        bytes: 1,
        words: 1,
        float: false,
        ptx: "pred",
        bits_ptx: "pred",
        register_bits: 32,
        widened: false,
        storage: Register,
        sm: 70,
        register: "%p",
        scratch: "%sr",
        immediate: Immediate::Bit,
    },
    // f16 computes in f16 registers with PTX's f16 instructions (sm_53 on), IEEE binary16 as
    // the half crate's f32-and-round; two values to a 32-bit shuffle
    // where two fetches share a rotation (`pairs.rs`), else one.
    TypeInfo {
        rust_name: "f16",
        bytes: 2,
        words: 1,
        float: true,
        ptx: "f16",
        bits_ptx: "b16",
        register_bits: 16,
        widened: false,
        storage: HALF,
        sm: 70,
        register: "%hf",
        scratch: "%sh",
        immediate: Immediate::Bits16,
    },
    // Registers hold bf16 values widened to f32: f32 registers, and `%f` names (register numbers
    // are the program's, so they never meet an f32 register's). `cvt.rn.bf16.f32` needs sm_80.
    TypeInfo {
        rust_name: "bf16",
        bytes: 2,
        words: 1,
        float: true,
        ptx: "f32",
        bits_ptx: "f32",
        register_bits: 32,
        widened: true,
        storage: BFLOAT,
        sm: 80,
        register: "%f",
        scratch: "%sf",
        immediate: Immediate::Widened(HalfFormat::BFloat16),
    },
];

impl ScalarType {
    /// This type's row of the type table.
    pub const fn info(self) -> &'static TypeInfo {
        &TYPES[self as usize]
    }

    pub const fn rust_name(self) -> &'static str {
        self.info().rust_name
    }

    pub const fn bytes(self) -> u32 {
        self.info().bytes
    }

    pub const fn words(self) -> u32 {
        self.info().words
    }

    pub const fn is_float(self) -> bool {
        self.info().float
    }

    /// Its 16-bit float format, for `f16` and `bf16`.
    pub const fn half(self) -> Option<HalfFormat> {
        match self.info().storage {
            Storage::Half(format) => Some(format),
            Storage::Register => None,
        }
    }

    /// The PTX type memory and kernel parameters hold it in (`f32`, `b16`).
    pub const fn memory_ptx(self) -> &'static str {
        match self.info().storage {
            Storage::Half(_) => "b16",
            Storage::Register => self.info().ptx,
        }
    }

    /// Bits of one register holding it: what a sign bit or a zeroing move is counted in.
    pub const fn register_bits(self) -> u32 {
        self.info().register_bits
    }

    /// Its 16-bit float format if its registers hold its values widened to f32 (bf16).
    pub const fn widened(self) -> Option<HalfFormat> {
        match self.info().widened {
            true => self.half(),
            false => None,
        }
    }

    pub const fn is_integer(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::U32)
    }

    /// A signed integer type: one whose `MIN / -1` overflows.
    pub const fn is_signed_integer(self) -> bool {
        matches!(self, ScalarType::I32)
    }

    /// Width in bits: what a shift amount must stay below.
    pub const fn bits(self) -> u32 {
        self.bytes() * 8
    }

    /// The type named `name` in Rust source, if a stencil may use it for elements and parameters.
    pub fn from_rust_name(name: &str) -> Option<ScalarType> {
        ScalarType::ELEMENTS.into_iter().find(|ty| ty.rust_name() == name)
    }

    /// The types a stencil may use for elements and parameters.
    pub const ELEMENTS: [ScalarType; 6] =
        [ScalarType::F32, ScalarType::F64, ScalarType::I32, ScalarType::U32, ScalarType::F16, ScalarType::BF16];
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

    /// The value of an integer constant (`i32` sign-extended), or `None` for other types.
    pub fn integer(self) -> Option<i64> {
        match self.ty {
            ScalarType::I32 => Some(self.bits as u32 as i32 as i64),
            ScalarType::U32 => Some(self.bits as u32 as i64),
            _ => None,
        }
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
            ScalarType::F16 | ScalarType::BF16 => {
                let widened = self.ty.half().map_or(0.0, |h| h.widen(self.bits as u16));
                write!(f, "{}::from_f32({widened:?})", self.ty)
            }
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    #[cfg(feature = "half")]
    impl Sealed for half::f16 {}
    #[cfg(feature = "half")]
    impl Sealed for half::bf16 {}
}

/// A Rust type that can be a stencil's element or parameter: `f32`, `f64`, `i32`, `u32`, and with
/// rc's `half` feature `half::f16` and `half::bf16`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element type of rc",
    note = "rc's element types are f32, f64, i32, u32, and half::f16 and half::bf16 with rc's `half` feature"
)]
pub trait Element: Copy + Default + Send + Sync + PartialEq + fmt::Debug + sealed::Sealed + 'static {
    const TYPE: ScalarType;
    fn to_scalar(self) -> Scalar;
    fn from_bits(bits: u64) -> Self;
    /// A `'static` zero, for window taps that fall outside the input under `boundary = zero`.
    fn zero_ref() -> &'static Self;
    /// Equal bits, or both NaN (GPUs and CPUs produce different NaN payloads; nothing a stencil
    /// body can do turns two NaNs with different payloads into different non-NaN values).
    fn same_value(self, other: Self) -> bool;
    /// The fields as slices of this concrete type, so that code over them (the emulator) is
    /// compiled once, optimized, in rc-core rather than again in each crate that names `Self`.
    #[doc(hidden)]
    fn fields<'a>(fields: &'a [&'a [Self]]) -> Fields<'a>;
}

/// Input fields of one element type, by type: what the emulator reads, element by element, as
/// bits.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Fields<'a> {
    F32(&'a [&'a [f32]]),
    F64(&'a [&'a [f64]]),
    I32(&'a [&'a [i32]]),
    U32(&'a [&'a [u32]]),
    #[cfg(feature = "half")]
    F16(&'a [&'a [half::f16]]),
    #[cfg(feature = "half")]
    BF16(&'a [&'a [half::bf16]]),
}

/// `$f` applied to the fields' slices, whatever their type.
macro_rules! each_type {
    ($fields:expr, |$slices:ident| $f:expr) => {
        match $fields {
            Fields::F32($slices) => $f,
            Fields::F64($slices) => $f,
            Fields::I32($slices) => $f,
            Fields::U32($slices) => $f,
            #[cfg(feature = "half")]
            Fields::F16($slices) => $f,
            #[cfg(feature = "half")]
            Fields::BF16($slices) => $f,
        }
    };
}

impl Fields<'_> {
    /// Field `field`'s length in elements.
    pub fn len(&self, field: usize) -> usize {
        each_type!(self, |slices| slices[field].len())
    }

    /// The bits of element `i` of field `field`.
    pub fn bits(&self, field: usize, i: usize) -> u64 {
        each_type!(self, |slices| slices[field][i].to_scalar().bits)
    }

    /// The bits of elements `start..start + width` of field `field`, appended to `out`.
    pub fn extend_bits(&self, field: usize, start: usize, width: usize, out: &mut Vec<u64>) {
        each_type!(self, |slices| out.extend(slices[field][start..][..width].iter().map(|v| v.to_scalar().bits)))
    }
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
            fn fields<'a>(fields: &'a [&'a [Self]]) -> Fields<'a> {
                Fields::$variant(fields)
            }
        }
    };
}

element!(f32, F32, 0.0f32, |v| v.to_bits() as u64, |b| f32::from_bits(b as u32), |x, y| x.to_bits() == y.to_bits()
    || (x.is_nan() && y.is_nan()));
element!(f64, F64, 0.0f64, |v| v.to_bits(), |b| f64::from_bits(b), |x, y| x.to_bits() == y.to_bits()
    || (x.is_nan() && y.is_nan()));
element!(i32, I32, 0i32, |v| v as u32 as u64, |b| b as u32 as i32, |x, y| x == y);
element!(u32, U32, 0u32, |v| v as u64, |b| b as u32, |x, y| x == y);
#[cfg(feature = "half")]
element!(half::f16, F16, half::f16::ZERO, |v| v.to_bits() as u64, |b| half::f16::from_bits(b as u16), |x, y| x
    .to_bits()
    == y.to_bits()
    || (x.is_nan() && y.is_nan()));
#[cfg(feature = "half")]
element!(half::bf16, BF16, half::bf16::ZERO, |v| v.to_bits() as u64, |b| half::bf16::from_bits(b as u16), |x, y| x
    .to_bits()
    == y.to_bits()
    || (x.is_nan() && y.is_nan()));

/// One extra parameter of a stencil: a scalar, or an array `[T; N]` of them. The kernel takes an
/// array as `N` consecutive scalar parameters (see [`crate::abi::KernelParam`]), so a body sees
/// every parameter as scalars, in order.
pub trait Param: Copy + Send + Sync + 'static {
    /// Appends the types of the scalars it passes.
    fn push_types(types: &mut Vec<ScalarType>);
    /// Appends the scalars it passes.
    fn push_scalars(&self, scalars: &mut Vec<Scalar>);
}

macro_rules! scalar_param {
    ($($t:ty),+) => {$(
        impl Param for $t {
            fn push_types(types: &mut Vec<ScalarType>) {
                types.push(<$t as Element>::TYPE);
            }
            fn push_scalars(&self, scalars: &mut Vec<Scalar>) {
                scalars.push(self.to_scalar());
            }
        }
    )+};
}

scalar_param!(f32, f64, i32, u32);
#[cfg(feature = "half")]
scalar_param!(half::f16, half::bf16);

impl<T: Element, const N: usize> Param for [T; N] {
    fn push_types(types: &mut Vec<ScalarType>) {
        types.extend(std::iter::repeat_n(T::TYPE, N));
    }
    fn push_scalars(&self, scalars: &mut Vec<Scalar>) {
        scalars.extend(self.iter().map(|v| v.to_scalar()));
    }
}

/// The extra parameters of a stencil, as a tuple: `()`, `(f32,)`, `(f32, [f32; 5])`, ...
pub trait Params: Copy + Send + Sync + 'static {
    /// The types of the scalars the kernel takes, arrays flattened, in order.
    fn types() -> Vec<ScalarType>;
    /// The scalars the kernel takes, arrays flattened, in order.
    fn scalars(&self) -> Vec<Scalar>;
}

impl Params for () {
    fn types() -> Vec<ScalarType> {
        Vec::new()
    }
    fn scalars(&self) -> Vec<Scalar> {
        Vec::new()
    }
}

macro_rules! params_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: Param),+> Params for ($($name,)+) {
            fn types() -> Vec<ScalarType> {
                let mut types = Vec::new();
                $($name::push_types(&mut types);)+
                types
            }
            fn scalars(&self) -> Vec<Scalar> {
                let mut scalars = Vec::new();
                $(self.$idx.push_scalars(&mut scalars);)+
                scalars
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_pass_their_elements_in_order_between_the_scalars_around_them() {
        let params = (0.5f32, [1i32, -2, 3], 7u32);
        let scalars = params.scalars();
        assert_eq!(scalars, [Scalar::f32(0.5), Scalar::i32(1), Scalar::i32(-2), Scalar::i32(3), Scalar::u32(7)]);
        let types: Vec<ScalarType> = scalars.iter().map(|s| s.ty).collect();
        assert_eq!(<(f32, [i32; 3], u32)>::types(), types);
        assert_eq!(<([f64; 0],)>::types(), []);
    }
}
