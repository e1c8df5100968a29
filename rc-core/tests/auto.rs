//! `distribution = auto`: the cost model's choices compile, are correct, respect what the user
//! fixed, and follow the measurements they were calibrated on.

mod common;

use common::*;
use rc_core::auto::choose;
use rc_core::{Boundary, Layout, Pattern, ScalarType, Strategy, WarpProgram};

#[test]
fn the_choice_is_the_fastest_prediction_or_a_tie_with_it_and_emulates_bit_exact() {
    for ty in [ScalarType::F32, ScalarType::F64] {
        for r in [1u32, 3, 8, 16, 24, 32, 64] {
            let pattern = Pattern::new(r, 32, 1, Boundary::Clamp).expect("valid");
            let body = box_body(r, ty);
            let choice = choose(pattern, false, &body).expect("a choice");
            let chosen = choice
                .estimates
                .iter()
                .find(|e| e.layout == choice.layout && e.outputs_per_thread == choice.pattern.outputs_per_thread())
                .expect("the choice is one of the weighed candidates");
            let fastest = choice.estimates[0].cycles();
            assert!(chosen.cycles() <= fastest * 1.03 + 1e-12, "{ty} r={r}: chose {} at {:.3}, fastest {fastest:.3}", choice.layout, chosen.cycles());
            let program = WarpProgram::compile_for(choice.pattern, Strategy::RegisterCache, choice.layout, &body).expect("compiles");
            let n = 3 * choice.pattern.tile_outputs() as usize + 2 * r as usize + 7;
            if ty == ScalarType::F32 {
                let input: Vec<f32> = awkward(n, r as u64);
                let mut out = vec![poison::<f32>(); choice.pattern.output_len(n).expect("length")];
                program.emulate(&[&input], &mut out, &[]).expect("emulates");
                assert_eq!(first_difference(&out, &reference_f32(&choice.pattern, &input)), None, "{ty} r={r}: {}", choice.layout);
            } else {
                let input: Vec<f64> = awkward(n, r as u64);
                let mut out = vec![poison::<f64>(); choice.pattern.output_len(n).expect("length")];
                program.emulate(&[&input], &mut out, &[]).expect("emulates");
                assert_eq!(first_difference(&out, &reference_f64(&choice.pattern, &input)), None, "{ty} r={r}: {}", choice.layout);
            }
        }
    }
}

#[test]
fn fixed_outputs_per_thread_are_kept_and_only_dividing_granules_weighed() {
    let body = box_body(8, ScalarType::F32);
    for p in [1u32, 3, 4, 6, 8, 12, 16, 24, 32] {
        let pattern = Pattern::new(8, 32, p, Boundary::Valid).expect("valid");
        let choice = choose(pattern, true, &body).expect("a choice");
        assert_eq!(choice.pattern.outputs_per_thread(), p);
        for e in &choice.estimates {
            assert_eq!(e.outputs_per_thread, p);
            if let Layout::Granule(v) | Layout::Window(v) | Layout::Staged(v) = e.layout {
                assert_eq!(p % v, 0, "{} weighed for P = {p}", e.layout);
            }
        }
        // No granule of 4 or more divides 1, 3 or 6: only the article's round-robin remains.
        if p % 4 != 0 {
            assert_eq!(choice.layout, Layout::RoundRobin, "P = {p}");
        }
    }
}

/// Pins the model's choices for the benchmark's box averages (f32, H200 calibration): a change
/// to the model that moves them needs a new benchmark run (`bench/results/`).
#[test]
fn box_averages_choose_windows_of_4_then_staged_windows_of_8_then_of_16() {
    for r in [1u32, 2, 4, 8, 12, 16, 24, 32, 64] {
        let pattern = Pattern::new(r, 32, 1, Boundary::Valid).expect("valid");
        let choice = choose(pattern, false, &box_body(r, ScalarType::F32)).expect("a choice");
        let want = match r {
            1..=8 => (Layout::Window(4), 4),
            9..=24 => (Layout::Staged(8), 8),
            _ => (Layout::Staged(16), 16),
        };
        assert_eq!((choice.layout, choice.pattern.outputs_per_thread()), want, "r={r}\n{choice}");
    }
}

#[test]
fn the_table_names_every_candidate_and_the_choice() {
    let pattern = Pattern::new(32, 32, 1, Boundary::Valid).expect("valid");
    let choice = choose(pattern, false, &box_body(32, ScalarType::F32)).expect("a choice");
    let table = choice.to_string();
    assert!(table.starts_with("distribution = auto chose staged(16), outputs_per_thread = 16"), "{table}");
    for layout in ["window(4)", "granule(8)", "staged(32)"] {
        assert!(table.contains(layout), "{layout} missing:\n{table}");
    }
}
