//! Which accesses of consecutive elements go out as one vector access.

use crate::distribution::AffineLoad;

/// What must agree for accesses to share a vector: tile element `base + lane * stride` of the
/// same lanes, in the same row of the same field (input field for loads, output field for
/// stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Access {
    pub at: AffineLoad,
    pub lanes: (u32, u32),
    pub field: u32,
    pub row: u32,
}

/// Runs of `accesses` (as index ranges) that one vector access of `width` elements can serve:
/// `width` consecutive elements per lane, starting at a multiple of `width` (so the address is
/// aligned when the buffer and the lane's start are), with the same stride and lanes. Every
/// other access is a run of one.
pub(super) fn runs(accesses: &[Access], width: u32) -> Vec<std::ops::Range<usize>> {
    runs_of(accesses, &[width as usize])
}

/// Runs of `accesses` as [`runs`] makes them, where each access that [`runs`] leaves alone
/// joins the widest aligned run of `width / 2`, `width / 4`, ... elements it starts: shared
/// memory serves a warp's vector of 8 bytes per lane at a stride of 16 in the passes of a
/// 4-byte access at that stride, so two halves of a window cost what one element did.
pub(super) fn aligned_runs(accesses: &[Access], width: u32) -> Vec<std::ops::Range<usize>> {
    let widths: Vec<usize> = std::iter::successors(Some(width as usize), |&n| (n > 2).then_some(n / 2)).collect();
    runs_of(accesses, &widths)
}

/// Runs of `accesses`: at each access the first of `widths` whose run fits, else one.
fn runs_of(accesses: &[Access], widths: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < accesses.len() {
        let first = accesses[i];
        let next =
            |k: usize| Access { at: AffineLoad { base: first.at.base + k as u32, stride: first.at.stride }, ..first };
        let fits = |n: usize| {
            first.at.base % n as u32 == 0 && i + n <= accesses.len() && (1..n).all(|k| accesses[i + k] == next(k))
        };
        let len = widths.iter().copied().find(|&n| fits(n)).unwrap_or(1);
        runs.push(i..i + len);
        i += len;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(base: u32, lanes: (u32, u32)) -> Access {
        Access { at: AffineLoad { base, stride: 8 }, lanes, field: 0, row: 0 }
    }

    #[test]
    fn consecutive_aligned_elements_of_the_same_lanes_share_a_vector() {
        let all = (0, 32);
        let accesses: Vec<Access> = (0..8).map(|b| access(b, all)).collect();
        assert_eq!(runs(&accesses, 4), vec![0..4, 4..8]);
    }

    #[test]
    fn a_run_breaks_at_a_misaligned_start_a_gap_or_other_lanes() {
        let all = (0, 32);
        // Starts at 1: not a multiple of 4, so every access goes alone until 4.
        let shifted: Vec<Access> = (1..9).map(|b| access(b, all)).collect();
        assert_eq!(runs(&shifted, 4), vec![0..1, 1..2, 2..3, 3..7, 7..8]);
        let gap = vec![access(0, all), access(1, all), access(3, all), access(4, all)];
        assert_eq!(runs(&gap, 2), vec![0..2, 2..3, 3..4]);
        let lanes = vec![access(0, all), access(1, (0, 31))];
        assert_eq!(runs(&lanes, 2), vec![0..1, 1..2]);
        let rows = vec![access(0, all), Access { row: 1, ..access(1, all) }];
        assert_eq!(runs(&rows, 2), vec![0..1, 1..2]);
        let fields = vec![access(0, all), Access { field: 1, ..access(1, all) }];
        assert_eq!(runs(&fields, 2), vec![0..1, 1..2]);
    }

    #[test]
    fn aligned_runs_take_the_widest_aligned_piece_at_each_start() {
        let all = (0, 32);
        // A radius-2 window of 4 outputs: elements 2..10 as 2 + 4 + 2.
        let window: Vec<Access> = (2..10).map(|b| access(b, all)).collect();
        assert_eq!(aligned_runs(&window, 4), vec![0..2, 2..6, 6..8]);
        // Radius 1: 3..9 as 1 + 4 + 1; radius 3: 1..11 as 1 + 2 + 4 + 2 + 1.
        let window: Vec<Access> = (3..9).map(|b| access(b, all)).collect();
        assert_eq!(aligned_runs(&window, 4), vec![0..1, 1..5, 5..6]);
        let window: Vec<Access> = (1..11).map(|b| access(b, all)).collect();
        assert_eq!(aligned_runs(&window, 4), vec![0..1, 1..3, 3..7, 7..9, 9..10]);
        let gap = vec![access(0, all), access(1, all), access(3, all), access(4, all)];
        assert_eq!(aligned_runs(&gap, 4), vec![0..2, 2..3, 3..4]);
    }
}
