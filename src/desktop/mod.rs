//! What the menu-bar app needs from the core, kept here so that it is tested without a
//! window system: how a note is opened or revealed ([`launch`]), what the copy shortcuts put
//! on the clipboard ([`copy`]), the tray's status line ([`status_line`]), where the `brain`
//! command is ([`cli_path`]), the brain folder chosen at first run ([`first_run`]), and where the
//! login item last pointed ([`login_item`]).
//!
//! Nothing here starts a process or touches a window: functions return what to run, and
//! the app runs it. The macOS variants are plain data, so they are tested on Linux too.

pub mod cli_path;
pub mod copy;
pub mod first_run;
pub mod launch;
pub mod login_item;
pub mod status_line;
