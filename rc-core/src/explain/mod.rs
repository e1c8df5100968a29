//! `explain()`: the schedule as a person checks it against the register-cache article's Table 2:
//! per phase, what each lane publishes and from which lane it reads which register; for 2D and
//! 3D stencils first the tile (`tile.rs`), and what a tile streams per step (`streaming.rs`);
//! for a 1D stencil with a fused kernel, its tile and shrinking halo (`fused.rs`).

mod fused;
mod streaming;
mod tile;

use std::fmt::{self, Write};

use crate::geometry::Dims;
use crate::machine::LaunchBounds;
use crate::program::{Instr, StageScope, WarpProgram};
use crate::registers::{RegisterEstimate, MAX_REGISTERS_PER_THREAD};
use crate::schedule::{Fetch, Source};
use crate::strategy::Strategy;

/// Warps up to this width are shown as a full grid, one column per lane, like Table 2.
const GRID_MAX_WARP: u32 = 8;

/// Estimated registers per thread above which `explain()` warns that ptxas may spill.
const HIGH_REGISTERS: u32 = 200;

/// A printable schedule with its headline numbers.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub name: String,
    pub shuffles_per_output: f64,
    pub cache_registers: u32,
    /// The compile-time register estimate ([`WarpProgram::register_estimate`]).
    pub registers: RegisterEstimate,
    pub phases: usize,
    pub local_fetches: usize,
    pub reused_reads: usize,
    text: String,
    /// The machine program as text ([`WarpProgram::machine_text`]).
    machine_program: String,
}

