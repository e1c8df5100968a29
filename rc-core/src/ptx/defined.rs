//! A check of printed PTX: every control register an instruction reads (the printer's own
//! predicates `%q`, lane and index values `%t`, addresses `%a`) was written on every path that
//! reaches it. Element values (`%f`, `%r`, `%p`, ...) are not checked: a fused tile's halo lanes
//! compute on rows never loaded, by design, and their results are never stored
//! (`machine::verify` checks the stores). The printer caches values it has computed (lane predicates, row tests,
//! addresses) and reuses them; a value one arm of a branch computed, reused after the join or
//! in the other arm, is read unset on some path. The emulator runs the machine program, not the
//! text, so only this check (or a GPU) sees such a mistake. Tests run it over every printed
//! kernel.
//!
//! Each `.entry` is split into blocks at labels and branches; a forward pass finds the
//! registers written on every path into each block (intersection at joins, iterated over loops
//! to a fixed point), then each instruction's reads are checked. A predicated instruction's
//! guard is checked, its operands not: the printer reads values under the predicate that
//! implies they were set (a window row's clamp copies the row above only below the first row),
//! which only the predicates' meaning shows. A predicated write counts as a write. A `mov` of an
//! unset register is no mistake by itself (a streaming window carries its rows down, the oldest
//! one unset before the first step): it leaves its destination unset, and a later read of that
//! is found.

use std::collections::{BTreeSet, HashMap};

/// A read of a register no path-complete write precedes: the kernel, the line (1-based, in the
/// whole text), the register and the line's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsetRead {
    pub entry: String,
    pub line: usize,
    pub register: String,
    pub text: String,
}

impl std::fmt::Display for UnsetRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: line {} reads {} unset on some path: {}", self.entry, self.line, self.register, self.text)
    }
}

/// One instruction: its line, the registers it writes and reads, where it may jump.
struct Instruction {
    line: usize,
    writes: Vec<String>,
    reads: Vec<String>,
    /// A plain `mov` of one register: its destination is as set as its source.
    copies: Option<String>,
    /// A branch's target label, and whether it always jumps.
    jump: Option<(String, bool)>,
    /// `ret` or `exit`: no successor.
    ends: bool,
}

/// Every read of an unset register in `ptx`, in order; empty for a sound kernel.
pub fn unset_reads(ptx: &str) -> Vec<UnsetRead> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    let is_entry = |l: &&str| {
        let l = l.trim_start();
        l.starts_with(".entry") || l.starts_with(".visible .entry")
    };
    while let Some(start) = lines[at..].iter().position(is_entry).map(|i| i + at) {
        let entry = lines[start].split(".entry").nth(1).unwrap_or("").trim().trim_end_matches('(').to_string();
        let Some(open) = lines[start..].iter().position(|l| l.trim() == "{").map(|i| i + start) else { break };
        let close = lines[open..].iter().position(|l| l.trim() == "}").map_or(lines.len(), |i| i + open);
        found.extend(check_body(&entry, &lines, open + 1, close));
        at = close.min(lines.len() - 1) + 1;
        if at >= lines.len() {
            break;
        }
    }
    found
}

fn check_body(entry: &str, lines: &[&str], from: usize, to: usize) -> Vec<UnsetRead> {
    // Blocks: a label starts one, a branch ends one.
    let mut blocks: Vec<Vec<Instruction>> = vec![Vec::new()];
    let mut labels: HashMap<String, usize> = HashMap::new();
    for (i, raw) in lines.iter().enumerate().take(to).skip(from) {
        let text = raw.split("//").next().unwrap_or("").trim();
        if text.is_empty() || text.starts_with('.') {
            continue;
        }
        if let Some(label) = text.strip_suffix(':') {
            if !blocks.last().is_some_and(Vec::is_empty) {
                blocks.push(Vec::new());
            }
            labels.insert(label.to_string(), blocks.len() - 1);
            continue;
        }
        let instruction = parse(i + 1, text);
        let ends_block = instruction.jump.is_some() || instruction.ends;
        if let Some(block) = blocks.last_mut() {
            block.push(instruction);
        }
        if ends_block {
            blocks.push(Vec::new());
        }
    }
    // Successors of each block.
    let successors: Vec<Vec<usize>> = blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            let mut next = Vec::new();
            match block.last() {
                Some(Instruction { jump: Some((label, always)), .. }) => {
                    next.extend(labels.get(label).copied());
                    if !always {
                        next.push(b + 1);
                    }
                }
                Some(Instruction { ends: true, .. }) => {}
                _ => next.push(b + 1),
            }
            next.retain(|&n| n < blocks.len());
            next
        })
        .collect();
    // Registers written on every path into each block: `None` until a path reaches it.
    let mut into: Vec<Option<BTreeSet<String>>> = vec![None; blocks.len()];
    into[0] = Some(BTreeSet::new());
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..blocks.len() {
            let Some(mut set) = into[b].clone() else { continue };
            for instruction in &blocks[b] {
                apply(instruction, &mut set);
            }
            for &n in &successors[b] {
                let merged = match &into[n] {
                    None => set.clone(),
                    Some(current) => current.intersection(&set).cloned().collect(),
                };
                if into[n].as_ref() != Some(&merged) {
                    into[n] = Some(merged);
                    changed = true;
                }
            }
        }
    }
    let mut found = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        let Some(mut set) = into[b].clone() else { continue };
        for instruction in block {
            for register in instruction.reads.iter().filter(|r| control(r)) {
                if !set.contains(register) {
                    found.push(UnsetRead {
                        entry: entry.to_string(),
                        line: instruction.line,
                        register: register.clone(),
                        text: lines[instruction.line - 1].trim().to_string(),
                    });
                }
            }
            apply(instruction, &mut set);
        }
    }
    found
}

