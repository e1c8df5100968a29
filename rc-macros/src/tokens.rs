//! Rust tokens that rebuild a body at run time, for the emulator and `explain()`. The PTX is
//! printed from the same body at compile time; a test checks both paths print the same PTX.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use rc_core::body::{Body, CompareOp, Node};
use rc_core::geometry::Coords;
use rc_core::pattern::Part;
use rc_core::{Boundary, Layout, Pattern, Scalar, ScalarType, Strategy};

use crate::signature::ParamType;

pub fn scalar_type(ty: ScalarType) -> TokenStream {
    let variant = match ty {
        ScalarType::F32 => quote!(F32),
        ScalarType::F64 => quote!(F64),
        ScalarType::I32 => quote!(I32),
        ScalarType::U32 => quote!(U32),
        ScalarType::Bool => quote!(Bool),
        ScalarType::F16 => quote!(F16),
        ScalarType::BF16 => quote!(BF16),
    };
    quote!(::rc::__private::ScalarType::#variant)
}

pub fn rust_type(ty: ScalarType) -> TokenStream {
    match ty {
        ScalarType::F32 => quote!(f32),
        ScalarType::F64 => quote!(f64),
        ScalarType::I32 => quote!(i32),
        ScalarType::U32 => quote!(u32),
        ScalarType::Bool => quote!(bool),
        // The half crate's, which the user's crate depends on to write them.
        ScalarType::F16 => quote!(::half::f16),
        ScalarType::BF16 => quote!(::half::bf16),
    }
}

/// An extra parameter's type as the user wrote it: `f32`, `[f32; 5]`.
pub fn param_type(ty: ParamType) -> TokenStream {
    match ty {
        ParamType::Scalar(t) => rust_type(t),
        ParamType::Array(t, n) => {
            let (t, n) = (rust_type(t), proc_macro2::Literal::usize_unsuffixed(n));
            quote!([#t; #n])
        }
    }
}

/// A constant expression that rebuilds `pattern`: `Pattern::from_parts(PatternParts { .. })`
/// with every part rc-core names ([`rc_core::pattern::PatternParts::named`]).
pub fn pattern(pattern: Pattern) -> TokenStream {
    let parts = pattern.parts().named().into_iter().map(|(name, part)| {
        let name = Ident::new(name, Span::call_site());
        let value = match part {
            Part::U32(v) => quote!(#v),
            Part::OptionU32(Some(v)) => quote!(::core::option::Option::Some(#v)),
            Part::OptionU32(None) => quote!(::core::option::Option::None),
            Part::Bool(b) => quote!(#b),
            Part::Radius(r) => radius(r),
            Part::Boundary(b) => boundary(b),
        };
        quote!(#name: #value)
    });
    quote!(::rc::__private::Pattern::from_parts(::rc::__private::PatternParts { #(#parts),* }))
}

pub fn boundary(b: Boundary) -> TokenStream {
    match b {
        Boundary::Valid => quote!(::rc::__private::Boundary::Valid),
        Boundary::Zero => quote!(::rc::__private::Boundary::Zero),
        Boundary::Clamp => quote!(::rc::__private::Boundary::Clamp),
        Boundary::Wrap => quote!(::rc::__private::Boundary::Wrap),
    }
}

pub fn strategy(s: Strategy) -> TokenStream {
    match s {
        Strategy::RegisterCache => quote!(::rc::__private::Strategy::RegisterCache),
        Strategy::SharedMemory => quote!(::rc::__private::Strategy::SharedMemory),
        Strategy::Naive => quote!(::rc::__private::Strategy::Naive),
    }
}

pub fn layout(l: Layout) -> TokenStream {
    match l {
        Layout::RoundRobin => quote!(::rc::__private::Layout::RoundRobin),
        Layout::Granule(v) => quote!(::rc::__private::Layout::Granule(#v)),
        Layout::Window(v) => quote!(::rc::__private::Layout::Window(#v)),
        Layout::Staged(v) => quote!(::rc::__private::Layout::Staged(#v)),
        Layout::Planes(v) => quote!(::rc::__private::Layout::Planes(#v)),
    }
}

fn scalar(s: Scalar) -> TokenStream {
    let ty = scalar_type(s.ty);
    let bits = s.bits;
    quote!(::rc::__private::Scalar::new(#ty, #bits))
}

fn node(n: &Node) -> TokenStream {
    let p = quote!(::rc::__private);
    match *n {
        Node::Tap(field, d) => {
            let offset = coords(quote!(#p::Offset), d);
            quote!(#p::Node::Tap(#field, #offset))
        }
        Node::Param(i) => quote!(#p::Node::Param(#i)),
        Node::Const(s) => {
            let s = scalar(s);
            quote!(#p::Node::Const(#s))
        }
        Node::Unary(op, a) => {
            // The variant's own name (its Debug form).
            let op = quote::format_ident!("{op:?}");
            quote!(#p::Node::Unary(#p::UnaryOp::#op, #a))
        }
        Node::Binary(op, a, b) => {
            let op = quote::format_ident!("{op:?}");
            quote!(#p::Node::Binary(#p::BinaryOp::#op, #a, #b))
        }
        Node::Compare(op, a, b) => {
            let op = match op {
                CompareOp::Lt => quote!(Lt),
                CompareOp::Le => quote!(Le),
                CompareOp::Gt => quote!(Gt),
                CompareOp::Ge => quote!(Ge),
                CompareOp::Eq => quote!(Eq),
                CompareOp::Ne => quote!(Ne),
            };
            quote!(#p::Node::Compare(#p::CompareOp::#op, #a, #b))
        }
        Node::Select { cond, then, otherwise } => {
            quote!(#p::Node::Select { cond: #cond, then: #then, otherwise: #otherwise })
        }
        Node::Cast(ty, a) => {
            let ty = scalar_type(ty);
            quote!(#p::Node::Cast(#ty, #a))
        }
        Node::MulAdd(a, b, c) => quote!(#p::Node::MulAdd(#a, #b, #c)),
    }
}

/// An expression of type `Result<Body, BodyError>` that rebuilds `body`.
pub fn body(body: &Body) -> TokenStream {
    let element = scalar_type(body.element());
    let fields = body.fields();
    let params = body.params().iter().map(|&t| scalar_type(t));
    let radius = radius(body.radius());
    let nodes = body.nodes().iter().map(node);
    let results = body.results();
    quote! {
        ::rc::__private::Body::new(#element, #fields, ::std::vec![#(#params),*], #radius, ::std::vec![#(#nodes),*], ::std::vec![#(#results),*])
    }
}

/// `::rc::__private::Radius::x(r)`, `::yx(ry, rx)` or `::zyx(rz, ry, rx)`: a constant expression.
pub fn radius(r: rc_core::Radius) -> TokenStream {
    coords(quote!(::rc::__private::Radius), r)
}

/// `Type::x(..)`, `Type::yx(..)` or `Type::zyx(..)` with `c`'s components, outermost first.
fn coords<T: Copy + quote::ToTokens>(ty: TokenStream, c: Coords<T>) -> TokenStream {
    let components = c.components();
    let constructor = match components.len() {
        1 => quote!(x),
        2 => quote!(yx),
        _ => quote!(zyx),
    };
    quote!(#ty::#constructor(#(#components),*))
}
