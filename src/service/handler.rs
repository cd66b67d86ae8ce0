//! Answering requests: the same code serves the socket and a host that calls the backend
//! directly (the app), so both get the same answers.

use std::sync::mpsc::{self, Sender};
use std::sync::Arc;

use super::indexer::Job;
use super::protocol::{ErrorCode, Fault, Op, Reply, ServerInfo, PROTOCOL_VERSION};
use super::state::Live;

use crate::Engine;

/// Everything a request may touch.
pub struct Handler {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Live counters and watcher state.
    pub live: Arc<Live>,
    jobs: Sender<Job>,
}

impl Handler {
    /// A handler that sends reindexes to the indexer through `jobs`.
    pub fn new(engine: Arc<Engine>, live: Arc<Live>, jobs: Sender<Job>) -> Handler {
        Handler { engine, live, jobs }
    }

    /// Answers one request. Blocking: call it off the async threads.
    pub fn handle(&self, op: Op) -> Result<Reply, Fault> {
        let fault = |e: crate::Error| Fault::from(&e);
        match op {
            Op::Hello => Ok(Reply::Hello(ServerInfo {
                version: env!("CARGO_PKG_VERSION").into(),
                protocol: PROTOCOL_VERSION,
                pid: std::process::id(),
                root: self.engine.config().root.to_string_lossy().into_owned(),
                started_at: self.live.started_at(),
            })),
            Op::Search(mut req) => {
                // A watched index is already fresh: the folder walk a CLI does before each
                // search would only add latency. Otherwise (starting up, watcher off or
                // lost, events overflowed) do as the CLI does, and fail as it would when
                // the folder is gone.
                if self.live.is_fresh() {
                    req.sync = false;
                }
                self.engine.search(&req).map(Reply::Search).map_err(fault)
            }
            Op::Status => {
                let mut status = self.engine.status().map_err(fault)?;
                status.backend = Some(self.live.snapshot());
                Ok(Reply::Status(Box::new(status)))
            }
            Op::Reindex { full } => {
                let (reply, answer) = mpsc::channel();
                let stopping = || Fault::new(ErrorCode::ShuttingDown, "the backend is stopping");
                self.jobs
                    .send(Job::Reindex { full, reply })
                    .map_err(|_| stopping())?;
                answer
                    .recv()
                    .map_err(|_| stopping())?
                    .map(Reply::Reindex)
                    .map_err(fault)
            }
            Op::Get(req) => self.engine.get(&req).map(Reply::Get).map_err(fault),
        }
    }
}
