//! Reading the index: one [`Reader`] is one read transaction on a pooled connection, so
//! every query a search or a status makes sees the same committed state, even while a sync
//! commits batches that replace notes underneath. Every SQL read of the library is here or
//! in the module that owns its table ([`super::vectors`], [`super::recall`]); callers get
//! typed rows and errors that name the index file.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{params_from_iter, types::Value as SqlValue, OptionalExtension};

use super::bm25_parts::{self, DocLengths, PHRASE_FREQUENCIES};
use super::filter::Filters;
use super::fts_text::show;
use super::lengths_file;
use super::recall::{self, RecallTotals};
use super::{vectors, Conn, Index};
use crate::error::Result;

/// A note as results show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteRow {
    /// Relative to the brain root.
    pub path: String,
    /// Its type.
    pub kind: String,
    /// Its title.
    pub title: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// 1-based line where the body starts.
    pub body_line: u32,
    /// `YYYY-MM-DD`: see [`super::NOTE_DATE`].
    pub date: String,
    /// Size in bytes of its file when it was indexed.
    pub size: u64,
}

/// A passage as stored: the text embedded (title and heading first), its heading and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkRow {
    /// Title line, heading line (when there is a heading), then the passage.
    pub text: String,
    /// The heading the passage sits under, or empty.
    pub heading: String,
    /// First line of the passage in the file.
    pub line: u32,
    /// Last line of the passage in the file.
    pub end_line: u32,
}

/// One full-text match: its note and BM25 score (higher is better).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FtsRow {
    /// `notes.id`.
    pub note_id: i64,
    /// BM25 with the column weights, negated so that higher is better.
    pub score: f64,
}

/// What `brain status` counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Notes.
    pub notes: u64,
    /// Passages.
    pub chunks: u64,
    /// Notes per type.
    pub types: BTreeMap<String, u64>,
}

/// How a full-text query weighs title, tags and body.
pub(crate) struct FtsQuery<'q> {
    /// The MATCH expression (already safe: built by the query parser).
    pub expr: &'q str,
    /// Column weights: title, tags, body.
    pub weights: (f64, f64, f64),
    /// Only notes whose title or file name, as a name key, is this.
    pub named: Option<&'q str>,
    /// At most this many rows, best first.
    pub limit: usize,
}

/// Where the notes' indexed texts stand: any change to any of them moves it (see
/// [`Reader::notes_version`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NotesVersion {
    /// brain's own counter, moved by every sync batch that changes notes.
    counter: i64,
    /// FTS5's structure record, which counts every segment it writes.
    fts: Vec<u8>,
}

impl NotesVersion {
    /// brain's counter and FTS5's structure record.
    pub(super) fn parts(&self) -> (i64, &[u8]) {
        (self.counter, &self.fts)
    }
}

#[cfg(test)]
impl NotesVersion {
    /// A version for tests, `n` in brain's counter.
    pub fn at(n: i64) -> NotesVersion {
        NotesVersion {
            counter: n,
            fts: Vec::new(),
        }
    }
}

/// One read transaction; it ends when the reader is dropped.
pub(crate) struct Reader<'a> {
    index: &'a Index,
    conn: Conn<'a>,
}

impl<'a> Reader<'a> {
    /// Begins a read transaction on a pooled connection of `index`.
    pub(super) fn begin(index: &'a Index) -> Result<Reader<'a>> {
        let conn = index.conn()?;
        conn.execute_batch("BEGIN DEFERRED")
            .map_err(|e| index.err(e))?;
        Ok(Reader { index, conn })
    }

    fn err(&self, e: rusqlite::Error) -> crate::Error {
        self.index.err(e)
    }

    /// The index this transaction reads, to begin others beside it on other threads
    /// ([`Index::read`]). They may see a newer snapshot: compare [`Reader::notes_version`]
    /// before mixing what they read with what this one does.
    pub fn index(&self) -> &'a Index {
        self.index
    }

