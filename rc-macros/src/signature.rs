//! The function's signature: `fn name(u: Window<T>, k: Window<T>, extra: U, ...) -> T`, not
//! generic: one or more windows first (one input field each), then parameters passed at launch
//! (scalars, or arrays of them). The windows' kind (`Window`, `Window2`, `Window3`) fixes the
//! stencil's dimensions; they all have one kind and one element type. It returns one element
//! per output field: `T`, a tuple `(T, T)` or an array `[T; N]`.

use quote::ToTokens;
use syn::{Expr, FnArg, GenericArgument, Ident, ItemFn, Lit, Pat, PatType, PathArguments, ReturnType, Type};

use rc_core::geometry::Dims;
use rc_core::{validate, ScalarType, SignatureError};

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
    /// The windows' names, in declaration order: input field `i` is `windows[i]`.
    pub windows: Vec<Ident>,
    pub dims: Dims,
    pub element: ScalarType,
    pub params: Vec<Param>,
    pub returns: Returns,
}

/// What the function returns, one element per output field (one output buffer each, in order):
/// one element, a tuple of them, or an array of them. The generated functions return their
/// results the same way (`run` a `Vec` per output field: `Vec<T>`, `(Vec<T>, Vec<T>)` or
/// `[Vec<T>; N]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    One,
    Tuple(u32),
    Array(u32),
}

impl Returns {
    /// Output fields: one per element returned.
    pub fn outputs(self) -> u32 {
        match self {
            Returns::One => 1,
            Returns::Tuple(n) | Returns::Array(n) => n,
        }
    }
}

/// A window parameter as declared: its tokens, its kind, its element type's tokens, and that
/// type if supported.
struct WindowParam<'a> {
    decl: &'a PatType,
    dims: Dims,
    element_ty: &'a Type,
    element: Option<ScalarType>,
}

pub fn check(f: &ItemFn, cx: &mut Ctxt) -> Option<Signature> {
    let sig = &f.sig;
    if !sig.generics.params.is_empty() {
        cx.error(
            &sig.generics,
            "a stencil cannot be generic: its kernel is compiled for one element type; write one stencil per type",
        );
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

    let mut windows: Vec<WindowParam> = Vec::new();
    let mut scalars: Vec<&PatType> = Vec::new();
    // Windows declared after a scalar parameter.
    let mut misplaced: Vec<&PatType> = Vec::new();
    let mut params = Vec::new();
    for (i, arg) in sig.inputs.iter().enumerate() {
        match arg {
            FnArg::Receiver(r) if i == 0 => {
                cx.error(r, "a stencil is a free function; its first parameter is the window `w: Window<f32>`")
            }
            FnArg::Receiver(r) => cx.error(r, "a stencil is a free function and cannot take `self`"),
            FnArg::Typed(pt) => match window_type(&pt.ty) {
                Some((dims, element_ty)) => {
                    if !scalars.is_empty() {
                        misplaced.push(pt);
                    }
                    windows.push(WindowParam { decl: pt, dims, element_ty, element: scalar(element_ty) });
                }
                None => {
                    scalars.push(pt);
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
                        // Without any window, the first parameter's error says where the window goes.
                        (None, _) if i == 0 && window_dims(f).is_none() => None,
                        (None, other) => {
                            cx.error(other, SignatureError::Param);
                            None
                        }
                    };
                    if let Some(name) = name {
                        params.push(Param { name, ty });
                    }
                }
            },
        }
    }

    let Some(first) = windows.first() else {
        match sig.inputs.first() {
            None => cx.error(&sig.ident, "a stencil needs a window parameter first: `fn name(w: Window<f32>) -> f32`"),
            Some(FnArg::Typed(pt)) => cx.error(&pt.ty, "a stencil needs a window parameter first: `w: Window<f32>`"),
            // The receiver's own error says so.
            Some(FnArg::Receiver(_)) => {}
        }
        return None;
    };
    if !misplaced.is_empty() {
        let order = declared_in_order(f, first, &windows, &scalars);
        for pt in misplaced {
            cx.error(pt, format!("windows come first, before the scalar parameters: write `{order}`"));
        }
    }
    let mut names = Vec::with_capacity(windows.len());
    let mut consistent = true;
    for w in &windows {
        match &*w.decl.pat {
            Pat::Ident(id) => names.push(id.ident.clone()),
            pat => {
                cx.error(pat, "name the window with a plain identifier, e.g. `w: Window<f32>`");
                consistent = false;
            }
        }
        if w.element.is_none() {
            cx.error(w.element_ty, SignatureError::Element);
            consistent = false;
        }
    }
    let (dims, first_name) = (first.dims, name_of(first.decl));
    let element = first.element?;
    for w in windows.iter().skip(1) {
        // A window of an unsupported type was refused above; only its dimensions are compared.
        let (name, other) = (name_of(w.decl), w.element.unwrap_or(element));
        if let Err(e) = validate::same_windows((&first_name, dims, element), (&name, w.dims, other)) {
            match e {
                SignatureError::WindowDims { .. } => cx.error(&w.decl.ty, e),
                _ => cx.error(w.element_ty, e),
            }
            consistent = false;
        }
    }
    if !consistent {
        return None;
    }
    let returns = returns(sig, dims, element, cx)?;
    check_param_bytes(dims, windows.len() as u32, returns.outputs(), &params, cx);
    Some(Signature { windows: names, dims, element, params, returns })
}

