//! The macro's warp programs, emulated on the CPU, equal the annotated functions bit for bit.

mod catalogue;

#[test]
fn every_catalogue_stencil_emulates_its_reference_on_edge_and_odd_lengths() {
    catalogue::check_all(|name, check| {
        for r in [1usize, 2, 3, 4, 5, 6, 17, 40] {
            for n in [0, 1, 2 * r, 2 * r + 1] {
                if let Err(e) = check(n, n as u64 + 1) {
                    panic!("{name}: {e}");
                }
            }
        }
        for (i, n) in [7usize, 33, 100, 257, 1000, 4099, 1_000_003].into_iter().enumerate() {
            if let Err(e) = check(n, 1000 + i as u64) {
                panic!("{name}: {e}");
            }
        }
    });
}

#[test]
fn the_macro_prints_the_same_ptx_the_runtime_program_would() {
    use catalogue::*;
    fn same<T: rc::Element, P: rc::Params>(k: &rc::Stencil<T, P>) {
        let program = k.program().expect("compiles");
        assert_eq!(rc::core::ptx::print(&program, k.entry()), k.ptx(), "{}", k.name());
        // ptxas rejects any non-ASCII byte, even inside a comment.
        assert!(k.ptx().is_ascii(), "{}: PTX must be ASCII", k.name());
    }
    same(&box7::KERNEL);
    same(&heat::KERNEL);
    same(&max_filter::KERNEL);
    same(&fused::KERNEL);
    same(&mixed_int::KERNEL);
    same(&wide_weighted_f64::KERNEL);
}
