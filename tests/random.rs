//! 200 random stencils and 40 over f16 and bf16 (tests/catalogue/random.rs, written by
//! tests/gen/random_stencils.py): the macro's warp program, emulated on the CPU, equals the
//! annotated function bit for bit.

mod catalogue;

/// Empty input, the window's edges, the tile's edge, and lengths spanning many tiles.
struct EmulationMatchesReference;

fn emulation_matches_reference<T: rc::Element, P: rc::Params + std::fmt::Debug>(k: &rc::Stencil<T, P>, params: P) {
    let r = k.pattern().radius().along_x() as usize;
    let tile = k.pattern().tile_outputs() as usize;
    let lengths = [0, 1, 2 * r, 2 * r + 1, tile + 2 * r + 3, 1000, 4099];
    for (i, n) in lengths.into_iter().enumerate() {
        if let Err(e) = catalogue::emulation_matches(k, n, 2000 + i as u64, params) {
            panic!("{} (params {params:?}): {e}", k.name());
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
fn every_random_stencil_emulates_its_reference() {
    catalogue::random::visit_all(&mut EmulationMatchesReference);
}

#[test]
fn every_random_16_bit_stencil_emulates_its_reference() {
    catalogue::random::visit_half(&mut EmulationMatchesReference);
}
