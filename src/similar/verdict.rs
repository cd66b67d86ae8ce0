//! From evidence to a verdict: one score per pair, then two thresholds, per mode.
//!
//! With a model: `score = 0.6 * draft_covered' + 0.2 * note_covered' + 0.2 * rare_shared`,
//! the primed alignments rescaled from [`FLOOR`] (unrelated passages rarely align below it)
//! to 1. Title likeness is shown but not weighed: on the development drafts it added
//! nothing the passages did not already say. Without a model: `0.5 * rare_shared + 0.5 *
//! title`, with thresholds that call a pair a duplicate only on strong evidence.
//! Calibrated on the tune half of `eval/drafts/` (figures in `eval/drafts/README.md`).

use serde::{Deserialize, Serialize};

use super::evidence::PairEvidence;
use super::Verdict;

/// Where the verdicts change, for one mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Score at and above which a pair is a duplicate.
    pub duplicate: f64,
    /// Score at and above which a pair is related.
    pub related: f64,
}

/// With a model.
pub const SEMANTIC: Thresholds = Thresholds {
    duplicate: 0.44,
    related: 0.29,
};

/// Without one (rare words and titles).
pub const KEYWORDS: Thresholds = Thresholds {
    duplicate: 0.35,
    related: 0.15,
};

/// Cosine treated as "nothing in common" when rescaling alignments.
pub const FLOOR: f64 = 0.2;

fn rescale(cos: f64) -> f64 {
    ((cos - FLOOR) / (1.0 - FLOOR)).clamp(0.0, 1.0)
}

/// How alike a pair is, 0..1, and the thresholds that apply to it.
pub(crate) fn score(e: &PairEvidence) -> (f64, Thresholds) {
    match (e.draft_covered, e.note_covered) {
        (Some(d), Some(n)) => (
            0.6 * rescale(d) + 0.2 * rescale(n) + 0.2 * e.rare_shared,
            SEMANTIC,
        ),
        _ => (0.5 * e.rare_shared + 0.5 * e.title, KEYWORDS),
    }
}

/// The verdict for a pair of this score.
pub(crate) fn judge((score, t): (f64, Thresholds)) -> Verdict {
    if score >= t.duplicate {
        Verdict::Duplicate
    } else if score >= t.related {
        Verdict::Related
    } else {
        Verdict::New
    }
}

/// One line a person can check.
pub(crate) fn reason(e: &PairEvidence) -> String {
    let mut parts = Vec::new();
    if let (Some(d), Some(n)) = (e.draft_covered, e.note_covered) {
        parts.push(format!(
            "passages align {d:.2} (draft in note) and {n:.2} (note in draft)"
        ));
    }
    if e.shared.is_empty() {
        parts.push("no rare word in common".into());
    } else {
        let words: Vec<&str> = e.shared.iter().take(5).map(String::as_str).collect();
        parts.push(format!(
            "shares {} ({:.0}% of the draft's rare words)",
            words.join(", "),
            e.rare_shared * 100.0
        ));
    }
    if e.title >= 0.5 {
        parts.push(format!("titles {:.0}% alike", e.title * 100.0));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(d: f64, n: f64, rare: f64, title: f64) -> PairEvidence {
        PairEvidence {
            best: Some(d),
            draft_covered: Some(d),
            note_covered: Some(n),
            rare_shared: rare,
            shared: vec!["lease".into()],
            title,
        }
    }

    #[test]
    fn the_thresholds_order_the_verdicts() {
        assert_eq!(judge(score(&ev(0.95, 0.9, 1.0, 1.0))), Verdict::Duplicate);
        assert_eq!(judge(score(&ev(0.1, 0.1, 0.0, 0.0))), Verdict::New);
        assert_eq!(judge((0.3, SEMANTIC)), Verdict::Related);
        assert_eq!(judge((SEMANTIC.duplicate, SEMANTIC)), Verdict::Duplicate);
        let keywords = PairEvidence {
            best: None,
            draft_covered: None,
            note_covered: None,
            ..ev(0.0, 0.0, 1.0, 1.0)
        };
        assert_eq!(score(&keywords), (1.0, KEYWORDS));
        assert!(reason(&ev(0.9, 0.8, 0.5, 1.0)).contains("lease"));
    }
}
