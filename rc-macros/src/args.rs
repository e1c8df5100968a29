//! The attribute's arguments: `radius = 3, warp = 32, outputs_per_thread = 4, boundary = zero`;
//! for 2D and 3D stencils also `radius = (ry, rx)`, `rows_per_warp` and `planes_per_warp`, and
//! for 2D `stream` and `prefetch`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, Meta, Token};

use rc_core::error::DistributionError;
use rc_core::{validate, Arg, Argument, Attribute, Declaration, Dims, DistributionArg, Given, Layout, Radius, Refusal};

use crate::ctxt::Ctxt;

/// What the attribute says: the declaration rc-core made of it, where every argument is
/// written (for refusals about it), and the radius on its own, so the body can still be checked
/// (tap offsets) when another argument is wrong.
pub struct Args {
    pub radius: Option<Radius>,
    /// `None` where an argument was refused (or the attribute's syntax is wrong).
    pub declaration: Option<Declaration>,
    written: Written,
}

/// Where the arguments a refusal may be about are written: `radius` and `outputs_per_thread`
/// as the spans of their values, the others as their tokens.
#[derive(Default)]
struct Written {
    radius: Option<Span>,
    outputs_per_thread: Option<Span>,
    prefetch: Option<TokenStream>,
    distribution: Option<TokenStream>,
    fuse: Option<TokenStream>,
}

impl Args {
    /// Reports `refusal` on the argument it is about (`name`: the stencil's name).
    pub fn report(&self, refusal: Refusal, name: &syn::Ident, cx: &mut Ctxt) {
        report(&self.written, refusal, Some(name), cx);
    }
}

/// Puts `refusal` on the tokens of the argument it is about; one about the stencil itself on its
/// name (`None`: the attribute, for the values refused before the function is read).
fn report(written: &Written, refusal: Refusal, name: Option<&syn::Ident>, cx: &mut Ctxt) {
    let tokens = match refusal.argument {
        Argument::Prefetch => written.prefetch.as_ref(),
        Argument::Distribution => written.distribution.as_ref(),
        Argument::Fuse => written.fuse.as_ref(),
        Argument::Radius | Argument::OutputsPerThread | Argument::Attribute | Argument::Function => None,
    };
    let span = match refusal.argument {
        Argument::OutputsPerThread => written.outputs_per_thread.or(written.radius),
        Argument::Radius => written.radius,
        _ => None,
    };
    match (tokens, span, name) {
        (Some(tokens), ..) => cx.error(tokens, refusal),
        (None, Some(span), _) => cx.error_at(span, refusal),
        (None, None, Some(name)) if refusal.argument == Argument::Function => cx.error(name, refusal),
        (None, None, _) => cx.error_at(Span::call_site(), refusal),
    }
}

const KNOWN: &str =
    "`radius`, `warp`, `outputs_per_thread`, `rows_per_warp`, `planes_per_warp`, `stream`, `prefetch`, `boundary`, \
     `strategy`, `distribution`, `max_threads_per_block`, `min_blocks_per_sm`, `fuse`";

