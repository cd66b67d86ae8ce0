//! Start-up in one place: the menu-bar presence (activation policy, the tray from
//! [`crate::tray`] with what its menu items do), the global shortcut, the links and login
//! item of an app that was moved, and the first look at the brain folder. Platform quirks
//! are noted where they bite.

use tauri::{App, AppHandle, Manager};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};

use crate::actions;
use crate::menu::MenuAction;
use crate::panel;
use crate::state::AppState;
use crate::tray;

/// Sets everything up; nothing here is fatal except a tray that cannot exist at all.
pub fn init(app: &mut App) -> anyhow::Result<()> {
    // A menu-bar app: no Dock icon, no app switcher entry.
    #[cfg(target_os = "macos")]
    app.set_activation_policy(tauri::ActivationPolicy::Accessory);

    let handle = app.handle().clone();
    actions::follow_a_moved_app(&handle);
    actions::refresh_launch_at_login(&handle);
    if let Err(e) = actions::open_brain(&handle) {
        actions::report(&handle, "opening the brain", &e);
    }
    register_hotkey(&handle);
    let status = handle.state::<AppState>().status();
    if let Err(e) = tray::create(&handle, &status, on_menu) {
        // Linux desktops without a StatusNotifier host (or Xvfb) have no tray: the hotkey
        // and the panel still work.
        tracing::warn!(error = %e, "no tray icon");
    }
    // Tests (and a first run without a folder) need the panel on screen.
    if std::env::var_os("BRAIN_SHOW_PANEL").is_some_and(|v| v == "1") || !status.root_exists {
        panel::show(&handle);
    }
    Ok(())
}

fn on_menu(app: &AppHandle, id: &str) {
    let Some(action) = MenuAction::from_id(id) else {
        return;
    };
    let outcome = match action {
        MenuAction::Search => {
            panel::show(app);
            Ok(())
        }
        MenuAction::Reindex => actions::reindex(app),
        MenuAction::OpenFolder => actions::open_brain_folder(app),
        MenuAction::CopyCliPath => actions::copy_cli_path(app),
        MenuAction::InstallCli => actions::install_cli(app),
        MenuAction::DownloadModel => actions::download_model(app),
        MenuAction::LaunchAtLogin => actions::toggle_launch_at_login(app),
        MenuAction::OpenLog => actions::open_log(app),
        MenuAction::About => actions::about(app),
        MenuAction::Quit => {
            app.exit(0);
            Ok(())
        }
    };
    if let Err(e) = outcome {
        actions::report(app, id, &e);
    }
}

/// Registers `[app] hotkey`; when it is malformed or another app holds it, the tray and
/// the panel say so instead of failing silently.
fn register_hotkey(app: &AppHandle) {
    let state = app.state::<AppState>();
    let hotkey = state.config().app.hotkey;
    let registered = app
        .global_shortcut()
        .on_shortcut(hotkey.as_str(), |app, _shortcut, event| {
            // Key repeat and release would toggle again; only the press counts.
            if event.state == ShortcutState::Pressed {
                panel::toggle(app);
            }
        });
    let notice = registered.err().map(|e| {
        tracing::warn!(error = %e, hotkey = %hotkey, "global shortcut not registered");
        format!("Hotkey {hotkey} unavailable ({e}); set [app] hotkey in the config file")
    });
    state.set_hotkey_notice(notice);
}
