//! From a ranked note to the row a person reads: path, type, title, tags, a one-line
//! snippet with the query's words in «marks», and the file line to open it at.

use std::path::Path;

use super::bm25::{self, Bm25Hit};
use super::fuse::Fused;
use super::query::Query;
use super::semantic::SemHit;
use super::{snippet, Hit};
use crate::error::Result;
use crate::index::Reader;

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
    let (snip, line) = match r.chunk {
        Some(chunk) => passage(reader, chunk, query)?,
        None => bm25::snippet_and_line(reader, query, r.note_id, row.body_line)?,
    };
    Ok(Some(Hit {
        abs_path: root.join(&row.path).to_string_lossy().into_owned(),
        path: row.path,
        kind: row.kind,
        title: row.title,
        tags: row.tags,
        date: row.date,
        snippet: snippet::one_line(&snip),
        score: r.score,
        bm25_rank: r.bm25_rank,
        sem_rank: r.sem_rank,
        line,
    }))
}

/// A chunk's passage (without the title and heading it carries) and its first line.
fn passage(reader: &Reader<'_>, chunk: i64, query: &Query) -> Result<(String, u32)> {
    let Some(row) = reader.chunk(chunk)? else {
        return Ok((String::new(), 1));
    };
    let mut lines = row.text.lines().skip(1);
    if !row.heading.is_empty() {
        lines.next();
    }
    let passage: Vec<&str> = lines.collect();
    let passage = snippet::truncate(
        &snippet::one_line(&passage.join("\n")),
        snippet::PASSAGE_CHARS,
    );
    Ok((snippet::mark_words(&passage, &query.words()), row.line))
}
