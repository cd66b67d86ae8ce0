//! The Engine: one brain root, its index, its (optional) embedding model, and searches.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::config::{Config, Counts};
use crate::embed::{self, Embedder};
use crate::error::{Error, Result};
use crate::index::recall::{self, RecallTotals};
use crate::index::sync::{self, SyncReport, SyncSummary};
use crate::index::{vectors, Index};
use crate::search::bm25::{self, Bm25Hit};
use crate::search::evidence::{self, Evidence};
use crate::search::fuse::{self, Fused, Weights};
use crate::search::query::Query;
use crate::search::semantic::{Matrix, SemHit};
use crate::search::{snippet, Filters, Hit, Mode, SearchRequest, SearchResponse, MAX_TOP};

/// The longest query accepted, in bytes; longer text is cut (a pasted essay ranks no better).
pub const MAX_QUERY_BYTES: usize = 10_000;

/// A search that syncs first also embeds up to this many new passages on the spot (a few
/// edited notes); more than that is `brain index`'s job, or the backend's.
pub const INLINE_EMBED_MAX: usize = 64;

/// Passages embedded per batch (and per committed transaction).
const EMBED_BATCH: usize = 64;

/// The line printed when hybrid search has to do without a model.
pub const NO_MODEL_NOTICE: &str = "semantic search off: run 'brain model fetch'";

/// Owns one brain root and its index. Cheap to share: every method takes `&self` and is
/// safe to call from many threads at once (reads use pooled connections; writes serialise).
pub struct Engine {
    config: Config,
    index: Index,
    semantic: Mutex<SemanticCache>,
}

#[derive(Default)]
struct SemanticCache {
    embedder: Option<Arc<dyn Embedder>>,
    matrix: Option<(i64, Arc<Matrix>)>,
    /// Passages without a vector, at a vectors version: counting them scans every chunk
    /// against the vectors table (tens of ms on 8k passages), too slow for every query.
    pending: Option<(i64, u64)>,
}

/// What an embedding pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedReport {
    /// The model that embedded, if one is installed.
    pub model: Option<String>,
    /// Passages embedded in this pass.
    pub embedded: u64,
    /// Passages still without a vector (0 when done; all of them when no model is installed).
    pub pending: u64,
    /// True when vectors of another model were cleared first.
    pub reembedded_all: bool,
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
    /// Distinct passages still waiting for a vector.
    pub pending_chunks: u64,
    /// Unix seconds of the last sync, if any.
    pub last_sync_at: Option<i64>,
    /// Counts of the last sync.
    pub last_sync: Option<SyncSummary>,
    /// The configured embedding model (manifest name).
    pub model: String,
    /// Whether its files are installed.
    pub model_installed: bool,
    /// Where the model runs (`cpu`, `metal`, `cuda:0`).
    pub device: String,
    /// The model the stored vectors belong to.
    pub embedded_with: Option<String>,
    /// Searches in the recall log.
    pub recalls: RecallTotals,
    /// The warm backend that answered, if one did (`null` when the status was read in-process).
    #[serde(default)]
    pub backend: Option<crate::service::BackendStatus>,
}

/// A loaded model and the vector matrix it can be searched with.
type SemanticReady = (Arc<dyn Embedder>, Arc<Matrix>);

/// One ranked note before presentation.
struct Ranked {
    note_id: i64,
    score: f64,
    bm25_rank: Option<u32>,
    sem_rank: Option<u32>,
    /// The best semantic passage, used for snippet and line when the semantic list ranked
    /// the note at least as well as the keyword list.
    chunk: Option<i64>,
}

impl Engine {
    /// Opens the index for `config.root` (creating it if needed). The root itself may be
    /// missing: `status` still works, and `sync` says what is wrong.
    pub fn open(config: Config) -> Result<Engine> {
        let index = Index::open(&config.index_path())?;
        Ok(Engine {
            config,
            index,
            semantic: Mutex::new(SemanticCache::default()),
        })
    }

