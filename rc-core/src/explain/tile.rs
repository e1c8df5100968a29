//! `explain()` of a 2D or 3D tile: its shape, the input box a warp loads, which lane keeps which
//! element of each input row, and per output row the input rows it reads, the rows it loads
//! first and the shuffles it makes. The x schedule printed after it serves every row.

use std::collections::{BTreeSet, HashMap};
use std::fmt::{self, Write};

use crate::distribution::AffineLoad;
use crate::machine::Op;
use crate::program::{Instr, Reg, WarpProgram};
use crate::strategy::Strategy;

/// Writes the tile section of `program`'s explanation (2D and 3D only).
pub fn write(text: &mut String, program: &WarpProgram) -> fmt::Result {
    let pattern = program.pattern;
    let (warp, p) = (pattern.warp(), pattern.outputs_per_thread());
    let (rows, planes) = (pattern.rows_per_warp(), pattern.planes_per_warp());
    let outputs = pattern.tile_outputs() * pattern.output_rows();
    let plane_text = if pattern.dims().count() == 3 { format!(" x {planes} planes per warp") } else { String::new() };
    writeln!(
        text,
        "tile: {warp} lanes x {p} outputs per lane along x = {} outputs per row, {rows} rows per warp{plane_text}: {outputs} outputs per warp",
        pattern.tile_outputs()
    )?;
    if program.launch.order == crate::launch_map::TileOrder::Bands {
        let warps = pattern.tiles_per_block();
        writeln!(
            text,
            "blocks: the block's {warps} warps stack along y (warp w computes output rows {rows}w .. {rows}w + {rows} of the block's {} rows), so the {} input rows neighbouring warps share are read through the SM's L1, not each through L2; the launch is a grid of block columns by bands of {} rows",
            pattern.block_rows(),
            2 * pattern.radius().along(1),
            pattern.block_rows()
        )?;
    }
    // What the machine program prefetches (each field's alike): the operation itself, so the
    // text says what the kernel does.
    let mut prefetch = None;
    program.machine.visit(&mut |op| {
        if let Op::PrefetchL2 { rows, elements, .. } = *op {
            prefetch = Some((rows, elements));
        }
    });
    if let Some((rows, elements)) = prefetch {
        writeln!(
            text,
            "prefetch: an interior tile first asks L2 for the lines of the {rows} input rows its output rows centre on x its {elements} columns ({} lines of {} bytes each) prefetch_rows below its own, which the launch passes: half the blocks resident on the GPU over the grid's block columns, in bands of {} rows (so a later band of blocks finds its rows in L2)",
            crate::prefetch::lines_per_row(elements, program.element.bytes()),
            crate::prefetch::LINE_BYTES,
            pattern.block_rows()
        )?;
    }
    let (box_planes, box_rows) = pattern.box_rows();
    let radius = pattern.radius();
    let box_text = match pattern.dims().count() {
        3 => format!(
            "{box_planes} planes ({planes} + 2 x {}) of {box_rows} rows ({rows} + 2 x {}) (input row k: plane k / {box_rows}, row k % {box_rows})",
            radius.along(2),
            radius.along(1)
        ),
        _ => format!("{box_rows} rows ({rows} + 2 x {})", radius.along(1)),
    };
    writeln!(
        text,
        "input box: {box_text} of {} elements ({} + 2 x {}) around the tile",
        pattern.tile_elements(),
        pattern.tile_outputs(),
        radius.along_x()
    )?;

    let loads = cache_loads(program);
    if !loads.is_empty() {
        writeln!(
            text,
            "cache: lane l keeps, of each input row it loads (rc[k * {} + i] of row k is the x schedule's rc[i]; e = tile element):",
            program.row_registers
        )?;
        let by_row = group_by_row(&loads);
        for (row, row_loads) in &by_row {
            writeln!(text, "  row {}: {}", row_label(program, *row), describe_loads(program, row_loads))?;
        }
        let values: u32 = loads.iter().map(|l| l.lanes.1 - l.lanes.0).sum();
        let distinct: usize = by_row.iter().map(|(_, l)| distinct_elements(l)).sum();
        writeln!(
            text,
            "loads per warp: {values} values into registers, {distinct} distinct input elements of the box's {}: {:.3} per output (the halo beyond 1 per output is loaded again by the neighbouring tiles)",
            pattern.input_rows() * pattern.tile_elements(),
            distinct as f64 / outputs as f64
        )?;
    }
    let by_input_rows = program.evaluates_by_input_rows();
    let (header, memory) = match program.strategy {
        Strategy::RegisterCache if by_input_rows => (
            "evaluated input row after input row: each input row is loaded once, added to every output row that reads it, then dropped; the output rows' partial results stay in registers",
            "",
        ),
        Strategy::RegisterCache => ("each input row is loaded once, before the first output row that reads it, and kept in registers", ""),
        Strategy::SharedMemory => ("every tap is read from the warp's rows staged in shared memory", "taps read from shared memory"),
        Strategy::Naive => ("every tap is read from global memory", "taps read from global memory"),
    };
    writeln!(text, "output rows ({header}):")?;
    let mut loaded: BTreeSet<u32> = BTreeSet::new();
    for (row, reads) in output_rows(program).into_iter().enumerate() {
        let new: Vec<u32> = reads.rows.difference(&loaded).copied().collect();
        let reused: Vec<u32> = reads.rows.intersection(&loaded).copied().collect();
        loaded.extend(&new);
        let registers = loads.iter().filter(|l| new.contains(&l.row)).count();
        let list = |rows: &[u32]| {
            if rows.is_empty() {
                "none".to_string()
            } else {
                rows.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
            }
        };
        let mut line = format!(
            "  row {}: reads input rows {}",
            output_label(program, row as u32),
            list(&reads.rows.iter().copied().collect::<Vec<_>>())
        );
        if !loads.is_empty() {
            let _ = write!(line, "; loads {} ({registers} registers)", list(&new));
            match by_input_rows {
                true if !reused.is_empty() => {
                    let _ = write!(line, ", and took rows {} when earlier output rows loaded them", list(&reused));
                }
                true => {}
                false => {
                    let _ = write!(line, ", keeps {} from earlier rows", list(&reused));
                }
            }
        }
        let _ = write!(line, "; {} shuffles", reads.shuffles);
        if reads.memory > 0 {
            let _ = write!(line, ", {} {memory}", reads.memory);
        }
        writeln!(text, "{line}")?;
    }
    Ok(())
}

