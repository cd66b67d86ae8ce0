//! Start-up in one place: the menu-bar presence (activation policy, tray icon and menu),
//! the global shortcut, and the first look at the brain folder. Platform quirks are noted
//! where they bite.

use tauri::image::Image;
use tauri::tray::TrayIconBuilder;
use tauri::{App, AppHandle, Manager};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};

use crate::actions;
use crate::menu::{self, MenuAction};
use crate::panel;
use crate::state::{AppState, PanelStatus};

const TRAY_ID: &str = "brain";

/// Sets everything up; nothing here is fatal except a tray that cannot exist at all.
pub fn init(app: &mut App) -> anyhow::Result<()> {
    // A menu-bar app: no Dock icon, no app switcher entry.
    #[cfg(target_os = "macos")]
    app.set_activation_policy(tauri::ActivationPolicy::Accessory);

    let handle = app.handle().clone();
    if let Err(e) = actions::open_brain(&handle) {
        actions::report(&handle, "opening the brain", &e);
    }
    register_hotkey(&handle);
    let status = handle.state::<AppState>().status();
    if let Err(e) = create_tray(&handle, &status) {
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

/// Rebuilds the tray menu (and tooltip) for `status`.
pub fn refresh_tray(app: &AppHandle, status: &PanelStatus) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    match menu::build(app, status) {
        Ok(m) => {
            let _ = tray.set_menu(Some(m));
        }
        Err(e) => tracing::warn!(error = %e, "could not rebuild the tray menu"),
    }
    let _ = tray.set_tooltip(Some(format!("Brain: {}", status.line)));
}

fn create_tray(app: &AppHandle, status: &PanelStatus) -> anyhow::Result<()> {
    // macOS tints a black template image to suit the menu bar; other trays get colour.
    let icon = if cfg!(target_os = "macos") {
        Image::from_bytes(include_bytes!("../../icons/tray-template.png"))?
    } else {
        Image::from_bytes(include_bytes!("../../icons/tray-color.png"))?
    };
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon)
        .icon_as_template(cfg!(target_os = "macos"))
        .tooltip(format!("Brain: {}", status.line))
        .menu(&menu::build(app, status)?)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .build(app)?;
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
        MenuAction::DownloadModel => actions::download_model(app),
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
