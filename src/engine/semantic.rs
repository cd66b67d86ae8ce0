//! What semantic search needs and the engine keeps warm: the model (verified and loaded
//! once), the vector matrix (reloaded only when the vectors version moves), and the count
//! of passages still without a vector (counting scans every chunk: too slow per query).

use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use super::{Engine, Sketches, INLINE_EMBED_MAX, NO_MODEL_NOTICE};
use crate::embed::{self, Embedder};
use crate::error::Result;
use crate::index::Reader;
use crate::search::{matrix_file, Matrix};

/// The engine's warm semantic state.
#[derive(Default)]
pub(super) struct SemanticCache {
    embedder: Option<Arc<dyn Embedder>>,
    matrix: Option<Loaded>,
    /// Passages without a vector, at a vectors version.
    pending: Option<(i64, u64)>,
}

/// The vector matrix as loaded at a vectors version.
struct Loaded {
    version: i64,
    matrix: Arc<Matrix>,
    at: Instant,
    took: Duration,
}

impl Loaded {
    /// Whether a search may keep using this matrix at vectors `version`: always when it is
    /// current; while this engine's embedding pass moves the version batch after batch, for
    /// [`STALE_WHILE_EMBEDDING`] or ten loads' time, whichever is longer. Reloading on every
    /// batch made each search during a long pass reload the whole matrix (at 100k passages,
    /// seconds per keystroke); this way a search pays a reload at most a tenth of the time,
    /// and misses only the newest passages, which the pending notice already says.
    fn usable_at(&self, version: i64, embedding: bool) -> bool {
        self.version == version
            || (embedding && self.at.elapsed() < STALE_WHILE_EMBEDDING.max(10 * self.took))
    }
}

/// What [`Engine::waiting`] found.
struct Waiting {
    /// Passages without a vector of the model.
    pending: u64,
    /// Whether the stored vectors are the model's.
    current: bool,
    /// Whether the pending passages were embedded just now.
    embedded: bool,
}

/// How long a search keeps the matrix it has while this engine embeds (see
/// [`Loaded::usable_at`]).
const STALE_WHILE_EMBEDDING: Duration = Duration::from_secs(10);

/// A loaded model and the vector matrix it can be searched with.
pub(super) type SemanticReady = (Arc<dyn Embedder>, Arc<Matrix>);

impl Engine {
    fn cache(&self) -> MutexGuard<'_, SemanticCache> {
        self.semantic.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The configured model, verified and loaded once; `None` when it is not installed.
    pub fn embedder(&self) -> Result<Option<Arc<dyn Embedder>>> {
        if let Some(e) = &self.cache().embedder {
            return Ok(Some(e.clone()));
        }
        if !embed::should_load(&self.config)? {
            return Ok(None);
        }
        // Loading takes a while; the cache's lock is not held meanwhile, so searches in
        // BM25 mode are not held up. Searches that need the model wait for the one load:
        // fifty MCP calls at a cold start each loaded a copy (3 GB with the small model).
        let _one = self.model_load.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = &self.cache().embedder {
            return Ok(Some(e.clone()));
        }
        let loaded: Arc<dyn Embedder> =
            Arc::new(embed::CachedQueries::new(embed::load(&self.config)?));
        Ok(Some(self.cache().embedder.get_or_insert(loaded).clone()))
    }

    /// Embeds the passages waiting for a vector when they are [`INLINE_EMBED_MAX`] or
    /// fewer (a note saved a moment ago), as a search that synced does: what a backend
    /// does for a note a client named and it synced itself. True when it embedded.
    pub fn embed_few(&self) -> Result<bool> {
        match self.embedder()? {
            Some(embedder) => Ok(self.waiting(embedder.as_ref(), true)?.embedded),
            None => Ok(false),
        }
    }

