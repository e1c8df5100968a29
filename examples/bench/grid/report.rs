//! The grid benchmark's rows: one per measured kernel, copy or peer; results.csv (written here,
//! read back for `--plot-only` and `--peers`), the table printed at the end, and the summary in
//! markdown that the README takes.

use std::fmt::Write as _;
use std::path::Path;

use rc::{Element, Stencil, Strategy};

use crate::bench::csv::{self, opt, real, Record};
use crate::bench::peers::{self, PeerRow};
use crate::bench::report::{cell, cell_real};
use crate::common::Result;

/// `strategy` of the default `#[stencil]` (the cost model's distribution, the default tile).
pub const DEFAULT: &str = "register_cache_default";
/// `strategy` of the device-to-device copy the bench measures before each stencil.
pub const COPY: &str = "copy";
/// `strategy` of the copy bench/peers.py measures in its own run.
pub const PEERS_COPY: &str = "peers_copy";
/// `strategy` of the peers' rows (bench/peers.py --grid).
pub const CUPY: &str = "cupy_correlate";
pub const TORCH: &str = "torch_conv";

/// The columns of the grid's results.csv, in order. bench/peers.py --grid writes the same header.
pub const COLUMNS: [&str; 27] = [
    "stencil",
    "element",
    "shape",
    "taps",
    "strategy",
    "kernel",
    "layout",
    "outputs_per_thread",
    "rows_per_warp",
    "planes_per_warp",
    "min_blocks_per_sm",
    "time_ms",
    "gb_per_s",
    "copy_gb_per_s",
    "arithmetic_bound_gb_per_s",
    "roofline_gb_per_s",
    "fraction_of_roofline",
    "registers",
    "local_bytes",
    "shared_bytes",
    "blocks_per_sm",
    "occupancy",
    "shuffles_per_output",
    "max_rel_error",
    "launches",
    "elements",
    "gpu",
];

/// One measured kernel, copy or peer of one stencil. Empty CSV fields are `None`.
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// `star2d_r1`, `box3d_r2`, ... (examples/bench/grid/kernels.rs).
    pub stencil: String,
    /// `f32` or `f64`.
    pub element: String,
    /// The input grid, outermost first: `8192x8192`, `512x512x512`.
    pub shape: String,
    /// Taps per output (one add each).
    pub taps: u32,
    /// [`DEFAULT`], `register_cache`, `shared_memory`, `naive`, [`COPY`], [`PEERS_COPY`],
    /// [`CUPY`] or [`TORCH`].
    pub strategy: String,
    /// The kernel's name in its stencil's module (`default`, `window`, `rows4_mb3`, ...).
    pub kernel: String,
    /// The register cache's distribution (`window(4)`, ...); empty for the baselines.
    pub layout: String,
    pub outputs_per_thread: Option<u32>,
    pub rows_per_warp: Option<u32>,
    pub planes_per_warp: Option<u32>,
    pub min_blocks_per_sm: Option<u32>,
    /// Median of the timed launches, CUDA events.
    pub time_ms: f64,
    /// Effective bandwidth: (inputs read once + outputs written once) * element bytes / time.
    pub gb_per_s: f64,
    /// The device-to-device copy measured right before this stencil's kernels.
    pub copy_gb_per_s: Option<f64>,
    pub arithmetic_bound_gb_per_s: Option<f64>,
    /// min(copy, arithmetic bound).
    pub roofline_gb_per_s: Option<f64>,
    pub fraction_of_roofline: Option<f64>,
    pub registers: Option<u32>,
    pub local_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub blocks_per_sm: Option<u32>,
    pub occupancy: Option<f64>,
    pub shuffles_per_output: Option<f64>,
    /// 0 for rc's kernels (bit-exact with `run_cpu`); the peers against a float64 reference.
    pub max_rel_error: Option<f64>,
    pub launches: usize,
    /// Input elements (the shape's product).
    pub elements: usize,
    pub gpu: String,
}

impl Row {
    /// `stencil` (a row with the stencil's fields) for `kernel`, with what the kernel says about
    /// itself (strategy, layout, tile); `default` for the stencil's default kernel.
    pub fn of_kernel<T: Element>(stencil: &Row, kernel: &Stencil<T, ()>, default: bool) -> Row {
        let pattern = kernel.pattern();
        let strategy = kernel.strategy();
        Row {
            strategy: if default { DEFAULT.to_owned() } else { strategy.name().to_owned() },
            kernel: kernel.name().to_owned(),
            layout: if strategy == Strategy::RegisterCache { kernel.layout().to_string() } else { String::new() },
            outputs_per_thread: Some(pattern.outputs_per_thread()),
            rows_per_warp: Some(pattern.rows_per_warp()),
            planes_per_warp: Some(pattern.planes_per_warp()),
            min_blocks_per_sm: pattern.min_blocks_per_sm(),
            ..stencil.clone()
        }
    }

    /// The register cache, by default or as named.
    pub fn is_register_cache(&self) -> bool {
        self.strategy == DEFAULT || self.strategy == Strategy::RegisterCache.name()
    }

