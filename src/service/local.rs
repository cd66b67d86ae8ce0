//! Answering a request in this process, from an engine: what a client does when no backend
//! runs, and what the backend itself does for the requests that need nothing of its own.

use super::protocol::{Op, Reply, ServerInfo, StatusReport};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::index::sync::SyncOptions;
use crate::index::walk::Scope;
use crate::index::SyncReport;

/// Answers `op` with `engine`, as a backend would but without one: status has no backend
/// section, a reindex syncs here and now.
pub(crate) fn answer(engine: &Engine, op: Op) -> Result<Reply> {
    match op {
        Op::Search(req) => engine.search(&req).map(Reply::Search),
        Op::Get(note) => engine.get(&note).map(Reply::Get),
        Op::Status => Ok(Reply::Status(Box::new(StatusReport {
            status: engine.status()?,
            backend: None,
        }))),
        Op::Reindex { full } => engine
            .sync_with(SyncOptions {
                force: full,
                cancel: None,
            })
            .map(|r| Reply::Reindex(Box::new(r))),
        Op::Similar(req) => engine.similar(&req).map(|r| Reply::Similar(Box::new(r))),
        Op::SimilarAll { sync } => engine.similar_all(sync).map(Reply::SimilarAll),
        Op::Check { sync } => engine.check(sync).map(Reply::Check),
        Op::IndexMd { sync } => engine.index_files(sync).map(Reply::IndexMd),
        Op::Links { path, sync } => engine.links(&path, sync).map(Reply::Links),
        Op::Saved { path } => sync_one(engine, &path).map(|r| Reply::Reindex(Box::new(r))),
        Op::Hello => Err(no_backend()),
    }
}

/// Syncs the one note at `path` (relative to the root), as the watcher would once it saw
/// it change. A path that climbs out of the folder syncs nothing: the request's own
/// answer says "not a note of the index".
pub(crate) fn sync_one(engine: &Engine, path: &str) -> Result<SyncReport> {
    let path = path.trim_start_matches("./");
    if path.trim().is_empty()
        || crate::passage::climbs_out(path)
        || crate::passage::check_length(path).is_err()
    {
        return Ok(SyncReport::default());
    }
    engine.sync_paths(&Scope::new([path]), SyncOptions::default())
}

/// `hello` asks who serves; in-process, nobody does.
fn no_backend() -> Error {
    Error::InvalidInput("no backend is running: nobody to say hello".into())
}

/// Who serves, for a backend's `hello`.
pub(crate) fn server_info(engine: &Engine, started_at: i64) -> ServerInfo {
    ServerInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: super::protocol::PROTOCOL_VERSION,
        pid: std::process::id(),
        root: engine.config().root.to_string_lossy().into_owned(),
        started_at,
    }
}
