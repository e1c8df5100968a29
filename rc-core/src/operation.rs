//! The operations a body's nodes apply, with the names the source writes them by: read by the
//! body, by the type rules' errors ([`crate::typing`]) and by what computes them ([`crate::ops`]),
//! none of which it reads.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (flips the sign bit of floats, wrapping for integers).
    Neg,
    /// `x.abs()` (clears the sign bit of floats, wrapping for `i32::MIN`).
    Abs,
    /// `x.sqrt()`, correctly rounded.
    Sqrt,
    /// `!x`: logical for `bool`, bitwise for integers.
    Not,
    /// `x.floor()`: the largest integer not above `x` (exact).
    Floor,
    /// `x.ceil()`: the smallest integer not below `x` (exact).
    Ceil,
    /// `x.trunc()`: the integer part, toward zero (exact).
    Trunc,
    /// `x.round()`: the nearest integer, halves away from zero (exact).
    Round,
    /// `x.round_ties_even()`: the nearest integer, halves to the even one (exact).
    RoundTiesEven,
    /// `x.count_ones()` on a u32 (the macro reinterprets an i32 as u32 first, as Rust counts its
    /// bits): a u32.
    CountOnes,
    /// `x.leading_zeros()` on a u32: 32 for 0.
    LeadingZeros,
    /// `x.trailing_zeros()` on a u32: 32 for 0.
    TrailingZeros,
    /// `x.reverse_bits()` on a u32.
    ReverseBits,
    /// `x.exp()` on f32, correctly rounded ([`crate::math`]): one answer, on the CPU and the GPU.
    Exp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// `a / b`: IEEE division for floats; for integers Rust's, truncating toward zero, by a
    /// constant divisor only (see [`crate::typing::right_operand`]): Rust panics on a zero
    /// divisor and on `i32::MIN / -1`, which a kernel cannot.
    Div,
    /// `a % b` on integers: Rust's remainder, with the dividend's sign, by a constant divisor only
    /// (as `Div`).
    Rem,
    /// `a.min(b)`: IEEE minNum for floats (a NaN operand yields the other operand); of two
    /// zeros, the first.
    Min,
    /// `a.max(b)`: IEEE maxNum for floats; of two zeros, the first.
    Max,
    /// `a && b` (both sides are pure, so evaluating both is the same as short-circuiting).
    And,
    /// `a || b`.
    Or,
    /// `a & b`: bitwise for integers, logical (both sides evaluated) for `bool`.
    BitAnd,
    /// `a | b`.
    BitOr,
    /// `a ^ b`.
    BitXor,
    /// `a << b` on integers, by a constant amount below the width (Rust panics on larger ones).
    Shl,
    /// `a >> b` on integers, by a constant amount below the width: arithmetic (sign-filling) for
    /// `i32`, logical for `u32`.
    Shr,
    /// `a.copysign(b)` on floats: `a`'s magnitude with `b`'s sign bit. A NaN computed by
    /// arithmetic has no sign Rust specifies (an x86 CPU makes it negative, a GPU positive), so
    /// neither has its copy.
    CopySign,
    /// `a.rotate_left(b)` on integers: by `b` modulo the width (the macro converts Rust's u32
    /// amount to `a`'s type, the same bits).
    RotateLeft,
    /// `a.rotate_right(b)`.
    RotateRight,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

pub(crate) fn unary_name(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "-",
        UnaryOp::Abs => "abs",
        UnaryOp::Sqrt => "sqrt",
        UnaryOp::Not => "!",
        UnaryOp::Floor => "floor",
        UnaryOp::Ceil => "ceil",
        UnaryOp::Trunc => "trunc",
        UnaryOp::Round => "round",
        UnaryOp::RoundTiesEven => "round_ties_even",
        UnaryOp::CountOnes => "count_ones",
        UnaryOp::LeadingZeros => "leading_zeros",
        UnaryOp::TrailingZeros => "trailing_zeros",
        UnaryOp::ReverseBits => "reverse_bits",
        UnaryOp::Exp => "exp",
    }
}

pub(crate) fn binary_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        BinaryOp::Min => "min",
        BinaryOp::Max => "max",
        BinaryOp::And => "&&",
        BinaryOp::Or => "||",
        BinaryOp::BitAnd => "&",
        BinaryOp::BitOr => "|",
        BinaryOp::BitXor => "^",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::CopySign => "copysign",
        BinaryOp::RotateLeft => "rotate_left",
        BinaryOp::RotateRight => "rotate_right",
    }
}

pub(crate) fn compare_name(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Lt => "<",
        CompareOp::Le => "<=",
        CompareOp::Gt => ">",
        CompareOp::Ge => ">=",
        CompareOp::Eq => "==",
        CompareOp::Ne => "!=",
    }
}
