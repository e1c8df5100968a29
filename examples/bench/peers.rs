//! Merging the rows of bench/peers.py into a run's, in both benchmarks: each peer's row is
//! measured against the roofline of the bench's own copy of the same problem (its own copy stays
//! in its `copy_gb_per_s`), so every bar and line of a plot has one roofline.

use std::collections::BTreeMap;

/// What merging needs of a row of either benchmark.
pub trait PeerRow: Clone {
    /// The problem the row measures (`f32 r=4`, `star2d_r1 f32`): rows of one problem share a
    /// roofline.
    fn problem(&self) -> String;
    /// The problem's size (`n = 268435456`, `8192x8192`), the same for a fair comparison.
    fn size(&self) -> String;
    fn strategy(&self) -> &str;
    /// Takes `copy`'s arithmetic bound and roofline, and its own fraction of that roofline.
    fn measure_against(&mut self, copy: &Self);
}

/// Adds the rows of `peers` whose strategy `is_peer` to `rows`, each measured against the
/// bench's row of strategy `copy` for the same problem (rows of problems the bench did not run
/// are left out). Returns what to tell the user.
pub fn merge<R: PeerRow>(rows: &mut Vec<R>, peers: Vec<R>, copy: &str, is_peer: impl Fn(&str) -> bool) -> Vec<String> {
    let copies: BTreeMap<String, &R> = rows.iter().filter(|r| r.strategy() == copy).map(|r| (r.problem(), r)).collect();
    let mut notes = Vec::new();
    let mut merged = Vec::new();
    for mut peer in peers {
        if !is_peer(peer.strategy()) {
            notes.push(format!("peers: skipped a `{}` row (not a peer's)", peer.strategy()));
            continue;
        }
        let Some(copy) = copies.get(&peer.problem()) else {
            continue;
        };
        if peer.size() != copy.size() {
            notes.push(format!(
                "peers: {} {} measured {}, the bench {}: not the same problem size",
                peer.strategy(),
                peer.problem(),
                peer.size(),
                copy.size()
            ));
        }
        peer.measure_against(copy);
        merged.push(peer);
    }
    notes.push(format!("peers: merged {} rows", merged.len()));
    rows.extend(merged);
    notes
}
