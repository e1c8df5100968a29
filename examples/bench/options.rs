//! The benchmark's command line.

use std::path::PathBuf;

use rc::ScalarType;

use crate::bench::grid::kernels::{self as grid, SHAPE_2D, SHAPE_3D};
use crate::bench::kernels::{compiled, Variant, AUTO, VARIANTS};
use crate::common::{fail, Result};

pub const USAGE: &str = "\
usage: cargo run --release --example bench -- [options]
  --grid             the 2D and 3D benchmark (below) instead of the 1D one
  --half             the 1D box average in f16 (r = 1, 2, 4, 8, 16; --radii picks among
                     them) against the copy of 2-byte elements, instead of the 1D one
  --fields           f32 r = 1 diffusion with two input fields (u and its coefficient k)
                     and with one, against the copy, instead of the 1D one
  --systems          Gray-Scott (two fields in, two out) on 8192 x 8192, one step per launch
                     and 1000 fused steps, against the copy, instead of the 1D one
  --math             Perona-Malik diffusion (4 correctly rounded exp per point) on 8192 x 8192,
                     one step per launch, beside linear diffusion and the copy, instead of the 1D one
  --split            a grid split over every visible GPU (features cudarc): weak scaling of
                     2D heat at 16384^2 per GPU (one step and fused) and 3D at 512^3 per GPU
                     from 1 to G GPUs, instead of the 1D one
  --radii LIST       radii to run (default 1,2,4,8,12,16,24,32,64)
  --p LIST           outputs per thread to run (default 1,2,4,8)
  --variants LIST    which variants to run, by their `strategy` label (default: all, and
                     register_cache_auto: the `distribution = auto` kernel of each radius)
  --type LIST        element types: f32, f64 or f32,f64 (default f32; with --grid both)
  --n N              input length (default 2^28 for f32, 2^27 for f64: 1 GiB each)
  --stencils LIST    with --grid: which stencils (default all: star2d_r1, box2d_r1, ...)
  --shape-2d RxC     with --grid: the 2D grid (default 8192x8192)
  --shape-3d DxRxC   with --grid: the 3D grid (default 512x512x512)
  --reps N           timed launches per kernel; the median is reported (default 20)
  --warm-up N        untimed launches before timing (default 3)
  --out DIR          where results.csv, summary.txt and the SVG plots go
                     (default bench/results/<date>-<gpu>/)
  --peers FILE       merge the CSV written by bench/peers.py into the results and plots
  --plot-only CSV    no GPU: re-plot (and re-tabulate) a results.csv, into --out or beside it
  --emit-ptx DIR     write every kernel's PTX, 1D and grid, into DIR (for ptxas in CI) and exit
  --help             this text";

/// Default input lengths: 1 GiB of input either way.
pub const DEFAULT_N_F32: usize = 1 << 28;
pub const DEFAULT_N_F64: usize = 1 << 27;

pub struct Options {
    /// The 2D and 3D benchmark instead of the 1D one.
    pub grid: bool,
    /// The f16 box average instead of the 1D one.
    pub half: bool,
    /// The two-field diffusion instead of the 1D one.
    pub fields: bool,
    pub systems: bool,
    /// Perona-Malik with exp instead of the 1D one.
    pub math: bool,
    /// The split grid's weak scaling over the GPUs.
    pub split: bool,
    pub radii: Vec<u32>,
    pub outputs_per_thread: Vec<u32>,
    /// Labels of the variants to run.
    pub variants: Vec<String>,
    /// Whether to run the `distribution = auto` kernels.
    pub auto: bool,
    /// `None`: f32 in 1D, f32 and f64 with `--grid` ([`Options::elements`]).
    pub element_list: Option<Vec<ScalarType>>,
    /// Grid stencils to run, by name.
    pub stencils: Vec<String>,
    pub shape_2d: [usize; 2],
    pub shape_3d: [usize; 3],
    /// `None`: the default for each element type.
    pub n: Option<usize>,
    pub reps: usize,
    pub warm_up: usize,
    pub out: Option<PathBuf>,
    pub peers: Option<PathBuf>,
    pub plot_only: Option<PathBuf>,
    pub emit_ptx: Option<PathBuf>,
}

