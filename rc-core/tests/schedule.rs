//! The scheduler's promises: phases are conflict-free, each lane performs exactly one shuffle per
//! distinct element it needs from another lane, local reads cost no shuffle, and values are reused
//! across a thread's outputs.

mod common;

use std::collections::BTreeSet;

use common::*;
use rc_core::distribution::{Distribution, RoundRobin};
use rc_core::error::ScheduleError;
use rc_core::schedule::{Phase, Read, Schedule, Source};
use rc_core::{Boundary, Pattern, ScalarType, Strategy, WarpProgram};

fn full_window(r: u32) -> Vec<i32> {
    (-(r as i32)..=r as i32).collect()
}

fn every_pattern() -> impl Iterator<Item = Pattern> {
    WARPS.into_iter().flat_map(|warp| {
        (1..=8).flat_map(move |p| (1..=40).map(move |r| Pattern::new(r, warp, p, Boundary::Valid).expect("valid")))
    })
}

#[test]
fn no_owner_is_asked_for_two_registers_in_one_phase() {
    for pattern in every_pattern() {
        let dist = RoundRobin::new(&pattern);
        let schedule =
            Schedule::plan(pattern, Strategy::RegisterCache, &dist, &full_window(pattern.radius().along_x()))
                .expect("schedules");
        for (_, fetch, phase) in schedule.phases() {
            for (reader, read) in phase.reads.iter().enumerate() {
                // Every reader gets what it asked for from the owner's published register...
                assert_eq!(phase.publish.at(read.owner), read.reg, "{pattern}: lane {reader}");
                // ...and that register holds the element the reader needs.
                let slot = dist.slot(fetch.elements[reader]);
                assert_eq!((slot.lane, slot.reg), (read.owner, read.reg), "{pattern}: lane {reader}");
            }
        }
    }
}

#[test]
fn each_lane_shuffles_once_per_distinct_remote_element() {
    for pattern in every_pattern() {
        let dist = RoundRobin::new(&pattern);
        let taps = full_window(pattern.radius().along_x());
        let schedule = Schedule::plan(pattern, Strategy::RegisterCache, &dist, &taps).expect("schedules");
        let phases = schedule.phases().count();
        for lane in 0..pattern.warp() {
            let remote: BTreeSet<u32> = (0..pattern.outputs_per_thread())
                .flat_map(|p| {
                    taps.iter().map(move |&d| {
                        (dist.output(lane, p) as i64 + pattern.radius().along_x() as i64 + d as i64) as u32
                    })
                })
                .filter(|&e| dist.slot(e).lane != lane)
                .collect();
            assert_eq!(remote.len(), phases, "{pattern}: lane {lane}");
        }
    }
}

#[test]
fn shuffle_count_matches_the_round_robin_formula() {
    // Lane l needs elements l + s for s in the union over outputs p of [pW, pW + 2r]; the
    // shifts that are multiples of W are local.
    for pattern in every_pattern() {
        let (w, r, p) = (pattern.warp(), pattern.radius().along_x(), pattern.outputs_per_thread());
        let shifts: BTreeSet<u32> = (0..p).flat_map(|q| q * w..=q * w + 2 * r).collect();
        let remote = shifts.iter().filter(|&&s| s % w != 0).count();
        let program = WarpProgram::compile(pattern, &box_body(r, ScalarType::F32)).expect("compiles");
        assert_eq!(program.shuffles_per_output(), remote as f64 / p as f64, "{pattern}");
        let program = WarpProgram::compile(pattern, &box_body(r, ScalarType::F64)).expect("compiles");
        assert_eq!(program.shuffles_per_output(), 2.0 * remote as f64 / p as f64, "{pattern}: f64 takes two shuffles");
    }
}

#[test]
fn a_phase_where_every_lane_reads_itself_is_no_shuffle() {
    let pattern = Pattern::new(1, 4, 1, Boundary::Valid).expect("valid");
    let schedule =
        Schedule::plan(pattern, Strategy::RegisterCache, &RoundRobin::new(&pattern), &[-1, 0, 1]).expect("schedules");
    let local: Vec<_> = schedule.fetches.iter().filter(|f| matches!(f.source, Source::Local(_))).collect();
    assert_eq!(local.len(), 1);
    assert_eq!(local[0].uses, vec![(0, -1)]);
    assert_eq!(schedule.phases().count(), 2);
}

