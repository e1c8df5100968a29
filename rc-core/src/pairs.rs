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
use crate::schedule::{FetchId, LanePieces, Phase, Schedule, Source};

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

    /// The fetch to shuffle together with `id` in input row `row` of `field`: the first other
    /// one that row reads through the same rotation and that `taken` (the fetches already
    /// shuffled there) does not hold, with the registers its lanes publish.
    pub fn partner<'s>(
        &self,
        schedule: &'s Schedule,
        field: u32,
        row: u32,
        id: FetchId,
        taken: impl Fn(FetchId) -> bool,
    ) -> Option<(FetchId, &'s LanePieces)> {
        let rotate = phase(schedule, id)?.rotate;
        self.used
            .iter()
            .filter(|&&(f, r, other)| f == field && r == row && other != id && !taken(other))
            .find_map(|&(_, _, other)| phase(schedule, other).filter(|p| p.rotate == rotate).map(|p| (other, &p.publish)))
    }
}

fn phase(schedule: &Schedule, id: FetchId) -> Option<&Phase> {
    match &schedule.fetches[id].source {
        Source::Shuffle(phase) => Some(phase),
        _ => None,
    }
}