    /// The settings this engine was opened with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The underlying index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Brings the index in line with the folder (notes, full-text index and passages; the
    /// vectors of new passages are made by [`Engine::embed_pending`]).
    pub fn sync(&self) -> Result<SyncReport> {
        sync::sync(&self.index, &self.config)
    }

    /// The configured model, verified and loaded once; `None` when it is not installed.
    pub fn embedder(&self) -> Result<Option<Arc<dyn Embedder>>> {
        if let Some(e) = &self.cache().embedder {
            return Ok(Some(e.clone()));
        }
        if !embed::is_installed(&self.config) {
            return Ok(None);
        }
        // Loading takes a while; the lock is not held meanwhile, so searches in BM25 mode
        // are not held up. Two racing loads are harmless: the first one stored wins.
        let loaded = embed::load(&self.config)?;
        Ok(Some(self.cache().embedder.get_or_insert(loaded).clone()))
    }

    /// Embeds the passages that have no vector yet for the configured model, in batches,
    /// committing as it goes (an interrupted run resumes where it stopped). Without an
    /// installed model it does nothing and reports everything as pending.
    pub fn embed_pending(&self) -> Result<EmbedReport> {
        self.embed_pending_with(usize::MAX, &mut |_, _| true)
    }

    /// [`Engine::embed_pending`], embedding at most `max` passages and reporting
    /// `(done, total)` after every committed batch; returning `false` from `progress` stops
    /// after that batch (what a backend that is shutting down does).
    pub fn embed_pending_with(
        &self,
        max: usize,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<EmbedReport> {
        let started = Instant::now();
        let Some(embedder) = self.embedder()? else {
            let conn = self.index.conn()?;
            let pending = vectors::pending_count(&conn).map_err(|e| self.index.err(e))?;
            return Ok(EmbedReport {
                pending,
                ..Default::default()
            });
        };
        let reembedded_all = {
            let mut w = self.index.writer()?;
            let tx = w.conn.transaction().map_err(|e| self.index.err(e))?;
            let cleared = vectors::claim_for_model(&tx, embedder.name(), embedder.dim())
                .map_err(|e| self.index.err(e))?;
            tx.commit().map_err(|e| self.index.err(e))?;
            cleared
        };
        let conn = self.index.conn()?;
        let total = vectors::pending_count(&conn).map_err(|e| self.index.err(e))?;
        let mut done = 0u64;
        while (done as usize) < max {
            let want = EMBED_BATCH.min(max - done as usize);
            let batch = vectors::pending(&conn, want).map_err(|e| self.index.err(e))?;
            if batch.is_empty() {
                break;
            }
            let texts: Vec<&str> = batch.iter().map(|p| p.text.as_str()).collect();
            let vecs = embedder.embed_documents(&texts)?;
            if vecs.len() != batch.len() || vecs.iter().any(|v| v.len() != embedder.dim()) {
                return Err(Error::Embed(format!(
                    "{} returned vectors of the wrong shape",
                    embedder.name()
                )));
            }
            let hashes: Vec<Vec<u8>> = batch.into_iter().map(|p| p.hash).collect();
            let mut w = self.index.writer()?;
            let tx = w.conn.transaction().map_err(|e| self.index.err(e))?;
            vectors::store(&tx, &hashes, &vecs).map_err(|e| self.index.err(e))?;
            tx.commit().map_err(|e| self.index.err(e))?;
            done += hashes.len() as u64;
            if !progress(done, total) {
                break;
            }
        }
        {
            let mut w = self.index.writer()?;
            let tx = w.conn.transaction().map_err(|e| self.index.err(e))?;
            vectors::collect_garbage(&tx).map_err(|e| self.index.err(e))?;
            tx.commit().map_err(|e| self.index.err(e))?;
        }
        let pending = vectors::pending_count(&conn).map_err(|e| self.index.err(e))?;
        Ok(EmbedReport {
            model: Some(embedder.name().to_string()),
            embedded: done,
            pending,
            reembedded_all,
            took_ms: started.elapsed().as_millis() as u64,
        })
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
        let mut notices: Vec<String> = Vec::new();

        let semantic = match req.mode {
            Mode::Bm25 => None,
            Mode::Hybrid | Mode::Semantic => {
                match self.semantic_ready(&conn, req.sync, &mut notices)? {
                    Some(ready) => Some(ready),
                    None if req.mode == Mode::Semantic => {
                        return Err(Error::InvalidInput(format!(
                            "--mode semantic needs the embedding model: {}",
                            notices
                                .join("; ")
                                .trim_start_matches("semantic search off: ")
                        )))
                    }
                    None => None,
                }
            }
        };
        let mode = if semantic.is_some() {
            req.mode
        } else {
            Mode::Bm25
        };
        // One read transaction, so every query below sees the same committed state even while
        // a sync commits batches that replace notes underneath. (Inline embedding, a write,
        // happened above, before it.)
        let snapshot = conn
            .unchecked_transaction()
            .map_err(|e| self.index.err(e))?;
        let conn: &Connection = &snapshot;
        let pool = if mode == Mode::Hybrid {
            (4 * req.top).max(50)
        } else {
            req.top
        };

        let bm25_hits = match mode {
            Mode::Semantic => Vec::new(),
            _ => bm25::search(conn, &query, &req.filters, pool).map_err(|e| self.index.err(e))?,
        };
        let sem_hits = match &semantic {
            Some((embedder, matrix)) => {
                let qv = embedder.embed_query(text)?;
                let allowed = self.allowed_notes(conn, &req.filters)?;
                matrix.top_notes(&qv, pool, allowed.as_ref())
            }
            None => Vec::new(),
        };

        let mut explain = None;
        let ranked: Vec<Ranked> = match mode {
            Mode::Bm25 => bm25_hits
                .iter()
                .enumerate()
                .map(|(i, h)| Ranked {
                    note_id: h.note_id,
                    score: h.score,
                    bm25_rank: Some(i as u32 + 1),
                    sem_rank: None,
                    chunk: None,
                })
                .collect(),
            Mode::Semantic => sem_hits
                .iter()
                .enumerate()
                .map(|(i, h)| Ranked {
                    note_id: h.note_id,
                    score: h.score as f64,
                    bm25_rank: None,
                    sem_rank: Some(i as u32 + 1),
                    chunk: Some(h.chunk_id),
                })
                .collect(),
            Mode::Hybrid => {
                let evidence = self.evidence(conn, &query, &bm25_hits, &sem_hits)?;
                let weights = weigh(&evidence);
                let fused = fuse::fuse(&bm25_hits, &sem_hits, &weights);
                if req.explain {
                    explain = Some((evidence, weights, fused.clone()));
                }
                fused
                    .into_iter()
                    .map(|f| Ranked {
                        note_id: f.note_id,
                        score: f.score,
                        bm25_rank: f.bm25_rank,
                        sem_rank: f.sem_rank,
                        chunk: f.chunk_id.filter(|_| {
                            f.sem_rank.unwrap_or(u32::MAX) <= f.bm25_rank.unwrap_or(u32::MAX)
                        }),
                    })
                    .collect()
            }
        };

        let mut results = Vec::with_capacity(req.top);
        for r in ranked.iter().take(req.top) {
            if let Some(hit) = self.present(conn, &query, r)? {
                results.push(hit);
            }
        }
        if results.is_empty() {
            notices.extend(self.filter_notice(conn, req)?);
        }
        let explain = if req.explain {
            Some(self.explain_json(conn, mode, &bm25_hits, &sem_hits, explain, req.top)?)
        } else {
            None
        };
        // The recall log is written outside the snapshot: a read transaction cannot become a
        // write once another writer has committed.
        snapshot.commit().map_err(|e| self.index.err(e))?;
        let conn = self.index.conn()?;
        let paths: Vec<&str> = results.iter().map(|h| h.path.as_str()).collect();
        let filters = serde_json::to_value(&req.filters).unwrap_or_default();
        let took = started.elapsed().as_micros() as u64;
        let recall_id = recall::record(&conn, text, mode.as_str(), &filters, &paths, took)
            .map_err(|e| self.index.err(e))?;
        let notice = (!notices.is_empty()).then(|| notices.join("; "));
        Ok(SearchResponse {
            query: req.query.clone(),
            mode,
            results,
            recall_id,
            notice,
            explain,
        })
    }

    /// Reads a note, or the lines around a hit, from the brain folder (never outside it).
    pub fn get(&self, note: &crate::passage::NoteRef) -> Result<crate::passage::Passage> {
        crate::passage::read(&self.config.root, note)
    }

    /// Counts and paths for `brain status`.
    pub fn status(&self) -> Result<Status> {
        let conn = self.index.conn()?;
        let q = |sql: &str| {
            conn.query_row(sql, [], |r| r.get::<_, i64>(0))
                .map_err(|e| self.index.err(e))
        };
        let notes = q("SELECT COUNT(*) FROM notes")? as u64;
        let chunks = q("SELECT COUNT(*) FROM chunks")? as u64;
        let mut types = Counts::new();
        let mut stmt = conn
            .prepare("SELECT type, COUNT(*) FROM notes GROUP BY type")
            .map_err(|e| self.index.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(|e| self.index.err(e))?;
        for row in rows {
            let (k, v) = row.map_err(|e| self.index.err(e))?;
            types.insert(k, v);
        }
        let last_sync_at = self
            .index
            .meta("last_sync_at")?
            .and_then(|v| v.parse().ok());
        let last_sync = self
            .index
            .meta("last_sync")?
            .and_then(|v| serde_json::from_str(&v).ok());
        Ok(Status {
            root: self.config.root.to_string_lossy().into_owned(),
            root_exists: self.config.root.is_dir(),
            index_path: self.index.path().to_string_lossy().into_owned(),
            index_bytes: self.index.size_on_disk(),
            notes,
            types,
            chunks,
            pending_chunks: self.pending_at_current_version(&conn)?,
            last_sync_at,
            last_sync,
            model: self.config.model.clone(),
            model_installed: embed::is_installed(&self.config),
            device: embed::device_label(),
            embedded_with: vectors::stored_model(&conn)
                .map_err(|e| self.index.err(e))?
                .map(|(m, _)| m),
            recalls: recall::totals(&conn).map_err(|e| self.index.err(e))?,
            backend: None,
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, SemanticCache> {
        self.semantic.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The model and the current vector matrix, or `None` (with a notice saying why) when
    /// semantic search cannot run. With `inline`, a few pending passages are embedded first.
    fn semantic_ready(
        &self,
        conn: &Connection,
        inline: bool,
        notices: &mut Vec<String>,
    ) -> Result<Option<SemanticReady>> {
        let Some(embedder) = self.embedder()? else {
            notices.push(NO_MODEL_NOTICE.to_string());
            return Ok(None);
        };
        let mut pending = self.pending_at_current_version(conn)?;
        let stored = vectors::stored_model(conn).map_err(|e| self.index.err(e))?;
        let current = stored
            .as_ref()
            .is_some_and(|(m, d)| m == embedder.name() && *d == embedder.dim());
        if !current {
            pending = conn
                .query_row("SELECT COUNT(DISTINCT hash) FROM chunks", [], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(|e| self.index.err(e))? as u64;
        }
        if inline && pending > 0 && pending as usize <= INLINE_EMBED_MAX {
            pending = self.embed_pending()?.pending;
        } else if !current && pending > 0 {
            notices.push(format!(
                "semantic search off: {pending} passages are not embedded with {} yet; run 'brain index'",
                embedder.name()
            ));
            return Ok(None);
        }
        if pending > 0 {
            notices.push(format!(
                "{pending} passages are still waiting for embeddings, so results by meaning may miss them ('brain index' embeds them)"
            ));
        }
        let version = vectors::version(conn).map_err(|e| self.index.err(e))?;
        if let Some((v, m)) = &self.cache().matrix {
            if *v == version && m.dim() == embedder.dim() {
                return Ok(Some((embedder, m.clone())));
            }
        }
        let mut matrix = Matrix::new(embedder.dim());
        let mut bad = 0usize;
        vectors::for_each_vector(conn, |chunk, note, blob| {
            if !matrix.push_blob(chunk, note, blob) {
                bad += 1;
            }
        })
        .map_err(|e| self.index.err(e))?;
        if bad > 0 {
            tracing::warn!(bad, "vectors of the wrong length skipped");
        }
        let matrix = Arc::new(matrix);
        self.cache().matrix = Some((version, matrix.clone()));
        Ok(Some((embedder, matrix)))
    }

    /// [`vectors::pending_count`], recounted only when the vectors version moved (every
    /// sync that changes chunks and every store of vectors moves it).
    fn pending_at_current_version(&self, conn: &Connection) -> Result<u64> {
        let version = vectors::version(conn).map_err(|e| self.index.err(e))?;
        if let Some((v, n)) = self.cache().pending {
            if v == version {
                return Ok(n);
            }
        }
        let n = vectors::pending_count(conn).map_err(|e| self.index.err(e))?;
        self.cache().pending = Some((version, n));
        Ok(n)
    }

    /// The notes a filter allows, or `None` when there is no filter.
    fn allowed_notes(&self, conn: &Connection, filters: &Filters) -> Result<Option<HashSet<i64>>> {
        if filters.is_empty() {
            return Ok(None);
        }
        let mut sql = "SELECT n.id FROM notes n WHERE 1".to_string();
        let mut args = Vec::new();
        filters.push_sql(&mut sql, &mut args);
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.index.err(e))?;
        let ids = stmt
            .query_map(rusqlite::params_from_iter(args), |r| r.get(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<HashSet<i64>>>())
            .map_err(|e| self.index.err(e))?;
        Ok(Some(ids))
    }

    fn evidence(
        &self,
        conn: &Connection,
        query: &Query,
        bm25: &[Bm25Hit],
        sem: &[SemHit],
    ) -> Result<Evidence> {
        let total: i64 = conn
            .query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))
            .map_err(|e| self.index.err(e))?;
        let terms =
            evidence::term_stats(conn, query, bm25.first().map(|h| h.note_id), total as u64)
                .map_err(|e| self.index.err(e))?;
        let bm25_scores: Vec<f64> = bm25.iter().map(|h| h.score).collect();
        let sem_scores: Vec<f32> = sem.iter().map(|h| h.score).collect();
        Ok(Evidence {
            coverage: evidence::coverage(&terms),
            terms,
            bm25_peak: evidence::peak(&bm25_scores),
            sem_gap: evidence::gap(&sem_scores),
        })
    }

    /// Turns a ranked note into a result row: keyword snippet (with «marks») when the
    /// keyword list found it at least as well, else the best semantic passage.
    fn present(&self, conn: &Connection, query: &Query, r: &Ranked) -> Result<Option<Hit>> {
        let Some(row) = self.note_row(conn, r.note_id)? else {
            return Ok(None);
        };
        let (snip, line) = match r.chunk {
            Some(chunk) => self.chunk_passage(conn, chunk, query)?,
            None => bm25::snippet_and_line(conn, query, r.note_id, row.body_line)
                .map_err(|e| self.index.err(e))?,
        };
        Ok(Some(Hit {
            abs_path: self
                .config
                .root
                .join(&row.path)
                .to_string_lossy()
                .into_owned(),
            path: row.path,
            kind: row.kind,
            title: row.title,
            tags: row.tags,
            snippet: snippet::one_line(&snip),
            score: r.score,
            bm25_rank: r.bm25_rank,
            sem_rank: r.sem_rank,
            line,
        }))
    }

    /// A chunk's passage (without the title and heading it carries) and its first line.
    fn chunk_passage(&self, conn: &Connection, chunk: i64, query: &Query) -> Result<(String, u32)> {
        let found: Option<(String, String, u32)> = conn
            .prepare_cached("SELECT text, heading, line FROM chunks WHERE id = ?1")
            .and_then(|mut s| {
                s.query_row([chunk], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
            })
            .map_err(|e| self.index.err(e))?;
        let Some((text, heading, line)) = found else {
            return Ok((String::new(), 1));
        };
        let mut lines = text.lines().skip(1);
        let passage: Vec<&str> = match heading.is_empty() {
            true => lines.collect(),
            false => {
                lines.next();
                lines.collect()
            }
        };
        let passage = snippet::truncate(
            &snippet::one_line(&passage.join("\n")),
            snippet::PASSAGE_CHARS,
        );
        Ok((snippet::mark_words(&passage, &query.words()), line))
    }

    fn note_row(&self, conn: &Connection, id: i64) -> Result<Option<NoteRow>> {
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

    fn path_of(&self, conn: &Connection, id: i64) -> Result<String> {
        Ok(self.note_row(conn, id)?.map(|r| r.path).unwrap_or_default())
    }

    /// The ranking stages as JSON: each list, the evidence and weights, the fused list.
    fn explain_json(
        &self,
        conn: &Connection,
        mode: Mode,
        bm25: &[Bm25Hit],
        sem: &[SemHit],
        fused: Option<(Evidence, Weights, Vec<Fused>)>,
        top: usize,
    ) -> Result<serde_json::Value> {
        let show = top.max(10);
        let mut bm25_list = Vec::new();
        for (i, h) in bm25.iter().take(show).enumerate() {
            bm25_list.push(serde_json::json!({
                "rank": i + 1, "path": self.path_of(conn, h.note_id)?, "score": h.score, "exact": h.exact,
            }));
        }
        let mut sem_list = Vec::new();
        for (i, h) in sem.iter().take(show).enumerate() {
            sem_list.push(serde_json::json!({
                "rank": i + 1, "path": self.path_of(conn, h.note_id)?, "score": h.score,
            }));
        }
        let mut out = serde_json::json!({ "mode": mode, "bm25": bm25_list, "semantic": sem_list });
        if let Some((evidence, weights, fused)) = fused {
            let mut list = Vec::new();
            for (i, f) in fused.iter().take(show).enumerate() {
                list.push(serde_json::json!({
                    "rank": i + 1, "path": self.path_of(conn, f.note_id)?, "score": f.score, "rrf": f.rrf,
                    "bm25_rank": f.bm25_rank, "sem_rank": f.sem_rank,
                    "bm25_part": f.bm25_part, "sem_part": f.sem_part, "exact": f.exact,
                }));
            }
            out["evidence"] = serde_json::to_value(evidence).unwrap_or_default();
            out["weights"] = serde_json::to_value(weights).unwrap_or_default();
            out["fused"] = serde_json::Value::Array(list);
            out["k"] = serde_json::json!(fuse::K);
        }
        Ok(out)
    }

    /// When a filter names a type that no note has, say so: a typo in `--type` should not
    /// look like an empty brain.
    fn filter_notice(&self, conn: &Connection, req: &SearchRequest) -> Result<Option<String>> {
        let Some(kind) = &req.filters.kind else {
            return Ok(None);
        };
        let mut stmt = conn
            .prepare_cached("SELECT DISTINCT type FROM notes ORDER BY type")
            .map_err(|e| self.index.err(e))?;
        let types: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.index.err(e))?;
        if types.iter().any(|t| t.eq_ignore_ascii_case(kind)) {
            return Ok(None);
        }
        Ok(Some(format!(
            "no notes of type {kind:?}; types here: {}",
            types.join(", ")
        )))
    }
}

/// How much each list counts for this query (see [`crate::search::fuse`]).
fn weigh(evidence: &Evidence) -> Weights {
    Weights::from_coverage(evidence.coverage)
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
        return Err(Error::InvalidInput(
            "empty query: say what to search for".into(),
        ));
    }
    if req.top == 0 || req.top > MAX_TOP {
        return Err(Error::InvalidInput(format!(
            "--top must be between 1 and {MAX_TOP}, got {}",
            req.top
        )));
    }
    let mut end = req.query.len().min(MAX_QUERY_BYTES);
    while !req.query.is_char_boundary(end) {
        end -= 1;
    }
    Ok(&req.query[..end])
}