impl Explanation {
    pub fn new(name: &str, program: &WarpProgram) -> Explanation {
        let schedule = &program.schedule;
        let pattern = program.pattern;
        let warp = pattern.warp();
        let uses: usize = schedule.fetches.iter().map(|f| f.uses.len()).sum();
        let phases = schedule.phases().count();
        let is_grid = pattern.dims() != Dims::One;
        // In 2D and 3D the x schedule below is that of every input row of the tile.
        let cache = if is_grid { "cache along x, per input row" } else { "cache" };
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = (|| -> fmt::Result {
            writeln!(text, "stencil `{name}`: {}, element {}", program.declared, program.element)?;
            if program.declared.streams_rows() {
                writeln!(
                    text,
                    "its rows stream: it runs as the 3D tile below on the grid [rows, 1, cols], whose planes are the grid's rows ({pattern})"
                )?;
            }
            match program.strategy {
                Strategy::RegisterCache => writeln!(text, "distribution: {}", program.distribution)?,
                Strategy::SharedMemory if is_grid => writeln!(
                    text,
                    "strategy: shared memory: each warp stages its tile's {} input rows of {} elements, then every tap is a shared-memory read",
                    pattern.input_rows(),
                    pattern.block_elements()
                )?,
                Strategy::SharedMemory => writeln!(
                    text,
                    "strategy: shared memory: each block stages its {} input elements, then every tap is a shared-memory read",
                    pattern.block_elements()
                )?,
                Strategy::Naive => writeln!(text, "strategy: naive: every tap is a load from global memory")?,
            }
            if program.fields > 1 {
                writeln!(
                    text,
                    "input fields: {}, each cached and staged alike on this schedule; the counts below are per field",
                    program.fields
                )?;
            }
            if program.output_fields > 1 {
                writeln!(
                    text,
                    "output fields: {}, each output point stores one element of each ({} bytes per output point)",
                    program.output_fields,
                    program.output_fields * program.element.bytes()
                )?;
            }
            if program.vector == 1 && !program.staged {
                writeln!(
                    text,
                    "{cache}: {} of {} registers per lane loaded ({} x 32-bit)",
                    schedule.loads.len(),
                    pattern.tile_elements().div_ceil(warp),
                    program.cache_registers()
                )?;
            } else {
                writeln!(
                    text,
                    "{cache}: {} registers per lane ({} x 32-bit), each loaded just before its first reader; outputs computed as a wavefront (step i: every output's tap on window element i)",
                    schedule.loads.len(),
                    program.cache_registers()
                )?;
            }
            if let Some(Instr::Stage { scope: StageScope::Warp, elements, .. }) = program.instrs.first() {
                writeln!(
                    text,
                    "stage: each warp copies {elements} input elements into its region of shared memory ({} bytes per block, padded against bank conflicts), then reads its windows from there",
                    crate::stage::block_bytes(&pattern, program.vector, program.element, *elements)
                )?;
            }
            if let Some(ring) = &program.ring {
                let (warps, rows) = (pattern.tiles_per_block(), pattern.rows_per_warp());
                writeln!(
                    text,
                    "ring of staged planes: the block's {warps} warps stack along y (warp w computes output rows {rows}w .. {rows}w + {rows} of the block's {} rows) over one x tile, streaming along z; each input field's {} input planes sit in {} slots of {} rows x {} elements in shared memory ({} bytes per block{}); thread t copies vectors t, t + {}, ... of each plane ({} per thread), fetching the next plane into registers before a step's taps and putting it in the oldest plane's slot after them, between two block barriers; box plane z of step k is slot (k + z) mod {}{}",
                    warps * rows,
                    ring.slots,
                    ring.slots,
                    ring.rows,
                    ring.row_elements,
                    ring.field_bytes() * program.fields,
                    if program.machine.dynamic_shared_bytes() > 0 { ", dynamic: more than the 48 KiB a kernel may declare" } else { "" },
                    ring.threads,
                    ring.rounds(),
                    ring.slots,
                    match ring.side {
                        0 => String::new(),
                        side => format!("; after the slots each copy vector's first and last {side} element(s) again (heads and tails), from which the lanes read the pieces of their windows at a vector's edge without bank conflicts"),
                    }
                )?;
            }
            writeln!(text, "{}", launch_bounds(program.machine.launch_bounds, pattern.threads_per_block()))?;
            let estimate = program.register_estimate();
            writeln!(text, "registers: {estimate} (estimated; ptxas -v gives the real count)")?;
            if estimate.total > HIGH_REGISTERS {
                writeln!(
                    text,
                    "note: the estimate is above {HIGH_REGISTERS}, close to the limit of {} registers per thread: ptxas may spill; \
                     lower outputs_per_thread, or set min_blocks_per_sm to make ptxas cap registers",
                    MAX_REGISTERS_PER_THREAD
                )?;
            }
            if is_grid {
                tile::write(&mut text, program)?;
            }
            streaming::write(&mut text, &program.machine, is_grid)?;
            writeln!(text, "taps used{}: {:?}", if is_grid { " along x" } else { "" }, schedule.taps)?;
            writeln!(
                text,
                "reads: {uses} (output, tap) pairs per lane -> {} fetches: {} local, {phases} shuffle phases, {} served by a value already fetched",
                schedule.fetches.len(),
                schedule.fetches.len() - phases,
                uses - schedule.fetches.len()
            )?;
            writeln!(
                text,
                "shuffles per output: {:.3} (the article's recipe: {} for a full window)",
                program.shuffles_per_output(),
                2 * pattern.radius().along_x() * program.element.words()
            )?;
            if program.element.bytes() == 2 {
                let (words, paired) = program.shuffled_words();
                if crate::pairs::packs_cache(program.element, schedule) {
                    writeln!(text, "16-bit elements: two share each 32-bit cache register (rc[2k] in the low half of word k, rc[2k + 1] in the high half)")?;
                }
                writeln!(
                    text,
                    "16-bit elements: two share a 32-bit word in each shuffle of two fetches ({paired} of {words} shuffles move two elements)"
                )?;
            }
            writeln!(text, "R(Tj, rc[i]) = read rc[i] of lane j;  P(rc[i]) = publish rc[i];  taps as output:offset")?;
            for (step, &id) in program.fetch_order.iter().enumerate() {
                let fetch = &schedule.fetches[id];
                writeln!(text)?;
                let served: Vec<String> = fetch.uses.iter().map(|(p, d)| format!("{p}:{d:+}")).collect();
                match &fetch.source {
                    Source::Global(at) => writeln!(
                        text,
                        "step {}: load tile element {} + lane * {} from global memory: taps {}",
                        step + 1,
                        at.base,
                        at.stride,
                        served.join(" ")
                    )?,
                    Source::Shared(at) => writeln!(
                        text,
                        "step {}: read tile element {} + lane * {} from shared memory: taps {}",
                        step + 1,
                        at.base,
                        at.stride,
                        served.join(" ")
                    )?,
                    Source::Local(_) => {
                        writeln!(text, "step {}: local, no shuffle: taps {}", step + 1, served.join(" "))?
                    }
                    Source::Shuffle(phase) => writeln!(
                        text,
                        "step {}: shuffle, lane l reads lane (l + {}) mod {warp}: taps {}",
                        step + 1,
                        phase.rotate,
                        served.join(" ")
                    )?,
                }
                match &fetch.source {
                    Source::Global(_) | Source::Shared(_) => {}
                    _ if warp <= GRID_MAX_WARP => grid(&mut text, fetch, warp)?,
                    _ => runs(&mut text, fetch, warp)?,
                }
            }
            Ok(())
        })();
        Explanation {
            name: name.to_string(),
            shuffles_per_output: program.shuffles_per_output(),
            cache_registers: program.cache_registers(),
            registers: program.register_estimate(),
            phases,
            local_fetches: schedule.fetches.len() - phases,
            reused_reads: uses - schedule.fetches.len(),
            text,
            machine_program: program.machine_text().to_string(),
        }
    }

    /// The machine program the explained kernel runs ([`crate::machine`]) as text: what the
    /// kernel declares, then one line per operation, branches and loops as indented blocks
    /// ([`crate::machine::MachineText`]). Lines name the registers, tile elements and cache
    /// registers the operations use, so two versions of a stencil (or of the compiler) can be
    /// diffed. It is the one-step kernel's program: a stencil's fused kernel
    /// ([`Explanation::with_fused`]) shows only its tile here, and
    /// [`WarpProgram::compile_steps`] gives its program. The [`fmt::Display`] text leaves it out;
    /// the alternate form (`{:#}`) adds it at the end.
    pub fn machine_program(&self) -> &str {
        &self.machine_program
    }
}

