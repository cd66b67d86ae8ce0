//! The notes a hybrid search weighs: every note either list found, each with both of its
//! scores. A note the keyword list found deeper than the semantic list goes still has its
//! similarity (every note is scored by the scan anyway), and a note only meaning found
//! still has its BM25 score (0 when it holds none of the query's words), so a fusion never
//! has to guess a missing value.

use std::collections::HashMap;

use super::bm25::{Bm25Hit, Exact, KeywordScores, WEIGHTS};
use super::semantic::{NoteScores, SemHit};
use crate::error::Result;
use crate::index::Reader;

/// One note and what each list knows of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    /// `notes.id`.
    pub note_id: i64,
    /// BM25 score (higher is better); 0 when it holds none of the query's words.
    pub bm25: f64,
    /// 1-based rank in the keyword list, when it made the list.
    pub bm25_rank: Option<u32>,
    /// Its semantic score (its best passage blended with the whole note, see
    /// [`super::semantic`]); `None` when it has no vector yet.
    pub cos: Option<f32>,
    /// 1-based rank in the semantic list, when it made the list.
    pub sem_rank: Option<u32>,
    /// Its best passage.
    pub chunk: Option<i64>,
    /// Exact evidence from the keyword side.
    pub exact: Exact,
}

/// For each of `query`'s terms (in order), which of `ids` hold it.
pub(crate) fn term_presence(
    reader: &Reader<'_>,
    query: &super::query::Query,
    ids: &[i64],
) -> Result<Vec<std::collections::HashSet<i64>>> {
    let mut out = Vec::new();
    for term in &query.terms {
        let single = super::query::Query {
            terms: vec![term.clone()],
            ..Default::default()
        };
        let found = match single.to_match() {
            Some(expr) => reader
                .fts_scores(&expr, WEIGHTS, ids)?
                .into_iter()
                .map(|(id, _)| id)
                .collect(),
            None => Default::default(),
        };
        out.push(found);
    }
    Ok(out)
}

/// The union of `bm25` (the keyword list) and `sem_top` (the semantic list), completed from
/// `scores` (every note's similarity) and `keyword` (every matching note's BM25).
pub(crate) fn gather(
    keyword: &KeywordScores,
    bm25: &[Bm25Hit],
    sem_top: &[SemHit],
    scores: &NoteScores<'_>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::with_capacity(bm25.len() + sem_top.len());
    let mut at: HashMap<i64, usize> = HashMap::new();
    for (i, h) in bm25.iter().enumerate() {
        let sem = scores.get(h.note_id);
        at.insert(h.note_id, out.len());
        out.push(Candidate {
            note_id: h.note_id,
            bm25: h.score,
            bm25_rank: Some(i as u32 + 1),
            cos: sem.map(|s| s.score),
            sem_rank: None,
            chunk: sem.map(|s| s.chunk_id),
            exact: h.exact,
        });
    }
    for (i, h) in sem_top.iter().enumerate() {
        match at.get(&h.note_id) {
            Some(&k) => out[k].sem_rank = Some(i as u32 + 1),
            None => {
                at.insert(h.note_id, out.len());
                out.push(Candidate {
                    note_id: h.note_id,
                    bm25: keyword.get(h.note_id).unwrap_or(0.0),
                    bm25_rank: None,
                    cos: Some(h.score),
                    sem_rank: Some(i as u32 + 1),
                    chunk: Some(h.chunk_id),
                    exact: Exact::None,
                });
            }
        }
    }
    out
}
