//! `brain status` as the engine knows it: counts, where the index is, the last sync, the
//! model. (A backend adds its own section on top: see `service::StatusReport`.)

use serde::{Deserialize, Serialize};

use super::Engine;
use crate::config::Counts;
use crate::embed;
use crate::error::Result;
use crate::index::{RecallTotals, SyncSummary};

/// What `brain status` reports about the brain itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The brain folder.
    pub root: String,
    /// Whether the brain folder exists.
    pub root_exists: bool,
    /// The index file.
    pub index_path: String,
    /// Bytes on disk (database + WAL).
    pub index_bytes: u64,
    /// Notes indexed.
    pub notes: u64,
    /// Notes per type.
    pub types: Counts,
    /// Passages (chunks) indexed.
    pub chunks: u64,
    /// Distinct passages still waiting for a vector.
    pub pending_chunks: u64,
    /// Unix seconds of the last sync, if any.
    pub last_sync_at: Option<i64>,
    /// Counts of the last sync.
    pub last_sync: Option<SyncSummary>,
    /// The configured embedding model (manifest name).
    pub model: String,
    /// Whether its files are installed.
    pub model_installed: bool,
    /// Where the model runs (`cpu`, `metal`, `cuda:0`).
    pub device: String,
    /// The model the stored vectors belong to.
    pub embedded_with: Option<String>,
    /// Searches in the recall log.
    pub recalls: RecallTotals,
}

impl Engine {
    /// How many notes are indexed: one count, for callers that need no more of the status.
    pub fn note_count(&self) -> Result<u64> {
        self.index.read()?.note_count()
    }

    /// Counts and paths for `brain status`, read in one transaction.
    pub fn status(&self) -> Result<Status> {
        let reader = self.index.read()?;
        let counts = reader.counts()?;
        Ok(Status {
            root: self.config.root.to_string_lossy().into_owned(),
            root_exists: self.config.root.is_dir(),
            index_path: self.index.path().to_string_lossy().into_owned(),
            index_bytes: self.index.size_on_disk(),
            notes: counts.notes,
            types: counts.types,
            chunks: counts.chunks,
            pending_chunks: self.pending_at(&reader)?,
            last_sync_at: reader.meta("last_sync_at")?.and_then(|v| v.parse().ok()),
            last_sync: reader
                .meta("last_sync")?
                .and_then(|v| serde_json::from_str(&v).ok()),
            model: self.config.model.clone(),
            model_installed: embed::is_installed(&self.config),
            device: embed::device_label(),
            embedded_with: reader.stored_model()?.map(|(m, _)| m),
            recalls: reader.recall_totals()?,
        })
    }
}
