//! What the app does, each in one place however it is asked (tray, hotkey or panel).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{anyhow, bail, Context};
use brain::desktop::copy::{self, CopyKind};
use brain::desktop::launch::{self, Launch, Platform};
use brain::desktop::login_item::LoginItemRecord;
use brain::desktop::status_line::Activity;
use brain::desktop::{cli_path, first_run};
use tauri::{AppHandle, Emitter, Manager};
use tauri_plugin_autostart::AutoLaunchManager;
use tauri_plugin_clipboard_manager::ClipboardExt;
use tauri_plugin_dialog::{DialogExt, MessageDialogKind};

use crate::about;
use crate::cli_tool;
use crate::download;
use crate::host::Host;
use crate::panel::{self, PANEL};
use crate::state::{AppState, PanelStatus};
use crate::tray;

/// Sent to the page with a [`PanelStatus`] whenever it changes.
pub const STATUS_EVENT: &str = "status";

/// Opens the note at `rel` (relative to the brain) as `[app] open_with` says, and hides the panel.
pub fn open_note(app: &AppHandle, rel: &str) -> anyhow::Result<()> {
    let state = app.state::<AppState>();
    let path = state.note_path(rel)?;
    let (open_with, _) = state.open_with();
    run(
        app,
        "open",
        &path,
        vec![launch::open_note(&open_with, &path, Platform::current())],
    )?;
    state.record_read(rel);
    panel::hide(app);
    Ok(())
}

/// Shows the note at `rel` in the file manager, and hides the panel.
pub fn reveal_note(app: &AppHandle, rel: &str) -> anyhow::Result<()> {
    let path = app.state::<AppState>().note_path(rel)?;
    run(
        app,
        "reveal",
        &path,
        launch::reveal(&path, Platform::current()),
    )?;
    panel::hide(app);
    Ok(())
}

/// Copies the note's path or wikilink; returns the text copied.
pub fn copy_note(app: &AppHandle, rel: &str, kind: CopyKind) -> anyhow::Result<String> {
    let state = app.state::<AppState>();
    let path = state.note_path(rel)?;
    let root = std::fs::canonicalize(&state.config().root).context("brain folder")?;
    let rel = path
        .strip_prefix(&root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| rel.to_string());
    let text = copy::text(kind, &rel, &path.to_string_lossy());
    clip(app, &text)?;
    Ok(text)
}

/// Opens the app's log (`app.log` in the data dir's logs folder) with the system's default
/// app for it.
pub fn open_log(app: &AppHandle) -> anyhow::Result<()> {
    let log = crate::log_file(&app.state::<AppState>().config());
    if !log.is_file() {
        bail!("no log yet at {}", log.display());
    }
    run(
        app,
        "log",
        &log,
        vec![launch::open_note(
            &launch::OpenWith::Default,
            &log,
            Platform::current(),
        )],
    )
}

/// Opens the brain folder in the file manager.
pub fn open_brain_folder(app: &AppHandle) -> anyhow::Result<()> {
    let root = app.state::<AppState>().config().root;
    if !root.is_dir() {
        bail!("{} does not exist yet", root.display());
    }
    run(
        app,
        "folder",
        &root,
        vec![launch::open_folder(&root, Platform::current())],
    )
}

/// Copies the absolute path of the `brain` command: the app's own, else one on PATH.
pub fn copy_cli_path(app: &AppHandle) -> anyhow::Result<()> {
    let cli = cli().ok_or_else(|| {
        anyhow!("the brain command was not found next to the app, on PATH or in ~/.cargo/bin")
    })?;
    clip(app, &cli.to_string_lossy())
}

/// The `brain` command the app points people at: the one it ships (beside its own binary),
/// else the first on PATH or in ~/.cargo/bin.
fn cli() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|exe| cli_tool::bundled(&exe))
        .or_else(cli_path::find_current)
}

/// `Install Command Line Tool...`: links the bundled `brain` into /usr/local/bin (else
/// ~/.local/bin), then says where, and whether a terminal will find it (in the background:
/// asking the login shell for its PATH takes a moment).
pub fn install_cli(app: &AppHandle) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("could not find the app's own binary")?;
    let cli = cli_tool::bundled(&exe).ok_or_else(|| {
        anyhow!(
            "this copy of Brain has no brain command beside {} (built from source? \
             `cargo install --path .` puts one on PATH)",
            exe.display()
        )
    })?;
    if let Some(file) = &app.state::<AppState>().capture {
        return capture(file, "install-cli", &cli.to_string_lossy());
    }
    let app = app.clone();
    std::thread::spawn(move || {
        let dirs = cli_tool::link_dirs(home().as_deref());
        let said = cli_tool::install(&cli, &dirs).map(|done| {
            let dir = done.link.parent().unwrap_or(Path::new("/"));
            let on_path = cli_tool::login_path().map(|path| cli_tool::on_path(dir, &path));
            cli_tool::message(&done, on_path)
        });
        match said {
            Ok(text) => tell(&app, "Command Line Tool", &text, MessageDialogKind::Info),
            Err(e) => {
                tell(
                    &app,
                    "Command Line Tool",
                    &format!("{e:#}"),
                    MessageDialogKind::Warning,
                );
                report(&app, "Install Command Line Tool", &e);
            }
        }
    });
    Ok(())
}

