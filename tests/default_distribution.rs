//! Without `distribution`, a register-cache stencil gets the cost model's choice, exactly as
//! `distribution = auto` would; `distribution = round_robin` asks for the article's recipe.

use rc::prelude::*;
use rc::{Layout, Strategy};

/// The 33-tap average under `name`, with the rest of the attribute after `radius = 16, warp = 32`.
macro_rules! box33 {
    ($name:ident $(, $attr:tt = $value:tt)*) => {
        #[stencil(radius = 16, warp = 32 $(, $attr = $value)*)]
        fn $name(w: Window<f32>) -> f32 {
            let mut s = 0.0;
            for d in -16..=16 {
                s += w[d];
            }
            s / 33.0
        }
    };
}

box33!(box33);
box33!(box33_auto, distribution = auto);
box33!(box33_round_robin, distribution = round_robin);

/// Three outputs per thread: no vector layout divides them, so the choice is round-robin.
#[stencil(radius = 2, warp = 32, outputs_per_thread = 3)]
fn box5_p3(w: Window<f32>) -> f32 {
    (w[-2] + w[-1] + w[0] + w[1] + w[2]) / 5.0
}

#[stencil(radius = 2, warp = 32, strategy = shared_memory)]
fn box5_shared(w: Window<f32>) -> f32 {
    (w[-2] + w[-1] + w[0] + w[1] + w[2]) / 5.0
}

#[test]
fn without_distribution_the_cost_model_chooses() {
    let (default, auto) = (box33::KERNEL, box33_auto::KERNEL);
    assert_eq!(default.layout(), auto.layout());
    assert_eq!(default.pattern(), auto.pattern());
    assert_ne!(default.layout(), Layout::RoundRobin, "at r = 16 the cost model picks a vector layout");
    assert_eq!(box33::PTX.replace(box33::ENTRY, "k"), box33_auto::PTX.replace(box33_auto::ENTRY, "k"));
    let body = default.body().expect("body");
    let choice = rc::core::auto::choose(rc::Pattern::new(16, 32, 1, rc::Boundary::Valid).expect("valid"), false, &body)
        .expect("a choice");
    assert_eq!((default.layout(), default.pattern()), (choice.layout, choice.pattern));
}

#[test]
fn round_robin_is_asked_for_by_name() {
    let k = box33_round_robin::KERNEL;
    assert_eq!(k.layout(), Layout::RoundRobin);
    assert_eq!(k.pattern().outputs_per_thread(), 1);
    assert_eq!(box5_p3::KERNEL.layout(), Layout::RoundRobin);
    assert_eq!(box5_p3::KERNEL.pattern().outputs_per_thread(), 3);
    assert_eq!(box5_shared::KERNEL.strategy(), Strategy::SharedMemory);
    assert_eq!(box5_shared::KERNEL.pattern().outputs_per_thread(), 1);
}

#[test]
fn the_chosen_kernels_equal_the_reference_in_the_emulation() {
    let input = rc::testdata::awkward::<f32>(5000, 3);
    for k in [box33::KERNEL, box33_round_robin::KERNEL, box5_p3::KERNEL, box5_shared::KERNEL] {
        let (want, got) = (
            k.reference_vec(&[&input], ()).expect("reference").remove(0),
            k.emulate_vec(&[&input], ()).expect("emulation").remove(0),
        );
        assert!(
            want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())),
            "{}",
            k.name()
        );
    }
}
