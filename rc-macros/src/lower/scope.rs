//! Names in scope: the windows, the parameters, `let`s, `const`s and loop indices, innermost
//! first. Apart from the statements that bind them because `if` merging and loop unrolling also
//! push, pop and compare scopes.

use std::rc::Rc;

use super::helper::Helper;
use super::{Lower, Value};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Binding {
    Value(Value),
    Array(Vec<Value>),
    /// A window: the input field it reads, numbered in declaration order.
    Window(u32),
    /// A helper function or closure, inlined at each call.
    Helper(Rc<Helper>),
    /// A `const` or a helper `fn`: an item, which a helper `fn` may see where locals are hidden.
    Item(Box<Binding>),
}

impl Lower<'_> {
    pub(super) fn bind(&mut self, name: String, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, binding);
        }
    }

    /// The binding `name` refers to here: items anywhere, other bindings only in the scopes a
    /// helper `fn` being inlined may see (those from `item_floor` on).
    pub(super) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().enumerate().rev().find_map(|(depth, scope)| match scope.get(name)? {
            Binding::Item(inner) => Some(&**inner),
            _ if depth < self.item_floor => None,
            binding => Some(binding),
        })
    }

    /// Whether `name` is a variable a closure being inlined captured (it may read, not assign it).
    pub(super) fn captured(&self, name: &str) -> bool {
        let depth = self.scopes.iter().rposition(|scope| scope.contains_key(name));
        matches!((depth, self.capture_floor), (Some(d), Some(floor)) if d < floor)
    }

    pub(super) fn rebind(&mut self, name: &str, binding: Binding) -> bool {
        match self.scopes.iter_mut().rev().find(|s| s.contains_key(name)) {
            Some(scope) => {
                scope.insert(name.to_string(), binding);
                true
            }
            None => false,
        }
    }
}
