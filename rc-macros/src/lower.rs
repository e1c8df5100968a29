//! Lowers a stencil body from syn to `rc-core`'s typed body: `let`s become renamed values, `for`
//! loops over constant ranges are unrolled, `if`s become selects (or vanish when the condition is
//! known at compile time), and literals take the type Rust would infer for them. Anything outside
//! the supported language is reported on its tokens; lowering then carries on with a poisoned
//! value, so one run reports every problem.

use std::collections::HashMap;

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, ExprForLoop, ExprIf, Item, Lit as SynLit, Local, Pat, RangeLimits, Stmt, Type, UnOp};

use rc_core::body::{BinaryOp, Body, CompareOp, Node, NodeId, UnaryOp};
use rc_core::{ops, Scalar, ScalarType};

use crate::args::strip_group;
use crate::ctxt::Ctxt;
use crate::signature::{scalar, Signature};

/// The `Lit::Var` site of loop indices (no `let` statement lives at address 0).
const LOOP_INDEX: usize = 0;

/// Loops are unrolled; past this many iterations in one body the kernel would not fit anyway.
const MAX_UNROLLED_ITERATIONS: usize = 100_000;

const SUPPORTED_METHODS: &str = "abs, sqrt, min, max, mul_add";

/// A literal whose type Rust infers from where it is used (`2.0` is f32 next to an f32).
#[derive(Clone, Debug, PartialEq)]
enum Lit {
    Int(i128),
    /// The literal's digits, parsed only once its type is known, so it rounds as rustc rounds it.
    Float(String),
    Neg(Box<Lit>),
    Bin(LitOp, Box<Lit>, Box<Lit>),
    /// `if cond { a } else { b }` over literals: typed, like them, by its use.
    Select(NodeId, Box<Lit>, Box<Lit>),
    /// The value of a `let` (identified by its statement) bound to an untyped literal, or of a
    /// loop index (`LOOP_INDEX`): a variable, whose type is its own, not a cast's.
    Var(usize, Box<Lit>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum LitOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug, PartialEq)]
enum Value {
    /// Computed at run time by a node of the body.
    Node(NodeId, ScalarType),
    /// Known at compile time, with its type.
    Known(Scalar),
    /// A literal (or loop index) still waiting for its type.
    Untyped(Lit),
    /// `()`: what a `for` loop or an `if` without `else` produces.
    Unit,
    /// An error was already reported for this value.
    Poison,
}

#[derive(Clone, Debug, PartialEq)]
enum Binding {
    Value(Value),
    Array(Vec<Value>),
    Window,
}

struct Lower<'a> {
    cx: &'a mut Ctxt,
    radius: u32,
    element: ScalarType,
    nodes: Vec<Node>,
    types: Vec<ScalarType>,
    scopes: Vec<HashMap<String, Binding>>,
    unrolled: usize,
    interned: HashMap<Node, NodeId>,
    /// The type each `let` bound to an untyped literal met first (pass one records it, keyed by
    /// the `let` statement)...
    inferred: HashMap<usize, ScalarType>,
    /// ...and gets at that `let` in pass two: rustc gives a binding one type for all its uses
    /// (and all iterations of an unrolled loop).
    preset: HashMap<usize, ScalarType>,
}

/// Lowers `block`, the body of the function `sig` describes. Two passes: the first only learns
/// the types of `let`-bound literals from their uses (its errors are dropped), the second lowers
/// with those types known at each `let`.
pub fn lower(block: &Block, sig: &Signature, radius: u32, cx: &mut Ctxt) -> Option<Body> {
    let mut learn = Ctxt::default();
    let (_, first) = run(block, sig, radius, &mut learn, HashMap::new());
    let (result, second) = run(block, sig, radius, cx, first.inferred);
    let Lower { nodes, cx, .. } = second;
    if cx.has_errors() {
        return None;
    }
    let params = sig.params.iter().filter_map(|p| p.ty).collect();
    match Body::new(sig.element, params, radius, nodes, result?) {
        Ok(body) => Some(body),
        // The checks above mirror Body::new's; if they ever disagree, say so on the body.
        Err(e) => {
            cx.error(block, format!("internal error lowering this body: {e}"));
            None
        }
    }
}

fn run<'a>(
    block: &Block,
    sig: &Signature,
    radius: u32,
    cx: &'a mut Ctxt,
    preset: HashMap<usize, ScalarType>,
) -> (Option<NodeId>, Lower<'a>) {
    let mut lower = Lower {
        cx,
        radius,
        element: sig.element,
        nodes: Vec::new(),
        types: Vec::new(),
        scopes: vec![HashMap::new()],
        unrolled: 0,
        interned: HashMap::new(),
        inferred: HashMap::new(),
        preset,
    };
    lower.bind(sig.window.to_string(), Binding::Window);
    for (i, param) in sig.params.iter().enumerate() {
        let value = match param.ty {
            Some(ty) => Value::Node(lower.push(Node::Param(i as u32), ty), ty),
            None => Value::Poison,
        };
        lower.bind(param.name.to_string(), Binding::Value(value));
    }
    let value = lower.block(block);
    let tail: &dyn ToTokens = match block.stmts.last() {
        Some(stmt) => stmt,
        None => block,
    };
    let result = lower.to_node(value, Some(sig.element), tail);
    (result, lower)
}