    /// Whether a note with id `id` is (still) indexed.
    pub fn has_note(&self, id: i64) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?1)")
            .and_then(|mut s| s.query_row([id], |r| r.get(0)))
            .map_err(|e| self.err(e))
    }

    /// The note with id `id`, if it is (still) indexed.
    pub fn note(&self, id: i64) -> Result<Option<NoteRow>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT path, type, title, tags, body_line, {}, size FROM notes n WHERE id = ?1",
                super::NOTE_DATE
            ))
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    let tags: String = r.get(3)?;
                    Ok(NoteRow {
                        path: r.get(0)?,
                        kind: r.get(1)?,
                        title: r.get(2)?,
                        tags: serde_json::from_str(&tags).unwrap_or_default(),
                        body_line: r.get(4)?,
                        date: r.get(5)?,
                        size: r.get::<_, i64>(6)?.max(0) as u64,
                    })
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }

    /// The path of note `id`, or empty when it is gone.
    pub fn path_of(&self, id: i64) -> Result<String> {
        Ok(self.note(id)?.map(|r| r.path).unwrap_or_default())
    }

    /// The title of the note at `path`, if it is indexed.
    pub fn title_of(&self, path: &str) -> Result<Option<String>> {
        self.conn
            .prepare_cached("SELECT title FROM notes WHERE path = ?1")
            .and_then(|mut s| s.query_row([path], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))
    }

    /// Every indexed path.
    pub fn paths(&self) -> Result<HashSet<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM notes")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// Note `id`'s title and plain-text body (empty when it is gone).
    pub fn title_and_body(&self, id: i64) -> Result<(String, String)> {
        self.conn
            .prepare_cached("SELECT title, body FROM notes_fts WHERE rowid = ?1")
            .and_then(|mut s| {
                s.query_row([id], |r| Ok((show(r.get(0)?), show(r.get(1)?))))
                    .optional()
            })
            .map(Option::unwrap_or_default)
            .map_err(|e| self.err(e))
    }

    /// Every note's title key (its title as lowercase words) and path.
    pub fn title_keys(&self) -> Result<Vec<(String, String)>> {
        self.conn
            .prepare_cached("SELECT title_key, path FROM notes ORDER BY path")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .and_then(|rows| rows.collect())
            })
            .map_err(|e| self.err(e))
    }

    /// The id of the note at `path`, if it is indexed.
    pub fn note_id(&self, path: &str) -> Result<Option<i64>> {
        self.conn
            .prepare_cached("SELECT id FROM notes WHERE path = ?1")
            .and_then(|mut s| s.query_row([path], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))
    }

    /// The stored vector of the passage text with SHA-256 `hash`, if embedded.
    pub fn vector(&self, hash: &[u8]) -> Result<Option<Vec<u8>>> {
        self.conn
            .prepare_cached("SELECT vec FROM vectors WHERE hash = ?1")
            .and_then(|mut s| s.query_row([hash], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))
    }

    /// The passage with id `id`.
    pub fn chunk(&self, id: i64) -> Result<Option<ChunkRow>> {
        self.conn
            .prepare_cached("SELECT text, heading, line, end_line FROM chunks WHERE id = ?1")
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    Ok(ChunkRow {
                        text: r.get(0)?,
                        heading: r.get(1)?,
                        line: r.get(2)?,
                        end_line: r.get(3)?,
                    })
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }

    /// The notes `filters` allow, or `None` when there is no filter.
    pub fn allowed(&self, filters: &Filters) -> Result<Option<HashSet<i64>>> {
        if filters.is_empty() {
            return Ok(None);
        }
        let mut sql = "SELECT n.id FROM notes n WHERE 1".to_string();
        let mut args = Vec::new();
        filters.push_sql(&mut sql, &mut args);
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map(params_from_iter(args), |r| r.get(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<HashSet<i64>>>())
            .map_err(|e| self.err(e))?;
        Ok(Some(ids))
    }

    /// Every note as the knowledge base sees it, with its links, by path.
    pub fn kb_entries(&self) -> Result<Vec<crate::kb::Entry>> {
        let mut links: std::collections::HashMap<i64, Vec<crate::kb::Link>> = Default::default();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT note_id, target, line, heading FROM links ORDER BY note_id, line, rowid",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, u32>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (id, target, line, heading) = row.map_err(|e| self.err(e))?;
            links.entry(id).or_default().push(crate::kb::Link {
                target,
                heading,
                line,
            });
        }
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT id, path, type, title, fields, problem, {} FROM notes n ORDER BY path",
                super::NOTE_DATE
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let fields: String = r.get(4)?;
                Ok((
                    r.get::<_, i64>(0)?,
                    crate::kb::Entry {
                        path: r.get(1)?,
                        kind: r.get(2)?,
                        title: r.get(3)?,
                        fields: serde_json::from_str(&fields).unwrap_or_default(),
                        problem: r.get(5)?,
                        date: r.get(6)?,
                        links: Vec::new(),
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.map(|row| {
            let (id, mut entry) = row.map_err(|e| self.err(e))?;
            entry.links = links.remove(&id).unwrap_or_default();
            Ok(entry)
        })
        .collect()
    }

    /// Every frontmatter field name some note has, sorted.
    pub fn field_names(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT j.key FROM notes n, json_each(n.fields) j ORDER BY 1")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// The distinct note types, sorted.
    pub fn types(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT type FROM notes ORDER BY type")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// Whether any note carries `tag` (as `--tag` matches it: case aside, no leading `#`).
    pub fn has_tag(&self, tag: &str) -> Result<bool> {
        self.conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM notes n, json_each(n.tags)
                 WHERE json_each.value = ?1 COLLATE NOCASE)",
            )
            .and_then(|mut s| s.query_row([tag.trim_start_matches('#')], |r| r.get(0)))
            .map_err(|e| self.err(e))
    }

    /// Reads every page of the index file and checks its structure (SQLite's
    /// `quick_check`: the b-trees, their pages and records, not that each index agrees with
    /// its table): damage anywhere in the file is the index's "damaged" error, naming
    /// `--rebuild`. Searches meet damage only on the pages they read; this reads them all
    /// (about 50 ms for a 35 MB index here, seconds for a gigabyte).
    pub fn quick_check(&self) -> Result<()> {
        let first: String = self
            .conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if first == "ok" {
            return Ok(());
        }
        // `*** in database main ***\nTree 14 page 14: ...`: one line, without the banner.
        let problem = first
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("***"))
            .collect::<Vec<_>>()
            .join("; ");
        Err(self.err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(problem),
        )))
    }

    /// How many notes are indexed.
    pub fn note_count(&self) -> Result<u64> {
        self.count("SELECT COUNT(*) FROM notes")
    }

    /// How many notes were read with a problem when indexed (invalid UTF-8, frontmatter that
    /// does not parse): `brain check` names them.
    pub fn problem_count(&self) -> Result<u64> {
        self.count("SELECT COUNT(*) FROM notes WHERE problem IS NOT NULL")
    }

    /// Notes, passages and notes per type.
    pub fn counts(&self) -> Result<Counts> {
        let mut types = BTreeMap::new();
        let mut stmt = self
            .conn
            .prepare_cached("SELECT type, COUNT(*) FROM notes GROUP BY type")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (k, v) = row.map_err(|e| self.err(e))?;
            types.insert(k, v);
        }
        Ok(Counts {
            notes: self.note_count()?,
            chunks: self.passage_count()?,
            types,
        })
    }

    /// How many passages the index holds.
    pub fn passage_count(&self) -> Result<u64> {
        self.count("SELECT COUNT(*) FROM chunks")
    }

    /// Distinct passage texts: what a switch of model has to embed.
    pub fn distinct_passages(&self) -> Result<u64> {
        self.count("SELECT COUNT(DISTINCT hash) FROM chunks")
    }

    fn count(&self, sql: &str) -> Result<u64> {
        self.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// A `meta` value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        super::meta(&self.conn, key).map_err(|e| self.err(e))
    }

    /// The model and dimension the stored vectors belong to.
    pub fn stored_model(&self) -> Result<Option<(String, usize)>> {
        vectors::stored_model(&self.conn).map_err(|e| self.err(e))
    }

    /// The notes version (moves whenever a note's indexed text changes), as this read
    /// transaction sees it.
    pub fn notes_version(&self) -> Result<NotesVersion> {
        let counter = super::counter(&self.conn, super::NOTES_VERSION).map_err(|e| self.err(e))?;
        // FTS5's structure record (row 10 of its data table) counts every segment written,
        // so it moves with every change to the full-text index, also one made by a brain
        // older than the counter.
        let fts = self
            .conn
            .prepare_cached("SELECT block FROM notes_fts_data WHERE id = 10")
            .and_then(|mut s| s.query_row([], |r| r.get::<_, Vec<u8>>(0)).optional())
            .map_err(|e| self.err(e))?
            .unwrap_or_default();
        Ok(NotesVersion { counter, fts })
    }

    /// The vectors version (moves whenever chunks or vectors change).
    pub fn vectors_version(&self) -> Result<i64> {
        vectors::version(&self.conn).map_err(|e| self.err(e))
    }

    /// Distinct passages without a vector.
    pub fn pending_count(&self) -> Result<u64> {
        vectors::pending_count(&self.conn).map_err(|e| self.err(e))
    }

    /// Every (chunk id, note id, vector bytes), in chunk order.
    pub fn for_each_vector(&self, f: impl FnMut(i64, i64, &[u8])) -> Result<()> {
        vectors::for_each_vector(&self.conn, f).map_err(|e| self.err(e))
    }

    /// Every passage as `(chunks.id, note_id)`, in chunk id order (see
    /// [`vectors::passage_rows`]).
    pub fn passage_rows(&self) -> Result<Vec<(i64, i64)>> {
        vectors::passage_rows(&self.conn).map_err(|e| self.err(e))
    }

    /// The passages of note `note_id` that have a vector, in id order.
    pub fn embedded_chunks(&self, note_id: i64) -> Result<Vec<i64>> {
        vectors::embedded_chunks(&self.conn, note_id).map_err(|e| self.err(e))
    }

    /// The exact f32 vectors of `chunk_ids`, by chunk id (passages without one are absent).
    pub fn vectors_of(
        &self,
        chunk_ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, Vec<f32>>> {
        vectors::of_chunks(&self.conn, chunk_ids).map_err(|e| self.err(e))
    }

    /// Totals over the recall log.
    pub fn recall_totals(&self) -> Result<RecallTotals> {
        recall::totals(&self.conn).map_err(|e| self.err(e))
    }

    /// Full-text matches of `q`, best first, restricted by `filters`.
    pub fn fts_match(&self, q: &FtsQuery<'_>, filters: &Filters) -> Result<Vec<FtsRow>> {
        let (w_title, w_tags, w_body) = q.weights;
        let rank = format!("bm25(notes_fts, {w_title:.1}, {w_tags:.1}, {w_body:.1})");
        let mut sql = format!(
            "SELECT f.rowid, -{rank} FROM notes_fts f JOIN notes n ON n.id = f.rowid
         WHERE notes_fts MATCH ?1"
        );
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(q.expr.to_string())];
        if let Some(named) = q.named {
            args.push(SqlValue::Text(named.to_string()));
            sql.push_str(
                " AND f.rowid IN (SELECT id FROM notes WHERE title_key = ?2 OR stem_key = ?2)",
            );
        }
        filters.push_sql(&mut sql, &mut args);
        sql.push_str(&format!(" ORDER BY {rank} LIMIT {}", q.limit));
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_map(params_from_iter(args), |r| {
            Ok(FtsRow {
                note_id: r.get(0)?,
                score: r.get(1)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(e))
    }

    /// The notes matching `expr`.
    pub fn fts_ids(&self, expr: &str) -> Result<HashSet<i64>> {
        self.conn
            .prepare_cached("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?1")
            .and_then(|mut s| {
                s.query_map([expr], |r| r.get(0))
                    .and_then(|rows| rows.collect())
            })
            .map_err(|e| self.err(e))
    }

    /// The lowercase bodies of up to `limit` notes matching `expr`, best first.
    pub fn fts_bodies(&self, expr: &str, limit: usize) -> Result<Vec<String>> {
        self.conn
            .prepare_cached(
                "SELECT lower(body) FROM notes_fts WHERE notes_fts MATCH ?1 ORDER BY rank LIMIT ?2",
            )
            .and_then(|mut s| {
                s.query_map(rusqlite::params![expr, limit as i64], |r| {
                    r.get(0).map(show)
                })
                .and_then(|rows| rows.collect())
            })
            .map_err(|e| self.err(e))
    }

    /// BM25 scores (higher is better) of the notes `ids` that match `expr`; a note that
    /// does not match has no entry.
    pub fn fts_scores(
        &self,
        expr: &str,
        weights: (f64, f64, f64),
        ids: &[i64],
    ) -> Result<Vec<(i64, f64)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: HashSet<i64> = ids.iter().copied().collect();
        // One pass over the matches, filtered here: `rowid IN (...)` would run the whole
        // MATCH once per id (measured: 8-20 ms for 50 ids over 1.7k notes, against ~1 ms).
        let mut out = self.fts_all_scores(expr, weights, &Filters::default())?;
        out.retain(|(id, _)| wanted.contains(id));
        Ok(out)
    }

    /// Every note matching `expr` and `filters` with its BM25 score (higher is better), in
    /// rowid order. The pass neither sorts in SQL nor, without filters, joins: at 100k notes
    /// a common word matches most of them, and a join or a sort per match costs more than
    /// the score itself. (With filters the join keeps `bm25()` to the notes they allow.)
    pub fn fts_all_scores(
        &self,
        expr: &str,
        weights: (f64, f64, f64),
        filters: &Filters,
    ) -> Result<Vec<(i64, f64)>> {
        let (w_title, w_tags, w_body) = weights;
        let rank = format!("-bm25(notes_fts, {w_title:.1}, {w_tags:.1}, {w_body:.1})");
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(expr.to_string())];
        let sql = if filters.is_empty() {
            format!("SELECT rowid, {rank} FROM notes_fts WHERE notes_fts MATCH ?1")
        } else {
            let mut sql = format!(
                "SELECT f.rowid, {rank} FROM notes_fts f JOIN notes n ON n.id = f.rowid
                 WHERE notes_fts MATCH ?1"
            );
            filters.push_sql(&mut sql, &mut args);
            sql
        };
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut out: Vec<(i64, f64)> = stmt
            .query_map(params_from_iter(args), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        // FTS5 yields rowid order; a plan that puts the join first might not.
        if !out.is_sorted_by_key(|&(id, _)| id) {
            out.sort_unstable_by_key(|&(id, _)| id);
        }
        Ok(out)
    }

    /// How many notes FTS5 holds, from its averages record (one row read).
    pub fn fts_rows(&self) -> Result<i64> {
        let totals = bm25_parts::totals(&self.conn).map_err(|e| self.err(e))?;
        Ok(totals.map_or(0, |(rows, _)| rows))
    }

    /// FTS5's length of every note and the totals `bm25()` averages over, as this read
    /// transaction sees them; `None` when FTS5's records disagree (see [`DocLengths`]).
    /// From the lengths file when it was written at this transaction's notes version, else
    /// from FTS5, writing the file for the next process (see `index::lengths_file`).
    pub fn doc_lengths(&self) -> Result<Option<DocLengths>> {
        let version = self.notes_version()?;
        // Without an identity no file can be trusted to be this index's.
        let index_id: Option<i64> = self.meta(super::INDEX_ID)?.and_then(|v| v.parse().ok());
        let key = index_id.map(|index_id| lengths_file::Key {
            index_id,
            version: version.parts(),
        });
        let path = self.index.lengths_path();
        if let Some(held) = key.and_then(|key| lengths_file::read(&path, key)) {
            return Ok(Some(held));
        }
        let read = DocLengths::read(&self.conn).map_err(|e| self.err(e))?;
        if let (Some(lengths), Some(key)) = (&read, key) {
            // A process that cannot write it (a read-only data dir) only loses speed.
            if let Err(e) = lengths_file::write(&path, lengths, key) {
                tracing::debug!(error = %e, path = %path.display(), "lengths file not written");
            }
        }
        Ok(read)
    }

    /// What [`Reader::fts_all_scores`] gives for `expr` (one phrase, no filters) with
    /// `weights`, to the last bit, computed from `lengths` instead of by `bm25()` (about
    /// three times faster for a common word); `None` when `lengths` were read from other
    /// notes than this transaction sees (or FTS5's answer is not frequencies).
    pub fn phrase_scores(
        &self,
        expr: &str,
        weights: (f64, f64, f64),
        lengths: &DocLengths,
    ) -> Result<Option<Vec<(i64, f64)>>> {
        let (w_title, w_tags, w_body) = weights;
        let frequencies = PHRASE_FREQUENCIES.to_string_lossy();
        let sql = format!(
            "SELECT {frequencies}(notes_fts, {w_title:.1}, {w_tags:.1}, {w_body:.1})
             FROM notes_fts WHERE notes_fts MATCH ?1 LIMIT 1"
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        // Unpacked from SQLite's own copy of the blob: for a word in most notes it is
        // megabytes, and one copy fewer.
        let hits = stmt
            .query_row([expr], |r| {
                Ok(bm25_parts::unpack(
                    r.get_ref(0)?.as_blob_or_null()?.unwrap_or_default(),
                ))
            })
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(mut hits) = hits.unwrap_or(Some(Vec::new())) else {
            return Ok(None);
        };
        if !hits.is_sorted_by_key(|&(id, _)| id) {
            hits.sort_unstable_by_key(|&(id, _)| id);
        }
        Ok(lengths.scores(&hits))
    }

    /// The lowercase title of each of `ids` and, when `with_body`, its lowercase body (else
    /// empty): what the exact-evidence checks read, in one query. A note that is gone is
    /// absent.
    pub fn lower_texts(
        &self,
        ids: &[i64],
        with_body: bool,
    ) -> Result<std::collections::HashMap<i64, (String, String)>> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let body = if with_body { "lower(f.body)" } else { "''" };
        // Integers only, so the list is safe to write into the statement.
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let sql = format!(
            "SELECT n.id, lower(n.title), {body} FROM notes n JOIN notes_fts f ON f.rowid = n.id
             WHERE n.id IN ({list})"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, show(r.get(2)?)))))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// How many notes match `expr`.
    pub fn fts_count(&self, expr: &str) -> Result<u64> {
        self.conn
            .prepare_cached("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?1")
            .and_then(|mut s| s.query_row([expr], |r| r.get::<_, i64>(0)))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// How many notes match `expr`, counted up to `limit`: whether a word is rare needs
    /// only that, and a common word's whole list is the cost of a full count.
    pub fn fts_count_upto(&self, expr: &str, limit: u64) -> Result<u64> {
        self.conn
            .prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH ?1 LIMIT ?2)",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![expr, limit as i64], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// Whether any note matches `expr` (the first match is enough).
    pub fn fts_any(&self, expr: &str) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM notes_fts WHERE notes_fts MATCH ?1 LIMIT 1")
            .and_then(|mut s| s.exists([expr]))
            .map_err(|e| self.err(e))
    }

    /// Whether note `id` matches `expr`.
    pub fn fts_has(&self, expr: &str, id: i64) -> Result<bool> {
        self.conn
            .prepare_cached(
                "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = ?2",
            )
            .and_then(|mut s| s.query_row(rusqlite::params![expr, id], |r| r.get::<_, i64>(0)))
            .map(|n| n > 0)
            .map_err(|e| self.err(e))
    }

    /// FTS5's snippet of note `id`'s body for `expr` (matches between `open` and `close`),
    /// and the whole body with every match between `\u{1}` and `\u{2}`: what a caller needs
    /// to find the line a snippet starts on. `None` when the note does not match.
    pub fn fts_snippet(
        &self,
        expr: &str,
        id: i64,
        open: char,
        close: char,
    ) -> Result<Option<(String, String)>> {
        // The window is counted in tokens, and a CJK character is one (`cjk`): 24 of them
        // were 24 characters, where 24 English words fill a line.
        let tokens = match expr.chars().any(crate::text::cjk::is_cjk) {
            true => 64,
            false => 24,
        };
        self.conn
            .prepare_cached(&format!(
                "SELECT snippet(notes_fts, 2, '{open}', '{close}', '...', {tokens}),
                        highlight(notes_fts, 2, char(1), char(2))
                 FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = ?2"
            ))
            .and_then(|mut s| {
                s.query_row(rusqlite::params![expr, id], |r| {
                    Ok((show(r.get(0)?), show(r.get(1)?)))
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        // A read transaction has nothing to keep; ending it returns the connection to the
        // pool in autocommit mode (a connection left inside a transaction is not reused).
        let _ = self.conn.execute_batch("COMMIT");
    }
}
