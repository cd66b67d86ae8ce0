//! `--explain`: every number that decided an order, as one typed value that the CLI
//! printer, the socket and the app share (`"explain"` in `--json`).
//!
//! Fields are declared in alphabetical order, so the JSON keys come out in the order they
//! had when this was an untyped map: scripts that diff explain output see no change.

use serde::{Deserialize, Serialize};

use super::bm25::{Bm25Hit, Exact};
use super::evidence::Evidence;
use super::fuse::{Fused, Scale, Weights, K};
use super::semantic::SemHit;
use super::Mode;
use crate::error::Result;
use crate::index::Reader;

/// The ranking stages of one search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explain {
    /// The keyword list, best first.
    pub bm25: Vec<KeywordEntry>,
    /// The query's excluded terms (`-legacy`, `-"old code"`) as `--explain` names them: no
    /// mode returns a note that holds one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<String>,
    /// What the fusion weighed (hybrid only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// The fused list (hybrid only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused: Option<Vec<FusedEntry>>,
    /// How many of the fused rows were ranked over the lists' first 50, when more were
    /// asked for: the rows after them were ranked over the deeper lists, on a scale of
    /// their own (so a fused score may rise past that row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_head: Option<u32>,
    /// The RRF constant of the baseline (hybrid only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<f64>,
    /// The mode that ranked.
    pub mode: Mode,
    /// The semantic list, best first.
    pub semantic: Vec<SemanticEntry>,
    /// How much each list counted (hybrid only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Weights>,
    /// What each list's score was divided by for the first results (hybrid only), so that
    /// every part of a fused score can be recomputed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
}

/// One row of the keyword list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeywordEntry {
    /// Exact evidence found for it.
    pub exact: Exact,
    /// The note.
    pub path: String,
    /// 1-based.
    pub rank: u32,
    /// BM25 score.
    pub score: f64,
}

/// One row of the semantic list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticEntry {
    /// The note.
    pub path: String,
    /// 1-based.
    pub rank: u32,
    /// Its semantic score: its best passage's cosine similarity blended with the whole
    /// note's (see [`super::semantic`]).
    pub score: f64,
    /// Its best passage's cosine similarity (absent from an older backend's answer).
    #[serde(default)]
    pub passage: f64,
    /// The whole note's cosine similarity (with the mean of its passage vectors).
    #[serde(default)]
    pub whole: f64,
}

/// One row of the fused list, with the parts of its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FusedEntry {
    /// The keyword list's part of the score.
    pub bm25_part: f64,
    /// Its rank in the keyword list.
    pub bm25_rank: Option<u32>,
    /// Exact evidence from the keyword side.
    pub exact: Exact,
    /// What holding every literal of the query added.
    #[serde(default)]
    pub exact_part: f64,
    /// The note.
    pub path: String,
    /// 1-based.
    pub rank: u32,
    /// The plain-RRF baseline's score.
    pub rrf: f64,
    /// The fused score.
    pub score: f64,
    /// The semantic list's part of the score.
    pub sem_part: f64,
    /// Its rank in the semantic list.
    pub sem_rank: Option<u32>,
}

/// What the hybrid fusion computed, kept for [`Explain`].
pub(crate) struct FusionStages {
    pub evidence: Evidence,
    pub weights: Weights,
    pub fused: Vec<Fused>,
    /// How many of `fused` were ranked over the head of the lists.
    pub head: usize,
    /// The head's scale.
    pub scale: Scale,
}

/// Rows shown per list: at least 10, more when more results were asked for.
fn shown(top: usize) -> usize {
    top.max(10)
}

/// The explanation of a search that ranked with `mode` from these lists.
pub(crate) fn build(
    reader: &Reader<'_>,
    mode: Mode,
    bm25: &[Bm25Hit],
    sem: &[SemHit],
    fusion: Option<FusionStages>,
    top: usize,
) -> Result<Explain> {
    let show = shown(top);
    let rank = |i: usize| i as u32 + 1;
    let mut keyword = Vec::new();
    for (i, h) in bm25.iter().take(show).enumerate() {
        keyword.push(KeywordEntry {
            exact: h.exact,
            path: reader.path_of(h.note_id)?,
            rank: rank(i),
            score: h.score,
        });
    }
    let mut semantic = Vec::new();
    for (i, h) in sem.iter().take(show).enumerate() {
        semantic.push(SemanticEntry {
            path: reader.path_of(h.note_id)?,
            rank: rank(i),
            score: f64::from(h.score),
            passage: f64::from(h.passage),
            whole: f64::from(h.whole),
        });
    }
    let mut explain = Explain {
        bm25: keyword,
        excluded: Vec::new(),
        evidence: None,
        fused: None,
        fused_head: None,
        k: None,
        mode,
        semantic,
        weights: None,
        scale: None,
    };
    if let Some(FusionStages {
        evidence,
        weights,
        fused,
        head,
        scale,
    }) = fusion
    {
        explain.scale = Some(scale);
        explain.fused_head = (head < fused.len()).then_some(head as u32);
        let mut rows = Vec::new();
        for (i, f) in fused.iter().take(show).enumerate() {
            rows.push(FusedEntry {
                bm25_part: f.bm25_part,
                bm25_rank: f.bm25_rank,
                exact: f.exact,
                exact_part: f.exact_part,
                path: reader.path_of(f.note_id)?,
                rank: rank(i),
                rrf: f.rrf,
                score: f.score,
                sem_part: f.sem_part,
                sem_rank: f.sem_rank,
            });
        }
        explain.evidence = Some(evidence);
        explain.weights = Some(weights);
        explain.fused = Some(rows);
        explain.k = Some(K);
    }
    Ok(explain)
}
