//! One row per measured kernel (or copy, or peer): the roofline arithmetic, results.csv (written
//! here, read back for `--plot-only` and `--peers`), and the table printed at the end.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use rc::runtime::GpuInfo;
use rc::{ScalarType, Strategy};

use crate::bench::kernels::{Variant, AUTO, VARIANTS};
use crate::common::{fail, Result};

/// `strategy` of the device-to-device copy rows the bench measures beside the kernels.
pub const COPY: &str = "copy";
/// `strategy` of the copy rows bench/peers.py measures in its own run.
pub const PEERS_COPY: &str = "peers_copy";
/// `strategy` of the peers' rows (bench/peers.py).
pub const PEERS: [&str; 2] = ["cupy_correlate1d", "torch_conv1d"];

/// The columns of results.csv, in order. bench/peers.py writes the same header.
pub const COLUMNS: [&str; 22] = [
    "strategy",
    "element",
    "radius",
    "outputs_per_thread",
    "n",
    "time_ms",
    "gb_per_s",
    "copy_gb_per_s",
    "arithmetic_bound_gb_per_s",
    "roofline_gb_per_s",
    "fraction_of_roofline",
    "registers",
    "local_bytes",
    "shared_bytes",
    "max_threads_per_block",
    "blocks_per_sm",
    "occupancy",
    "shuffles_per_output",
    "speedup_vs_shared_memory",
    "max_rel_error",
    "launches",
    "gpu",
];

/// One measured kernel, copy or peer. Empty CSV fields are `None`.
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// `register_cache`, `shared_memory`, `naive`, [`COPY`], [`PEERS_COPY`] or one of [`PEERS`].
    pub strategy: String,
    /// `f32` or `f64`.
    pub element: String,
    pub radius: u32,
    pub outputs_per_thread: Option<u32>,
    pub n: usize,
    /// Median of the timed launches, CUDA events.
    pub time_ms: f64,
    /// Effective bandwidth: (inputs read once + outputs written once) * element bytes / time.
    pub gb_per_s: f64,
    /// The device-to-device copy measured in the same run (for this radius).
    pub copy_gb_per_s: Option<f64>,
    pub arithmetic_bound_gb_per_s: Option<f64>,
    /// min(copy, arithmetic bound).
    pub roofline_gb_per_s: Option<f64>,
    pub fraction_of_roofline: Option<f64>,
    pub registers: Option<u32>,
    pub local_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub max_threads_per_block: Option<u32>,
    pub blocks_per_sm: Option<u32>,
    pub occupancy: Option<f64>,
    pub shuffles_per_output: Option<f64>,
    /// Shared memory's time over this row's, same element, radius and outputs per thread.
    pub speedup_vs_shared_memory: Option<f64>,
    /// Against the reference: 0 for rc's kernels (bit-exact with `run_cpu`); the peers are
    /// compared with a float64 reference.
    pub max_rel_error: Option<f64>,
    pub launches: usize,
    pub gpu: String,
}

impl Row {
    pub fn is_rc(&self) -> bool {
        Variant::is_label(&self.strategy)
    }

    fn fields(&self) -> Vec<String> {
        fn opt<T: ToString>(v: Option<T>) -> String {
            v.map(|v| v.to_string()).unwrap_or_default()
        }
        fn real(v: Option<f64>, digits: usize) -> String {
            v.map(|v| format!("{v:.digits$}")).unwrap_or_default()
        }
        vec![
            self.strategy.clone(),
            self.element.clone(),
            self.radius.to_string(),
            opt(self.outputs_per_thread),
            self.n.to_string(),
            format!("{:.6}", self.time_ms),
            format!("{:.1}", self.gb_per_s),
            real(self.copy_gb_per_s, 1),
            real(self.arithmetic_bound_gb_per_s, 1),
            real(self.roofline_gb_per_s, 1),
            real(self.fraction_of_roofline, 4),
            opt(self.registers),
            opt(self.local_bytes),
            opt(self.shared_bytes),
            opt(self.max_threads_per_block),
            opt(self.blocks_per_sm),
            real(self.occupancy, 3),
            real(self.shuffles_per_output, 3),
            real(self.speedup_vs_shared_memory, 3),
            self.max_rel_error.map(|e| format!("{e:.3e}")).unwrap_or_default(),
            self.launches.to_string(),
            self.gpu.replace(',', " "),
        ]
    }

