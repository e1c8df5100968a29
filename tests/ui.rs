//! Compile-fail tests: each file under `tests/ui/` is one mistake in a `#[stencil]` function,
//! and the `.stderr` beside it is the error the macro must report on the offending tokens.
//! Regenerate with `TRYBUILD=overwrite cargo test --test ui`, then read every `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
