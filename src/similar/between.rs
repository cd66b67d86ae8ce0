//! Two notes of the brain scored both ways, as `brain similar --all` merges them: each
//! note plays the draft in turn (its passages weighed alike, its own rare words), and the
//! pair's score is the mean. `brain similar NOTE` judges its candidates by the same number,
//! so that `similar a.md` calls `b.md` a duplicate exactly when `similar b.md` calls `a.md`
//! one, and `--all` lists the pair.
//!
//! The other side's rare words are what cost: every word of each candidate counted in the
//! full-text index (about 1,500 words for the 40 candidates of a note, ~10 µs each). So the
//! counts, the notes holding each rare word and each note's rare words are kept between
//! requests ([`Remembered`]) until a note changes: the warm backend answers the panel's
//! related notes, note after note, mostly from memory.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use super::evidence::{self, PairEvidence};
use super::terms::{self, RareTerm};
use super::verdict;
use crate::error::Result;
use crate::index::{NotesVersion, Reader};
use crate::search::Matrix;

/// A pair of notes scored from both sides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TwoWay {
    /// The score with the first note as the draft, then with the second.
    pub each: [f64; 2],
    /// Their mean to four decimals, as shown: what `--all` joins at
    /// [`super::verdict::CLUSTER_AT`], and the score `brain similar NOTE` shows.
    pub score: f64,
    /// The best-aligned pair of passages' cosine: `--all` only looks at pairs of notes
    /// with a passage pair at [`super::verdict::PAIR_MIN`] or more.
    pub best: f64,
    /// The reason line from the first note's side ("first" and "second").
    pub reason: String,
    /// The evidence from the first note's side: what `each[0]` is the score of.
    pub evidence: PairEvidence,
}

/// Entries remembered at most, words, notes and the note ids of each rare word's holders
/// together (a brain's vocabulary is larger than what its similar requests read; past
/// this they start again).
const MAX_WORDS: usize = 200_000;

/// What scoring pairs reads from the index, at one notes version.
#[derive(Default)]
pub(crate) struct Words {
    version: NotesVersion,
    /// Each word's notes, counted up to the rare-word cap.
    counts: HashMap<String, u64>,
    /// The notes that hold each rare word (a few, by definition).
    holders: HashMap<String, Arc<HashSet<i64>>>,
    /// Each note's title and rare words.
    notes: HashMap<i64, Arc<(String, Vec<RareTerm>)>>,
}

impl Words {
    /// What it holds, in words and note ids.
    fn cost(&self) -> usize {
        let held: usize = self.holders.values().map(|h| h.len() + 1).sum();
        self.counts.len() + self.notes.len() + held
    }
}

/// [`Words`] kept between requests: one engine's.
#[derive(Default)]
pub(crate) struct Remembered(Mutex<Words>);

impl Remembered {
    /// What is remembered for the notes at `version` (nothing when they changed since),
    /// taken out: two requests at once each read on their own.
    fn take(&self, version: NotesVersion) -> Words {
        let held = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        match held.version == version {
            true => held,
            false => Words {
                version,
                ..Words::default()
            },
        }
    }

    /// Keeps `words` for the next request: merged with what another request of the same
    /// notes version kept meanwhile, else in its place; dropped past [`MAX_WORDS`].
    fn keep(&self, words: Words) {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if held.version == words.version {
            held.counts.extend(words.counts);
            held.holders.extend(words.holders);
            held.notes.extend(words.notes);
        } else {
            *held = words;
        }
        if held.cost() > MAX_WORDS {
            *held = Words::default();
        }
    }
}

/// Scores pairs of notes of one brain.
pub(crate) struct Pairs<'a> {
    reader: &'a Reader<'a>,
    matrix: &'a Matrix,
    total: u64,
    words: Words,
    remembered: &'a Remembered,
    /// Each note's passages: rows of `matrix`.
    rows: HashMap<i64, Vec<usize>>,
}

impl<'a> Pairs<'a> {
    /// A scorer over the notes of `reader` and their vectors in `matrix`, starting from what
    /// `remembered` holds.
    pub fn new(
        reader: &'a Reader<'a>,
        matrix: &'a Matrix,
        remembered: &'a Remembered,
    ) -> Result<Self> {
        Ok(Pairs {
            reader,
            matrix,
            total: reader.note_count()?,
            words: remembered.take(reader.notes_version()?),
            remembered,
            rows: HashMap::new(),
        })
    }

