//! The draft's rare words: the commands, identifiers and names that make two notes about
//! the same thing, where common words make them about anything.

use std::collections::{HashMap, HashSet};

use rust_stemmers::{Algorithm, Stemmer};

use super::words::{words, DraftWords};
use crate::error::Result;
use crate::index::Reader;
use crate::search::{term_expr, BM25_WEIGHTS};

/// Rare words kept: the highest IDF among words some note holds.
pub(crate) const MAX_RARE: usize = 16;
/// A word in more than this share of notes is not rare, whatever else is left.
const MAX_DF_SHARE: f64 = 0.05;
/// ... but in a small brain (under 200 notes) a word in up to 10 notes still counts.
const MIN_DF_CAP: f64 = 10.0;

/// One rare word of the draft.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RareTerm {
    /// As it appears in the draft, lowercased.
    pub word: String,
    /// Its full-text expression.
    pub expr: String,
    /// BM25's inverse document frequency.
    pub idf: f64,
}

/// The draft's rarest words that at least one other note holds, rarest first, and every
/// word of it weighed by its IDF for the word overlap: one document-frequency lookup per
/// word serves both. `indexed`: the text is a note of the index, whose own count is then
/// left out of each word's.
pub(crate) fn draft_terms(
    reader: &Reader<'_>,
    text: &str,
    total: u64,
    indexed: bool,
) -> Result<(Vec<RareTerm>, DraftWords)> {
    draft_terms_cached(reader, text, total, indexed, &mut HashMap::new())
}

/// [`draft_terms`], remembering each word's document frequency in `dfs` (`--all` looks up
/// the same words for many notes).
pub(crate) fn draft_terms_cached(
    reader: &Reader<'_>,
    text: &str,
    total: u64,
    indexed: bool,
    dfs: &mut HashMap<String, u64>,
) -> Result<(Vec<RareTerm>, DraftWords)> {
    let weighed = weigh(text, total, indexed, |word, expr| match dfs.get(word) {
        Some(&df) => Ok(df),
        None => {
            let df = reader.fts_count(expr)?;
            dfs.insert(word.to_string(), df);
            Ok(df)
        }
    })?;
    let all = DraftWords::new(weighed.iter().map(|(t, _)| (t.word.clone(), t.idf)));
    Ok((rarest(weighed, total), all))
}

/// The rare words of [`draft_terms`] alone, for a note of the index: each word's notes
/// are counted only as far as the rare-word cap (remembered in `counts`, which holds such
/// capped counts only), since a common word's full count is what costs.
pub(crate) fn rare_terms(
    reader: &Reader<'_>,
    text: &str,
    total: u64,
    counts: &mut HashMap<String, u64>,
) -> Result<Vec<RareTerm>> {
    // One past the cap, plus the note's own match, tells a rare word from a common one.
    let limit = df_cap(total).floor() as u64 + 2;
    let weighed = weigh(text, total, true, |word, expr| match counts.get(word) {
        Some(&df) => Ok(df),
        None => {
            let df = reader.fts_count_upto(expr, limit)?;
            counts.insert(word.to_string(), df);
            Ok(df)
        }
    })?;
    Ok(rarest(weighed, total))
}

/// The most notes a rare word is in.
fn df_cap(total: u64) -> f64 {
    (total.max(1) as f64 * MAX_DF_SHARE).max(MIN_DF_CAP)
}

/// Each word of `text` with its IDF and how many other notes hold it (a word no other note
/// holds weighs most), the notes that hold a word counted by `count(word, expr)`.
fn weigh(
    text: &str,
    total: u64,
    indexed: bool,
    mut count: impl FnMut(&str, &str) -> Result<u64>,
) -> Result<Vec<(RareTerm, u64)>> {
    let n = total.max(1) as f64;
    let mut out = Vec::new();
    for word in words(text) {
        let Some(expr) = term_expr(&word) else {
            continue;
        };
        let df = count(&word, &expr)?;
        let df = if indexed { df.saturating_sub(1) } else { df };
        let idf = (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        out.push((RareTerm { word, expr, idf }, df));
    }
    Ok(out)
}

/// The rare words among `weighed`: held by another note, but by few.
fn rarest(weighed: Vec<(RareTerm, u64)>, total: u64) -> Vec<RareTerm> {
    let cap = df_cap(total);
    let mut out: Vec<RareTerm> = weighed
        .into_iter()
        .filter(|(_, df)| *df > 0 && *df as f64 <= cap)
        .map(|(t, _)| t)
        .collect();
    out.sort_by(|a, b| b.idf.total_cmp(&a.idf).then(a.word.cmp(&b.word)));
    // One form of a word: the index stems `spikes` to `spike`, so both match the same notes,
    // and each counted the same evidence again (and the reasons said "spike, spikes").
    let stemmer = Stemmer::create(Algorithm::English);
    let mut stems = HashSet::new();
    out.retain(|t| stems.insert(stemmer.stem(&t.word).into_owned()));
    out.truncate(MAX_RARE);
    out
}

/// For each of `ids`, the indexes (into `terms`) of the rare words it holds.
pub(crate) fn presence(
    reader: &Reader<'_>,
    terms: &[RareTerm],
    ids: &[i64],
) -> Result<HashMap<i64, Vec<usize>>> {
    let mut out: HashMap<i64, Vec<usize>> = HashMap::new();
    for (k, t) in terms.iter().enumerate() {
        for (id, _) in reader.fts_scores(&t.expr, BM25_WEIGHTS, ids)? {
            out.entry(id).or_default().push(k);
        }
    }
    Ok(out)
}

/// The rare words as one OR query: the notes that hold most of them, by BM25.
pub(crate) fn any_of(terms: &[RareTerm]) -> Option<String> {
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| t.expr.as_str())
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// The words of a title (two letters or more, stop words left out) as one OR query on the
/// notes' titles: without vectors, the only way to a note whose title says what the
/// draft's does in words too common to be rare (`How a file is ignored in Git`).
pub(crate) fn title_words(title: &str) -> Option<String> {
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_lowercase)
        .filter(|w| !crate::search::is_stopword(w))
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| format!("title : ({})", words.join(" OR ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(word: &str, idf: f64, df: u64) -> (RareTerm, u64) {
        let expr = term_expr(word).unwrap();
        (
            RareTerm {
                word: word.into(),
                expr,
                idf,
            },
            df,
        )
    }

    #[test]
    fn a_word_in_two_forms_is_one_rare_word() {
        let rare = rarest(
            vec![
                term("spikes", 5.0, 3),
                term("spike", 5.0, 3),
                term("latency", 4.0, 5),
                term("common", 0.1, 900),
                term("unheld", 7.0, 0),
            ],
            1000,
        );
        let words: Vec<&str> = rare.iter().map(|t| t.word.as_str()).collect();
        assert_eq!(words, ["spike", "latency"]);
    }
}
