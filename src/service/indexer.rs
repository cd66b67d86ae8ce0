//! The indexer thread: the one place the backend writes the index. It owns the watcher,
//! gathers its changes into bursts (a burst of saves is one update), syncs just the
//! changed paths, falls back to a whole-folder sync when events were lost, follows the brain
//! folder being deleted and recreated, and runs the reindexes clients ask for.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use super::cookies::Cookies;
use super::state::{BackendEvent, Live, WatcherState};
use super::watcher::{self, Change, FolderWatcher};
use crate::error::{Error, Result};
use crate::index::sync::{SyncOptions, SyncReport, SyncSummary};
use crate::index::walk::Scope;
use crate::Engine;

/// A burst is over once the folder has been quiet this long...
const QUIET: Duration = Duration::from_millis(50);
/// ...or this long after its first change, however busy the folder still is.
const MAX_WAIT: Duration = Duration::from_millis(500);
/// How often the brain folder itself is looked at (deleted? replaced? back?).
const TICK: Duration = Duration::from_secs(1);
/// How often an embedding pass tells hosts how far it is (the app's status line).
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// How often a watcher that failed to start is tried again.
const RETRY_WATCH: Duration = Duration::from_secs(10);
/// More changed paths than this in one burst: a whole-folder sync is cheaper.
const MAX_SCOPED_PATHS: usize = 2000;
/// After a failed sync or embedding pass (a full disk, a read-only data dir), the first
/// wait before trying again; it doubles up to [`RETRY_MAX`] while the failure lasts.
const RETRY_FIRST: Duration = Duration::from_secs(5);
/// See [`RETRY_FIRST`].
const RETRY_MAX: Duration = Duration::from_secs(120);

/// The wait before the next try, after a last wait of `last` (none yet: the first).
fn next_wait(last: Option<Duration>) -> Duration {
    last.map_or(RETRY_FIRST, |w| (w * 2).min(RETRY_MAX))
}

/// When to try a failed pass again, and the wait that led there.
#[derive(Debug, Clone, Copy)]
struct Retry {
    at: Instant,
    wait: Duration,
}

impl Retry {
    /// The retry after `last` (none yet: the first).
    fn after(last: Option<Retry>) -> Retry {
        let wait = next_wait(last.map(|r| r.wait));
        Retry {
            at: Instant::now() + wait,
            wait,
        }
    }
}

/// What the indexer is asked to do.
#[derive(Debug)]
pub enum Job {
    /// These paths (relative to the root) changed.
    Changed(Vec<String>),
    /// Events were lost or cannot be trusted: sync the whole folder (the reason goes in status).
    Rescan(String),
    /// An ignore file changed (this one): sync the whole folder, an edit like any other
    /// (not a fallback: `status` and the log's warnings are for failures).
    Rules(String),
    /// Something happened to the brain folder itself.
    CheckRoot,
    /// Sync now and answer on `reply`.
    Reindex {
        /// Rewrite every note.
        full: bool,
        /// Where the outcome goes.
        reply: Sender<Result<SyncReport>>,
    },
    /// Sync the changes gathered so far now, without waiting for the folder to be quiet,
    /// then answer on `reply`: a search asks before it reads, so that a note written a
    /// moment before is in its answer.
    Flush {
        /// Told once the changes are synced (or there were none).
        reply: Sender<()>,
    },
    /// Stop after the batch in hand.
    Stop,
}

/// The indexer's state; lives on its own thread.
pub struct Indexer {
    engine: Arc<Engine>,
    live: Arc<Live>,
    events: broadcast::Sender<BackendEvent>,
    stop: Arc<AtomicBool>,
    jobs: Sender<Job>,
    rx: Receiver<Job>,
    embed: SyncSender<()>,
    watch: bool,
    cookies: Arc<Cookies>,
    watcher: Option<FolderWatcher>,
    watch_tried: Option<Instant>,
    pending: BTreeSet<String>,
    rescan: Option<String>,
    /// An ignore file changed in the burst: its flush walks the whole folder.
    rules: bool,
    burst: Option<(Instant, Instant)>,
    /// Set while the last sync failed: the paths it held were taken off `pending`, so a
    /// whole-folder sync is tried again then (what the watcher reported is not lost).
    retry: Option<Retry>,
    /// The index file was found deleted (see [`Indexer::check_index_file`]).
    index_gone: bool,
}