impl Explanation {
    /// This explanation followed by the fused kernel's: its tile of `tile` under `boundary`.
    pub fn with_fused(
        mut self,
        tile: &crate::time_steps::FusedTile,
        boundary: crate::pattern::Boundary,
    ) -> Explanation {
        // Writing to a String cannot fail.
        let _ = fused::write(&mut self.text, tile, boundary);
        self
    }
}

/// Table 2's layout: one column per lane, `R(...)` over `P(...)`.
fn grid(text: &mut String, fetch: &Fetch, warp: u32) -> fmt::Result {
    let cell = 14;
    let (reads, publishes): (Vec<String>, Vec<String>) = (0..warp)
        .map(|lane| match &fetch.source {
            Source::Local(pieces) => (format!("R(T{lane},rc[{}])", pieces.at(lane)), "-".to_string()),
            Source::Global(_) | Source::Shared(_) => ("-".to_string(), "-".to_string()),
            Source::Shuffle(phase) => {
                let read = phase.reads[lane as usize];
                (format!("R(T{},rc[{}])", read.owner, read.reg), format!("P(rc[{}])", phase.publish.at(lane)))
            }
        })
        .unzip();
    let row = |label: &str, cells: &mut dyn Iterator<Item = String>| {
        let line: String = cells.map(|c| format!("{c:<cell$}")).collect();
        format!("  {label:<8}{line}").trim_end().to_string()
    };
    writeln!(text, "{}", row("", &mut (0..warp).map(|lane| format!("T{lane}"))))?;
    writeln!(text, "{}", row("read", &mut reads.into_iter()))?;
    writeln!(text, "{}", row("publish", &mut publishes.into_iter()))?;
    writeln!(text, "{}", row("element", &mut fetch.elements.iter().map(|e| format!("e{e}"))))
}

/// Wide warps: runs of lanes that do the same thing.
fn runs(text: &mut String, fetch: &Fetch, warp: u32) -> fmt::Result {
    let lanes = |a: u32, b: u32| if a == b { format!("T{a}") } else { format!("T{a}-T{b}") };
    match &fetch.source {
        Source::Global(_) | Source::Shared(_) => {}
        Source::Local(pieces) => {
            for (a, b, reg) in pieces.runs(warp) {
                writeln!(text, "  {:<10} read own rc[{reg}]", lanes(a, b))?;
            }
        }
        Source::Shuffle(phase) => {
            let published: Vec<String> =
                phase.publish.runs(warp).iter().map(|&(a, b, reg)| format!("{} P(rc[{reg}])", lanes(a, b))).collect();
            writeln!(text, "  publish   {}", published.join(", "))?;
            // Group readers whose owner is the same rotation of their lane and whose register is equal.
            let mut start = 0u32;
            for lane in 1..=warp {
                let same = lane < warp
                    && phase.reads[lane as usize].reg == phase.reads[start as usize].reg
                    && (phase.reads[lane as usize].owner > phase.reads[start as usize].owner) == (lane > start);
                if !same {
                    let (first, last) = (phase.reads[start as usize], phase.reads[lane as usize - 1]);
                    let owners = lanes(first.owner, last.owner);
                    writeln!(text, "  {:<10} R({owners}, rc[{}])", lanes(start, lane - 1), first.reg)?;
                    start = lane;
                }
            }
        }
    }
    Ok(())
}

/// The launch bounds line: what the kernel declares (`.maxntid`, `.minnctapersm`), which is
/// nothing unless the attribute asked for them.
fn launch_bounds(declared: Option<LaunchBounds>, threads_per_block: u32) -> String {
    let Some(bounds) = declared else {
        return format!(
            "launch bounds: none declared (the launch uses blocks of {threads_per_block} threads; ptxas allocates registers for any block size)"
        );
    };
    let threads = bounds.max_threads_per_block;
    let mut parts = vec![format!("{threads} threads per block (.maxntid {threads}, 1, 1)")];
    if let Some(m) = bounds.min_blocks_per_sm {
        parts.push(format!("at least {m} blocks per multiprocessor (.minnctapersm {m})"));
    }
    format!("launch bounds: {}", parts.join(", "))
}

impl fmt::Display for Explanation {
    /// The schedule; with the alternate flag (`{:#}`), followed by the machine program
    /// ([`Explanation::machine_program`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        if f.alternate() {
            writeln!(f)?;
            f.write_str(&self.machine_program)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::launch_bounds;
    use crate::machine::LaunchBounds;

    #[test]
    fn launch_bounds_are_what_the_kernel_declares() {
        assert_eq!(
            launch_bounds(None, 256),
            "launch bounds: none declared (the launch uses blocks of 256 threads; ptxas allocates registers for any block size)"
        );
        let both = LaunchBounds { max_threads_per_block: 512, min_blocks_per_sm: Some(2) };
        assert_eq!(
            launch_bounds(Some(both), 512),
            "launch bounds: 512 threads per block (.maxntid 512, 1, 1), at least 2 blocks per multiprocessor (.minnctapersm 2)"
        );
    }
}
