//! Where the MCP tools get their answers: the warm backend (`brain serve` or the app) when
//! one serves this brain, else an engine in this process. Asked afresh on every call, so a
//! backend started or stopped mid-session is picked up or left without a restart.
//!
//! The in-process engine is opened once and kept: the MCP server itself lives for the whole
//! Claude Code session, so its index connections and, once loaded, its embedding model stay
//! warm between calls even without a backend.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Result};
use brain::passage::{NoteRef, Passage};
use brain::search::{SearchRequest, SearchResponse};
use brain::service::protocol::{Op, Reply};
use brain::{Config, Engine, Status};

use super::super::args::DaemonArgs;
use super::super::shim;

/// Answers searches, reads and status questions for one brain root.
pub struct Backend {
    config: Config,
    daemon: DaemonArgs,
    /// Opened on first use, not at start: a server that cannot open its index still
    /// starts, answers `initialize`, and reports the problem as a tool error (and retries).
    engine: Mutex<Option<Arc<Engine>>>,
}

impl Backend {
    /// A backend for `config.root`; nothing is opened or connected yet.
    pub fn new(config: Config, daemon: DaemonArgs) -> Backend {
        Backend {
            config,
            daemon,
            engine: Mutex::new(None),
        }
    }

    /// The brain folder.
    pub fn root(&self) -> &Path {
        &self.config.root
    }

    /// Runs a search (syncing first when asked).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        match shim::ask(&self.config, &self.daemon, Op::Search(request.clone()))? {
            Some(Reply::Search(response)) => Ok(response),
            Some(other) => bail!("the backend answered a search with {}", other.op()),
            None => Ok(self.engine()?.search(request)?),
        }
    }

    /// Reads a note or some of its lines.
    pub fn get(&self, note: &NoteRef) -> Result<Passage> {
        match shim::ask(&self.config, &self.daemon, Op::Get(note.clone()))? {
            Some(Reply::Get(passage)) => Ok(passage),
            Some(other) => bail!("the backend answered a get with {}", other.op()),
            None => Ok(self.engine()?.get(note)?),
        }
    }

    /// What `brain status` reports (with the backend's own section when one answers).
    pub fn status(&self) -> Result<Status> {
        match shim::ask(&self.config, &self.daemon, Op::Status)? {
            Some(Reply::Status(status)) => Ok(*status),
            Some(other) => bail!("the backend answered a status request with {}", other.op()),
            None => Ok(self.engine()?.status()?),
        }
    }

    fn engine(&self) -> Result<Arc<Engine>> {
        // A panic elsewhere while holding the lock leaves only an Option behind: still usable.
        let mut slot = self
            .engine
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(engine) = slot.as_ref() {
            return Ok(engine.clone());
        }
        let engine = Arc::new(Engine::open(self.config.clone())?);
        *slot = Some(engine.clone());
        Ok(engine)
    }
}
