//! The BM25 scores of single query terms, remembered by the warm backend between searches.
//!
//! FTS5 scores every note a query matches (`bm25()` per row, about a microsecond each), so
//! at 100k notes a query with a common word (`files` is in half of them) spends tens of
//! milliseconds there, and the panel pays it again on every keystroke for the words already
//! typed. The score of an OR query is the sum, phrase by phrase and in the query's order, of
//! what each phrase alone scores (FTS5's `bm25()` adds the phrases' terms one after the
//! other, a phrase a note lacks adding zero; the document frequencies, lengths and average
//! length are the whole index's either way). So each term's list of scores is remembered,
//! and a query is the merge of its terms' lists: the same numbers, bit for bit, with only
//! the new words scored by FTS5: side by side, one thread and read transaction each, so a
//! query's new words cost about the slowest of them rather than their sum; and, once the
//! backend has read the notes' lengths after a sync, from FTS5's frequencies and those
//! lengths rather than by `bm25()` (see `index::bm25_parts`), again the same bits.
//!
//! Every list is keyed by the index's notes version: any change to any note's text changes
//! every score (document frequencies, average length), and drops them all.

use std::sync::{Arc, Mutex};

use lru::LruCache;

use super::query::{Query, Term};
use crate::error::Result;
use crate::index::{DocLengths, Filters, NotesVersion, Reader};

/// Note ids with their BM25 score, in id order.
pub(crate) type Scores = Arc<[(i64, f64)]>;

/// The score of note `id` in `scores` (note ids with their score, in id order); `None`
/// when it is not there.
pub(crate) fn score_of(scores: &[(i64, f64)], id: i64) -> Option<f64> {
    scores
        .binary_search_by_key(&id, |&(n, _)| n)
        .ok()
        .map(|i| scores[i].1)
}

/// Scores remembered at most (16 bytes each: 16 MB), each list also charged
/// [`LIST_COST`] for its key and bookkeeping; the least recently used list goes first. At
/// 100k notes the most common words match 50k notes each, so this holds the words of a few
/// queries, and at most 128k lists of rare words.
pub const BUDGET: usize = 1 << 20;

/// What one list costs beyond its scores, in scores (its key, map entry and `Arc`: ~128
/// bytes), so that many short lists are bounded too.
const LIST_COST: usize = 8;

/// The most words a query may have to be answered from remembered lists: a pasted
/// paragraph of common words would hold tens of full lists at once, evict its own words
/// from the budget and never be answered from memory; FTS5 scores it in one pass instead.
pub const MAX_TERMS: usize = 8;

/// Whether remembered lists answer `query` (see [`MAX_TERMS`]).
pub(crate) fn covers(query: &Query) -> bool {
    query.terms.len() <= MAX_TERMS
}

/// Remembered single-term scores; shared by the searches of one engine.
pub(crate) struct TermScores {
    /// The BM25 column weights every list is scored with.
    weights: (f64, f64, f64),
    inner: Mutex<Remembered>,
    /// FTS5's note lengths at one notes version (see [`TermScores::prepare`]): with them a
    /// new word is scored about three times faster than by `bm25()`, to the same bits.
    lengths: Mutex<Option<(NotesVersion, Arc<DocLengths>)>>,
}

struct Remembered {
    /// The notes version the lists were scored at.
    version: NotesVersion,
    lists: LruCache<String, Scores>,
    /// What the lists cost, in scores (see [`LIST_COST`]).
    held: usize,
}

impl TermScores {
    /// Nothing remembered yet; lists will be scored with column `weights` (title, tags, body).
    pub fn new(weights: (f64, f64, f64)) -> TermScores {
        TermScores {
            weights,
            inner: Mutex::new(Remembered::new(NotesVersion::default())),
            lengths: Mutex::new(None),
        }
    }

    /// Reads FTS5's note lengths for the notes `reader` sees, unless held already: the
    /// backend calls it after each sync, off the query path (100k notes: ~15 ms), so that
    /// new words are scored from them. Until it is called for the current notes, words are
    /// scored by `bm25()` as before.
    pub fn prepare(&self, reader: &Reader<'_>) -> Result<()> {
        let version = reader.notes_version()?;
        if self.lengths_at(&version).is_some() {
            return Ok(());
        }
        let read = reader.doc_lengths()?;
        if read.is_none() {
            tracing::debug!("FTS5's lengths and totals disagree; words are scored by bm25()");
        }
        *self.lengths.lock().unwrap_or_else(|e| e.into_inner()) =
            read.map(|l| (version, Arc::new(l)));
        Ok(())
    }

    /// The note lengths read at `version`, if those are the ones held.
    fn lengths_at(&self, version: &NotesVersion) -> Option<Arc<DocLengths>> {
        let held = self.lengths.lock().unwrap_or_else(|e| e.into_inner());
        held.as_ref()
            .filter(|(v, _)| v == version)
            .map(|(_, l)| l.clone())
    }

