//! A 2D or 3D grid split along its outermost dimension into bands, one per rank, as pure data:
//! which rows each rank owns, which rows it holds (its own and a halo on each side that has a
//! neighbour), and the copies an exchange makes. "Rows" are the outermost dimension's indices:
//! the rows of a 2D grid, the planes of a 3D one; a row holds every element of the inner
//! dimensions.
//!
//! Why the halo makes a split run exact, with no kernel change: each rank steps its local grid
//! (own rows and halos) as if it were the whole grid. Where a local edge is a global edge (the
//! first rank's first row, the last rank's last), the kernel's own boundary rule is the right
//! one. Where it is not, the rule reads wrong values, and each step spreads them `r` rows
//! further (the stencil's radius along the split dimension); after `S` steps exactly the first
//! and last `S * r` rows are wrong. A halo of `h = S * r` rows on each side that has a
//! neighbour absorbs them: the own rows are exact, and an exchange then refreshes every halo
//! from the neighbours' own rows. Under `wrap` every rank has both neighbours (a ring; one rank
//! alone needs no halo). A band needs at least `h` own rows, else a halo would need rows of a
//! neighbour's neighbour. `valid` shrinks the grid every step, so bands would have to move:
//! it is refused.

use std::ops::Range;

use crate::boundary::Boundary;
use crate::error::DecompositionError;
use crate::geometry::{Dims, Extent};
use crate::pattern::Pattern;

/// What one exchange costs, in element-steps a GPU computes meanwhile: 16-19 us per exchange of
/// one step's halo between two H200s over NVLink (bench --split, its peer-reading copy kernel and
/// cross-GPU ordering; docs/gpu-runs/2026-11-28-h200x2-session16.log), at ~4.2 TB/s over the 8
/// bytes an f32 element and step moves ([`Decomposition::balanced_steps_per_exchange`]). Deeper
/// halos' larger copies add bytes at NVLink's rate, the same per step whatever the depth.
pub const EXCHANGE_COST: f64 = 10e6;

/// A grid split along its outermost dimension into bands, one per rank, with halos of
/// [`Decomposition::halo`] rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decomposition {
    shape: Extent,
    radius: usize,
    steps_per_exchange: usize,
    wrap: bool,
    bands: Vec<Band>,
}

/// One rank's part of the grid: the global rows it owns (computes and returns), and the halo
/// rows it holds before and after them (copies of its neighbours' rows; 0 where there is no
/// neighbour).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    pub rank: usize,
    /// Global rows, along the outermost dimension.
    pub own: Range<usize>,
    /// Halo rows before the own rows, and after them, in the local grid.
    pub before: usize,
    pub after: usize,
}

impl Band {
    /// Rows of the local grid: the halos and the own rows.
    pub fn rows(&self) -> usize {
        self.before + self.own.len() + self.after
    }

    /// Where the own rows lie in the local grid.
    pub fn own_local(&self) -> Range<usize> {
        self.before..self.before + self.own.len()
    }

    /// The global row that local row `local` holds, in a grid of `rows` rows (a halo row past
    /// a global edge only exists under `wrap`, where it wraps).
    pub fn global_row(&self, local: usize, rows: usize) -> usize {
        (self.own.start + rows + local - self.before) % rows
    }
}

/// One copy of an exchange: rows `from_rows` of rank `from`'s local grid into rows `to_rows`
/// of rank `to`'s (as many rows; every element of each row, in every state field).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloCopy {
    pub from: usize,
    pub from_rows: Range<usize>,
    pub to: usize,
    pub to_rows: Range<usize>,
}