#[test]
fn outputs_of_one_thread_share_fetches_when_the_window_spans_a_warp() {
    // r = 3, W = 4, P = 2: output 0 tap +1 and output 1 tap -3 are the same element in every lane.
    let pattern = Pattern::new(3, 4, 2, Boundary::Valid).expect("valid");
    let schedule = Schedule::plan(pattern, Strategy::RegisterCache, &RoundRobin::new(&pattern), &full_window(3))
        .expect("schedules");
    assert_eq!(schedule.fetches.len(), 11, "shifts 0..=10, each fetched once");
    let id = schedule.fetch_of(0, 1).expect("scheduled");
    assert_eq!(schedule.fetch_of(1, -3), Some(id));
    assert_eq!(schedule.fetches[id].uses, vec![(0, 1), (1, -3)]);
}

#[test]
fn the_article_table_2_schedule_for_a_1_stencil_on_4_lanes() {
    let pattern = Pattern::new(1, 4, 1, Boundary::Valid).expect("valid");
    let schedule =
        Schedule::plan(pattern, Strategy::RegisterCache, &RoundRobin::new(&pattern), &[-1, 0, 1]).expect("schedules");
    let phase = |d: i32| match &schedule.fetches[schedule.fetch_of(0, d).expect("scheduled")].source {
        Source::Shuffle(phase) => phase.clone(),
        other => panic!("tap {d} should need a shuffle, got {other:?}"),
    };
    let reads = |ph: &Phase| ph.reads.iter().map(|r| (r.owner, r.reg)).collect::<Vec<_>>();
    let publishes = |ph: &Phase| (0..4).map(|l| ph.publish.at(l)).collect::<Vec<_>>();
    // Second phase: T0 R(T1, rc[0]) ... T3 R(T0, rc[1]); T0 publishes rc[1].
    assert_eq!(reads(&phase(0)), vec![(1, 0), (2, 0), (3, 0), (0, 1)]);
    assert_eq!(publishes(&phase(0)), vec![1, 0, 0, 0]);
    // Third phase: T0 R(T2, rc[0]), T1 R(T3, rc[0]), T2 R(T0, rc[1]), T3 R(T1, rc[1]).
    assert_eq!(reads(&phase(1)), vec![(2, 0), (3, 0), (0, 1), (1, 1)]);
    assert_eq!(publishes(&phase(1)), vec![1, 1, 0, 0]);
}

#[test]
fn two_readers_wanting_different_registers_of_one_owner_is_a_conflict() {
    let reads = vec![
        Read { owner: 1, reg: 0 },
        Read { owner: 1, reg: 1 },
        Read { owner: 3, reg: 0 },
        Read { owner: 0, reg: 0 },
    ];
    assert_eq!(
        Phase::new(reads, (0, 2)),
        Err(ScheduleError::Conflict { output: 0, tap: 2, owner: 1, first: 0, second: 1 })
    );
}

#[test]
fn reads_that_are_not_a_rotation_are_refused() {
    let reads = vec![
        Read { owner: 1, reg: 0 },
        Read { owner: 0, reg: 0 },
        Read { owner: 3, reg: 0 },
        Read { owner: 2, reg: 0 },
    ];
    assert_eq!(Phase::new(reads, (0, 1)), Err(ScheduleError::NotARotation { output: 0, tap: 1 }));
}

#[test]
fn unused_taps_are_neither_loaded_nor_shuffled() {
    // Only w[-40] and w[40] with W = 32: elements 0..32 and 80..112 of the tile.
    let pattern = Pattern::new(40, 32, 1, Boundary::Valid).expect("valid");
    let schedule =
        Schedule::plan(pattern, Strategy::RegisterCache, &RoundRobin::new(&pattern), &[-40, 40]).expect("schedules");
    let loaded: Vec<(u32, (u32, u32))> = schedule.loads.iter().map(|l| (l.reg, l.lanes)).collect();
    assert_eq!(loaded, vec![(0, (0, 32)), (2, (16, 32)), (3, (0, 16))]);
    assert_eq!(schedule.phases().count(), 1, "w[-40] is local, w[40] one shuffle");
}

