//! Keyword search: FTS5 BM25 with column weights title 10, tags 5, body 1, filtered in SQL,
//! then a stable re-rank by exact evidence that BM25 cannot see: a title that *is* the query
//! (`git commit` -> `git commit`, not `git commits-since`), and identifiers found literally
//! (`wal_checkpoint` in the text, not just `wal` near `checkpoint`).

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection};

use super::query::Query;
use super::Filters;
use crate::note::name_key;

/// BM25 column weights: title, tags, body.
pub const WEIGHTS: (f64, f64, f64) = (10.0, 5.0, 1.0);

/// Marks around matched words in snippets.
pub const MARK_OPEN: char = '«';
/// See [`MARK_OPEN`].
pub const MARK_CLOSE: char = '»';

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
pub struct Bm25Hit {
    /// `notes.id`.
    pub note_id: i64,
    /// BM25 score, positive: higher is better.
    pub score: f64,
    /// Exact evidence found for this hit.
    pub exact: Exact,
}

/// BM25 candidates considered for the exact-evidence re-rank, at least.
const MIN_POOL: usize = 50;

/// Runs `query` and returns up to `limit` hits, best first.
pub fn search(
    conn: &Connection,
    query: &Query,
    filters: &Filters,
    limit: usize,
) -> rusqlite::Result<Vec<Bm25Hit>> {
    let Some(expr) = query.to_match() else {
        return Ok(Vec::new());
    };
    let pool = limit.max(MIN_POOL);
    let (w_title, w_tags, w_body) = WEIGHTS;
    let rank_expr = format!("bm25(notes_fts, {w_title:.1}, {w_tags:.1}, {w_body:.1})");
    let identifiers = query.identifiers();
    // The literal check reads the body, so only ask for it when the query has identifiers.
    let literal = if identifiers.is_empty() {
        "''"
    } else {
        "lower(f.body)"
    };
    let select = format!(
        "SELECT f.rowid, -{rank_expr}, lower(n.title), {literal} FROM notes_fts f JOIN notes n ON n.id = f.rowid
         WHERE notes_fts MATCH ?1"
    );
    let classify = |r: &rusqlite::Row<'_>, named: bool| -> rusqlite::Result<Bm25Hit> {
        let title: String = r.get(2)?;
        let body: String = r.get(3)?;
        let exact = if named {
            Exact::Title
        } else if !identifiers.is_empty()
            && identifiers
                .iter()
                .all(|id| body.contains(id.as_str()) || title.contains(id.as_str()))
        {
            Exact::Identifier
        } else {
            Exact::None
        };
        Ok(Bm25Hit {
            note_id: r.get(0)?,
            score: r.get(1)?,
            exact,
        })
    };

    // Notes whose title or file name is the query, wherever BM25 ranks them: with many
    // `systemctl-*` pages, `systemctl` itself can sit below the top 50.
    let wanted = name_key(&query.words().join(" "));
    let mut hits: Vec<Bm25Hit> = Vec::new();
    if !wanted.is_empty() {
        let mut sql = format!(
            "{select} AND f.rowid IN (SELECT id FROM notes WHERE title_key = ?2 OR stem_key = ?2)"
        );
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(expr.clone()), SqlValue::Text(wanted)];
        filters.push_sql(&mut sql, &mut args);
        sql.push_str(&format!(" ORDER BY {rank_expr} LIMIT {pool}"));
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(args), |r| classify(r, true))?;
        hits = rows.collect::<rusqlite::Result<_>>()?;
    }

    let mut sql = select.clone();
    let mut args: Vec<SqlValue> = vec![SqlValue::Text(expr)];
    filters.push_sql(&mut sql, &mut args);
    sql.push_str(&format!(" ORDER BY {rank_expr} LIMIT {pool}"));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| classify(r, false))?;
    for hit in rows {
        let hit = hit?;
        if !hits.iter().any(|h| h.note_id == hit.note_id) {
            hits.push(hit);
        }
    }
    // Stable: within a tier, BM25 order stands.
    hits.sort_by_key(|h| std::cmp::Reverse(h.exact));
    hits.truncate(limit);
    Ok(hits)
}

/// The FTS5 snippet of a hit's body (with «marks») and the 1-based file line where that
/// snippet's first match sits; falls back to the first match anywhere, then to the body's
/// first line.
pub fn snippet_and_line(
    conn: &Connection,
    query: &Query,
    note_id: i64,
    body_line: u32,
) -> rusqlite::Result<(String, u32)> {
    let Some(expr) = query.to_match() else {
        return Ok((String::new(), body_line));
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT snippet(notes_fts, 2, '{MARK_OPEN}', '{MARK_CLOSE}', '...', 24),
                highlight(notes_fts, 2, char(1), char(2))
         FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = ?2"
    ))?;
    let found: Option<(String, String)> = stmt
        .query_row(rusqlite::params![expr, note_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .ok();
    let Some((snippet, marked)) = found else {
        return Ok((String::new(), body_line));
    };
    // The snippet up to its first closing mark, in the highlight's marker alphabet, finds the
    // snippet's own position even when the same word also occurs earlier in the note.
    let anchor = snippet.find(MARK_CLOSE).map(|end| {
        let head = snippet[..end + MARK_CLOSE.len_utf8()].trim_start_matches("...");
        head.replace(MARK_OPEN, "\u{1}")
            .replace(MARK_CLOSE, "\u{2}")
    });
    let at = anchor
        .as_deref()
        .and_then(|a| marked.find(a))
        .or_else(|| marked.find('\u{1}'));
    let line = match at {
        Some(pos) => body_line + marked[..pos].matches('\n').count() as u32,
        None => body_line,
    };
    Ok((snippet, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_tiers_order() {
        assert!(Exact::Title > Exact::Identifier && Exact::Identifier > Exact::None);
    }
}
