//! The backend as the app and the MCP server use it: started in-process through the
//! library, asked through its own `Answerer` (as the app does), a `Client` and an
//! `Answerer` that finds it on the socket (as the CLI and the MCP server do).

use std::time::Duration;

use brain::search::{Mode, SearchRequest};
use brain::service::{Backend, BackendEvent, BackendOptions, Client, ServiceError, WatcherState};
use brain::Config;

use crate::harness::{eventually, Brain, Run};

#[test]
fn the_library_backend_serves_clients_and_stops_cleanly() {
    let brain = Brain::example();
    let config = Config::for_root(&brain.root, brain.path("data"));
    let backend = Backend::start(config.clone(), BackendOptions::default()).unwrap();
    let mut events = backend.subscribe();
    let hosted = backend.answerer();
    eventually(Duration::from_secs(20), || {
        (hosted.status().unwrap().status.notes == 34).then_some(())
    });

    let mut req = SearchRequest::new("flag cleanup");
    req.mode = Mode::Bm25;
    let direct = hosted.search(&req).unwrap();
    let mut client = Client::connect(&config).unwrap();
    assert_eq!(client.hello().unwrap().pid, std::process::id());
    let remote = client.search(&req).unwrap();
    assert_eq!(remote.results, direct.results);
    assert_eq!(remote.results[0].path, "lore/flag-cleanup-test-rework.md");

    let status = client.status().unwrap();
    let section = status.backend.unwrap();
    let through_socket = brain::Answerer::new(config.clone(), true);
    assert_eq!(through_socket.search(&req).unwrap().results, direct.results);
    assert!(through_socket.status().unwrap().backend.is_some());
    let in_process = brain::Answerer::new(config.clone(), false);
    assert!(in_process.status().unwrap().backend.is_none());
    assert_eq!(section.watcher, WatcherState::On);
    assert_eq!(section.socket, backend.socket_path().to_string_lossy());

    brain.write("lore/library.md", "# Library\n\nlibraryword\n");
    let report = client.reindex(false).unwrap();
    assert_eq!(report.added + report.unchanged, 35);
    let synced = eventually(Duration::from_secs(5), || match events.try_recv() {
        Ok(BackendEvent::Synced { summary, .. }) => Some(summary),
        _ => None,
    });
    assert!(synced.took_ms < 60_000);

    match Backend::start(config.clone(), BackendOptions::default()) {
        Err(e @ ServiceError::AlreadyRunning { .. }) => assert_eq!(e.exit_code(), 3),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a second backend started on the same root"),
    }

    let socket = backend.socket_path().to_path_buf();
    backend.shutdown();
    assert!(!socket.exists());
    let err = Client::connect(&config).unwrap_err();
    assert!(err.is_unavailable() && !err.is_surprising(), "{err}");
    drop(Backend::start(config, BackendOptions::default()).unwrap());
}

/// A backend with every client slot taken refuses the next client before it reads a
/// request, with an error that answers no request: the client takes it for what it is
/// (busy, so work in-process), not for an unreadable answer, and `status` says busy.
#[test]
fn a_backend_with_every_slot_taken_is_busy_not_broken() {
    let brain = Brain::example();
    let config = Config::for_root(&brain.root, brain.path("data"));
    let options = BackendOptions {
        max_clients: 1,
        ..BackendOptions::default()
    };
    let backend = Backend::start(config.clone(), options).unwrap();
    let mut holder = Client::connect(&config).unwrap();
    holder.hello().unwrap();

    let err = Client::connect(&config)
        .and_then(|mut c| c.hello())
        .unwrap_err();
    match &err {
        ServiceError::Remote(fault) => {
            assert_eq!(fault.code, brain::service::protocol::ErrorCode::Busy);
            assert_eq!(
                fault.message,
                "the backend is busy: 1 clients are connected"
            );
        }
        other => panic!("not a busy refusal: {other:?}"),
    }
    assert!(err.is_unavailable() && err.is_surprising(), "{err}");

    // The CLI's status, through the same socket: its own process, given this test
    // process's runtime folder, where the backend started here has its socket.
    let status = |args: &[&str]| {
        let mut cmd = brain.command();
        match std::env::var_os("XDG_RUNTIME_DIR") {
            Some(dir) => cmd.env("XDG_RUNTIME_DIR", dir),
            None => cmd.env_remove("XDG_RUNTIME_DIR"),
        };
        Run(cmd.args(args).output().unwrap())
    };
    let out = status(&["status", "--json"]);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    assert_eq!(out.json()["backend_state"], "busy", "{}", out.stdout());
    let stderr = out.stderr();
    assert!(
        stderr.contains("the backend is busy") && stderr.contains("working in-process"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let human = status(&["status"]);
    assert!(
        human.stdout().contains("backend:   busy"),
        "{}",
        human.stdout()
    );
    drop(holder);
    backend.shutdown();
}