/// The return type: the element, a tuple of elements or an array of them (a literal length),
/// every element the windows' type. Each refusal is on its own tokens.
fn returns(sig: &syn::Signature, dims: Dims, element: ScalarType, cx: &mut Ctxt) -> Option<Returns> {
    let ty = match &sig.output {
        ReturnType::Type(_, ty) => strip(ty),
        ReturnType::Default => {
            cx.error(&sig.ident, SignatureError::NoResult { element });
            return None;
        }
    };
    let mut ok = true;
    let mut check = |ty: &Type, cx: &mut Ctxt| {
        if let Err(e) = validate::result(dims, element, scalar(ty)) {
            cx.error(ty, e);
            ok = false;
        }
    };
    let returns = match ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => {
            cx.error(ty, SignatureError::NoResult { element });
            return None;
        }
        Type::Tuple(tuple) => {
            tuple.elems.iter().for_each(|elem| check(elem, cx));
            Returns::Tuple(tuple.elems.len() as u32)
        }
        Type::Array(array) => {
            check(&array.elem, cx);
            match literal_len(&array.len) {
                Some(n) if n >= 1 => Returns::Array(n),
                _ => {
                    cx.error(&array.len, SignatureError::ResultArrayLen { element });
                    return None;
                }
            }
        }
        _ => {
            check(ty, cx);
            Returns::One
        }
    };
    ok.then_some(returns)
}

/// An array length written as an integer literal that fits the output count.
fn literal_len(len: &Expr) -> Option<u32> {
    match strip_group(len) {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(n), .. }) if matches!(n.suffix(), "" | "usize") => {
            n.base10_parse::<u32>().ok()
        }
        _ => None,
    }
}

/// A parameter's name as written (its pattern's tokens when it is not a plain name).
fn name_of(pt: &PatType) -> String {
    match &*pt.pat {
        Pat::Ident(id) => id.ident.to_string(),
        pat => pat.to_token_stream().to_string(),
    }
}

/// `[T; N]`: T a scalar type, N an integer literal. Each refusal is on its own tokens.
fn array_param(array: &syn::TypeArray, cx: &mut Ctxt) -> Option<ParamType> {
    let elem = scalar(&array.elem);
    if elem.is_none() {
        cx.error(&array.elem, SignatureError::ArrayElement);
    }
    let len = match strip_group(&array.len) {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(n), .. }) if matches!(n.suffix(), "" | "usize") => {
            n.base10_parse::<usize>().ok()
        }
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