impl Options {
    /// The command line, or `None` after printing the usage for `--help`.
    pub fn parse() -> Result<Option<Options>> {
        let (radii, outputs_per_thread) = compiled();
        let mut options = Options {
            grid: false,
            half: false,
            fields: false,
            systems: false,
            math: false,
            split: false,
            radii,
            outputs_per_thread,
            variants: VARIANTS.iter().map(|v| v.label.to_owned()).collect(),
            auto: true,
            element_list: None,
            stencils: grid::names().into_iter().map(str::to_owned).collect(),
            shape_2d: SHAPE_2D,
            shape_3d: SHAPE_3D,
            n: None,
            reps: 20,
            warm_up: 3,
            out: None,
            peers: None,
            plot_only: None,
            emit_ptx: None,
        };
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            let mut value = || words.next().ok_or_else(|| fail(format!("{word} needs a value\n{USAGE}")));
            match word.as_str() {
                "--grid" => options.grid = true,
                "--half" => options.half = true,
                "--fields" => options.fields = true,
                "--systems" => options.systems = true,
                "--math" => options.math = true,
                "--split" => options.split = true,
                "--stencils" => options.stencils = stencils(&value()?)?,
                "--shape-2d" => options.shape_2d = shape(&word, &value()?)?,
                "--shape-3d" => options.shape_3d = shape(&word, &value()?)?,
                "--radii" => options.radii = numbers(&word, &value()?)?,
                "--p" | "--outputs-per-thread" => options.outputs_per_thread = numbers(&word, &value()?)?,
                "--variants" => {
                    let labels = variants(&value()?)?;
                    options.auto = labels.iter().any(|l| l == AUTO);
                    options.variants = labels.into_iter().filter(|l| l != AUTO).collect();
                }
                "--type" => options.element_list = Some(elements(&value()?)?),
                "--n" => options.n = Some(number(&word, &value()?, 1)?),
                "--reps" => options.reps = number(&word, &value()?, 1)?,
                "--warm-up" => options.warm_up = number(&word, &value()?, 0)?,
                "--out" => options.out = Some(value()?.into()),
                "--peers" => options.peers = Some(value()?.into()),
                "--plot-only" => options.plot_only = Some(value()?.into()),
                "--emit-ptx" => options.emit_ptx = Some(value()?.into()),
                "--help" | "-h" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                other => return Err(fail(format!("unknown argument `{other}`\n{USAGE}"))),
            }
        }
        Ok(Some(options))
    }

    /// Fails, naming what is missing, unless every radius and outputs per thread asked for has
    /// compiled kernels: kernels are made at compile time, one `#[stencil]` per pattern.
    pub fn check_compiled(&self) -> Result<()> {
        let missing = |asked: &[u32], compiled: &[u32]| -> Vec<String> {
            asked.iter().filter(|v| !compiled.contains(v)).map(u32::to_string).collect()
        };
        let (compiled_radii, compiled_ps) = compiled();
        let radii = missing(&self.radii, &compiled_radii);
        let ps = missing(&self.outputs_per_thread, &compiled_ps);
        let mut problems = Vec::new();
        if !radii.is_empty() {
            problems.push(format!(
                "radius {} has no compiled kernel (compiled: {})",
                radii.join(", "),
                list(&compiled_radii)
            ));
        }
        if !ps.is_empty() {
            problems.push(format!(
                "outputs per thread {} has no compiled kernel (compiled: {})",
                ps.join(", "),
                list(&compiled_ps)
            ));
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(fail(format!(
            "{}.\nEach kernel is a #[stencil] made at compile time: add the patterns to `with_patterns!` \
             in examples/bench/kernels.rs and rebuild.",
            problems.join("; ")
        )))
    }

    /// The variants to run, in the order of [`VARIANTS`].
    pub fn variants(&self) -> Vec<Variant> {
        VARIANTS.into_iter().filter(|v| self.variants.iter().any(|l| l == v.label)).collect()
    }

    /// The element types to run.
    pub fn elements(&self) -> Vec<ScalarType> {
        match (&self.element_list, self.grid) {
            (Some(list), _) => list.clone(),
            (None, false) => vec![ScalarType::F32],
            (None, true) => vec![ScalarType::F32, ScalarType::F64],
        }
    }

    /// The input length for `element`.
    pub fn n_for(&self, element: ScalarType) -> usize {
        self.n.unwrap_or(match element {
            ScalarType::F64 => DEFAULT_N_F64,
            _ => DEFAULT_N_F32,
        })
    }
}

pub fn list(values: &[u32]) -> String {
    values.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// `text` as a whole number of at least `min`.
fn number(word: &str, text: &str, min: usize) -> Result<usize> {
    let value: usize = text.trim().parse().map_err(|e| fail(format!("{word} {text}: {e}\n{USAGE}")))?;
    if value < min {
        return Err(fail(format!("{word} must be at least {min}, got {value}")));
    }
    Ok(value)
}

/// A comma-separated list of variant labels, each one of [`VARIANTS`].
fn variants(text: &str) -> Result<Vec<String>> {
    text.split(',')
        .map(|label| match Variant::is_label(label.trim()) || label.trim() == AUTO {
            true => Ok(label.trim().to_owned()),
            false => Err(fail(format!(
                "--variants: unknown variant `{label}`, expected one of {}, {AUTO}",
                VARIANTS.map(|v| v.label).join(", ")
            ))),
        })
        .collect()
}

/// A comma-separated list of grid stencil names.
fn stencils(text: &str) -> Result<Vec<String>> {
    let known = grid::names();
    text.split(',')
        .map(|name| match known.contains(&name.trim()) {
            true => Ok(name.trim().to_owned()),
            false => Err(fail(format!("--stencils: unknown stencil `{name}`, expected one of {}", known.join(", ")))),
        })
        .collect()
}

/// A shape written `AxB` or `AxBxC`, outermost first, every extent at least 1.
fn shape<const N: usize>(word: &str, text: &str) -> Result<[usize; N]> {
    let extents = text.split('x').map(|e| number(word, e, 1)).collect::<Result<Vec<usize>>>()?;
    extents.try_into().map_err(|got: Vec<usize>| {
        fail(format!("{word} {text}: expected {N} extents separated by `x`, got {}", got.len()))
    })
}

fn numbers(word: &str, text: &str) -> Result<Vec<u32>> {
    let mut values = Vec::new();
    for v in text.split(',') {
        let value = number(word, v, 1)?;
        values.push(u32::try_from(value).map_err(|e| fail(format!("{word} {v}: {e}")))?);
    }
    values.sort_unstable();
    values.dedup();
    Ok(values)
}

fn elements(text: &str) -> Result<Vec<ScalarType>> {
    let mut types = Vec::new();
    for name in text.split(',') {
        let ty = match name.trim() {
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            other => return Err(fail(format!("--type {other}: expected f32, f64 or f32,f64\n{USAGE}"))),
        };
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    Ok(types)
}
