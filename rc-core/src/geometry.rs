//! Offsets, radii and extents that know their dimension. A stencil is 1D, 2D or 3D; its taps,
//! radius and grid shape each carry one component per dimension, outermost first (`[dz, dy,
//! dx]`, as the user writes `w[(dz, dy, dx)]` and as row-major memory orders them). The
//! boundary rule applies in each dimension on its own. Code that works along x (the lanes of a
//! warp) reads the innermost component; a 2D or 3D stencil adds the outer ones.

use std::fmt;

use crate::boundary::Boundary;

/// The most dimensions a stencil has.
pub const MAX_DIMS: usize = 3;

/// A stencil's number of dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dims {
    One = 1,
    Two = 2,
    Three = 3,
}

impl Dims {
    pub const ALL: [Dims; MAX_DIMS] = [Dims::One, Dims::Two, Dims::Three];

    pub const fn count(self) -> usize {
        self as usize
    }

    /// The name of component `i` (outermost first, as written) of this many dimensions: `x` in
    /// 1D; `y`, `x` in 2D; `z`, `y`, `x` in 3D.
    pub const fn axis(self, i: usize) -> &'static str {
        const AXES: [&str; MAX_DIMS] = ["z", "y", "x"];
        AXES[MAX_DIMS - self.count() + i]
    }

    fn of(count: usize) -> Option<Dims> {
        match count {
            1 => Some(Dims::One),
            2 => Some(Dims::Two),
            3 => Some(Dims::Three),
            _ => None,
        }
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}D", self.count())
    }
}

/// An axis of a grid, x innermost: what the `axis` of [`Offset::along`] and the kernel's
/// extents count (0 is x).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    X = 0,
    Y = 1,
    Z = 2,
}

impl Axis {
    /// Innermost first.
    pub const ALL: [Axis; MAX_DIMS] = [Axis::X, Axis::Y, Axis::Z];

    /// The axis' place in a component list stored innermost first.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        })
    }
}

/// One component per dimension, outermost first as written, stored innermost first so that x
/// is always at the same place whatever the dimension. [`Offset`], [`Radius`] and [`Extent`]
/// are its three uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coords<T> {
    dims: Dims,
    innermost_first: [T; MAX_DIMS],
}

/// A tap's offset from the output's centre.
pub type Offset = Coords<i32>;
/// How far a stencil reads from its centre, in each dimension.
pub type Radius = Coords<u32>;
/// A grid's shape: elements along each dimension, stored row-major (x fastest).
pub type Extent = Coords<usize>;

/// `Coords::x`, the 1D value, for each component type: `const`, so that generated code can
/// build patterns in constants.
macro_rules! one_dimensional {
    ($($t:ty),*) => {$(
        impl Coords<$t> {
            /// A 1D value.
            pub const fn x(x: $t) -> Coords<$t> {
                Coords { dims: Dims::One, innermost_first: [x, 0, 0] }
            }

            /// A 2D value, outermost first as written: `(y, x)`.
            pub const fn yx(y: $t, x: $t) -> Coords<$t> {
                Coords { dims: Dims::Two, innermost_first: [x, y, 0] }
            }

            /// A 3D value, outermost first as written: `(z, y, x)`.
            pub const fn zyx(z: $t, y: $t, x: $t) -> Coords<$t> {
                Coords { dims: Dims::Three, innermost_first: [x, y, z] }
            }

            /// The component along dimension `axis`, counted from x (0) outwards; 0 beyond
            /// the value's dimensions, so outer tiles and halos of a lower dimension are empty.
            pub const fn along(&self, axis: usize) -> $t {
                self.innermost_first[axis]
            }
        }

        impl From<$t> for Coords<$t> {
            fn from(x: $t) -> Coords<$t> {
                Coords::<$t>::x(x)
            }
        }
    )*};
}
one_dimensional!(i32, u32, usize);

