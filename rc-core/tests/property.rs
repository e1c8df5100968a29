//! Randomized differential test of the whole CPU path: random pattern (radius, warp, outputs per
//! thread, boundary), strategy, distribution, body (a random typed DAG over the taps of 1 to 3
//! input fields, parameters and constants, using every operation on every type), element type,
//! length and data. The warp program,
//! emulated, must equal `Body::eval` applied to each output's window by the definition of the
//! boundary rule, bit for bit (NaN equal to NaN), and must refuse exactly the lengths
//! `Pattern::output_len` refuses, and inputs of another count or of different lengths.
//!
//! Seeded and reproducible: case `i` is generated from seed `BASE_SEED + i` alone. A failure is
//! shrunk (shorter input, smaller body, smaller pattern) and printed with its seed; rerun one case
//! with `RC_PROPERTY_SEED=<seed> cargo test -p rc-stencil-core --test property`, or another range with
//! `RC_PROPERTY_BASE=<seed> RC_PROPERTY_CASES=<count>`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use rc_core::testdata::{awkward, first_difference, poison, Rng};
use rc_core::{
    Body, Boundary, Element, Error, Layout, LengthError, NodeId, Offset, Pattern, Scalar, ScalarType, Strategy,
    WarpProgram,
};

mod bodies;
use bodies::{chance, constant, pick, random_body, random_fields, random_params, Taps, HALVES, NUMBERS};
use ScalarType::{Bool, BF16, F16, F32, F64, I32, U32};

const BASE_SEED: u64 = 0x5EED_0000_0000;
const CASES: u64 = 20_000;

// ---- random cases -------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Case {
    pattern: Pattern,
    strategy: Strategy,
    /// Where the register cache keeps elements (strategy register_cache only).
    layout: Layout,
    body: Body,
    params: Vec<Scalar>,
    n: usize,
    /// Data: `awkward(n, data_seed)`, or raw random bits of the element type.
    raw_data: bool,
    data_seed: u64,
}

fn random_length(rng: &mut Rng, pattern: &Pattern) -> usize {
    let r = pattern.radius().along_x() as usize;
    let tile = pattern.tile_outputs() as usize;
    let block = pattern.block_outputs() as usize;
    let jitter = rng.below(3) as usize; // 0, 1 or 2
    match rng.below(12) {
        0 => 0,
        1 => 1 + rng.below(3) as usize,
        2 => 2 * r,
        3 => 2 * r + 1,
        4 => (2 * r + jitter).saturating_sub(1),
        5 => tile * (1 + rng.below(3) as usize) + 2 * r + jitter - 1,
        6 => block * (1 + rng.below(2) as usize) + 2 * r + jitter - 1,
        7 => rng.below(64) as usize,
        // Log-uniform up to a few thousand.
        _ => rng.uniform(16f64.ln(), 5000f64.ln()).exp() as usize,
    }
}

fn random_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let radius = match rng.below(4) {
        0 => 1 + rng.below(3) as u32,
        1 => 40,
        _ => 1 + rng.below(40) as u32,
    };
    let warp = 1 << (1 + rng.below(5));
    let p = 1 + rng.below(8) as u32;
    let boundary = pick(&mut rng, &Boundary::ALL);
    let pattern = Pattern::new(radius, warp, p, boundary).expect("valid pattern");
    let strategy = if chance(&mut rng, 0.7) { Strategy::RegisterCache } else { pick(&mut rng, &Strategy::ALL) };
    // Granules (and windows) of V consecutive elements per lane: V a power of two dividing
    // outputs_per_thread.
    let granules: Vec<u32> = [1, 2, 4, 8].into_iter().filter(|v| p % v == 0).collect();
    let layout = if strategy == Strategy::RegisterCache && chance(&mut rng, 0.35) {
        Layout::Granule(pick(&mut rng, &granules))
    } else if strategy == Strategy::RegisterCache && chance(&mut rng, 0.2) {
        Layout::Window(pick(&mut rng, &granules))
    } else if strategy == Strategy::RegisterCache && chance(&mut rng, 0.2) {
        Layout::Staged(pick(&mut rng, &granules))
    } else {
        Layout::RoundRobin
    };
    let element = pick(&mut rng, &NUMBERS);
    let half = half_element(seed);
    let element = half.unwrap_or(element);
    let mut param_types = random_params(&mut rng);
    // A 16-bit body also reads a parameter of its type.
    param_types.extend(half);
    let params = param_types.iter().map(|&t| constant(&mut rng, t)).collect();
    let body = random_body(&mut rng, element, random_fields(seed), param_types, &Taps::line(radius));
    let n = random_length(&mut rng, &pattern);
    let raw_data = chance(&mut rng, 0.25);
    let data_seed = rng.next_u64();
    Case { pattern, strategy, layout, body, params, n, raw_data, data_seed }
}