    /// The passages waiting for `embedder`'s vectors and whether the stored vectors are its;
    /// with `inline`, when they are few, they are embedded first.
    fn waiting(&self, embedder: &dyn Embedder, inline: bool) -> Result<Waiting> {
        let (pending, current, none_stored) = {
            let reader = self.index.read()?;
            let stored = reader.stored_model()?;
            let current = stored
                .as_ref()
                .is_some_and(|(m, d)| m == embedder.name() && *d == embedder.dim());
            let pending = match current {
                true => self.pending_at(&reader)?,
                false => reader.distinct_passages()?,
            };
            (pending, current, stored.is_none())
        };
        let mut waiting = Waiting {
            pending,
            current,
            embedded: false,
        };
        // Never another model's vectors replaced on the way: a search run with other
        // settings than the backend's (or another process's) would delete the vectors
        // that one searches with. Switching models is `brain index`'s, asked for.
        let may_embed = current || none_stored;
        if inline && may_embed && pending > 0 && pending as usize <= INLINE_EMBED_MAX {
            // At most the few it counted: while the backend's pass runs, the count is the
            // pass's as of its last batch, and a `git pull` since may have added thousands.
            match self.embed_pending_with(INLINE_EMBED_MAX, &mut |_, _| true) {
                Ok(report) => (waiting.pending, waiting.embedded) = (report.pending, true),
                // A read-only data dir or a full disk: the answer comes from the vectors
                // there are (the sync before said why the index is behind).
                Err(e) if e.is_unwritable() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(waiting)
    }

    /// The model and the current vector matrix, or `None` (with a notice saying why) when
    /// semantic search cannot run. With `inline`, a few pending passages are embedded first.
    pub(super) fn semantic_ready(
        &self,
        inline: bool,
        notices: &mut Vec<String>,
    ) -> Result<Option<SemanticReady>> {
        self.semantic_ready_as(inline, false, notices)
    }

    /// [`Engine::semantic_ready`]; with `fresh`, never a matrix kept through this engine's
    /// embedding pass (which lacks the passages stored since).
    pub(super) fn semantic_ready_as(
        &self,
        inline: bool,
        fresh: bool,
        notices: &mut Vec<String>,
    ) -> Result<Option<SemanticReady>> {
        let Some(embedder) = self.embedder()? else {
            notices.push(NO_MODEL_NOTICE.to_string());
            return Ok(None);
        };
        let Waiting {
            pending,
            current,
            embedded,
        } = self.waiting(embedder.as_ref(), inline)?;
        if !embedded && !current && pending > 0 {
            let stored = self.index.read()?.stored_model()?;
            if let Err(switched) =
                self.refuse_a_switch_made_elsewhere(stored, embedder.name(), embedder.dim())
            {
                notices.push(format!("semantic search off: {switched}"));
                return Ok(None);
            }
            notices.push(format!(
                "semantic search off: {} not embedded with {} yet; run 'brain index'",
                passages_are(pending),
                embedder.name()
            ));
            return Ok(None);
        }
        if pending > 0 {
            // While this engine embeds (the backend), its count is the pass's, which notes
            // deleted meanwhile do not lower, and 'brain index' would only wait for it. So
            // too between its passes: the backend's embedding thread takes up what the sync
            // that found them left, and `brain index` is not the person's to run.
            let backend = self.background.load(std::sync::atomic::Ordering::Relaxed);
            notices.push(match backend || self.passes.left().is_some() {
                true => format!(
                    "{} being embedded now, so results by meaning may miss {} until that is done",
                    passages_are(pending),
                    them(pending)
                ),
                false => format!(
                    "{} still waiting for embeddings, so results by meaning may miss {} ('brain index' embeds {})",
                    passages_are(pending),
                    them(pending),
                    them(pending)
                ),
            });
        }
        let reader = self.index.read()?;
        let version = reader.vectors_version()?;
        if let Some(loaded) = &self.cache().matrix {
            // What this call embedded is what it wants to find (a note saved a moment ago,
            // `similar` on it): a matrix kept through a pass would lack it.
            if loaded.usable_at(version, self.embedding_now() && !embedded && !fresh)
                && loaded.matrix.dim() == embedder.dim()
            {
                return Ok(Some((embedder, loaded.matrix.clone())));
            }
        }
        let started = Instant::now();
        let file = self.index.matrix_path();
        // Without an identity (set when the index is opened, unless it could not be written,
        // or since its vectors were cleared) no file can be trusted to be this index's.
        let index_id: Option<i64> = reader
            .meta(crate::index::INDEX_ID)?
            .and_then(|v| v.parse().ok());
        let key = index_id.map(|index_id| matrix_file::Key {
            model: embedder.name(),
            dim: embedder.dim(),
            version,
            index_id,
        });
        let matrix = match key.and_then(|key| matrix_file::read(&file, key)) {
            // The backend keeps it for days: its own copy (about 80 ms at 100k passages,
            // once), not the mapped file's pages.
            Some(m) if !self.write_matrix_file => m.into_owned(),
            Some(m) => m,
            None => {
                let stale = key.and_then(|key| matrix_file::read_stale(&file, key));
                let updated = match stale {
                    Some(old) => self.matrix_brought_up_to_date(&reader, &old, embedder.dim())?,
                    None => None,
                };
                let m = match updated {
                    Some(m) => m,
                    None => self.matrix_from_index(&reader, embedder.dim())?,
                };
                // A process that cannot write it (a read-only data dir) only loses speed.
                if let Some(key) = key.filter(|_| self.write_matrix_file) {
                    if let Err(e) = matrix_file::write(&file, &m, key) {
                        tracing::debug!(error = %e, path = %file.display(), "matrix file not written");
                    }
                }
                m
            }
        };
        // Sketching reads every row once, as a scan does: it pays for itself in a process
        // that searches many times (the backend), not in one that searches once.
        let matrix = match self.sketches {
            Sketches::Never => matrix,
            Sketches::Large => matrix.with_shortlist(false),
            Sketches::Always => matrix.with_shortlist(true),
        };
        let matrix = Arc::new(matrix);
        self.cache().matrix = Some(Loaded {
            version,
            matrix: matrix.clone(),
            at: Instant::now(),
            took: started.elapsed(),
        });
        Ok(Some((embedder, matrix)))
    }

    /// `old`, this index's matrix at an earlier vectors version, brought up to date: its
    /// rows for the passages that still exist (a passage id always names the same text in
    /// one index, and `old` is this model's), and the vectors of the passages it lacks read
    /// from the index, in chunk id order like [`Engine::matrix_from_index`], so the two give
    /// the same matrix. At 100k passages after an edit: a few vectors read instead of all.
    /// `None` when `old` is not in chunk id order or a quarter of the passages are new to
    /// it (reading every vector is then about as quick). (Clearing the vectors, on a switch
    /// of model, gives the index a new identity, so no older file is brought up to date.)
    pub(super) fn matrix_brought_up_to_date(
        &self,
        reader: &Reader<'_>,
        old: &Matrix,
        dim: usize,
    ) -> Result<Option<Matrix>> {
        let known = old.chunk_ids();
        if !known.is_sorted() {
            return Ok(None);
        }
        let rows = reader.passage_rows()?;
        let missing: Vec<i64> = rows
            .iter()
            .map(|&(chunk, _)| chunk)
            .filter(|chunk| known.binary_search(chunk).is_err())
            .collect();
        if missing.len() > rows.len() / 4 {
            return Ok(None);
        }
        let fresh = reader.vectors_of(&missing)?;
        let mut matrix = Matrix::new(dim);
        let mut bad = 0usize;
        for &(chunk, note) in &rows {
            match known.binary_search(&chunk) {
                Ok(row) => matrix.push_row_of(old, row),
                // Passages still waiting for a vector are absent, as in a full read.
                Err(_) => {
                    if let Some(v) = fresh.get(&chunk) {
                        if !matrix.push(chunk, note, v) {
                            bad += 1;
                        }
                    }
                }
            }
        }
        if bad > 0 {
            tracing::warn!(bad, "vectors of the wrong length skipped");
        }
        Ok(Some(matrix))
    }

    /// Every stored vector of `dim` values, as an int8 matrix.
    pub(super) fn matrix_from_index(&self, reader: &Reader<'_>, dim: usize) -> Result<Matrix> {
        let mut matrix = Matrix::new(dim);
        let mut bad = 0usize;
        reader.for_each_vector(|chunk, note, blob| {
            if !matrix.push_blob(chunk, note, blob) {
                bad += 1;
            }
        })?;
        if bad > 0 {
            tracing::warn!(bad, "vectors of the wrong length skipped");
        }
        Ok(matrix)
    }

    /// Loads the model and the current vector matrix now, when they can be, and readies
    /// the model for many queries (the backend does it after each embedding pass, so no
    /// search waits for the load).
    pub fn warm_semantic(&self) -> Result<()> {
        if let Some((embedder, _)) = self.semantic_ready(false, &mut Vec::new())? {
            // Only speed is lost when this fails: queries then take the batched path.
            if let Err(e) = embedder.prepare_queries() {
                tracing::warn!(error = %e, "queries stay on the batched path");
            }
        }
        Ok(())
    }

    /// Passages without a vector, recounted only when the vectors version moved (every
    /// sync that changes chunks and every store of vectors moves it).
    pub(super) fn pending_at(&self, reader: &Reader<'_>) -> Result<u64> {
        // During this engine's own pass every batch moves the version, and counting scans
        // every passage: the pass's own count stands in, once it has one, until it ends.
        // Notes deleted while it runs do not lower the pass's count: never more than
        // there are passages (a count of the table, not the scan for pending ones).
        if let Some(left) = self.passes.left() {
            return Ok(left.min(reader.passage_count()?));
        }
        let version = reader.vectors_version()?;
        if let Some((v, n)) = self.cache().pending {
            if v == version {
                return Ok(n);
            }
        }
        let n = reader.pending_count()?;
        self.cache().pending = Some((version, n));
        Ok(n)
    }

    /// The semantic top `k` note paths for `query` by an exact f32 scan of every stored
    /// vector, read from the index: the reference `brain eval` measures the int8 matrix
    /// and its re-rank against. `None` when semantic search cannot run.
    pub(crate) fn exact_semantic_top(&self, query: &str, k: usize) -> Result<Option<Vec<String>>> {
        let Some(embedder) = self.embedder()? else {
            return Ok(None);
        };
        let q = embedder.embed_query(query)?;
        let reader = self.index.read()?;
        // The same notes are kept out as in a search (`-word`).
        let (_, excluded) = crate::search::pipeline::parse(&reader, query)?;
        // Per note: its best passage's score and the sum of its passage vectors, for the
        // same blend as the search's (`search::semantic`), here from exact vectors.
        let mut notes: std::collections::HashMap<i64, (f32, Vec<f32>)> =
            std::collections::HashMap::new();
        let mut row = Vec::with_capacity(q.len());
        reader.for_each_vector(|_, note, blob| {
            row.clear();
            if crate::index::vectors::extend_from_blob(&mut row, blob) && row.len() == q.len() {
                let s = crate::search::dot(&row, &q);
                let (best, sum) = notes
                    .entry(note)
                    .or_insert_with(|| (f32::NEG_INFINITY, vec![0.0; q.len()]));
                *best = best.max(s);
                sum.iter_mut().zip(&row).for_each(|(a, x)| *a += x);
            }
        })?;
        let w = crate::search::NOTE_WEIGHT;
        let mut ranked: Vec<(i64, f32)> = notes
            .into_iter()
            .filter(|(id, _)| !excluded.contains(id))
            .map(|(id, (best, sum))| {
                let length = crate::search::dot(&sum, &sum).sqrt();
                let whole = match length > 0.0 {
                    true => crate::search::dot(&sum, &q) / length,
                    false => 0.0,
                };
                (id, (1.0 - w) * best + w * whole)
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(k)
            .map(|(id, _)| reader.path_of(id))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}

/// `it` or `them`, for `n` passages.
fn them(n: u64) -> &'static str {
    match n {
        1 => "it",
        _ => "them",
    }
}

/// `1 passage is`, `3 passages are`.
fn passages_are(n: u64) -> String {
    match n {
        1 => "1 passage is".into(),
        n => format!("{n} passages are"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(age: Duration, took: Duration) -> Loaded {
        Loaded {
            version: 5,
            matrix: Arc::new(Matrix::new(4)),
            at: Instant::now().checked_sub(age).unwrap(),
            took,
        }
    }

    #[test]
    fn a_stale_matrix_serves_only_during_a_pass_and_only_for_a_while() {
        let s = Duration::from_secs;
        assert!(loaded(s(3600), s(0)).usable_at(5, false), "current");
        assert!(loaded(s(1), s(0)).usable_at(6, true), "fresh, mid-pass");
        assert!(
            !loaded(s(1), s(0)).usable_at(6, false),
            "no pass: reload at once"
        );
        assert!(
            !loaded(s(11), s(0)).usable_at(6, true),
            "mid-pass, but past 10 s"
        );
        assert!(
            loaded(s(11), s(2)).usable_at(6, true),
            "ten loads' time is 20 s"
        );
        assert!(!loaded(s(21), s(2)).usable_at(6, true));
    }
}
