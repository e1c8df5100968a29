//! `Window`, `Window2`, `Window3`: what a stencil body sees on the CPU. Calling the user's
//! function with one over every output is the reference implementation every other path is
//! checked against.

use std::ops::Index;

use crate::boundary::Boundary;
use crate::geometry::{Dims, Extent, Radius, MAX_DIMS};
use crate::scalar::Element;

/// The window type a stencil of `dims` dimensions reads, as its source names it.
pub const fn type_name(dims: Dims) -> &'static str {
    match dims {
        Dims::One => "Window",
        Dims::Two => "Window2",
        Dims::Three => "Window3",
    }
}

/// The input elements around one output's centre. In 1D, `w[d]` is the element at offset `d`
/// from the centre, `-r <= d <= r`; taps outside the input follow the boundary rule. A 2D or 3D
/// stencil sees the same window as a [`Window2`] or [`Window3`].
#[derive(Clone, Copy, Debug)]
pub struct Window<'a, T> {
    input: &'a [T],
    place: Place,
}

/// Where a window lies: the grid's shape, the centre and the radius, innermost (x) first, and
/// the rule. Apart from the element type, so that finding a tap's element is compiled once,
/// optimized, in rc-core, not in every crate that names a window (the CPU reference runs there,
/// unoptimized in a debug build).
#[derive(Clone, Copy, Debug)]
struct Place {
    shape: [usize; MAX_DIMS],
    centre: [i64; MAX_DIMS],
    radius: Radius,
    boundary: Boundary,
}

impl Place {
    /// A window of a grid of shape `shape` centred on `centre` (both outermost first).
    fn grid(shape: Extent, centre: &[i64], radius: Radius, boundary: Boundary) -> Place {
        let (mut s, mut c) = ([1; MAX_DIMS], [0; MAX_DIMS]);
        for (axis, (&n, &at)) in shape.components().iter().rev().zip(centre.iter().rev()).enumerate() {
            s[axis] = n;
            c[axis] = at;
        }
        Place { shape: s, centre: c, radius, boundary }
    }

    /// The input index of the tap at `offset` (innermost first) from the centre under the
    /// boundary rule, or `None` for a zero. Panics if the offset lies outside the radius, like a
    /// slice index out of bounds: a stencil reads only its window.
    fn tap(&self, offset: [i32; MAX_DIMS], dims: Dims) -> Option<usize> {
        assert!(self.radius.dims() == dims, "a {} window indexed with {} offsets", self.radius.dims(), dims.count());
        let (dims, mut at) = (dims.count(), self.centre);
        for axis in (0..dims).rev() {
            let (d, r) = (offset[axis], self.radius.along(axis));
            assert!(d.unsigned_abs() <= r, "window tap {d} along {} is outside the radius {r}", AXES[axis]);
            at[axis] += d as i64;
        }
        self.boundary.place(&self.shape[..dims], &at[..dims])
    }
}

impl<'a, T: Element> Window<'a, T> {
    /// The 1D window centred on input index `centre`. `input` must not be empty.
    pub fn new(input: &'a [T], centre: i64, radius: u32, boundary: Boundary) -> Window<'a, T> {
        let place = Place { shape: [input.len(), 1, 1], centre: [centre, 0, 0], radius: Radius::x(radius), boundary };
        Window { input, place }
    }

    /// The window of a grid of shape `shape` (row-major, `input.len()` its elements, none
    /// empty) centred on grid point `centre` (outermost first, as many as the shape has).
    pub fn grid(input: &'a [T], shape: Extent, centre: &[i64], radius: Radius, boundary: Boundary) -> Window<'a, T> {
        Window { input, place: Place::grid(shape, centre, radius, boundary) }
    }

    /// The 1D radius (x's in 2D and 3D).
    pub fn radius(&self) -> u32 {
        self.place.radius.along_x()
    }

    /// The element at `offset` (innermost first) from the centre under the boundary rule.
    /// Panics if the offset lies outside the radius ([`Place::tap`]).
    fn at(&self, offset: [i32; MAX_DIMS], dims: Dims) -> &'a T {
        self.place.tap(offset, dims).map_or(T::zero_ref(), |i| &self.input[i])
    }
}

const AXES: [&str; MAX_DIMS] = ["x", "y", "z"];

impl<T: Element> Index<i32> for Window<'_, T> {
    type Output = T;

