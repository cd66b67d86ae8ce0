//! The embedding pass: passages without a vector for the configured model get one, in
//! batches, each committed on its own, so an interrupted pass resumes where it stopped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::Engine;
use crate::error::{Error, Result};
use crate::index::vectors;

/// Passages embedded per batch (and per committed transaction).
const EMBED_BATCH: usize = 64;

/// Pending passages read at once, then embedded batch by batch.
const PENDING_WINDOW: usize = 4096;

/// What an embedding pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedReport {
    /// The model that embedded, if one is installed.
    pub model: Option<String>,
    /// Passages embedded in this pass.
    pub embedded: u64,
    /// Passages still without a vector (0 when done; all of them when no model is installed).
    pub pending: u64,
    /// Passages another process's pass embedded while this one waited for it (see
    /// `index::pass_lock`); they are not in `embedded`.
    #[serde(default)]
    pub by_other: u64,
    /// True when vectors of another model were cleared first.
    pub reembedded_all: bool,
    /// Wall time in milliseconds, after any wait for another process's pass.
    pub took_ms: u64,
}

impl Engine {
    /// Embeds the passages that have no vector yet for the configured model, in batches,
    /// committing as it goes (an interrupted run resumes where it stopped). Without an
    /// installed model it does nothing and reports everything as pending.
    pub fn embed_pending(&self) -> Result<EmbedReport> {
        self.embed_pending_with(usize::MAX, &mut |_, _| true)
    }

