//! The search panel's window: shown centred on the screen under the pointer, hidden on
//! Esc or when it loses focus, toggled by the hotkey.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tauri::{AppHandle, Emitter, Manager, PhysicalPosition, PhysicalSize, WebviewWindow};

/// The panel window's label (tauri.conf.json, capabilities/panel.json).
pub const PANEL: &str = "panel";

/// Focus changes this soon after showing are the show itself settling, not the person
/// clicking away: X11 sends focus-out while the hotkey's key grab is still held, and a
/// desktop without a window manager (Xvfb) never hands the focus over at all.
const SHOW_GRACE: Duration = Duration::from_millis(400);

/// When the panel was last shown (managed state).
#[derive(Default)]
pub struct ShownAt(Mutex<Option<Instant>>);

/// Sent to the page each time the panel appears: it focuses the input and times the show.
pub const SHOWN_EVENT: &str = "panel-shown";

/// Shows the panel if hidden, hides it if shown.
pub fn toggle(app: &AppHandle) {
    match window(app) {
        Some(w) if w.is_visible().unwrap_or(false) => hide(app),
        _ => show(app),
    }
}

/// Shows the panel on the active screen, focused, and tells the page when it was asked for.
pub fn show(app: &AppHandle) {
    let requested_at = epoch_ms();
    tracing::debug!("showing the panel");
    let Some(w) = window(app) else { return };
    if let Err(e) = place(app, &w) {
        tracing::debug!(error = %e, "could not place the panel; it stays where it was");
    }
    if let Err(e) = w.show().and_then(|_| w.set_focus()) {
        tracing::warn!(error = %e, "could not show the panel");
        return;
    }
    *app.state::<ShownAt>()
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    let _ = app.emit_to(
        PANEL,
        SHOWN_EVENT,
        serde_json::json!({ "requested_at_ms": requested_at }),
    );
}

/// Hides the panel.
pub fn hide(app: &AppHandle) {
    tracing::debug!("hiding the panel");
    if let Some(w) = window(app) {
        let _ = w.hide();
    }
}

/// The panel lost the focus: hide it, unless it was only just shown.
pub fn blurred(app: &AppHandle) {
    let shown = *app
        .state::<ShownAt>()
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if shown.is_some_and(|at| at.elapsed() < SHOW_GRACE) {
        return;
    }
    hide(app);
}

fn window(app: &AppHandle) -> Option<WebviewWindow> {
    app.get_webview_window(PANEL)
}

/// Moves the panel onto the monitor under the pointer (else the primary one).
fn place(app: &AppHandle, w: &WebviewWindow) -> tauri::Result<()> {
    let cursor = app.cursor_position()?;
    let monitor = match app.monitor_from_point(cursor.x, cursor.y)? {
        Some(m) => m,
        None => match app.primary_monitor()? {
            Some(m) => m,
            None => return Ok(()),
        },
    };
    let (x, y) = origin(*monitor.position(), *monitor.size(), w.outer_size()?);
    w.set_position(PhysicalPosition::new(x, y))
}

/// Where the panel's top-left corner goes: centred across, a fifth of the way down, like
/// Spotlight (the eye lands there, and results grow downwards into the free space).
pub fn origin(
    monitor: PhysicalPosition<i32>,
    screen: PhysicalSize<u32>,
    panel: PhysicalSize<u32>,
) -> (i32, i32) {
    let free = |s: u32, p: u32| i64::from(s.saturating_sub(p));
    let x = i64::from(monitor.x) + free(screen.width, panel.width) / 2;
    let y = i64::from(monitor.y) + free(screen.height, panel.height) / 5;
    (
        x.clamp(i32::MIN.into(), i32::MAX.into()) as i32,
        y.clamp(i32::MIN.into(), i32::MAX.into()) as i32,
    )
}

/// Milliseconds since the Unix epoch: the page compares it with its own `Date.now()`.
fn epoch_ms() -> u64 {
    brain::date::now_ms().max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centres_across_and_sits_high() {
        let (x, y) = origin(
            PhysicalPosition::new(1920, 0),
            PhysicalSize::new(2560, 1440),
            PhysicalSize::new(760, 500),
        );
        assert_eq!((x, y), (1920 + 900, 188));
    }

    #[test]
    fn a_panel_larger_than_the_screen_starts_at_its_corner() {
        let (x, y) = origin(
            PhysicalPosition::new(-800, 0),
            PhysicalSize::new(640, 480),
            PhysicalSize::new(760, 500),
        );
        assert_eq!((x, y), (-800, 0));
    }
}
