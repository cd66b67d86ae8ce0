//! What two texts share, measured from both sides: passage alignment (how much of the draft
//! the note covers, and how much of the note the draft covers), rare words, title words.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::terms::RareTerm;
use crate::search::{is_stopword, Matrix};

/// The numbers behind one verdict (`--explain`). Fields in alphabetical order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairEvidence {
    /// Cosine of the best-aligned pair of passages; `None` without a model.
    pub best: Option<f64>,
    /// For each passage of the draft its best cosine against the note's passages, averaged
    /// (weighted by length): how much of the draft the note already says.
    pub draft_covered: Option<f64>,
    /// The same from the note's side: how much of the note the draft says again.
    pub note_covered: Option<f64>,
    /// Share of the IDF mass of the draft's rare words that the note holds.
    pub rare_shared: f64,
    /// Those shared rare words.
    pub shared: Vec<String>,
    /// Title likeness: shared title words over all title words (Jaccard, 0..1).
    pub title: f64,
    /// Word overlap, 0..1: the geometric mean of the share of the draft's words (weighted
    /// by rarity) the note holds and the share of the note's words the draft holds.
    #[serde(default)]
    pub words: f64,
    /// Two notes of the brain: the score with each as the draft (the note asked about
    /// first; passages weighed alike, as `--all` weighs them). Their mean is the pair's
    /// score, and what its verdict is judged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub both_ways: Option<[f64; 2]>,
    /// What the likeness gained for leading the other candidates (0..=0.1, see
    /// `verdict::with_lead`): with it, the likeness is recomputed from these numbers.
    #[serde(default)]
    pub lead: f64,
}

/// Per note, the alignment of its passages with the draft's, from one scan per draft
/// passage.
#[derive(Debug, Default, Clone)]
pub(crate) struct Alignment {
    /// For each draft passage, its best cosine against this note.
    pub per_draft: Vec<f32>,
    /// Sum over this note's passages of their best cosine against the draft.
    pub note_sum: f64,
    /// This note's passages.
    pub note_rows: u32,
    /// The best pair's cosine and the note's passage in it.
    pub best: f32,
    /// See `best`.
    pub best_chunk: i64,
}

impl Alignment {
    /// Weighted mean of `per_draft` with the draft passages' `weights`.
    pub fn draft_covered(&self, weights: &[f64]) -> f64 {
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return 0.0;
        }
        self.per_draft
            .iter()
            .zip(weights)
            .map(|(s, w)| f64::from(*s) * w)
            .sum::<f64>()
            / total
    }

    /// Mean over the note's passages of their best cosine against the draft.
    pub fn note_covered(&self) -> f64 {
        match self.note_rows {
            0 => 0.0,
            n => self.note_sum / f64::from(n),
        }
    }
}

impl Alignment {
    /// Nothing aligned yet, against `draft_passages` passages.
    fn empty(draft_passages: usize) -> Alignment {
        Alignment {
            per_draft: vec![f32::NEG_INFINITY; draft_passages],
            best: f32::NEG_INFINITY,
            ..Default::default()
        }
    }

    /// Adds one passage of the note (`chunk`), given its cosine with each draft passage.
    fn add(&mut self, chunk: i64, scores: impl Iterator<Item = f32>) {
        let mut row_best = f32::NEG_INFINITY;
        for (best, s) in self.per_draft.iter_mut().zip(scores) {
            *best = best.max(s);
            row_best = row_best.max(s);
        }
        self.note_sum += f64::from(row_best);
        self.note_rows += 1;
        if row_best > self.best {
            self.best = row_best;
            self.best_chunk = chunk;
        }
    }
}

/// Aligns every note of `matrix` with the draft passages `draft`, skipping `exclude`.
pub(crate) fn align(
    matrix: &Matrix,
    draft: &[Vec<f32>],
    exclude: Option<i64>,
) -> HashMap<i64, Alignment> {
    let scores: Vec<Vec<f32>> = draft.iter().map(|v| matrix.scores(v)).collect();
    let mut out: HashMap<i64, Alignment> = HashMap::new();
    for (row, &note) in matrix.note_ids().iter().enumerate() {
        if Some(note) == exclude {
            continue;
        }
        out.entry(note)
            .or_insert_with(|| Alignment::empty(draft.len()))
            .add(matrix.chunk_ids()[row], scores.iter().map(|s| s[row]));
    }
    out
}

/// Aligns two notes' passages (rows of the same matrix) both ways, from one pass over
/// their pairs: `a` playing the draft, then `b`.
pub(crate) fn align_both(matrix: &Matrix, a: &[usize], b: &[usize]) -> (Alignment, Alignment) {
    let dots: Vec<f32> = b
        .iter()
        .flat_map(|&rb| a.iter().map(move |&ra| matrix.row_dot(ra, rb)))
        .collect();
    let mut ab = Alignment::empty(a.len());
    for (j, &rb) in b.iter().enumerate() {
        ab.add(
            matrix.chunk_ids()[rb],
            dots[j * a.len()..(j + 1) * a.len()].iter().copied(),
        );
    }
    let mut ba = Alignment::empty(b.len());
    for (i, &ra) in a.iter().enumerate() {
        ba.add(
            matrix.chunk_ids()[ra],
            (0..b.len()).map(|j| dots[j * a.len() + i]),
        );
    }
    (ab, ba)
}