    /// Every note the one-phrase `key` matches, with its score, in `reader`'s transaction
    /// (at notes `version`): from the note lengths when they are of that version, else by
    /// `bm25()`. The same numbers either way.
    fn score(&self, reader: &Reader<'_>, key: &str, version: &NotesVersion) -> Result<Scores> {
        if let Some(lengths) = self.lengths_at(version) {
            // Only speed is lost when the parts cannot be read: `bm25()` gives the same.
            match reader.phrase_scores(key, self.weights, &lengths) {
                Ok(Some(scores)) => return Ok(scores.into()),
                Ok(None) => {}
                Err(e) => tracing::debug!(error = %e, key, "word scored by bm25()"),
            }
        }
        Ok(reader
            .fts_all_scores(key, self.weights, &Filters::default())?
            .into())
    }

    /// Every note `query` matches with its BM25 score, in id order: exactly what
    /// `Reader::fts_all_scores` gives for `query.to_match()` with these weights and no
    /// filters. `None` for a query with exclusions (its `NOT` is left to FTS5) or too many
    /// words (see [`MAX_TERMS`]).
    pub fn all(&self, reader: &Reader<'_>, query: &Query) -> Result<Option<Vec<(i64, f64)>>> {
        if !query.excludes.is_empty() || !covers(query) {
            return Ok(None);
        }
        let version = reader.notes_version()?;
        self.score_new_side_by_side(reader, query, &version)?;
        let lists = query
            .terms
            .iter()
            .map(|t| self.term(reader, t, &version))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(sum_in_order(&lists)))
    }

    /// Scores the words of `query` not remembered at `version` at the same time, one
    /// thread and read transaction each, and remembers them: a query's new words (its first
    /// keystrokes, or the first query after a note changed) cost the slowest word instead of
    /// their sum. A word whose transaction sees other notes than `version` is left for
    /// [`TermScores::term`] to score in `reader`'s own.
    fn score_new_side_by_side(
        &self,
        reader: &Reader<'_>,
        query: &Query,
        version: &NotesVersion,
    ) -> Result<()> {
        let mut new: Vec<String> = Vec::new();
        {
            let mut held = self.lock();
            for key in query.terms.iter().map(Term::to_fts) {
                if !new.contains(&key) && held.get(&key, version).is_none() {
                    new.push(key);
                }
            }
        }
        if new.len() < 2 {
            return Ok(());
        }
        let index = reader.index();
        let scored = std::thread::scope(|threads| {
            let beside: Vec<_> = new[1..]
                .iter()
                .map(|key| {
                    threads.spawn(move || -> Option<Scores> {
                        let beside = || -> Result<Option<Scores>> {
                            let other = index.read()?;
                            if other.notes_version()? != *version {
                                return Ok(None);
                            }
                            Ok(Some(self.score(&other, key, version)?))
                        };
                        // Only speed is lost: `term` scores the word in the query's reader.
                        beside().unwrap_or_else(|e| {
                            tracing::debug!(error = %e, "a word scored beside the query failed");
                            None
                        })
                    })
                })
                .collect();
            let mut scored = vec![Some(self.score(reader, &new[0], version)?)];
            for thread in beside {
                let got = thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                scored.push(got);
            }
            Ok::<_, crate::Error>(scored)
        })?;
        let mut held = self.lock();
        for (key, scores) in new.into_iter().zip(scored) {
            if let Some(scores) = scores {
                held.put(key, scores, version);
            }
        }
        Ok(())
    }

    /// The notes `term` alone matches (in id order), with its score in each.
    pub fn single(&self, reader: &Reader<'_>, term: &Term) -> Result<Scores> {
        self.term(reader, term, &reader.notes_version()?)
    }

    /// [`TermScores::single`] at notes `version`, scored by FTS5 the first time it is
    /// asked for.
    fn term(&self, reader: &Reader<'_>, term: &Term, version: &NotesVersion) -> Result<Scores> {
        let key = term.to_fts();
        if let Some(found) = self.lock().get(&key, version) {
            return Ok(found);
        }
        // Scored outside the lock: another search may use the lists meanwhile.
        let scores = self.score(reader, &key, version)?;
        self.lock().put(key, scores.clone(), version);
        Ok(scores)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Remembered {
    fn new(version: NotesVersion) -> Remembered {
        Remembered {
            version,
            lists: LruCache::unbounded(),
            held: 0,
        }
    }

    fn get(&mut self, key: &str, version: &NotesVersion) -> Option<Scores> {
        if self.version != *version {
            // Another version of the notes: every remembered score is wrong now.
            *self = Remembered::new(version.clone());
            return None;
        }
        self.lists.get(key).cloned()
    }

    fn put(&mut self, key: String, scores: Scores, version: &NotesVersion) {
        let charged = cost(&key, &scores);
        // Scored in a read transaction older or newer than the lists held: not kept.
        if self.version != *version || charged > BUDGET {
            return;
        }
        self.held += charged;
        if let Some(old) = self.lists.put(key.clone(), scores) {
            self.held -= cost(&key, &old);
        }
        while self.held > BUDGET {
            let Some((key, evicted)) = self.lists.pop_lru() else {
                break;
            };
            self.held -= cost(&key, &evicted);
        }
    }
}

/// What a list costs against [`BUDGET`], in scores: its scores, its bookkeeping and its key
/// (a quoted phrase may be long).
fn cost(key: &str, scores: &Scores) -> usize {
    scores.len() + LIST_COST + key.len() / 16
}

/// The union of `lists` (each in id order), each note's scores added in the lists' order
/// from 0.0, as FTS5 adds an OR query's phrases: the same sums to the last bit.
fn sum_in_order(lists: &[Scores]) -> Vec<(i64, f64)> {
    let mut at = vec![0usize; lists.len()];
    let mut out = Vec::with_capacity(lists.iter().map(|l| l.len()).max().unwrap_or(0));
    loop {
        let next = lists
            .iter()
            .zip(&at)
            .filter_map(|(l, &i)| l.get(i).map(|&(id, _)| id))
            .min();
        let Some(id) = next else {
            return out;
        };
        let mut sum = 0.0;
        for (l, i) in lists.iter().zip(at.iter_mut()) {
            if let Some(&(here, score)) = l.get(*i) {
                if here == id {
                    sum += score;
                    *i += 1;
                }
            }
        }
        out.push((id, sum));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[(i64, f64)]) -> Scores {
        v.to_vec().into()
    }

    #[test]
    fn sums_follow_the_lists_order_over_their_union() {
        let a = list(&[(1, 0.1), (3, 0.2), (9, 1e16)]);
        let b = list(&[(2, 0.5), (3, 0.7), (9, 1.0)]);
        let c = list(&[(9, -1e16)]);
        let got = sum_in_order(&[a, b, c]);
        assert_eq!(
            got,
            vec![(1, 0.1), (2, 0.5), (3, 0.2 + 0.7), (9, 1e16 + 1.0 - 1e16)]
        );
        // Order matters in floating point, so the merge keeps it: (1e16 + 1) - 1e16 is 0.
        assert_eq!(got[3].1, 0.0);
        assert!(sum_in_order(&[]).is_empty());
    }

    #[test]
    fn another_version_forgets_everything_and_the_budget_evicts_the_least_used() {
        let [v0, v1, v6, v7] = [0, 1, 6, 7].map(NotesVersion::at);
        let mut r = Remembered::new(v0.clone());
        r.put("a".into(), list(&[(1, 1.0)]), &v0);
        assert!(r.get("a", &v0).is_some());
        assert!(
            r.get("a", &v7).is_none(),
            "a new notes version drops the lists"
        );
        assert!(r.get("a", &v7).is_none());
        r.put("old".into(), list(&[(1, 1.0)]), &v6);
        assert!(
            r.get("old", &v7).is_none(),
            "a list scored at another version is not kept"
        );

        let half: Vec<(i64, f64)> = (0..(BUDGET / 2 - LIST_COST) as i64)
            .map(|i| (i, 1.0))
            .collect();
        r.put("x".into(), half.clone().into(), &v7);
        r.put("y".into(), half.clone().into(), &v7);
        assert!(r.get("x", &v7).is_some(), "x is now the most recently used");
        r.put("z".into(), list(&[(1, 2.0)]), &v7);
        assert!(r.get("y", &v7).is_none(), "y was least recently used");
        assert!(r.get("x", &v7).is_some() && r.get("z", &v7).is_some());
        assert_eq!(r.held, BUDGET / 2 + 1 + LIST_COST);
        let too_big: Vec<(i64, f64)> = (0..BUDGET as i64).map(|i| (i, 1.0)).collect();
        r.put("w".into(), too_big.into(), &v7);
        assert!(r.get("w", &v7).is_none() && r.get("x", &v7).is_some());

        // Many short lists are bounded by what each costs beyond its scores.
        let mut r = Remembered::new(v1.clone());
        for i in 0..BUDGET {
            r.put(format!("w{i}"), list(&[(1, 1.0)]), &v1);
        }
        assert_eq!(r.lists.len(), BUDGET / (1 + LIST_COST));
        assert!(r.held <= BUDGET);
        // A long key (a pasted phrase) is charged for its length.
        assert_eq!(
            cost(&"x".repeat(1600), &list(&[(1, 1.0)])),
            1 + LIST_COST + 100
        );
    }
}