    /// Reads one CSV line under `header` (columns may come in any order; missing ones are empty).
    fn parse(header: &[&str], line: &str, at: &str) -> Result<Row> {
        let values: Vec<&str> = line.split(',').map(str::trim).collect();
        if values.len() != header.len() {
            return Err(fail(format!("{at}: {} fields, the header has {}", values.len(), header.len())));
        }
        let field = |name: &str| header.iter().position(|h| *h == name).map_or("", |i| values[i]);
        fn parsed<T: std::str::FromStr>(text: &str, name: &str, at: &str) -> Result<Option<T>>
        where
            T::Err: std::fmt::Display,
        {
            if text.is_empty() {
                return Ok(None);
            }
            text.parse().map(Some).map_err(|e| fail(format!("{at}: column {name}: `{text}`: {e}")))
        }
        let opt = |name: &str| -> Result<Option<f64>> { parsed(field(name), name, at) };
        let int = |name: &str| -> Result<Option<u32>> { parsed(field(name), name, at) };
        let required = |name: &str| -> Result<f64> {
            opt(name)?.ok_or_else(|| fail(format!("{at}: column {name} is empty")))
        };
        Ok(Row {
            strategy: field("strategy").to_owned(),
            element: field("element").to_owned(),
            radius: int("radius")?.ok_or_else(|| fail(format!("{at}: column radius is empty")))?,
            outputs_per_thread: int("outputs_per_thread")?,
            n: parsed(field("n"), "n", at)?.unwrap_or(0),
            time_ms: required("time_ms")?,
            gb_per_s: required("gb_per_s")?,
            copy_gb_per_s: opt("copy_gb_per_s")?,
            arithmetic_bound_gb_per_s: opt("arithmetic_bound_gb_per_s")?,
            roofline_gb_per_s: opt("roofline_gb_per_s")?,
            fraction_of_roofline: opt("fraction_of_roofline")?,
            registers: int("registers")?,
            local_bytes: int("local_bytes")?,
            shared_bytes: int("shared_bytes")?,
            max_threads_per_block: int("max_threads_per_block")?,
            blocks_per_sm: int("blocks_per_sm")?,
            occupancy: opt("occupancy")?,
            shuffles_per_output: opt("shuffles_per_output")?,
            speedup_vs_shared_memory: opt("speedup_vs_shared_memory")?,
            max_rel_error: opt("max_rel_error")?,
            launches: parsed(field("launches"), "launches", at)?.unwrap_or(0),
            gpu: field("gpu").to_owned(),
        })
    }
}

pub fn write_csv(rows: &[Row], path: &Path) -> Result<()> {
    let mut text = COLUMNS.join(",");
    text.push('\n');
    for row in rows {
        text.push_str(&row.fields().join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| fail(format!("writing {}: {e}", path.display())))
}

pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("reading {}: {e}", path.display())))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((_, header)) = lines.next() else {
        return Err(fail(format!("{}: empty, expected a header line", path.display())));
    };
    let header: Vec<&str> = header.split(',').map(str::trim).collect();
    for needed in ["strategy", "element", "radius", "time_ms", "gb_per_s"] {
        if !header.contains(&needed) {
            return Err(fail(format!("{}: the header has no column `{needed}`", path.display())));
        }
    }
    lines.map(|(i, line)| Row::parse(&header, line, &format!("{}:{}", path.display(), i + 1))).collect()
}

/// Per-clock, per-SM throughput of the adds the stencil is made of, from the CUDA C
/// Programming Guide's arithmetic-instruction throughput table. An assumption, printed with the
/// results: the driver does not report it.
pub fn adds_per_clock_per_sm(compute_capability: (u32, u32), element: ScalarType) -> u32 {
    match (element, compute_capability) {
        // GV100, GA100: 64 FP32 lanes per SM; GH100 and later (and GA10x, AD10x): 128.
        (ScalarType::F32, (7, _) | (8, 0)) => 64,
        (ScalarType::F32, _) => 128,
        // FP64: 32 per SM on GV100/GA100, 64 on GH100 (H100/H200) and GB100, 2 elsewhere.
        (_, (7, 0) | (8, 0)) => 32,
        (_, (9, 0) | (10, 0)) => 64,
        _ => 2,
    }
}

/// The arithmetic bound in GB/s: each output needs 2r+1 adds and moves 2 elements (one read,
/// one write), so `element bytes * 2 * SMs * clock * adds per clock per SM / (2r+1)`. `None`
/// when the driver does not report the clock.
pub fn arithmetic_bound(gpu: &GpuInfo, element: ScalarType, radius: u32) -> Option<f64> {
    let clock_hz = f64::from(gpu.clock_mhz?) * 1e6;
    let adds_per_s =
        f64::from(gpu.multiprocessors) * clock_hz * f64::from(adds_per_clock_per_sm(gpu.compute_capability, element));
    Some(f64::from(element.bytes()) * 2.0 * adds_per_s / f64::from(2 * radius + 1) / 1e9)
}

