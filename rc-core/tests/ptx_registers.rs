//! Every register a kernel reads is written on every path that reaches the read. The emulator
//! follows one path per tile, so a PTX register computed on one side of a branch (a scratch
//! register the printer reuses) and read on the other would pass it; this check reads the
//! printed PTX itself.

mod common;

use std::collections::{HashMap, HashSet};

use common::*;
use rc_core::{Boundary, Layout, Pattern, ScalarType, Strategy, WarpProgram};

/// Registers an instruction line reads and writes, in PTX's `op dst, src, ...;` form.
fn operands(line: &str) -> (Vec<String>, Vec<String>) {
    let regs = |s: &str| -> Vec<String> {
        let mut out = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                let start = i;
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                    i += 1;
                }
                let r = &s[start..i];
                // Special registers (%tid.x, ...) are always defined.
                if !r.contains('.') {
                    out.push(r.to_string());
                }
            } else {
                i += 1;
            }
        }
        out
    };
    let body = line.trim().trim_end_matches(';');
    let body = if body.starts_with('@') { body.split_once(' ').map_or("", |(_, rest)| rest) } else { body };
    let (op, args) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    if op.starts_with("st.") || op.starts_with("bra") || op.starts_with("bar") {
        return (vec![], regs(args));
    }
    // The destination is everything before the first top-level comma (a `{..}` list counts as one).
    let mut depth = 0;
    let split = args.char_indices().find(|&(_, c)| {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        c == ',' && depth == 0
    });
    let (dst, src) = match split {
        Some((i, _)) => (&args[..i], &args[i + 1..]),
        None => (args, ""),
    };
    (regs(dst), regs(src))
}

/// Checks definedness along every path of a PTX body with forward branches only.
fn undefined_reads(ptx: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let mut defined: Option<HashSet<String>> = Some(HashSet::new());
    let mut pending: HashMap<String, HashSet<String>> = HashMap::new();
    let body = ptx.split_once("{\n").map_or("", |(_, b)| b);
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('.')) {
        if line == "}" {
            break;
        }
        if let Some(label) = line.strip_suffix(':') {
            let incoming = pending.remove(label);
            defined = match (defined, incoming) {
                (Some(d), Some(p)) => Some(d.intersection(&p).cloned().collect()),
                (None, Some(p)) => Some(p),
                (d, None) => d,
            };
            continue;
        }
        let Some(d) = defined.as_mut() else { continue };
        let guarded = line.starts_with('@');
        let (dst, src) = operands(line);
        for r in &src {
            if !d.contains(r) {
                errors.push(format!("`{line}` reads {r}, not written on every path here"));
            }
        }
        let op = line.trim_start_matches(|c| c != ' ' && line.starts_with('@')).trim();
        if op.starts_with("bra") || line.contains(" bra ") {
            let target = line.trim_end_matches(';').rsplit(' ').next().unwrap_or("").to_string();
            let entry = pending.entry(target).or_insert_with(|| d.clone());
            *entry = entry.intersection(d).cloned().collect();
            if !guarded {
                defined = None;
            }
            continue;
        }
        // A guarded write may not happen; only an unguarded one defines the register.
        if !guarded {
            d.extend(dst);
        }
    }
    errors
}

#[test]
fn every_register_read_is_written_on_every_path() {
    let mut programs = 0;
    for boundary in Boundary::ALL {
        for ty in [ScalarType::F32, ScalarType::F64, ScalarType::F16, ScalarType::BF16] {
            for (strategy, layout, p) in [
                (Strategy::RegisterCache, Layout::RoundRobin, 3),
                (Strategy::RegisterCache, Layout::Granule(2), 4),
                (Strategy::RegisterCache, Layout::Granule(4), 8),
                (Strategy::RegisterCache, Layout::Granule(8), 8),
                (Strategy::RegisterCache, Layout::Granule(16), 16),
                (Strategy::SharedMemory, Layout::RoundRobin, 4),
                (Strategy::Naive, Layout::RoundRobin, 2),
            ] {
                for (r, warp) in [(1u32, 32u32), (3, 8), (8, 32), (33, 16)] {
                    let pattern = Pattern::new(r, warp, p, boundary).expect("valid");
                    let program =
                        WarpProgram::compile_for(pattern, strategy, layout, &box_body(r, ty)).expect("compiles");
                    let ptx = rc_core::ptx::print(&program, "k");
                    let errors = undefined_reads(&ptx);
                    assert!(errors.is_empty(), "{pattern}, {strategy}, {layout}, {ty}:\n{}", errors.join("\n"));
                    programs += 1;
                }
            }
        }
    }
    assert_eq!(programs, 4 * 4 * 7 * 4);
}

#[test]
fn the_check_catches_a_read_defined_on_one_path_only() {
    let ptx = "{\n\tmov.u32 %t0, 1;\n\t@%q0 bra $L1;\n\tsetp.lt.u32 %q1, %t0, 3;\n\tbra $L2;\n$L1:\n\tmov.u32 %t2, 0;\n$L2:\n\tselp.f32 %f0, %f1, %f2, %q1;\n}\n";
    let errors = undefined_reads(ptx);
    assert!(errors.iter().any(|e| e.contains("reads %q1")), "{errors:?}");
}
