//! What the backend is doing right now, shared by its threads, and the snapshot of it that
//! `brain status` shows.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::date::now_secs;
use crate::engine::EmbedReport;
use crate::index::sync::SyncSummary;

/// The backend section of `brain status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendStatus {
    /// The backend's process id.
    pub pid: u32,
    /// Unix seconds when it started.
    pub started_at: i64,
    /// Seconds since then.
    pub uptime_secs: u64,
    /// brain's version.
    pub version: String,
    /// The protocol version.
    pub protocol: u32,
    /// Its socket.
    pub socket: String,
    /// The file watcher.
    pub watcher: WatcherState,
    /// The last time changes could not be followed file by file, so the whole folder was synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_back: Option<Fallback>,
    /// Changed paths seen by the watcher and not yet in the index.
    pub queued_changes: u64,
    /// Passages waiting for their embeddings.
    pub pending_chunks: u64,
    /// True while a sync is writing.
    pub syncing: bool,
    /// Targeted syncs of changed files done since start.
    pub updates: u64,
    /// Whole-folder syncs done since start.
    pub full_syncs: u64,
    /// The last sync or embedding error, if the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Clients connected now.
    pub clients: u64,
    /// Requests answered since start.
    pub requests: u64,
}

/// Whether the index follows the folder by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum WatcherState {
    /// Watching: changes reach the index within a second; searches need no sync first.
    On,
    /// Not watching, by the host's choice: searches sync first, as without a backend.
    Off,
    /// The brain folder is missing; watching resumes when it is back.
    Waiting,
    /// The watcher could not start (`reason`); searches sync first, and it is retried.
    Failed {
        /// Why.
        reason: String,
    },
}

impl WatcherState {
    /// True when the index is kept fresh by the watcher.
    pub fn is_on(&self) -> bool {
        matches!(self, WatcherState::On)
    }
}

/// A fall-back to a whole-folder sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fallback {
    /// Unix seconds.
    pub at: i64,
    /// Why (events overflowed, watcher error, folder replaced...).
    pub reason: String,
}

/// Something the backend did, for hosts that show progress (the app's status line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum BackendEvent {
    /// A sync started.
    SyncStarted {
        /// Whole folder, or only changed files.
        full: bool,
    },
    /// A sync finished.
    Synced {
        /// Whole folder, or only changed files.
        full: bool,
        /// What it did.
        summary: SyncSummary,
    },
    /// A sync or an embedding pass failed.
    Failed {
        /// One line.
        message: String,
    },
    /// An embedding pass is under way (sent about once a second).
    Embedding {
        /// Passages embedded so far in this pass.
        done: u64,
        /// Passages in this pass.
        total: u64,
        /// Seconds left at the pass's rate so far; `None` until there is a rate.
        eta_secs: Option<u64>,
    },
    /// An embedding pass finished.
    Embedded(EmbedReport),
    /// The watcher changed state.
    Watcher(WatcherState),
}

/// The live counters behind [`BackendStatus`].
#[derive(Debug)]
pub struct Live {
    started: Instant,
    started_at: i64,
    socket: PathBuf,
    watcher: Mutex<WatcherState>,
    fell_back: Mutex<Option<Fallback>>,
    /// The last sync's failure and the last embedding pass's, apart: a pass that works
    /// again must not clear a sync that still fails (new notes missing, status clean).
    sync_error: Mutex<Option<String>>,
    embed_error: Mutex<Option<String>>,
    /// True while the index is known to match the folder: watching, and the last
    /// whole-folder sync done. Searches skip their own sync only then.
    pub(crate) fresh: AtomicBool,
    pub(crate) queued: AtomicU64,
    pub(crate) pending_chunks: AtomicU64,
    pub(crate) syncing: AtomicBool,
    /// A whole-folder sync runs (seconds in a large brain): searches do not wait for it.
    pub(crate) syncing_whole: AtomicBool,
    pub(crate) updates: AtomicU64,
    pub(crate) full_syncs: AtomicU64,
    pub(crate) clients: AtomicU64,
    pub(crate) requests: AtomicU64,
}

impl Live {
    /// Fresh counters for a backend listening on `socket`.
    pub fn new(socket: PathBuf, watching: bool) -> Live {
        Live {
            started: Instant::now(),
            started_at: now_secs(),
            socket,
            watcher: Mutex::new(if watching {
                WatcherState::Waiting
            } else {
                WatcherState::Off
            }),
            fell_back: Mutex::new(None),
            sync_error: Mutex::new(None),
            embed_error: Mutex::new(None),
            fresh: AtomicBool::new(false),
            queued: AtomicU64::new(0),
            pending_chunks: AtomicU64::new(0),
            syncing: AtomicBool::new(false),
            syncing_whole: AtomicBool::new(false),
            updates: AtomicU64::new(0),
            full_syncs: AtomicU64::new(0),
            clients: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        }
    }

    /// Unix seconds when the backend started.
    pub fn started_at(&self) -> i64 {
        self.started_at
    }

    /// The watcher's state.
    pub fn watcher(&self) -> WatcherState {
        self.watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// True when the watcher keeps the index fresh, so a search need not sync first.
    pub fn is_fresh(&self) -> bool {
        self.fresh.load(Ordering::Relaxed)
    }

    pub(crate) fn set_watcher(&self, state: WatcherState) {
        *self.watcher.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    pub(crate) fn fall_back(&self, reason: &str) {
        *self.fell_back.lock().unwrap_or_else(|e| e.into_inner()) = Some(Fallback {
            at: now_secs(),
            reason: reason.into(),
        });
    }

    /// Records the outcome of a sync: its failure, or `None` when it worked.
    pub(crate) fn set_sync_error(&self, error: Option<String>) {
        *self.sync_error.lock().unwrap_or_else(|e| e.into_inner()) = error;
    }

    /// Records the outcome of an embedding pass: its failure, or `None` when it worked.
    pub(crate) fn set_embed_error(&self, error: Option<String>) {
        *self.embed_error.lock().unwrap_or_else(|e| e.into_inner()) = error;
    }

    /// The problem status shows: a failing sync first (notes missing from the index),
    /// else a failing embedding pass.
    fn last_error(&self) -> Option<String> {
        let get = |m: &Mutex<Option<String>>| m.lock().unwrap_or_else(|e| e.into_inner()).clone();
        get(&self.sync_error).or_else(|| get(&self.embed_error))
    }

    /// A consistent-enough snapshot for `brain status`, for a backend speaking `protocol`.
    pub fn snapshot(&self, protocol: u32) -> BackendStatus {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        BackendStatus {
            pid: std::process::id(),
            started_at: self.started_at,
            uptime_secs: self.started.elapsed().as_secs(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol,
            socket: self.socket.to_string_lossy().into_owned(),
            watcher: self.watcher(),
            fell_back: self
                .fell_back
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            queued_changes: get(&self.queued),
            pending_chunks: get(&self.pending_chunks),
            syncing: self.syncing.load(Ordering::Relaxed),
            updates: get(&self.updates),
            full_syncs: get(&self.full_syncs),
            last_error: self.last_error(),
            clients: get(&self.clients),
            requests: get(&self.requests),
        }
    }
}
