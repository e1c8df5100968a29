//! Kernels of 16-bit float elements (f16, bf16): every distribution and strategy, 1D to 3D,
//! prints a kernel ptxas accepts (with RC_PTXAS set, as CI does), whose emulation equals the
//! body's evaluation by the definition, bit for bit. Their loads and stores move 16-bit elements
//! (two to a 32-bit word in vectors), and each operation rounds once to 16 bits.

mod common;

use common::box_body;
use rc_core::body::{BinaryOp, Body, CompareOp, Node};
use rc_core::{Boundary, Layout, Offset, Pattern, Radius, Scalar, ScalarType, Strategy, WarpProgram};

/// `let t = (w[-1] + p) * w[1] - w[0] / f16::from_f32(1.5); if t < w[0] { t.max(-w[1]) } else
/// { f16::from_f32(t.to_f32() * 0.3) }` over the centre row of a 1D to 3D box of radius 1.
fn mixed_body(ty: ScalarType, radius: Radius) -> Body {
    let format = ty.half().expect("a 16-bit type");
    let at = |dx: i32| {
        let mut c = vec![0; radius.dims().count()];
        *c.last_mut().expect("1 to 3 dims") = dx;
        Offset::new(&c).expect("1 to 3 dims")
    };
    let nodes = vec![
        Node::Tap(0, at(-1)),                                   // 0
        Node::Param(0),                                         // 1
        Node::Binary(BinaryOp::Add, 0, 1),                      // 2
        Node::Tap(0, at(1)),                                    // 3
        Node::Binary(BinaryOp::Mul, 2, 3),                      // 4
        Node::Tap(0, at(0)),                                    // 5
        Node::Const(Scalar::new(ty, format.round(1.5) as u64)), // 6
        Node::Binary(BinaryOp::Div, 5, 6),                      // 7
        Node::Binary(BinaryOp::Sub, 4, 7),                      // 8
        Node::Compare(CompareOp::Lt, 8, 5),                     // 9
        Node::Unary(rc_core::UnaryOp::Neg, 3),                  // 10
        Node::Binary(BinaryOp::Max, 8, 10),                     // 11
        Node::Cast(ScalarType::F32, 8),                         // 12
        Node::Const(Scalar::f32(0.3)),                          // 13
        Node::Binary(BinaryOp::Mul, 12, 13),                    // 14
        Node::Cast(ty, 14),                                     // 15
        Node::Select { cond: 9, then: 11, otherwise: 15 },      // 16
    ];
    Body::new(ty, 1, vec![ty], radius, nodes, vec![16]).expect("type-checks")
}

/// The 1D configurations: every layout with vectors of 1 to 8 elements, and the other strategies.
fn configurations() -> Vec<(Strategy, Layout, u32)> {
    vec![
        (Strategy::RegisterCache, Layout::RoundRobin, 3),
        (Strategy::RegisterCache, Layout::Granule(2), 4),
        (Strategy::RegisterCache, Layout::Granule(8), 8),
        (Strategy::RegisterCache, Layout::Window(4), 8),
        (Strategy::RegisterCache, Layout::Window(8), 16),
        (Strategy::RegisterCache, Layout::Staged(8), 8),
        (Strategy::SharedMemory, Layout::RoundRobin, 4),
        (Strategy::Naive, Layout::RoundRobin, 2),
    ]
}

#[cfg(feature = "half")]
fn reference(body: &Body, pattern: &Pattern, input: &[u16], params: &[Scalar]) -> Vec<u16> {
    let r = pattern.radius().along_x() as i64;
    let n = input.len() as i64;
    let n_out = pattern.output_len(input.len()).expect("length");
    (0..n_out as i64)
        .map(|i| {
            let centre = if pattern.boundary() == Boundary::Valid { i + r } else { i };
            let tap = |_: u32, d: Offset| {
                let j = centre + d.along_x() as i64;
                let bits = match pattern.boundary() {
                    Boundary::Valid | Boundary::Zero => {
                        if (0..n).contains(&j) {
                            input[j as usize]
                        } else {
                            0
                        }
                    }
                    Boundary::Clamp => input[j.clamp(0, n - 1) as usize],
                    Boundary::Wrap => input[j.rem_euclid(n) as usize],
                };
                Scalar::new(body.element(), bits as u64)
            };
            body.eval(tap, params)[0].bits as u16
        })
        .collect()
}

