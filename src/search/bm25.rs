//! Keyword search: FTS5 BM25 with column weights title 10, tags 5, body 1, filtered in SQL,
//! then a stable re-rank by exact evidence that BM25 cannot see: a title that *is* the query
//! (`git commit` -> `git commit`, not `git commits-since`), and identifiers found literally
//! (`wal_checkpoint` in the text, not just `wal` near `checkpoint`).

use super::query::Query;
use super::term_scores::TermScores;
use crate::error::Result;
use crate::index::{Filters, FtsQuery, Reader};
use crate::note::name_key;

/// BM25 column weights: title, tags, body.
pub const WEIGHTS: (f64, f64, f64) = (10.0, 5.0, 1.0);

/// Marks around matched words in snippets.
pub const MARK_OPEN: char = '«';
/// See [`MARK_OPEN`].
pub const MARK_CLOSE: char = '»';

/// What FTS5 marks a snippet's matches with: private-use characters (a note holding them
/// would show them as marks), turned into [`MARK_OPEN`] and [`MARK_CLOSE`] once the
/// note's own guillemets are set apart.
const FTS_OPEN: char = '\u{F0001}';
/// See [`FTS_OPEN`].
const FTS_CLOSE: char = '\u{F0002}';

/// Why a hit was lifted above higher BM25 scores.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Exact {
    /// No exact evidence.
    None,
    /// Every identifier-like word of the query occurs literally in the note.
    Identifier,
    /// The note's title or file name is the query.
    Title,
}

/// One keyword hit, before presentation.
#[derive(Debug, Clone)]
pub(crate) struct Bm25Hit {
    /// `notes.id`.
    pub note_id: i64,
    /// BM25 score, positive: higher is better.
    pub score: f64,
    /// Exact evidence found for this hit.
    pub exact: Exact,
}

/// BM25 candidates considered for the exact-evidence re-rank, at least; the re-rank of the
/// first this many stands whatever the limit (see [`search`]).
pub(crate) const MIN_POOL: usize = 50;

/// Every note the keyword query matches, with its BM25 score, by note id: hybrid completes
/// the notes only meaning found from it, instead of a second pass over the matches.
#[derive(Debug, Default)]
pub(crate) struct KeywordScores(Vec<(i64, f64)>);

impl KeywordScores {
    /// The BM25 score of note `id`; `None` when it does not match.
    pub fn get(&self, id: i64) -> Option<f64> {
        super::term_scores::score_of(&self.0, id)
    }
}

/// Best first; equal scores by note id, so the order never depends on the scan.
fn best_first(a: &(i64, f64), b: &(i64, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Runs `query` and returns up to `limit` hits, best first, and the score of every note
/// it matches (among those `filters` allow). With `remembered`, unfiltered scores come
/// from its single-term lists (the same numbers).
pub(crate) fn search(
    reader: &Reader<'_>,
    query: &Query,
    filters: &Filters,
    limit: usize,
    remembered: Option<&TermScores>,
) -> Result<(Vec<Bm25Hit>, KeywordScores)> {
    let Some(expr) = query.to_match() else {
        return Ok((Vec::new(), KeywordScores::default()));
    };
    let literals = query.literals();
    let pool = limit.max(MIN_POOL);

    // Notes whose title or file name is the query, wherever BM25 ranks them: with many
    // `systemctl-*` pages, `systemctl` itself can sit below the top 50.
    let wanted = name_key(&query.words().join(" "));
    let mut hits: Vec<Bm25Hit> = Vec::new();
    if !wanted.is_empty() {
        let named = FtsQuery {
            expr: &expr,
            weights: WEIGHTS,
            named: Some(wanted.as_str()),
            limit: pool,
        };
        hits = reader
            .fts_match(&named, filters)?
            .into_iter()
            .map(|row| Bm25Hit {
                note_id: row.note_id,
                score: row.score,
                exact: Exact::Title,
            })
            .collect();
    }

    let merged = match remembered.filter(|_| filters.is_empty()) {
        Some(r) => r.all(reader, query)?,
        None => None,
    };
    let all = match merged {
        Some(all) => all,
        None => reader.fts_all_scores(&expr, WEIGHTS, filters)?,
    };
    let mut best = all.clone();
    if best.len() > pool {
        best.select_nth_unstable_by(pool, best_first);
        best.truncate(pool);
    }
    best.sort_unstable_by(best_first);
    // The literal check reads the body, so only ask for it when the query has literals.
    let ids: Vec<i64> = best.iter().map(|&(id, _)| id).collect();
    let texts = reader.lower_texts(&ids, !literals.is_empty())?;
    // Where the hits of the first MIN_POOL end: a deeper limit must not lift literal
    // holders from below them over the hits a smaller one showed (`--top 100` put a GIF
    // converter holding `-version` second for `java -version`, where `--top 10` had Java).
    let mut head = None;
    for (i, (id, score)) in best.into_iter().enumerate() {
        if i == MIN_POOL {
            head = Some(hits.len());
        }
        if hits.iter().any(|h| h.note_id == id) {
            continue;
        }
        if let Some((title, body)) = texts.get(&id) {
            let literal = !literals.is_empty()
                && literals
                    .iter()
                    .all(|l| contains_literal(body, l) || contains_literal(title, l));
            hits.push(Bm25Hit {
                note_id: id,
                score,
                exact: if literal {
                    Exact::Identifier
                } else {
                    Exact::None
                },
            });
        }
    }
    let head = head.unwrap_or(hits.len());
    // Stable: within a tier, BM25 order stands.
    hits[..head].sort_by_key(|h| std::cmp::Reverse(h.exact));
    hits[head..].sort_by_key(|h| std::cmp::Reverse(h.exact));
    hits.truncate(limit);
    Ok((hits, KeywordScores(all)))
}

/// Whether `text` holds `literal` as written, not inside a longer word: `-la` is in
/// `ls -la` but not in `nginx-latest`, `wal_checkpoint` in `wal_checkpoint(TRUNCATE)`.
pub(crate) fn contains_literal(text: &str, literal: &str) -> bool {
    // A CJK character is a word of its own (`text::cjk`): `使用wal_checkpoint命令` holds
    // the identifier.
    let word = |c: char| (c.is_alphanumeric() && !crate::text::cjk::is_cjk(c)) || c == '_';
    let edge_word = (literal.starts_with(word), literal.ends_with(word));
    text.match_indices(literal).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + literal.len()..].chars().next();
        let clear_before = !edge_word.0 || !before.is_some_and(word);
        // A flag is not followed by more of a flag either: `-la` is not in `-lah`.
        let clear_after = !after.is_some_and(|c| word(c) || (c == '-' && edge_word.1));
        let flag_start = !literal.starts_with('-') || !before.is_some_and(|c| word(c) || c == '-');
        clear_before && clear_after && flag_start
    })
}

