//! The function the user wrote, as the macro emits it: each call of a correctly rounded function
//! (`x.exp()`, `f32::exp(x)`) becomes a call of `rc::math::CorrectlyRounded`'s, so the function
//! (the CPU reference, and the user's own calls of it) computes what the kernel computes. The
//! standard library's `exp` is not correctly rounded; rc's has one answer on every platform.

use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, ItemFn};

/// The methods that mean rc's correctly rounded function inside a stencil.
const FUNCTIONS: &[&str] = &["exp"];

/// `f` with each call of a [`FUNCTIONS`] method turned into rc's.
pub fn rewrite(f: &ItemFn) -> ItemFn {
    let mut f = f.clone();
    Rewrite.visit_item_fn_mut(&mut f);
    f
}

struct Rewrite;

impl VisitMut for Rewrite {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        // Inner calls first: `x.exp().exp()`.
        visit_mut::visit_expr_mut(self, expr);
        let replaced = match expr {
            Expr::MethodCall(call) if call.args.is_empty() && FUNCTIONS.contains(&call.method.to_string().as_str()) => {
                // `(a * b).exp()` takes `a * b` as the argument: parentheses there would draw
                // rustc's unused_parens warning on the user's code.
                let receiver = match &*call.receiver {
                    Expr::Paren(p) => &*p.expr,
                    r => r,
                };
                let method = &call.method;
                Some(quote_spanned!(method.span()=> ::rc::math::CorrectlyRounded::#method(#receiver)))
            }
            // `f32::exp(x)`, `f64::exp(x)`, also written with `std::` or `core::`.
            Expr::Call(call) if call.args.len() == 1 => match &*call.func {
                Expr::Path(p) => {
                    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                    let segs: Vec<&str> =
                        segs.iter().map(String::as_str).skip_while(|s| matches!(*s, "std" | "core")).collect();
                    match segs.as_slice() {
                        ["f32" | "f64", name] if FUNCTIONS.contains(name) => {
                            let (method, arg) = (&p.path.segments.last().expect("two segments").ident, &call.args[0]);
                            Some(quote_spanned!(call.func.span()=> ::rc::math::CorrectlyRounded::#method(#arg)))
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(tokens) = replaced {
            if let Ok(new) = syn::parse2(tokens) {
                *expr = new;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::{quote, ToTokens};

    use super::rewrite;

    #[test]
    fn exp_in_methods_paths_closures_and_helpers_becomes_rcs() {
        let f: syn::ItemFn = syn::parse2(quote! {
            fn f(w: Window<f32>) -> f32 {
                let g = |d: f32| (-d).exp();
                fn h(x: f32) -> f32 { f32::exp(x) + std::f32::exp(x) }
                w[0].exp().exp() + g(w[1]) + h(w[-1]) + w[0].exp2() + w[1].exp_m1()
            }
        })
        .expect("a function");
        let text = rewrite(&f).into_token_stream().to_string();
        assert_eq!(text.matches(":: rc :: math :: CorrectlyRounded :: exp").count(), 5, "{text}");
        // Other methods, with or without a receiver's call, are left as they are.
        assert!(text.contains(". exp2 ()") && text.contains(". exp_m1 ()"), "{text}");
        assert!(!text.contains(". exp ()") && !text.contains("f32 :: exp ("), "{text}");
    }
}
