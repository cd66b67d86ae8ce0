//! Answering requests in the backend: the same code serves the socket and a host that asks
//! its own backend directly (the app, through an [`super::Answerer`]), so both get the
//! same answers. What needs nothing of the backend is answered as in-process
//! ([`super::local`]).

use std::sync::mpsc::{self, Sender, SyncSender};
use std::sync::Arc;

use super::cookies::Cookies;
use super::indexer::Job;
use super::local;
use super::protocol::{ErrorCode, Fault, Op, Reply, StatusReport, PROTOCOL_VERSION};
use super::state::Live;

use crate::index::SyncReport;
use crate::similar::Source;
use crate::Engine;

/// The longest a search waits for the changes the watcher has reported to be synced: a
/// few files sync in milliseconds; a sync of thousands that takes longer is answered from
/// the index as it stands.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Everything a request may touch.
pub struct Handler {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Live counters and watcher state.
    pub live: Arc<Live>,
    jobs: Sender<Job>,
    embed: SyncSender<()>,
    cookies: Arc<Cookies>,
}

impl Handler {
    /// Syncs the one note at `path`, and wakes the embedder when that changed the index:
    /// the watcher's own event for the file then finds nothing to do, so nothing else would
    /// embed the note's new passages.
    fn sync_one(&self, path: &str) -> crate::Result<SyncReport> {
        let report = local::sync_one(&self.engine, path)?;
        if !report.is_noop() {
            let _ = self.embed.try_send(());
        }
        Ok(report)
    }

    /// A handler that sends reindexes to the indexer through `jobs`, wakes the embedder
    /// through `embed`, and waits for the watcher's events through `cookies`.
    pub(crate) fn new(
        engine: Arc<Engine>,
        live: Arc<Live>,
        jobs: Sender<Job>,
        embed: SyncSender<()>,
        cookies: Arc<Cookies>,
    ) -> Handler {
        Handler {
            engine,
            live,
            jobs,
            embed,
            cookies,
        }
    }

    /// Has the indexer sync the changes the watcher has reported now, rather than after
    /// the folder's 50 ms of quiet (or 500 ms of a file rewritten without pause), and waits
    /// for it, at most [`FLUSH_WAIT`]: a script's `echo > note.md; brain search` found
    /// its note 0 times in 20 with the quiet time alone, and a search that waited for the
    /// quiet took 500 ms while an editor autosaved. Nothing gathered: one round trip to the
    /// indexer's thread.
    fn flush(&self) {
        // A whole-folder sync in hand (an ignore file saved, thousands of changes) takes
        // seconds in a large brain: the search answers from the index as it stands, as it
        // did before it waited for anything.
        if self
            .live
            .syncing_whole
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        // Every event up to now passed on first: a save just before this request may still
        // be on its way (see `cookies`).
        self.cookies.barrier(FLUSH_WAIT);
        let (reply, done) = mpsc::channel();
        if self.jobs.send(Job::Flush { reply }).is_ok() {
            let _ = done.recv_timeout(FLUSH_WAIT);
        }
    }

    /// Wakes the embedder after a request whose own sync may have found new passages (no
    /// watcher: `serve --no-watch`, or one not started yet): nothing else would embed
    /// them, and every search said they were "being embedded now". The embedder finds
    /// nothing to do in one query when the sync changed nothing.
    fn embed_after(&self, synced: bool) {
        if synced {
            let _ = self.embed.try_send(());
        }
    }

    /// What a search answered from the index as it stands says when the brain folder is
    /// not there (the backend waits for it) or cannot be read; `None` while it can.
    fn root_unusable(&self) -> Option<String> {
        let root = &self.engine.config().root;
        match crate::index::walk::check_root(root).err()? {
            crate::Error::RootMissing { .. } => Some(format!(
                "the brain folder {} is not there: answered from the index as it stands (the backend waits for it to come back)",
                root.display()
            )),
            e => Some(format!(
                "{e}: answered from the index as it stands; make it readable"
            )),
        }
    }