/// `About Brain`: version, commit, the model's pinned revision, the CLI.
pub fn about(app: &AppHandle) -> anyhow::Result<()> {
    let version = app.package_info().version.to_string();
    let model = app.state::<AppState>().config().model;
    let text = about::text(&version, &model, cli().as_deref());
    if let Some(file) = &app.state::<AppState>().capture {
        return capture(file, "about", &text.replace('\n', " | "));
    }
    tell(app, "About Brain", &text, MessageDialogKind::Info);
    Ok(())
}

/// `Launch at Login`: turns the login item on or off, then shows what is now true.
pub fn toggle_launch_at_login(app: &AppHandle) -> anyhow::Result<()> {
    let manager = app
        .try_state::<AutoLaunchManager>()
        .ok_or_else(|| anyhow!("launching at login is not available here"))?;
    let on = manager
        .is_enabled()
        .context("could not read the login item")?;
    if let Some(file) = &app.state::<AppState>().capture {
        return capture(file, "launch-at-login", if on { "off" } else { "on" });
    }
    let record = LoginItemRecord::in_dir(&app.state::<AppState>().config().data_dir);
    if on {
        manager
            .disable()
            .context("could not remove the login item")?;
        if let Err(e) = record.forget() {
            tracing::warn!(error = %e, "could not forget the login item's path");
        }
    } else {
        manager.enable().context("could not add the login item")?;
        if let Ok(exe) = std::env::current_exe() {
            if let Err(e) = record.remember(&exe) {
                tracing::warn!(error = %e, "could not record the login item's path");
            }
        }
    }
    refresh_launch_at_login(app);
    status_changed(app);
    Ok(())
}

/// Reads whether the app starts at login, for the tray's check mark.
pub fn refresh_launch_at_login(app: &AppHandle) {
    let enabled = app
        .try_state::<AutoLaunchManager>()
        .and_then(|m| m.is_enabled().ok());
    app.state::<AppState>().set_launch_at_login(enabled);
}