/// A cache load of the warp program.
struct CacheLoad {
    cache: u32,
    at: AffineLoad,
    lanes: (u32, u32),
    row: u32,
}

fn cache_loads(program: &WarpProgram) -> Vec<CacheLoad> {
    program
        .instrs
        .iter()
        .filter_map(|i| match *i {
            Instr::Load { cache: Some(cache), at, lanes, row, .. } => Some(CacheLoad { cache, at, lanes, row }),
            _ => None,
        })
        .collect()
}

fn group_by_row(loads: &[CacheLoad]) -> Vec<(u32, Vec<&CacheLoad>)> {
    let mut rows: Vec<(u32, Vec<&CacheLoad>)> = Vec::new();
    for load in loads {
        match rows.iter_mut().find(|(row, _)| *row == load.row) {
            Some((_, list)) => list.push(load),
            None => rows.push((load.row, vec![load])),
        }
    }
    rows.sort_by_key(|(row, _)| *row);
    rows
}

/// `2 (z -1, y +0)`: an input row and its offsets from the tile's first output row.
fn row_label(program: &WarpProgram, row: u32) -> String {
    let pattern = program.pattern;
    let (_, box_rows) = pattern.box_rows();
    let y = (row % box_rows) as i64 - pattern.radius().along(1) as i64;
    match pattern.dims().count() {
        3 => format!("{row} (z {:+}, y {y:+})", (row / box_rows) as i64 - pattern.radius().along(2) as i64),
        _ => format!("{row} (y {y:+})"),
    }
}

/// `1 (z 0, y 1)`: an output row of the tile and its plane and row.
fn output_label(program: &WarpProgram, row: u32) -> String {
    let rows = program.pattern.rows_per_warp();
    match program.pattern.dims().count() {
        3 => format!("{row} (z {}, y {})", row / rows, row % rows),
        _ => format!("{row} (y {row})"),
    }
}