/// The IDF share of `terms` found at the indexes `held`, and those words.
pub(crate) fn rare_share(terms: &[RareTerm], held: &[usize]) -> (f64, Vec<String>) {
    let total: f64 = terms.iter().map(|t| t.idf).sum();
    if total <= 0.0 {
        return (0.0, Vec::new());
    }
    let mut held: Vec<usize> = held.to_vec();
    held.sort_unstable();
    held.dedup();
    let share = (held.iter().map(|&k| terms[k].idf).sum::<f64>() / total).max(0.0);
    (share, held.iter().map(|&k| terms[k].word.clone()).collect())
}

/// Jaccard likeness of two titles' words (lowercase, stopwords and 1-letter words dropped),
/// or 0 when both hold numbers and not the same ones: "Standup 2026-12-03" and "Standup
/// 2026-12-04", "Q3 review" and "Q4 review" are entries of a series, not one title twice.
pub(crate) fn title_likeness(a: &str, b: &str) -> f64 {
    let numbers = |s: &str| -> HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(str::to_lowercase)
            .collect()
    };
    let (na, nb) = (numbers(a), numbers(b));
    if !na.is_empty() && !nb.is_empty() && na != nb {
        return 0.0;
    }
    let set = |s: &str| -> HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 1)
            .map(|w| w.to_lowercase())
            .filter(|w| !is_stopword(w))
            .map(|w| singular(&w))
            .collect()
    };
    let (a, b) = (set(a), set(b));
    let union = a.union(&b).count();
    match union {
        0 => 0.0,
        n => a.intersection(&b).count() as f64 / n as f64,
    }
}

/// `retries` -> `retry`, `tags` -> `tag`: enough for titles to meet.
fn singular(w: &str) -> String {
    if let Some(stem) = w.strip_suffix("ies").filter(|s| s.len() > 1) {
        return format!("{stem}y");
    }
    match w.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') && stem.len() > 1 => stem.to_string(),
        _ => w.to_string(),
    }
}

/// The evidence for one pair.
pub(crate) fn pair_evidence(
    rare: &[RareTerm],
    held: Option<&[usize]>,
    aligned: Option<&Alignment>,
    weights: &[f64],
    (draft_title, note_title): (&str, &str),
    words: f64,
) -> PairEvidence {
    let (rare_shared, shared) = rare_share(rare, held.unwrap_or_default());
    let round = |x: f64| (x * 1e4).round() / 1e4;
    PairEvidence {
        best: aligned.map(|a| round(f64::from(a.best))),
        draft_covered: aligned.map(|a| round(a.draft_covered(weights))),
        note_covered: aligned.map(|a| round(a.note_covered())),
        rare_shared: round(rare_shared),
        shared,
        title: round(title_likeness(draft_title, note_title)),
        words: round(words),
        both_ways: None,
        lead: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_alike_by_their_words() {
        assert_eq!(
            title_likeness("Retries need jitter", "retry needs jitter!"),
            1.0
        );
        assert!(
            (title_likeness("Delete remote git tags", "Delete a git branch") - 0.4).abs() < 1e-9
        );
        assert_eq!(title_likeness("", ""), 0.0);
        // Entries of a series differ by their numbers.
        assert_eq!(
            title_likeness("Standup 2026-12-03", "Standup 2026-12-04"),
            0.0
        );
        assert_eq!(
            title_likeness("Q3 planning review", "Q4 planning review"),
            0.0
        );
        assert_eq!(title_likeness("Race number 1", "Race number 2"), 0.0);
        assert_eq!(
            title_likeness("Upgrade to Postgres 16", "upgrade postgres 16"),
            1.0
        );
        assert!(title_likeness("Python 3 tips", "Python tips") > 0.5);
    }

    #[test]
    fn alignment_from_both_sides() {
        let mut m = Matrix::new(2);
        m.push(1, 10, &[1.0, 0.0]);
        m.push(2, 10, &[0.0, 1.0]);
        m.push(3, 20, &[1.0, 0.0]);
        // The draft says only the first passage of note 10, all of note 20.
        let a = align(&m, &[vec![1.0, 0.0]], None);
        assert_eq!(a[&10].draft_covered(&[1.0]), 1.0);
        assert_eq!(a[&10].note_covered(), 0.5);
        assert_eq!(a[&20].note_covered(), 1.0);
        assert_eq!(a[&10].best_chunk, 1);
        assert!(!align(&m, &[vec![1.0, 0.0]], Some(20)).contains_key(&20));
        let (r, back) = align_both(&m, &[0, 1], &[2]);
        assert_eq!(r.draft_covered(&[1.0, 1.0]), 0.5);
        assert_eq!(r.note_covered(), 1.0);
        // The other way round: the same pairs, the sides swapped.
        assert_eq!(back.draft_covered(&[1.0]), 1.0);
        assert_eq!(back.note_covered(), 0.5);
        assert_eq!((back.best, back.best_chunk), (r.best, 1));
    }

    #[test]
    fn rare_share_weighs_by_idf() {
        let t = |w: &str, idf| RareTerm {
            word: w.into(),
            expr: w.into(),
            idf,
        };
        let terms = [t("lease", 3.0), t("rebase", 1.0)];
        assert_eq!(
            rare_share(&terms, &[0, 0]),
            (0.75, vec!["lease".to_string()])
        );
        assert_eq!(rare_share(&[], &[]).0, 0.0);
    }
}