    /// Panics if `|d| > radius`, like a slice index out of bounds: a stencil reads only its window.
    fn index(&self, d: i32) -> &T {
        self.at([d, 0, 0], Dims::One)
    }
}

/// A 2D stencil's window: `w[(dy, dx)]` is the element `dy` rows and `dx` columns from the
/// centre, `|dy| <= ry`, `|dx| <= rx`; taps outside the grid follow the boundary rule in each
/// dimension.
#[derive(Clone, Copy, Debug)]
pub struct Window2<'a, T>(Window<'a, T>);

/// A 3D stencil's window: `w[(dz, dy, dx)]`, outermost first.
#[derive(Clone, Copy, Debug)]
pub struct Window3<'a, T>(Window<'a, T>);

impl<'a, T: Element> From<Window<'a, T>> for Window2<'a, T> {
    fn from(w: Window<'a, T>) -> Window2<'a, T> {
        Window2(w)
    }
}

impl<'a, T: Element> From<Window<'a, T>> for Window3<'a, T> {
    fn from(w: Window<'a, T>) -> Window3<'a, T> {
        Window3(w)
    }
}

impl<T: Element> Window2<'_, T> {
    /// `(ry, rx)`.
    pub fn radius(&self) -> (u32, u32) {
        (self.0.place.radius.along(1), self.0.place.radius.along_x())
    }
}

impl<T: Element> Window3<'_, T> {
    /// `(rz, ry, rx)`.
    pub fn radius(&self) -> (u32, u32, u32) {
        (self.0.place.radius.along(2), self.0.place.radius.along(1), self.0.place.radius.along_x())
    }
}

impl<T: Element> Index<(i32, i32)> for Window2<'_, T> {
    type Output = T;

    /// Panics if a component lies outside its radius.
    fn index(&self, (dy, dx): (i32, i32)) -> &T {
        self.0.at([dx, dy, 0], Dims::Two)
    }
}

impl<T: Element> Index<(i32, i32, i32)> for Window3<'_, T> {
    type Output = T;

    /// Panics if a component lies outside its radius.
    fn index(&self, (dz, dy, dx): (i32, i32, i32)) -> &T {
        self.0.at([dx, dy, dz], Dims::Three)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2d_window_reads_rows_and_columns_under_the_rule_in_each() {
        // 3 rows of 4: element (y, x) is 10 * y + x.
        let grid: Vec<f32> = (0..3).flat_map(|y| (0..4).map(move |x| (10 * y + x) as f32)).collect();
        let shape = Extent::yx(3, 4);
        let w = Window2::from(Window::grid(&grid, shape, &[0, 3], Radius::yx(1, 2), Boundary::Clamp));
        assert_eq!((w[(0, 0)], w[(1, -2)], w[(-1, 1)], w[(1, 2)]), (3.0, 11.0, 3.0, 13.0));
        let w = Window2::from(Window::grid(&grid, shape, &[2, 0], Radius::yx(1, 2), Boundary::Wrap));
        assert_eq!((w[(1, -1)], w[(0, 1)]), (3.0, 21.0));
        let w = Window2::from(Window::grid(&grid, shape, &[2, 0], Radius::yx(1, 2), Boundary::Zero));
        assert_eq!((w[(1, 0)], w[(0, -1)], w[(-1, 1)]), (0.0, 0.0, 11.0));
        assert_eq!(w.radius(), (1, 2));
    }

    #[test]
    fn a_3d_window_is_outermost_first() {
        let grid: Vec<i32> = (0..24).collect();
        let w =
            Window3::from(Window::grid(&grid, Extent::zyx(2, 3, 4), &[1, 1, 1], Radius::zyx(1, 1, 1), Boundary::Clamp));
        assert_eq!((w[(0, 0, 0)], w[(-1, 0, 0)], w[(0, 1, 0)], w[(0, 0, 1)], w[(1, 1, 1)]), (17, 5, 21, 18, 22));
    }

    #[test]
    #[should_panic(expected = "outside the radius")]
    fn a_tap_outside_its_dimensions_radius_panics() {
        let grid = [1.0f32; 12];
        let w = Window2::from(Window::grid(&grid, Extent::yx(3, 4), &[1, 1], Radius::yx(1, 2), Boundary::Zero));
        let _ = w[(2, 0)];
    }
}