/// What an [`Indexer`] needs from the backend that starts it.
pub struct Wiring {
    /// The engine to write through.
    pub engine: Arc<Engine>,
    /// Counters to keep current.
    pub live: Arc<Live>,
    /// Where progress goes.
    pub events: broadcast::Sender<BackendEvent>,
    /// Set when the backend stops.
    pub stop: Arc<AtomicBool>,
    /// A sender into `rx`, handed to the watcher.
    pub jobs: Sender<Job>,
    /// The indexer's queue.
    pub rx: Receiver<Job>,
    /// Wakes the embedding thread.
    pub embed: SyncSender<()>,
    /// Whether to watch the folder at all.
    pub watch: bool,
    /// The sync cookies the watcher reports (see `cookies`).
    pub(crate) cookies: Arc<Cookies>,
}

impl Indexer {
    /// An indexer over `wiring`; [`Indexer::run`] does the work.
    pub fn new(w: Wiring) -> Indexer {
        Indexer {
            engine: w.engine,
            live: w.live,
            events: w.events,
            stop: w.stop,
            jobs: w.jobs,
            rx: w.rx,
            embed: w.embed,
            watch: w.watch,
            cookies: w.cookies,
            watcher: None,
            watch_tried: None,
            pending: BTreeSet::new(),
            rescan: None,
            rules: false,
            burst: None,
            retry: None,
            index_gone: false,
        }
    }

