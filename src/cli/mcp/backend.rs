//! Where the MCP tools get their answers. One type with the three questions the tools ask,
//! so that asking the warm backend first (once `brain::service` lands here) is a change to
//! this file alone.
//!
//! For now the engine runs in this process. The MCP server is itself long-lived (Claude Code
//! keeps it for the whole session), so the engine, its index connections and, once loaded,
//! the embedding model stay warm between calls anyway.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use brain::passage::{NoteRef, Passage};
use brain::search::{SearchRequest, SearchResponse};
use brain::{Config, Engine, Status};

/// Answers searches, reads and status questions for one brain root.
pub struct Backend {
    config: Config,
    /// Opened on the first call, not at start: a server that cannot open its index still
    /// starts, answers `initialize`, and reports the problem as a tool error (and retries).
    engine: Mutex<Option<Arc<Engine>>>,
}

impl Backend {
    /// A backend for `config.root`; nothing is opened yet.
    pub fn new(config: Config) -> Backend {
        Backend { config, engine: Mutex::new(None) }
    }

    /// The brain folder.
    pub fn root(&self) -> &Path {
        &self.config.root
    }

    /// Runs a search (syncing first when asked).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        Ok(self.engine()?.search(request)?)
    }

    /// Reads a note or some of its lines.
    pub fn get(&self, note: &NoteRef) -> Result<Passage> {
        Ok(self.engine()?.get(note)?)
    }

    /// What `brain status` reports.
    pub fn status(&self) -> Result<Status> {
        Ok(self.engine()?.status()?)
    }

    fn engine(&self) -> Result<Arc<Engine>> {
        // A panic elsewhere while holding the lock leaves only an Option behind: still usable.
        let mut slot = self.engine.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(engine) = slot.as_ref() {
            return Ok(engine.clone());
        }
        let engine = Arc::new(Engine::open(self.config.clone())?);
        *slot = Some(engine.clone());
        Ok(engine)
    }
}
