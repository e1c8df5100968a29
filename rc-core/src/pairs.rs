//! Two 16-bit elements per 32-bit word and per shuffle.
//!
//! A warp shuffle moves 32 bits; an f16 or bf16 element fills half of them. Two fetches of one
//! input row that read the same rotation (their owners are the same lanes: the same tap of
//! neighbouring outputs, or neighbouring taps of one output) travel together: each lane packs
//! the two elements it publishes into one word ([`Instr::Pack`]), one shuffle moves the word,
//! and each reader takes the halves out where it first reads them ([`Instr::Unpack`]). Half the
//! shuffles, and the word holds both elements until then in one register.
//!
//! [`Instr::Pack`]: crate::program::Instr::Pack
//! [`Instr::Unpack`]: crate::program::Instr::Unpack

use std::collections::HashSet;

use crate::body::Body;
use crate::pattern::Pattern;
use crate::scalar::ScalarType;
use crate::schedule::{FetchId, LanePieces, Phase, Schedule, Source};
use crate::strategy::Strategy;

/// Whether a lane's cache registers of `element` pair up in 32-bit words: 16-bit elements of a
/// register cache whose `schedule` shuffles (round-robin, granules). Register `2k` is the low
/// half of word `k`, `2k + 1` its high half; a reader takes its half out, and a shuffle of two
/// fetches whose lanes publish a whole word moves that word as it is. Windows read only their
/// own registers, one element at a time after their vector loads, and keep them unpacked.
pub fn packs_cache(element: ScalarType, schedule: &Schedule) -> bool {
    element.bytes() == 2 && schedule.strategy == Strategy::RegisterCache && schedule.phases().next().is_some()
}

/// The shuffled fetches each input row of a step of each input field reads, for pairing: a
/// fetch pairs only with one its own row reads, so no shuffle moves what no tap uses.
#[derive(Clone, Debug, Default)]
pub struct ShuffledFetches {
    /// (input field, input row of the step, fetch), in the schedule's order of fetches.
    used: Vec<(u32, u32, FetchId)>,
}

impl ShuffledFetches {
    /// The shuffled fetches of `body`'s taps on the tile of `pattern` under `schedule`, if its
    /// elements are 16 bits wide (none otherwise: wider elements fill a shuffle alone).
    pub fn of(pattern: Pattern, body: &Body, schedule: &Schedule) -> ShuffledFetches {
        if body.element().bytes() != 2 {
            return ShuffledFetches::default();
        }
        let step = pattern.step();
        let mut used: HashSet<(u32, u32, FetchId)> = HashSet::new();
        for (field, d) in body.used_field_taps() {
            for row in 0..step.output_rows() {
                let input_row = step.input_row(row, d.along(2), d.along(1));
                for p in 0..pattern.outputs_per_thread() {
                    if let Some(id) = schedule.fetch_of(p, d.along_x()) {
                        if matches!(schedule.fetches[id].source, Source::Shuffle(_)) {
                            used.insert((field, input_row, id));
                        }
                    }
                }
            }
        }
        let mut used: Vec<(u32, u32, FetchId)> = used.into_iter().collect();
        used.sort_by_key(|&(field, row, id)| (id, field, row));
        ShuffledFetches { used }
    }

    /// The fetches that can shuffle together with `id` in input row `row` of `field`: the
    /// others that row reads through the same rotation and that `taken` (the fetches already
    /// shuffled there) does not hold, in the schedule's order, with the registers their lanes
    /// publish.
    pub fn partners<'s>(
        &self,
        schedule: &'s Schedule,
        field: u32,
        row: u32,
        id: FetchId,
        taken: impl Fn(FetchId) -> bool,
    ) -> Vec<(FetchId, &'s LanePieces)> {
        let Some(rotate) = phase(schedule, id).map(|p| p.rotate) else { return Vec::new() };
        self.used
            .iter()
            .filter(|&&(f, r, other)| f == field && r == row && other != id && !taken(other))
            .filter_map(|&(_, _, other)| {
                phase(schedule, other).filter(|p| p.rotate == rotate).map(|p| (other, &p.publish))
            })
            .collect()
    }
}

/// Whether every lane publishes a whole packed word when `lo` and `hi` travel together: cache
/// registers `2k` and `2k + 1`.
pub fn whole_words(lo: &LanePieces, hi: &LanePieces, warp: u32) -> bool {
    (0..warp).all(|lane| lo.at(lane) % 2 == 0 && hi.at(lane) == lo.at(lane) + 1)
}

fn phase(schedule: &Schedule, id: FetchId) -> Option<&Phase> {
    match &schedule.fetches[id].source {
        Source::Shuffle(phase) => Some(phase),
        _ => None,
    }
}