/// `set` after `instruction`: what it writes is set, a copy of an unset register is not.
fn apply(instruction: &Instruction, set: &mut BTreeSet<String>) {
    let source_unset = instruction.copies.as_ref().is_some_and(|source| !set.contains(source));
    for register in &instruction.writes {
        match source_unset {
            true => set.remove(register),
            false => set.insert(register.clone()),
        };
    }
}

/// Whether `register` is one of the printer's control values: `%q`, `%t` or `%a` and a number.
fn control(register: &str) -> bool {
    let letters = register.trim_start_matches('%').trim_end_matches(|c: char| c.is_ascii_digit());
    matches!(letters, "q" | "t" | "a")
}

/// The registers of `text`: `%a12`, `%fd3`, ... (not special registers such as `%tid.x`).
fn registers(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_lowercase() {
            i += 1;
        }
        let letters = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let special = i < bytes.len() && (bytes[i] == b'.' || bytes[i].is_ascii_alphabetic() || bytes[i] == b'_');
        if i > letters && letters > start + 1 && !special {
            out.push(text[start..i].to_string());
        }
    }
    out
}

fn parse(line: usize, text: &str) -> Instruction {
    let text = text.trim_end_matches(';').trim();
    // `@%q` or `@!%q`: the guard is read.
    let (guard, rest) = match text.strip_prefix('@') {
        Some(guarded) => {
            let (q, rest) = guarded.split_once(char::is_whitespace).unwrap_or((guarded, ""));
            (registers(q), rest.trim())
        }
        None => (Vec::new(), text),
    };
    let (opcode, operands) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let guarded = !guard.is_empty();
    let mut instruction = Instruction { line, writes: Vec::new(), reads: guard, copies: None, jump: None, ends: false };
    if opcode.starts_with("bra") {
        instruction.jump = Some((operands.trim().to_string(), instruction.reads.is_empty()));
        return instruction;
    }
    if opcode == "ret" || opcode == "exit" {
        instruction.ends = true;
        return instruction;
    }
    // Stores, barriers and prefetches write no register: every operand is read. Otherwise the
    // first operand (a register, or a `{...}` group of them) is written.
    let writes_none = ["st.", "red.", "bar.", "prefetch", "cp.async", "fence", "membar"]
        .iter()
        .any(|prefix| opcode.starts_with(prefix));
    let (first, others) = match operands.trim_start().strip_prefix('{') {
        Some(group) => group.split_once('}').unwrap_or((group, "")),
        None => operands.split_once(',').unwrap_or((operands, "")),
    };
    let (writes, reads) = match writes_none {
        true => (Vec::new(), registers(operands)),
        false => (registers(first), registers(others)),
    };
    instruction.writes = writes;
    if opcode.starts_with("mov.") && reads.len() == 1 && instruction.writes.len() == 1 {
        instruction.copies = reads.into_iter().next();
    } else if !guarded {
        instruction.reads.extend(reads);
    }
    instruction
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_set_on_one_arm_and_read_after_the_join_is_found() {
        let ptx = "\
.visible .entry k(
)
{
\tmov.u32 %t0, 1;
\tsetp.eq.u32 %q1, %t0, 1;
\t@%q1 bra $fast;
\tmov.u32 %t1, 2;
\tbra $done;
$fast:
\tmov.u32 %t2, 3;
$done:
\tadd.u32 %t3, %t0, %t2;
\tret;
}
";
        let found = unset_reads(ptx);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].register.as_str(), found[0].line), ("%t2", 12));
        // Written on both arms: sound.
        let sound = ptx.replace("\tmov.u32 %t1, 2;", "\tmov.u32 %t2, 2;");
        assert_eq!(unset_reads(&sound), Vec::new());
    }

    #[test]
    fn loops_stores_groups_and_special_registers() {
        let ptx = "\
.visible .entry k(
)
{
\tmov.u32 %t0, %tid.x;
\tmov.u32 %t1, 0;
$loop:
\tld.global.v2.u32 {%t2, %t3}, [%a1];
\tadd.u32 %t1, %t1, 1;
\tsetp.lt.u32 %q1, %t1, 4;
\t@%q1 bra $loop;
\tst.global.v2.u32 [%a2], {%t2, %t3};
\tadd.f32 %f3, %f9, %f9;
\tret;
}
";
        let found: Vec<String> = unset_reads(ptx).iter().map(|r| r.register.clone()).collect();
        // %a1 and %a2 were never written; the group and the loop counter are; element values
        // (%f9) are not checked.
        assert_eq!(found, ["%a1", "%a2"]);
    }

    #[test]
    fn a_copy_of_an_unset_register_is_unset_until_read() {
        let ptx = "\
.entry k(
)
{
\tmov.u32 %t2, %t1;
\tmov.u32 %t1, 0;
\tadd.u32 %t3, %t1, %t1;
\tadd.u32 %t4, %t2, %t3;
\tret;
}
";
        let found: Vec<(String, usize)> = unset_reads(ptx).into_iter().map(|r| (r.register, r.line)).collect();
        assert_eq!(found, [("%t2".to_string(), 7)]);
    }
}
