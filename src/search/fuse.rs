//! Hybrid ranking: Reciprocal Rank Fusion (k = 60) of the keyword and semantic lists, with
//! two additions that keep the fused list from losing to either input:
//!
//! 1. **Exact evidence first.** A note whose title is the query, or that contains every
//!    identifier of the query literally, is what the person typed a name for; such notes
//!    lead, in keyword order (see [`super::bm25::Exact`]).
//! 2. **Each list weighted by its evidence for this query** ([`Weights`]): the keyword
//!    list counts fully when its best note carries the query's rare words, and less when it
//!    only shares incidental ones, which is what happens when a question is phrased in
//!    other words than the note.
//!
//! Every number that decides an order is reported by `--explain`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::bm25::{Bm25Hit, Exact};
use super::semantic::SemHit;

/// The RRF constant: how quickly a list's influence decays with rank.
pub const K: f64 = 60.0;

/// How much each list counts for one query, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Multiplier on the keyword list's RRF terms.
    pub bm25: f64,
    /// Multiplier on the semantic list's RRF terms.
    pub semantic: f64,
    /// One line saying which evidence set the weights.
    pub reason: String,
}

impl Weights {
    /// Plain RRF.
    pub fn equal(reason: impl Into<String>) -> Weights {
        Weights { bm25: 1.0, semantic: 1.0, reason: reason.into() }
    }
}

/// One fused result with the parts of its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fused {
    /// `notes.id`.
    pub note_id: i64,
    /// The fused score: `bm25_part + sem_part`.
    pub score: f64,
    /// 1-based rank in the keyword list.
    pub bm25_rank: Option<u32>,
    /// 1-based rank in the semantic list.
    pub sem_rank: Option<u32>,
    /// `weights.bm25 / (K + bm25_rank)`, or 0.
    pub bm25_part: f64,
    /// `weights.semantic / (K + sem_rank)`, or 0.
    pub sem_part: f64,
    /// Exact evidence from the keyword side.
    pub exact: Exact,
    /// The best semantic chunk, when the note was in the semantic list.
    pub chunk_id: Option<i64>,
}

impl Fused {
    fn empty(note_id: i64) -> Fused {
        Fused {
            note_id,
            score: 0.0,
            bm25_rank: None,
            sem_rank: None,
            bm25_part: 0.0,
            sem_part: 0.0,
            exact: Exact::None,
            chunk_id: None,
        }
    }
}

/// Fuses the two lists (each best first) and returns every note in either, best first.
pub fn fuse(bm25: &[Bm25Hit], sem: &[SemHit], weights: &Weights) -> Vec<Fused> {
    let mut by_note: HashMap<i64, Fused> = HashMap::new();
    for (i, hit) in bm25.iter().enumerate() {
        let f = by_note.entry(hit.note_id).or_insert_with(|| Fused::empty(hit.note_id));
        f.bm25_rank = Some(i as u32 + 1);
        f.bm25_part = weights.bm25 / (K + (i + 1) as f64);
        f.exact = hit.exact;
    }
    for (i, hit) in sem.iter().enumerate() {
        let f = by_note.entry(hit.note_id).or_insert_with(|| Fused::empty(hit.note_id));
        f.sem_rank = Some(i as u32 + 1);
        f.sem_part = weights.semantic / (K + (i + 1) as f64);
        f.chunk_id = Some(hit.chunk_id);
    }
    let mut fused: Vec<Fused> = by_note
        .into_values()
        .map(|mut f| {
            f.score = f.bm25_part + f.sem_part;
            f
        })
        .collect();
    fused.sort_by(|a, b| {
        b.exact
            .cmp(&a.exact)
            // Within the exact tiers keyword order stands: that is what found them.
            .then_with(|| if a.exact != Exact::None { a.bm25_rank.cmp(&b.bm25_rank) } else { std::cmp::Ordering::Equal })
            .then(b.score.total_cmp(&a.score))
            .then(best_rank(a).cmp(&best_rank(b)))
            .then(a.note_id.cmp(&b.note_id))
    });
    fused
}

fn best_rank(f: &Fused) -> u32 {
    f.bm25_rank.unwrap_or(u32::MAX).min(f.sem_rank.unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(id: i64, exact: Exact) -> Bm25Hit {
        Bm25Hit { note_id: id, score: 1.0, exact }
    }
    fn s(id: i64) -> SemHit {
        SemHit { note_id: id, chunk_id: id * 10, score: 0.5 }
    }

    #[test]
    fn plain_rrf_rewards_agreement() {
        let f = fuse(&[b(1, Exact::None), b(2, Exact::None)], &[s(2), s(3)], &Weights::equal("test"));
        assert_eq!(f.iter().map(|f| f.note_id).collect::<Vec<_>>(), vec![2, 1, 3]);
        assert_eq!(f[0].bm25_rank, Some(2));
        assert_eq!(f[0].sem_rank, Some(1));
        assert!((f[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert_eq!(f[2].bm25_rank, None);
        assert_eq!(f[2].chunk_id, Some(30));
    }

    #[test]
    fn exact_title_leads_even_against_agreement() {
        let f = fuse(&[b(1, Exact::None), b(2, Exact::Title)], &[s(1), s(3)], &Weights::equal("test"));
        assert_eq!(f[0].note_id, 2);
    }

    #[test]
    fn weights_scale_each_side() {
        let w = Weights { bm25: 0.25, semantic: 1.0, reason: "test".into() };
        let f = fuse(&[b(1, Exact::None)], &[s(2)], &w);
        assert_eq!(f[0].note_id, 2);
        assert!((f[1].bm25_part - 0.25 / 61.0).abs() < 1e-12);
    }
}
