//! Names in scope: the window, the parameters, `let`s, `const`s and loop indices, innermost
//! first. Apart from the statements that bind them because `if` merging and loop unrolling also
//! push, pop and compare scopes.

use super::{Lower, Value};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Binding {
    Value(Value),
    Array(Vec<Value>),
    Window,
}

impl Lower<'_> {
    pub(super) fn bind(&mut self, name: String, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, binding);
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
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