impl Decomposition {
    /// The grid of shape `shape` of a stencil of `pattern`, split into `ranks` bands as even as
    /// can be (the first `rows % ranks` bands a row longer), exchanged every
    /// `steps_per_exchange` steps.
    pub fn new(
        pattern: &Pattern,
        shape: impl Into<Extent>,
        ranks: usize,
        steps_per_exchange: usize,
    ) -> Result<Decomposition, DecompositionError> {
        let shape = shape.into();
        let rows = shape.components().first().copied().unwrap_or(0);
        if ranks == 0 {
            return Err(DecompositionError::NoRanks);
        }
        let own: Vec<usize> = (0..ranks).map(|rank| rows / ranks + usize::from(rank < rows % ranks)).collect();
        Decomposition::with_bands(pattern, shape, &own, steps_per_exchange)
    }

    /// Steps between exchanges for a grid of shape `shape` of a stencil of `pattern` split
    /// into `ranks` bands, whose launches each run `steps_per_launch` steps (1, or a fused
    /// kernel's): the count that balances what an exchange costs against the halo rows that
    /// deeper halos make every step compute again.
    ///
    /// An exchange every `S` steps costs `E / S` per step, `E` its fixed cost
    /// ([`EXCHANGE_COST`]). A halo of `S * r` rows on each side with a neighbour makes the `k`-th
    /// step after an exchange compute `2 * (S - k) * r` rows of `row_len` elements more than the
    /// own rows (each launch computes only the rows still exact, [`Decomposition::exact_rows`]):
    /// `(S - 1) * r` rows a step on average. The sum is least at `S = sqrt(E / (r * row_len))`:
    /// 25 steps for 16384-element rows of radius 1 (the extra rows are 0.15% of a 16384-row
    /// band, against an exchange every step costing ~3.5% of it), 6 for 512 x 512 planes. Rounded to a multiple of `steps_per_launch` (an exchange
    /// falls between launches), at least one launch, at most what the thinnest band holds
    /// ([`Decomposition::most_ranks`]). One rank exchanges nothing: one launch.
    pub fn balanced_steps_per_exchange(
        pattern: &Pattern,
        shape: impl Into<Extent>,
        ranks: usize,
        steps_per_launch: usize,
    ) -> usize {
        let shape = shape.into();
        let components = shape.components();
        let launch = steps_per_launch.max(1);
        let (Some(&rows), Some(&radius)) = (components.first(), pattern.radius().components().first()) else {
            return launch;
        };
        let (radius, row_len) = (radius.max(1) as usize, components[1..].iter().product::<usize>().max(1));
        if ranks <= 1 {
            return launch;
        }
        let best = (EXCHANGE_COST / (radius as f64 * row_len as f64)).sqrt();
        let launches = ((best / launch as f64).round() as usize).max(1);
        // The thinnest band (`rows / ranks`, rounded down) must hold a halo of `S * r` rows.
        let thinnest = rows / ranks;
        let most = (thinnest / (radius * launch)).max(1);
        launches.min(most) * launch
    }

    /// The most ranks [`Decomposition::new`] can split a grid of shape `shape` of a stencil of
    /// `pattern` into with `steps_per_exchange` steps between exchanges: each band needs at
    /// least the halo's rows (at least 1). For a caller that would rather use fewer ranks than
    /// get [`DecompositionError::BandTooThin`].
    pub fn most_ranks(pattern: &Pattern, shape: impl Into<Extent>, steps_per_exchange: usize) -> usize {
        let shape = shape.into();
        let rows = shape.components().first().copied().unwrap_or(0);
        let radius = pattern.radius().components().first().map_or(0, |&r| r as usize);
        (rows / steps_per_exchange.saturating_mul(radius).max(1)).max(1)
    }

