//! The tray icon: built once with the menu for the current status, rebuilt when the status
//! changes. What a menu item does is the caller's (see `setup`), so the actions that
//! refresh the tray do not depend on the code that dispatches to them.

use tauri::image::Image;
use tauri::tray::TrayIconBuilder;
use tauri::AppHandle;

use crate::menu;
use crate::state::PanelStatus;

const TRAY_ID: &str = "brain";

/// Creates the tray icon with the menu for `status`; `on_menu` gets the id of each item
/// chosen.
pub fn create(
    app: &AppHandle,
    status: &PanelStatus,
    on_menu: fn(&AppHandle, &str),
) -> anyhow::Result<()> {
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
        .on_menu_event(move |app, event| on_menu(app, event.id().as_ref()))
        .build(app)?;
    Ok(())
}

/// Rebuilds the tray menu (and tooltip) for `status`.
pub fn refresh(app: &AppHandle, status: &PanelStatus) {
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
