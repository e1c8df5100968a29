//! The attribute's arguments: `radius = 3, warp = 32, outputs_per_thread = 4, boundary = zero`;
//! for 2D and 3D stencils also `radius = (ry, rx)`, `rows_per_warp` and `planes_per_warp`, and
//! for 2D `stream` and `prefetch`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, Meta, Token};

use rc_core::{validate, Boundary, Dims, Given, Layout, Pattern, Radius, Strategy};

use crate::ctxt::Ctxt;
use crate::signature::window_name;

/// Whether the cost model picks the distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auto {
    /// `distribution = ...` names one (or the strategy has no register cache).
    No,
    /// `distribution = auto`.
    Asked,
    /// No `distribution`: the cost model picks, and where no candidate compiles, the
    /// round-robin distribution's own error says why.
    Default,
}

/// What the attribute says. The radius is kept on its own so the body can still be checked
/// (tap offsets) when another argument is wrong.
pub struct Args {
    pub radius: Option<Radius>,
    pub pattern: Option<Pattern>,
    pub strategy: Strategy,
    pub layout: Layout,
    /// Where `radius = ...` and `outputs_per_thread = ...` give their values, for errors about
    /// the compiled pattern (its register estimate).
    pub radius_span: Option<Span>,
    pub outputs_span: Option<Span>,
    /// The layout `distribution = ...` names, for errors about what it needs (its stage).
    pub distribution_tokens: Option<TokenStream>,
    /// The cost model chooses: `distribution = auto`, or no `distribution` with the register
    /// cache (the default). The layout (and, unless `outputs_per_thread` was given, the
    /// outputs per thread) are the cost model's choice, made once the body is known.
    pub auto: Auto,
    /// Whether `outputs_per_thread` was given.
    pub outputs_fixed: bool,
    /// Whether `rows_per_warp` was given.
    pub rows_fixed: bool,
    /// Whether `max_threads_per_block` or `min_blocks_per_sm` was given.
    pub bounds_fixed: bool,
    /// `prefetch = true` or `false` and its tokens, if given.
    pub prefetch: Option<(bool, TokenStream)>,
    /// Whether `prefetch` was given.
    pub prefetch_fixed: bool,
    /// `fuse = T` and its tokens: time steps per fused launch (1D).
    pub fuse: Option<(u32, TokenStream)>,
}

const KNOWN: &str =
    "`radius`, `warp`, `outputs_per_thread`, `rows_per_warp`, `planes_per_warp`, `stream`, `prefetch`, `boundary`, \
     `strategy`, `distribution`, `max_threads_per_block`, `min_blocks_per_sm`, `fuse`";

