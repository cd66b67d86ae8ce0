//! What the app holds while it runs (managed by Tauri): the settings, the open brain, what
//! it is busy with, and the hotkey's fate. Commands, the tray and the hotkey all read it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use anyhow::{anyhow, Context};
use brain::desktop::launch::OpenWith;
use brain::desktop::status_line::{self, Activity};
use brain::passage::{self, NoteRef, Passage};
use brain::search::{Mode, SearchRequest, SearchResponse};
use brain::Config;
use serde::Serialize;

use crate::host::Host;

/// Results the panel asks for at first: more than fit, so scrolling finds the rest.
const PANEL_TOP: usize = 20;
/// The most results the panel may ask for, 20 more at a time (the panel's "more"): a list
/// longer than this is read faster by better words than by scrolling.
const PANEL_MAX_TOP: usize = 200;
/// How many earlier queries Alt+Up walks back through.
const HISTORY_MAX: usize = 100;
/// How many similar notes the preview lists.
const CONTEXT_SIMILAR: usize = 3;

/// What the preview shows under a note.
#[derive(Debug, Serialize)]
pub struct NoteContext {
    /// The notes that link to it.
    pub linked_from: Vec<brain::kb::InLink>,
    /// The notes most like it (duplicates and related ones).
    pub similar: Vec<ContextNote>,
}

/// A note the preview names.
#[derive(Debug, Serialize)]
pub struct ContextNote {
    /// Relative to the root.
    pub path: String,
    /// Its title.
    pub title: String,
    /// `duplicate` or `related`.
    pub verdict: String,
}
/// Lines of context the preview shows above the matched line.
const PREVIEW_BEFORE: u32 = 4;
/// Lines the preview shows in all.
const PREVIEW_LINES: u32 = 40;

/// The app's shared state.
pub struct AppState {
    config: RwLock<Config>,
    host: RwLock<Option<Arc<Host>>>,
    activity: Mutex<Activity>,
    hotkey_notice: Mutex<Option<String>>,
    launch_at_login: Mutex<Option<bool>>,
    downloading: AtomicBool,
    /// Why the brain could not be opened (an index from a newer brain, a data folder the
    /// app cannot write), while its folder is there: said instead of "no brain folder yet".
    start_error: Mutex<Option<String>>,
    /// `BRAIN_CAPTURE_OPEN`: open, reveal and copy write here instead of acting (for tests).
    pub capture: Option<PathBuf>,
}

/// What the panel and the tray show about the app: one snapshot, sent on every change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PanelStatus {
    /// The tray's status line.
    pub line: String,
    /// The brain folder.
    pub root: String,
    /// Whether it exists (false: the panel shows the first-run choice).
    pub root_exists: bool,
    /// Notes indexed.
    pub notes: u64,
    /// Whether the embedding model is installed (false: keywords only).
    pub model_installed: bool,
    /// The model's name.
    pub model: String,
    /// A sync or embedding pass is running.
    pub indexing: bool,
    /// The last failure, if the last action failed.
    pub error: Option<String>,
    /// The shortcut that toggles the panel.
    pub hotkey: String,
    /// Why the shortcut does not work, if it does not.
    pub hotkey_notice: Option<String>,
    /// Why `[app] open_with` is not used, if it is not.
    pub open_with_notice: Option<String>,
    /// Why the app is not brain's backend, if it is not.
    pub backend_notice: Option<String>,
    /// Whether the app starts at login (`None`: this platform or session cannot tell).
    pub launch_at_login: Option<bool>,
}