    /// [`Engine::embed_pending`], embedding at most `max` passages and reporting
    /// `(0, total)` once the pending passages are counted (a status read before the first
    /// batch is done says how many wait), then `(done, total)` after every committed batch;
    /// returning `false` from `progress` stops there (what a backend that is shutting down
    /// does). A whole pass (`max` unbounded) that finds another process's pass running
    /// first reports that one's progress, once a second, while it waits for it
    /// ([`Engine::waiting_for_other_pass`] says so), then its own from `(0, total)` again.
    pub fn embed_pending_with(
        &self,
        max: usize,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<EmbedReport> {
        let started = Instant::now();
        let index = &self.index;
        let Some(embedder) = self.embedder()? else {
            let conn = index.conn()?;
            let pending = match vectors::recorded(&conn).map_err(|e| index.err(e))? {
                Some(n) => n,
                None => {
                    let (before, n) = vectors::count_pending(&conn).map_err(|e| index.err(e))?;
                    // Only a shortcut for the next call: a busy or read-only index can skip it.
                    let _ = index.write(|tx| vectors::record(tx, before, n));
                    n
                }
            };
            return Ok(EmbedReport {
                pending,
                ..Default::default()
            });
        };
        let _pass = self.passes.begin();
        let conn = index.conn()?;
        // A whole pass waits for another process's (the backend's, another `brain
        // index`), following its progress, then takes over what it leaves; a pass of a few
        // passages (a note just saved, embedded before a search) never waits on one. The
        // wait comes before the model is claimed: a `brain index` with another model would
        // clear the vectors while the other pass went on storing its own model's.
        let mut by_other = 0;
        let _lock = match max == usize::MAX {
            true => match self.wait_for_other_pass(&conn, progress)? {
                Waited::Took(lock, other) => {
                    by_other = other;
                    lock
                }
                Waited::Stopped(pending) => {
                    return Ok(EmbedReport {
                        model: Some(embedder.name().to_string()),
                        pending,
                        took_ms: started.elapsed().as_millis() as u64,
                        ..Default::default()
                    })
                }
            },
            false => None,
        };
        // Its own time from here: the rate `brain index` prints is of this pass's work (a
        // minute's wait read as "2/s").
        let started = Instant::now();
        let stored = vectors::stored_model(&conn).map_err(|e| index.err(e))?;
        self.refuse_a_switch_made_elsewhere(stored, embedder.name(), embedder.dim())?;
        let reembedded_all =
            index.write(|tx| vectors::claim_for_model(tx, embedder.name(), embedder.dim()))?;
        self.claimed.store(true, Ordering::Relaxed);
        if reembedded_all {
            // What the other pass embedded was another model's, cleared by the claim.
            by_other = 0;
        }
        if vectors::recorded(&conn).map_err(|e| index.err(e))? == Some(0) {
            return Ok(EmbedReport {
                model: Some(embedder.name().to_string()),
                by_other,
                took_ms: started.elapsed().as_millis() as u64,
                ..Default::default()
            });
        }
        // The version before each scan, plus one per store since: what `record` expects.
        let version = || vectors::version(&conn).map_err(|e| index.err(e));
        let mut expected = version()?;
        // Finding what is pending scans every passage (at 100k notes, most of a pass that
        // embeds one edit), so it is asked once per window of batches, and counted apart
        // only when the first window is full.
        // What a sync writes from now on is embedded before the rest of the backlog.
        let fresh_after = vectors::newest_chunk(&conn).map_err(|e| index.err(e))?;
        let mut window = vectors::pending(&conn, PENDING_WINDOW.min(max), fresh_after)
            .map_err(|e| index.err(e))?;
        let mut total = window.len() as u64;
        if window.len() == PENDING_WINDOW {
            total = vectors::pending_count(&conn).map_err(|e| index.err(e))?;
        }
        let mut done = 0u64;
        self.passes.counted(total);
        let mut finished = false;
        // The notes as of the window: a sync that changes them meanwhile (a huge note
        // saved then deleted) makes the rest of the window stale, and it is asked again
        // rather than embedding minutes of passages that no longer exist.
        let notes =
            || crate::index::counter(&conn, crate::index::NOTES_VERSION).map_err(|e| index.err(e));
        let mut window_notes = notes()?;
        let mut stale = false;
        // Told after the window's notes version is taken: a sync the callback sees (or
        // runs) before the first batch makes the window stale, as one between batches does.
        let go_on = total == 0 || progress(0, total);
        'window: while go_on && (done as usize) < max {
            if done > 0 || stale {
                stale = false;
                window_notes = notes()?;
                let want = PENDING_WINDOW.min(max - done as usize);
                expected = version()?;
                window = vectors::pending(&conn, want, fresh_after).map_err(|e| index.err(e))?;
                // A sync during the pass may have added passages (or removed some): counted
                // again when the window is full, as at the start, so the status line's
                // "N to embed" does not climb window by window after a large add.
                total = match window.len() == PENDING_WINDOW {
                    true => done + vectors::pending_count(&conn).map_err(|e| index.err(e))?,
                    false => total.max(done + window.len() as u64),
                };
            }
            if window.is_empty() {
                finished = true;
                break;
            }
            let last_window = window.len() < PENDING_WINDOW;
            for batch in window.chunks(EMBED_BATCH) {
                if notes()? != window_notes {
                    stale = true;
                    continue 'window;
                }
                let texts: Vec<&str> = batch.iter().map(|p| p.text.as_str()).collect();
                let vecs = embedder.embed_documents(&texts)?;
                if vecs.len() != batch.len() || vecs.iter().any(|v| v.len() != embedder.dim()) {
                    return Err(Error::Embed(format!(
                        "{} returned vectors of the wrong shape",
                        embedder.name()
                    )));
                }
                let hashes: Vec<Vec<u8>> = batch.iter().map(|p| p.hash.clone()).collect();
                index.write(|tx| vectors::store(tx, &hashes, &vecs))?;
                expected += 1;
                done += hashes.len() as u64;
                self.passes.counted(total.saturating_sub(done));
                if !progress(done, total) {
                    break 'window;
                }
            }
            // A window that was not full held everything pending: no need to ask again.
            if last_window && (done as usize) < max {
                finished = true;
                break;
            }
        }
        let tidied = index.write(|tx| {
            vectors::collect_garbage(tx)?;
            if finished {
                vectors::record(tx, expected, 0)?;
            }
            Ok(())
        });
        match tidied {
            Ok(()) => {}
            // Nothing was embedded, so nothing is lost: on a read-only data dir a pass with
            // nothing to do only misses its bookkeeping (the record saves the next pass a
            // count of the pending passages).
            Err(e) if done == 0 && e.is_unwritable() => {
                tracing::debug!(error = %e, "embedding pass not recorded");
            }
            Err(e) => return Err(e),
        }
        let pending = match finished {
            // Anything a concurrent sync added meanwhile is the next pass's (it wakes one).
            true => 0,
            false => vectors::pending_count(&conn).map_err(|e| index.err(e))?,
        };
        Ok(EmbedReport {
            model: Some(embedder.name().to_string()),
            embedded: done,
            pending,
            by_other,
            reembedded_all,
            took_ms: started.elapsed().as_millis() as u64,
        })
    }

