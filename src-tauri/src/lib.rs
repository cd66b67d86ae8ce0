//! brain's menu-bar app: a tray icon, a global hotkey and a Spotlight-style search panel
//! over [`brain::Engine`]. The app is glue: searching, reading and every decision worth a
//! test live in the `brain` library (`brain::desktop` for the app-facing parts).
//!
//! - [`setup`]: start-up (tray, hotkey, first look at the brain folder); [`tray`]: the
//!   tray icon and its menu.
//! - [`cli_tool`]: the `brain` command the app ships, linked onto PATH; [`about`]: what
//!   `About Brain` says.
//! - [`panel`]: the panel window (show, hide, toggle, placement).
//! - [`commands`]: what the page may call; [`actions`]: what they, the tray and the hotkey do.
//! - [`state`] and [`host`]: the open brain and the thread that keeps its index fresh.
#![deny(missing_docs)]

pub mod about;
pub mod actions;
pub mod cli_tool;
pub mod commands;
pub mod download;
pub mod host;
pub mod menu;
pub mod panel;
pub mod setup;
pub mod state;
pub mod tray;

use anyhow::Context;
use tauri::{Manager, WindowEvent};

use crate::state::AppState;

/// Builds the app around `config`: plugins, state, commands, window behaviour.
pub fn builder(config: brain::Config) -> tauri::Builder<tauri::Wry> {
    tauri::Builder::default()
        // First, so that a second launch hands over before anything starts: the running
        // app shows its panel and the new process exits.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            panel::show(app)
        }))
        .plugin(tauri_plugin_autostart::Builder::new().build())
        .plugin(tauri_plugin_global_shortcut::Builder::new().build())
        .plugin(tauri_plugin_clipboard_manager::init())
        .plugin(tauri_plugin_dialog::init())
        .manage(AppState::new(config))
        .manage(panel::ShownAt::default())
        .invoke_handler(tauri::generate_handler![
            commands::search,
            commands::preview,
            commands::open,
            commands::reveal,
            commands::copy,
            commands::status,
            commands::reindex,
            commands::hide_panel,
            commands::create_brain,
            commands::choose_folder,
            commands::download_model,
            commands::history,
            commands::context,
            commands::capture_types,
            commands::capture,
        ])
        .setup(|app| setup::init(app).map_err(Into::into))
        .on_window_event(|window, event| {
            if window.label() != panel::PANEL {
                return;
            }
            match event {
                // Spotlight behaviour: clicking elsewhere dismisses the panel.
                WindowEvent::Focused(false) => panel::blurred(window.app_handle()),
                // Cmd+W (the default menu's Close Window), a reflex for "dismiss", closed
                // the one panel for good: the hotkey then showed nothing until a restart.
                WindowEvent::CloseRequested { api, .. } => {
                    api.prevent_close();
                    panel::hide(window.app_handle());
                }
                _ => {}
            }
        })
}

/// Runs the app until Quit.
pub fn run() {
    if let Err(e) = try_run() {
        let why = format!("{e:#}");
        eprintln!("brain-app: {why}");
        tell_why_it_stopped(&why);
        std::process::exit(1);
    }
}

/// Shows why the app could not start (a config file it cannot read, most often) in a
/// dialog, when nobody reads its stderr: started from Finder, the Dock or at login, a
/// menu-bar app that stops at once is otherwise an icon that never appears. From a
/// terminal, the line above says it.
fn tell_why_it_stopped(why: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        return;
    }
    let text = format!("{why}\n\nFix it, then open brain again.");
    let show = move || {
        rfd::MessageDialog::new()
            .set_level(rfd::MessageLevel::Error)
            .set_title("brain could not start")
            .set_description(text)
            .set_buttons(rfd::MessageButtons::Ok)
            .show()
    };
    // AppKit shows it on the main thread, which this is.
    #[cfg(target_os = "macos")]
    let _ = show();
    // GTK needs a display (an empty variable names none), and one that is named but dead
    // leaves rfd waiting for an answer that never comes: the dialog gets its own thread
    // and a time limit, after which the app exits as it would have.
    #[cfg(not(target_os = "macos"))]
    {
        let named = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        if !named("DISPLAY") && !named("WAYLAND_DISPLAY") {
            return;
        }
        let (done, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = show();
            let _ = done.send(());
        });
        let _ = answered.recv_timeout(std::time::Duration::from_secs(300));
    }
}

/// The app's log: `app.log` in the data dir's logs folder, rotated at 10 MB (the tray's
/// `Open Log`); the backend the app hosts logs there too.
pub fn log_file(config: &brain::Config) -> std::path::PathBuf {
    config.log_dir().join("app.log")
}

fn try_run() -> anyhow::Result<()> {
    use tracing_subscriber::fmt::writer::MakeWriterExt;
    let config =
        brain::Config::load(Default::default()).context("could not read brain's settings")?;
    let filter = || {
        let level = std::env::var("BRAIN_LOG").unwrap_or_default();
        let level = if level.trim().is_empty() {
            "info"
        } else {
            level.as_str()
        };
        tracing_subscriber::EnvFilter::try_new(brain::service::log_filter(level))
            .unwrap_or_else(|_| brain::service::log_filter("info").into())
    };
    let path = log_file(&config);
    let file = path
        .parent()
        .map_or(Ok(()), brain::file::private_dir)
        .and_then(|_| brain::service::RotatingLog::open(&path));
    match file {
        Ok(log) => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_ansi(false)
            .with_writer(std::io::stderr.and(std::sync::Mutex::new(log)))
            .init(),
        Err(e) => {
            tracing_subscriber::fmt()
                .with_env_filter(filter())
                .with_writer(std::io::stderr)
                .init();
            tracing::warn!("no log file at {}: {e}", path.display());
        }
    }
    let app = builder(config)
        .build(tauri::generate_context!())
        .context("could not start the app")?;
    app.run(|app, event| match event {
        // Hiding the panel is not quitting: a menu-bar app lives until Quit.
        tauri::RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        // Stop the backend properly: socket removed, lock released, batches committed.
        tauri::RunEvent::Exit => app.state::<AppState>().set_host(None),
        // Opening Brain.app again (Finder, Spotlight, `open`) reaches the running app here,
        // not as a second process: show the panel, as a second launch elsewhere does.
        #[cfg(target_os = "macos")]
        tauri::RunEvent::Reopen { .. } => panel::show(app),
        _ => {}
    });
    Ok(())
}