/// The FTS5 snippet of a hit's body (with «marks») and the 1-based file line where that
/// snippet's first match sits; falls back to the first match anywhere, then to the body's
/// first line.
pub(crate) fn snippet_and_line(
    reader: &Reader<'_>,
    query: &Query,
    note_id: i64,
    body_line: u32,
) -> Result<(String, u32)> {
    let Some(expr) = query.to_match() else {
        return Ok((String::new(), body_line));
    };
    // FTS5 marks with characters no note holds; the note's own `«»` are then told from
    // the marks, and shown as `‹›` ([`super::snippet::without_marks`]).
    let Some((snippet, marked)) = reader.fts_snippet(&expr, note_id, FTS_OPEN, FTS_CLOSE)? else {
        return Ok((String::new(), body_line));
    };
    // The snippet is a verbatim stretch of the highlighted body: found whole, in the
    // highlight's marker alphabet, it says where it is even when its words also occur
    // earlier in the note (a snippet that starts with its marked word, looked for by that
    // word alone, was placed at the word's first occurrence, lines or pages before).
    let in_markers = |s: &str| s.replace(FTS_OPEN, "\u{1}").replace(FTS_CLOSE, "\u{2}");
    let whole = in_markers(snippet.trim_start_matches("...").trim_end_matches("..."));
    // The snippet up to its first closing mark: what is left to go by should the whole
    // stretch not be found (a note changed between the two reads).
    let head = snippet
        .find(FTS_CLOSE)
        .map(|end| in_markers(snippet[..end + FTS_CLOSE.len_utf8()].trim_start_matches("...")));
    // The line is the match's, not the snippet's first (a snippet may start lines earlier,
    // or with the line break before the match).
    let found = |a: &str| Some(marked.find(a)? + a.find('\u{1}')?);
    let at = found(&whole)
        .or_else(|| head.as_deref().and_then(found))
        .or_else(|| marked.find('\u{1}'));
    let line = match at {
        Some(pos) => body_line + marked[..pos].matches('\n').count() as u32,
        None => body_line,
    };
    let snippet = super::snippet::without_marks(&snippet)
        .replace(FTS_OPEN, &MARK_OPEN.to_string())
        .replace(FTS_CLOSE, &MARK_CLOSE.to_string());
    Ok((snippet, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_whole() {
        assert!(contains_literal("run ls -la here", "-la"));
        assert!(!contains_literal("nginx-latest", "-la"));
        assert!(!contains_literal("ls -lah", "-la"));
        assert!(contains_literal(
            "call wal_checkpoint(truncate)",
            "wal_checkpoint"
        ));
        assert!(!contains_literal("my_wal_checkpoint2", "wal_checkpoint"));
        assert!(contains_literal("use tokio::select!", "tokio::select"));
        assert!(contains_literal("edit ~/.ssh/config now", "~/.ssh/config"));
        assert!(!contains_literal("--no-verify-all", "--no-verify"));
        // CJK characters are words of their own, on either side.
        assert!(contains_literal("使用wal_checkpoint命令", "wal_checkpoint"));
        assert!(contains_literal("使用-version参数", "-version"));
        assert!(contains_literal("如何配置代理服务器", "配置代理"));
    }

    #[test]
    fn keyword_scores_are_found_by_id_and_ties_go_by_id() {
        let scores = KeywordScores(vec![(2, 1.5), (7, 0.5), (9, 3.0)]);
        assert_eq!(scores.get(7), Some(0.5));
        assert_eq!(scores.get(9), Some(3.0));
        assert_eq!(scores.get(3), None);
        assert_eq!(KeywordScores::default().get(1), None);
        let mut v = vec![(5, 1.0), (3, 2.0), (1, 1.0), (4, 2.0)];
        v.sort_by(best_first);
        assert_eq!(v, [(3, 2.0), (4, 2.0), (1, 1.0), (5, 1.0)]);
    }

    #[test]
    fn exact_tiers_order() {
        assert!(Exact::Title > Exact::Identifier && Exact::Identifier > Exact::None);
    }
}
