//! One row per measured kernel (or copy, or peer): the roofline arithmetic, results.csv (written
//! here, read back for `--plot-only` and `--peers`), and the table printed at the end.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use rc::Strategy;

use crate::bench::csv::{self, opt, real, Record};
use crate::bench::kernels::{Variant, AUTO, VARIANTS};
use crate::bench::peers::{self, PeerRow};
use crate::common::Result;

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

    /// One CSV line (columns may come in any order; missing ones are empty).
    fn parse(line: &Record) -> Result<Row> {
        Ok(Row {
            strategy: line.text("strategy").to_owned(),
            element: line.text("element").to_owned(),
            radius: line.required("radius")?,
            outputs_per_thread: line.opt("outputs_per_thread")?,
            n: line.opt("n")?.unwrap_or(0),
            time_ms: line.required("time_ms")?,
            gb_per_s: line.required("gb_per_s")?,
            copy_gb_per_s: line.opt("copy_gb_per_s")?,
            arithmetic_bound_gb_per_s: line.opt("arithmetic_bound_gb_per_s")?,
            roofline_gb_per_s: line.opt("roofline_gb_per_s")?,
            fraction_of_roofline: line.opt("fraction_of_roofline")?,
            registers: line.opt("registers")?,
            local_bytes: line.opt("local_bytes")?,
            shared_bytes: line.opt("shared_bytes")?,
            max_threads_per_block: line.opt("max_threads_per_block")?,
            blocks_per_sm: line.opt("blocks_per_sm")?,
            occupancy: line.opt("occupancy")?,
            shuffles_per_output: line.opt("shuffles_per_output")?,
            speedup_vs_shared_memory: line.opt("speedup_vs_shared_memory")?,
            max_rel_error: line.opt("max_rel_error")?,
            launches: line.opt("launches")?.unwrap_or(0),
            gpu: line.text("gpu").to_owned(),
        })
    }
}

pub fn write_csv(rows: &[Row], path: &Path) -> Result<()> {
    csv::write(path, &COLUMNS, rows.iter().map(Row::fields))
}

pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    csv::read(path, &["strategy", "element", "radius", "time_ms", "gb_per_s"], Row::parse)
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

/// Adds the peers' rows to `rows` ([`peers::merge`]). Returns what to tell the user.
pub fn merge_peers(rows: &mut Vec<Row>, peers: Vec<Row>) -> Vec<String> {
    peers::merge(rows, peers, COPY, |s| !Variant::is_label(s) && s != COPY)
}

impl PeerRow for Row {
    fn problem(&self) -> String {
        format!("{} r={}", self.element, self.radius)
    }
    fn size(&self) -> String {
        format!("n = {}", self.n)
    }
    fn strategy(&self) -> &str {
        &self.strategy
    }
    fn measure_against(&mut self, copy: &Row) {
        self.arithmetic_bound_gb_per_s = copy.arithmetic_bound_gb_per_s;
        self.roofline_gb_per_s = copy.roofline_gb_per_s;
        self.fraction_of_roofline = copy.roofline_gb_per_s.map(|roof| self.gb_per_s / roof);
    }
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

/// A table cell: the value, or `-` for none.
pub fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// A table cell of a real with `digits` decimals, or `-` for none.
pub fn cell_real(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// Every row as a fixed-width table, then the best outputs per thread per strategy and radius.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let (opt, real) = (cell, cell_real);
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
            let _ = writeln!(
                out,
                "{:>3} {:>10} {:>28} {:>7} {:>6}",
                "r", "auto GB/s", "best swept GB/s (variant, P)", "ratio", "<=5%"
            );
            for auto in autos {
                let swept = rows
                    .iter()
                    .filter(|r| {
                        r.element == element
                            && r.radius == auto.radius
                            && r.strategy.starts_with("register_cache")
                            && r.strategy != AUTO
                    })
                    .max_by(|a, b| a.gb_per_s.total_cmp(&b.gb_per_s));
                let Some(best) = swept else { continue };
                let ratio = auto.gb_per_s / best.gb_per_s;
                let variant = format!(
                    "{:.0} ({}, {})",
                    best.gb_per_s,
                    best.strategy.trim_start_matches("register_cache_"),
                    opt(best.outputs_per_thread)
                );
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
