//! The function's signature: `fn name(w: Window<T>, extra: U, ...) -> T`, not generic. The
//! window's kind (`Window`, `Window2`, `Window3`) fixes the stencil's dimensions.

use syn::{Expr, FnArg, GenericArgument, Ident, ItemFn, Lit, Pat, PathArguments, ReturnType, Type};

use rc_core::abi::KernelParam;
use rc_core::geometry::Dims;
use rc_core::ScalarType;

use crate::args::strip_group;
use crate::ctxt::Ctxt;

/// An extra parameter. `ty` is `None` when the type was rejected: the body still sees the name
/// (as a poisoned value), so the one mistake is reported once.
pub struct Param {
    pub name: Ident,
    pub ty: Option<ParamType>,
}

/// What an extra parameter holds: a scalar, or an array `[T; N]`, passed at launch as `N`
/// consecutive scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Scalar(ScalarType),
    Array(ScalarType, usize),
}

impl ParamType {
    /// The scalars the kernel takes for it, in order.
    pub fn scalars(self) -> impl Iterator<Item = ScalarType> {
        let (ty, n) = match self {
            ParamType::Scalar(ty) => (ty, 1),
            ParamType::Array(ty, n) => (ty, n),
        };
        std::iter::repeat_n(ty, n)
    }
}

pub struct Signature {
    pub window: Ident,
    pub dims: Dims,
    pub element: ScalarType,
    pub params: Vec<Param>,
}

const SUPPORTED: &str = "f32, f64, i32 or u32";

pub fn check(f: &ItemFn, cx: &mut Ctxt) -> Option<Signature> {
    let sig = &f.sig;
    if !sig.generics.params.is_empty() {
        cx.error(&sig.generics, "a stencil cannot be generic: its kernel is compiled for one element type; write one stencil per type");
    }
    if let Some(w) = &sig.generics.where_clause {
        cx.error(w, "a stencil cannot have a where clause");
    }
    if let Some(t) = &sig.constness {
        cx.error(t, "a stencil cannot be a `const fn`");
    }
    if let Some(t) = &sig.asyncness {
        cx.error(t, "a stencil cannot be `async`");
    }
    if let Some(t) = &sig.unsafety {
        cx.error(t, "a stencil cannot be `unsafe`");
    }
    if let Some(t) = &sig.abi {
        cx.error(t, "a stencil cannot declare an ABI");
    }
    if let Some(v) = &sig.variadic {
        cx.error(v, "a stencil cannot be variadic");
    }

    let mut inputs = sig.inputs.iter();
    let window = match inputs.next() {
        None => {
            cx.error(&sig.ident, "a stencil needs a window parameter first: `fn name(w: Window<f32>) -> f32`");
            None
        }
        Some(FnArg::Receiver(r)) => {
            cx.error(r, "a stencil is a free function; its first parameter is the window `w: Window<f32>`");
            None
        }
        Some(FnArg::Typed(pt)) if sig.inputs.iter().skip(1).any(|a| matches!(a, FnArg::Typed(t) if window_element(&t.ty).is_some())) => {
            cx.error(&pt.ty, "the window must be the first parameter: `fn name(w: Window<f32>, extra: f32)`");
            None
        }
        Some(FnArg::Typed(pt)) => match (window_element(&pt.ty), &*pt.pat) {
            (Some((dims, Ok(elem))), Pat::Ident(id)) => Some((id.ident.clone(), dims, elem)),
            (Some((_, Ok(_))), pat) => {
                cx.error(pat, "name the window with a plain identifier, e.g. `w: Window<f32>`");
                None
            }
            (Some((_, Err(ty))), _) => {
                cx.error(ty, format!("unsupported element type: a window holds {SUPPORTED}"));
                None
            }
            (None, _) => {
                cx.error(&pt.ty, "a stencil needs a window parameter first: `w: Window<f32>`");
                None
            }
        },
    };

    let mut params = Vec::new();
    for arg in inputs {
        match arg {
            FnArg::Typed(pt) if window_element(&pt.ty).is_some() => {
                // Without a window first, the first parameter's error already says where it goes.
                if window.is_some() {
                    cx.error(&pt.ty, "a stencil reads one window; extra parameters are scalars (f32, f64, i32 or u32)");
                }
            }
            FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => Some(id.ident.clone()),
                    other => {
                        cx.error(other, "name each extra parameter with a plain identifier");
                        None
                    }
                };
                let ty = match (scalar(&pt.ty), strip(&pt.ty)) {
                    (Some(ty), _) => Some(ParamType::Scalar(ty)),
                    (None, Type::Array(array)) => array_param(array, cx),
                    (None, other) => {
                        cx.error(other, format!("unsupported parameter type: extra parameters are passed at launch, scalars ({SUPPORTED}) or arrays of them, `[f32; 5]`"));
                        None
                    }
                };
                if let Some(name) = name {
                    params.push(Param { name, ty });
                }
            }
            FnArg::Receiver(r) => cx.error(r, "a stencil is a free function and cannot take `self`"),
        }
    }

    let (window, dims, element) = window?;
    check_param_bytes(dims, &params, cx);
    match &sig.output {
        ReturnType::Default => {
            cx.error(&sig.ident, format!("a stencil returns one output element: add `-> {element}`"));
            return None;
        }
        ReturnType::Type(_, ty) => match scalar(ty) {
            Some(out) if out == element => {}
            _ => {
                cx.error(ty, format!("wrong return type: a stencil over {}<{element}> returns {element}", window_name(dims)));
                return None;
            }
        },
    }
    Some(Signature { window, dims, element, params })
}

