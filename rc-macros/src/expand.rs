//! Prints what `#[stencil]` generates: the user's function unchanged, and beside it a module of
//! the same name holding the kernel handle, its PTX, and the CPU entry points.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, ItemFn};

use rc_core::{Dims, Plan};

use crate::ctxt::Ctxt;
use crate::signature::{Returns, Signature};
use crate::{args, correctly_rounded, lower, signature, tokens};

pub fn stencil(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let f: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e = syn::Error::new(e.span(), format!("#[stencil] goes on a function: {e}"));
            let error = e.to_compile_error();
            return quote!(#error #item);
        }
    };
    let args = args::parse(args, signature::window_dims(&f), &mut cx);
    let sig = signature::check(&f, &mut cx);
    let signature_ok = !cx.has_errors() || sig.is_some();
    // The body is checked whenever the radius and the signature are known, so its errors are
    // reported together with any in the other arguments.
    let body = match (args.radius, &sig) {
        (Some(radius), Some(s)) => lower::lower(&f.block, s, radius, &mut cx),
        _ => None,
    };
    // rc-core compiles the declaration: the distribution (the cost model's, unless named), the
    // kernel, the fused kernel; each refusal goes on the argument it is about.
    let plan = match (&args.declaration, &body) {
        (Some(declaration), Some(b)) => match declaration.plan(b) {
            Ok(plan) => Some(plan),
            Err(refusals) => {
                for refusal in refusals {
                    args.report(refusal, &f.sig.ident, &mut cx);
                }
                None
            }
        },
        _ => None,
    };
    let keep_body = signature_ok && cx.function_is_rust();
    match (cx.into_result(), sig, body, plan) {
        (Ok(()), Some(sig), Some(body), Some(plan)) => generate(&f, &sig, &body, &plan),
        (Err(e), ..) => fallback(&f, e, keep_body),
        // Every path that yields None above has reported an error.
        (Ok(()), ..) => {
            fallback(&f, syn::Error::new_spanned(&f.sig.ident, "#[stencil] could not compile this function"), keep_body)
        }
    }
}