/// A shape written as an array, outermost first: `[len]`, `[rows, cols]`, `[depth, rows, cols]`.
macro_rules! shape_from_array {
    ($($n:literal),*) => {$(
        impl From<[usize; $n]> for Extent {
            fn from(shape: [usize; $n]) -> Extent {
                let mut innermost_first = [0; MAX_DIMS];
                for (slot, &len) in innermost_first.iter_mut().zip(shape.iter().rev()) {
                    *slot = len;
                }
                Coords { dims: Dims::ALL[$n - 1], innermost_first }
            }
        }

        impl TryFrom<Extent> for [usize; $n] {
            type Error = Dims;
            /// The shape as an array, outermost first; its dimensions if they are not `N`.
            fn try_from(extent: Extent) -> Result<[usize; $n], Dims> {
                extent.components().try_into().map_err(|_| extent.dims())
            }
        }
    )*};
}
shape_from_array!(1, 2, 3);

impl<T: Copy> Coords<T> {
    pub const fn dims(&self) -> Dims {
        self.dims
    }

    /// The component along x, the innermost dimension (the lanes' direction).
    pub const fn along_x(&self) -> T {
        self.innermost_first[0]
    }

    pub fn components(&self) -> Vec<T> {
        self.innermost_first[..self.dims.count()].iter().rev().copied().collect()
    }
}

impl<T: Copy + Default> Coords<T> {
    /// A value of 1 to 3 components, outermost first; `None` for another count.
    pub fn new(outermost_first: &[T]) -> Option<Coords<T>> {
        let dims = Dims::of(outermost_first.len())?;
        let mut innermost_first = [T::default(); MAX_DIMS];
        for (slot, &c) in innermost_first.iter_mut().zip(outermost_first.iter().rev()) {
            *slot = c;
        }
        Some(Coords { dims, innermost_first })
    }
}

impl Extent {
    /// The shape as the API takes it, outermost first: `[67, 131]` (its `Display` writes it as a
    /// tap is written, `(67, 131)`, which is not how a shape is passed).
    pub fn as_array(&self) -> ShapeArray {
        ShapeArray(*self)
    }
}

/// [`Extent::as_array`]: `[len]`, `[rows, cols]` or `[depth, rows, cols]`.
#[derive(Clone, Copy, Debug)]
pub struct ShapeArray(Extent);

impl fmt::Display for ShapeArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.components().iter().map(|c| c.to_string()).collect();
        write!(f, "[{}]", parts.join(", "))
    }
}

/// `3` in 1D, `(1, -2)` in 2D: as a tap or radius is written.
impl<T: Copy + Default + fmt::Display> fmt::Display for Coords<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.components().as_slice() {
            [x] => write!(f, "{x}"),
            many => {
                let parts: Vec<String> = many.iter().map(|c| c.to_string()).collect();
                write!(f, "({})", parts.join(", "))
            }
        }
    }
}

impl Radius {
    /// Whether `offset` has this radius' dimension and lies within it in every component.
    pub fn covers(self, offset: Offset) -> bool {
        offset.dims() == self.dims()
            && offset.components().iter().zip(self.components()).all(|(d, r)| d.unsigned_abs() <= r)
    }
}

impl Extent {
    /// Elements in the grid, or `None` if the count overflows.
    pub fn len(self) -> Option<usize> {
        self.components().into_iter().try_fold(1usize, usize::checked_mul)
    }

    pub fn is_empty(self) -> bool {
        self.components().contains(&0)
    }

    /// The same shape with `len` elements along the outermost dimension.
    pub fn with_outermost(mut self, len: usize) -> Extent {
        self.innermost_first[self.dims.count() - 1] = len;
        self
    }

    /// The row-major position of grid point `index` (outermost first, inside the grid).
    pub fn linear(self, index: &[usize]) -> usize {
        index.iter().zip(self.components()).fold(0, |at, (&i, n)| at * n + i)
    }

    /// The output grid of a stencil of `radius` over this grid: `valid` shrinks each dimension
    /// by twice its radius (`None` where a dimension is shorter than its window), the other
    /// rules keep the shape.
    pub fn output(self, radius: Radius, boundary: Boundary) -> Option<Extent> {
        if radius.dims() != self.dims() {
            return None;
        }
        match boundary {
            Boundary::Valid => {
                let shrunk: Option<Vec<usize>> = self
                    .components()
                    .iter()
                    .zip(radius.components())
                    .map(|(&n, r)| n.checked_sub(2 * r as usize).filter(|&m| m > 0))
                    .collect();
                Extent::new(&shrunk?)
            }
            _ => Some(self),
        }
    }
}

