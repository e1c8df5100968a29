//! Fused time steps in 2D: one fused launch of `T` steps, emulated lane by lane, equals `T`
//! applications of the body by the definition of each boundary rule, bit for bit, for random
//! bodies (every operation on every type, 1 to 3 input fields, parameters) over random tap
//! sets (boxes, stars, subsets), radii per dimension, steps (1, 2, T - 1, T, the most that
//! fit), shapes (smaller than the halo, one tile, several tiles and strips) and element types.
//!
//! Seeded: case `i` comes from seed `BASE_SEED + i`; rerun one with
//! `RC_STEPS_SEED=<seed> cargo test -p rc-core --test time_steps_grid`.

use rc_core::machine::{Op, Stmt};
use rc_core::testdata::{awkward, first_difference, poison, Rng};
use rc_core::time_steps::FusedTile;
use rc_core::{Body, Boundary, Element, Extent, Offset, Pattern, Radius, Scalar, WarpProgram};

mod bodies;
mod common;
use bodies::{pick, random_body, random_fields, random_params, Taps};

const BASE_SEED: u64 = 0x57E9_2D00_0000;
const CASES: u64 = 160;

/// One step by the definition: output `(y, x)` is the body over the windows centred on input
/// `(y, x) + r - shift` of every field, each read under the boundary rule.
fn step_by_definition<T: Element>(body: &Body, pattern: &Pattern, inputs: &[&[T]], shape: [usize; 2], params: &[Scalar]) -> (Vec<T>, [usize; 2]) {
    let out: [usize; 2] = pattern.output_shape(Extent::from(shape)).expect("long enough").try_into().expect("2D");
    let offset = [1, 0].map(|axis| (pattern.radius().along(axis) - pattern.shift_along(axis)) as i64);
    let mut result = Vec::with_capacity(out[0] * out[1]);
    for y in 0..out[0] {
        for x in 0..out[1] {
            let centre = [y as i64 + offset[0], x as i64 + offset[1]];
            let tap = |field: u32, d: Offset| {
                let at = [centre[0] + d.along(1) as i64, centre[1] + d.along_x() as i64];
                pattern.boundary().locate(Extent::from(shape), &at).map_or(*T::zero_ref(), |i| inputs[field as usize][i]).to_scalar()
            };
            result.push(T::from_bits(body.eval(tap, params).bits));
        }
    }
    (result, out)
}

/// `steps` steps by the definition: field 0 steps, the others stay, cut under `valid` to
/// where the state lies.
fn steps_by_definition<T: Element>(body: &Body, pattern: &Pattern, inputs: &[Vec<T>], shape: [usize; 2], steps: usize, params: &[Scalar]) -> Vec<T> {
    let (mut state, mut now) = (inputs[0].clone(), shape);
    let (ry, rx) = (pattern.radius().along(1) as usize, pattern.radius().along_x() as usize);
    for done in 0..steps {
        let (ty, tx) = if pattern.boundary() == Boundary::Valid { (ry * done, rx * done) } else { (0, 0) };
        let cut: Vec<Vec<T>> = inputs[1..]
            .iter()
            .map(|c| (0..now[0]).flat_map(|y| c[(y + ty) * shape[1] + tx..][..now[1]].to_vec()).collect())
            .collect();
        let fields: Vec<&[T]> = std::iter::once(state.as_slice()).chain(cut.iter().map(|c| c.as_slice())).collect();
        (state, now) = step_by_definition(body, pattern, &fields, now, params);
    }
    state
}