/// The assumption behind [`arithmetic_bound`], said once in the output.
pub fn arithmetic_assumption(gpu: &GpuInfo, element: ScalarType) -> String {
    let (major, minor) = gpu.compute_capability;
    match gpu.clock_mhz {
        Some(mhz) => format!(
            "{element} arithmetic bound = {} B * 2 * {} SMs * {mhz} MHz (peak) * {} adds/clock/SM (assumed for compute {major}.{minor}) / (2r+1) adds per output",
            element.bytes(),
            gpu.multiprocessors,
            adds_per_clock_per_sm(gpu.compute_capability, element),
        ),
        None => format!("{element} arithmetic bound: unknown (the driver reports no clock); roofline = copy"),
    }
}

pub fn roofline(copy: Option<f64>, arithmetic: Option<f64>) -> Option<f64> {
    match (copy, arithmetic) {
        (Some(c), Some(a)) => Some(c.min(a)),
        (c, a) => c.or(a),
    }
}

/// Sorts rows by element, radius, strategy (copy, rc's, peers, the peers' copy) and outputs per
/// thread: the order of the table and of results.csv.
pub fn sort(rows: &mut [Row]) {
    let rank = |s: &str| {
        let mut order = vec![COPY];
        order.extend(VARIANTS.map(|v| v.label));
        order.push(AUTO);
        order.extend(PEERS);
        order.push(PEERS_COPY);
        order.iter().position(|o| *o == s).unwrap_or(order.len())
    };
    rows.sort_by(|a, b| {
        (a.element.as_str(), a.radius, rank(&a.strategy), a.strategy.as_str(), a.outputs_per_thread).cmp(&(
            b.element.as_str(),
            b.radius,
            rank(&b.strategy),
            b.strategy.as_str(),
            b.outputs_per_thread,
        ))
    });
}

/// Fills `speedup_vs_shared_memory` for every rc row that has a shared-memory row of the same
/// element, radius and outputs per thread.
pub fn fill_speedups(rows: &mut [Row]) {
    let shared: BTreeMap<(String, u32, Option<u32>), f64> = rows
        .iter()
        .filter(|r| r.strategy == Strategy::SharedMemory.name())
        .map(|r| ((r.element.clone(), r.radius, r.outputs_per_thread), r.time_ms))
        .collect();
    for row in rows.iter_mut().filter(|r| r.is_rc()) {
        row.speedup_vs_shared_memory =
            shared.get(&(row.element.clone(), row.radius, row.outputs_per_thread)).map(|t| t / row.time_ms);
    }
}

/// Adds the peers' rows to `rows`, with the roofline of the bench's run at the same element
/// and radius (so every line of the plot is measured against one roofline). The peers' own
/// copy stays in their `copy_gb_per_s`. Returns what to tell the user.
pub fn merge_peers(rows: &mut Vec<Row>, peers: Vec<Row>) -> Vec<String> {
    // The bench's copy rows carry its roofline per element and radius.
    let copies: BTreeMap<(String, u32), &Row> =
        rows.iter().filter(|r| r.strategy == COPY).map(|r| ((r.element.clone(), r.radius), r)).collect();
    let mut notes = Vec::new();
    let mut merged = Vec::new();
    for mut peer in peers {
        if peer.is_rc() || peer.strategy == COPY {
            notes.push(format!("peers: skipped a `{}` row (not a peer's)", peer.strategy));
            continue;
        }
        let Some(copy) = copies.get(&(peer.element.clone(), peer.radius)) else {
            continue; // an element or radius this run did not measure
        };
        if peer.n != copy.n {
            notes.push(format!(
                "peers: {} {} r={} measured n = {}, the bench n = {}: not the same problem size",
                peer.strategy, peer.element, peer.radius, peer.n, copy.n
            ));
        }
        peer.arithmetic_bound_gb_per_s = copy.arithmetic_bound_gb_per_s;
        peer.roofline_gb_per_s = copy.roofline_gb_per_s;
        peer.fraction_of_roofline = copy.roofline_gb_per_s.map(|roof| peer.gb_per_s / roof);
        merged.push(peer);
    }
    notes.push(format!("peers: merged {} rows", merged.len()));
    rows.extend(merged);
    notes
}

