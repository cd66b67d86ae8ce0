//! Smoke tests of the commands through Tauri's IPC with the mock runtime and the app's own
//! context (so capabilities/panel.json is in force): the panel's window may search, read
//! previews and ask for the status; any other window may not; hostile paths are refused.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use brain_app::commands;
use brain_app::host::Host;
use brain_app::state::AppState;
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

struct Fixture {
    _dir: tempfile::TempDir,
    app: App<MockRuntime>,
    root: PathBuf,
}

/// A copy of examples/brain, indexed, served by an app with the panel's commands.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("brain");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/brain"),
        &root,
    );
    let config = brain::Config::for_root(&root, dir.path().join("data"));
    let state = AppState::new(config.clone());
    state.set_host(Some(Host::start(config, |_| {}).unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while state.status().notes == 0 {
        assert!(Instant::now() < deadline, "the index never filled");
        std::thread::sleep(Duration::from_millis(50));
    }
    let app = mock_builder()
        .manage(state)
        .invoke_handler(tauri::generate_handler![
            commands::search,
            commands::preview,
            commands::status
        ])
        .build(tauri::generate_context!(test = true))
        .unwrap();
    Fixture {
        _dir: dir,
        app,
        root,
    }
}

fn window(app: &App<MockRuntime>, label: &str) -> WebviewWindow<MockRuntime> {
    WebviewWindowBuilder::new(app, label, Default::default())
        .build()
        .unwrap()
}

fn invoke(w: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(w, request).map(|b| b.deserialize::<Value>().unwrap())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_panel_searches_previews_and_reads_the_status() {
    let f = fixture();
    let panel = window(&f.app, "panel");

    let res = invoke(
        &panel,
        "search",
        json!({ "query": "sqlite wal checkpoint", "mode": "hybrid" }),
    )
    .unwrap();
    let first = &res["results"][0];
    assert_eq!(first["path"], "lore/sqlite-wal-checkpoint-starvation.md");
    assert_eq!(first["bm25_rank"], 1);
    assert!(first["snippet"].as_str().unwrap().contains('«'), "{first}");
    assert_eq!(
        res["mode"], "bm25",
        "without a model hybrid falls back to keywords"
    );

    let line = first["line"].as_u64().unwrap();
    let passage = invoke(
        &panel,
        "preview",
        json!({ "path": first["path"], "line": line }),
    )
    .unwrap();
    assert!(
        passage["start_line"].as_u64().unwrap() <= line
            && line <= passage["end_line"].as_u64().unwrap()
    );

    let status = invoke(&panel, "status", json!({})).unwrap();
    assert!(status["notes"].as_u64().unwrap() >= 30, "{status}");
    assert_eq!(status["model_installed"], false);
    assert_eq!(status["root"], f.root.to_string_lossy().as_ref());
    assert!(
        status["line"].as_str().unwrap().contains("keywords only"),
        "{status}"
    );
}

#[test]
fn meaning_mode_without_a_model_says_why() {
    let f = fixture();
    let panel = window(&f.app, "panel");
    let err = invoke(
        &panel,
        "search",
        json!({ "query": "retries", "mode": "semantic" }),
    )
    .unwrap_err();
    assert!(err.as_str().unwrap().contains("model"), "{err}");
}

#[test]
fn previews_stay_inside_the_brain() {
    let f = fixture();
    std::fs::write(f.root.parent().unwrap().join("secret.md"), "secret").unwrap();
    let panel = window(&f.app, "panel");
    for path in ["../secret.md", "/etc/passwd", "lore/../../secret.md"] {
        let err = invoke(&panel, "preview", json!({ "path": path, "line": 1 })).unwrap_err();
        let text = err.as_str().unwrap();
        assert!(
            text.contains("outside the brain")
                || text.contains("not a markdown")
                || text.contains("no such note"),
            "{path}: {text}"
        );
    }
}

#[test]
fn other_windows_get_no_commands() {
    let f = fixture();
    let other = window(&f.app, "other");
    let err = invoke(
        &other,
        "search",
        json!({ "query": "sqlite", "mode": "hybrid" }),
    )
    .unwrap_err();
    assert!(err.as_str().unwrap().contains("not allowed"), "{err}");
}

#[test]
fn a_brain_that_could_not_be_opened_says_why_not_that_there_is_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("brain");
    std::fs::create_dir(&root).unwrap();
    let config = brain::Config::for_root(&root, dir.path().join("data"));
    let state = AppState::new(config);
    state.set_start_error(Some("index x has schema version 99".into()));
    let app = mock_builder()
        .manage(state)
        .invoke_handler(tauri::generate_handler![commands::search, commands::status])
        .build(tauri::generate_context!(test = true))
        .unwrap();
    let panel = window(&app, "panel");
    let err = invoke(
        &panel,
        "search",
        json!({ "query": "retries", "mode": "bm25" }),
    )
    .unwrap_err();
    let err = err.as_str().unwrap();
    assert!(
        err.contains("could not be opened") && err.contains("schema version 99"),
        "{err}"
    );
    assert!(!err.contains("no brain folder"), "{err}");
    let status = invoke(&panel, "status", json!({})).unwrap();
    assert!(
        status["line"]
            .as_str()
            .unwrap()
            .starts_with("Could not open the brain: "),
        "{status}"
    );
}
