//! brain-app: see the `brain_app` library.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    brain_app::run()
}
