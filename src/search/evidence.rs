//! Per-query evidence the fusion weighs the two lists by: how rare the query's words are,
//! which of them the keyword list's best note actually contains, and how peaked each list's
//! scores are. Every figure here is shown by `--explain`.

use serde::{Deserialize, Serialize};

use super::query::Query;
use super::term_scores::TermScores;
use crate::error::Result;
use crate::index::Reader;

/// At most this many terms are examined (each costs two tiny FTS lookups).
const MAX_TERMS: usize = 16;

/// One query term's statistics. (Fields in alphabetical order: see [`super::Explain`].)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TermStat {
    /// Notes containing it.
    pub df: u64,
    /// BM25's inverse document frequency: `ln(1 + (N - df + 0.5) / (df + 0.5))`.
    pub idf: f64,
    /// Whether the keyword list's best note contains it.
    pub in_top: bool,
    /// The term as typed, without the punctuation around it (see [`super::query::Term::label`]).
    pub term: String,
}

/// What is known about a query before fusing. (Fields in alphabetical order: see
/// [`super::Explain`].)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// How many notes the keyword list holds (at most the pool searched).
    #[serde(default)]
    pub bm25_hits: usize,
    /// Top keyword score over the second (>= 1; 1 when there are fewer than 2 hits): how
    /// far the best keyword match leads the next one.
    #[serde(default)]
    pub bm25_lead: f64,
    /// Top keyword score over the 10th (>= 1; 1 when there are fewer than 2 hits): how much
    /// the best keyword match stands out.
    pub bm25_peak: f64,
    /// Share of the query's IDF mass found in the keyword list's best note (0..1).
    pub coverage: f64,
    /// Top semantic similarity minus the 10th: how much the best passage stands out.
    pub sem_gap: f64,
    /// Statistics of the positive terms.
    pub terms: Vec<TermStat>,
}

/// Term statistics against the index, with `top` the keyword list's best note; read from
/// `remembered` term lists when given (the same counts).
pub(crate) fn term_stats(
    reader: &Reader<'_>,
    query: &Query,
    top: Option<i64>,
    total_notes: u64,
    remembered: Option<&TermScores>,
) -> Result<Vec<TermStat>> {
    let mut out = Vec::new();
    let n = total_notes as f64;
    for term in query.terms.iter().take(MAX_TERMS) {
        let single = Query {
            terms: vec![term.clone()],
            ..Default::default()
        };
        let Some(expr) = single.to_match() else {
            continue;
        };
        let (df, in_top) = match remembered.filter(|_| super::term_scores::covers(query)) {
            Some(r) => {
                let list = r.single(reader, term)?;
                let has = |id| super::term_scores::score_of(&list, id).is_some();
                (list.len() as u64, top.is_some_and(has))
            }
            None => (
                reader.fts_count(&expr)?,
                match top {
                    Some(id) => reader.fts_has(&expr, id)?,
                    None => false,
                },
            ),
        };
        let idf = (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        out.push(TermStat {
            df,
            idf,
            in_top,
            term: term.label(),
        });
    }
    Ok(out)
}

/// Share of IDF mass present in the best keyword hit.
pub fn coverage(terms: &[TermStat]) -> f64 {
    let total: f64 = terms.iter().map(|t| t.idf).sum();
    if total <= 0.0 {
        return 0.0;
    }
    // `+ 0.0`: an empty float sum is -0.0, which `--explain` printed as "-0.00".
    terms
        .iter()
        .filter(|t| t.in_top)
        .map(|t| t.idf)
        .sum::<f64>()
        / total
        + 0.0
}

/// `scores[0] / scores[9]` (or the last), for scores best first.
pub fn peak(scores: &[f64]) -> f64 {
    match (scores.first(), scores.get(9).or(scores.last())) {
        (Some(&top), Some(&tenth)) if scores.len() > 1 && tenth > 0.0 => top / tenth,
        _ => 1.0,
    }
}

/// `scores[0] / scores[1]`, for scores best first (1 with fewer than two).
pub fn lead(scores: &[f64]) -> f64 {
    match scores {
        [top, second, ..] if *second > 0.0 => top / second,
        _ => 1.0,
    }
}

/// `scores[0] - scores[9]` (or the last), for scores best first.
pub fn gap(scores: &[f32]) -> f64 {
    match (scores.first(), scores.get(9).or(scores.last())) {
        (Some(&top), Some(&tenth)) => (top - tenth) as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(idf: f64, in_top: bool) -> TermStat {
        TermStat {
            term: "x".into(),
            df: 1,
            idf,
            in_top,
        }
    }

    #[test]
    fn coverage_weights_rare_terms() {
        assert_eq!(coverage(&[]), 0.0);
        let none = coverage(&[t(2.0, false)]);
        assert!(none == 0.0 && none.is_sign_positive(), "{none}");
        assert!((coverage(&[t(3.0, true), t(1.0, false)]) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn peak_and_gap() {
        assert_eq!(peak(&[5.0]), 1.0);
        assert_eq!(peak(&[6.0, 3.0]), 2.0);
        assert_eq!(lead(&[9.0]), 1.0);
        assert_eq!(lead(&[9.0, 3.0, 1.0]), 3.0);
        assert_eq!(lead(&[9.0, 0.0]), 1.0);
        assert!((gap(&[0.9, 0.5]) - 0.4).abs() < 1e-6);
    }
}
