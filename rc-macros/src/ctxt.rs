//! Collects every error the checks find, so the user sees all of them at once.

use std::collections::HashSet;
use std::fmt::Display;

use quote::ToTokens;

#[derive(Default)]
pub struct Ctxt {
    errors: Option<syn::Error>,
    /// (location, message) of each error so far: a mistake inside an unrolled loop is reported
    /// once, not once per iteration.
    seen: HashSet<(String, String)>,
    /// Whether a mistake reported makes the function itself invalid Rust (a tap of another
    /// window's arity): the fallback then leaves its body out, so rustc does not report the
    /// same mistake a second time.
    not_rust: bool,
}

impl Ctxt {
    pub fn error(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn error_at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn push(&mut self, error: syn::Error) {
        let key = (format!("{:?}", error.span()), error.to_string());
        if !self.seen.insert(key) {
            return;
        }
        match &mut self.errors {
            Some(all) => all.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// An error on tokens that rustc would refuse as well.
    pub fn error_rustc_refuses_too(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.not_rust = true;
        self.error(tokens, message);
    }

    pub fn function_is_rust(&self) -> bool {
        !self.not_rust
    }

    pub fn has_errors(&self) -> bool {
        self.errors.is_some()
    }

    pub fn into_result(self) -> Result<(), syn::Error> {
        self.errors.map_or(Ok(()), Err)
    }
}
