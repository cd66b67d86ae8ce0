//! `brain index --rebuild` with nobody else at the index: the rebuild holds the backend's
//! own lock while it moves the old file aside and builds the new one, so no backend (the
//! app, `brain serve`) keeps writing into the file set aside, and no second rebuild runs.

use super::error::ServiceError;
use super::lock::{Holder, InstanceLock};
use crate::config::Config;
use crate::engine::Engine;
use crate::index::sync::SyncReport;
use crate::index::Salvage;

/// A rebuilt index, open, with the lock that keeps backends away until it is dropped.
pub struct Rebuilt {
    /// The engine over the new index (embed it next).
    pub engine: Engine,
    /// What was kept of the old index.
    pub salvage: Salvage,
    /// The notes read into the new index before it took the old one's place.
    pub synced: SyncReport,
    /// Hold it until the new index is synced and embedded.
    pub lock: BackendLock,
}

/// The backend's lock, held by someone else than a backend: no backend starts until it is
/// dropped.
pub struct BackendLock {
    _held: InstanceLock,
}

/// Sets the index of `config.root` aside and opens a new one ([`Engine::rebuild`]); fails
/// with [`ServiceError::AlreadyRunning`] while a backend serves this brain, and with
/// [`ServiceError::Rebuilding`] while another rebuild runs.
pub fn rebuild(config: Config) -> Result<Rebuilt, ServiceError> {
    let lock = InstanceLock::for_backend(&config, Holder::Rebuild)?;
    let (engine, salvage, synced) = Engine::rebuild(config)?;
    Ok(Rebuilt {
        engine,
        salvage,
        synced,
        lock: BackendLock { _held: lock },
    })
}

/// Removes what a killed `brain index --rebuild` left beside `config`'s index
/// ([`crate::index::rebuild::remove_abandoned`]) when no backend and no rebuild holds the
/// lock now: `brain index` calls it, as a backend does at start.
pub fn clear_abandoned(config: &Config) {
    // Only when there is something to clear: the lock, taken, is "a rebuild" to a backend
    // starting at that moment, which would be refused.
    if !crate::index::rebuild::abandoned(&config.index_path()) {
        return;
    }
    let Ok(_lock) = InstanceLock::for_backend(config, Holder::Rebuild) else {
        return;
    };
    if let Err(e) = crate::index::rebuild::remove_abandoned(&config.index_path()) {
        tracing::warn!(error = %e, "a killed rebuild's leftovers could not be removed");
    }
}
