//! What `brain eval` reports: per set, per query class and per mode, recall@1, recall@5,
//! MRR@10 and nDCG@10, and per query whether hybrid ranked the first relevant note better
//! or worse than each other mode (averages hide losses).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::metrics;
use super::sets::{EvalQuery, Half};
use crate::search::Mode;

/// A ranking evaluated: the three modes, and plain Reciprocal Rank Fusion (k = 60) over
/// the same two lists as the baseline a fusion has to beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvalMode {
    /// Keywords only.
    Bm25,
    /// Meaning only.
    Semantic,
    /// The default fusion.
    Hybrid,
    /// Plain RRF over the same candidate lists.
    Rrf,
}

impl EvalMode {
    /// Every mode, in table order.
    pub const ALL: [EvalMode; 4] = [
        EvalMode::Bm25,
        EvalMode::Semantic,
        EvalMode::Rrf,
        EvalMode::Hybrid,
    ];

    /// The search mode that produces it.
    pub fn mode(self) -> Mode {
        match self {
            EvalMode::Bm25 => Mode::Bm25,
            EvalMode::Semantic => Mode::Semantic,
            EvalMode::Hybrid | EvalMode::Rrf => Mode::Hybrid,
        }
    }

    /// Its name in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            EvalMode::Bm25 => "bm25",
            EvalMode::Semantic => "semantic",
            EvalMode::Hybrid => "hybrid",
            EvalMode::Rrf => "rrf",
        }
    }
}

/// Scores of one mode over some queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeScore {
    /// The mode.
    pub mode: EvalMode,
    /// Share of queries with a relevant note first.
    pub recall_at_1: f64,
    /// Share of queries with a relevant note in the top 5.
    pub recall_at_5: f64,
    /// Mean reciprocal rank of the first relevant note in the top 10.
    pub mrr_at_10: f64,
    /// Mean nDCG over the top 10.
    pub ndcg_at_10: f64,
    /// Queries with a relevant note first.
    pub hits_at_1: usize,
    /// Queries with a relevant note in the top 5.
    pub hits_at_5: usize,
    /// Notes in the top 5 of these queries that nobody judged (pooled judging should
    /// keep this at 0: an unjudged note counts as not relevant).
    pub unjudged_at_5: usize,
    /// Median in-process query time in milliseconds.
    pub median_ms: f64,
}

/// Hybrid against another mode, query by query (rank of the first relevant note in the
/// top 10; not found counts as worst).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versus {
    /// The other mode.
    pub against: EvalMode,
    /// Queries hybrid ranks better.
    pub better: usize,
    /// Queries hybrid ranks worse.
    pub worse: usize,
    /// Queries ranked the same.
    pub same: usize,
}

/// One class of queries in a set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassReport {
    /// `paraphrase`, `names`, `words`, `questions`.
    pub class: String,
    /// Queries in it.
    pub queries: usize,
    /// One row per mode.
    pub modes: Vec<ModeScore>,
    /// Hybrid against each other mode.
    pub versus: Vec<Versus>,
}

/// Where one query's first relevant note landed, per mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDetail {
    /// The query.
    pub query: String,
    /// Its class.
    pub class: String,
    /// Its half.
    pub half: Half,
    /// Rank (1-based) of the first relevant note per mode; `None` if not in the top 10.
    pub first_relevant: Vec<(EvalMode, Option<usize>)>,
}

/// Results on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetReport {
    /// Set name.
    pub name: String,
    /// Queries run.
    pub queries: usize,
    /// Notes in the evaluated brain.
    pub notes: u64,
    /// One row per mode over all its queries.
    pub modes: Vec<ModeScore>,
    /// Hybrid against each other mode over all its queries.
    pub versus: Vec<Versus>,
    /// The same per class.
    pub classes: Vec<ClassReport>,
    /// Per-query ranks (with `--details`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<QueryDetail>,
    /// How often the semantic list (int8 scan and exact re-rank) equals an exact f32 scan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorCheck>,
}

/// The int8 matrix measured against an exact f32 scan of the same vectors.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorCheck {
    /// Queries compared.
    pub queries: usize,
    /// Queries whose top 10 notes are the same notes in the same order.
    pub same_top10: usize,
    /// Queries whose top 10 holds the same notes, in any order.
    pub same_set10: usize,
    /// The queries whose top 10 differs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differ: Vec<String>,
}

/// What one query got from one mode.
#[derive(Debug, Clone)]
pub(crate) struct Ranking {
    /// The result paths, best first.
    pub paths: Vec<String>,
    /// In-process time in milliseconds.
    pub ms: f64,
}

/// The rankings of one query in every mode evaluated.
pub(crate) type QueryRuns = BTreeMap<EvalMode, Ranking>;

/// 1-based rank of the first relevant note in the top 10.
pub(crate) fn first_relevant(q: &EvalQuery, paths: &[String]) -> Option<usize> {
    paths
        .iter()
        .take(10)
        .position(|p| q.relevant.contains(p))
        .map(|p| p + 1)
}