/// Refuses parameters (arrays, mostly) past the kernel's parameter space, which also holds
/// `fields` input and `outputs` output pointers, on the first that does not fit.
fn check_param_bytes(dims: Dims, fields: u32, outputs: u32, params: &[Param], cx: &mut Ctxt) {
    let names: Vec<String> = params.iter().map(|p| p.name.to_string()).collect();
    let scalars: Vec<Vec<ScalarType>> =
        params.iter().map(|p| p.ty.into_iter().flat_map(ParamType::scalars).collect()).collect();
    let listed = names.iter().map(String::as_str).zip(scalars.iter().map(Vec::as_slice));
    if let Err(e) = validate::parameter_space(dims, fields, outputs, listed) {
        match &e {
            SignatureError::ParamSpace { param, .. } if *param < params.len() => cx.error(&params[*param].name, e),
            _ => cx.error_at(proc_macro2::Span::call_site(), e),
        }
    }
}

/// The signature as it should be written: the windows first, in their order, each of the first
/// window's kind and element type, then the scalars, e.g. `fn step(u: Window<f32>, k:
/// Window<f32>, dt: f32)`.
fn declared_in_order(f: &ItemFn, first: &WindowParam, windows: &[WindowParam], scalars: &[&PatType]) -> String {
    let (kind, element) = (window_name(first.dims), first.element_ty.to_token_stream());
    let window = |w: &WindowParam| format!("{}: {kind}<{element}>", name_of(w.decl));
    let scalar = |pt: &&PatType| format!("{}: {}", name_of(pt), pt.ty.to_token_stream().to_string().replace(' ', ""));
    let all: Vec<String> = windows.iter().map(window).chain(scalars.iter().map(scalar)).collect();
    format!("fn {}({})", f.sig.ident, all.join(", "))
}

/// The dimensions of the stencil `f` declares, read from its first window's kind alone, so the
/// attribute's arguments can be checked against them before the rest of the signature is;
/// `None` where it has no window (the signature's check says so).
pub fn window_dims(f: &ItemFn) -> Option<Dims> {
    f.sig.inputs.iter().find_map(|arg| match arg {
        FnArg::Typed(pt) => window_type(&pt.ty).map(|(dims, _)| dims),
        FnArg::Receiver(_) => None,
    })
}

/// The window type of a stencil of `dims` dimensions, as the user writes it.
pub fn window_name(dims: Dims) -> &'static str {
    rc_core::window::type_name(dims)
}

/// `Window<T>`, `Window2<T>` or `Window3<T>` (any path ending in those): its dimensions and T's
/// tokens; `None` if it is not a window at all.
fn window_type(ty: &Type) -> Option<(Dims, &Type)> {
    let Type::Path(tp) = strip(ty) else { return None };
    let last = tp.path.segments.last()?;
    let dims = Dims::ALL.into_iter().find(|&d| last.ident == window_name(d))?;
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    Some((dims, types.next()?))
}

/// A scalar type named by a bare identifier.
pub fn scalar(ty: &Type) -> Option<ScalarType> {
    match strip(ty) {
        Type::Path(tp) if tp.qself.is_none() => scalar_path(&tp.path),
        _ => None,
    }
}

/// The type a path names: `f32`, ..., `f16` and `bf16` also as `half::f16`, `::half::bf16`.
pub fn scalar_path(path: &syn::Path) -> Option<ScalarType> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let name = match segments.as_slice() {
        [name] => name,
        [krate, name] if krate == "half" && matches!(name.as_str(), "f16" | "bf16") => name,
        _ => return None,
    };
    ScalarType::from_rust_name(name)
}

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip(&g.elem),
        Type::Paren(p) => strip(&p.elem),
        other => other,
    }
}