fn case<T: Element>(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let (rx, ry) = (1 + rng.below(3) as u32, 1 + rng.below(2) as u32);
    let radius = Radius::yx(ry, rx);
    let boundary = pick(&mut rng, &Boundary::ALL);
    let warp = pick(&mut rng, &[32, 32, 16, 8, 4]);
    let pattern = Pattern::grid(radius, warp, 1, 1, 1, boundary).expect("valid");
    let most = FusedTile::max_steps(&pattern, T::TYPE);
    if most == 0 {
        return Err(format!("seed {seed:#x}: no fused tile for {pattern}"));
    }
    let steps = pick(&mut rng, &[1, 2, 3, most - 1, most]).clamp(1, most);
    let star = rng.below(2) == 0;
    let taps = Taps::new(radius, common::grid_taps(radius, star));
    let fields = random_fields(seed);
    let param_types = random_params(&mut rng);
    let body = random_body(&mut rng, T::TYPE, fields, param_types.clone(), &taps);
    let params: Vec<Scalar> = param_types.iter().map(|&ty| bodies::constant(&mut rng, ty)).collect();
    let program = WarpProgram::compile_steps(pattern, &body, steps).map_err(|e| format!("seed {seed:#x}: {e}"))?;
    let tile = program.fused.ok_or("no fused tile")?;
    let (hy, hx) = ((steps * ry) as usize, tile.halo() as usize);
    // Smaller than the halo, about one tile, several tiles and strips.
    let shape = match rng.below(3) {
        0 => [1 + rng.below(2 * hy as u64 + 2) as usize, 1 + rng.below(2 * hx as u64 + 3) as usize],
        1 => [tile.rows as usize - 2 + rng.below(5) as usize, tile.elements() as usize - 2 + rng.below(5) as usize],
        _ => [1 + rng.below(3 * tile.rows as u64) as usize, 1 + rng.below(3 * tile.elements() as u64) as usize],
    };
    if boundary == Boundary::Valid && (shape[0] <= 2 * hy || shape[1] <= 2 * hx) {
        return Ok(());
    }
    let n = shape[0] * shape[1];
    let inputs: Vec<Vec<T>> = (0..fields).map(|f| awkward::<T>(n, seed ^ ((f as u64 + 1) * 0x9e37))).collect();
    let want = steps_by_definition(&body, &pattern, &inputs, shape, steps as usize, &params);
    let slices: Vec<&[T]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut got = vec![poison::<T>(); want.len()];
    program.emulate_grid(&slices, Extent::from(shape), &mut got, &params).map_err(|e| format!("seed {seed:#x}: {e}"))?;
    match first_difference(&got, &want) {
        None => Ok(()),
        Some(i) => Err(format!(
            "seed {seed:#x}: {} r={radius} warp={warp} {boundary} T={steps} shape={shape:?} fields={fields}: output {i} got {:?} want {:?}\n{body}",
            T::TYPE,
            got.get(i),
            want.get(i)
        )),
    }
}

#[test]
fn one_fused_2d_launch_is_its_steps_applied_one_by_one() {
    common::run_seeded(BASE_SEED, CASES, |seed, ty| by_type!(case, seed, ty));
}

#[test]
fn the_2d_tile_streams_its_strip_with_one_window_per_step() {
    let pattern = Pattern::grid(Radius::yx(1, 1), 32, 1, 1, 1, Boundary::Zero).expect("valid");
    let body = common::star_sum_row_major(Radius::yx(1, 1));
    let program = WarpProgram::compile_steps(pattern, &body, 4).expect("compiles");
    let tile = program.fused.expect("fused");
    // 4 steps of 2 rows of 4 f32 per lane: 32 words of windows.
    assert_eq!((tile.per_lane, tile.elements(), tile.halo(), tile.radius_y, tile.rows, tile.window_words()), (4, 128, 4, 1, 128, 32));
    let [Stmt::Branch { taken, fallback, .. }] = program.machine.body.as_slice() else { panic!("one branch on the strip") };
    let count = |stmts: &[Stmt], f: fn(&Op) -> bool| stmts.iter().filter(|s| matches!(s, Stmt::Op(op) if f(op))).count();
    for (path, rules) in [(taken, false), (fallback, true)] {
        let loops: Vec<(u32, &Vec<Stmt>)> =
            path.iter().filter_map(|s| if let Stmt::Loop { times, body } = s { Some((*times, body)) } else { None }).collect();
        // The windows fill over 2 * T * ry = 8 rows, unrolled, then one iteration per output row
        // (128), two per loop iteration (the window registers' roles turn), the rest after it.
        assert_eq!(loops.iter().map(|l| l.0).collect::<Vec<_>>(), [63]);
        let body = loops[0].1;
        // Each step but the last puts its new row through the rule along y, once.
        assert_eq!(count(body, |op| matches!(op, Op::RowRule { .. })), if rules { 2 * 3 } else { 0 });
        assert_eq!(count(body, |op| matches!(op, Op::StepRule { .. })), if rules { 2 * 4 } else { 0 });
        assert_eq!(count(body, |op| matches!(op, Op::StreamRows(1))), 2);
        assert_eq!(count(path, |op| matches!(op, Op::StreamRows(1))), 8 + 2, "8 filling, 2 after the loop");
        // No row moves between registers but the new ones: per iteration and step one copy of
        // the row the step before produced (for step 1 the input row) into its window.
        assert_eq!(count(body, |op| matches!(op, Op::Carry(_))), 2 * 4);
        // Filling, the iteration whose newest input is box row f runs f / 2 steps.
        let steps_run = |stmts: &[Stmt]| count(stmts, |op| matches!(op, Op::Neighbour { .. })) / 2;
        let fill: Vec<&[Stmt]> = path.split(|s| matches!(s, Stmt::Op(Op::StreamRows(1)))).take(8).collect();
        assert_eq!(fill.iter().map(|i| steps_run(i)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2, 3, 3]);
    }
}
