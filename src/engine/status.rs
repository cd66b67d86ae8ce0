//! `brain status` as the engine knows it: counts, where the index is, the last sync, the
//! model. (A backend adds its own section on top: see `service::StatusReport`.)

use serde::{Deserialize, Serialize};

use super::Engine;
use crate::config::Counts;
use crate::embed;
use crate::error::Result;
use crate::index::{journal, RecallTotals, SyncSummary};

/// What the journal's recorded mark (JSON, if any) says of it.
fn journal_state(mark: Option<String>) -> JournalState {
    match journal::Mark::from_meta(mark) {
        Some(m) if m.missed => JournalState::Distrusted,
        Some(m) if m.confirmed => JournalState::Trusted,
        _ => JournalState::Unconfirmed,
    }
}

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
    /// Its files written to since a load last verified them (the next load hashes them
    /// again, and refuses them if their bytes changed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_changed: Vec<String>,
    /// Where the model runs (`cpu`, `metal`, `cuda:0`).
    pub device: String,
    /// The model the stored vectors belong to.
    pub embedded_with: Option<String>,
    /// Searches in the recall log.
    pub recalls: RecallTotals,
    /// Whether a sync without a backend reads what changed from the volume's change journal
    /// (macOS's FSEvents) instead of walking the folder; absent where there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_journal: Option<JournalState>,
}

/// How far the change journal is relied on, as of the last sync (`index::journal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalState {
    /// Not yet: a walk that finds changes must see the journal name them all first.
    Unconfirmed,
    /// Syncs read only what it names (and walk every 10 minutes).
    Trusted,
    /// It missed a change or did not answer: syncs walk until the journal's identity
    /// changes (a restart).
    Distrusted,
}

impl Engine {
    /// How many notes are indexed: one count, for callers that need no more of the status.
    pub fn note_count(&self) -> Result<u64> {
        self.index.read()?.note_count()
    }

    /// How many notes were read with a problem when indexed: `brain check` names them.
    pub fn problem_count(&self) -> Result<u64> {
        self.index.read()?.problem_count()
    }

    /// Reads the whole index file for damage (SQLite's `quick_check`): `brain status
    /// --check`. Damage is the index's "damaged" error, which names `--rebuild`.
    pub fn check_index(&self) -> Result<()> {
        self.index.read()?.quick_check()
    }

    /// How many distinct passages wait for a vector ([`Status::pending_chunks`] alone).
    pub fn pending_passages(&self) -> Result<u64> {
        self.pending_at(&self.index.read()?)
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
            model_changed: self
                .config
                .models()
                .changed_since_verified(&self.config.model),
            device: embed::device_label(),
            embedded_with: reader.stored_model()?.map(|(m, _)| m),
            recalls: reader.recall_totals()?,
            change_journal: match journal::system() {
                None => None,
                Some(_) => Some(journal_state(reader.meta(journal::MARK_KEY)?)),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_state_is_read_from_its_mark() {
        let mark = |confirmed: bool, missed: bool| {
            let m = journal::Mark {
                journal: "j".into(),
                event: 1,
                settings: "s".into(),
                walked_at: 0,
                confirmed,
                missed,
            };
            Some(serde_json::to_string(&m).unwrap())
        };
        assert_eq!(journal_state(None), JournalState::Unconfirmed);
        assert_eq!(journal_state(Some("{".into())), JournalState::Unconfirmed);
        assert_eq!(journal_state(mark(false, false)), JournalState::Unconfirmed);
        assert_eq!(journal_state(mark(true, false)), JournalState::Trusted);
        assert_eq!(journal_state(mark(true, true)), JournalState::Distrusted);
        assert_eq!(journal_state(mark(false, true)), JournalState::Distrusted);
    }
}