/// Scores of `mode` over `runs` (the queries and what each mode ranked for them).
pub(crate) fn score(mode: EvalMode, runs: &[(&EvalQuery, &QueryRuns)]) -> Option<ModeScore> {
    let mut s = ModeScore {
        mode,
        recall_at_1: 0.0,
        recall_at_5: 0.0,
        mrr_at_10: 0.0,
        ndcg_at_10: 0.0,
        hits_at_1: 0,
        hits_at_5: 0,
        unjudged_at_5: 0,
        median_ms: 0.0,
    };
    let mut times = Vec::new();
    for (q, by_mode) in runs {
        let r = by_mode.get(&mode)?;
        let first = first_relevant(q, &r.paths);
        s.hits_at_1 += usize::from(first == Some(1));
        s.hits_at_5 += usize::from(first.is_some_and(|f| f <= 5));
        s.mrr_at_10 += first.map_or(0.0, |f| 1.0 / f as f64);
        s.ndcg_at_10 += metrics::ndcg_at(&r.paths, &q.relevant, 10);
        s.unjudged_at_5 += r.paths.iter().take(5).filter(|p| !q.is_judged(p)).count();
        times.push(r.ms);
    }
    let n = runs.len().max(1) as f64;
    s.recall_at_1 = s.hits_at_1 as f64 / n;
    s.recall_at_5 = s.hits_at_5 as f64 / n;
    s.mrr_at_10 /= n;
    s.ndcg_at_10 /= n;
    times.sort_by(f64::total_cmp);
    s.median_ms = times.get(times.len() / 2).copied().unwrap_or(0.0);
    Some(s)
}

/// Hybrid against every other mode over `runs`.
pub(crate) fn versus(runs: &[(&EvalQuery, &QueryRuns)]) -> Vec<Versus> {
    let rank = |q: &EvalQuery, r: Option<&Ranking>| {
        r.map(|r| first_relevant(q, &r.paths).unwrap_or(usize::MAX))
    };
    EvalMode::ALL
        .into_iter()
        .filter(|&m| m != EvalMode::Hybrid)
        .filter_map(|other| {
            let mut v = Versus {
                against: other,
                better: 0,
                worse: 0,
                same: 0,
            };
            for (q, by_mode) in runs {
                let h = rank(q, by_mode.get(&EvalMode::Hybrid))?;
                let o = rank(q, by_mode.get(&other))?;
                match h.cmp(&o) {
                    std::cmp::Ordering::Less => v.better += 1,
                    std::cmp::Ordering::Greater => v.worse += 1,
                    std::cmp::Ordering::Equal => v.same += 1,
                }
            }
            Some(v)
        })
        .collect()
}

/// Every mode's scores over `runs`, in table order.
pub(crate) fn scores(runs: &[(&EvalQuery, &QueryRuns)]) -> Vec<ModeScore> {
    EvalMode::ALL
        .into_iter()
        .filter_map(|m| score(m, runs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn query(relevant: &[&str], judged: &[&str]) -> EvalQuery {
        EvalQuery {
            text: "q".into(),
            class: "names".into(),
            relevant: relevant.iter().map(|s| s.to_string()).collect(),
            judged: judged.iter().map(|s| s.to_string()).collect::<HashSet<_>>(),
            half: Half::Test,
        }
    }

    fn runs(by: &[(EvalMode, &[&str])]) -> QueryRuns {
        by.iter()
            .map(|(m, paths)| {
                (
                    *m,
                    Ranking {
                        paths: paths.iter().map(|s| s.to_string()).collect(),
                        ms: 1.0,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn scores_count_hits_ranks_and_unjudged_notes() {
        let q = query(&["a"], &["b"]);
        let r = runs(&[(EvalMode::Hybrid, &["b", "a", "c"])]);
        let s = score(EvalMode::Hybrid, &[(&q, &r)]).unwrap();
        assert_eq!((s.hits_at_1, s.hits_at_5), (0, 1));
        assert!((s.mrr_at_10 - 0.5).abs() < 1e-12);
        assert_eq!(s.unjudged_at_5, 1, "c was never judged");
        assert!(score(EvalMode::Rrf, &[(&q, &r)]).is_none(), "no rrf run");
    }

    #[test]
    fn versus_counts_per_query_wins_and_losses() {
        let q1 = query(&["a"], &[]);
        let q2 = query(&["z"], &[]);
        let r1 = runs(&[(EvalMode::Hybrid, &["a"]), (EvalMode::Bm25, &["x", "a"])]);
        let r2 = runs(&[(EvalMode::Hybrid, &["x"]), (EvalMode::Bm25, &["z"])]);
        let v = versus(&[(&q1, &r1), (&q2, &r2)]);
        assert_eq!(v.len(), 1, "only modes that ran are compared");
        assert_eq!(
            (v[0].against, v[0].better, v[0].worse, v[0].same),
            (EvalMode::Bm25, 1, 1, 0)
        );
    }
}
