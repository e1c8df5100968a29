//! `emulate` runs the warp program the PTX back end prints; it must equal the CPU reference
//! bit for bit for every pattern. NaN compares equal to NaN (payloads differ across hardware).

mod common;

use common::*;
use rc_core::{Pattern, RoundRobin, ScalarType, Strategy, WarpProgram};

fn compile(pattern: Pattern, strategy: Strategy, ty: ScalarType) -> WarpProgram {
    WarpProgram::compile_with(pattern, strategy, &RoundRobin::new(&pattern), &box_body(pattern.radius().along_x(), ty))
        .expect("compiles")
}

fn check_f32(pattern: Pattern, strategy: Strategy, lengths: &[usize], seed: u64) {
    let program = compile(pattern, strategy, ScalarType::F32);
    for &n in lengths {
        let input: Vec<f32> = awkward(n, seed ^ n as u64);
        let Ok(n_out) = pattern.output_len(n) else {
            assert!(program.emulate(&[&input], &mut [], &[]).is_err(), "{pattern}, {strategy}: n={n} must be refused");
            continue;
        };
        let mut out = vec![poison::<f32>(); n_out];
        program.emulate(&[&input], &mut out, &[]).expect("emulates");
        let want = reference_f32(&pattern, &input);
        if let Some(i) = first_difference(&out, &want) {
            panic!(
                "{pattern}, {strategy}, n={n}, seed={seed}: output {i} is {:?}, reference {:?}",
                out.get(i),
                want.get(i)
            );
        }
    }
}

fn check_f64(pattern: Pattern, strategy: Strategy, lengths: &[usize], seed: u64) {
    let program = compile(pattern, strategy, ScalarType::F64);
    for &n in lengths {
        let input: Vec<f64> = awkward(n, seed ^ n as u64);
        let Ok(n_out) = pattern.output_len(n) else { continue };
        let mut out = vec![poison::<f64>(); n_out];
        program.emulate(&[&input], &mut out, &[]).expect("emulates");
        let want = reference_f64(&pattern, &input);
        if let Some(i) = first_difference(&out, &want) {
            panic!(
                "{pattern}, {strategy}, n={n}, seed={seed}: output {i} is {:?}, reference {:?}",
                out.get(i),
                want.get(i)
            );
        }
    }
}

fn edge_lengths(pattern: &Pattern, extra: usize) -> Vec<usize> {
    let r = pattern.radius().along_x() as usize;
    vec![0, 1, 2 * r, 2 * r + 1, extra]
}

#[test]
fn every_radius_warp_width_coarsening_boundary_and_strategy_matches_for_f32() {
    for boundary in BOUNDARIES {
        for warp in WARPS {
            for p in 1..=8 {
                for r in 1..=40 {
                    let pattern = Pattern::new(r, warp, p, boundary).expect("valid pattern");
                    let tile = (warp * p) as usize;
                    let extra = 2 * tile + 2 * r as usize + 7 + (r as usize * 13 + p as usize) % tile;
                    for strategy in Strategy::ALL {
                        check_f32(pattern, strategy, &edge_lengths(&pattern, extra), (r * 1000 + warp * 10 + p) as u64);
                    }
                }
            }
        }
    }
}

#[test]
fn every_radius_warp_width_coarsening_and_boundary_matches_for_f64() {
    for boundary in BOUNDARIES {
        for warp in WARPS {
            for p in 1..=8 {
                for r in 1..=40 {
                    let pattern = Pattern::new(r, warp, p, boundary).expect("valid pattern");
                    let tile = (warp * p) as usize;
                    let extra = 2 * tile + 2 * r as usize + 5 + (r as usize * 7 + p as usize) % tile;
                    let strategy = Strategy::ALL[((r + p) % 3) as usize];
                    check_f64(pattern, strategy, &edge_lengths(&pattern, extra), (r * 1000 + warp * 10 + p) as u64);
                }
            }
        }
    }
}

#[test]
fn a_million_and_three_elements_match_for_each_boundary() {
    for boundary in BOUNDARIES {
        for strategy in Strategy::ALL {
            check_f32(Pattern::new(3, 32, 4, boundary).expect("valid"), strategy, &[1_000_003], 7);
            check_f64(Pattern::new(17, 16, 3, boundary).expect("valid"), strategy, &[1_000_003], 8);
        }
    }
}

#[test]
fn granule_window_and_staged_distributions_match_for_every_boundary_and_size() {
    use rc_core::Layout;
    for layout in [Layout::Granule as fn(u32) -> Layout, Layout::Window, Layout::Staged] {
        for boundary in BOUNDARIES {
            for warp in WARPS {
                for v in [1u32, 2, 4, 8, 16] {
                    for rows in 1..=2u32 {
                        for r in [1u32, 2, 3, 5, 8, 13, 16, 31, 40] {
                            let pattern = Pattern::new(r, warp, v * rows, boundary).expect("valid pattern");
                            let tile = pattern.tile_outputs() as usize;
                            let lengths = [0, 1, 2 * r as usize, 2 * r as usize + 1, 2 * tile + 2 * r as usize + 3];
                            for ty in [ScalarType::F32, ScalarType::F64] {
                                let layout = layout(v);
                                let program = match WarpProgram::compile_for(
                                    pattern,
                                    Strategy::RegisterCache,
                                    layout,
                                    &box_body(r, ty),
                                ) {
                                    Ok(program) => program,
                                    // Too large a stage for shared memory (f64, wide rows): refused, not miscompiled.
                                    Err(rc_core::Error::Schedule(rc_core::ScheduleError::StageTooLarge { .. })) => {
                                        continue
                                    }
                                    Err(e) => panic!("{pattern}, {layout}: {e}"),
                                };
                                for &n in &lengths {
                                    let seed = (r * 131 + v * 7 + rows) as u64 ^ n as u64;
                                    let Ok(n_out) = pattern.output_len(n) else { continue };
                                    if ty == ScalarType::F32 {
                                        let input: Vec<f32> = awkward(n, seed);
                                        let mut out = vec![poison::<f32>(); n_out];
                                        program.emulate(&[&input], &mut out, &[]).expect("emulates");
                                        let want = reference_f32(&pattern, &input);
                                        assert_eq!(first_difference(&out, &want), None, "{pattern}, {layout}, n={n}");
                                    } else {
                                        let input: Vec<f64> = awkward(n, seed);
                                        let mut out = vec![poison::<f64>(); n_out];
                                        program.emulate(&[&input], &mut out, &[]).expect("emulates");
                                        let want = reference_f64(&pattern, &input);
                                        assert_eq!(first_difference(&out, &want), None, "{pattern}, {layout}, n={n}");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
