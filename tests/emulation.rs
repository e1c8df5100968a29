//! The macro's warp programs, emulated on the CPU, equal the annotated functions bit for bit.

mod catalogue;

/// Edge lengths around the window and the tile, odd lengths, and one over a million.
struct EmulationMatchesReference;

fn emulation_matches_reference<T: rc::Element, P: rc::Params>(k: &rc::Stencil<T, P>, params: P) {
    let r = k.pattern().radius().along_x() as usize;
    let tile = k.pattern().tile_outputs() as usize;
    let lengths = [0, 1, 2 * r, 2 * r + 1, 2 * r + 2, tile, tile + 2 * r + 1, 7, 33, 1000, 4099, 1_000_003];
    for (i, n) in lengths.into_iter().enumerate() {
        if let Err(e) = catalogue::emulation_matches(k, n, 1000 + i as u64, params) {
            panic!("{}: {e}", k.name());
        }
    }
}

impl catalogue::Visit for EmulationMatchesReference {
    fn visit<T: rc::Element, P: rc::Params + std::fmt::Debug>(&mut self, k: &rc::Stencil<T, P>, params: P) {
        emulation_matches_reference(k, params);
    }
}

impl catalogue::VisitHalf for EmulationMatchesReference {
    fn visit<T: rc::Element, P: rc::Params + std::fmt::Debug>(&mut self, k: &rc::Stencil<T, P>, params: P) {
        emulation_matches_reference(k, params);
    }
}

#[test]
fn every_catalogue_stencil_emulates_its_reference_on_edge_and_odd_lengths() {
    catalogue::visit_all(&mut EmulationMatchesReference);
    catalogue::visit_half(&mut EmulationMatchesReference);
}

#[test]
fn the_macro_prints_the_same_ptx_the_runtime_program_would() {
    use catalogue::*;
    fn same<T: rc::Element, P: rc::Params>(k: &rc::Stencil<T, P>) {
        if let Ok(dir) = std::env::var("RC_DUMP_PTX") {
            std::fs::write(format!("{dir}/{}.ptx", k.entry()), k.ptx()).expect("dump");
        }
        let program = k.program().expect("compiles");
        assert_eq!(rc::core::ptx::print(&program, k.entry()), k.ptx(), "{}", k.name());
        // ptxas rejects any non-ASCII byte, even inside a comment.
        assert!(k.ptx().is_ascii(), "{}: PTX must be ASCII", k.name());
        // No register read where a path leaves it unset, in the kernel and its fused kernel.
        for ptx in [k.ptx(), k.fused_kernel().map_or("", |f| f.ptx)] {
            let unset = rc::core::ptx::defined::unset_reads(ptx);
            assert!(
                unset.is_empty(),
                "{}: {}",
                k.name(),
                unset.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("\n")
            );
        }
    }
    same(&box7::KERNEL);
    same(&heat::KERNEL);
    same(&max_filter::KERNEL);
    same(&fused::KERNEL);
    same(&mixed_int::KERNEL);
    same(&wide_weighted_f64::KERNEL);
    same(&box7_shared::KERNEL);
    same(&fused_naive::KERNEL);
    same(&wide_shared_f64::KERNEL);
    same(&mixed_int_naive::KERNEL);
    same(&box17_granule::KERNEL);
    same(&heat_granule::KERNEL);
    same(&tv_granule::KERNEL);
    same(&wide_max_granule::KERNEL);
    same(&box65_window::KERNEL);
    same(&ratio_window::KERNEL);
    same(&diffuse::KERNEL);
    same(&weighted_staged::KERNEL);
    same(&weighted_shared::KERNEL);
    same(&three_fields_granule::KERNEL);
    same(&masked_max_i32::KERNEL);
    same(&diffuse_naive::KERNEL);
    same(&box17_f16::KERNEL);
    same(&clipped_f16_granule::KERNEL);
    same(&weighted_bf16_window::KERNEL);
    same(&diffuse_f16_shared::KERNEL);
    same(&max_bf16_staged::KERNEL);
    same(&grid::diffuse2d::KERNEL);
    same(&grid::weighted_shared2d::KERNEL);
    same(&grid::three_fields3d::KERNEL);
}
