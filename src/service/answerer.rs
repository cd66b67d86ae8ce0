//! The one answerer: every client of brain (the CLI, the MCP server, the app) asks its
//! questions here, and the probe-then-fall-back is written once. An [`Answerer`] asks the
//! warm backend over its socket when one serves this brain and answers in-process (with an
//! engine it opens once and keeps) when none does; in the process that hosts the backend
//! it asks the backend's own handler, so the app and its socket clients get the same
//! answers. A new request is one [`super::protocol::Op`] and one method here.

use std::sync::{Arc, Mutex};

use super::error::ServiceError;
use super::handler::Handler;
use super::local;
use super::protocol::{expect, Answer, Op, Reply, StatusReport};
use super::Client;
use crate::config::Config;
use crate::engine::Engine;
use crate::index::SyncReport;
use crate::kb::{CheckReport, IndexFile, LinksReport};
use crate::passage::{self, NoteRef, Passage};
use crate::search::{SearchRequest, SearchResponse};
use crate::similar::{ClustersResponse, SimilarRequest, SimilarResponse};

/// Where answers come from.
enum Route {
    /// The backend's socket first; in-process when nobody answers it.
    SocketFirst,
    /// Always in-process (`--no-daemon`, `BRAIN_NO_DAEMON=1`).
    InProcess,
    /// This process hosts the backend: its handler answers.
    Hosted(Arc<Handler>),
}

/// What a caller hears when a backend is there but unusable and the answer is made
/// in-process instead (a version mismatch, a socket of another user...).
pub type FallbackNotice = Box<dyn Fn(&ServiceError) + Send + Sync>;

/// Answers search, get, status and reindex for one brain root.
pub struct Answerer {
    config: Config,
    route: Route,
    /// Opened on first use and kept: a long-lived client (the MCP server) keeps its index
    /// connections and, once loaded, its model warm between calls even without a backend.
    engine: Mutex<Option<Arc<Engine>>>,
    notice: Option<FallbackNotice>,
    /// When a backend that is there last could not be used (it timed out, spoke another
    /// protocol...): for [`SKIP_AFTER_FAILURE`] the next requests go in-process at once, so
    /// that a command of two requests (`brain new`) or an MCP session does not wait out a
    /// frozen backend's timeout, and warn, on every one. With what it said.
    failed_at: Mutex<Option<(std::time::Instant, String)>>,
}

/// How long a backend that could not be used is left alone before it is asked again.
const SKIP_AFTER_FAILURE: std::time::Duration = std::time::Duration::from_secs(60);

impl Answerer {
    /// Asks the warm backend when `use_backend` and one serves `config.root`; works
    /// in-process otherwise. Nothing is opened or connected until the first question.
    pub fn new(config: Config, use_backend: bool) -> Answerer {
        Answerer {
            config,
            route: match use_backend {
                true => Route::SocketFirst,
                false => Route::InProcess,
            },
            engine: Mutex::new(None),
            notice: None,
            failed_at: Mutex::new(None),
        }
    }

    /// An answerer for the process that runs `handler`'s backend.
    pub(crate) fn hosted(config: Config, handler: Arc<Handler>) -> Answerer {
        Answerer {
            engine: Mutex::new(Some(handler.engine.clone())),
            config,
            route: Route::Hosted(handler),
            notice: None,
            failed_at: Mutex::new(None),
        }
    }

    /// Calls `notice` whenever a backend is there but cannot be used, just before the
    /// answer is made in-process ("not running" is the ordinary case and stays silent).
    pub fn on_fallback(mut self, notice: impl Fn(&ServiceError) + Send + Sync + 'static) -> Self {
        self.notice = Some(Box::new(notice));
        self
    }

    /// The settings this answerer serves.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether it asks a backend at all (not `--no-daemon`): a status without one then
    /// means none answered, not that none was asked.
    pub fn asks_backend(&self) -> bool {
        !matches!(self.route, Route::InProcess)
    }

    /// Runs a search (syncing first when the request says so, unless a watching backend
    /// knows the index is fresh).
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse, ServiceError> {
        self.ask(Op::Search(req.clone()))
    }

    /// A note, or some of its lines; never outside the brain folder.
    pub fn get(&self, note: &NoteRef) -> Result<Passage, ServiceError> {
        if matches!(self.route, Route::InProcess) {
            // Reading a file needs no index: do not open (or create) one for it.
            return Ok(passage::read(&self.config.root, note)?);
        }
        self.ask(Op::Get(note.clone()))
    }

    /// The notes most like a draft or a note, with verdicts.
    pub fn similar(&self, req: &SimilarRequest) -> Result<SimilarResponse, ServiceError> {
        self.ask::<Box<SimilarResponse>>(Op::Similar(req.clone()))
            .map(|s| *s)
    }