#[cfg(feature = "half")]
fn data(ty: ScalarType, n: usize, seed: u64) -> Vec<u16> {
    let mut rng = rc_core::testdata::Rng::new(seed);
    let format = ty.half().expect("a 16-bit type");
    (0..n)
        .map(|i| if i % 7 == 3 { rng.next_u64() as u16 } else { format.round(rng.uniform(-8.0, 8.0) as f32) })
        .collect()
}

// The emulator takes elements of an `Element` type: rc-core's `half` feature gives f16 and bf16 one.
#[cfg(feature = "half")]
#[test]
fn sixteen_bit_kernels_of_every_distribution_emulate_their_body() {
    for ty in [ScalarType::F16, ScalarType::BF16] {
        for boundary in Boundary::ALL {
            for (strategy, layout, p) in configurations() {
                for (body, r) in [(box_body(3, ty), 3), (mixed_body(ty, Radius::x(1)), 1), (box_body(16, ty), 16)] {
                    let pattern = Pattern::new(r, 32, p, boundary).expect("valid");
                    let program = WarpProgram::compile_for(pattern, strategy, layout, &body).expect("compiles");
                    let params: Vec<Scalar> = body
                        .params()
                        .iter()
                        .map(|&t| Scalar::new(t, t.half().map_or(0, |f| f.round(0.75)) as u64))
                        .collect();
                    for n in [2 * r as usize + 1, 100, 1031, 4096] {
                        let input = data(ty, n, n as u64);
                        let want = reference(&body, &pattern, &input, &params);
                        let got = emulate(ty, &program, &input, want.len(), &params);
                        assert_eq!(got, want, "{pattern} {strategy} {layout} {ty} n={n}\n{body}");
                    }
                }
            }
        }
    }
}

/// Emulates `program` over 16-bit `input` (bits), through the element type of `ty`.
#[cfg(feature = "half")]
fn emulate(ty: ScalarType, program: &WarpProgram, input: &[u16], n_out: usize, params: &[Scalar]) -> Vec<u16> {
    fn run<T: rc_core::Element>(program: &WarpProgram, input: &[u16], n_out: usize, params: &[Scalar]) -> Vec<u16> {
        let input: Vec<T> = input.iter().map(|&b| T::from_bits(b as u64)).collect();
        let mut out = vec![rc_core::testdata::poison::<T>(); n_out];
        program.emulate(&[&input], &mut out, params).expect("emulates");
        out.iter().map(|v| v.to_scalar().bits as u16).collect()
    }
    match ty {
        ScalarType::F16 => run::<half::f16>(program, input, n_out, params),
        _ => run::<half::bf16>(program, input, n_out, params),
    }
}