    /// The grid of shape `shape` split into bands of `own_rows[rank]` rows each, in rank order
    /// (they must add up to the grid's rows).
    pub fn with_bands(
        pattern: &Pattern,
        shape: impl Into<Extent>,
        own_rows: &[usize],
        steps_per_exchange: usize,
    ) -> Result<Decomposition, DecompositionError> {
        let shape = shape.into();
        if pattern.dims() == Dims::One || shape.dims() != pattern.dims() {
            return Err(DecompositionError::Dimensions { stencil: pattern.dims(), shape: shape.dims() });
        }
        if pattern.boundary() == Boundary::Valid {
            return Err(DecompositionError::Valid);
        }
        if own_rows.is_empty() {
            return Err(DecompositionError::NoRanks);
        }
        if steps_per_exchange == 0 {
            return Err(DecompositionError::NoStepsPerExchange);
        }
        let rows = shape.components()[0];
        let total: usize = own_rows.iter().sum();
        if total != rows {
            return Err(DecompositionError::RowCount { shape: shape.components(), rows, got: total });
        }
        let radius = pattern.radius().components()[0] as usize;
        let halo = steps_per_exchange.checked_mul(radius).ok_or(DecompositionError::HaloOverflow)?;
        let (ranks, wrap) = (own_rows.len(), pattern.boundary() == Boundary::Wrap);
        let least = halo.max(1);
        if let Some((rank, &got)) = own_rows.iter().enumerate().find(|(_, &own)| own < least && ranks > 1) {
            return Err(DecompositionError::BandTooThin { rank, rows: got, least, halo, ranks, total: rows });
        }
        if ranks == 1 && rows == 0 {
            return Err(DecompositionError::BandTooThin { rank: 0, rows: 0, least: 1, halo, ranks, total: rows });
        }
        let mut start = 0;
        let bands = own_rows
            .iter()
            .enumerate()
            .map(|(rank, &own)| {
                let neighbour = |exists: bool| if ranks > 1 && exists { halo } else { 0 };
                let band = Band {
                    rank,
                    own: start..start + own,
                    before: neighbour(wrap || rank > 0),
                    after: neighbour(wrap || rank + 1 < ranks),
                };
                start += own;
                band
            })
            .collect();
        Ok(Decomposition { shape, radius, steps_per_exchange, wrap, bands })
    }

    /// Whether this split fits a stencil of `pattern`: made for its dimensions, its radius
    /// along the split dimension and its boundary's wrapping (a split made for another stencil
    /// would have halos too thin, or no ring).
    pub fn fits(&self, pattern: &Pattern) -> Result<(), DecompositionError> {
        if pattern.boundary() == Boundary::Valid {
            return Err(DecompositionError::Valid);
        }
        let radius = pattern.radius().components().first().map_or(0, |&r| r as usize);
        let wrap = pattern.boundary() == Boundary::Wrap;
        if pattern.dims() != self.shape.dims() || radius != self.radius || wrap != self.wrap {
            let describe = |dims: Dims, radius: usize, wrap: bool| {
                format!(
                    "a {dims} stencil of radius {radius} along the split dimension{}",
                    if wrap { ", wrapping" } else { "" }
                )
            };
            return Err(DecompositionError::Mismatch {
                split: describe(self.shape.dims(), self.radius, self.wrap),
                stencil: describe(pattern.dims(), radius, wrap),
            });
        }
        Ok(())
    }

    /// The whole grid's shape.
    pub fn shape(&self) -> Extent {
        self.shape
    }

    pub fn ranks(&self) -> usize {
        self.bands.len()
    }

    pub fn bands(&self) -> &[Band] {
        &self.bands
    }

    /// Steps each rank runs between two exchanges (at most; the last run of steps may be
    /// shorter).
    pub fn steps_per_exchange(&self) -> usize {
        self.steps_per_exchange
    }

    /// Halo rows on each side that has a neighbour: steps per exchange times the stencil's
    /// radius along the outermost dimension.
    pub fn halo(&self) -> usize {
        self.steps_per_exchange * self.radius
    }

    /// Elements of one row: the product of the inner dimensions.
    pub fn row_len(&self) -> usize {
        self.shape.components()[1..].iter().product()
    }

    /// Rows of the whole grid.
    pub fn rows(&self) -> usize {
        self.shape.components()[0]
    }

    /// The shape of rank `rank`'s local grid: its rows (halos included) and the grid's inner
    /// dimensions.
    pub fn local_shape(&self, rank: usize) -> Extent {
        let mut components = self.shape.components();
        components[0] = self.bands[rank].rows();
        Extent::new(&components).unwrap_or(self.shape)
    }

