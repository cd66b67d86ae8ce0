//! Word overlap from both sides: the share of the draft's words the note holds (each word
//! weighted by its rarity in the brain), and the share of the note's words the draft holds.
//!
//! The passages' cosine says two texts are about the same thing; it cannot say they make
//! the same points (MiniLM puts the same tool's other lesson as close as a rewrite). A
//! rewrite keeps most of the specific words on both sides, where a note on a neighbouring
//! lesson shares the topic's words and few others. On the development drafts the geometric
//! mean of the two shares, at its highest among a draft's candidates, is 0.25 or more for
//! nine duplicates in ten and 0.24 or less for nine related drafts in ten (medians 0.37 and
//! 0.18), where the passages' ranges overlapped widely.

use std::collections::{HashMap, HashSet};

use rust_stemmers::{Algorithm, Stemmer};

use crate::search::is_stopword;
use crate::text::cjk;

/// Distinct words read of a text, at most (a pasted essay's tail adds nothing).
const MAX_WORDS: usize = 400;

/// The words of `text` as the full-text index reads them (runs of letters and digits),
/// lowercased, without stopwords and words under 3 characters, in first-seen order, at most
/// [`MAX_WORDS`] of them: what both the rare words and the word overlap read of a text.
/// Chinese, Japanese and Korean write no spaces between words, so a run of their characters
/// gives its overlapping pairs (`连接池上限` -> `连接`, `接池`, `池上`, `上限`): a whole run
/// (a clause, between two commas) is never shared by a paraphrase, where its pairs are
/// (what a CJK search engine indexes for want of word boundaries).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut push = |w: String, out: &mut Vec<String>| {
        if !is_stopword(&w) && seen.insert(w.clone()) {
            out.push(w);
        }
        out.len() == MAX_WORDS
    };
    for token in tokens(text) {
        for (part, cjk) in cjk::script_parts(token) {
            if cjk {
                for pair in cjk::pairs(part) {
                    if push(pair, &mut out) {
                        return out;
                    }
                }
            } else if part.chars().count() >= 3
                && !part.chars().all(|c| c.is_ascii_digit())
                && push(part.to_lowercase(), &mut out)
            {
                return out;
            }
        }
    }
    out
}

/// The runs of letters and digits of `text`, but the first half of a negative contraction
/// (`won` of `won't`, `doesn` of `doesn’t`): a fragment, not a word of the note, that the
/// reasons showed as a rare word the two texts share.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || loop {
        let start = rest.find(char::is_alphanumeric)?;
        let from = &rest[start..];
        let end = from
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(from.len());
        let (token, after) = from.split_at(end);
        rest = after;
        let mut next = after.chars();
        let contracted = matches!(next.next(), Some('\'' | '\u{2019}'))
            && matches!(next.next(), Some('t' | 'T'))
            && !next.next().is_some_and(char::is_alphanumeric)
            && token.ends_with(['n', 'N']);
        if !contracted {
            return Some(token);
        }
    })
}

/// Bytes of a note read for its words: its first [`words`] are all that
/// count, and a 4 MB note of few distinct words would otherwise be read to its end for each
/// draft.
const MAX_NOTE_BYTES: usize = 200_000;

/// The stems of [`words`] of `text` (`retries` and `retry` are one word): the
/// same words, so that a note compared with itself overlaps fully whatever its length.
pub(crate) fn stems(text: &str) -> HashSet<String> {
    let stemmer = Stemmer::create(Algorithm::English);
    words(crate::text::cut_at_char(text, MAX_NOTE_BYTES))
        .iter()
        .map(|w| stemmer.stem(w).into_owned())
        .collect()
}

/// The fewest words a note's share is counted over: a note of one or two words (a line of
/// wiki links) is wholly "held" by any draft that names them, which alone would make the
/// draft its duplicate. A copy of such a note still aligns passage for passage.
const MIN_NOTE_WORDS: usize = 5;

/// The draft's words and the weight of each (its inverse document frequency).
#[derive(Debug, Default, Clone)]
pub(crate) struct DraftWords {
    weights: HashMap<String, f64>,
    total: f64,
}

impl DraftWords {
    /// From each word of the draft (lowercase) and its IDF; a word met twice in other forms
    /// keeps its highest weight.
    pub fn new(words: impl IntoIterator<Item = (String, f64)>) -> DraftWords {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut weights: HashMap<String, f64> = HashMap::new();
        for (word, idf) in words {
            let w = weights
                .entry(stemmer.stem(&word).into_owned())
                .or_insert(idf);
            *w = w.max(idf);
        }
        let total = weights.values().sum();
        DraftWords { weights, total }
    }