/// At start-up, when the app runs from a bundle: after the app was moved, the `brain` links
/// that pointed into the old bundle and the login item are pointed at this one.
pub fn follow_a_moved_app(app: &AppHandle) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if !cli_tool::in_app_bundle(&exe) || app.state::<AppState>().capture.is_some() {
        return;
    }
    if let Some(cli) = cli_tool::bundled(&exe) {
        for link in cli_tool::repair(&cli, &cli_tool::link_dirs(home().as_deref())) {
            tracing::info!(link = %link.display(), cli = %cli.display(), "repaired the CLI link");
        }
    }
    // The login item holds the app's path; enabling it again writes the current one, but
    // only after a move (see `brain::desktop::login_item`).
    if let Some(manager) = app.try_state::<AutoLaunchManager>() {
        let record = LoginItemRecord::in_dir(&app.state::<AppState>().config().data_dir);
        if manager.is_enabled().unwrap_or(false) && record.is_stale(&exe) {
            match manager.enable() {
                Ok(()) => {
                    if let Err(e) = record.remember(&exe) {
                        tracing::warn!(error = %e, "could not record the login item's path");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not refresh the login item"),
            }
        }
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// A message box (from any thread; it does not wait for the person).
fn tell(app: &AppHandle, title: &str, text: &str, kind: MessageDialogKind) {
    app.dialog()
        .message(text)
        .title(title)
        .kind(kind)
        .show(|_| {});
}

/// Syncs the index with the folder now (in the background).
pub fn reindex(app: &AppHandle) -> anyhow::Result<()> {
    let host = app
        .state::<AppState>()
        .host()
        .ok_or_else(|| anyhow!("no brain folder yet"))?;
    let app = app.clone();
    std::thread::spawn(move || {
        if let Err(e) = host.reindex() {
            report(&app, "reindex", &e);
        }
    });
    Ok(())
}

/// Downloads the pinned embedding model (`brain model fetch`, verified file by file) in
/// the background, with progress in the status line, then reopens the brain so the
/// backend loads the model and embeds every passage.
pub fn download_model(app: &AppHandle) -> anyhow::Result<()> {
    let state = app.state::<AppState>();
    let config = state.config();
    let manifest = brain::model::manifest(&config.model)?;
    if !state.start_download() {
        bail!("the model is already downloading");
    }
    let total = manifest.total_size();
    let app = app.clone();
    std::thread::spawn(move || {
        let state = app.state::<AppState>();
        let mut files = download::Files::default();
        let mut shown = u64::MAX;
        let fetched =
            config
                .models()
                .fetch(&config.model, &brain::model::fetch::hub_url(), &mut |p| {
                    let done = files.update(p);
                    // One update per percent: enough for a status line, cheap for the tray.
                    let percent = done.saturating_mul(100).checked_div(total).unwrap_or(0);
                    if percent != shown {
                        shown = percent;
                        state.set_activity(Activity::Downloading { done, total });
                        status_changed(&app);
                    }
                });
        state.finish_download();
        match fetched {
            Ok(_) => {
                state.set_activity(Activity::Idle);
                if let Err(e) = open_brain(&app) {
                    report(&app, "opening the brain", &e);
                }
            }
            Err(e) => report(&app, "model download", &e.into()),
        }
    });
    Ok(())
}

/// Creates the configured brain folder (`~/.brain` by default) with its type folders, and opens it.
pub fn create_brain(app: &AppHandle) -> anyhow::Result<PanelStatus> {
    let root = app.state::<AppState>().config().root;
    brain::kb::create_brain(&root)?;
    open_brain(app)?;
    Ok(app.state::<AppState>().status())
}

/// Asks for a folder, remembers it in the config file, and opens it. `Ok(None)` when the
/// person cancels.
pub fn choose_folder(app: &AppHandle) -> anyhow::Result<Option<PanelStatus>> {
    let state = app.state::<AppState>();
    let Some(picked) = app
        .dialog()
        .file()
        .set_title("Choose the folder of your notes")
        .blocking_pick_folder()
    else {
        return Ok(None);
    };
    let root = picked
        .into_path()
        .context("the chosen folder is not a local path")?;
    let file = brain::config::config_file_path()
        .ok_or_else(|| anyhow!("no config folder: set BRAIN_CONFIG"))?;
    first_run::save_root(&file, &root)?;
    let mut config = state.config();
    config.root = root;
    state.set_config(config);
    open_brain(app)?;
    Ok(Some(state.status()))
}

/// Opens the configured brain if its folder exists (closing the one open before).
pub fn open_brain(app: &AppHandle) -> anyhow::Result<()> {
    let state = app.state::<AppState>();
    state.set_host(None);
    state.set_start_error(None);
    let config = state.config();
    if config.root.is_dir() {
        let handle = app.clone();
        let started = Host::start(config, move |activity| {
            if handle.state::<AppState>().set_activity(activity) {
                status_changed(&handle);
            }
        });
        match started {
            Ok(host) => state.set_host(Some(host)),
            Err(e) => {
                state.set_start_error(Some(format!("{e:#}")));
                status_changed(app);
                return Err(e);
            }
        }
    }
    status_changed(app);
    Ok(())
}

/// Tells the panel and the tray that the status changed.
pub fn status_changed(app: &AppHandle) {
    let status = app.state::<AppState>().status();
    let _ = app.emit_to(PANEL, STATUS_EVENT, &status);
    tray::refresh(app, &status);
}

/// Shows a failure where the person will see it: the status line (tray and panel).
pub fn report(app: &AppHandle, what: &str, error: &anyhow::Error) {
    tracing::warn!(error = %format!("{error:#}"), "{what} failed");
    app.state::<AppState>()
        .set_activity(Activity::Failed(format!("{what}: {error:#}")));
    status_changed(app);
}

fn clip(app: &AppHandle, text: &str) -> anyhow::Result<()> {
    if let Some(file) = &app.state::<AppState>().capture {
        return capture(file, "copy", text);
    }
    app.clipboard()
        .write_text(text)
        .context("could not write the clipboard")
}

/// Starts the first of `launches` that works, in the background; with `BRAIN_CAPTURE_OPEN`
/// set, records `what` and `target` there instead.
fn run(app: &AppHandle, what: &str, target: &Path, launches: Vec<Launch>) -> anyhow::Result<()> {
    if let Some(file) = &app.state::<AppState>().capture {
        return capture(file, what, &target.to_string_lossy());
    }
    let app = app.clone();
    let what = what.to_string();
    std::thread::spawn(move || {
        let mut last = anyhow!("nothing to run");
        for l in &launches {
            let status = Command::new(&l.program)
                .args(&l.args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            match status {
                Ok(s) if s.success() => return,
                Ok(s) => last = anyhow!("{} exited with {s}", l.program),
                Err(e) => last = anyhow!("could not run {}: {e}", l.program),
            }
        }
        report(&app, &what, &last);
    });
    Ok(())
}

/// Appends `what<TAB>value` to the capture file.
fn capture(file: &Path, what: &str, value: &str) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .with_context(|| format!("capture file {}", file.display()))?;
    writeln!(f, "{what}\t{value}").with_context(|| format!("capture file {}", file.display()))
}
