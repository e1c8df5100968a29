//! The Rust types a body may write in `let`, `const` and `as`: the scalar types, `bool`, and index
//! types that only constants may have. Apart because statements and casts both read them.

use syn::Type;

use rc_core::ScalarType;

use crate::signature::scalar;

/// A type a `let` or `const` may declare: the scalar types and `bool`.
pub(super) fn scalar_or_bool(ty: &Type) -> Option<ScalarType> {
    match strip_type(ty) {
        Type::Path(tp) if tp.path.is_ident("bool") => Some(ScalarType::Bool),
        t => scalar(t),
    }
}

pub(super) fn is_index_type(ty: &Type) -> bool {
    match ty {
        Type::Path(tp) => tp.path.get_ident().is_some_and(|i| {
            ["usize", "isize", "i64", "u64", "i16", "u16", "i8", "u8"].contains(&i.to_string().as_str())
        }),
        _ => false,
    }
}

pub(super) fn strip_type(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip_type(&g.elem),
        Type::Paren(p) => strip_type(&p.elem),
        other => other,
    }
}
