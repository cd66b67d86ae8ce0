//! `brain status`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::Config;

use super::args::StatusArgs;
use super::{print, shim};

/// Runs `brain status`.
pub fn run(config: Config, args: StatusArgs) -> Result<ExitCode> {
    // A model brain does not know is a mistake in the settings, as for every command
    // (exit 2), not a model to fetch: fetching it fails too.
    brain::embed::check_model_name(&config)?;
    let ours = config.model.clone();
    // Before the rest: a damaged index is the one line that matters (exit 1). The file is
    // read here, in-process, beside any backend (a read transaction, as a search's).
    let checked = match args.check {
        true => {
            let started = std::time::Instant::now();
            brain::Engine::open_named(config.clone())?.check_index()?;
            Some(started.elapsed())
        }
        false => None,
    };
    // A backend that is there but does not answer is not "not running": the fallback's
    // warning is said, and the backend line agrees with it.
    let silent = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = silent.clone();
    let socket = brain::service::socket_path(&config);
    let status = shim::answerer(config, &args.daemon)
        .on_fallback(move |e| {
            let _ = writeln!(io::stderr(), "warning: {e}; working in-process");
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
        })
        .status()?;
    // Told not to ask a backend, this process still says whether one answers there (a
    // connection opened and closed: the backend reads no request from it).
    let why = why_none(
        &status,
        !args.daemon.no_daemon,
        silent.load(std::sync::atomic::Ordering::Relaxed),
        socket,
    );
    // A backend describes itself: say when it serves other settings than this command's,
    // whose searches then run in-process (with a notice of their own).
    if let Some(note) = model_mismatch(&status, &ours) {
        eprintln!("note: {note}");
    }
    let mut out = io::stdout().lock();
    // With --json, a check that found damage printed nothing and exits 1: scripts read the
    // exit code, and the object stays the one `status --json` always prints.
    if args.json {
        // `backend` is the backend that answered; a script reading `null` as "not running"
        // was wrong under --no-daemon with one running: the state says which.
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&with_state(&status, why))?
        )?;
    } else {
        print::status_of(&mut out, &status, why)?;
        if let Some(took) = checked {
            writeln!(
                out,
                "check:     no damage found: the whole index was read in {} ms",
                took.as_millis()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Why `status` has no backend in it, when it has none: one was asked (`asks`) and did not
/// answer (`silent`), or was not asked though one answers at `socket`, or none runs.
pub(crate) fn why_none(
    status: &brain::service::StatusReport,
    asks: bool,
    silent: bool,
    socket: std::path::PathBuf,
) -> print::NoBackend {
    if silent {
        print::NoBackend::Silent
    } else if !asks && status.backend.is_none() && answers_at(socket) {
        print::NoBackend::NotAsked
    } else {
        print::NoBackend::NotRunning
    }
}

/// `status --json` (and the MCP tool's `json`): the report, then `backend_state`.
pub(crate) fn with_state(
    status: &brain::service::StatusReport,
    why: print::NoBackend,
) -> WithState<'_> {
    let backend_state = match (status.backend.is_some(), why) {
        (true, _) => "answered",
        (false, print::NoBackend::NotAsked) => "not_asked",
        (false, print::NoBackend::Silent) => "not_answering",
        (false, print::NoBackend::NotRunning) => "not_running",
    };
    WithState {
        report: status,
        backend_state,
    }
}

/// `status --json`: the report, its fields in their order, then why `backend` is what it is.
#[derive(serde::Serialize)]
pub(crate) struct WithState<'a> {
    #[serde(flatten)]
    report: &'a brain::service::StatusReport,
    backend_state: &'static str,
}

/// When a backend answered `status` and embeds with another model than `ours` (the
/// caller's settings name), what that means: said by `brain status` on stderr and by the
/// MCP tool in its answer, where the searches it then fails or runs in-process otherwise
/// contradict the model line.
pub fn model_mismatch(status: &brain::service::StatusReport, ours: &str) -> Option<String> {
    (status.backend.is_some() && status.status.model != ours).then(|| {
        format!(
            "the backend embeds with {}, and this command's settings name {ours}: searches \
             with these settings run in-process until 'brain serve' restarts",
            status.status.model
        )
    })
}

/// Whether a backend accepts connections at `socket`, within a moment: a connect to a
/// backend whose queue is full waits, and `--no-daemon` is what a person reaches for when
/// the backend is stuck.
fn answers_at(socket: std::path::PathBuf) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::os::unix::net::UnixStream::connect(&socket).is_ok());
    });
    rx.recv_timeout(std::time::Duration::from_millis(300))
        .unwrap_or(false)
}
