//! Window taps: `w[d]` in 1D, `w[(dy, dx)]` in 2D, `w[(dz, dy, dx)]` in 3D, outermost first as
//! `Window2` and `Window3` are indexed. Each component is a compile-time integer (a literal, a
//! `const`, a `for` loop index, arithmetic on them) within its dimension's radius. Apart because
//! the window's dimensions decide what a tap may look like.

use quote::ToTokens;
use syn::{Expr, UnOp};

use rc_core::body::Node;
use rc_core::{validate, Dims, Offset};

use super::{Lower, Value};
use crate::args::strip_group;
use crate::signature::window_name;

const NOT_CONSTANT: &str = "a window tap offset must be a constant (a literal, a `const`, or a `for` loop index)";

impl Lower<'_> {
    /// The tap `window[index]` of the window of input field `field`.
    pub(super) fn tap(&mut self, field: u32, window: &str, index: &Expr) -> Value {
        let dims = self.radius.dims();
        let (components, tuple): (Vec<&Expr>, bool) = match strip_group(index) {
            Expr::Tuple(t) => (t.elems.iter().collect(), true),
            _ => (vec![index], false),
        };
        // `Window` takes one offset, never a tuple (`w[(1,)]` does not index it either).
        if components.len() != dims.count() || (dims == Dims::One && tuple) {
            let message = self.arity_message(window, index, tuple, components.len());
            self.cx.error_rustc_refuses_too(index, message);
            return Value::Poison;
        }
        let mut offsets = Vec::with_capacity(components.len());
        for (i, component) in components.iter().enumerate() {
            let v = self.expr(component);
            offsets
                .push(self.const_int_or(&v, component, NOT_CONSTANT).and_then(|d| self.within_radius(d, i, component)));
        }
        let offsets: Option<Vec<i32>> = offsets.into_iter().collect();
        match offsets.as_deref().and_then(Offset::new) {
            Some(offset) => Value::Node(self.push(Node::Tap(field, offset), self.element), self.element),
            None => Value::Poison,
        }
    }

    /// Component `i` (outermost first) of a tap, `d`, if it lies within its dimension's radius.
    fn within_radius(&mut self, d: i64, i: usize, at: &Expr) -> Option<i32> {
        validate::tap(self.radius, i, d).map_err(|e| self.cx.error(at, e)).ok()
    }

    /// Why `window[index]` with `got` offsets (written as a tuple or not) does not fit this
    /// stencil's window, and what to write.
    fn arity_message(&self, window: &str, index: &Expr, tuple: bool, got: usize) -> String {
        let dims = self.radius.dims();
        let element = self.element;
        // Another window kind takes this many offsets: perhaps the stencil was meant to be that.
        let other = Dims::ALL.into_iter().find(|d| d.count() == got && *d != Dims::One && tuple);
        let or_declare = other.map_or(String::new(), |d| {
            format!(", or declare `{window}: {}<{element}>` for a {d} stencil", window_name(d))
        });
        match (dims, tuple) {
            (Dims::One, _) => format!("`Window` is 1D and indexed by one offset: write `{window}[d]`{or_declare}"),
            (_, false) => {
                let names = axes(dims);
                let zeros = "0, ".repeat(dims.count() - 1);
                format!("a {dims} window is indexed by ({names}): write `{window}[({zeros}{})]`", written(index))
            }
            (_, true) => {
                let names = axes(dims);
                let offsets = if got == 1 { "1 offset".to_string() } else { format!("{got} offsets") };
                format!(
                    "a {dims} window is indexed by ({names}), got {offsets}: write `{window}[({names})]`{or_declare}"
                )
            }
        }
    }
}

/// `dy, dx` for 2D, `dz, dy, dx` for 3D.
fn axes(dims: Dims) -> String {
    let names: Vec<String> = (0..dims.count()).map(|i| format!("d{}", dims.axis(i))).collect();
    names.join(", ")
}

/// An offset as the user wrote it, for a suggestion: `-1` rather than the token printer's `- 1`.
fn written(e: &Expr) -> String {
    match e {
        Expr::Group(g) => written(&g.expr),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => format!("-{}", written(&u.expr)),
        other => other.to_token_stream().to_string(),
    }
}