/// A fifth of the cases compute in f16 or bf16 (with rc-core's `half` feature, which gives them
/// an `Element`): drawn from a generator of their own, so that the other cases stay what they
/// were before rc had 16-bit floats.
fn half_element(seed: u64) -> Option<ScalarType> {
    let mut rng = Rng::new(seed ^ 0x16b1_7000_0000_0000);
    (cfg!(feature = "half") && chance(&mut rng, 0.2)).then(|| pick(&mut rng, &HALVES))
}

/// One input per field of the body: field 0 from the case's data seed, the others from seeds of
/// their own.
fn data<T: Element>(case: &Case) -> Vec<Vec<T>> {
    (0..case.body.fields() as u64)
        .map(|field| {
            let seed = case.data_seed.wrapping_add(field.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            if case.raw_data {
                let mut rng = Rng::new(seed);
                (0..case.n).map(|_| T::from_bits(rng.next_u64())).collect()
            } else {
                awkward(case.n, seed)
            }
        })
        .collect()
}

// ---- the check ----------------------------------------------------------------------------------

/// How the oracle finds an output's window. The test uses the definition; the self-test below
/// breaks it on purpose to show that the comparison notices.
#[derive(Clone, Copy, Debug)]
struct Oracle {
    centre_offset: i64,
    boundary: Option<Boundary>,
}

const DEFINITION: Oracle = Oracle { centre_offset: 0, boundary: None };

/// Why a case failed: what kind of failure (the shrinker keeps it), and the details.
#[derive(Clone, Debug)]
struct Failure {
    kind: &'static str,
    text: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn fail(kind: &'static str, text: String) -> Failure {
    Failure { kind, text }
}

fn check(case: &Case, oracle: Oracle) -> Result<(), Failure> {
    match case.body.element() {
        F32 => check_typed::<f32>(case, oracle),
        F64 => check_typed::<f64>(case, oracle),
        I32 => check_typed::<i32>(case, oracle),
        U32 => check_typed::<u32>(case, oracle),
        #[cfg(feature = "half")]
        F16 => check_typed::<half::f16>(case, oracle),
        #[cfg(feature = "half")]
        BF16 => check_typed::<half::bf16>(case, oracle),
        #[cfg(not(feature = "half"))]
        F16 | BF16 => unreachable!("16-bit cases are drawn with the half feature only"),
        Bool => unreachable!("elements are numbers"),
    }
}

fn check_typed<T: Element>(case: &Case, oracle: Oracle) -> Result<(), Failure> {
    let pattern = case.pattern;
    let distribution = case.layout.build(&pattern).map_err(|e| fail("distribution", format!("{e}")))?;
    let program = match WarpProgram::compile_with(pattern, case.strategy, distribution.as_ref(), &case.body) {
        Ok(program) => program,
        // A stage too large for shared memory is refused by design (and says so); only a
        // staged layout may be refused that way, or strategy shared_memory staging several
        // fields.
        Err(Error::Schedule(rc_core::ScheduleError::StageTooLarge { .. }))
            if matches!(case.layout, Layout::Staged(_)) =>
        {
            return Ok(());
        }
        Err(Error::Schedule(rc_core::ScheduleError::BlockStageTooLarge { fields, .. }))
            if case.strategy == Strategy::SharedMemory && fields > 1 =>
        {
            return Ok(());
        }
        Err(e) => return Err(fail("compile", format!("compile failed: {e}"))),
    };
    let inputs: Vec<Vec<T>> = data(case);
    let inputs: Vec<&[T]> = inputs.iter().map(Vec::as_slice).collect();
    let n = case.n;
    let n_out = match pattern.output_len(n) {
        Ok(len) => len,
        Err(e) => {
            // The emulator must refuse this length, with the same error.
            return match program.emulate(&inputs, &mut [], &case.params) {
                Err(Error::Length(got)) if got == e => Ok(()),
                other => Err(fail("length", format!("n={n}: output_len says `{e}`, emulate gave {other:?}"))),
            };
        }
    };
    // An output of the wrong length is refused too.
    let wrong = if n_out == 0 || n % 2 == 0 { n_out + 1 } else { n_out - 1 };
    let mut bad = vec![poison::<T>(); wrong];
    let expected = pattern.check_lengths(n, wrong).expect_err("a wrong output length");
    match program.emulate(&inputs, &mut bad, &case.params) {
        Err(Error::Length(got)) if got == expected => {}
        other => {
            let text = format!(
                "n={n}: an output of {wrong} elements must be refused with `{expected}`, emulate gave {other:?}"
            );
            return Err(fail("wrong output length", text));
        }
    }
    check_inputs_refused(&program, &inputs, n_out, &case.params)?;

    let mut got = vec![poison::<T>(); n_out];
    program
        .emulate(&inputs, &mut got, &case.params)
        .map_err(|e| fail("emulate", format!("n={n}: emulate failed: {e}")))?;
    let want = reference(case, oracle, &inputs, n_out);
    match first_difference(&got, &want) {
        None => Ok(()),
        Some(i) => Err(fail(
            "mismatch",
            describe_difference(case, oracle, &inputs, i, got.get(i).copied(), want.get(i).copied()),
        )),
    }
}

/// One input too few, and the last field one element short, are refused with the errors that
/// name them (with one field, the shorter input is only another length).
fn check_inputs_refused<T: Element>(
    program: &WarpProgram,
    inputs: &[&[T]],
    n_out: usize,
    params: &[Scalar],
) -> Result<(), Failure> {
    let mut out = vec![poison::<T>(); n_out];
    let fields = inputs.len();
    let few = &inputs[..fields - 1];
    let expected = LengthError::InputCount { expected: fields, got: fields - 1 };
    match program.emulate(few, &mut out, params) {
        Err(Error::Length(got)) if got == expected => {}
        other => {
            return Err(fail(
                "input count",
                format!("{} inputs of {fields} must be refused with `{expected}`, emulate gave {other:?}", fields - 1),
            ))
        }
    }
    let (n, last) = (inputs[0].len(), fields - 1);
    if fields == 1 || n == 0 {
        return Ok(());
    }
    let mut short = inputs.to_vec();
    short[last] = &inputs[last][..n - 1];
    let expected = LengthError::InputLength { input: last, expected: n, got: n - 1 };
    match program.emulate(&short, &mut out, params) {
        Err(Error::Length(got)) if got == expected => Ok(()),
        other => Err(fail(
            "input length",
            format!("input {last} one element short must be refused with `{expected}`, emulate gave {other:?}"),
        )),
    }
}

/// Input index of output `i`'s centre: `i + r - shift`.
fn centre(pattern: &Pattern, oracle: Oracle, i: usize) -> i64 {
    i as i64 + pattern.radius().along_x() as i64 - pattern.shift() as i64 + oracle.centre_offset
}

fn reference<T: Element>(case: &Case, oracle: Oracle, inputs: &[&[T]], n_out: usize) -> Vec<T> {
    let boundary = oracle.boundary.unwrap_or(case.pattern.boundary());
    (0..n_out)
        .map(|i| {
            let c = centre(&case.pattern, oracle, i);
            let tap = |field: u32, d: Offset| boundary.read(inputs[field as usize], c + d.along_x() as i64).to_scalar();
            T::from_bits(case.body.eval(tap, &case.params)[0].bits)
        })
        .collect()
}

fn describe_difference<T: Element>(
    case: &Case,
    oracle: Oracle,
    inputs: &[&[T]],
    i: usize,
    got: Option<T>,
    want: Option<T>,
) -> String {
    let pattern = case.pattern;
    let boundary = oracle.boundary.unwrap_or(pattern.boundary());
    let c = centre(&pattern, oracle, i);
    let mut s = format!("n={}: output {i} (centre input {c}): emulate gave {got:?}, eval {want:?}\n", case.n);
    if let (Some(g), Some(w)) = (got, want) {
        let _ = writeln!(s, "  bits: emulate {:#x}, eval {:#x}", g.to_scalar().bits, w.to_scalar().bits);
    }
    let _ = write!(s, "  taps:");
    for (field, d) in case.body.used_field_taps() {
        let (g, input) = (c + d.along_x() as i64, inputs[field as usize]);
        let _ = match boundary.source(input.len(), g) {
            Some(src) => write!(s, " w{field}[{d}]=input{field}[{src}]={:?}", input[src]),
            None => write!(s, " w{field}[{d}]=0 (input{field}[{g}] outside)"),
        };
    }
    s
}

fn describe_case(case: &Case) -> String {
    let params: Vec<String> = case.params.iter().map(|p| p.to_string()).collect();
    format!(
        "pattern: {}\nstrategy: {}, distribution: {:?}\nelement: {}, fields: {}, params: [{}]\nn: {}, data: {} (seed {:#x})\nbody:\n{}",
        case.pattern,
        case.strategy,
        case.layout,
        case.body.element(),
        case.body.fields(),
        params.join(", "),
        case.n,
        if case.raw_data { "raw bits" } else { "awkward" },
        case.data_seed,
        indent(&case.body.to_string()),
    )
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

// ---- shrinking ----------------------------------------------------------------------------------

fn live_count(body: &Body) -> usize {
    body.live().iter().filter(|&&l| l).count()
}

/// Smaller cases that might still fail: shorter inputs (a prefix of the same data), the body cut
/// down to one of its sub-expressions, fewer outputs per thread, a narrower warp, a radius that
/// just covers the taps, the register-cache strategy.
fn candidates(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let r = case.pattern.radius().along_x() as usize;
    let mut lengths: Vec<usize> = (0..=(2 * r + 2).min(case.n)).collect();
    lengths.extend([case.n / 4, case.n / 2, case.n * 3 / 4, case.n.saturating_sub(1)]);
    for n in lengths.into_iter().filter(|&n| n < case.n) {
        out.push(Case { n, ..case.clone() });
    }
    let body = &case.body;
    let live = live_count(body);
    for id in 0..body.nodes().len() as NodeId {
        if body.ty(id) == body.element() && id != body.results()[0] {
            if let Ok(b) = Body::new(
                body.element(),
                body.fields(),
                body.params().to_vec(),
                body.radius(),
                body.nodes().to_vec(),
                vec![id],
            ) {
                if live_count(&b) < live {
                    out.push(Case { body: b, ..case.clone() });
                }
            }
        }
    }
    let p = case.pattern;
    let with = |radius: u32, warp: u32, outputs: u32| -> Option<Case> {
        let pattern = Pattern::new(radius, warp, outputs, p.boundary()).ok()?;
        let body = Body::new(
            body.element(),
            body.fields(),
            body.params().to_vec(),
            radius,
            body.nodes().to_vec(),
            vec![body.results()[0]],
        )
        .ok()?;
        Some(Case { pattern, body, ..case.clone() })
    };
    let reach = body.used_taps().iter().map(|d| d.along_x().unsigned_abs()).max().unwrap_or(1).max(1);
    let mut smaller = Vec::new();
    if p.outputs_per_thread() > 1 {
        smaller.push(with(p.radius().along_x(), p.warp(), 1));
        smaller.push(with(p.radius().along_x(), p.warp(), p.outputs_per_thread() - 1));
    }
    if p.warp() > 2 {
        smaller.push(with(p.radius().along_x(), 2, p.outputs_per_thread()));
        smaller.push(with(p.radius().along_x(), p.warp() / 2, p.outputs_per_thread()));
    }
    if reach < p.radius().along_x() {
        smaller.push(with(reach, p.warp(), p.outputs_per_thread()));
    }
    out.extend(smaller.into_iter().flatten());
    if case.strategy != Strategy::RegisterCache {
        out.push(Case { strategy: Strategy::RegisterCache, ..case.clone() });
    }
    if case.layout != Layout::RoundRobin {
        out.push(Case { layout: Layout::RoundRobin, ..case.clone() });
    }
    // A smaller pattern may not split into the same granules.
    out.retain(|c| c.layout.build(&c.pattern).is_ok());
    out
}

/// Greedily takes the first smaller candidate that still fails the same way, until none does.
fn shrink(mut case: Case, mut failure: Failure, oracle: Oracle) -> (Case, Failure) {
    for _ in 0..200 {
        let next = candidates(&case)
            .into_iter()
            .find_map(|c| check(&c, oracle).err().filter(|f| f.kind == failure.kind).map(|f| (c, f)));
        match next {
            Some((c, f)) => (case, failure) = (c, f),
            None => break,
        }
    }
    (case, failure)
}

// ---- driver -------------------------------------------------------------------------------------

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => v.replace('_', "").parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

/// Runs cases `base..base + count` on all cores; returns the failure of the lowest seed, shrunk,
/// as a report.
fn run(base: u64, count: u64, oracle: Oracle) -> Option<String> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8) as u64;
    let stop = AtomicBool::new(false);
    let failures: Mutex<Vec<(u64, Case, Failure)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..threads {
            let (stop, failures) = (&stop, &failures);
            s.spawn(move || {
                let mut i = t;
                while i < count && !stop.load(Ordering::Relaxed) {
                    let seed = base.wrapping_add(i);
                    let case = random_case(seed);
                    if let Err(f) = check(&case, oracle) {
                        failures.lock().unwrap().push((seed, case, f));
                        stop.store(true, Ordering::Relaxed);
                    }
                    i += threads;
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|(seed, ..)| seed.wrapping_sub(base));
    let (seed, case, failure) = failures.into_iter().next()?;
    let original = describe_case(&case);
    let (small, small_failure) = shrink(case, failure.clone(), oracle);
    Some(format!(
        "case seed {seed:#x} failed (rerun it alone: RC_PROPERTY_SEED={seed:#x} cargo test -p rc-stencil-core --test property)\n\
         \n--- shrunk ---\n{}\n{small_failure}\n\n--- as generated ---\n{original}\n{failure}",
        describe_case(&small)
    ))
}

#[test]
fn emulation_equals_eval_on_random_patterns_bodies_and_data() {
    let start = Instant::now();
    let (base, count) = match env_u64("RC_PROPERTY_SEED") {
        Some(seed) => (seed, 1),
        None => (env_u64("RC_PROPERTY_BASE").unwrap_or(BASE_SEED), env_u64("RC_PROPERTY_CASES").unwrap_or(CASES)),
    };
    if let Some(report) = run(base, count, DEFINITION) {
        panic!("{report}");
    }
    eprintln!("{count} random cases from seed {base:#x} in {:.1?}", start.elapsed());
}

/// The comparison is worth something only if it can fail: with the window shifted by one, or
/// with the wrong boundary rule, the oracle is wrong, and the run must say so (with a seed and a
/// shrunk case).
#[test]
fn a_wrong_oracle_is_caught_and_shrunk() {
    for (name, oracle) in [
        ("centre shifted by one", Oracle { centre_offset: 1, boundary: None }),
        ("boundary read as clamp", Oracle { centre_offset: 0, boundary: Some(Boundary::Clamp) }),
    ] {
        let report = run(BASE_SEED, 500, oracle).unwrap_or_else(|| panic!("{name}: 500 cases did not notice"));
        assert!(report.contains("RC_PROPERTY_SEED=0x"), "{name}: {report}");
        assert!(report.contains("--- shrunk ---") && report.contains("body:"), "{name}: {report}");
    }
}

/// Each case depends on its seed alone.
#[test]
fn cases_are_reproducible() {
    for seed in BASE_SEED..BASE_SEED + 50 {
        let (a, b) = (random_case(seed), random_case(seed));
        assert_eq!(describe_case(&a), describe_case(&b));
    }
}