impl Boundary {
    /// The grid point a read at `index` (outermost first, possibly outside the grid) returns
    /// under this rule, as a row-major position, or `None` for a zero: the rule applies in each
    /// dimension on its own. `extent` must not be empty.
    pub fn locate(self, extent: Extent, index: &[i64]) -> Option<usize> {
        let dims = extent.dims().count();
        let mut at = [0; MAX_DIMS];
        for (slot, &g) in at.iter_mut().zip(index.iter().rev()) {
            *slot = g;
        }
        self.place(&extent.innermost_first[..dims], &at[..dims])
    }

    /// [`Boundary::locate`] in the order the emulator and the windows hold a grid: `shape` and
    /// `at` innermost (x) first, one entry per dimension, no length 0.
    pub(crate) fn place(self, shape: &[usize], at: &[i64]) -> Option<usize> {
        shape.iter().zip(at).rev().try_fold(0, |linear, (&n, &g)| Some(linear * n + self.source(n, g)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_written_outermost_first_and_x_is_the_last() {
        let o = Offset::new(&[-1, 2]).expect("2D");
        assert_eq!((o.dims(), o.along_x(), o.components()), (Dims::Two, 2, vec![-1, 2]));
        assert_eq!(o.to_string(), "(-1, 2)");
        assert_eq!(Offset::x(-3).to_string(), "-3");
        assert_eq!(Offset::new(&[1, 2, 3, 4]), None);
        assert_eq!(Radius::new(&[1, 4]).expect("2D").along_x(), 4);
    }

    #[test]
    fn a_radius_covers_offsets_of_its_dimension_within_every_component() {
        let r = Radius::new(&[1, 2]).expect("2D");
        assert!(r.covers(Offset::new(&[-1, 2]).expect("2D")));
        assert!(!r.covers(Offset::new(&[2, 0]).expect("2D")));
        assert!(!r.covers(Offset::x(1)), "1D taps on a 2D radius");
    }

    #[test]
    fn valid_shrinks_each_dimension_by_twice_its_radius() {
        let grid = Extent::new(&[10, 20]).expect("2D");
        let r = Radius::new(&[1, 3]).expect("2D");
        assert_eq!(grid.output(r, Boundary::Valid), Extent::new(&[8, 14]));
        assert_eq!(grid.output(r, Boundary::Wrap), Some(grid));
        assert_eq!(Extent::new(&[2, 20]).expect("2D").output(r, Boundary::Valid), None);
        assert_eq!(grid.output(Radius::x(1), Boundary::Zero), None, "dimensions differ");
    }

    #[test]
    fn the_boundary_rule_applies_in_each_dimension_and_in_1d_as_before() {
        let grid = Extent::new(&[3, 4]).expect("2D");
        for boundary in Boundary::ALL {
            for y in -5i64..8 {
                for x in -6i64..9 {
                    let want = match (boundary.source(3, y), boundary.source(4, x)) {
                        (Some(y), Some(x)) => Some(y * 4 + x),
                        _ => None,
                    };
                    assert_eq!(boundary.locate(grid, &[y, x]), want, "{boundary} ({y}, {x})");
                }
            }
            for g in -9i64..9 {
                assert_eq!(boundary.locate(Extent::x(5), &[g]), boundary.source(5, g));
            }
        }
    }

    #[test]
    fn a_3d_grid_is_row_major_with_x_fastest() {
        let grid = Extent::new(&[2, 3, 4]).expect("3D");
        assert_eq!(grid.len(), Some(24));
        assert_eq!(grid.linear(&[1, 2, 3]), 23);
        assert_eq!(grid.linear(&[1, 0, 0]), 12);
        assert_eq!(grid.to_string(), "(2, 3, 4)");
    }
}