    /// How many distinct words (stems, stopwords aside) the draft has.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// How much of their words `note` (title and body) and the draft share, 0..1: the
    /// geometric mean of the draft's weighted share held by the note and the note's share
    /// (by count) held by the draft.
    pub fn overlap(&self, note: &str) -> f64 {
        let note = stems(note);
        if self.total <= 0.0 || note.is_empty() {
            return 0.0;
        }
        let (mut weight, mut count) = (0.0, 0usize);
        for stem in &note {
            if let Some(w) = self.weights.get(stem) {
                weight += w;
                count += 1;
            }
        }
        let draft_held = weight / self.total;
        let note_held = count as f64 / note.len().max(MIN_NOTE_WORDS) as f64;
        (draft_held * note_held).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(words: &[(&str, f64)]) -> DraftWords {
        DraftWords::new(words.iter().map(|(w, idf)| (w.to_string(), *idf)))
    }

    #[test]
    fn words_are_tokens_without_stopwords_numbers_or_repeats() {
        assert_eq!(
            words("Use git push --force-with-lease; the 2024 push is OK with_lease"),
            vec!["use", "git", "push", "force", "with", "lease"]
                .into_iter()
                .filter(|w| !is_stopword(w))
                .map(String::from)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn negative_contractions_leave_no_fragment() {
        assert_eq!(
            words("It won't start; DOESN’T matter, can't; the won match; o'toole"),
            ["start", "matter", "won", "match", "toole"]
        );
    }

    #[test]
    fn cjk_runs_give_their_pairs_and_latin_words_beside_them_stay_words() {
        assert_eq!(
            words("排查发现连接池上限，TTLを短く Rust的代理"),
            [
                "排查", "查发", "发现", "现连", "连接", "接池", "池上", "上限", "ttl", "を短",
                "短く", "rust", "的代", "代理"
            ]
        );
        assert!(words("单").is_empty());
    }

    #[test]
    fn stems_are_the_first_words_once_without_stopwords_or_numbers() {
        let s = stems("Retries and retry: the 2024 RETRIES of x1");
        assert_eq!(s, HashSet::from(["retri".to_string()]));
        // A long note counts its first words only, as a draft does: a copy overlaps fully.
        let long: String = (0..2000).map(|i| format!("word{i} ")).collect();
        let d = DraftWords::new(words(&long).into_iter().map(|w| (w, 1.0)));
        assert!((d.overlap(&long) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_note_of_few_words_is_not_held_whole_by_a_draft_naming_them() {
        let d = draft(&[("swap", 3.0), ("kite", 2.0), ("release", 1.0)]);
        // One word of the note's one: a fifth, not all, of a note of under five words.
        let tiny = d.overlap("[[swap/a]] [[swap/b]]");
        let held = 3.0 / 6.0;
        assert!((tiny - (held * 0.2_f64).sqrt()).abs() < 1e-9, "{tiny}");
    }

    #[test]
    fn overlap_weighs_the_drafts_rare_words_and_counts_the_notes() {
        let d = draft(&[
            ("lease", 3.0),
            ("push", 1.0),
            ("rebase", 1.0),
            ("remote", 1.0),
            ("branch", 1.0),
        ]);
        // The note holds every word of the draft, and the draft every word of the note.
        let same = d.overlap("Push with lease, rebase the remote branch");
        assert!((same - 1.0).abs() < 1e-9, "{same}");
        // A fifth of the note's words, the draft's rare word: sqrt(3/7 * 0.2).
        let rare = d.overlap("lease tables chairs doors walls");
        assert!((rare - (3.0f64 / 7.0 * 0.2).sqrt()).abs() < 1e-9, "{rare}");
        // The common word alone counts less than the rare one.
        assert!(d.overlap("push tables chairs doors walls") < rare);
        assert_eq!(d.overlap("nothing shared here"), 0.0);
        assert_eq!(d.overlap(""), 0.0);
        assert_eq!(DraftWords::default().overlap("lease"), 0.0);
    }

    #[test]
    fn a_word_in_two_forms_keeps_its_highest_weight() {
        let d = draft(&[("retries", 1.0), ("retry", 2.0)]);
        assert_eq!(d.total, 2.0);
    }
}