/// On error: the errors, and the function itself, so its other uses do not cascade into more.
/// With a broken signature, or a body rustc refuses too, the body would only add rustc's own
/// errors on the same mistake, so it is left out.
fn fallback(f: &ItemFn, e: syn::Error, keep_body: bool) -> TokenStream {
    let error = e.to_compile_error();
    if keep_body {
        let f = correctly_rounded::rewrite(f);
        return quote!(#error #f);
    }
    let (attrs, vis, sig) = (&f.attrs, &f.vis, &f.sig);
    quote!(#error #(#attrs)* #[allow(unused_variables)] #vis #sig { ::core::unimplemented!() })
}

fn generate(f: &ItemFn, sig: &Signature, body: &rc_core::Body, plan: &Plan) -> TokenStream {
    let Plan { pattern, strategy, layout, ref program, steps_per_launch: steps, ref fused } = *plan;
    let name = &f.sig.ident;
    let vis = &f.vis;
    let name_str = name.to_string();
    let entry = format!("rc_{name_str}");
    let ptx = rc_core::ptx::print(program, &entry);
    let pattern_tokens = tokens::pattern(pattern);
    let strategy_tokens = tokens::strategy(strategy);
    let layout_tokens = tokens::layout(layout);
    let elem = tokens::rust_type(sig.element);
    let param_types: Vec<TokenStream> = sig.params.iter().filter_map(|p| p.ty.map(tokens::param_type)).collect();
    let param_names: Vec<&syn::Ident> = sig.params.iter().map(|p| &p.name).collect();
    let params_ty = quote!((#(#param_types,)*));
    let entry_points = entry_points(sig, &param_names, &param_types);
    let fused_entry = format!("rc_{name_str}_steps");
    let fused_edges = rc_core::ptx::kernel_entry(&fused_entry, rc_core::machine::Kernel::Edges);
    let fused_ptx = fused.as_ref().map_or(String::new(), |p| rc_core::ptx::print(p, &fused_entry));
    let (with_fused, fused_consts) = (
        quote!(.with_fused(#steps, Self::__FUSED_PTX, Self::FUSED_ENTRY, Self::FUSED_EDGES_ENTRY)),
        quote! {
            /// Time steps one launch of the fused kernel runs (`fuse`, or the cost model's
            /// choice); 1: every step is a launch of the one-step kernel.
            pub const STEPS_PER_LAUNCH: u32 = #steps;
            /// The fused kernel's PTX (empty when `STEPS_PER_LAUNCH` is 1).
            pub const FUSED_PTX: &'static str = Self::__FUSED_PTX;
            #[doc(hidden)]
            pub const __FUSED_PTX: &'static str = #fused_ptx;
            /// The name of the fused kernel's `.entry` in `FUSED_PTX` (and in the kernel of
            /// fewer steps a run's last launch prints when it needs one).
            pub const FUSED_ENTRY: &'static str = #fused_entry;
            /// The `.entry` of the fused launch's second kernel where it runs as two (2D: the
            /// strips along the grid's edges; `FUSED_ENTRY` then runs the interior strips).
            pub const FUSED_EDGES_ENTRY: &'static str = #fused_edges;
        },
    );
    let fields = sig.windows.len() as u32;
    let outputs = sig.returns.outputs();
    let dynamic_shared = program.machine.dynamic_shared_bytes();
    // The core hands the reference one generic window per field, as many as `run_cpu` checked
    // it has inputs; a 2D or 3D function takes each wrapped.
    let windows = Ident::new("windows", Span::mixed_site());
    let window_args = (0..sig.windows.len()).map(|i| match sig.dims {
        Dims::One => quote!(#windows[#i]),
        Dims::Two => quote!(::rc::Window2::from(#windows[#i])),
        Dims::Three => quote!(::rc::Window3::from(#windows[#i])),
    });
    // What the function returns, as one element per output field.
    let results = Ident::new("results", Span::mixed_site());
    let call = quote!(#name(#(#window_args,)* #(#param_names),*));
    let returned = match sig.returns {
        Returns::One => quote!([#call]),
        Returns::Tuple(n) => {
            let r: Vec<Ident> = (0..n).map(|i| Ident::new(&format!("r{i}"), Span::mixed_site())).collect();
            quote!({ let (#(#r,)*) = #call; [#(#r),*] })
        }
        Returns::Array(_) => call,
    };
    let body_tokens = tokens::body(body);
    let user_docs = f.attrs.iter().filter(|attr| attr.path().is_ident("doc"));
    let estimate = program.register_estimate();
    let steps_api = match outputs {
        1 => format!(
            " `run_cpu_steps`, `emulate_steps`, `run_steps` and `launch_steps` run time steps (the output the next \
             input), {steps} per launch of the fused kernel (`FUSED_PTX`; `explain` shows its tile)."
        ),
        n => format!(
            " `run_cpu_steps` and `emulate_steps` run time steps, each output field the next state of the window of \
             its number (the first {n} windows), {steps} per launch of the fused kernel (`FUSED_PTX`; `explain` shows \
             its tile)."
        ),
    };
    let shape_api = match sig.dims {
        Dims::One => steps_api,
        Dims::Two => format!(
            " Inputs and outputs are row-major grids: `run_cpu(input, [rows, cols], output, ..)` and `emulate` take \
             the input's shape, `output_shape([rows, cols])` gives the output's.{steps_api}"
        ),
        Dims::Three => format!(
            " Inputs and outputs are row-major grids: `run_cpu(input, [depth, rows, cols], output, ..)` and `emulate` \
             take the input's shape, `output_shape([depth, rows, cols])` gives the output's.{steps_api}"
        ),
    };
    let outputs_api = match outputs {
        1 => String::new(),
        n => format!(
            " It writes {n} output fields, one per element the function returns, in order: `run_cpu`, `emulate` and \
             `launch` take one output buffer per field after the inputs, `run` returns a `Vec` per field as the \
             function returns its elements."
        ),
    };
    let inputs_api = match sig.windows.len() {
        1 => String::new(),
        n => {
            let names: Vec<String> = sig.windows.iter().map(|w| format!("`{w}`")).collect();
            format!(
                " It reads {n} input fields, one per window ({}): every function takes one input per field, in that \
                 order, all of one length (shape).",
                names.join(", ")
            )
        }
    };
    let summary = format!(
        "The GPU kernel of [`{name_str}`](fn@{name_str}), generated by `#[stencil]`: {pattern}, element {}, \
         strategy {strategy}, distribution {layout}.\n\n\
         Shuffles per output: {:.3}. Registers per thread, estimated: {} ({} cache, {} other values, {} \
         addressing; `rc::runtime::resources(&{name_str}::KERNEL)` gives the GPU's own count).\n\n\
         `run_cpu` is the function itself over a whole input, `emulate` runs this kernel's warp program on the \
         CPU, `explain` prints its schedule, `PTX` is its text; with rc's `cust` or `cudarc` feature, `launch` \
         / `launch_cudarc` and `run` run it on the GPU.{shape_api}{inputs_api}{outputs_api}",
        sig.element,
        program.shuffles_per_output(),
        estimate.total,
        estimate.cache,
        estimate.live_values,
        estimate.addressing,
    );
    // The function as the user wrote it, calling rc's correctly rounded functions (`exp`).
    let f = correctly_rounded::rewrite(f);
    quote! {
        #f

        #(#user_docs)*
        ///
        #[doc = #summary]
        #[allow(non_camel_case_types, dead_code)]
        #[non_exhaustive]
        #vis struct #name {}

        #[allow(dead_code)]
        impl #name {
            /// The kernel handle: pattern, PTX, lowered body and CPU reference together.
            pub const KERNEL: ::rc::Stencil<#elem, #params_ty> = ::rc::Stencil::from_parts(
                #name_str,
                #pattern_tokens,
                #strategy_tokens,
                #layout_tokens,
                Self::__PTX,
                Self::ENTRY,
                #fields,
                #outputs,
                Self::__body,
                Self::__reference,
            )#with_fused.with_dynamic_shared_bytes(#dynamic_shared);
            /// The kernel's PTX, printed by `#[stencil]` at compile time (also `KERNEL.ptx()`).
            pub const PTX: &'static str = Self::__PTX;
            // The text itself, out of the documentation: rustdoc would print it in full.
            #[doc(hidden)]
            pub const __PTX: &'static str = #ptx;
            /// The name of the kernel's `.entry` in `PTX`.
            pub const ENTRY: &'static str = #entry;
            #fused_consts

            // The annotated function with its windows in a slice, its extra parameters in a
            // tuple and what it returns written to `results`, one element per output field: the
            // CPU reference. Hidden: a binary crate's docs list private items too.
            #[doc(hidden)]
            fn __reference(#windows: &[::rc::Window<'_, #elem>], (#(#param_names,)*): #params_ty, #results: &mut [#elem]) {
                for (slot, value) in #results.iter_mut().zip(#returned) {
                    *slot = value;
                }
            }

            #[doc(hidden)]
            fn __body() -> ::std::result::Result<::rc::__private::Body, ::rc::core::BodyError> {
                #body_tokens
            }

            #entry_points

            /// The schedule as a table: per phase, what each lane publishes and reads; its
            /// `machine_program()` (or `{:#}`) is the machine program the kernel runs, as text.
            pub fn explain() -> ::std::result::Result<::rc::Explanation, ::rc::Error> {
                Self::KERNEL.explain()
            }
        }
    }
}

/// `run_cpu`, `emulate` and the GPU functions: over slices in 1D, over grids of a given shape
/// (`[rows, cols]` or `[depth, rows, cols]`, row-major) in 2D and 3D, with `output_shape`. Each
/// window's input is an argument named as the window, in order, before the shape; then one
/// output buffer per output field.
fn entry_points(sig: &Signature, param_names: &[&syn::Ident], param_types: &[TokenStream]) -> TokenStream {
    let (dims, windows) = (sig.dims, &sig.windows);
    let elem = tokens::rust_type(sig.element);
    // What cust buffers of the elements hold (`rc::runtime::DeviceElement`).
    let device = match sig.element.half() {
        Some(_) => quote!(u16),
        None => elem.clone(),
    };
    // The generated functions' own names, which a window or parameter of the same name must not
    // clash with.
    let (output, shape) = (Ident::new("output", Span::mixed_site()), Ident::new("shape", Span::mixed_site()));
    let steps = Ident::new("steps", Span::mixed_site());
    let outs: Vec<Ident> = match sig.returns {
        Returns::One => vec![output.clone()],
        returns => (0..returns.outputs()).map(|i| Ident::new(&format!("output{i}"), Span::mixed_site())).collect(),
    };
    let (run_returns, run_fields) = run_returns(sig.returns, &elem);
    if dims == Dims::One {
        let shape_marker = TokenStream::new();
        let gpu_steps =
            gpu_steps_call(sig, &shape_marker, (&run_returns, &run_fields), (&elem, &device), param_names, param_types);
        return quote! {
            /// Computes every output on the CPU with the annotated function (the reference).
            // One argument per window, output field and parameter.
            #[allow(clippy::too_many_arguments)]
            pub fn run_cpu(#(#windows: &[#elem],)* #(#outs: &mut [#elem],)* #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
                Self::KERNEL.run_cpu(&[#(#windows),*], &mut [#(#outs),*], (#(#param_names,)*))
            }

            /// Runs the kernel's warp program on the CPU, lane by lane, shuffle by shuffle.
            // One argument per window, output field and parameter.
            #[allow(clippy::too_many_arguments)]
            pub fn emulate(#(#windows: &[#elem],)* #(#outs: &mut [#elem],)* #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
                Self::KERNEL.emulate(&[#(#windows),*], &mut [#(#outs),*], (#(#param_names,)*))
            }

            /// `steps` time steps on the CPU: `run_cpu` applied `steps` times, each step's output
            /// field k the next one's input k (the state: the first windows, one per output
            /// field); the other inputs (coefficients) stay as given. Each output has the input's
            /// length, or under `valid` `n - 2 * radius * steps`.
            // One argument per window, output field and parameter.
            #[allow(clippy::too_many_arguments)]
            pub fn run_cpu_steps(#(#windows: &[#elem],)* #(#outs: &mut [#elem],)* #steps: usize, #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
                Self::KERNEL.run_cpu_steps(&[#(#windows),*], &mut [#(#outs),*], #steps, (#(#param_names,)*))
            }

            /// `steps` time steps as the GPU runs them, on the CPU: launches of the fused kernel's
            /// warp program (`STEPS_PER_LAUNCH` steps each) emulated lane by lane, then one-step
            /// launches for the steps left; bit for bit `run_cpu_steps`.
            // One argument per window, output field and parameter.
            #[allow(clippy::too_many_arguments)]
            pub fn emulate_steps(#(#windows: &[#elem],)* #(#outs: &mut [#elem],)* #steps: usize, #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
                Self::KERNEL.emulate_steps(&[#(#windows),*], &mut [#(#outs),*], #steps, (#(#param_names,)*))
            }

            ::rc::__private::gpu_methods! { [#(#windows),*] -> [#(#outs),*]: #run_returns = #run_fields; #elem, #device; #(#param_names: #param_types),* }
            #gpu_steps
        };
    }
    let n = dims.count();
    let shape_ty = quote!([usize; #n]);
    let shape_marker = quote!(shape #shape_ty;);
    let gpu_steps =
        gpu_steps_call(sig, &shape_marker, (&run_returns, &run_fields), (&elem, &device), param_names, param_types);
    quote! {
        /// Computes every output on the CPU with the annotated function (the reference). Each
        /// input is a row-major grid of shape `shape`, outermost first; each output has
        /// `output_shape(shape)`'s shape.
        // One argument per window, output field and parameter.
        #[allow(clippy::too_many_arguments)]
        pub fn run_cpu(#(#windows: &[#elem],)* #shape: #shape_ty, #(#outs: &mut [#elem],)* #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
            Self::KERNEL.run_cpu_grid(&[#(#windows),*], #shape, &mut [#(#outs),*], (#(#param_names,)*))
        }

        /// Runs the kernel's warp program on the CPU, lane by lane, shuffle by shuffle, over
        /// row-major grids of shape `shape`.
        // One argument per window, output field and parameter.
        #[allow(clippy::too_many_arguments)]
        pub fn emulate(#(#windows: &[#elem],)* #shape: #shape_ty, #(#outs: &mut [#elem],)* #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
            Self::KERNEL.emulate_grid(&[#(#windows),*], #shape, &mut [#(#outs),*], (#(#param_names,)*))
        }

        /// `steps` time steps on the CPU: `run_cpu` applied `steps` times, each step's output
        /// field k the next one's input k (the state: the first windows, one per output field);
        /// the other inputs (coefficients) stay as given. Each output has the input's shape, or
        /// under `valid` each dimension `2 * radius * steps` shorter.
        // One argument per window, output field and parameter.
        #[allow(clippy::too_many_arguments)]
        pub fn run_cpu_steps(#(#windows: &[#elem],)* #shape: #shape_ty, #(#outs: &mut [#elem],)* #steps: usize, #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
            Self::KERNEL.run_cpu_steps_grid(&[#(#windows),*], #shape, &mut [#(#outs),*], #steps, (#(#param_names,)*))
        }

        /// `steps` time steps as the GPU runs them, on the CPU: the launches' warp programs
        /// emulated lane by lane; bit for bit `run_cpu_steps`.
        // One argument per window, output field and parameter.
        #[allow(clippy::too_many_arguments)]
        pub fn emulate_steps(#(#windows: &[#elem],)* #shape: #shape_ty, #(#outs: &mut [#elem],)* #steps: usize, #(#param_names: #param_types),*) -> ::std::result::Result<(), ::rc::Error> {
            Self::KERNEL.emulate_steps_grid(&[#(#windows),*], #shape, &mut [#(#outs),*], #steps, (#(#param_names,)*))
        }

        /// The output's shape for an input of shape `shape`, or why there is none (an empty
        /// dimension; under `valid`, a dimension shorter than its window).
        pub fn output_shape(#shape: #shape_ty) -> ::std::result::Result<#shape_ty, ::rc::Error> {
            let #output = Self::KERNEL.output_shape(#shape)?;
            // The output of a grid has the grid's dimensions.
            <#shape_ty>::try_from(#output)
                .map_err(|got| ::rc::Error::from(::rc::LengthError::Dimensions { expected: Self::KERNEL.pattern().dims(), got }))
        }

        ::rc::__private::gpu_methods! { #shape_marker [#(#windows),*] -> [#(#outs),*]: #run_returns = #run_fields; #elem, #device; #(#param_names: #param_types),* }
        #gpu_steps
    }
}

/// The GPU's time-step functions (`shape_marker`: `shape [usize; N];` in 2D and 3D): a pair of
/// buffers for each state field (the first windows, one per output field: `a` and `b` for one,
/// `a0`, `b0`, `a1`, ... for several), then the coefficient windows' buffers; `run_steps`
/// returns the final state as `run` returns its outputs (`run`: `run_returns`).
fn gpu_steps_call(
    sig: &Signature,
    shape_marker: &TokenStream,
    (run_returns, run_fields): (&TokenStream, &TokenStream),
    (elem, device): (&TokenStream, &TokenStream),
    param_names: &[&syn::Ident],
    param_types: &[TokenStream],
) -> TokenStream {
    let states = sig.returns.outputs() as usize;
    let buffer = |name: &str, k: usize| match states {
        1 => Ident::new(name, Span::mixed_site()),
        _ => Ident::new(&format!("{name}{k}"), Span::mixed_site()),
    };
    let pairs = (0..states).map(|k| {
        let (a, b) = (buffer("a", k), buffer("b", k));
        quote!((#a, #b))
    });
    // `check_steps_inputs` refuses a run with fewer windows than state fields; the functions
    // then take none past the state.
    let coefficients = sig.windows.iter().skip(states);
    let windows = &sig.windows;
    quote! {
        ::rc::__private::gpu_steps! {
            #shape_marker [#(#pairs),*] [#(#coefficients),*]; [#(#windows),*]: #run_returns = #run_fields;
            #elem, #device; #(#param_names: #param_types),*
        }
    }
}

/// What `run` returns, the function's return type with a `Vec` for each element, and the
/// closure making it of the runtime's one `Vec` per output field.
fn run_returns(returns: Returns, elem: &TokenStream) -> (TokenStream, TokenStream) {
    let vec = quote!(::std::vec::Vec<#elem>);
    let fields = Ident::new("fields", Span::mixed_site());
    let take = quote!(::rc::runtime::output_fields(&Self::KERNEL, #fields));
    let (ret, value) = match returns {
        Returns::One => (vec.clone(), quote!({ let [r0] = #take?; ::std::result::Result::Ok(r0) })),
        Returns::Tuple(n) => {
            let r: Vec<Ident> = (0..n).map(|i| Ident::new(&format!("r{i}"), Span::mixed_site())).collect();
            let vecs = r.iter().map(|_| &vec);
            (quote!((#(#vecs,)*)), quote!({ let [#(#r),*] = #take?; ::std::result::Result::Ok((#(#r,)*)) }))
        }
        Returns::Array(n) => {
            let n = n as usize;
            (quote!([#vec; #n]), take)
        }
    };
    let closure = quote! {
        |#fields: ::std::vec::Vec<#vec>| -> ::std::result::Result<#ret, ::rc::runtime::Error> { #value }
    };
    (ret, closure)
}
