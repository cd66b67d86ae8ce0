//! Keyword search: FTS5 BM25 with column weights title 10, tags 5, body 1, filtered in SQL.

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection};

use super::query::Query;
use super::Filters;

/// BM25 column weights: title, tags, body.
pub const WEIGHTS: (f64, f64, f64) = (10.0, 5.0, 1.0);

/// Marks around matched words in snippets.
pub const MARK_OPEN: char = '«';
/// See [`MARK_OPEN`].
pub const MARK_CLOSE: char = '»';

/// One keyword hit, before presentation.
#[derive(Debug, Clone)]
pub struct Bm25Hit {
    /// `notes.id`.
    pub note_id: i64,
    /// BM25 score, positive: higher is better.
    pub score: f64,
    /// FTS5 snippet of the body with «marks».
    pub snippet: String,
}

/// Runs `query` and returns up to `limit` hits, best first.
pub fn search(conn: &Connection, query: &Query, filters: &Filters, limit: usize) -> rusqlite::Result<Vec<Bm25Hit>> {
    let Some(expr) = query.to_match() else { return Ok(Vec::new()) };
    let (w_title, w_tags, w_body) = WEIGHTS;
    let mut sql = format!(
        "SELECT f.rowid, -bm25(notes_fts, {w_title:.1}, {w_tags:.1}, {w_body:.1}),
                snippet(notes_fts, 2, '{MARK_OPEN}', '{MARK_CLOSE}', '...', 24)
         FROM notes_fts f JOIN notes n ON n.id = f.rowid
         WHERE notes_fts MATCH ?1"
    );
    let mut args: Vec<SqlValue> = vec![SqlValue::Text(expr)];
    filters.push_sql(&mut sql, &mut args);
    sql.push_str(&format!(" ORDER BY bm25(notes_fts, {w_title:.1}, {w_tags:.1}, {w_body:.1}) LIMIT {limit}"));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        Ok(Bm25Hit { note_id: r.get(0)?, score: r.get(1)?, snippet: r.get(2)? })
    })?;
    rows.collect()
}

/// The line (1-based, in the file) where `snippet`'s first match sits in note `note_id`.
/// Falls back to the first match anywhere in the body, then to the body's first line.
pub fn match_line(conn: &Connection, query: &Query, note_id: i64, snippet: &str, body_line: u32) -> rusqlite::Result<u32> {
    let Some(expr) = query.to_match() else { return Ok(body_line) };
    let mut stmt = conn.prepare_cached(
        "SELECT highlight(notes_fts, 2, char(1), char(2)) FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = ?2",
    )?;
    let marked: Option<String> = stmt.query_row(rusqlite::params![expr, note_id], |r| r.get(0)).ok();
    let Some(marked) = marked else { return Ok(body_line) };
    // The snippet up to its first closing mark, in the highlight's marker alphabet, finds the
    // snippet's own position even when the same word also occurs earlier in the note.
    let anchor = snippet.find(MARK_CLOSE).map(|end| {
        let head = snippet[..end + MARK_CLOSE.len_utf8()].trim_start_matches("...");
        head.replace(MARK_OPEN, "\u{1}").replace(MARK_CLOSE, "\u{2}")
    });
    let at = anchor
        .as_deref()
        .and_then(|a| marked.find(a))
        .or_else(|| marked.find('\u{1}'));
    Ok(match at {
        Some(pos) => body_line + marked[..pos].matches('\n').count() as u32,
        None => body_line,
    })
}
