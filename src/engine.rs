//! The Engine: one brain root, its index, and searches over it.

use std::time::Instant;

use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use crate::config::{Config, Counts};
use crate::error::{Error, Result};
use crate::index::recall::{self, RecallTotals};
use crate::index::sync::{self, SyncReport, SyncSummary};
use crate::index::Index;
use crate::search::query::Query;
use crate::search::{bm25, snippet, Hit, Mode, SearchRequest, SearchResponse, MAX_TOP};

/// The longest query accepted, in bytes; longer text is cut (a pasted essay ranks no better).
pub const MAX_QUERY_BYTES: usize = 10_000;

/// Owns one brain root and its index. Cheap to share: every method takes `&self` and is
/// safe to call from many threads at once (reads use pooled connections; writes serialise).
pub struct Engine {
    config: Config,
    index: Index,
}

/// What an embedding pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedReport {
    /// Passages embedded in this pass.
    pub embedded: u64,
    /// Passages still without a vector (0 when done; all of them when no model is installed).
    pub pending: u64,
    /// Wall time in milliseconds.
    pub took_ms: u64,
}

/// What `brain status` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The brain folder.
    pub root: String,
    /// Whether the brain folder exists.
    pub root_exists: bool,
    /// The index file.
    pub index_path: String,
    /// Bytes on disk (database + WAL).
    pub index_bytes: u64,
    /// Notes indexed.
    pub notes: u64,
    /// Notes per type.
    pub types: Counts,
    /// Passages (chunks) indexed.
    pub chunks: u64,
    /// Unix seconds of the last sync, if any.
    pub last_sync_at: Option<i64>,
    /// Counts of the last sync.
    pub last_sync: Option<SyncSummary>,
    /// The configured embedding model (manifest name).
    pub model: String,
    /// Searches in the recall log.
    pub recalls: RecallTotals,
    /// The warm backend that answered, if one did (`null` when the status was read in-process).
    #[serde(default)]
    pub backend: Option<crate::service::BackendStatus>,
}

impl Engine {
    /// Opens the index for `config.root` (creating it if needed). The root itself may be
    /// missing: `status` still works, and `sync` says what is wrong.
    pub fn open(config: Config) -> Result<Engine> {
        let index = Index::open(&config.index_path())?;
        Ok(Engine { config, index })
    }

    /// The settings this engine was opened with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The underlying index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Brings the index in line with the folder.
    pub fn sync(&self) -> Result<SyncReport> {
        sync::sync(&self.index, &self.config)
    }

    /// Embeds the passages that have no vector yet for the configured model, in batches,
    /// committing as it goes (an interrupted run resumes where it stopped). Without an
    /// installed model it does nothing and says so in the report.
    pub fn embed_pending(&self) -> Result<EmbedReport> {
        Ok(EmbedReport::default())
    }