#[test]
fn sixteen_bit_kernels_assemble() {
    let mut kernels = Vec::new();
    for ty in [ScalarType::F16, ScalarType::BF16] {
        for boundary in [Boundary::Zero, Boundary::Clamp] {
            for (strategy, layout, p) in configurations() {
                for (body, r) in [(box_body(4, ty), 4), (mixed_body(ty, Radius::x(1)), 1)] {
                    let pattern = Pattern::new(r, 32, p, boundary).expect("valid");
                    let program = WarpProgram::compile_for(pattern, strategy, layout, &body).expect("compiles");
                    kernels.push((format!("{pattern} {strategy} {layout} {ty}"), rc_core::ptx::print(&program, "k")));
                }
            }
            for radius in [Radius::yx(1, 1), Radius::zyx(1, 1, 1)] {
                let planes = if radius.dims().count() == 3 { 4 } else { 1 };
                for (strategy, layout, p) in [
                    (Strategy::RegisterCache, Layout::RoundRobin, 2),
                    (Strategy::RegisterCache, Layout::Granule(4), 8),
                    (Strategy::SharedMemory, Layout::RoundRobin, 2),
                ] {
                    let pattern = Pattern::grid(radius, 32, p, 2, planes, boundary).expect("valid");
                    let program =
                        WarpProgram::compile_for(pattern, strategy, layout, &mixed_body(ty, radius)).expect("compiles");
                    kernels.push((format!("{pattern} {strategy} {layout} {ty}"), rc_core::ptx::print(&program, "k")));
                }
            }
        }
    }
    // Fused steps: 1D block tiles (the default 256 threads), warp tiles (96 threads), a 2D
    // strip; each under the boundary rule inside the kernel.
    for ty in [ScalarType::F16, ScalarType::BF16] {
        for boundary in [Boundary::Zero, Boundary::Clamp, Boundary::Valid] {
            for (radius, threads, steps) in
                [(Radius::x(4), 256, 6), (Radius::x(1), 256, 9), (Radius::x(2), 96, 4), (Radius::yx(1, 1), 256, 3)]
            {
                let pattern = match radius.dims().count() {
                    1 => Pattern::new(radius.along_x(), 32, 1, boundary),
                    _ => Pattern::grid(radius, 32, 1, 1, 1, boundary),
                };
                let pattern = pattern.and_then(|p| p.with_launch_bounds(threads, None)).expect("valid");
                let body =
                    if radius.dims().count() == 1 { box_body(radius.along_x(), ty) } else { mixed_body(ty, radius) };
                let program = WarpProgram::compile_steps(pattern, &body, steps).expect("fuses");
                kernels.push((format!("{pattern} fused {steps} steps {ty}"), rc_core::ptx::print(&program, "k")));
            }
        }
    }
    for (what, ptx) in &kernels {
        let target = if what.ends_with("bf16") { ".target sm_80" } else { ".target sm_70" };
        assert!(ptx.contains(target), "{what}: {target}\n{ptx}");
        assert!(ptx.contains("ld.global.nc.b16") || ptx.contains("ld.global.nc.v"), "{what}: 16-bit loads\n{ptx}");
    }
    let Some(ptxas) = std::env::var_os("RC_PTXAS") else { return };
    for (i, (what, ptx)) in kernels.iter().enumerate() {
        let file = std::env::temp_dir().join(format!("rc-half-{}-{i}.ptx", std::process::id()));
        std::fs::write(&file, ptx).expect("writes the PTX");
        let out = std::process::Command::new(&ptxas)
            .args(["-arch=sm_90", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("runs ptxas");
        assert!(out.status.success(), "ptxas refused {what}: {}\n{ptx}", String::from_utf8_lossy(&out.stderr));
        let _ = std::fs::remove_file(&file);
    }
}

/// The number of shuffles of `program`, per rotation.
fn shuffles_by_rotation(program: &WarpProgram) -> std::collections::BTreeMap<u32, usize> {
    let mut by = std::collections::BTreeMap::new();
    for instr in &program.instrs {
        if let rc_core::program::Instr::Shuffle { rotate, .. } = instr {
            *by.entry(*rotate).or_insert(0) += 1;
        }
    }
    by
}

#[test]
fn sixteen_bit_elements_travel_two_to_a_shuffle() {
    for ty in [ScalarType::F16, ScalarType::BF16] {
        for (layout, p) in
            [(Layout::RoundRobin, 4), (Layout::Granule(2), 4), (Layout::Granule(4), 8), (Layout::Granule(8), 8)]
        {
            for r in [1, 2, 3, 8] {
                let pattern = Pattern::new(r, 32, p, Boundary::Zero).expect("valid");
                let compile = |ty| {
                    WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &box_body(r, ty))
                        .expect("compiles")
                };
                let (wide, narrow) = (compile(ScalarType::F32), compile(ty));
                // The f32 program shuffles each fetch alone; 16-bit pairs those of a rotation.
                let want: std::collections::BTreeMap<u32, usize> =
                    shuffles_by_rotation(&wide).into_iter().map(|(rotate, n)| (rotate, n.div_ceil(2))).collect();
                assert_eq!(shuffles_by_rotation(&narrow), want, "{pattern} {layout} {ty}");
                let (words, paired) = narrow.shuffled_words();
                assert_eq!(words, want.values().sum::<usize>());
                assert_eq!(
                    paired,
                    wide.shuffled_words().0 - words,
                    "{pattern} {layout} {ty}: every other shuffle saved"
                );
                // Each path of the kernel prints its shuffles.
                let ptx = rc_core::ptx::print(&narrow, "k");
                let paths =
                    rc_core::ptx::print(&wide, "k").matches("shfl.sync").count() / wide.shuffled_words().0.max(1);
                assert_eq!(ptx.matches("shfl.sync").count(), words * paths, "{pattern} {layout} {ty}\n{ptx}");
                assert!((narrow.shuffles_per_output() - words as f64 / p as f64).abs() < 1e-9);
                if paired > 0 {
                    let pack = if ty == ScalarType::BF16 { "prmt.b32" } else { "mov.b32 %r" };
                    assert!(ptx.contains(pack), "{pattern} {layout} {ty}: packs pairs\n{ptx}");
                    assert!(rc_core::Explanation::new("k", &narrow).to_string().contains("two share a 32-bit word"));
                    // Round-robin lanes past the wrap publish registers 2k + 1 and 2k + 2: one prmt.
                    if layout == Layout::RoundRobin {
                        assert!(
                            ptx.contains("prmt.b32") && ptx.contains("0x5432"),
                            "{pattern} {layout} {ty}: straddling words\n{ptx}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn sixteen_bit_caches_of_shuffling_distributions_hold_two_elements_a_register() {
    use rc_core::machine::Op;
    use rc_core::program::Instr;
    for ty in [ScalarType::F16, ScalarType::BF16] {
        for (layout, p) in [(Layout::RoundRobin, 8), (Layout::Granule(4), 8), (Layout::Granule(8), 16)] {
            for r in [1, 4, 8] {
                let pattern = Pattern::new(r, 32, p, Boundary::Clamp).expect("valid");
                let compile = |ty| {
                    WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &box_body(r, ty))
                        .expect("compiles")
                };
                let (wide, narrow) = (compile(ScalarType::F32), compile(ty));
                let what = format!("{pattern} {layout} {ty}");
                // Loaded registers 2k and 2k + 1 share word k.
                let pairs: std::collections::BTreeSet<u32> =
                    narrow.schedule.loads.iter().map(|plan| plan.reg / 2).collect();
                assert_eq!(narrow.cache_registers(), pairs.len() as u32, "{what}");
                assert!(
                    2 * narrow.cache_registers() <= wide.cache_registers() + 1,
                    "{what}: {} against f32's {}",
                    narrow.cache_registers(),
                    wide.cache_registers()
                );
                // Every loaded element reaches its readers through a word: the machine program
                // packs each cache load, on every path, and reads no loaded register otherwise.
                let mut loaded = std::collections::HashSet::new();
                narrow.machine.visit(&mut |op| {
                    if op.loads_cache() {
                        loaded.extend(op.defs());
                    }
                });
                narrow.machine.visit(&mut |op| match op {
                    Op::Compute(Instr::Pack { .. }) => {}
                    other => assert!(
                        other.uses().iter().all(|u| !loaded.contains(u)),
                        "{what}: {other:?} reads an unpacked cache register"
                    ),
                });
                let estimate = narrow.register_estimate();
                // At most the two loads about to be packed besides the words.
                assert!(estimate.cache <= narrow.cache_registers() + 2, "{what}: {estimate}");
                let text = rc_core::Explanation::new("k", &narrow).to_string();
                assert!(text.contains("two share each 32-bit cache register"), "{what}\n{text}");
            }
        }
    }
    // Windows read their own registers only: nothing to pack.
    let pattern = Pattern::new(4, 32, 8, Boundary::Clamp).expect("valid");
    let window =
        WarpProgram::compile_for(pattern, Strategy::RegisterCache, Layout::Window(8), &box_body(4, ScalarType::F16))
            .expect("compiles");
    assert_eq!(window.cache_registers(), window.schedule.loads.len() as u32);
    assert!(!window.instrs.iter().any(|i| matches!(i, rc_core::program::Instr::Pack { .. })));
}

#[test]
fn sixteen_bit_vectors_move_eight_elements_in_sixteen_bytes() {
    for ty in [ScalarType::F16, ScalarType::BF16] {
        // Staged windows copy their stage with 16-byte loads and read it with 16-byte reads.
        for (layout, shared) in [
            (Layout::Granule(8), false),
            (Layout::Window(8), false),
            (Layout::Staged(8), true),
            (Layout::Granule(16), false),
        ] {
            let pattern = Pattern::new(4, 32, 16, Boundary::Zero).expect("valid");
            let program =
                WarpProgram::compile_for(pattern, Strategy::RegisterCache, layout, &box_body(4, ty)).expect("compiles");
            assert_eq!(program.machine.width, 8, "{layout} {ty}");
            let ptx = rc_core::ptx::print(&program, "k");
            assert!(ptx.contains("ld.global.nc.v4.b32"), "{layout} {ty}: 16-byte global loads\n{ptx}");
            assert_eq!(ptx.contains("ld.shared.v4.b32"), shared, "{layout} {ty}: 16-byte shared reads\n{ptx}");
            assert!(ptx.contains("st.global.v4.b32"), "{layout} {ty}: 16-byte stores\n{ptx}");
        }
    }
}