impl Lower<'_> {
    fn bind(&mut self, name: String, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, binding);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn rebind(&mut self, name: &str, binding: Binding) -> bool {
        match self.scopes.iter_mut().rev().find(|s| s.contains_key(name)) {
            Some(scope) => {
                scope.insert(name.to_string(), binding);
                true
            }
            None => false,
        }
    }

    fn push(&mut self, node: Node, ty: ScalarType) -> NodeId {
        if let Some(&id) = self.interned.get(&node) {
            return id;
        }
        self.nodes.push(node);
        self.types.push(ty);
        let id = self.nodes.len() as NodeId - 1;
        self.interned.insert(node, id);
        id
    }

    // ---- statements -------------------------------------------------------------------------

    fn block(&mut self, block: &Block) -> Value {
        self.scopes.push(HashMap::new());
        let mut last = Value::Unit;
        for (i, stmt) in block.stmts.iter().enumerate() {
            last = Value::Unit;
            match stmt {
                Stmt::Local(local) => self.local(local),
                Stmt::Item(item) => self.item(item),
                Stmt::Expr(expr, semi) => {
                    let value = self.statement(expr);
                    if semi.is_none() && i + 1 == block.stmts.len() {
                        last = value;
                    }
                }
                Stmt::Macro(m) => self.cx.error(m, "macros are not supported in a stencil body"),
            }
        }
        self.scopes.pop();
        last
    }

    fn statement(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Assign(assign) => {
                let value = self.expr(&assign.right);
                self.assign(&assign.left, value);
                Value::Unit
            }
            Expr::Binary(b) => match compound(&b.op) {
                Some(op) => {
                    let current = self.expr(&b.left);
                    let rhs = self.expr(&b.right);
                    let value = self.binary(&op, current, rhs, expr, [&b.left, &b.right]);
                    self.assign(&b.left, value);
                    Value::Unit
                }
                None => self.expr(expr),
            },
            other => self.expr(other),
        }
    }

    fn assign(&mut self, target: &Expr, value: Value) {
        match strip_group(target) {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.segments[0].ident.to_string();
                match self.lookup(&name) {
                    Some(Binding::Value(old)) => {
                        let value = self.retype_like(value, old.clone(), target);
                        self.rebind(&name, Binding::Value(value));
                    }
                    Some(Binding::Window) => self.cx.error(target, "the window is read-only"),
                    Some(Binding::Array(_)) => self.cx.error(target, "assigning a whole array is not supported"),
                    None => self.cx.error(target, format!("unknown name `{name}`")),
                }
            }
            other => self.cx.error(other, "only local variables can be assigned to"),
        }
    }

    /// A new value for a variable keeps the variable's type (an untyped literal takes it on).
    fn retype_like(&mut self, value: Value, old: Value, at: &dyn ToTokens) -> Value {
        match (value, type_of(&old)) {
            (Value::Untyped(lit), Some(ty)) => self.typed(&lit, ty, at),
            (value, _) => value,
        }
    }

    fn local(&mut self, local: &Local) {
        let (ident, ty) = match &local.pat {
            Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => (id.ident.to_string(), None),
            Pat::Type(pt) => match &*pt.pat {
                Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => (id.ident.to_string(), Some(&*pt.ty)),
                other => {
                    self.cx.error(other, "bind one name per `let` (patterns are not supported)");
                    return;
                }
            },
            other => {
                self.cx.error(other, "bind one name per `let` (patterns are not supported)");
                return;
            }
        };
        let Some(init) = &local.init else {
            self.cx.error(local, "a `let` needs a value: `let name = expr;`");
            return;
        };
        if let Some((_, diverge)) = &init.diverge {
            self.cx.error(diverge, "`let ... else` is not supported");
            return;
        }
        let binding = self.binding(&init.expr, ty, local as *const Local as usize);
        self.bind(ident, binding);
    }

    /// The value of a `let` or `const`, converted to its declared type if it has one.
    /// `site` identifies the statement, for the two-pass typing of untyped literals.
    fn binding(&mut self, expr: &Expr, ty: Option<&Type>, site: usize) -> Binding {
        match (strip_group(expr), ty.map(strip_type)) {
            (Expr::Array(arr), ty) => {
                let elem = match ty {
                    Some(Type::Array(a)) => Some(scalar(&a.elem)),
                    _ => None,
                };
                let values = arr
                    .elems
                    .iter()
                    .map(|e| {
                        let v = self.expr(e);
                        match elem {
                            Some(Some(t)) => self.convert(v, t, e),
                            _ => v,
                        }
                    })
                    .collect();
                Binding::Array(values)
            }
            (Expr::Repeat(rep), ty) => {
                let count = self.expr(&rep.len);
                let Some(n) = self.const_int(&count, &rep.len) else { return Binding::Value(Value::Poison) };
                let mut v = self.expr(&rep.expr);
                if let Some(Type::Array(a)) = ty {
                    if let Some(t) = scalar(&a.elem) {
                        v = self.convert(v, t, &rep.expr);
                    }
                }
                Binding::Array(vec![v; n.max(0) as usize])
            }
            (e, Some(t)) => {
                let v = self.expr(e);
                match scalar_or_bool(t) {
                    Some(st) => Binding::Value(self.convert(v, st, e)),
                    // Index-typed constants (usize, i64, ...) stay compile-time integers.
                    None if is_index_type(t) => Binding::Value(v),
                    None => {
                        self.cx.error(t, "unsupported type: a stencil computes with f32, f64, i32, u32 and bool");
                        Binding::Value(Value::Poison)
                    }
                }
            }
            (e, None) => Binding::Value(match self.expr(e) {
                Value::Untyped(lit) => match self.preset.get(&site) {
                    Some(&ty) => self.typed(&lit, ty, e),
                    None => Value::Untyped(Lit::Var(site, Box::new(lit))),
                },
                v => v,
            }),
        }
    }

    /// `value` as type `ty`, as a typed `let` or `const` declares it.
    fn convert(&mut self, value: Value, ty: ScalarType, at: &dyn ToTokens) -> Value {
        match value {
            Value::Untyped(lit) => self.typed(&lit, ty, at),
            Value::Known(s) if s.ty != ty => self.mismatch(ty, s.ty, at),
            Value::Node(_, t) if t != ty => self.mismatch(ty, t, at),
            other => other,
        }
    }

    fn mismatch(&mut self, expected: ScalarType, got: ScalarType, at: &dyn ToTokens) -> Value {
        self.cx.error(at, format!("mismatched types: expected {expected}, got {got}"));
        Value::Poison
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Const(c) => {
                let binding = self.binding(&c.expr, Some(&c.ty), c as *const syn::ItemConst as usize);
                self.bind(c.ident.to_string(), binding);
            }
            other => self.cx.error(other, "only `const` items may be declared inside a stencil body"),
        }
    }

    // ---- expressions ------------------------------------------------------------------------

    fn expr(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Path(p) => self.path(p),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Index(ix) => self.index(&ix.expr, &ix.index, expr),
            Expr::Binary(b) => {
                if compound(&b.op).is_some() {
                    self.cx.error(expr, "compound assignment is a statement, not a value");
                    return Value::Poison;
                }
                let (l, r) = (self.expr(&b.left), self.expr(&b.right));
                self.binary(&b.op, l, r, expr, [&b.left, &b.right])
            }
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    // `-2147483648i32`: the literal is negated before it is narrowed, as rustc does.
                    if let Expr::Lit(syn::ExprLit { lit: SynLit::Int(i), .. }) = strip_group(&u.expr) {
                        if let (Some(ty), Ok(v)) = (ScalarType::from_rust_name(i.suffix()), i.base10_parse::<i128>()) {
                            if ty.is_integer() {
                                return self.materialize(&Lit::Int(-v), ty, expr).map_or(Value::Poison, Value::Known);
                            }
                        }
                    }
                    let v = self.expr(&u.expr);
                    self.unary(UnaryOp::Neg, v, expr)
                }
                UnOp::Not(_) => {
                    let v = self.expr(&u.expr);
                    self.unary(UnaryOp::Not, v, expr)
                }
                _ => match self.expr(&u.expr) {
                    Value::Poison => Value::Poison,
                    _ => self.unsupported(expr, "dereferencing is not supported: a stencil body works on values"),
                },
            },
            Expr::Cast(c) => {
                let v = self.expr(&c.expr);
                self.cast(v, &c.ty, expr)
            }
            Expr::MethodCall(m) => {
                let receiver = self.expr(&m.receiver);
                let args: Vec<Value> = m.args.iter().map(|a| self.expr(a)).collect();
                self.method(&m.method.to_string(), receiver, args, &m.method, expr)
            }
            Expr::Call(call) => self.call(call, expr),
            Expr::If(e) => self.if_expr(e),
            Expr::Block(b) => {
                if b.label.is_some() {
                    return self.unsupported(expr, "labeled blocks are not supported");
                }
                self.block(&b.block)
            }
            Expr::Unsafe(_) => self.unsupported(expr, "`unsafe` blocks are not supported in a stencil body"),
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::Reference(_) => self.unsupported(expr, "references are not supported: a stencil body works on values"),
            Expr::Closure(_) => self.unsupported(expr, "closures are not supported in a stencil body"),
            Expr::While(_) | Expr::Loop(_) => {
                self.unsupported(expr, "only `for` loops over constant ranges are supported (they are unrolled)")
            }
            Expr::Return(_) => self.unsupported(expr, "`return` is not supported: end the body with its result"),
            Expr::Break(_) | Expr::Continue(_) => {
                self.unsupported(expr, "`break` and `continue` are not supported: loops are unrolled")
            }
            Expr::Macro(_) => self.unsupported(expr, "macros are not supported in a stencil body"),
            Expr::Array(_) | Expr::Repeat(_) => {
                self.unsupported(expr, "arrays must be bound to a name first: `let c = [..];` or `const C: [f32; N] = [..];`")
            }
            Expr::Assign(_) => self.unsupported(expr, "assignment is a statement, not a value"),
            Expr::Match(_) => self.unsupported(expr, "`match` is not supported: use `if`/`else`"),
            _ => self.unsupported(expr, "unsupported expression in a stencil body"),
        }
    }

    fn unsupported(&mut self, tokens: &dyn ToTokens, message: &str) -> Value {
        self.cx.error(tokens, message);
        Value::Poison
    }

    fn literal(&mut self, lit: &SynLit) -> Value {
        match lit {
            SynLit::Int(i) => {
                if matches!(i.suffix(), "f32" | "f64") {
                    // `2f32` is a float literal that syn reads as an integer with a suffix.
                    let ty = ScalarType::from_rust_name(i.suffix()).unwrap_or(ScalarType::F64);
                    let digits = i.base10_digits().to_string();
                    return self.materialize(&Lit::Float(digits), ty, lit).map_or(Value::Poison, Value::Known);
                }
                let Ok(v) = i.base10_parse::<i128>() else {
                    return self.unsupported(lit, "integer literal out of range");
                };
                match ScalarType::from_rust_name(i.suffix()) {
                    Some(ty) => self.materialize(&Lit::Int(v), ty, lit).map_or(Value::Poison, Value::Known),
                    None => Value::Untyped(Lit::Int(v)),
                }
            }
            SynLit::Float(f) => {
                let digits = f.base10_digits().to_string();
                match ScalarType::from_rust_name(f.suffix()) {
                    Some(ty) => self.materialize(&Lit::Float(digits), ty, lit).map_or(Value::Poison, Value::Known),
                    None => Value::Untyped(Lit::Float(digits)),
                }
            }
            SynLit::Bool(b) => Value::Known(Scalar::bool(b.value)),
            other => self.unsupported(other, "only numeric and boolean literals are supported"),
        }
    }

    fn path(&mut self, p: &syn::ExprPath) -> Value {
        if let Some(ident) = p.path.get_ident() {
            let name = ident.to_string();
            return match self.lookup(&name) {
                Some(Binding::Value(v)) => v.clone(),
                Some(Binding::Window) => {
                    self.unsupported(p, "the window is read through taps with constant offsets: `w[-1]`, `w[k]`")
                }
                Some(Binding::Array(_)) => self.unsupported(p, "index the array with a constant: `C[k]`"),
                None => self.unsupported(
                    p,
                    &format!(
                        "unknown name `{name}`: a stencil body sees its window, its parameters, its own `let`s \
                         and `const`s declared inside the body"
                    ),
                ),
            };
        }
        match associated_const(&p.path) {
            Some(s) => Value::Known(s),
            None => self.unsupported(p, "unsupported path: only `f32::MAX`-style constants and `f32::consts::PI`-style constants are known"),
        }
    }

    fn index(&mut self, base: &Expr, index: &Expr, whole: &Expr) -> Value {
        let Expr::Path(p) = strip_group(base) else {
            return self.unsupported(base, "only the window and named arrays can be indexed");
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return self.unsupported(base, "only the window and named arrays can be indexed");
        };
        let iv = self.expr(index);
        match self.lookup(&name).cloned() {
            Some(Binding::Window) => {
                let Some(d) = self.const_int_or(&iv, index, "a window tap offset must be a constant (a literal, a `const`, or a `for` loop index)") else {
                    return Value::Poison;
                };
                let r = self.radius as i128;
                if !(-r..=r).contains(&(d as i128)) {
                    return self.unsupported(index, &format!("tap offset {d} is outside the radius: taps must lie in -{r}..={r}"));
                }
                let id = self.push(Node::Tap(d as i32), self.element);
                Value::Node(id, self.element)
            }
            Some(Binding::Array(values)) => {
                let Some(i) = self.const_int_or(&iv, index, "an array index must be a constant (a literal, a `const`, or a `for` loop index)") else {
                    return Value::Poison;
                };
                match usize::try_from(i).ok().and_then(|i| values.get(i)) {
                    Some(v) => v.clone(),
                    None => self.unsupported(whole, &format!("index {i} is out of bounds for an array of length {}", values.len())),
                }
            }
            Some(Binding::Value(_)) => self.unsupported(base, &format!("`{name}` is not an array")),
            None => self.unsupported(base, &format!("unknown name `{name}`")),
        }
    }

    fn const_int_or(&mut self, v: &Value, at: &dyn ToTokens, message: &str) -> Option<i64> {
        let got = match v {
            Value::Poison => return None,
            Value::Node(_, ty) => format!("{} computed at run time", with_article(*ty)),
            Value::Known(s) => format!("a constant {}", s.ty),
            Value::Untyped(Lit::Select(..)) => "a value chosen at run time".to_string(),
            Value::Untyped(_) => "a float literal".to_string(),
            Value::Unit => "`()`".to_string(),
        };
        match int_value(v) {
            Some(i) => Some(i),
            None => {
                self.cx.error(at, format!("{message}; got {got}"));
                None
            }
        }
    }

    fn const_int(&mut self, v: &Value, at: &dyn ToTokens) -> Option<i64> {
        self.const_int_or(v, at, "expected a constant integer")
    }

    /// `a op b`; `sides` are the operands' tokens, for errors about one of them.
    fn binary(&mut self, op: &BinOp, a: Value, b: Value, at: &Expr, sides: [&dyn ToTokens; 2]) -> Value {
        let kind = match op {
            BinOp::Add(_) => Kind::Arith(BinaryOp::Add, LitOp::Add),
            BinOp::Sub(_) => Kind::Arith(BinaryOp::Sub, LitOp::Sub),
            BinOp::Mul(_) => Kind::Arith(BinaryOp::Mul, LitOp::Mul),
            BinOp::Div(_) => Kind::Arith(BinaryOp::Div, LitOp::Div),
            BinOp::Rem(_) => Kind::Rem,
            BinOp::And(_) => Kind::Logic(BinaryOp::And),
            BinOp::Or(_) => Kind::Logic(BinaryOp::Or),
            BinOp::Eq(_) => Kind::Compare(CompareOp::Eq),
            BinOp::Ne(_) => Kind::Compare(CompareOp::Ne),
            BinOp::Lt(_) => Kind::Compare(CompareOp::Lt),
            BinOp::Le(_) => Kind::Compare(CompareOp::Le),
            BinOp::Gt(_) => Kind::Compare(CompareOp::Gt),
            BinOp::Ge(_) => Kind::Compare(CompareOp::Ge),
            _ => return self.unsupported(at, "bitwise operators are not supported in a stencil body"),
        };
        match (a, b) {
            (Value::Poison, _) | (_, Value::Poison) => Value::Poison,
            (Value::Unit, _) | (_, Value::Unit) => self.unsupported(at, "this operand has no value (it is `()`)"),
            (Value::Untyped(x), Value::Untyped(y)) => match kind {
                Kind::Arith(_, lop) => Value::Untyped(Lit::Bin(lop, Box::new(x), Box::new(y))),
                Kind::Rem => Value::Untyped(Lit::Bin(LitOp::Rem, Box::new(x), Box::new(y))),
                Kind::Compare(_) => {
                    let ty = default_type(&x).max_by_float(default_type(&y));
                    let (x, y) = (self.typed(&x, ty, sides[0]), self.typed(&y, ty, sides[1]));
                    self.binary(op, x, y, at, sides)
                }
                Kind::Logic(_) => self.unsupported(at, "`&&` and `||` take bools"),
            },
            (Value::Untyped(x), other) => {
                let Some(ty) = type_of(&other) else { return Value::Poison };
                let x = self.typed(&x, ty, sides[0]);
                self.binary(op, x, other, at, sides)
            }
            (other, Value::Untyped(y)) => {
                let Some(ty) = type_of(&other) else { return Value::Poison };
                let y = self.typed(&y, ty, sides[1]);
                self.binary(op, other, y, at, sides)
            }
            (a, b) => {
                let (Some(ta), Some(tb)) = (type_of(&a), type_of(&b)) else { return Value::Poison };
                if ta != tb {
                    return self.unsupported(at, &format!("mismatched types: {ta} and {tb} (convert one with `as`)"));
                }
                let (bop, result) = match kind {
                    Kind::Arith(BinaryOp::Div, _) if ta.is_integer() => {
                        if let (Value::Known(x), Value::Known(y)) = (&a, &b) {
                            return self.fold_int(LitOp::Div, *x, *y, at);
                        }
                        return self.unsupported(
                            op,
                            "integer division is not supported: the CPU panics on a zero divisor and the GPU cannot do the same",
                        );
                    }
                    Kind::Rem => {
                        if let (Value::Known(x), Value::Known(y)) = (&a, &b) {
                            if ta.is_integer() {
                                return self.fold_int(LitOp::Rem, *x, *y, at);
                            }
                        }
                        return self.unsupported(op, "`%` is supported only between constant integers");
                    }
                    Kind::Arith(bop, _) if ta == ScalarType::Bool => {
                        let _ = bop;
                        return self.unsupported(at, "arithmetic on bool is not supported");
                    }
                    Kind::Arith(bop, _) => (Op::Binary(bop), ta),
                    Kind::Logic(bop) if ta == ScalarType::Bool => (Op::Binary(bop), ta),
                    Kind::Logic(_) => return self.unsupported(at, &format!("`&&` and `||` take bools, got {ta}")),
                    Kind::Compare(cop) => (Op::Compare(cop), ScalarType::Bool),
                };
                match (a, b) {
                    (Value::Known(x), Value::Known(y)) => Value::Known(Scalar::new(
                        result,
                        match bop {
                            Op::Binary(o) => ops::binary(o, ta, x.bits, y.bits),
                            Op::Compare(o) => ops::compare(o, ta, x.bits, y.bits),
                        },
                    )),
                    (a, b) => {
                        let (Some(x), Some(y)) = (self.to_node(a, Some(ta), at), self.to_node(b, Some(ta), at)) else {
                            return Value::Poison;
                        };
                        let node = match bop {
                            Op::Binary(o) => Node::Binary(o, x, y),
                            Op::Compare(o) => Node::Compare(o, x, y),
                        };
                        Value::Node(self.push(node, result), result)
                    }
                }
            }
        }
    }

    fn fold_int(&mut self, op: LitOp, x: Scalar, y: Scalar, at: &dyn ToTokens) -> Value {
        let (Some(a), Some(b)) = (int_value(&Value::Known(x)), int_value(&Value::Known(y))) else { return Value::Poison };
        let lit = Lit::Bin(op, Box::new(Lit::Int(a as i128)), Box::new(Lit::Int(b as i128)));
        self.materialize(&lit, x.ty, at).map_or(Value::Poison, Value::Known)
    }

    fn unary(&mut self, op: UnaryOp, v: Value, at: &Expr) -> Value {
        match v {
            Value::Poison => Value::Poison,
            Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
            Value::Untyped(lit) if op == UnaryOp::Neg => Value::Untyped(Lit::Neg(Box::new(lit))),
            Value::Untyped(lit) => {
                let v = self.typed(&lit, default_type(&lit), at);
                self.unary(op, v, at)
            }
            Value::Known(s) => match unary_ok(op, s.ty) {
                Ok(()) => Value::Known(Scalar::new(s.ty, ops::unary(op, s.ty, s.bits))),
                Err(m) => self.unsupported(at, &m),
            },
            Value::Node(id, ty) => match unary_ok(op, ty) {
                Ok(()) => Value::Node(self.push(Node::Unary(op, id), ty), ty),
                Err(m) => self.unsupported(at, &m),
            },
        }
    }

    fn cast(&mut self, v: Value, ty: &Type, at: &Expr) -> Value {
        let Some(to) = scalar(ty) else {
            if is_index_type(strip_type(ty)) {
                return match int_value(&v) {
                    Some(i) => Value::Untyped(Lit::Int(i as i128)),
                    None if v == Value::Poison => Value::Poison,
                    None => self.unsupported(at, "casts to index types are allowed only on constant integers"),
                };
            }
            return self.unsupported(ty, "unsupported cast target: a stencil computes with f32, f64, i32 and u32");
        };
        match v {
            Value::Poison => Value::Poison,
            Value::Unit => self.unsupported(at, "this operand has no value (it is `()`)"),
            Value::Untyped(lit) => {
                // rustc types a literal (or a negated one) under `as` as the target when it can
                // be one (`3000000000 as u32`, `1.1 as f32`); anything else keeps its own type.
                let ty_of_lit = match &lit {
                    Lit::Int(_) | Lit::Float(_) if is_float_lit(&lit) == to.is_float() => to,
                    Lit::Neg(inner) if matches!(**inner, Lit::Int(_) | Lit::Float(_)) && is_float_lit(&lit) == to.is_float() => to,
                    // Expressions, selects and variables keep their own (fallback) type.
                    l => default_type(l),
                };
                let v = self.typed_as(&lit, ty_of_lit, at);
                self.cast(v, ty, at)
            }
            Value::Known(s) if s.ty == ScalarType::Bool && to.is_float() => {
                self.unsupported(at, "a bool can be cast only to an integer")
            }
            Value::Known(s) => Value::Known(Scalar::new(to, ops::cast(s.ty, to, s.bits))),
            Value::Node(id, from) if from == to => Value::Node(id, from),
            Value::Node(_, ScalarType::Bool) if to.is_float() => self.unsupported(at, "a bool can be cast only to an integer"),
            Value::Node(id, _) => Value::Node(self.push(Node::Cast(to, id), to), to),
        }
    }

    fn call(&mut self, call: &syn::ExprCall, at: &Expr) -> Value {
        // `f32::max(a, b)` is `a.max(b)`.
        if let Expr::Path(p) = strip_group(&call.func) {
            let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            if let [ty, method] = segs.as_slice() {
                if let Some(t) = ScalarType::from_rust_name(ty) {
                    let mut args: Vec<Value> = call.args.iter().map(|a| self.expr(a)).collect();
                    if args.is_empty() {
                        return self.unsupported(at, &format!("`{ty}::{method}` needs arguments"));
                    }
                    let receiver = match args.remove(0) {
                        Value::Untyped(lit) => self.typed(&lit, t, at),
                        v => v,
                    };
                    let method_tokens = &p.path.segments[1].ident;
                    return self.method(method, receiver, args, method_tokens, at);
                }
            }
        }
        if let Expr::Path(p) = strip_group(&call.func) {
            let poisoned = p.path.get_ident().and_then(|i| self.lookup(&i.to_string()));
            if poisoned == Some(&Binding::Value(Value::Poison)) {
                return Value::Poison;
            }
        }
        self.unsupported(
            &call.func,
            &format!("function calls are not supported in a stencil body; the supported operations are {SUPPORTED_METHODS}"),
        )
    }

    fn method(&mut self, name: &str, receiver: Value, args: Vec<Value>, name_tokens: &dyn ToTokens, at: &Expr) -> Value {
        let arity = match name {
            "abs" | "sqrt" => 0,
            "min" | "max" => 1,
            "mul_add" => 2,
            _ => {
                return self.unsupported(
                    name_tokens,
                    &format!("unsupported method `{name}`: a stencil body may call {SUPPORTED_METHODS}"),
                )
            }
        };
        if args.len() != arity {
            return self.unsupported(at, &format!("`{name}` takes {arity} argument(s), got {}", args.len()));
        }
        if receiver == Value::Poison || args.contains(&Value::Poison) {
            return Value::Poison;
        }
        // The type comes from whichever operand has one; literals follow it.
        let ty = std::iter::once(&receiver)
            .chain(&args)
            .find_map(type_of)
            .unwrap_or_else(|| match &receiver {
                Value::Untyped(l) => default_type(l),
                _ => ScalarType::F64,
            });
        let mut operands = Vec::with_capacity(3);
        for v in std::iter::once(receiver).chain(args) {
            let v = match v {
                Value::Untyped(lit) => match self.typed(&lit, ty, at) {
                    Value::Poison => return Value::Poison,
                    v => v,
                },
                Value::Unit => return self.unsupported(at, "this operand has no value (it is `()`)"),
                v => v,
            };
            if type_of(&v) != Some(ty) {
                let got = type_of(&v).unwrap_or(ty);
                return self.unsupported(at, &format!("mismatched types in `{name}`: expected {ty}, got {got}"));
            }
            operands.push(v);
        }
        let check = match name {
            "sqrt" | "mul_add" if !ty.is_float() => Err(format!("`{name}` is defined on f32 and f64, not {ty}")),
            "abs" => unary_ok(UnaryOp::Abs, ty),
            "min" | "max" if ty == ScalarType::Bool => Err(format!("`{name}` is not supported on bool")),
            _ => Ok(()),
        };
        if let Err(m) = check {
            return self.unsupported(at, &m);
        }
        // Fold when everything is known.
        if operands.iter().all(|v| matches!(v, Value::Known(_))) {
            let bits: Vec<u64> = operands.iter().filter_map(|v| if let Value::Known(s) = v { Some(s.bits) } else { None }).collect();
            let out = match name {
                "abs" => ops::unary(UnaryOp::Abs, ty, bits[0]),
                "sqrt" => ops::unary(UnaryOp::Sqrt, ty, bits[0]),
                "min" => ops::binary(BinaryOp::Min, ty, bits[0], bits[1]),
                "max" => ops::binary(BinaryOp::Max, ty, bits[0], bits[1]),
                _ => ops::mul_add(ty, bits[0], bits[1], bits[2]),
            };
            return Value::Known(Scalar::new(ty, out));
        }
        let mut ids = Vec::with_capacity(3);
        for v in operands {
            match self.to_node(v, Some(ty), at) {
                Some(id) => ids.push(id),
                None => return Value::Poison,
            }
        }
        let node = match name {
            "abs" => Node::Unary(UnaryOp::Abs, ids[0]),
            "sqrt" => Node::Unary(UnaryOp::Sqrt, ids[0]),
            "min" => Node::Binary(BinaryOp::Min, ids[0], ids[1]),
            "max" => Node::Binary(BinaryOp::Max, ids[0], ids[1]),
            _ => Node::MulAdd(ids[0], ids[1], ids[2]),
        };
        Value::Node(self.push(node, ty), ty)
    }

    fn if_expr(&mut self, e: &ExprIf) -> Value {
        let cond = self.expr(&e.cond);
        let cond = match cond {
            Value::Poison => return Value::Poison,
            Value::Known(s) if s.ty == ScalarType::Bool => {
                // Known at compile time (e.g. on a loop index): only one branch exists.
                return if s.bits != 0 {
                    self.block(&e.then_branch)
                } else {
                    e.else_branch.as_ref().map_or(Value::Unit, |(_, b)| self.expr(b))
                };
            }
            Value::Node(id, ScalarType::Bool) => id,
            _ => return self.unsupported(&e.cond, "an `if` condition must be a bool"),
        };
        let before = self.scopes.clone();
        let then_value = self.block(&e.then_branch);
        let after_then = std::mem::replace(&mut self.scopes, before);
        let else_value = e.else_branch.as_ref().map_or(Value::Unit, |(_, b)| self.expr(b));
        let after_else = std::mem::take(&mut self.scopes);
        // Variables assigned in either branch become a select between the two outcomes.
        let mut merged = Vec::with_capacity(after_then.len());
        for (then_scope, else_scope) in after_then.into_iter().zip(after_else) {
            let mut scope = HashMap::new();
            for (name, else_binding) in else_scope {
                let binding = match (then_scope.get(&name), else_binding) {
                    (Some(Binding::Value(t)), Binding::Value(f)) if *t != f => {
                        Binding::Value(self.select(cond, t.clone(), f, &e.cond))
                    }
                    (Some(Binding::Array(t)), Binding::Array(f)) if *t != f => Binding::Array(
                        t.clone().into_iter().zip(f).map(|(t, f)| if t == f { t } else { self.select(cond, t, f, &e.cond) }).collect(),
                    ),
                    (_, b) => b,
                };
                scope.insert(name, binding);
            }
            merged.push(scope);
        }
        self.scopes = merged;
        match (then_value, else_value) {
            (Value::Unit, Value::Unit) => Value::Unit,
            (t, f) => self.select(cond, t, f, &e.cond),
        }
    }

    fn select(&mut self, cond: NodeId, t: Value, f: Value, at: &dyn ToTokens) -> Value {
        if t == Value::Poison || f == Value::Poison {
            return Value::Poison;
        }
        if t == Value::Unit || f == Value::Unit {
            self.cx.error(at, "an `if` used as a value needs an `else` with a value of the same type");
            return Value::Poison;
        }
        // Two literals: the select stays untyped until its use gives it a type, as in Rust.
        if let (Value::Untyped(a), Value::Untyped(b)) = (&t, &f) {
            return Value::Untyped(Lit::Select(cond, Box::new(a.clone()), Box::new(b.clone())));
        }
        let ty = type_of(&t).or(type_of(&f)).unwrap_or_else(|| match &t {
            Value::Untyped(l) => default_type(l),
            _ => ScalarType::F64,
        });
        let (Some(a), Some(b)) = (self.to_node(t, Some(ty), at), self.to_node(f, Some(ty), at)) else {
            return Value::Poison;
        };
        if self.types[a as usize] != self.types[b as usize] {
            self.cx.error(at, format!("`if` and `else` have different types: {} and {}", self.types[a as usize], self.types[b as usize]));
            return Value::Poison;
        }
        Value::Node(self.push(Node::Select { cond, then: a, otherwise: b }, ty), ty)
    }

    fn for_loop(&mut self, f: &ExprForLoop) -> Value {
        if f.label.is_some() {
            return self.unsupported(f, "labeled loops are not supported");
        }
        let name = match &*f.pat {
            Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => Some(id.ident.to_string()),
            Pat::Wild(_) => None,
            other => return self.unsupported(other, "a `for` loop binds one index: `for k in -3..=3`"),
        };
        let Some(indices) = self.range(&f.expr) else { return Value::Poison };
        self.unrolled += indices.len();
        if self.unrolled > MAX_UNROLLED_ITERATIONS {
            return self.unsupported(&f.expr, &format!("loops unroll to more than {MAX_UNROLLED_ITERATIONS} iterations in total"));
        }
        for k in indices {
            self.scopes.push(HashMap::new());
            if let Some(name) = &name {
                let index = Lit::Var(LOOP_INDEX, Box::new(Lit::Int(k as i128)));
                self.bind(name.clone(), Binding::Value(Value::Untyped(index)));
            }
            self.block(&f.body);
            self.scopes.pop();
        }
        Value::Unit
    }

    /// The indices of a constant range: `a..b`, `a..=b`, `(a..b).rev()`, `(a..b).step_by(n)`.
    fn range(&mut self, expr: &Expr) -> Option<Vec<i64>> {
        const MESSAGE: &str = "loop bounds must be constants (the loop is unrolled): `for k in -3..=3`";
        match strip_group(expr) {
            Expr::Range(r) => {
                let (Some(start), Some(end)) = (&r.start, &r.end) else {
                    self.cx.error(expr, "a `for` range needs both bounds");
                    return None;
                };
                let (s, e) = (self.expr(start), self.expr(end));
                let s = self.const_int_or(&s, start, MESSAGE)?;
                let e = self.const_int_or(&e, end, MESSAGE)?;
                let end = if matches!(r.limits, RangeLimits::Closed(_)) { e as i128 + 1 } else { e as i128 };
                let count = end - s as i128;
                if count > MAX_UNROLLED_ITERATIONS as i128 {
                    self.cx.error(expr, format!("the loop would unroll to {count} iterations, more than {MAX_UNROLLED_ITERATIONS}"));
                    return None;
                }
                let end = end as i64;
                Some((s..end).collect())
            }
            Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                self.range(&m.receiver).map(|v| v.into_iter().rev().collect())
            }
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let step = self.expr(&m.args[0]);
                let step = self.const_int_or(&step, &m.args[0], "`step_by` needs a constant step")?;
                if step <= 0 {
                    self.cx.error(&m.args[0], "`step_by` needs a positive step");
                    return None;
                }
                self.range(&m.receiver).map(|v| v.into_iter().step_by(step as usize).collect())
            }
            other => {
                self.cx.error(other, MESSAGE);
                None
            }
        }
    }

    // ---- types and constants ----------------------------------------------------------------

    /// The node for `value`, typed `expected` if it was still an untyped literal.
    fn to_node(&mut self, value: Value, expected: Option<ScalarType>, at: &dyn ToTokens) -> Option<NodeId> {
        match value {
            Value::Node(id, _) => Some(id),
            Value::Known(s) => Some(self.push(Node::Const(s), s.ty)),
            Value::Untyped(lit) => {
                let ty = expected.unwrap_or_else(|| default_type(&lit));
                let v = self.typed(&lit, ty, at);
                self.to_node(v, Some(ty), at)
            }
            Value::Unit => {
                self.cx.error(at, "expected a value, found `()`");
                None
            }
            Value::Poison => None,
        }
    }

    /// An untyped literal expression as type `ty`: known at compile time, or a node if it holds
    /// a runtime select.
    fn typed(&mut self, lit: &Lit, ty: ScalarType, at: &dyn ToTokens) -> Value {
        self.record(lit, ty);
        self.typed_as(lit, ty, at)
    }

    /// Notes that the `let`s inside `lit` met type `ty` (the first type each meets wins).
    fn record(&mut self, lit: &Lit, ty: ScalarType) {
        match lit {
            Lit::Int(_) | Lit::Float(_) => {}
            Lit::Neg(l) => self.record(l, ty),
            Lit::Bin(_, a, b) | Lit::Select(_, a, b) => {
                self.record(a, ty);
                self.record(b, ty);
            }
            Lit::Var(site, l) => {
                if *site != LOOP_INDEX {
                    self.inferred.entry(*site).or_insert(ty);
                }
                self.record(l, ty);
            }
        }
    }

    /// `typed` without recording: for casts, which hint a literal's type but do not unify.
    fn typed_as(&mut self, lit: &Lit, ty: ScalarType, at: &dyn ToTokens) -> Value {
        match lit {
            Lit::Var(_, inner) => self.typed_as(inner, ty, at),
            Lit::Select(cond, a, b) => {
                let (a, b) = (self.typed_as(a, ty, at), self.typed_as(b, ty, at));
                let (Some(x), Some(y)) = (self.to_node(a, Some(ty), at), self.to_node(b, Some(ty), at)) else {
                    return Value::Poison;
                };
                Value::Node(self.push(Node::Select { cond: *cond, then: x, otherwise: y }, ty), ty)
            }
            Lit::Neg(inner) if has_select(inner) => {
                let v = self.typed_as(inner, ty, at);
                match (unary_ok(UnaryOp::Neg, ty), self.to_node(v, Some(ty), at)) {
                    (Ok(()), Some(id)) => Value::Node(self.push(Node::Unary(UnaryOp::Neg, id), ty), ty),
                    (Err(m), _) => {
                        self.cx.error(at, m);
                        Value::Poison
                    }
                    _ => Value::Poison,
                }
            }
            Lit::Bin(op, a, b) if has_select(a) || has_select(b) => {
                let bop = match op {
                    LitOp::Add => BinaryOp::Add,
                    LitOp::Sub => BinaryOp::Sub,
                    LitOp::Mul => BinaryOp::Mul,
                    LitOp::Div if ty.is_float() => BinaryOp::Div,
                    _ => {
                        self.cx.error(at, "integer `/` and `%` are supported only between constants");
                        return Value::Poison;
                    }
                };
                let (x, y) = (self.typed_as(a, ty, at), self.typed_as(b, ty, at));
                let (Some(x), Some(y)) = (self.to_node(x, Some(ty), at), self.to_node(y, Some(ty), at)) else {
                    return Value::Poison;
                };
                Value::Node(self.push(Node::Binary(bop, x, y), ty), ty)
            }
            pure => self.materialize(pure, ty, at).map_or(Value::Poison, Value::Known),
        }
    }

    /// Evaluates an untyped literal expression in type `ty`, rounding as rustc does.
    fn materialize(&mut self, lit: &Lit, ty: ScalarType, at: &dyn ToTokens) -> Option<Scalar> {
        match eval_lit(lit, ty) {
            Ok(s) => Some(s),
            Err(m) => {
                self.cx.error(at, m);
                None
            }
        }
    }
}

