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

    pub fn has_errors(&self) -> bool {
        self.errors.is_some()
    }

    pub fn into_result(self) -> Result<(), syn::Error> {
        self.errors.map_or(Ok(()), Err)
    }
}