    /// A backend whose vectors another process has re-embedded with another model since
    /// (a `brain index` under other settings) leaves them be: claiming them back would
    /// re-embed every passage, and that process's next pass would do it again. Its first
    /// pass still switches, as a backend restarted with a new model should.
    pub(super) fn refuse_a_switch_made_elsewhere(
        &self,
        stored: Option<(String, usize)>,
        model: &str,
        dim: usize,
    ) -> Result<()> {
        if !self.background.load(Ordering::Relaxed) || !self.claimed.load(Ordering::Relaxed) {
            return Ok(());
        }
        match stored {
            Some((stored, d)) if stored != model || d != dim => Err(Error::ModelSwitched {
                stored,
                own: model.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// The pass lock, once no other process's pass holds it; meanwhile `progress` is told
    /// how far the other pass is, as `(done, total)` of the passages pending when this one
    /// began to wait, and returning `false` stops the wait.
    fn wait_for_other_pass(
        &self,
        conn: &rusqlite::Connection,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Waited> {
        let index = &self.index;
        let mut first: Option<u64> = None;
        let _waiting = self.passes.wait();
        loop {
            match crate::index::pass_lock::try_take(index.path()) {
                crate::index::pass_lock::Taken::Held(lock) => {
                    let left = match first {
                        Some(_) => vectors::pending_count(conn).map_err(|e| index.err(e))?,
                        None => 0,
                    };
                    let by_other = first.map_or(0, |f| f.saturating_sub(left));
                    // The other pass's count is not this one's, which counts its own next.
                    self.passes.uncounted();
                    return Ok(Waited::Took(Some(lock), by_other));
                }
                crate::index::pass_lock::Taken::Unavailable => return Ok(Waited::Took(None, 0)),
                crate::index::pass_lock::Taken::Busy => {}
            }
            // Counting scans every passage (the other pass's stores keep the count from
            // being recorded): once a second, not a tight loop.
            let left = vectors::pending_count(conn).map_err(|e| index.err(e))?;
            let total = *first.get_or_insert(left);
            self.passes.counted(left);
            if !progress(total.saturating_sub(left), total) {
                return Ok(Waited::Stopped(left));
            }
            std::thread::sleep(OTHER_PASS_POLL);
        }
    }
}

/// How often a pass waiting for another process's looks again.
const OTHER_PASS_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// How [`Engine::wait_for_other_pass`] ended.
enum Waited {
    /// With the lock (`None` where none can be had), and what the other pass embedded.
    Took(Option<crate::index::pass_lock::PassLock>, u64),
    /// Told to stop, with this many passages still pending.
    Stopped(u64),
}

impl Engine {
    /// Whether an embedding pass of this engine waits for another process's (`brain index`
    /// while the backend embeds): the progress it reports is that one's, whose pace is
    /// not this one's to estimate from.
    pub fn waiting_for_other_pass(&self) -> bool {
        self.passes.waiting()
    }

    /// The process whose embedding pass this engine's waits for, as it wrote its pid.
    pub fn other_pass_holder(&self) -> Option<u32> {
        crate::index::pass_lock::holder(self.index.path())
    }

    /// The lengths in bytes of the passages waiting for a vector, in the order a pass that
    /// begins now embeds them: what `brain index` estimates the time left from, as a pass
    /// takes the shortest first and a rate in passages said a third of the time left.
    pub fn pending_lengths(&self) -> Result<Vec<u64>> {
        let conn = self.index.conn()?;
        vectors::pending_lengths(&conn).map_err(|e| self.index.err(e))
    }
}

/// This engine's embedding passes in progress, and what the latest one has left to embed.
#[derive(Default)]
pub(super) struct Passes {
    running: AtomicUsize,
    /// Passes of this engine waiting for another process's (see `index::pass_lock`).
    waiting: AtomicUsize,
    /// Passages the latest pass has still to embed, as of its last batch; `None` until it
    /// has counted its work.
    left: Mutex<Option<u64>>,
}

impl Passes {
    /// Whether a pass is in progress.
    pub(super) fn running(&self) -> bool {
        self.running.load(Ordering::Relaxed) > 0
    }

    /// Passages the pass in progress has still to embed; `None` when no pass runs or it
    /// has not counted yet.
    pub(super) fn left(&self) -> Option<u64> {
        if self.running() {
            *self.lock_left()
        } else {
            None
        }
    }

    /// Whether a pass of this engine waits for another process's: the progress it reports
    /// meanwhile is that one's.
    pub(super) fn waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }

    /// A pass begins to wait for another process's, until the returned guard drops.
    fn wait(&self) -> Waiting<'_> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        Waiting(self)
    }

    /// A pass begins: counted until the returned guard drops, however the pass ends.
    pub(super) fn begin(&self) -> Pass<'_> {
        *self.lock_left() = None;
        self.running.fetch_add(1, Ordering::Relaxed);
        Pass(self)
    }

    /// The pass in progress has `left` passages still to embed.
    fn counted(&self, left: u64) {
        *self.lock_left() = Some(left);
    }

    /// The pass in progress has not counted its own work yet.
    fn uncounted(&self) {
        *self.lock_left() = None;
    }

    fn lock_left(&self) -> MutexGuard<'_, Option<u64>> {
        // A number stays a number: a panic elsewhere cannot leave it half written.
        self.left.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A pass waiting for another process's (see [`Passes::wait`]).
struct Waiting<'a>(&'a Passes);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An embedding pass in progress (see [`Passes::begin`]).
pub(super) struct Pass<'a>(&'a Passes);

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use crate::index::vectors;
    use crate::{Config, Engine};

