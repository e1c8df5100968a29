//! `Window`: what a stencil body sees on the CPU. Calling the user's function with it over every
//! output is the reference implementation every other path is checked against.

use std::ops::Index;

use crate::pattern::Boundary;
use crate::scalar::Element;

/// The `2r + 1` input elements around one output's centre. `w[d]` is the element at offset `d`
/// from the centre, `-r <= d <= r`; taps outside the input follow the boundary rule.
#[derive(Clone, Copy, Debug)]
pub struct Window<'a, T> {
    input: &'a [T],
    centre: i64,
    radius: u32,
    boundary: Boundary,
}

impl<'a, T: Element> Window<'a, T> {
    /// The window centred on input index `centre`. `input` must not be empty.
    pub fn new(input: &'a [T], centre: i64, radius: u32, boundary: Boundary) -> Window<'a, T> {
        Window { input, centre, radius, boundary }
    }

    pub fn radius(&self) -> u32 {
        self.radius
    }
}

impl<T: Element> Index<i32> for Window<'_, T> {
    type Output = T;

    /// Panics if `|d| > radius`, like a slice index out of bounds: a stencil reads only its window.
    fn index(&self, d: i32) -> &T {
        assert!(
            d.unsigned_abs() <= self.radius,
            "window tap {d} is outside the radius {}",
            self.radius
        );
        match self.boundary.source(self.input.len(), self.centre + d as i64) {
            Some(i) => &self.input[i],
            None => T::zero_ref(),
        }
    }
}