    /// Whether the split dimension wraps (the bands form a ring).
    pub fn wraps(&self) -> bool {
        self.wrap
    }

    /// The copies of one exchange, after every rank has run its steps: each halo from the
    /// neighbour's own rows next to it, in rank order, the halo before a band first.
    pub fn exchange(&self) -> Vec<HaloCopy> {
        let ranks = self.bands.len();
        let mut copies = Vec::new();
        for band in &self.bands {
            if band.before > 0 {
                let from = &self.bands[(band.rank + ranks - 1) % ranks];
                let end = from.own_local().end;
                copies.push(HaloCopy {
                    from: from.rank,
                    from_rows: end - band.before..end,
                    to: band.rank,
                    to_rows: 0..band.before,
                });
            }
            if band.after > 0 {
                let from = &self.bands[(band.rank + 1) % ranks];
                let start = from.own_local().start;
                let to = band.own_local().end;
                copies.push(HaloCopy {
                    from: from.rank,
                    from_rows: start..start + band.after,
                    to: band.rank,
                    to_rows: to..to + band.after,
                });
            }
        }
        copies
    }

    /// Rank `rank`'s part of field `global` (the whole grid, row-major): its local grid, halos
    /// included. [`DecompositionError::Part`] for a rank the split does not have or a field that
    /// is not a whole grid.
    pub fn local_part<T: Copy>(&self, rank: usize, global: &[T]) -> Result<Vec<T>, DecompositionError> {
        let (band, row_len, rows) = (self.band(rank)?, self.row_len(), self.rows());
        self.check_len("the whole grid", global.len(), rows * row_len)?;
        let mut local = Vec::with_capacity(band.rows() * row_len);
        for row in 0..band.rows() {
            let from = band.global_row(row, rows) * row_len;
            local.extend_from_slice(&global[from..from + row_len]);
        }
        Ok(local)
    }

    /// Copies rank `rank`'s own rows of its local grid `local` into their place in the whole
    /// grid `global`. [`DecompositionError::Part`] as for [`Decomposition::local_part`].
    pub fn put_own<T: Copy>(&self, rank: usize, local: &[T], global: &mut [T]) -> Result<(), DecompositionError> {
        let (band, row_len) = (self.band(rank)?, self.row_len());
        self.check_len("the whole grid", global.len(), self.rows() * row_len)?;
        self.check_len("a local grid", local.len(), band.rows() * row_len)?;
        let from = band.own_local();
        global[band.own.start * row_len..band.own.end * row_len]
            .copy_from_slice(&local[from.start * row_len..from.end * row_len]);
        Ok(())
    }

    /// The rows of `band`'s local grid that are exact `steps` steps after an exchange (at
    /// most the split's steps per exchange): all but `steps * r` at each side with a neighbour.
    /// A launch that ends there need compute no others ([`crate::OutputRows`]): its rows read
    /// only rows the launch before it computed, and the last launch before an exchange
    /// computes the own rows alone.
    pub fn exact_rows(&self, band: &Band, steps: usize) -> Range<usize> {
        let lost = steps.min(self.steps_per_exchange) * self.radius;
        let side = |halo: usize| if halo > 0 { lost } else { 0 };
        side(band.before)..band.rows() - side(band.after)
    }

    /// Rank `rank`'s band, if the split has that rank.
    pub fn band(&self, rank: usize) -> Result<&Band, DecompositionError> {
        self.bands.get(rank).ok_or_else(|| DecompositionError::Part {
            what: format!("rank {rank}"),
            expected: format!("a rank below {}", self.bands.len()),
        })
    }

    fn check_len(&self, what: &str, got: usize, expected: usize) -> Result<(), DecompositionError> {
        match got == expected {
            true => Ok(()),
            false => Err(DecompositionError::Part {
                what: format!("{what} of {got} elements"),
                expected: format!("{expected} elements"),
            }),
        }
    }
}
