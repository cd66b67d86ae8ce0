//! From a ranked note to the row a person reads: path, type, title, tags, a one-line
//! snippet with the query's words in «marks», and the file line to open it at.

use std::path::Path;

use super::bm25::{self, Bm25Hit};
use super::fuse::Fused;
use super::query::Query;
use super::semantic::SemHit;
use super::{snippet, Hit};
use crate::error::Result;
use crate::index::{ChunkRow, Reader};

/// Notes larger than this get the passage that holds a query word (the way a semantic hit
/// shows its best passage) instead of FTS5's snippet: `snippet()` scores every window
/// around every match of the note, and its time grows with the square of the matches (a
/// 1 MB note of common words took 13 s for one hit, a 9 MB one over ten minutes). At this
/// size it is a few milliseconds.
const SNIPPET_MAX_BYTES: u64 = 32 * 1024;

/// One ranked note before presentation.
pub(crate) struct Ranked {
    pub note_id: i64,
    pub score: f64,
    pub bm25_rank: Option<u32>,
    pub sem_rank: Option<u32>,
    /// The best semantic passage, used for snippet and line when the semantic list ranked
    /// the note at least as well as the keyword list.
    pub chunk: Option<i64>,
}

impl Ranked {
    /// The `i`-th (0-based) hit of the keyword list.
    pub fn keyword((i, h): (usize, &Bm25Hit)) -> Ranked {
        Ranked {
            note_id: h.note_id,
            score: h.score,
            bm25_rank: Some(i as u32 + 1),
            sem_rank: None,
            chunk: None,
        }
    }

    /// The `i`-th (0-based) hit of the semantic list.
    pub fn semantic((i, h): (usize, &SemHit)) -> Ranked {
        Ranked {
            note_id: h.note_id,
            score: f64::from(h.score),
            bm25_rank: None,
            sem_rank: Some(i as u32 + 1),
            chunk: Some(h.chunk_id),
        }
    }

    /// A fused hit: the semantic passage is shown when meaning ranked it at least as well.
    pub fn fused(f: &Fused) -> Ranked {
        Ranked {
            note_id: f.note_id,
            score: f.score,
            bm25_rank: f.bm25_rank,
            sem_rank: f.sem_rank,
            chunk: f
                .chunk_id
                .filter(|_| f.sem_rank.unwrap_or(u32::MAX) <= f.bm25_rank.unwrap_or(u32::MAX)),
        }
    }
}

/// The result row for `r`: keyword snippet (with «marks») when the keyword list found it
/// at least as well, else the best semantic passage. `None` when the note is gone.
pub(crate) fn hit(
    reader: &Reader<'_>,
    root: &Path,
    query: &Query,
    r: &Ranked,
) -> Result<Option<Hit>> {
    let Some(row) = reader.note(r.note_id)? else {
        return Ok(None);
    };
    let small = row.size <= SNIPPET_MAX_BYTES;
    let (snip, line) = match r.chunk {
        Some(chunk) => {
            let by_meaning = passage(reader, chunk, query, r.note_id, row.body_line)?;
            // Found by both lists: the passage meaning chose, unless the keyword snippet
            // shows more of the query's words (a passage of dates and tags marking one
            // word, where the keywords found the sentence with all four), and either two
            // or more of them or every one (an identifier the passage lacks). One common
            // word of a long question is no reason to trade the passage for it.
            // A large note's keyword passage is the line holding the words (FTS5's snippet
            // costs too much there), held to the same rule: in a note of 2,000 sections, a
            // section number the model cannot tell apart showed the wrong section.
            match r.bm25_rank.is_some() {
                true => {
                    let by_words = match small {
                        true => bm25::snippet_and_line(reader, query, r.note_id, row.body_line)?,
                        false => from_first_word(root, &row.path, row.body_line, query),
                    };
                    let words: Vec<String> = query
                        .searched_words()
                        .into_iter()
                        .filter(|w| snippet::worth_marking(w))
                        .map(|w| w.to_lowercase())
                        .collect();
                    let kw = words_marked(&by_words.0, &words);
                    let sem = words_marked(&by_meaning.0, &words);
                    match kw > sem && (kw >= 2 || kw >= words.len()) {
                        true => by_words,
                        false => by_meaning,
                    }
                }
                false => by_meaning,
            }
        }
        None if !small => from_first_word(root, &row.path, row.body_line, query),
        None => bm25::snippet_and_line(reader, query, r.note_id, row.body_line)?,
    };
    Ok(Some(Hit {
        abs_path: root.join(&row.path).to_string_lossy().into_owned(),
        path: row.path,
        kind: crate::text::title_shown(row.kind),
        title: crate::text::title_shown(row.title),
        tags: crate::text::tags_shown(row.tags),
        date: row.date,
        snippet: snippet::one_line(&snip),
        score: r.score,
        bm25_rank: r.bm25_rank,
        sem_rank: r.sem_rank,
        line,
    }))
}

/// How many of the query's `words` (lowercase) `snippet` marks («...»), case aside: a
/// word counts when a marked span holds it (FTS5 marks `pg_terminate_backend` as one span
/// for three words) or it holds the span (a stem: «failure» for `failures`).
fn words_marked(snippet: &str, words: &[String]) -> usize {
    let spans: Vec<String> = snippet
        .split('«')
        .skip(1)
        .filter_map(|rest| rest.split_once('»').map(|(w, _)| w.to_lowercase()))
        .filter(|span| !span.is_empty())
        .collect();
    words
        .iter()
        .filter(|w| {
            spans
                .iter()
                .any(|span| span.contains(w.as_str()) || w.contains(span.as_str()))
        })
        .count()
}