enum Kind {
    Arith(BinaryOp, LitOp),
    Rem,
    Logic(BinaryOp),
    Compare(CompareOp),
}

enum Op {
    Binary(BinaryOp),
    Compare(CompareOp),
}

fn compound(op: &BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::AddAssign(t) => BinOp::Add(syn::Token![+](t.span())),
        BinOp::SubAssign(t) => BinOp::Sub(syn::Token![-](t.span())),
        BinOp::MulAssign(t) => BinOp::Mul(syn::Token![*](t.span())),
        BinOp::DivAssign(t) => BinOp::Div(syn::Token![/](t.span())),
        BinOp::RemAssign(t) => BinOp::Rem(syn::Token![%](t.span())),
        _ => return None,
    })
}

fn with_article(ty: ScalarType) -> String {
    match ty {
        ScalarType::I32 | ScalarType::U32 => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}

fn type_of(v: &Value) -> Option<ScalarType> {
    match v {
        Value::Node(_, t) => Some(*t),
        Value::Known(s) => Some(s.ty),
        _ => None,
    }
}

fn unary_ok(op: UnaryOp, ty: ScalarType) -> Result<(), String> {
    use ScalarType::*;
    match (op, ty) {
        (UnaryOp::Neg | UnaryOp::Abs, F32 | F64 | I32) => Ok(()),
        (UnaryOp::Neg, t) => Err(format!("cannot negate a value of type {t}")),
        (UnaryOp::Abs, t) => Err(format!("`abs` is not defined on {t}")),
        (UnaryOp::Sqrt, F32 | F64) => Ok(()),
        (UnaryOp::Sqrt, t) => Err(format!("`sqrt` is not defined on {t}")),
        (UnaryOp::Not, Bool | I32 | U32) => Ok(()),
        (UnaryOp::Not, t) => Err(format!("`!` is not defined on {t}")),
    }
}

/// Rust's fallback type for a literal nobody constrains: i32 for integers, f64 for floats.
fn default_type(lit: &Lit) -> ScalarType {
    match lit {
        Lit::Int(_) => ScalarType::I32,
        Lit::Float(_) => ScalarType::F64,
        Lit::Neg(l) => default_type(l),
        Lit::Bin(_, a, b) | Lit::Select(_, a, b) => default_type(a).max_by_float(default_type(b)),
        Lit::Var(_, l) => default_type(l),
    }
}

/// Whether a literal expression is made of float literals (else integers).
fn is_float_lit(lit: &Lit) -> bool {
    default_type(lit).is_float()
}

fn has_select(lit: &Lit) -> bool {
    match lit {
        Lit::Int(_) | Lit::Float(_) => false,
        Lit::Neg(l) => has_select(l),
        Lit::Bin(_, a, b) => has_select(a) || has_select(b),
        Lit::Select(..) => true,
        Lit::Var(_, l) => has_select(l),
    }
}

trait FloatWins {
    fn max_by_float(self, other: ScalarType) -> ScalarType;
}
impl FloatWins for ScalarType {
    fn max_by_float(self, other: ScalarType) -> ScalarType {
        if other.is_float() {
            other
        } else {
            self
        }
    }
}

fn eval_lit(lit: &Lit, ty: ScalarType) -> Result<Scalar, String> {
    match lit {
        Lit::Select(..) => Err("a value chosen at run time is not a constant".into()),
        Lit::Var(_, l) => eval_lit(l, ty),
        Lit::Int(v) => match ty {
            ScalarType::I32 => i32::try_from(*v).map(Scalar::i32).map_err(|_| format!("literal {v} does not fit in i32")),
            ScalarType::U32 => u32::try_from(*v).map(Scalar::u32).map_err(|_| format!("literal {v} does not fit in u32")),
            ScalarType::F32 | ScalarType::F64 => {
                Err(format!("expected {ty}, found the integer literal `{v}` (write `{v}.0`)"))
            }
            ScalarType::Bool => Err(format!("expected bool, found the integer literal `{v}`")),
        },
        Lit::Float(text) => match ty {
            ScalarType::F32 => text.parse::<f32>().map(Scalar::f32).map_err(|e| format!("bad float literal: {e}")),
            ScalarType::F64 => text.parse::<f64>().map(Scalar::f64).map_err(|e| format!("bad float literal: {e}")),
            other => Err(format!("expected {other}, found the float literal `{text}`")),
        },
        Lit::Neg(inner) => {
            // `-2147483648` must not overflow on the way: negate the literal before narrowing.
            if let (Lit::Int(v), true) = (&**inner, ty.is_integer()) {
                return eval_lit(&Lit::Int(v.checked_neg().ok_or("integer literal out of range")?), ty);
            }
            let s = eval_lit(inner, ty)?;
            unary_ok(UnaryOp::Neg, ty)?;
            Ok(Scalar::new(ty, ops::unary(UnaryOp::Neg, ty, s.bits)))
        }
        Lit::Bin(op, a, b) => {
            let (x, y) = (eval_lit(a, ty)?, eval_lit(b, ty)?);
            if ty.is_integer() {
                let (Some(xi), Some(yi)) = (int_value(&Value::Known(x)), int_value(&Value::Known(y))) else {
                    return Err("expected integers".into());
                };
                let v = match op {
                    LitOp::Add => xi.checked_add(yi),
                    LitOp::Sub => xi.checked_sub(yi),
                    LitOp::Mul => xi.checked_mul(yi),
                    LitOp::Div => xi.checked_div(yi),
                    LitOp::Rem => xi.checked_rem(yi),
                }
                .ok_or_else(|| format!("constant arithmetic overflows or divides by zero: {xi} and {yi}"))?;
                return eval_lit(&Lit::Int(v as i128), ty);
            }
            let bop = match op {
                LitOp::Add => BinaryOp::Add,
                LitOp::Sub => BinaryOp::Sub,
                LitOp::Mul => BinaryOp::Mul,
                LitOp::Div => BinaryOp::Div,
                LitOp::Rem => return Err("`%` is supported only between constant integers".into()),
            };
            Ok(Scalar::new(ty, ops::binary(bop, ty, x.bits, y.bits)))
        }
    }
}

/// A compile-time integer: an untyped integer expression or a known i32/u32.
fn int_value(v: &Value) -> Option<i64> {
    fn lit(l: &Lit) -> Option<i128> {
        match l {
            Lit::Int(v) => Some(*v),
            Lit::Float(_) | Lit::Select(..) => None,
            Lit::Var(_, l) => lit(l),
            Lit::Neg(x) => lit(x)?.checked_neg(),
            Lit::Bin(op, a, b) => {
                let (a, b) = (lit(a)?, lit(b)?);
                match op {
                    LitOp::Add => a.checked_add(b),
                    LitOp::Sub => a.checked_sub(b),
                    LitOp::Mul => a.checked_mul(b),
                    LitOp::Div => a.checked_div(b),
                    LitOp::Rem => a.checked_rem(b),
                }
            }
        }
    }
    match v {
        Value::Untyped(l) => lit(l).and_then(|v| i64::try_from(v).ok()),
        Value::Known(s) if s.ty == ScalarType::I32 => Some(s.bits as u32 as i32 as i64),
        Value::Known(s) if s.ty == ScalarType::U32 => Some(s.bits as u32 as i64),
        _ => None,
    }
}

/// A type a `let` or `const` may declare: the scalar types and `bool`.
fn scalar_or_bool(ty: &Type) -> Option<ScalarType> {
    match strip_type(ty) {
        Type::Path(tp) if tp.path.is_ident("bool") => Some(ScalarType::Bool),
        t => scalar(t),
    }
}

fn is_index_type(ty: &Type) -> bool {
    match ty {
        Type::Path(tp) => tp
            .path
            .get_ident()
            .is_some_and(|i| ["usize", "isize", "i64", "u64", "i16", "u16", "i8", "u8"].contains(&i.to_string().as_str())),
        _ => false,
    }
}

fn strip_type(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => strip_type(&g.elem),
        Type::Paren(p) => strip_type(&p.elem),
        other => other,
    }
}