    /// Clusters of duplicates across the brain.
    pub fn similar_all(&self, sync: bool) -> Result<ClustersResponse, ServiceError> {
        self.ask(Op::SimilarAll { sync })
    }

    /// `brain check`: what is broken or stale.
    pub fn check(&self) -> Result<CheckReport, ServiceError> {
        self.ask(Op::Check { sync: true })
    }

    /// Each typed folder's INDEX.md as generated, with the file as it is now.
    pub fn index_files(&self) -> Result<Vec<IndexFile>, ServiceError> {
        self.ask(Op::IndexMd { sync: true })
    }

    /// The links from and to the note at `path`.
    pub fn links(&self, path: &str) -> Result<LinksReport, ServiceError> {
        self.ask(Op::Links {
            path: path.to_string(),
            sync: true,
        })
    }

    /// Tells the brain that the note at `path` (relative to the root) was just written here,
    /// so that the next request sees it at once: a backend syncs it now rather than when its
    /// watcher gets to it (two quick captures of the same title would otherwise both pass
    /// the duplicate check).
    pub fn saved(&self, path: &str) -> Result<SyncReport, ServiceError> {
        self.ask::<Box<SyncReport>>(Op::Saved {
            path: path.to_string(),
        })
        .map(|r| *r)
    }

    /// `brain status`, with the backend's own section when a backend answered.
    pub fn status(&self) -> Result<StatusReport, ServiceError> {
        self.ask::<Box<StatusReport>>(Op::Status).map(|s| *s)
    }

    /// Syncs the folder now (rewriting every note when `full`) and waits for it.
    pub fn reindex(&self, full: bool) -> Result<SyncReport, ServiceError> {
        let op = Op::Reindex { full };
        match &self.route {
            // A whole reindex may take minutes: wait for the backend without a timeout.
            Route::SocketFirst if !self.skipping() => match Client::connect(&self.config) {
                Ok(mut client) => match client.reindex(full) {
                    Ok(report) => Ok(report),
                    Err(e) => expect::<Box<SyncReport>>(self.fall_back(e, op)?).map(|r| *r),
                },
                Err(e) => expect::<Box<SyncReport>>(self.fall_back(e, op)?).map(|r| *r),
            },
            _ => self.ask::<Box<SyncReport>>(op).map(|r| *r),
        }
    }

    /// Asks `op` along this answerer's route and returns the payload that answers it.
    pub fn ask<T: Answer>(&self, op: Op) -> Result<T, ServiceError> {
        let reply = match &self.route {
            Route::Hosted(handler) => handler.handle(op).map_err(ServiceError::Remote)?,
            Route::InProcess => self.in_process(op)?,
            Route::SocketFirst if self.skipping() => self.in_process(op)?,
            Route::SocketFirst => {
                match Client::connect(&self.config).and_then(|mut c| c.request(op.clone())) {
                    Ok(reply) => reply,
                    Err(e) => self.fall_back(e, op)?,
                }
            }
        };
        expect(reply)
    }

    /// The backend could not be asked: answer in-process when that is what `error` calls
    /// for, else fail with it (the backend's own verdict on the request, for one).
    fn fall_back(&self, error: ServiceError, op: Op) -> Result<Reply, ServiceError> {
        if !error.is_unavailable() {
            return Err(error);
        }
        if error.is_surprising() {
            tracing::warn!(%error, "working in-process");
            if let Some(notice) = &self.notice {
                notice(&error);
            }
            *self.failed_at.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((std::time::Instant::now(), error.to_string()));
        }
        self.in_process(op)
    }

    /// True while a backend that could not be used is left alone.
    fn skipping(&self) -> bool {
        self.left_alone_because().is_some()
    }

    /// Why the backend is left alone now (what it said when it could not be used, as the
    /// fallback notice said it), while it is: for a client whose notices went to a log,
    /// the MCP server's `status`, which must say it in its answer.
    pub fn left_alone_because(&self) -> Option<String> {
        self.failed_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|(at, _)| at.elapsed() < SKIP_AFTER_FAILURE)
            .map(|(_, why)| why.clone())
    }

    fn in_process(&self, op: Op) -> Result<Reply, ServiceError> {
        let engine = self.engine()?;
        Ok(local::answer(&engine, op)?)
    }

    /// The in-process engine, opened on first use.
    fn engine(&self) -> Result<Arc<Engine>, ServiceError> {
        // A panic elsewhere while holding the lock leaves only an Option behind: still usable.
        let mut slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(engine) = slot.as_ref() {
            return Ok(engine.clone());
        }
        let engine = Arc::new(Engine::open_named(self.config.clone())?);
        *slot = Some(engine.clone());
        Ok(engine)
    }
}