/// The best row (highest GB/s) per (strategy, radius) among `rows` of `element`.
pub fn best_per_radius<'a>(rows: &'a [Row], element: &str, strategy: &str) -> Vec<&'a Row> {
    let mut best: BTreeMap<u32, &Row> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.element == element && r.strategy == strategy) {
        let slot = best.entry(row.radius).or_insert(row);
        if row.gb_per_s > slot.gb_per_s {
            *slot = row;
        }
    }
    best.into_values().collect()
}

/// Strategies in `rows`, in a fixed order: rc's, then the peers, then anything else.
pub fn strategies(rows: &[Row]) -> Vec<String> {
    let mut order: Vec<String> = Strategy::ALL.iter().map(|s| s.name().to_owned()).collect();
    order.extend(PEERS.iter().map(|s| s.to_string()));
    let mut present: Vec<String> = order.into_iter().filter(|s| rows.iter().any(|r| &r.strategy == s)).collect();
    for row in rows {
        if !present.contains(&row.strategy) && row.strategy != COPY && row.strategy != PEERS_COPY {
            present.push(row.strategy.clone());
        }
    }
    present
}

/// Every row as a fixed-width table, then the best outputs per thread per strategy and radius.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let opt = |v: Option<u32>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let real = |v: Option<f64>, d: usize| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.d$}"));
    let _ = writeln!(
        out,
        "{:<17} {:<4} {:>3} {:>2} {:>9} {:>8} {:>6} {:>5} {:>6} {:>6} {:>5} {:>8} {:>8}",
        "strategy", "type", "r", "P", "ms", "GB/s", "roof", "regs", "local", "smem", "occ", "shfl/out", "vs smem"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<17} {:<4} {:>3} {:>2} {:>9.4} {:>8.1} {:>6} {:>5} {:>6} {:>6} {:>5} {:>8} {:>8}",
            row.strategy,
            row.element,
            row.radius,
            opt(row.outputs_per_thread),
            row.time_ms,
            row.gb_per_s,
            real(row.fraction_of_roofline, 3),
            opt(row.registers),
            opt(row.local_bytes),
            opt(row.shared_bytes),
            real(row.occupancy, 2),
            real(row.shuffles_per_output, 2),
            real(row.speedup_vs_shared_memory, 2),
        );
    }
    let mut elements: Vec<&str> = rows.iter().map(|r| r.element.as_str()).collect();
    elements.dedup();
    elements.sort_unstable();
    elements.dedup();
    for element in elements {
        let _ = writeln!(out, "\nbest P per strategy, {element}: GB/s (P) and fraction of the roofline");
        let strategies = strategies(rows);
        let _ = write!(out, "{:>3} {:>8}", "r", "copy");
        for s in &strategies {
            let _ = write!(out, " {s:>22}");
        }
        let _ = writeln!(out);
        let copies = best_per_radius(rows, element, COPY);
        for copy in copies {
            let _ = write!(out, "{:>3} {:>8.0}", copy.radius, copy.gb_per_s);
            for s in &strategies {
                let best = best_per_radius(rows, element, s).into_iter().find(|r| r.radius == copy.radius);
                let cell = match best {
                    Some(r) => format!(
                        "{:.0}{} {}",
                        r.gb_per_s,
                        r.outputs_per_thread.map_or_else(String::new, |p| format!(" (P={p})")),
                        real(r.fraction_of_roofline, 2)
                    ),
                    None => "-".to_owned(),
                };
                let _ = write!(out, " {cell:>22}");
            }
            let _ = writeln!(out);
        }
        let autos: Vec<&Row> = rows.iter().filter(|r| r.element == element && r.strategy == AUTO).collect();
        if !autos.is_empty() {
            let _ = writeln!(out, "\ndistribution = auto against the best swept register cache, {element}");
            let _ = writeln!(out, "{:>3} {:>10} {:>28} {:>7} {:>6}", "r", "auto GB/s", "best swept GB/s (variant, P)", "ratio", "<=5%");
            for auto in autos {
                let swept = rows
                    .iter()
                    .filter(|r| r.element == element && r.radius == auto.radius && r.strategy.starts_with("register_cache") && r.strategy != AUTO)
                    .max_by(|a, b| a.gb_per_s.total_cmp(&b.gb_per_s));
                let Some(best) = swept else { continue };
                let ratio = auto.gb_per_s / best.gb_per_s;
                let variant = format!("{:.0} ({}, {})", best.gb_per_s, best.strategy.trim_start_matches("register_cache_"), opt(best.outputs_per_thread));
                let _ = writeln!(
                    out,
                    "{:>3} {:>10.0} {variant:>28} {ratio:>7.3} {:>6}",
                    auto.radius,
                    auto.gb_per_s,
                    if ratio >= 0.95 { "yes" } else { "no" }
                );
            }
        }
    }
    out
}