    fn engine(model: &str) -> (tempfile::TempDir, std::path::PathBuf, Engine) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(root.join("lore")).unwrap();
        std::fs::write(
            root.join("lore/a.md"),
            "# Tar\n\nExtract a tar archive with xzf.\n",
        )
        .unwrap();
        let mut config = Config::for_root(&root, dir.path().join("data"));
        config.model = model.into();
        let engine = Engine::open(config).unwrap();
        engine.sync().unwrap();
        (dir, root, engine)
    }

    #[test]
    fn a_pass_says_what_it_has_left_only_while_it_runs_and_once_it_has_counted() {
        let passes = super::Passes::default();
        assert!(!passes.running() && passes.left().is_none());
        passes.counted(7);
        assert_eq!(passes.left(), None, "no pass runs");
        let pass = passes.begin();
        assert!(passes.running());
        assert_eq!(
            passes.left(),
            None,
            "a new pass forgets the last one's count"
        );
        passes.counted(5);
        assert_eq!(passes.left(), Some(5));
        drop(pass);
        assert!(!passes.running() && passes.left().is_none());
    }

    /// After an edit the matrix file is stale; a process without a backend brings it up
    /// to date row by row, and gets exactly the matrix a read of every vector gives.
    #[test]
    fn a_stale_matrix_file_brought_up_to_date_is_the_full_reads_matrix() {
        use crate::search::matrix_file;
        let (_dir, root, engine) = engine("stand-in-hash-64");
        for i in 0..30 {
            let text =
                format!("# Note {i}\n\nPassage {i} about ports.\n\n## More\n\nAnd {i} more.\n");
            std::fs::write(root.join(format!("lore/n{i}.md")), text).unwrap();
        }
        engine.sync().unwrap();
        engine.embed_pending().unwrap();
        let ready = |e: &Engine| e.semantic_ready(false, &mut Vec::new()).unwrap().unwrap().1;
        ready(&engine);
        let file = engine.index.matrix_path();
        assert!(file.exists(), "a process without a backend writes the file");

        // An edit, a new note, a removed note: new passages, gone passages, kept ones.
        std::fs::write(root.join("lore/n3.md"), "# Note 3\n\nNow about tunnels.\n").unwrap();
        std::fs::write(root.join("lore/new.md"), "# New\n\nA new passage.\n").unwrap();
        std::fs::remove_file(root.join("lore/n7.md")).unwrap();
        engine.sync().unwrap();
        engine.embed_pending().unwrap();

        let reader = engine.index.read().unwrap();
        let id: i64 = reader
            .meta(crate::index::INDEX_ID)
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        let key = matrix_file::Key {
            model: "stand-in-hash-64",
            dim: 64,
            version: reader.vectors_version().unwrap(),
            index_id: id,
        };
        assert!(matrix_file::read(&file, key).is_none(), "the file is stale");
        let old = matrix_file::read_stale(&file, key).expect("stale but this index's");
        let updated = engine
            .matrix_brought_up_to_date(&reader, &old, 64)
            .unwrap()
            .expect("few passages changed");
        let full = engine.matrix_from_index(&reader, 64).unwrap();
        assert_eq!(updated.parts(), full.parts());
        assert_ne!(
            old.parts().2,
            full.parts().2,
            "the edit changed the passages"
        );
        drop(reader);

        // Through the engine: a fresh process loads the same matrix and writes it.
        let fresh = Engine::open(engine.config().clone()).unwrap();
        assert_eq!(ready(&fresh).parts(), full.parts());
        let reader = fresh.index.read().unwrap();
        let key = matrix_file::Key {
            version: reader.vectors_version().unwrap(),
            ..key
        };
        assert_eq!(matrix_file::read(&file, key).unwrap().parts(), full.parts());

        // Another index's file (a rebuild renumbers passages) is never brought up to date.
        let other = matrix_file::Key {
            index_id: id + 1,
            ..key
        };
        assert!(matrix_file::read_stale(&file, other).is_none());
    }

    #[test]
    fn an_emptied_queue_is_remembered_until_a_passage_changes() {
        let (_dir, root, engine) = engine("stand-in-hash-64");
        let conn = engine.index.conn().unwrap();
        assert_eq!(vectors::recorded(&conn).unwrap(), None);
        let first = engine.embed_pending().unwrap();
        assert!(first.embedded > 0 && first.pending == 0, "{first:?}");
        assert_eq!(vectors::recorded(&conn).unwrap(), Some(0));
        assert_eq!(engine.embed_pending().unwrap().embedded, 0);

        std::fs::write(
            root.join("lore/b.md"),
            "# Tunnels\n\nForward a port over ssh.\n",
        )
        .unwrap();
        assert_eq!(engine.sync().unwrap().added, 1);
        assert_eq!(
            vectors::recorded(&conn).unwrap(),
            None,
            "the sync moved the version"
        );
        assert_eq!(engine.status().unwrap().pending_chunks, 1);
        assert_eq!(engine.embed_pending().unwrap().embedded, 1);
        assert_eq!(vectors::recorded(&conn).unwrap(), Some(0));
    }

    #[test]
    fn a_count_is_not_recorded_when_another_writer_moved_the_version() {
        let (_dir, _root, engine) = engine("stand-in-hash-64");
        let conn = engine.index.conn().unwrap();
        let before = vectors::version(&conn).unwrap();
        let kept = engine
            .index
            .write(|tx| {
                vectors::bump_version(tx)?;
                vectors::record(tx, before, 0)
            })
            .unwrap();
        assert!(!kept);
        assert_eq!(vectors::recorded(&conn).unwrap(), None);
        assert_eq!(vectors::pending_count(&conn).unwrap(), 1);
    }

    #[test]
    fn without_a_model_the_pending_count_is_recorded_once() {
        let (_dir, _root, engine) = engine("all-minilm-l6-v2");
        let conn = engine.index.conn().unwrap();
        assert_eq!(engine.embed_pending().unwrap().pending, 1);
        assert_eq!(vectors::recorded(&conn).unwrap(), Some(1));
        assert_eq!(engine.embed_pending().unwrap().pending, 1);
    }

    /// Passages added during a pass past a whole window are counted when the next window is
    /// read, so the total the status line shows is the real one, not the previous count
    /// climbing a window at a time.
    #[test]
    fn a_large_add_during_a_pass_is_counted_at_the_next_full_window() {
        use super::{EMBED_BATCH, PENDING_WINDOW};
        let (_dir, root, engine) = engine("stand-in-hash-64");
        let write = |from: usize, to: usize| {
            for i in from..to {
                std::fs::write(
                    root.join(format!("lore/n{i}.md")),
                    format!("# N{i}\n\nw{i}\n"),
                )
                .unwrap();
            }
        };
        write(0, PENDING_WINDOW + 10);
        engine.sync().unwrap();
        let added = 2 * PENDING_WINDOW;
        let mut totals = Vec::new();
        let report = engine
            .embed_pending_with(usize::MAX, &mut |done, total| {
                if done == EMBED_BATCH as u64 {
                    write(PENDING_WINDOW + 10, PENDING_WINDOW + 10 + added);
                    engine.sync().unwrap();
                }
                totals.push(total);
                true
            })
            .unwrap();
        let all = (1 + PENDING_WINDOW + 10 + added) as u64;
        assert_eq!(report.embedded, all);
        assert_eq!(
            totals.last(),
            Some(&all),
            "the last total is what was embedded"
        );
        // From the second window on, the total is the real one at once.
        let second = totals[PENDING_WINDOW / EMBED_BATCH + 1];
        assert_eq!(
            second,
            all,
            "{:?}",
            &totals[..PENDING_WINDOW / EMBED_BATCH + 3]
        );
    }

    /// A note saved during a backlog is embedded with the next batch: its passages,
    /// however long, come before the shorter ones the backlog holds.
    #[test]
    fn a_note_saved_during_a_pass_is_embedded_before_the_backlog() {
        use super::EMBED_BATCH;
        let (_dir, root, engine) = engine("stand-in-hash-64");
        for i in 0..3 * EMBED_BATCH {
            std::fs::write(
                root.join(format!("lore/n{i}.md")),
                format!("# N{i}\n\nw{i}\n"),
            )
            .unwrap();
        }
        engine.sync().unwrap();
        let long = "a much longer passage about forwarding ports over ssh ".repeat(20);
        let mut saved = false;
        let report = engine
            .embed_pending_with(EMBED_BATCH, &mut |done, _| {
                if done == 0 && !saved {
                    saved = true;
                    std::fs::write(root.join("lore/fresh.md"), format!("# Fresh\n\n{long}\n"))
                        .unwrap();
                    engine.sync().unwrap();
                }
                true
            })
            .unwrap();
        assert_eq!(report.embedded, EMBED_BATCH as u64);
        let conn = engine.index.conn().unwrap();
        let embedded: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM chunks c JOIN notes n ON n.id = c.note_id
                 JOIN vectors v ON v.hash = c.hash WHERE n.path = 'lore/fresh.md'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(embedded, 1, "the saved note waited for the backlog");
    }

    /// A search during a long embedding pass keeps the matrix it has (each batch moves the
    /// vectors version; reloading each time made every search reload the whole matrix),
    /// and the first search after the pass loads the new vectors.
    #[test]
    fn searches_during_a_pass_keep_their_matrix_and_see_the_new_vectors_after() {
        let (_dir, root, engine) = engine("stand-in-hash-64");
        engine.embed_pending().unwrap();
        let ready = || {
            engine
                .semantic_ready(false, &mut Vec::new())
                .unwrap()
                .unwrap()
                .1
        };
        let before = ready();
        for i in 0..100 {
            let text = format!("# Note {i}\n\nPassage number {i} about ports.\n");
            std::fs::write(root.join(format!("lore/n{i}.md")), text).unwrap();
        }
        engine.sync().unwrap();
        let mut during = Vec::new();
        let report = engine
            .embed_pending_with(usize::MAX, &mut |done, total| {
                assert!(engine.embedding_now());
                let mut notices = Vec::new();
                let ready = engine.semantic_ready(false, &mut notices).unwrap();
                during.push((ready.unwrap().1, notices, total - done));
                true
            })
            .unwrap();
        assert_eq!(report.embedded, 100);
        assert_eq!(during.len(), 3, "the count, then two batches");
        assert_eq!(during[0].2, 100, "all 100 wait before the first batch");
        for (m, notices, left) in &during {
            assert!(std::sync::Arc::ptr_eq(m, &before), "no reload mid-pass");
            let said = format!("{left} passages are being embedded now");
            let told = notices.iter().any(|n| n.contains(&said));
            assert_eq!(told, *left > 0, "{notices:?}");
        }
        assert!(!engine.embedding_now());
        let after = ready();
        assert_eq!(after.len(), before.len() + 100);
    }
}