/// Reads the attribute of a stencil of `dims` dimensions (`None` when the signature has no
/// window, whose own error says so: then nothing is checked against the dimensions). Each value
/// is checked on its own tokens; rc-core checks how they go together and makes the declaration.
pub fn parse(tokens: TokenStream, dims: Option<Dims>, cx: &mut Ctxt) -> Args {
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(e) => {
            cx.push(syn::Error::new(e.span(), format!("expected `name = value` arguments ({KNOWN}): {e}")));
            return Args { radius: None, declaration: None, written: Written::default() };
        }
    };
    let mut attribute = Attribute::default();
    let mut written = Written::default();
    let mut seen: Vec<String> = Vec::new();
    for meta in &metas {
        let Meta::NameValue(nv) = meta else {
            cx.error(meta, format!("expected `name = value`, one of {KNOWN}"));
            attribute.malformed = true;
            continue;
        };
        let Some(name) = nv.path.get_ident().map(|i| i.to_string()) else {
            cx.error(&nv.path, format!("unknown argument; expected one of {KNOWN}"));
            attribute.malformed = true;
            continue;
        };
        if seen.contains(&name) {
            cx.error(&nv.path, format!("duplicate argument `{name}`"));
            attribute.malformed = true;
            continue;
        }
        seen.push(name.clone());
        let value = &nv.value;
        match name.as_str() {
            "radius" => {
                written.radius = Some(syn::spanned::Spanned::span(value));
                attribute.radius = arg(radius_value(value, dims, cx));
            }
            // Without a window the range alone is checked (as for a 3D stencil, which has both).
            "rows_per_warp" => {
                let verdict =
                    validate::rows_per_warp("rows_per_warp", dims.unwrap_or(Dims::Three), Dims::Two, given(value));
                attribute.rows_per_warp = accepted(verdict, value, cx);
            }
            "planes_per_warp" => {
                let verdict =
                    validate::rows_per_warp("planes_per_warp", dims.unwrap_or(Dims::Three), Dims::Three, given(value));
                attribute.planes_per_warp = accepted(verdict, value, cx);
            }
            "stream" => {
                attribute.stream = match strip_group(value) {
                    Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) => Arg::Given(b.value),
                    _ => {
                        cx.error(value, "stream takes `true` (a 2D tile's rows are steps of a loop, partial results carried from row to row) or `false` (straight-line rows)");
                        Arg::Refused
                    }
                };
                // Checked against the window alone, as rows_per_warp is.
                if let (Arg::Given(on), Some(d)) = (attribute.stream, dims) {
                    if checked(validate::stream_rows(d, on), value, cx).is_none() {
                        attribute.stream = Arg::Refused;
                    }
                }
            }
            "prefetch" => {
                written.prefetch = Some(quote::quote!(#value));
                attribute.prefetch = match strip_group(value) {
                    Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) => Arg::Given(b.value),
                    _ => {
                        cx.error(value, "prefetch takes `true` (a 2D tile's interior path prefetches into L2 the rows a later band of blocks reads) or `false` (it does not)");
                        Arg::Refused
                    }
                };
            }
            "warp" => attribute.warp = accepted(validate::warp(given(value)), value, cx),
            "outputs_per_thread" => {
                written.outputs_per_thread = Some(syn::spanned::Spanned::span(value));
                attribute.outputs_per_thread = accepted(validate::outputs_per_thread(given(value)), value, cx);
            }
            "boundary" => attribute.boundary = accepted(validate::boundary(&written_text(value)), value, cx),
            "max_threads_per_block" => {
                attribute.max_threads_per_block = accepted(validate::threads_per_block(given(value)), value, cx)
            }
            "min_blocks_per_sm" => {
                attribute.min_blocks_per_sm = accepted(validate::min_blocks_per_sm(given(value)), value, cx)
            }
            "fuse" => {
                written.fuse = Some(quote::quote!(#value));
                attribute.fuse = accepted(validate::fuse(given(value)), value, cx);
            }
            "strategy" => attribute.strategy = accepted(validate::strategy(&written_text(value)), value, cx),
            "distribution" => {
                written.distribution = Some(quote::quote!(#value));
                attribute.distribution = match strip_group(value) {
                    Expr::Path(p) if p.path.is_ident("auto") => Arg::Given(DistributionArg::Auto),
                    _ => arg(layout_value(value, cx)).map(DistributionArg::Layout),
                };
            }
            other => {
                cx.error(&nv.path, format!("unknown argument `{other}`{}; expected one of {KNOWN}", suggestion(other)));
                attribute.malformed = true;
            }
        }
    }
    let declaration = match attribute.declare(dims) {
        Ok(declaration) => Some(declaration),
        Err(refusals) => {
            for refusal in refusals {
                report(&written, refusal, None, cx);
            }
            None
        }
    };
    if attribute.radius == Arg::Absent && !seen.iter().any(|name| suggestion(name).contains("radius")) {
        cx.error_at(
            Span::call_site(),
            "missing argument `radius`: write `#[stencil(radius = R)]` with the largest tap offset R >= 1",
        );
    }
    Args { radius: attribute.radius.given(), declaration, written }
}

/// An argument's value, `None` where it was refused (and reported).
fn arg<T>(value: Option<T>) -> Arg<T> {
    value.map_or(Arg::Refused, Arg::Given)
}

/// `radius = r` (every dimension) or `radius = (ry, rx)` / `(rz, ry, rx)`, one component per
/// dimension of the window; each component is checked as a 1D radius, on its own tokens.
fn radius_value(value: &Expr, dims: Option<Dims>, cx: &mut Ctxt) -> Option<Radius> {
    let Expr::Tuple(tuple) = strip_group(value) else {
        let r = checked(validate::radius(given(value)), value, cx)?;
        return Radius::new(&vec![r; dims.unwrap_or(Dims::One).count()]);
    };
    if let Some(dims) = dims {
        checked(validate::radius_components(dims, tuple.elems.len()), value, cx)?;
    }
    // Every component is checked, so each wrong one is reported.
    let components: Vec<Option<u32>> = tuple.elems.iter().map(|c| checked(validate::radius(given(c)), c, cx)).collect();
    let components: Option<Vec<u32>> = components.into_iter().collect();
    Radius::new(&components?)
}

/// ` (did you mean `radius`?)` for a near miss of a known argument.
fn suggestion(name: &str) -> String {
    [
        "radius",
        "warp",
        "outputs_per_thread",
        "rows_per_warp",
        "planes_per_warp",
        "stream",
        "prefetch",
        "boundary",
        "strategy",
        "distribution",
        "max_threads_per_block",
        "min_blocks_per_sm",
        "fuse",
    ]
    .into_iter()
    .find(|known| edit_distance(name, known) <= 2)
    .map_or(String::new(), |known| format!(" (did you mean `{known}`?)"))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// What an argument's tokens say, for rc-core to check: an integer literal (negative ones
/// included), or the tokens as written.
fn given(value: &Expr) -> Given {
    match strip_group(value) {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(int), .. }) => {
            int.base10_parse::<i64>().map_or_else(|_| Given::Text(int.to_string()), Given::Integer)
        }
        other => Given::Text(quote::quote!(#other).to_string()),
    }
}

/// rc-core's verdict on one argument; a refusal is reported on the argument's tokens.
fn checked<T, E: std::fmt::Display>(verdict: Result<T, E>, tokens: &Expr, cx: &mut Ctxt) -> Option<T> {
    verdict.map_err(|e| cx.error(tokens, e)).ok()
}

/// [`checked`], as the attribute's argument.
fn accepted<T, E: std::fmt::Display>(verdict: Result<T, E>, tokens: &Expr, cx: &mut Ctxt) -> Arg<T> {
    arg(checked(verdict, tokens, cx))
}

/// A name's tokens as written (`zero`, `"zero"`), for rc-core to look up.
fn written_text(value: &Expr) -> String {
    let value = strip_group(value);
    quote::quote!(#value).to_string()
}

/// `round_robin`, or `granule(V)`, `window(V)`, `staged(V)` or `planes(V)` with V a power of two
/// from 1 to 32 (`auto` is handled by the caller): the name and V read here, rc-core says which
/// distribution they name. A wrong V is refused on its tokens, anything else on the value's.
fn layout_value(value: &Expr, cx: &mut Ctxt) -> Option<Layout> {
    let (name, size) = match strip_group(value) {
        Expr::Path(p) => (p.path.get_ident().map(|i| i.to_string()), None),
        Expr::Call(call) if call.args.len() == 1 => match strip_group(&call.func) {
            Expr::Path(p) => (p.path.get_ident().map(|i| i.to_string()), Some(&call.args[0])),
            _ => (None, None),
        },
        _ => (None, None),
    };
    let written = quote::quote!(#value).to_string();
    match validate::distribution(name.as_deref().unwrap_or_default(), size.map(given), &written) {
        Ok(layout) => Some(layout),
        Err(e @ DistributionError::VectorSize { .. }) => {
            cx.error(size, e);
            None
        }
        Err(e) => {
            cx.error(value, e);
            None
        }
    }
}

/// Arguments passed through `macro_rules!` arrive wrapped in invisible groups.
pub fn strip_group(e: &Expr) -> &Expr {
    match e {
        Expr::Group(g) => strip_group(&g.expr),
        Expr::Paren(p) => strip_group(&p.expr),
        other => other,
    }
}