    /// The kernel's tile, as `window(4) p4 r8 z1 mb3` (outputs per thread, rows and planes per
    /// warp, min_blocks_per_sm when given); empty for copies and peers.
    pub fn tile(&self) -> String {
        let Some(p) = self.outputs_per_thread else { return String::new() };
        let mut tile = if self.layout.is_empty() { String::new() } else { format!("{} ", self.layout) };
        let _ = write!(tile, "p{p} r{} z{}", opt(self.rows_per_warp), opt(self.planes_per_warp));
        if let Some(m) = self.min_blocks_per_sm {
            let _ = write!(tile, " mb{m}");
        }
        tile
    }

    fn fields(&self) -> Vec<String> {
        vec![
            self.stencil.clone(),
            self.element.clone(),
            self.shape.clone(),
            self.taps.to_string(),
            self.strategy.clone(),
            self.kernel.clone(),
            self.layout.clone(),
            opt(self.outputs_per_thread),
            opt(self.rows_per_warp),
            opt(self.planes_per_warp),
            opt(self.min_blocks_per_sm),
            format!("{:.6}", self.time_ms),
            format!("{:.1}", self.gb_per_s),
            real(self.copy_gb_per_s, 1),
            real(self.arithmetic_bound_gb_per_s, 1),
            real(self.roofline_gb_per_s, 1),
            real(self.fraction_of_roofline, 4),
            opt(self.registers),
            opt(self.local_bytes),
            opt(self.shared_bytes),
            opt(self.blocks_per_sm),
            real(self.occupancy, 3),
            real(self.shuffles_per_output, 3),
            self.max_rel_error.map(|e| format!("{e:.3e}")).unwrap_or_default(),
            self.launches.to_string(),
            self.elements.to_string(),
            self.gpu.replace(',', " "),
        ]
    }

    fn parse(line: &Record) -> Result<Row> {
        Ok(Row {
            stencil: line.text("stencil").to_owned(),
            element: line.text("element").to_owned(),
            shape: line.text("shape").to_owned(),
            taps: line.required("taps")?,
            strategy: line.text("strategy").to_owned(),
            kernel: line.text("kernel").to_owned(),
            layout: line.text("layout").to_owned(),
            outputs_per_thread: line.opt("outputs_per_thread")?,
            rows_per_warp: line.opt("rows_per_warp")?,
            planes_per_warp: line.opt("planes_per_warp")?,
            min_blocks_per_sm: line.opt("min_blocks_per_sm")?,
            time_ms: line.required("time_ms")?,
            gb_per_s: line.required("gb_per_s")?,
            copy_gb_per_s: line.opt("copy_gb_per_s")?,
            arithmetic_bound_gb_per_s: line.opt("arithmetic_bound_gb_per_s")?,
            roofline_gb_per_s: line.opt("roofline_gb_per_s")?,
            fraction_of_roofline: line.opt("fraction_of_roofline")?,
            registers: line.opt("registers")?,
            local_bytes: line.opt("local_bytes")?,
            shared_bytes: line.opt("shared_bytes")?,
            blocks_per_sm: line.opt("blocks_per_sm")?,
            occupancy: line.opt("occupancy")?,
            shuffles_per_output: line.opt("shuffles_per_output")?,
            max_rel_error: line.opt("max_rel_error")?,
            launches: line.opt("launches")?.unwrap_or(0),
            elements: line.opt("elements")?.unwrap_or(0),
            gpu: line.text("gpu").to_owned(),
        })
    }
}

pub fn write_csv(rows: &[Row], path: &Path) -> Result<()> {
    csv::write(path, &COLUMNS, rows.iter().map(Row::fields))
}

pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    csv::read(path, &["stencil", "element", "shape", "taps", "strategy", "time_ms", "gb_per_s"], Row::parse)
}

/// A stencil over one element type: what the summary has a line for and the plots a group.
pub type Group = (String, String);

/// The (stencil, element) pairs of `rows`, in the order they first appear (the order they ran).
pub fn groups(rows: &[Row]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for row in rows {
        let group = (row.stencil.clone(), row.element.clone());
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

/// What the summary and the plots show per stencil, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    Copy,
    Default,
    /// The fastest register cache of the stencil, default or named.
    BestRegisterCache,
    SharedMemory,
    Naive,
    Cupy,
    Torch,
}

impl Series {
    pub const ALL: [Series; 7] = [
        Series::Copy,
        Series::Default,
        Series::BestRegisterCache,
        Series::SharedMemory,
        Series::Naive,
        Series::Cupy,
        Series::Torch,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Series::Copy => "copy",
            Series::Default => "rc default",
            Series::BestRegisterCache => "rc best",
            Series::SharedMemory => "rc shared memory",
            Series::Naive => "rc naive",
            Series::Cupy => "CuPy correlate",
            Series::Torch => "PyTorch conv",
        }
    }

    fn takes(self, row: &Row) -> bool {
        match self {
            Series::Copy => row.strategy == COPY,
            Series::Default => row.strategy == DEFAULT,
            Series::BestRegisterCache => row.is_register_cache(),
            Series::SharedMemory => row.strategy == Strategy::SharedMemory.name(),
            Series::Naive => row.strategy == Strategy::Naive.name(),
            Series::Cupy => row.strategy == CUPY,
            Series::Torch => row.strategy == TORCH,
        }
    }

    /// This series' row for `group`: the fastest of those it takes.
    pub fn pick<'a>(self, rows: &'a [Row], group: &Group) -> Option<&'a Row> {
        rows.iter()
            .filter(|r| r.stencil == group.0 && r.element == group.1 && self.takes(r))
            .max_by(|a, b| a.gb_per_s.total_cmp(&b.gb_per_s))
    }
}

