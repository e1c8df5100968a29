//! `#[stencil]`: a small compiler. `args` reads the attribute, `signature` the function's
//! signature, `lower` turns its body into `rc-core`'s typed body, and `expand` prints the
//! kernel module (PTX included). Every check reports on the offending tokens through `ctxt`,
//! all errors at once; the macro never panics.

mod args;
mod correctly_rounded;
mod ctxt;
mod expand;
mod lower;
mod signature;
mod tokens;

use proc_macro::TokenStream;

// The examples need rc, which this crate cannot depend on: rc runs them as its doctests.
#[doc = include_str!("stencil.md")]
#[proc_macro_attribute]
pub fn stencil(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::stencil(args.into(), item.into()).into()
}
