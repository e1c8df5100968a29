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
