//! Compile-fail tests, filed by kind of mistake as serde_derive files its own: each file under
//! `tests/ui/<kind>/` is one mistake in a `#[stencil]` function, and the `.stderr` beside it is the
//! error the macro must report on the offending tokens. The kinds:
//! - `args/`: the attribute's syntax: malformed, unknown, duplicate or missing arguments, unknown names;
//! - `pattern/`: a value outside what the pattern accepts (radius, warp, outputs_per_thread, launch bounds);
//! - `distribution/`: a distribution the pattern or the strategy cannot have;
//! - `resources/`: a kernel that compiles but does not fit a GPU thread or block (registers, shared memory);
//! - `signature/`: not a function of a window, or parameters and results of unsupported types;
//! - `fields/`: several windows (input fields) that are not declared first, or that differ in
//!   element type or dimensions;
//! - `body/`: constructs outside the stencil language;
//! - `taps/`: window taps that are not constants or lie outside the radius;
//! - `types/`: operations on types their rule (`rc_core::typing`) does not take;
//! - `integers/`: integer `/`, `%`, `<<`, `>>` and `wrapping_*` whose right operand Rust could
//!   panic on (computed at run time, zero, -1, past the width), and bitwise operators on floats;
//! - `arrays/`: array parameters of unsupported types or lengths, and their indices;
//! - `grid/`: 2D and 3D stencils: radius tuples, taps and `rows_per_warp` / `planes_per_warp` / `stream` / `prefetch`
//!   that do not fit the window's dimensions, taps outside their dimension's radius;
//! - `half/`: f16 and bf16 mixed with other types without a conversion, literals of them, `as` on
//!   them, and methods the half crate does not have;
//! - `several/`: several mistakes at once, each reported.
//!
//! Regenerate with `TRYBUILD=overwrite cargo test --test ui`, then read every `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
