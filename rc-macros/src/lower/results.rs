//! The body's results: its tail is one value per output field, as the signature returns them
//! (`Returns`): the element itself, a tuple `(a, b)` or an array (`[a, b]`, `[x; N]` or the name
//! of a local array).

use quote::ToTokens;
use syn::{Block, Expr};

use rc_core::body::NodeId;

use super::scope::Binding;
use super::{Lower, Value};
use crate::args::strip_group;
use crate::signature::Returns;

impl Lower<'_> {
    /// The nodes of `block`'s results, one per output field; `None` where one was refused (the
    /// refusal is reported).
    pub(super) fn results(&mut self, block: &Block, returns: Returns) -> Option<Vec<NodeId>> {
        let tail: &dyn ToTokens = match block.stmts.last() {
            Some(stmt) => stmt,
            None => block,
        };
        if returns == Returns::One {
            let value = self.block(block);
            return self.node_for(value, Some(self.element), tail).map(|id| vec![id]);
        }
        let values = self.block_then(block, |lower, expr| lower.result_values(expr, returns));
        let Some(values) = values.flatten() else {
            // A literal tuple or array of another form or count, or one value where several are
            // declared, rustc refuses as well: reported once, without the function.
            let rustc_refuses = match block.stmts.last() {
                Some(syn::Stmt::Expr(expr, None)) => {
                    !matches!(strip_group(expr), Expr::Path(_) | Expr::Block(_) | Expr::If(_))
                }
                _ => true,
            };
            let message = expected(returns, self.element);
            match rustc_refuses {
                true => self.cx.error_rustc_refuses_too(tail, message),
                false => self.cx.error(tail, message),
            }
            return None;
        };
        let element = Some(self.element);
        let nodes: Vec<Option<NodeId>> =
            values.into_iter().map(|(value, at)| self.node_for(value, element, &at)).collect();
        nodes.into_iter().collect()
    }

    /// The values of a tail of `returns`' form, each with the tokens it came from; `None` where
    /// the tail has another form or count (reported by the caller).
    fn result_values(&mut self, expr: &Expr, returns: Returns) -> Option<Vec<(Value, Expr)>> {
        let count = returns.outputs() as usize;
        match (strip_group(expr), returns) {
            (Expr::Tuple(tuple), Returns::Tuple(_)) if tuple.elems.len() == count => {
                Some(tuple.elems.iter().map(|e| (self.expr(e), e.clone())).collect())
            }
            (e @ (Expr::Array(_) | Expr::Repeat(_) | Expr::Path(_)), Returns::Array(_)) => {
                // `site` 0: the tail's literals take the element type below, never a `let`'s.
                match self.binding(e, None, 0) {
                    Binding::Array(values) if values.len() == count => {
                        Some(values.into_iter().map(|v| (v, e.clone())).collect())
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// What the tail must be, for a refusal.
fn expected(returns: Returns, element: rc_core::ScalarType) -> String {
    match returns {
        Returns::One => format!("end the body with its result, one {element}"),
        Returns::Tuple(n) => {
            let names: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
            format!(
                "the function returns {n} values, one per output field: end the body with a tuple of them, `({})`",
                names.join(", ")
            )
        }
        Returns::Array(n) => format!(
            "the function returns [{element}; {n}], one value per output field: end the body with an array of {n} \
             values, `[a, b, ..]`, `[x; {n}]` or the name of a local array"
        ),
    }
}