    /// Hands what was read back to be remembered.
    pub fn remember(self) {
        self.remembered.keep(self.words);
    }

    /// Notes `a` and `b` scored both ways; `None` when either has no vectors.
    pub fn score(&mut self, a: i64, b: i64) -> Result<Option<TwoWay>> {
        for id in [a, b] {
            if !self.rows.contains_key(&id) {
                self.rows.insert(id, self.matrix.rows_of_note(id));
            }
        }
        let (ra, rb) = (&self.rows[&a], &self.rows[&b]);
        if ra.is_empty() || rb.is_empty() {
            return Ok(None);
        }
        let (ab, ba) = evidence::align_both(self.matrix, ra, rb);
        let best = f64::from(ab.best);
        let (s_ab, evidence) = self.one_way(a, b, &ab)?;
        let (s_ba, _) = self.one_way(b, a, &ba)?;
        let reason = verdict::reason_between_notes(&evidence);
        let round = |x: f64| (x * 1e4).round() / 1e4;
        Ok(Some(TwoWay {
            each: [round(s_ab), round(s_ba)],
            score: round((s_ab + s_ba) / 2.0),
            best,
            reason,
            evidence,
        }))
    }

    /// Note `id`'s title and rare words.
    fn note(&mut self, id: i64) -> Result<Arc<(String, Vec<RareTerm>)>> {
        if let Some(n) = self.words.notes.get(&id) {
            return Ok(Arc::clone(n));
        }
        let (title, body) = self.reader.title_and_body(id)?;
        let text = format!("{title}\n{body}");
        let rare = terms::rare_terms(self.reader, &text, self.total, &mut self.words.counts)?;
        let n = Arc::new((title, rare));
        self.words.notes.insert(id, Arc::clone(&n));
        Ok(n)
    }

    /// The notes holding rare word `expr`.
    fn holders(&mut self, expr: &str) -> Result<Arc<HashSet<i64>>> {
        if let Some(h) = self.words.holders.get(expr) {
            return Ok(Arc::clone(h));
        }
        let h = Arc::new(self.reader.fts_ids(expr)?);
        self.words.holders.insert(expr.to_string(), Arc::clone(&h));
        Ok(h)
    }

    fn one_way(
        &mut self,
        from: i64,
        to: i64,
        al: &evidence::Alignment,
    ) -> Result<(f64, PairEvidence)> {
        let from_note = self.note(from)?;
        let to_note = self.note(to)?;
        let (title_from, rare) = &*from_note;
        let mut held = Vec::new();
        for (k, t) in rare.iter().enumerate() {
            if self.holders(&t.expr)?.contains(&to) {
                held.push(k);
            }
        }
        let weights = vec![1.0; al.per_draft.len()];
        // The pair is judged on its score, which does not read the word overlap (not
        // calibrated for two whole notes): not worth stemming every note of every pair.
        let ev = evidence::pair_evidence(
            rare,
            Some(&held),
            Some(al),
            &weights,
            (title_from, &to_note.0),
            0.0,
        );
        Ok((verdict::score(&ev).0, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(version: i64, word: &str) -> Words {
        Words {
            version: NotesVersion::at(version),
            counts: [(word.to_string(), 1)].into(),
            ..Words::default()
        }
    }

    #[test]
    fn what_is_remembered_holds_for_one_notes_version_and_merges_within_it() {
        let r = Remembered::default();
        r.keep(words(1, "lease"));
        // Two requests of one version, each keeping what it read.
        let (a, b) = (r.take(NotesVersion::at(1)), r.take(NotesVersion::at(1)));
        assert!(a.counts.contains_key("lease") && b.counts.is_empty());
        r.keep(a);
        r.keep(words(1, "jitter"));
        let both = r.take(NotesVersion::at(1));
        assert!(both.counts.contains_key("lease") && both.counts.contains_key("jitter"));
        r.keep(both);
        // A note changed: nothing of before is read.
        assert!(r.take(NotesVersion::at(2)).counts.is_empty());
    }
}
