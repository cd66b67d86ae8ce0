//! Tauri's build step, plus the list of commands the panel may call: every command named
//! here gets an `allow-<name>` permission, and only those granted in `capabilities/` work.

/// The app's commands; `src/commands.rs` defines them and `capabilities/panel.json` grants them.
const COMMANDS: &[&str] = &[
    "search",
    "preview",
    "open",
    "reveal",
    "copy",
    "status",
    "reindex",
    "hide_panel",
    "create_brain",
    "choose_folder",
    "download_model",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    tauri_build::try_build(attributes).unwrap_or_else(|e| panic!("tauri build step failed: {e:#}"));
}