/// Reads the attribute of a stencil of `dims` dimensions (`None` when the signature has no
/// window, whose own error says so: then nothing is checked against the dimensions).
pub fn parse(tokens: TokenStream, dims: Option<Dims>, cx: &mut Ctxt) -> Args {
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(e) => {
            cx.push(syn::Error::new(e.span(), format!("expected `name = value` arguments ({KNOWN}): {e}")));
            return Args {
                radius: None,
                pattern: None,
                strategy: Strategy::default(),
                layout: Layout::default(),
                radius_span: None,
                outputs_span: None,
                distribution_tokens: None,
                auto: Auto::No,
                outputs_fixed: false,
                rows_fixed: false,
                bounds_fixed: false,
                prefetch: None,
                prefetch_fixed: false,
                fuse: None,
            };
        }
    };
    let mut radius: Option<Radius> = None;
    let mut rows: Option<u32> = None;
    let mut planes: Option<u32> = None;
    let mut stream: Option<bool> = None;
    let mut prefetch: Option<(bool, &Expr)> = None;
    let mut warp: Option<u32> = None;
    let mut outputs: Option<u32> = None;
    let mut boundary: Option<Boundary> = None;
    let mut strategy = Strategy::default();
    let mut layout: Option<(Layout, &Expr)> = None;
    let mut auto: Option<&Expr> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut radius_seen = false;
    let mut threads: Option<u32> = None;
    let mut min_blocks: Option<u32> = None;
    let mut fuse: Option<(u32, TokenStream)> = None;
    let (mut radius_span, mut outputs_span) = (None, None);
    for meta in &metas {
        let Meta::NameValue(nv) = meta else {
            cx.error(meta, format!("expected `name = value`, one of {KNOWN}"));
            continue;
        };
        let Some(name) = nv.path.get_ident().map(|i| i.to_string()) else {
            cx.error(&nv.path, format!("unknown argument; expected one of {KNOWN}"));
            continue;
        };
        if seen.contains(&name) {
            cx.error(&nv.path, format!("duplicate argument `{name}`"));
            continue;
        }
        seen.push(name.clone());
        match name.as_str() {
            "radius" => {
                radius_seen = true;
                radius_span = Some(syn::spanned::Spanned::span(&nv.value));
                radius = radius_value(&nv.value, dims, cx);
            }
            // Without a window the range alone is checked (as for a 3D stencil, which has both).
            "rows_per_warp" => {
                let verdict =
                    validate::rows_per_warp("rows_per_warp", dims.unwrap_or(Dims::Three), Dims::Two, given(&nv.value));
                rows = checked(verdict, &nv.value, cx);
            }
            "planes_per_warp" => {
                let verdict = validate::rows_per_warp(
                    "planes_per_warp",
                    dims.unwrap_or(Dims::Three),
                    Dims::Three,
                    given(&nv.value),
                );
                planes = checked(verdict, &nv.value, cx);
            }
            "stream" => {
                stream = match strip_group(&nv.value) {
                    Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) => Some(b.value),
                    _ => {
                        cx.error(&nv.value, "stream takes `true` (a 2D tile's rows are steps of a loop, partial results carried from row to row) or `false` (straight-line rows)");
                        None
                    }
                };
                if let (Some(on), Some(d)) = (stream, dims) {
                    checked(validate::stream_rows(d, on), &nv.value, cx);
                }
            }
            "prefetch" => {
                let value = &nv.value;
                prefetch = match strip_group(value) {
                    Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) => Some((b.value, value)),
                    _ => {
                        cx.error(value, "prefetch takes `true` (a 2D tile's interior path prefetches into L2 the rows a later band of blocks reads) or `false` (it does not)");
                        None
                    }
                };
            }
            "warp" => warp = checked(validate::warp(given(&nv.value)), &nv.value, cx),
            "outputs_per_thread" => {
                outputs_span = Some(syn::spanned::Spanned::span(&nv.value));
                outputs = checked(validate::outputs_per_thread(given(&nv.value)), &nv.value, cx);
            }
            "boundary" => boundary = boundary_value(&nv.value, cx),
            "max_threads_per_block" => threads = checked(validate::threads_per_block(given(&nv.value)), &nv.value, cx),
            "min_blocks_per_sm" => min_blocks = checked(validate::min_blocks_per_sm(given(&nv.value)), &nv.value, cx),
            "fuse" => {
                let value = &nv.value;
                fuse = checked(validate::fuse(given(value)), value, cx).map(|t| (t, quote::quote!(#value)));
            }
            "strategy" => strategy = strategy_value(&nv.value, cx).unwrap_or_default(),
            "distribution" if matches!(strip_group(&nv.value), Expr::Path(p) if p.path.is_ident("auto")) => {
                auto = Some(&nv.value)
            }
            "distribution" => layout = layout_value(&nv.value, cx).map(|l| (l, &nv.value)),
            other => {
                cx.error(&nv.path, format!("unknown argument `{other}`{}; expected one of {KNOWN}", suggestion(other)))
            }
        }
    }
    // After the loop: `stream` may come after `prefetch`.
    if let (Some((on, value)), Some(d)) = (prefetch, dims) {
        checked(validate::prefetch(d, stream.unwrap_or(false), on), value, cx);
    }
    let prefetch = prefetch.map(|(on, value)| (on, quote::quote!(#value)));
    if let Some(value) = auto.or(layout.map(|(_, value)| value)) {
        checked(validate::distribution_for(strategy), value, cx);
    }
    // Rows are checked against an outputs_per_thread that was valid, or left at its default.
    if let (Some((l, value)), true) = (layout, outputs.is_some() || outputs_span.is_none()) {
        checked(validate::whole_rows(l, outputs), value, cx);
    }
    let distribution_tokens = layout.map(|(_, value)| quote::quote!(#value));
    let layout_given = layout.is_some();
    let layout = layout.map_or(Layout::default(), |(l, _)| l);
    if !radius_seen && !seen.iter().any(|name| suggestion(name).contains("radius")) {
        cx.error_at(
            Span::call_site(),
            "missing argument `radius`: write `#[stencil(radius = R)]` with the largest tap offset R >= 1",
        );
    }
    let auto = match (auto, layout_given, strategy) {
        (Some(_), ..) => Auto::Asked,
        (None, false, Strategy::RegisterCache) => Auto::Default,
        _ => Auto::No,
    };
    let outputs_fixed = outputs.is_some();
    let rows_fixed = rows.is_some();
    let bounds_fixed = threads.is_some() || min_blocks.is_some();
    let args = |pattern| Args {
        radius,
        pattern,
        strategy,
        layout,
        radius_span,
        outputs_span,
        distribution_tokens,
        auto,
        outputs_fixed,
        rows_fixed,
        bounds_fixed,
        prefetch: prefetch.clone(),
        prefetch_fixed: prefetch.is_some(),
        fuse: fuse.clone(),
    };
    if cx.has_errors() {
        return args(None);
    }
    let Some(r) = radius else { return args(None) };
    let (warp, outputs, boundary) = (
        warp.unwrap_or(Pattern::DEFAULT_WARP),
        outputs.unwrap_or(Pattern::DEFAULT_OUTPUTS_PER_THREAD),
        boundary.unwrap_or(Boundary::Valid),
    );
    let pattern = match r.dims() {
        Dims::One => Pattern::new(r.along_x(), warp, outputs, boundary),
        d => Pattern::grid(
            r,
            warp,
            outputs,
            rows.unwrap_or(match stream {
                Some(true) => Pattern::DEFAULT_STREAMED_ROWS,
                _ => Pattern::default_rows_per_warp(d),
            }),
            planes.unwrap_or(Pattern::default_planes_per_warp(d)),
            boundary,
        ),
    }
    .and_then(|p| p.with_streamed_rows(stream.unwrap_or(false)))
    .and_then(|p| p.with_prefetch(prefetch.as_ref().is_some_and(|(on, _)| *on)))
    .and_then(|p| p.with_launch_bounds(threads.unwrap_or(Pattern::DEFAULT_THREADS_PER_BLOCK), min_blocks));
    match pattern {
        Ok(pattern) => args(Some(pattern)),
        Err(e) => {
            cx.error_at(Span::call_site(), e);
            args(None)
        }
    }
}

/// `radius = r` (every dimension) or `radius = (ry, rx)` / `(rz, ry, rx)`, one component per
/// dimension of the window; each component is checked as a 1D radius, on its own tokens.
fn radius_value(value: &Expr, dims: Option<Dims>, cx: &mut Ctxt) -> Option<Radius> {
    let Expr::Tuple(tuple) = strip_group(value) else {
        let r = checked(validate::radius(given(value)), value, cx)?;
        return Radius::new(&vec![r; dims.unwrap_or(Dims::One).count()]);
    };
    if let Some(dims) = dims.filter(|d| d.count() != tuple.elems.len()) {
        let n = tuple.elems.len();
        let components = if n == 1 { "1 component".to_string() } else { format!("{n} components") };
        let dimensions =
            if dims == Dims::One { "1 dimension".to_string() } else { format!("{} dimensions", dims.count()) };
        let write = match dims {
            Dims::One => "write one number, `radius = r`".to_string(),
            Dims::Two => "write `radius = (ry, rx)` or one number for both".to_string(),
            Dims::Three => "write `radius = (rz, ry, rx)` or one number for all three".to_string(),
        };
        cx.error(value, format!("radius has {components} but `{}` has {dimensions}: {write}", window_name(dims)));
        return None;
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

/// One of the names rc-core gives a choice (`boundary = zero`, `strategy = naive`).
fn named<T: Copy>(value: &Expr, argument: &str, all: &[T], name: fn(T) -> &'static str, cx: &mut Ctxt) -> Option<T> {
    let ident = match strip_group(value) {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    };
    let found = all.iter().copied().find(|&choice| ident.as_deref() == Some(name(choice)));
    if found.is_none() {
        let names: Vec<String> = all.iter().map(|&choice| format!("`{}`", name(choice))).collect();
        let got = strip_group(value);
        cx.error(value, format!("{argument} must be one of {}, got `{}`", names.join(", "), quote::quote!(#got)));
    }
    found
}

fn boundary_value(value: &Expr, cx: &mut Ctxt) -> Option<Boundary> {
    named(value, "boundary", &Boundary::ALL, Boundary::name, cx)
}

fn strategy_value(value: &Expr, cx: &mut Ctxt) -> Option<Strategy> {
    named(value, "strategy", &Strategy::ALL, Strategy::name, cx)
}

/// `round_robin`, `granule(V)`, `window(V)`, `staged(V)` or `planes(V)` with V a power of two from 1 to 32 (`auto` is handled by the caller).
fn layout_value(value: &Expr, cx: &mut Ctxt) -> Option<Layout> {
    let expected = "distribution must be `auto`, `round_robin`, `granule(V)`, `window(V)`, `staged(V)` or `planes(V)` (3D) with V a power of two from 1 to 32";
    let call_of = |name: &str| match strip_group(value) {
        Expr::Call(call)
            if matches!(strip_group(&call.func), Expr::Path(p) if p.path.is_ident(name)) && call.args.len() == 1 =>
        {
            Some(call.args[0].clone())
        }
        _ => None,
    };
    let sized = |make: fn(u32) -> Layout, kind: &'static str, arg: &Expr, cx: &mut Ctxt| {
        checked(validate::vector_size(kind, given(arg)), arg, cx).map(make)
    };
    match strip_group(value) {
        Expr::Path(p) if p.path.is_ident("round_robin") => Some(Layout::RoundRobin),
        _ => {
            if let Some(arg) = call_of("granule") {
                sized(Layout::Granule, "granule", &arg, cx)
            } else if let Some(arg) = call_of("window") {
                sized(Layout::Window, "window", &arg, cx)
            } else if let Some(arg) = call_of("staged") {
                sized(Layout::Staged, "staged", &arg, cx)
            } else if let Some(arg) = call_of("planes") {
                sized(Layout::Planes, "planes", &arg, cx)
            } else {
                cx.error(value, format!("{expected}, got `{}`", quote::quote!(#value)));
                None
            }
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
