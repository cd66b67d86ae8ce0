//! The commands the panel may call (granted in `capabilities/panel.json`), each a one-liner
//! over [`crate::state`] or [`crate::actions`]. They run off the main thread (`async`), so
//! a search never stalls the window.

use brain::desktop::copy::CopyKind;
use brain::kb::NewEntry;
use brain::passage::Passage;
use brain::search::{Filters, Mode, SearchResponse};
use serde::Serialize;
use tauri::{AppHandle, Manager, State};

use crate::actions;
use crate::panel;
use crate::state::{AppState, NoteContext, PanelStatus};

/// An error as the page sees it: one line of text.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct CmdError(String);

impl From<anyhow::Error> for CmdError {
    fn from(e: anyhow::Error) -> Self {
        CmdError(format!("{e:#}"))
    }
}

type CmdResult<T> = Result<T, CmdError>;

/// Searches the brain; `filters` takes what `--type`, `--tag`, `--since`, `--before` and
/// `--where` take (`{"type", "tag", "since", "before", "where": [...]}`), all optional.
#[tauri::command(async)]
pub fn search(
    state: State<'_, AppState>,
    query: String,
    mode: Mode,
    filters: Option<Filters>,
    top: Option<usize>,
) -> CmdResult<SearchResponse> {
    Ok(state.search(query, mode, filters.unwrap_or_default(), top)?)
}

/// The lines around a hit, for the preview pane.
#[tauri::command(async)]
pub fn preview(state: State<'_, AppState>, path: String, line: u32) -> CmdResult<Passage> {
    Ok(state.preview(path, line)?)
}

/// Earlier queries, most recent first, each once (Alt+Up / Alt+Down in the box).
#[tauri::command(async)]
pub fn history(state: State<'_, AppState>) -> CmdResult<Vec<String>> {
    Ok(state.history()?)
}

/// The notes linking to `path` and the notes most like it, for the preview.
#[tauri::command(async)]
pub fn context(state: State<'_, AppState>, path: String) -> CmdResult<NoteContext> {
    Ok(state.context(path)?)
}

/// The types Cmd+N can make, the default first.
#[tauri::command(async)]
pub fn capture_types(state: State<'_, AppState>) -> CmdResult<Vec<String>> {
    Ok(state.capture_types()?)
}

/// Cmd+N: a new entry titled as the query, opened in the editor.
#[tauri::command(async)]
pub fn capture(app: AppHandle, kind: String, title: String) -> CmdResult<NewEntry> {
    let entry = app.state::<AppState>().capture(&kind, &title)?;
    actions::open_note(&app, &entry.path)?;
    Ok(entry)
}

/// Opens a note (paths outside the brain are refused).
#[tauri::command(async)]
pub fn open(app: AppHandle, path: String) -> CmdResult<()> {
    Ok(actions::open_note(&app, &path)?)
}

/// Reveals a note in the file manager (paths outside the brain are refused).
#[tauri::command(async)]
pub fn reveal(app: AppHandle, path: String) -> CmdResult<()> {
    Ok(actions::reveal_note(&app, &path)?)
}

/// Copies a note's path or wikilink; returns what was copied.
#[tauri::command(async)]
pub fn copy(app: AppHandle, path: String, kind: CopyKind) -> CmdResult<String> {
    Ok(actions::copy_note(&app, &path, kind)?)
}

/// The app's status.
#[tauri::command(async)]
pub fn status(state: State<'_, AppState>) -> CmdResult<PanelStatus> {
    Ok(state.status())
}

/// Syncs the index now.
#[tauri::command(async)]
pub fn reindex(app: AppHandle) -> CmdResult<()> {
    Ok(actions::reindex(&app)?)
}

/// Hides the panel (Esc).
#[tauri::command]
pub fn hide_panel(app: AppHandle) {
    panel::hide(&app)
}

/// First run: creates the default brain folder.
#[tauri::command(async)]
pub fn create_brain(app: AppHandle) -> CmdResult<PanelStatus> {
    Ok(actions::create_brain(&app)?)
}

/// First run: picks another folder; `null` when cancelled.
#[tauri::command(async)]
pub fn choose_folder(app: AppHandle) -> CmdResult<Option<PanelStatus>> {
    Ok(actions::choose_folder(&app)?)
}

/// Downloads the embedding model.
#[tauri::command(async)]
pub fn download_model(app: AppHandle) -> CmdResult<()> {
    Ok(actions::download_model(&app)?)
}