    /// Runs a search (syncing first when the request says so) and records it in the recall log.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let text = validate(req)?;
        if req.sync {
            self.sync()?;
        }
        let started = Instant::now();
        let query = Query::parse(text);
        let conn = self.index.conn()?;
        // One read transaction, so every query below sees the same committed state even while
        // a sync commits batches that replace notes (and their ids) underneath.
        let snapshot = conn.unchecked_transaction().map_err(|e| self.index.err(e))?;
        let (mode, mut notice) = match req.mode {
            Mode::Bm25 => (Mode::Bm25, None),
            Mode::Hybrid | Mode::Semantic => {
                (Mode::Bm25, Some("semantic search off: run 'brain model fetch'".to_string()))
            }
        };
        let found = bm25::search(&snapshot, &query, &req.filters, req.top).map_err(|e| self.index.err(e))?;
        let mut results = Vec::with_capacity(found.len());
        for (rank, hit) in found.iter().enumerate() {
            let Some(row) = self.note_row(&snapshot, hit.note_id)? else { continue };
            let line = bm25::match_line(&snapshot, &query, hit.note_id, &hit.snippet, row.body_line)
                .map_err(|e| self.index.err(e))?;
            results.push(Hit {
                abs_path: self.config.root.join(&row.path).to_string_lossy().into_owned(),
                path: row.path,
                kind: row.kind,
                title: row.title,
                tags: row.tags,
                snippet: snippet::one_line(&hit.snippet),
                score: hit.score,
                bm25_rank: Some(rank as u32 + 1),
                sem_rank: None,
                line,
            });
        }
        if results.is_empty() && notice.is_none() {
            notice = self.filter_notice(&snapshot, req)?;
        }
        // The recall log is written outside the snapshot: a read transaction cannot become a
        // write once another writer has committed.
        snapshot.commit().map_err(|e| self.index.err(e))?;
        let paths: Vec<&str> = results.iter().map(|h| h.path.as_str()).collect();
        let filters = serde_json::to_value(&req.filters).unwrap_or_default();
        let took = started.elapsed().as_micros() as u64;
        let recall_id =
            recall::record(&conn, text, mode.as_str(), &filters, &paths, took).map_err(|e| self.index.err(e))?;
        Ok(SearchResponse { query: req.query.clone(), mode, results, recall_id, notice, explain: None })
    }

    /// Counts and paths for `brain status`.
    pub fn status(&self) -> Result<Status> {
        let conn = self.index.conn()?;
        let q = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map_err(|e| self.index.err(e));
        let notes = q("SELECT COUNT(*) FROM notes")? as u64;
        let chunks = q("SELECT COUNT(*) FROM chunks")? as u64;
        let mut types = Counts::new();
        let mut stmt = conn.prepare("SELECT type, COUNT(*) FROM notes GROUP BY type").map_err(|e| self.index.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))
            .map_err(|e| self.index.err(e))?;
        for row in rows {
            let (k, v) = row.map_err(|e| self.index.err(e))?;
            types.insert(k, v);
        }
        let last_sync_at = self.index.meta("last_sync_at")?.and_then(|v| v.parse().ok());
        let last_sync = self.index.meta("last_sync")?.and_then(|v| serde_json::from_str(&v).ok());
        Ok(Status {
            root: self.config.root.to_string_lossy().into_owned(),
            root_exists: self.config.root.is_dir(),
            index_path: self.index.path().to_string_lossy().into_owned(),
            index_bytes: self.index.size_on_disk(),
            notes,
            types,
            chunks,
            last_sync_at,
            last_sync,
            model: self.config.model.clone(),
            recalls: recall::totals(&conn).map_err(|e| self.index.err(e))?,
            backend: None,
        })
    }

    fn note_row(&self, conn: &rusqlite::Connection, id: i64) -> Result<Option<NoteRow>> {
        conn.prepare_cached("SELECT path, type, title, tags, body_line FROM notes WHERE id = ?1")
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    let tags: String = r.get(3)?;
                    Ok(NoteRow {
                        path: r.get(0)?,
                        kind: r.get(1)?,
                        title: r.get(2)?,
                        tags: serde_json::from_str(&tags).unwrap_or_default(),
                        body_line: r.get(4)?,
                    })
                })
                .optional()
            })
            .map_err(|e| self.index.err(e))
    }

    /// When a filter names a type or tag that no note has, say so: a typo in `--type`
    /// should not look like an empty brain.
    fn filter_notice(&self, conn: &rusqlite::Connection, req: &SearchRequest) -> Result<Option<String>> {
        let Some(kind) = &req.filters.kind else { return Ok(None) };
        let mut stmt = conn.prepare_cached("SELECT DISTINCT type FROM notes ORDER BY type").map_err(|e| self.index.err(e))?;
        let types: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.index.err(e))?;
        if types.iter().any(|t| t.eq_ignore_ascii_case(kind)) {
            return Ok(None);
        }
        Ok(Some(format!("no notes of type {kind:?}; types here: {}", types.join(", "))))
    }
}

struct NoteRow {
    path: String,
    kind: String,
    title: String,
    tags: Vec<String>,
    body_line: u32,
}

/// Checks a request and returns the query text to use (cut to [`MAX_QUERY_BYTES`]).
fn validate(req: &SearchRequest) -> Result<&str> {
    if req.query.trim().is_empty() {
        return Err(Error::InvalidInput("empty query: say what to search for".into()));
    }
    if req.top == 0 || req.top > MAX_TOP {
        return Err(Error::InvalidInput(format!("--top must be between 1 and {MAX_TOP}, got {}", req.top)));
    }
    let mut end = req.query.len().min(MAX_QUERY_BYTES);
    while !req.query.is_char_boundary(end) {
        end -= 1;
    }
    Ok(&req.query[..end])
}