    /// Answers one request. Blocking: call it off the async threads.
    pub fn handle(&self, op: Op) -> Result<Reply, Fault> {
        let fault = |e: crate::Error| Fault::from(&e);
        match op {
            Op::Hello => Ok(Reply::Hello(local::server_info(
                &self.engine,
                self.live.started_at(),
            ))),
            Op::Search(mut req) => {
                // A watched index is already fresh: the folder walk a CLI does before each
                // search would only add latency. Otherwise (starting up, watcher off or
                // lost, events overflowed) do as the CLI does, and fail as it would when
                // the folder is gone.
                // The changes the watcher has reported are synced first.
                if self.live.is_fresh() {
                    if req.sync {
                        self.flush();
                    }
                    req.sync = false;
                }
                // The brain folder gone (a disk not mounted yet): the backend waits for it,
                // and answers from the index as it stands, saying so, where a sync would
                // refuse as a CLI without a backend does.
                // (Asked whether the watcher keeps the index fresh or not: a folder whose
                // mode changed is still watched, and its search skipped the sync that
                // would have said so.)
                let gone = self.root_unusable();
                if gone.is_some() {
                    req.sync = false;
                }
                let synced = req.sync;
                let mut reply = local::answer(&self.engine, Op::Search(req)).map_err(fault)?;
                self.embed_after(synced);
                if let (Some(gone), Reply::Search(r)) = (gone, &mut reply) {
                    r.notice = Some(match r.notice.take() {
                        Some(other) => format!("{gone}; {other}"),
                        None => gone,
                    });
                }
                Ok(reply)
            }
            Op::Status => Ok(Reply::Status(Box::new(StatusReport {
                status: self.engine.status().map_err(fault)?,
                backend: Some(self.live.snapshot(PROTOCOL_VERSION)),
            }))),
            Op::Reindex { full } => {
                let (reply, answer) = mpsc::channel();
                let stopping = || Fault::new(ErrorCode::ShuttingDown, "the backend is stopping");
                self.jobs
                    .send(Job::Reindex { full, reply })
                    .map_err(|_| stopping())?;
                answer
                    .recv()
                    .map_err(|_| stopping())?
                    .map(|r| Reply::Reindex(Box::new(r)))
                    .map_err(fault)
            }
            Op::Saved { path } => self
                .sync_one(&path)
                .map(|r| Reply::Reindex(Box::new(r)))
                .map_err(fault),
            get @ Op::Get(_) => local::answer(&self.engine, get).map_err(fault),
            Op::Similar(mut req) => {
                // As for a search: a watched index is already fresh, except for a note the
                // client has just written (`brain new`, then at once `brain similar` on it),
                // which the watcher may not have seen yet: that one file is synced first.
                if self.live.is_fresh() && req.sync {
                    req.sync = false;
                    self.flush();
                    if let Source::Path(path) = &req.source {
                        self.sync_one(path).map_err(fault)?;
                        // And embedded first, as a process without a backend embeds it: a
                        // note judged before its passages are stored is judged one way.
                        // Failing that, it is judged so, which is still an answer.
                        if let Err(e) = self.engine.embed_few() {
                            tracing::warn!(error = %e, "a note named by similar not embedded first");
                        }
                    }
                }
                let synced = req.sync;
                let reply = local::answer(&self.engine, Op::Similar(req)).map_err(fault);
                self.embed_after(synced);
                reply
            }
            Op::Links { path, sync } => {
                // The answer depends on other notes too (a note linking here saved a moment
                // ago, a target just renamed): the watcher's events up to now are synced
                // first, as for a search, then the named note, as for `similar`.
                if sync && self.live.is_fresh() {
                    self.flush();
                    self.sync_one(&path).map_err(fault)?;
                    return local::answer(&self.engine, Op::Links { path, sync: false })
                        .map_err(fault);
                }
                let reply = local::answer(&self.engine, Op::Links { path, sync }).map_err(fault);
                self.embed_after(sync);
                reply
            }
            // These read (or write, `index-md --write`) every note, and a note saved a moment
            // ago may still wait for the watcher: they sync whole, as in-process, whatever
            // the watcher says. Rare commands, where a no-change sync's walk is no burden.
            whole @ (Op::SimilarAll { .. } | Op::Check { .. } | Op::IndexMd { .. }) => {
                let reply = local::answer(&self.engine, whole).map_err(fault);
                self.embed_after(true);
                reply
            }
        }
    }
}