#[test]
fn granule_lanes_shuffle_once_per_distinct_remote_element() {
    use rc_core::Granule;
    for warp in WARPS {
        for v in [2u32, 4, 8, 16] {
            for rows in 1..=2 {
                for r in [1u32, 3, 8, 16, 40] {
                    for boundary in Boundary::ALL {
                        let pattern = Pattern::new(r, warp, v * rows, boundary).expect("valid");
                        let dist = Granule::new(&pattern, v).expect("whole rows");
                        let taps = full_window(r);
                        let schedule =
                            Schedule::plan(pattern, Strategy::RegisterCache, &dist, &taps).expect("schedules");
                        let centre = (r - pattern.shift() + dist.lead()) as i64;
                        let phases = schedule.phases().count();
                        for lane in 0..warp {
                            let remote: BTreeSet<u32> = (0..pattern.outputs_per_thread())
                                .flat_map(|p| {
                                    taps.iter().map(move |&d| (dist.output(lane, p) as i64 + centre + d as i64) as u32)
                                })
                                .filter(|&e| dist.slot(e).lane != lane)
                                .collect();
                            assert_eq!(remote.len(), phases, "{pattern}, granule({v}): lane {lane}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn with_granules_only_the_halo_crosses_lanes() {
    // One row of V outputs per lane needs its V + 2r window; V of them are its own.
    for v in [4u32, 8, 16] {
        for r in 1..=16u32 {
            let pattern = Pattern::new(r, 32, v, Boundary::Valid).expect("valid");
            let program = WarpProgram::compile_for(
                pattern,
                Strategy::RegisterCache,
                rc_core::Layout::Granule(v),
                &box_body(r, ScalarType::F32),
            )
            .expect("compiles");
            assert_eq!(program.shuffles_per_output(), 2.0 * r as f64 / v as f64, "r={r}, granule({v})");
        }
    }
}

#[test]
fn with_windows_nothing_crosses_lanes_and_each_lane_loads_its_window_once() {
    // One row of V outputs per lane reads its V + 2r window, all of it from its own registers.
    for v in [1u32, 4, 8, 16] {
        for r in [1u32, 3, 8, 16, 32, 64] {
            for boundary in Boundary::ALL {
                let pattern = Pattern::new(r, 32, v, boundary).expect("valid");
                let program = WarpProgram::compile_for(
                    pattern,
                    Strategy::RegisterCache,
                    rc_core::Layout::Window(v),
                    &box_body(r, ScalarType::F32),
                )
                .expect("compiles");
                assert_eq!(program.shuffles_per_output(), 0.0, "r={r}, window({v}), {boundary}");
                assert_eq!(
                    program.schedule.loads.len() as u32,
                    v + 2 * r,
                    "r={r}, window({v}), {boundary}: cache registers"
                );
                assert!(program.schedule.loads.iter().all(|l| l.lanes == (0, 32)), "every lane loads every register");
            }
        }
    }
}

#[test]
fn staged_windows_stage_once_then_read_each_window_element_once_without_shuffles() {
    for v in [1u32, 4, 8, 16, 32] {
        for (r, boundary) in [1u32, 3, 8, 16, 32, 64].into_iter().zip(Boundary::ALL.into_iter().cycle()) {
            let pattern = Pattern::new(r, 32, v, boundary).expect("valid");
            let program = WarpProgram::compile_for(
                pattern,
                Strategy::RegisterCache,
                rc_core::Layout::Staged(v),
                &box_body(r, ScalarType::F32),
            )
            .expect("compiles");
            assert!(program.staged, "staged({v})");
            assert_eq!(program.shuffles_per_output(), 0.0, "r={r}, staged({v})");
            assert_eq!(program.schedule.loads.len() as u32, v + 2 * r, "r={r}, staged({v}): cache registers");
            let stages: Vec<&rc_core::Instr> =
                program.instrs.iter().filter(|i| matches!(i, rc_core::Instr::Stage { .. })).collect();
            assert!(matches!(program.instrs[0], rc_core::Instr::Stage { .. }) && stages.len() == 1, "one stage, first");
            // Each warp stages its own tile and its last lane's whole window, nothing more.
            let rc_core::Instr::Stage { scope, lead, elements, .. } = *stages[0] else { unreachable!() };
            assert_eq!(scope, rc_core::program::StageScope::Warp);
            assert_eq!(lead, pattern.shift().div_ceil(v) * v, "r={r}, staged({v}): lead rounded up to whole granules");
            assert_eq!(
                elements,
                pattern.tile_outputs() + (lead - pattern.shift()) + 2 * r,
                "r={r}, staged({v}): stage elements"
            );
        }
    }
}

#[test]
fn a_stage_larger_than_static_shared_memory_is_refused_with_its_size() {
    let pattern = Pattern::new(8, 32, 32, Boundary::Valid).expect("valid");
    let err = WarpProgram::compile_for(
        pattern,
        Strategy::RegisterCache,
        rc_core::Layout::Staged(32),
        &box_body(8, ScalarType::F64),
    )
    .expect_err("8 warps x 32 lanes x 32 f64 outputs do not fit in 48 KiB");
    let message = err.to_string();
    assert!(message.contains("staged(32)") && message.contains("49152"), "{message}");
    assert!(
        matches!(err, rc_core::Error::Schedule(rc_core::ScheduleError::StageTooLarge { bytes, .. }) if bytes > 65536),
        "{message}"
    );
}

#[test]
fn explain_shows_a_staged_window_s_stage_with_the_bytes_the_ptx_declares() {
    let pattern = Pattern::new(4, 32, 8, Boundary::Valid).expect("valid");
    let program = WarpProgram::compile_for(
        pattern,
        Strategy::RegisterCache,
        rc_core::Layout::Staged(8),
        &box_body(4, ScalarType::F32),
    )
    .expect("compiles");
    let text = rc_core::Explanation::new("box9", &program).to_string();
    let ptx = rc_core::ptx::print(&program, "rc_box9");
    let declared = ptx
        .lines()
        .find_map(|l| l.trim().strip_prefix(".shared .align 16 .b8 rc_stage[")?.strip_suffix("];")?.parse::<u32>().ok())
        .expect("the PTX declares the stage");
    assert!(
        text.contains(&format!(
            "stage: each warp copies 264 input elements into its region of shared memory ({declared} bytes per block"
        )),
        "{text}"
    );
    assert!(text.contains("outputs computed as a wavefront"), "{text}");
}

#[test]
fn a_body_with_2d_taps_is_refused_by_a_1d_pattern_and_by_a_1d_radius() {
    use rc_core::body::{Body, Node};
    use rc_core::{Dims, Error, Offset, Radius, ScalarType, ScheduleError};
    let tap = Offset::new(&[1, -1]).expect("2D");
    let body =
        Body::new(ScalarType::F32, 1, vec![], Radius::new(&[1, 1]).expect("2D"), vec![Node::Tap(0, tap)], vec![0])
            .expect("a 2D body");
    let pattern = Pattern::new(1, 32, 1, Boundary::Zero).expect("valid");
    assert_eq!(
        WarpProgram::compile(pattern, &body).err(),
        Some(Error::Schedule(ScheduleError::Dimensions { body: Dims::Two, pattern: Dims::One }))
    );
    let refused = Body::new(ScalarType::F32, 1, vec![], 1, vec![Node::Tap(0, tap)], vec![0])
        .expect_err("a 2D tap on a 1D radius");
    assert_eq!(
        refused.to_string(),
        "node 0: tap (1, -1) is outside the radius 1 (or has another number of dimensions)"
    );
}

#[test]
fn a_distribution_without_whole_rows_is_named_as_written() {
    let pattern = Pattern::new(2, 32, 4, Boundary::Zero).expect("valid");
    for layout in [rc_core::Layout::Granule(8), rc_core::Layout::Window(8), rc_core::Layout::Staged(8)] {
        let error = layout.build(&pattern).err().expect("4 outputs are not whole rows of 8");
        assert!(
            matches!(error, ScheduleError::WholeRows { layout: l, outputs_per_thread: 4 } if l == layout),
            "{error:?}"
        );
        assert!(error.to_string().starts_with(&format!("distribution {layout}")), "{error}");
    }
}

#[test]
fn a_pattern_knows_its_dimension_and_its_tile_shape() {
    let pattern = Pattern::new(3, 16, 4, Boundary::Wrap).expect("valid");
    assert_eq!(
        (pattern.dims(), pattern.radius(), pattern.tile()),
        (rc_core::Dims::One, rc_core::Radius::x(3), rc_core::Extent::x(64))
    );
    assert_eq!((pattern.tiles(0), pattern.tiles(64), pattern.tiles(65)), (0, 1, 2));
    assert_eq!(pattern.to_string(), "radius 3, warp 16, outputs_per_thread 4, boundary wrap");
}
