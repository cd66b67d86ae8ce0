//! The tray menu: each item's id and label side by side, and the menu built from the
//! current status (the status line at the top, `Download Model...` only while there is none,
//! `Launch at Login` checked when it is on).

use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::{AppHandle, Wry};

use crate::state::PanelStatus;

/// What a tray menu item does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuAction {
    /// Show the search panel.
    Search,
    /// Sync the index with the folder now.
    Reindex,
    /// Open the brain folder in the file manager.
    OpenFolder,
    /// Copy the `brain` command's path.
    CopyCliPath,
    /// Link the bundled `brain` command into a folder on PATH.
    InstallCli,
    /// Fetch the pinned embedding model.
    DownloadModel,
    /// Start the app at login, or stop doing so.
    LaunchAtLogin,
    /// Open the app's log file (the backend it hosts logs there too).
    OpenLog,
    /// Version, commit, pinned model revision.
    About,
    /// Quit the app.
    Quit,
}

/// Ids and labels, defined together.
const ITEMS: &[(MenuAction, &str, &str)] = &[
    (MenuAction::Search, "search", "Search..."),
    (MenuAction::Reindex, "reindex", "Reindex"),
    (MenuAction::OpenFolder, "open-folder", "Open Brain Folder"),
    (MenuAction::CopyCliPath, "copy-cli-path", "Copy CLI Path"),
    (
        MenuAction::InstallCli,
        "install-cli",
        "Install Command Line Tool...",
    ),
    (
        MenuAction::DownloadModel,
        "download-model",
        "Download Model...",
    ),
    (
        MenuAction::LaunchAtLogin,
        "launch-at-login",
        "Launch at Login",
    ),
    (MenuAction::OpenLog, "open-log", "Open Log"),
    (MenuAction::About, "about", "About Brain"),
    (MenuAction::Quit, "quit", "Quit Brain"),
];

impl MenuAction {
    /// The action of a clicked item's id.
    pub fn from_id(id: &str) -> Option<MenuAction> {
        ITEMS.iter().find(|(_, i, _)| *i == id).map(|(a, _, _)| *a)
    }

    fn id_and_label(self) -> (&'static str, &'static str) {
        ITEMS
            .iter()
            .find(|(a, _, _)| *a == self)
            .map(|(_, i, l)| (*i, *l))
            .unwrap_or(("", ""))
    }
}

/// The tray menu for `status`.
pub fn build(app: &AppHandle, status: &PanelStatus) -> tauri::Result<Menu<Wry>> {
    let info = |id: &str, text: &str| MenuItem::with_id(app, id, text, false, None::<&str>);
    let item = |action: MenuAction, enabled: bool, accel: Option<&str>| {
        let (id, label) = action.id_and_label();
        MenuItem::with_id(app, id, label, enabled, accel)
    };
    let mut items: Vec<Box<dyn IsMenuItem<Wry>>> = vec![Box::new(info("status", &status.line)?)];
    for (id, notice) in [
        ("hotkey-notice", &status.hotkey_notice),
        ("backend-notice", &status.backend_notice),
    ] {
        if let Some(text) = notice {
            items.push(Box::new(info(id, text)?));
        }
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    let accel = status
        .hotkey_notice
        .is_none()
        .then_some(status.hotkey.as_str());
    items.push(Box::new(item(MenuAction::Search, true, accel)?));
    items.push(Box::new(item(
        MenuAction::Reindex,
        status.root_exists && !status.indexing,
        None,
    )?));
    items.push(Box::new(item(
        MenuAction::OpenFolder,
        status.root_exists,
        None,
    )?));
    items.push(Box::new(item(MenuAction::CopyCliPath, true, None)?));
    items.push(Box::new(item(MenuAction::InstallCli, true, None)?));
    if !status.model_installed {
        items.push(Box::new(item(MenuAction::DownloadModel, true, None)?));
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    if let Some(on) = status.launch_at_login {
        let (id, label) = MenuAction::LaunchAtLogin.id_and_label();
        items.push(Box::new(CheckMenuItem::with_id(
            app,
            id,
            label,
            true,
            on,
            None::<&str>,
        )?));
    }
    items.push(Box::new(item(MenuAction::OpenLog, true, None)?));
    items.push(Box::new(item(MenuAction::About, true, None)?));
    items.push(Box::new(item(MenuAction::Quit, true, None)?));
    let refs: Vec<&dyn IsMenuItem<Wry>> = items.iter().map(|b| b.as_ref()).collect();
    Menu::with_items(app, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_has_a_unique_id_that_maps_back() {
        for (action, id, label) in ITEMS {
            assert_eq!(MenuAction::from_id(id), Some(*action));
            assert_eq!(action.id_and_label(), (*id, *label));
        }
        assert_eq!(
            MenuAction::from_id("status"),
            None,
            "the status line is not an action"
        );
    }
}