/// `e(2l + 1)`: tile element `at.element(l)` of lane l.
fn element(at: AffineLoad) -> String {
    match (at.stride, at.base) {
        (0, b) => format!("e{b}"),
        (1, 0) => "e(l)".to_string(),
        (1, b) => format!("e(l + {b})"),
        (s, 0) => format!("e({s}l)"),
        (s, b) => format!("e({s}l + {b})"),
    }
}

/// A row's loads as runs: registers whose elements follow one another in every lane, over the
/// same lanes, in one piece (`rc[11..14] = e(2l + 1) .. e(2l + 4)`, the last register included).
fn describe_loads(program: &WarpProgram, loads: &[&CacheLoad]) -> String {
    let mut runs: Vec<Vec<&CacheLoad>> = Vec::new();
    for &load in loads {
        match runs.last_mut() {
            Some(run)
                if run.last().is_some_and(|last| {
                    last.cache + 1 == load.cache
                        && last.at.base + 1 == load.at.base
                        && last.at.stride == load.at.stride
                        && last.lanes == load.lanes
                }) =>
            {
                run.push(load)
            }
            _ => runs.push(vec![load]),
        }
    }
    let warp = program.pattern.warp();
    runs.iter()
        .map(|run| {
            let (first, last) = (run[0], run[run.len() - 1]);
            let lanes = match first.lanes {
                (0, end) if end == warp => String::new(),
                (a, b) if b == a + 1 => format!(" in lane T{a}"),
                (a, b) => format!(" in lanes T{a}-T{}", b - 1),
            };
            match run.len() {
                1 => format!("rc[{}] = {}{lanes}", first.cache, element(first.at)),
                _ => format!(
                    "rc[{}..{}] = {} .. {}{lanes}",
                    first.cache,
                    last.cache,
                    element(first.at),
                    element(last.at)
                ),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Distinct tile elements a row's loads bring in, over all lanes.
fn distinct_elements(loads: &[&CacheLoad]) -> usize {
    let elements: BTreeSet<u32> =
        loads.iter().flat_map(|l| (l.lanes.0..l.lanes.1).map(|lane| l.at.element(lane))).collect();
    elements.len()
}

/// What one output row of the tile does.
#[derive(Default)]
struct RowReads {
    /// The input rows its taps read (through cache registers, shuffles or memory).
    rows: BTreeSet<u32>,
    shuffles: usize,
    /// Taps read from global or shared memory (the baselines), not served by an earlier row.
    memory: usize,
}

/// Per output row of the tile, in order: the warp program's instructions up to that row's last
/// store, and the input rows behind every fetched value they read.
fn output_rows(program: &WarpProgram) -> Vec<RowReads> {
    let pattern = program.pattern;
    // The input rows behind each fetched value: a cache register, a pick among them, a shuffle
    // of a pick, or a tap read from memory.
    let mut behind: HashMap<Reg, BTreeSet<u32>> = HashMap::new();
    let mut rows: Vec<RowReads> = (0..pattern.output_rows()).map(|_| RowReads::default()).collect();
    let mut current = RowReads::default();
    let mut stores = vec![0u32; pattern.output_rows() as usize];
    for instr in &program.instrs {
        let reads: BTreeSet<u32> =
            instr.uses().iter().flat_map(|reg| behind.get(reg).cloned().unwrap_or_default()).collect();
        match instr {
            Instr::Load { dst, row, cache: Some(_), .. } => {
                behind.insert(*dst, BTreeSet::from([*row]));
            }
            Instr::Load { dst, row, cache: None, .. } | Instr::Shared { dst, row, .. } => {
                behind.insert(*dst, BTreeSet::from([*row]));
                current.rows.insert(*row);
                current.memory += 1;
            }
            Instr::Pick { dst, .. }
            | Instr::Shuffle { dst, .. }
            | Instr::Pack { dst, .. }
            | Instr::Unpack { dst, .. }
            | Instr::Straddle { dst, .. } => {
                current.shuffles += usize::from(matches!(instr, Instr::Shuffle { .. }));
                behind.insert(*dst, reads.clone());
            }
            _ => {}
        }
        current.rows.extend(reads);
        if let Instr::Store { row, .. } = instr {
            let row = *row as usize;
            stores[row] += 1;
            if stores[row] == program.stores_per_row() {
                rows[row] = std::mem::take(&mut current);
            }
        }
    }
    rows
}