    /// Starts watching, syncs the whole folder once, then follows changes until stopped.
    pub fn run(mut self) {
        // Watch before the first sync, so nothing saved during it is missed.
        self.check_root(true);
        let first = self.sync(true, false, None);
        self.after(&first);
        let _ = self.embed.try_send(());
        let mut last_tick = Instant::now();
        while !self.stopping() {
            let wait = match self.burst {
                Some((first, last)) => (last + QUIET)
                    .min(first + MAX_WAIT)
                    .saturating_duration_since(Instant::now()),
                None => TICK.saturating_sub(last_tick.elapsed()),
            };
            // A due retry waits for an open burst, whose flush is a whole sync anyway.
            let wait = match (self.retry, self.burst) {
                (Some(r), None) => wait.min(r.at.saturating_duration_since(Instant::now())),
                _ => wait,
            };
            match self.rx.recv_timeout(wait) {
                Ok(job) => {
                    self.take(job);
                    while let Ok(job) = self.rx.try_recv() {
                        self.take(job);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if self.stopping() {
                break;
            }
            if self.burst.is_some_and(|(first, last)| {
                let now = Instant::now();
                now >= last + QUIET || now >= first + MAX_WAIT
            }) {
                self.flush();
            }
            if self.burst.is_none() && self.retry.is_some_and(|r| Instant::now() >= r.at) {
                tracing::info!("trying the failed sync again");
                let again = self.sync(true, false, None);
                self.after(&again);
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                self.check_root(false);
                self.check_index_file();
            }
        }
        tracing::debug!("indexer stopped");
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn take(&mut self, job: Job) {
        let now = Instant::now();
        match job {
            Job::Changed(paths) => {
                self.pending.extend(paths);
                self.live
                    .queued
                    .store(self.pending.len() as u64, Ordering::Relaxed);
                self.open_burst(now);
            }
            Job::Rescan(reason) => {
                tracing::warn!(%reason, "falling back to a whole-folder sync");
                self.live.fresh.store(false, Ordering::Relaxed);
                self.rescan = Some(reason);
                self.open_burst(now);
            }
            Job::Rules(path) => {
                // An editor's save is several events: said once per burst.
                if !self.rules {
                    tracing::info!(%path, "an ignore file changed: walking the whole folder");
                }
                self.rules = true;
                self.live.fresh.store(false, Ordering::Relaxed);
                self.open_burst(now);
            }
            Job::CheckRoot => self.check_root(false),
            Job::Reindex { full, reply } => {
                // A whole-folder sync covers whatever was queued.
                self.clear_burst();
                let result = self.sync(true, full, None);
                self.after(&result);
                let _ = reply.send(result);
            }
            Job::Flush { reply } => {
                // A burst whose flush is a whole-folder sync (events lost, an ignore file
                // saved, a retry due, thousands of paths: a checkout) is left to its timer:
                // every search in it would wait its second, and sync a checkout half-done.
                if let Some(scope) = self.burst.and_then(|_| self.gathered_scope()) {
                    self.sync_gathered(Some(scope));
                }
                let _ = reply.send(());
            }
            Job::Stop => self.stop.store(true, Ordering::Relaxed),
        }
    }

    /// Notes a change at `now` in the open burst, opening one if none is.
    fn open_burst(&mut self, now: Instant) {
        self.burst = Some((self.burst.map_or(now, |(first, _)| first), now));
    }

    fn clear_burst(&mut self) {
        self.pending.clear();
        self.rescan = None;
        self.rules = false;
        self.burst = None;
        self.live.queued.store(0, Ordering::Relaxed);
    }

    fn flush(&mut self) {
        let scope = self.gathered_scope();
        self.sync_gathered(scope);
    }

    /// What syncing the changes gathered takes: the scope of their paths, or `None` for a
    /// whole-folder sync (events were lost, an ignore file changed, a retry is due, or more
    /// paths than a scoped sync takes). While a retry is due, only a whole sync covers what
    /// the failed one held.
    fn gathered_scope(&self) -> Option<Scope> {
        if self.rescan.is_some() || self.rules || self.retry.is_some() {
            return None;
        }
        let scope = Scope::new(&self.pending);
        (scope.paths().len() <= MAX_SCOPED_PATHS).then_some(scope)
    }

    /// Syncs the changes gathered, as [`Indexer::gathered_scope`] said (`None`: the whole
    /// folder), and closes the burst.
    fn sync_gathered(&mut self, scope: Option<Scope>) {
        if let Some(reason) = self.rescan.take() {
            self.live.fall_back(&reason);
        }
        self.clear_burst();
        let result = match scope {
            None => self.sync(true, false, None),
            Some(scope) if !scope.is_empty() => self.sync(false, false, Some(&scope)),
            Some(_) => return,
        };
        self.after(&result);
    }

    /// Keeps the retry schedule after a sync: cleared by a success (while a retry is due,
    /// every sync is a whole one), pushed back by a failure other than a shutdown.
    fn after(&mut self, result: &Result<SyncReport>) {
        match result {
            Ok(_) => self.retry = None,
            // Only what clears by itself is retried (room on the disk, a data dir made
            // writable): a missing folder has its own watch, a damaged index needs a person.
            Err(e) if !e.is_unwritable() => {}
            Err(_) => {
                let next = Retry::after(self.retry);
                tracing::info!(in_secs = next.wait.as_secs(), "will try the sync again");
                self.retry = Some(next);
                // Searches sync first meanwhile (and answer from the index if they cannot).
                self.live.fresh.store(false, Ordering::Relaxed);
            }
        }
    }

    /// Runs one sync, keeping status and progress current.
    fn sync(&self, full: bool, force: bool, scope: Option<&Scope>) -> Result<SyncReport> {
        let options = SyncOptions {
            force,
            cancel: Some(&self.stop),
        };
        self.live.syncing.store(true, Ordering::Relaxed);
        self.live.syncing_whole.store(full, Ordering::Relaxed);
        let _ = self.events.send(BackendEvent::SyncStarted { full });
        let result = match scope {
            Some(scope) => self.engine.sync_paths(scope, options),
            None => self.engine.sync_with(options),
        };
        self.live.syncing.store(false, Ordering::Relaxed);
        self.live.syncing_whole.store(false, Ordering::Relaxed);
        let counter = if full {
            &self.live.full_syncs
        } else {
            &self.live.updates
        };
        match &result {
            Ok(report) => {
                // Before the sync is reported done: the next search scores its new words
                // from the lengths (another process may have changed the notes too, so
                // also after a sync that found nothing to do; then it is one read).
                if let Err(e) = self.engine.warm_keywords() {
                    tracing::debug!(error = %e, "keyword lengths not read ahead");
                }
                counter.fetch_add(1, Ordering::Relaxed);
                if full && self.watcher.is_some() && self.rescan.is_none() {
                    self.live.fresh.store(true, Ordering::Relaxed);
                }
                if !self.index_gone {
                    self.live.set_sync_error(None);
                }
                let summary = SyncSummary::from(report);
                tracing::info!(
                    full,
                    added = summary.added,
                    updated = summary.updated,
                    removed = summary.removed,
                    took_ms = summary.took_ms,
                    "synced"
                );
                for w in &report.warnings {
                    tracing::warn!("{w}");
                }
                if !report.is_noop() {
                    let _ = self.embed.try_send(());
                }
                let _ = self.events.send(BackendEvent::Synced { full, summary });
            }
            Err(Error::Cancelled) => {
                tracing::info!("sync interrupted by shutdown; committed batches kept")
            }
            Err(e) => {
                let message = super::protocol::chain(e);
                tracing::warn!(error = %message, full, "sync failed");
                self.live.set_sync_error(Some(message.clone()));
                let _ = self.events.send(BackendEvent::Failed { message });
            }
        }
        result
    }

    /// Keeps the watcher on the brain folder as it is now: stops it when the folder goes,
    /// restarts it (and syncs everything) when the folder comes back or is replaced. The
    /// `initial` call skips that sync: the startup sync follows it.
    /// Says so in status when the index file is gone (its data dir deleted under the
    /// backend): the backend goes on writing an unlinked file, and everything since is
    /// lost when it stops. Only a new backend makes a new index.
    fn check_index_file(&mut self) {
        let path = self.engine.index_file();
        if self.index_gone || path.exists() {
            return;
        }
        self.index_gone = true;
        let message = format!(
            "the index file {} was deleted under this backend: what it indexes now is lost when it stops; restart 'brain serve'",
            path.display()
        );
        tracing::error!("{message}");
        self.live.set_sync_error(Some(message));
    }

    fn check_root(&mut self, initial: bool) {
        if !self.watch {
            return;
        }
        let config = self.engine.config();
        let root = config.root.clone();
        let here = watcher::identity(&root).is_some();
        let reason = match &self.watcher {
            Some(w) if w.still_watching(&root) => return,
            Some(_) if !here => {
                tracing::warn!(root = %root.display(), "the brain folder is gone; waiting for it to come back");
                self.watcher = None;
                self.set_state(WatcherState::Waiting);
                return;
            }
            Some(_) => "the brain folder was replaced",
            None if !here => {
                if self.live.watcher() != WatcherState::Waiting {
                    self.set_state(WatcherState::Waiting);
                }
                return;
            }
            None => {
                let failed = matches!(self.live.watcher(), WatcherState::Failed { .. });
                if failed && self.watch_tried.is_some_and(|t| t.elapsed() < RETRY_WATCH) {
                    return;
                }
                "the brain folder is back"
            }
        };
        self.watcher = None;
        self.watch_tried = Some(Instant::now());
        let jobs = self.jobs.clone();
        let tell = move |change: Change| {
            // The indexer is gone only while stopping: nothing left to tell.
            let _ = jobs.send(match change {
                Change::Paths(paths) => Job::Changed(paths),
                Change::Rescan(reason) => Job::Rescan(reason),
                Change::Rules(path) => Job::Rules(path),
                Change::Root => Job::CheckRoot,
            });
        };
        match FolderWatcher::start(&root, &config.data_dir, self.cookies.clone(), tell) {
            Ok(w) => {
                self.watcher = Some(w);
                self.set_state(WatcherState::On);
                tracing::info!(root = %root.display(), "watching the brain folder");
                if !initial {
                    self.take(Job::Rescan(reason.into()));
                }
            }
            Err(reason) => {
                tracing::warn!(%reason, "the file watcher could not start; searches will sync first");
                self.set_state(WatcherState::Failed { reason });
            }
        }
    }

    fn set_state(&self, state: WatcherState) {
        if !state.is_on() {
            self.live.fresh.store(false, Ordering::Relaxed);
        }
        self.live.set_watcher(state.clone());
        let _ = self.events.send(BackendEvent::Watcher(state));
    }
}

/// The embedding thread: after each sync that changed something, embed what has no vector
/// yet. Separate from the indexer so a long embedding backlog never delays the next sync.
/// Stops after the batch in hand once `stop` is set, so shutting down never waits for a
/// whole backlog; what was committed stays, and the next start carries on.
pub fn embed_loop(
    engine: Arc<Engine>,
    live: Arc<Live>,
    events: broadcast::Sender<BackendEvent>,
    wake: Receiver<()>,
    stop: Arc<AtomicBool>,
) {
    engine.embeds_in_background();
    // Until the first pass reports, the backlog is the index's: `status` said "0 passages
    // to embed" beside "120 waiting" for the half second before it, and a script waiting
    // for 0 took the backend for caught up.
    if let Ok(pending) = engine.pending_passages() {
        live.pending_chunks.store(pending, Ordering::Relaxed);
    }
    // After a failed pass (a full disk, say) the backlog is tried again on a timer: no
    // sync may come to wake this thread once the disk has room.
    let mut retry: Option<Duration> = None;
    loop {
        let woke = match retry {
            None => wake.recv().is_ok(),
            Some(wait) => !matches!(wake.recv_timeout(wait), Err(RecvTimeoutError::Disconnected)),
        };
        if !woke || stop.load(Ordering::Relaxed) {
            break;
        }
        let mut told: Option<Instant> = None;
        // The time left as `brain index` says it, from the bytes left (a rate in passages
        // said a third of it).
        let mut eta = crate::Eta::default();
        let outcome = engine.embed_pending_with(usize::MAX, &mut |done, total| {
            live.pending_chunks
                .store(total.saturating_sub(done), Ordering::Relaxed);
            let left = eta.update(&engine, done, total);
            if told.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) && done < total {
                told = Some(Instant::now());
                let _ = events.send(BackendEvent::Embedding {
                    done,
                    total,
                    eta_secs: left.map(|d| d.as_secs_f64().ceil() as u64),
                });
            }
            !stop.load(Ordering::Relaxed)
        });
        match outcome {
            Ok(report) => {
                retry = None;
                // Whatever failed before (a full disk, model files fetched again since) is
                // over once a pass works.
                live.set_embed_error(None);
                live.pending_chunks.store(report.pending, Ordering::Relaxed);
                // Also after a pass that only waited for another process's: its progress
                // events had the app's status line say "embedding".
                if report.embedded > 0 || report.by_other > 0 || told.is_some() {
                    tracing::info!(
                        embedded = report.embedded,
                        by_other = report.by_other,
                        pending = report.pending,
                        "embedded"
                    );
                    let _ = events.send(BackendEvent::Embedded(report));
                }
                // Load the vector matrix here, off the query path: at 100k passages it is
                // seconds of reading that the next search would otherwise wait for.
                if let Err(e) = engine.warm_semantic() {
                    tracing::debug!(error = %e, "the vector matrix was not loaded ahead");
                }
            }
            Err(e) => {
                let message = super::protocol::chain(&e);
                // Retried only when the index could not be written (a full disk): a model
                // file that changed, say, needs a person.
                retry = e.is_unwritable().then(|| next_wait(retry));
                tracing::warn!(error = %message, retry_in_secs = retry.map(|w| w.as_secs()), "embedding failed");
                live.set_embed_error(Some(message.clone()));
                let _ = events.send(BackendEvent::Failed { message });
            }
        }
    }
}