/// A chunk's passage (without the title and heading it carries), and the line of its first
/// word the snippet marks (else its first line with any text: a passage may start with
/// lines of markup the plain text blanks): `brain get` at that line shows what the snippet
/// shows, as for a keyword hit.
fn passage(
    reader: &Reader<'_>,
    chunk: i64,
    query: &Query,
    note_id: i64,
    body_line: u32,
) -> Result<(String, u32)> {
    let Some(row) = reader.chunk(chunk)? else {
        return Ok((String::new(), 1));
    };
    let mut lines = row.text.lines().skip(1);
    if !row.heading.is_empty() {
        lines.next();
    }
    let passage: Vec<&str> = lines.collect();
    let passage = snippet::truncate(
        &snippet::one_line(&snippet::without_marks(&passage.join("\n"))),
        snippet::PASSAGE_CHARS,
    );
    let words = query.searched_words();
    let marked = snippet::mark_words(&passage, &words);
    let line = match marked.contains('«') {
        true => first_line_where(reader, note_id, body_line, &row, |text| {
            snippet::mark_words(&snippet::without_marks(text), &words).contains('«')
        })?,
        false => first_line_where(reader, note_id, body_line, &row, |text| {
            !text.trim().is_empty()
        })?,
    };
    Ok((marked, line.unwrap_or(row.line)))
}

/// The first line of `row`'s passage, in the note's plain text (one line per file line
/// from `body_line`), that `wanted` accepts.
fn first_line_where(
    reader: &Reader<'_>,
    note_id: i64,
    body_line: u32,
    row: &ChunkRow,
    wanted: impl Fn(&str) -> bool,
) -> Result<Option<u32>> {
    let (_, body) = reader.title_and_body(note_id)?;
    let from = row.line.saturating_sub(body_line) as usize;
    let to = row.end_line.saturating_sub(body_line) as usize;
    Ok(body
        .split('\n')
        .enumerate()
        .skip(from)
        .take(to.saturating_sub(from) + 1)
        .find(|(_, text)| wanted(text))
        .map(|(i, _)| body_line + i as u32))
}

/// A large note's keyword hit: the lines from the first one (of the body, in the file as
/// it is now) that holds a query word, and that line; the body's first line when none
/// does (a match by stem, or a file that changed) or the file cannot be read.
fn from_first_word(root: &Path, path: &str, body_line: u32, query: &Query) -> (String, u32) {
    let Some(text) = crate::file::read_file(&root.join(path), u64::MAX)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
    else {
        return (String::new(), body_line);
    };
    let lines: Vec<&str> = text.lines().collect();
    let body = (body_line.max(1) as usize - 1).min(lines.len());
    let words = query.searched_words();
    let phrases: Vec<String> = query
        .terms
        .iter()
        .filter(|t| t.quoted)
        .map(|t| {
            t.text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        })
        .collect();
    // The line holding a phrase asked for, else one holding every word, else any word:
    // the first word alone put a phrase's hit on line 1 of a long note that named it there.
    // One pass, each line lowercased once, ending at the best line there can be.
    let (mut all, mut any) = (None, None);
    let mut at = None;
    for (i, line) in lines.iter().enumerate().skip(body) {
        let line = line.to_lowercase();
        if phrases.iter().any(|p| line.contains(p.as_str())) {
            at = Some(i);
            break;
        }
        if all.is_none() && words.iter().all(|w| line.contains(w.as_str())) {
            all = Some(i);
            if phrases.is_empty() {
                break;
            }
        }
        if any.is_none() && words.iter().any(|w| line.contains(w.as_str())) {
            any = Some(i);
        }
    }
    let at = at.or(all).or(any).unwrap_or(body);
    let shown = lines[at..]
        .iter()
        .take(SHOWN_LINES)
        .copied()
        .collect::<Vec<_>>();
    let shown = snippet::truncate(
        &snippet::one_line(&snippet::without_marks(&shown.join("\n"))),
        snippet::PASSAGE_CHARS,
    );
    (snippet::mark_words(&shown, &words), at as u32 + 1)
}

/// Lines a large note's hit shows at most (then cut to a passage's length).
const SHOWN_LINES: usize = 12;

#[cfg(test)]
mod tests {
    use super::words_marked;

    #[test]
    fn the_query_words_a_snippet_marks_are_counted_once_each() {
        let words = |q: &str| -> Vec<String> { q.split(' ').map(String::from).collect() };
        let asked = words("convert tabs spaces vim");
        assert_eq!(words_marked("Date 2018 Tags «vim»", &asked), 1);
        assert_eq!(
            words_marked(
                "«Convert» «tabs» to «spaces» in «Vim»: «vim» «convert»",
                &asked
            ),
            4
        );
        assert_eq!(words_marked("no marks", &asked), 0);
        assert_eq!(words_marked("«unclosed", &asked), 0);
        // One span for an identifier's words; a stem for its word.
        let ident = words("terminate backend");
        assert_eq!(
            words_marked("select «pg_terminate_backend»(pid)", &ident),
            2
        );
        assert_eq!(
            words_marked("stop at first «failure»", &words("failures")),
            1
        );
    }
}