/// `[T; N]`: T a scalar type, N an integer literal. Each refusal is on its own tokens.
fn array_param(array: &syn::TypeArray, cx: &mut Ctxt) -> Option<ParamType> {
    let elem = scalar(&array.elem);
    if elem.is_none() {
        cx.error(&array.elem, format!("unsupported array element type: an array parameter holds {SUPPORTED}"));
    }
    let len = match strip_group(&array.len) {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(n), .. }) if matches!(n.suffix(), "" | "usize") => n.base10_parse::<usize>().ok(),
        _ => None,
    };
    if len.is_none() {
        cx.error(
            &array.len,
            "the length of an array parameter must be an integer literal, `[f32; 5]`: #[stencil] compiles the kernel \
             from the function alone, and sees no `const` declared outside it",
        );
    }
    Some(ParamType::Array(elem?, len?))
}

/// Refuses parameters (arrays, mostly) past the kernel's parameter space, on the first that
/// does not fit.
fn check_param_bytes(dims: Dims, params: &[Param], cx: &mut Ctxt) {
    let mut types = Vec::new();
    for param in params {
        types.extend(param.ty.into_iter().flat_map(ParamType::scalars));
        let bytes = KernelParam::space(&KernelParam::list(dims, &types));
        if bytes > KernelParam::MAX_SPACE {
            let max = KernelParam::MAX_SPACE;
            cx.error(
                &param.name,
                format!("the parameters up to `{}` take {bytes} bytes of the kernel's parameter space, more than the {max} a launch passes: pass fewer or smaller arrays", param.name),
            );
            return;
        }
    }
}

/// The dimensions of the stencil `f` declares, read from its first parameter's window kind
/// alone, so the attribute's arguments can be checked against them before the rest of the
/// signature is; `None` where that parameter is no window (the signature's check says so).
pub fn window_dims(f: &ItemFn) -> Option<Dims> {
    match f.sig.inputs.first()? {
        FnArg::Typed(pt) => window_element(&pt.ty).map(|(dims, _)| dims),
        FnArg::Receiver(_) => None,
    }
}

/// The window type of a stencil of `dims` dimensions, as the user writes it.
pub fn window_name(dims: Dims) -> &'static str {
    match dims {
        Dims::One => "Window",
        Dims::Two => "Window2",
        Dims::Three => "Window3",
    }
}

/// `Window<T>`, `Window2<T>` or `Window3<T>` (any path ending in those): its dimensions and
/// `Ok(T)`, or `Err(T's tokens)` if T is not supported; `None` if it is not a window at all.
fn window_element(ty: &Type) -> Option<(Dims, Result<ScalarType, &Type>)> {
    let Type::Path(tp) = strip(ty) else { return None };
    let last = tp.path.segments.last()?;
    let dims = Dims::ALL.into_iter().find(|&d| last.ident == window_name(d))?;
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let elem = types.next()?;
    Some((dims, scalar(elem).ok_or(elem)))
}

/// A scalar type named by a bare identifier.
pub fn scalar(ty: &Type) -> Option<ScalarType> {
    match strip(ty) {
        Type::Path(tp) if tp.qself.is_none() => ScalarType::from_rust_name(&tp.path.get_ident()?.to_string()),
        _ => None,
    }
}

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip(&g.elem),
        Type::Paren(p) => strip(&p.elem),
        other => other,
    }
}