/// `f32::MAX`, `f64::consts::PI`, `std::f32::consts::E`, `i32::MIN`, ...
fn associated_const(path: &syn::Path) -> Option<Scalar> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).skip_while(|s| *s == "std" || *s == "core").collect();
    macro_rules! float_consts {
        ($t:ident, $make:expr, $name:expr, $consts:expr) => {{
            use std::$t::consts;
            let make = $make;
            match ($consts, $name) {
                (false, "MAX") => Some(make($t::MAX)),
                (false, "MIN") => Some(make($t::MIN)),
                (false, "MIN_POSITIVE") => Some(make($t::MIN_POSITIVE)),
                (false, "EPSILON") => Some(make($t::EPSILON)),
                (false, "INFINITY") => Some(make($t::INFINITY)),
                (false, "NEG_INFINITY") => Some(make($t::NEG_INFINITY)),
                (false, "NAN") => Some(make($t::NAN)),
                (true, "PI") => Some(make(consts::PI)),
                (true, "TAU") => Some(make(consts::TAU)),
                (true, "E") => Some(make(consts::E)),
                (true, "SQRT_2") => Some(make(consts::SQRT_2)),
                (true, "FRAC_1_SQRT_2") => Some(make(consts::FRAC_1_SQRT_2)),
                (true, "LN_2") => Some(make(consts::LN_2)),
                (true, "LN_10") => Some(make(consts::LN_10)),
                (true, "FRAC_PI_2") => Some(make(consts::FRAC_PI_2)),
                (true, "FRAC_PI_4") => Some(make(consts::FRAC_PI_4)),
                _ => None,
            }
        }};
    }
    match segs.as_slice() {
        ["f32", name] => float_consts!(f32, Scalar::f32, *name, false),
        ["f64", name] => float_consts!(f64, Scalar::f64, *name, false),
        ["f32", "consts", name] => float_consts!(f32, Scalar::f32, *name, true),
        ["f64", "consts", name] => float_consts!(f64, Scalar::f64, *name, true),
        ["i32", "MAX"] => Some(Scalar::i32(i32::MAX)),
        ["i32", "MIN"] => Some(Scalar::i32(i32::MIN)),
        ["u32", "MAX"] => Some(Scalar::u32(u32::MAX)),
        ["u32", "MIN"] => Some(Scalar::u32(u32::MIN)),
        _ => None,
    }
}