/// Sorts rows by group (in the order they first appear), then copy, rc's, the peers, the
/// peers' copy: the order of the table and of results.csv. Within a strategy, the order is kept.
pub fn sort(rows: &mut [Row]) {
    let groups = groups(rows);
    let rank = |s: &str| {
        let order = [
            COPY,
            DEFAULT,
            Strategy::RegisterCache.name(),
            Strategy::SharedMemory.name(),
            Strategy::Naive.name(),
            CUPY,
            TORCH,
        ];
        order.iter().position(|o| *o == s).unwrap_or(order.len())
    };
    let group_of = |r: &Row| groups.iter().position(|g| g.0 == r.stencil && g.1 == r.element);
    rows.sort_by_key(|r| (group_of(r), rank(&r.strategy)));
}

/// Adds the peers' rows to `rows` ([`peers::merge`]). Returns what to tell the user.
pub fn merge_peers(rows: &mut Vec<Row>, peers: Vec<Row>) -> Vec<String> {
    peers::merge(rows, peers, COPY, |s| [CUPY, TORCH, PEERS_COPY].contains(&s))
}

impl PeerRow for Row {
    fn problem(&self) -> String {
        format!("{} {}", self.stencil, self.element)
    }
    fn size(&self) -> String {
        self.shape.clone()
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

/// Every row as a fixed-width table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let (opt, real) = (cell, cell_real);
    let _ = writeln!(
        out,
        "{:<10} {:<4} {:<22} {:<13} {:<24} {:>8} {:>7} {:>6} {:>5} {:>6} {:>6} {:>5} {:>8}",
        "stencil",
        "type",
        "strategy",
        "kernel",
        "tile",
        "ms",
        "GB/s",
        "roof",
        "regs",
        "local",
        "smem",
        "occ",
        "shfl/out"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<10} {:<4} {:<22} {:<13} {:<24} {:>8.4} {:>7.1} {:>6} {:>5} {:>6} {:>6} {:>5} {:>8}",
            row.stencil,
            row.element,
            row.strategy,
            row.kernel,
            row.tile(),
            row.time_ms,
            row.gb_per_s,
            real(row.fraction_of_roofline, 3),
            opt(row.registers),
            opt(row.local_bytes),
            opt(row.shared_bytes),
            real(row.occupancy, 2),
            real(row.shuffles_per_output, 2),
        );
    }
    out
}

/// One line per stencil in markdown, for the README: GB/s and fraction of the roofline of each
/// series, the tiles the default and the best register cache took, and the default over CuPy.
pub fn summary(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GB/s = (input + output bytes) / median time; in brackets the fraction of the roofline = min(copy, FP add bound for the taps)."
    );
    let _ = writeln!(out);
    let mut header = vec!["stencil", "type", "taps", "roofline GB/s"];
    header.extend(Series::ALL.map(Series::label));
    header.push("default / CuPy");
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for group in groups(rows) {
        let Some(any) = rows.iter().find(|r| r.stencil == group.0 && r.element == group.1) else { continue };
        let roof = Series::Copy.pick(rows, &group).and_then(|c| c.roofline_gb_per_s);
        let mut cells = vec![group.0.clone(), group.1.clone(), any.taps.to_string(), real(roof, 0)];
        for series in Series::ALL {
            let cell = match series.pick(rows, &group) {
                None => "-".to_owned(),
                Some(r) => {
                    let mut cell = format!("{:.0}", r.gb_per_s);
                    if let (Some(f), false) = (r.fraction_of_roofline, series == Series::Copy) {
                        let _ = write!(cell, " ({f:.2})");
                    }
                    if matches!(series, Series::Default | Series::BestRegisterCache) {
                        let _ = write!(cell, " {}", r.tile());
                    }
                    cell
                }
            };
            cells.push(cell);
        }
        let ratio = match (Series::Default.pick(rows, &group), Series::Cupy.pick(rows, &group)) {
            (Some(d), Some(c)) => format!("{:.1}x", d.gb_per_s / c.gb_per_s),
            _ => "-".to_owned(),
        };
        cells.push(ratio);
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nTiles: distribution, `pP` outputs per thread, `rR` rows and `zZ` planes per warp, `mbM` min_blocks_per_sm."
    );
    out
}