impl AppState {
    /// State for `config`, with no brain open yet.
    pub fn new(config: Config) -> AppState {
        AppState {
            config: RwLock::new(config),
            host: RwLock::new(None),
            activity: Mutex::new(Activity::Idle),
            hotkey_notice: Mutex::new(None),
            launch_at_login: Mutex::new(None),
            downloading: AtomicBool::new(false),
            start_error: Mutex::new(None),
            capture: std::env::var_os("BRAIN_CAPTURE_OPEN")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }

    /// The settings now in force.
    pub fn config(&self) -> Config {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replaces the settings (after the first-run choice of folder).
    pub fn set_config(&self, config: Config) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = config;
    }

    /// The open brain, if its folder exists.
    pub fn host(&self) -> Option<Arc<Host>> {
        self.host.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Installs (or clears) the open brain.
    pub fn set_host(&self, host: Option<Host>) {
        *self.host.write().unwrap_or_else(|e| e.into_inner()) = host.map(Arc::new);
    }

    fn open_host(&self) -> anyhow::Result<Arc<Host>> {
        self.host()
            .ok_or_else(|| match lock(&self.start_error).clone() {
                Some(why) => anyhow!("the brain could not be opened: {why}"),
                None => anyhow!("no brain folder yet: create one or choose a folder"),
            })
    }

    /// Records why opening the brain failed, or clears it (`None`) before a new attempt.
    pub fn set_start_error(&self, why: Option<String>) {
        *lock(&self.start_error) = why;
    }

    /// Records what the app is doing; returns false when nothing changed.
    pub fn set_activity(&self, activity: Activity) -> bool {
        let mut now = lock(&self.activity);
        let changed = *now != activity;
        *now = activity;
        changed
    }

    /// Marks a model download as started; false when one already runs.
    pub fn start_download(&self) -> bool {
        !self.downloading.swap(true, Ordering::SeqCst)
    }

    /// Marks the model download as over.
    pub fn finish_download(&self) {
        self.downloading.store(false, Ordering::SeqCst);
    }

    /// Records why the hotkey does not work.
    pub fn set_hotkey_notice(&self, notice: Option<String>) {
        *lock(&self.hotkey_notice) = notice;
    }

    /// Records whether the app starts at login.
    pub fn set_launch_at_login(&self, enabled: Option<bool>) {
        *lock(&self.launch_at_login) = enabled;
    }

    /// A search as the panel asks it (the backend skips the sync while its watcher keeps
    /// the index fresh).
    pub fn search(
        &self,
        query: String,
        mode: Mode,
        filters: brain::search::Filters,
        top: Option<usize>,
    ) -> anyhow::Result<SearchResponse> {
        let req = SearchRequest {
            mode,
            top: panel_top(top),
            filters,
            as_you_type: true,
            ..SearchRequest::new(query)
        };
        self.open_host()?.search(&req)
    }

    /// The lines around `line` of the note at `path`, for the preview pane.
    pub fn preview(&self, path: String, line: u32) -> anyhow::Result<Passage> {
        let start = line.saturating_sub(PREVIEW_BEFORE).max(1);
        let note = NoteRef {
            path,
            line: Some(start),
            count: Some(PREVIEW_LINES),
        };
        self.open_host()?.get(&note)
    }

    /// What the preview shows under a note: the notes linking to it, and the notes most
    /// like it with their verdicts.
    pub fn context(&self, path: String) -> anyhow::Result<NoteContext> {
        let host = self.open_host()?;
        let brain = host.answerer();
        let links = brain.links(&path)?;
        let similar = brain.similar(&brain::similar::SimilarRequest {
            source: brain::similar::Source::Path(path),
            top: CONTEXT_SIMILAR,
            explain: false,
            sync: false,
        })?;
        Ok(NoteContext {
            linked_from: links.incoming,
            similar: similar
                .results
                .into_iter()
                .filter(|h| h.verdict != brain::similar::Verdict::New)
                .map(|h| ContextNote {
                    path: h.path,
                    title: h.title,
                    verdict: h.verdict.as_str().to_string(),
                })
                .collect(),
        })
    }

    /// The types a capture can make, the default first: those with a schema, else the
    /// brain's folders; `lore` leads when there is one.
    pub fn capture_types(&self) -> anyhow::Result<Vec<String>> {
        let root = self.config().root;
        let schemas = brain::kb::Schemas::load(&root)?;
        let mut types: Vec<String> = schemas.types.into_keys().collect();
        if types.is_empty() {
            types = brain::kb::new::folders(&root);
        }
        if let Some(i) = types.iter().position(|t| t == "lore") {
            let lore = types.remove(i);
            types.insert(0, lore);
        }
        Ok(types)
    }

    /// Writes a new entry titled `title` of type `kind` (unless the brain has it already).
    pub fn capture(&self, kind: &str, title: &str) -> anyhow::Result<brain::kb::NewEntry> {
        let host = self.open_host()?;
        let done = brain::service::capture::capture(host.answerer(), kind, title, false, false)?;
        if !done.written {
            let alike: Vec<&str> = done.duplicates.iter().map(|h| h.path.as_str()).collect();
            anyhow::bail!(
                "not written: the brain has it already ({})",
                alike.join(", ")
            );
        }
        // The entry opens in the editor either way; the log says why search lags it.
        if let Some(unsynced) = &done.unsynced {
            tracing::warn!(path = %done.entry.path, "{unsynced}");
        }
        Ok(done.entry)
    }

    /// Earlier searches from the recall log, most recent first, each once, with their
    /// filters written as the box writes them.
    pub fn history(&self) -> anyhow::Result<Vec<String>> {
        match brain::usage::Usage::open_existing(&self.config())? {
            Some(usage) => Ok(usage.recent_queries(HISTORY_MAX)?),
            None => Ok(Vec::new()),
        }
    }

    /// Logs that the person opened `rel` from the panel (best effort: the note is open).
    pub fn record_read(&self, rel: &str) {
        let logged = brain::usage::Usage::open_existing(&self.config())
            .and_then(|u| u.map_or(Ok(()), |u| u.record_read(rel, brain::usage::Via::App)));
        if let Err(e) = logged {
            tracing::debug!("read of {rel} not logged: {e}");
        }
    }

    /// The real path of a note named by the panel, refusing anything outside the brain.
    pub fn note_path(&self, rel: &str) -> anyhow::Result<PathBuf> {
        Ok(passage::resolve(&self.config().root, rel)?)
    }

    /// How Enter opens notes; a bad setting falls back to the default with a notice.
    pub fn open_with(&self) -> (OpenWith, Option<String>) {
        match OpenWith::parse(&self.config().app.open_with) {
            Ok(o) => (o, None),
            Err(e) => (
                OpenWith::Default,
                Some(format!("{e}; opening with the default app")),
            ),
        }
    }

    /// The snapshot the panel and tray show.
    pub fn status(&self) -> PanelStatus {
        let config = self.config();
        let mut activity = lock(&self.activity).clone();
        let host = self.host();
        let counts = host
            .as_ref()
            .map(|h| h.status().context("could not read the index"));
        let (line, notes, model_installed) = match counts {
            Some(Ok(s)) => {
                // The backend knows best whether a sync is running (events can be missed).
                if activity == Activity::Idle && s.backend.as_ref().is_some_and(|b| b.syncing) {
                    activity = Activity::Indexing;
                }
                (
                    status_line::status_line(&s.status, &activity, brain::date::now_secs()),
                    s.status.notes,
                    s.status.model_installed,
                )
            }
            Some(Err(e)) => (format!("Error: {e:#}"), 0, false),
            // Without a host, the model is looked for on disk: "no model yet" would send
            // the person to download one they have.
            None if config.root.is_dir() => match lock(&self.start_error).clone() {
                Some(why) => (
                    format!("Could not open the brain: {why}"),
                    0,
                    brain::embed::is_installed(&config),
                ),
                None => (
                    "Opening the brain…".to_string(),
                    0,
                    brain::embed::is_installed(&config),
                ),
            },
            None => (
                format!("No brain folder at {}", config.root.display()),
                0,
                brain::embed::is_installed(&config),
            ),
        };
        PanelStatus {
            line,
            root: config.root.to_string_lossy().into_owned(),
            root_exists: config.root.is_dir(),
            notes,
            model_installed,
            model: config.model.clone(),
            indexing: matches!(activity, Activity::Indexing | Activity::Embedding { .. }),
            error: match activity {
                Activity::Failed(m) => Some(m),
                _ => None,
            },
            hotkey: config.app.hotkey.clone(),
            hotkey_notice: lock(&self.hotkey_notice).clone(),
            backend_notice: host.as_ref().and_then(|h| h.notice().map(str::to_string)),
            open_with_notice: self.open_with().1,
            launch_at_login: *lock(&self.launch_at_login),
        }
    }
}

/// The results to ask for: the panel's count (ui/panel.js asks 20 more at a time, up to the
/// same 200), kept within 1..=[`PANEL_MAX_TOP`], so that a count out of range is never an
/// error under every keystroke.
fn panel_top(top: Option<usize>) -> usize {
    top.unwrap_or(PANEL_TOP).clamp(1, PANEL_MAX_TOP)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not take the tray down with it; the data is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_asks_twenty_at_first_and_never_out_of_range() {
        assert_eq!(panel_top(None), 20);
        assert_eq!(panel_top(Some(40)), 40);
        assert_eq!(panel_top(Some(0)), 1);
        assert_eq!(panel_top(Some(5000)), PANEL_MAX_TOP);
    }
}
