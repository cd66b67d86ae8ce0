//! `brain status`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::service::protocol::ErrorCode;
use brain::service::ServiceError;
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
    let fell_back = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen = fell_back.clone();
    let socket = brain::service::socket_path(&config);
    let holder = brain::service::backend_holder(&config);
    let status = shim::answerer(config, &args.daemon)
        .on_fallback(move |e| {
            let _ = writeln!(io::stderr(), "warning: {e}; working in-process");
            let busy = matches!(e, ServiceError::Remote(f) if f.code == ErrorCode::Busy);
            let why = match busy {
                true => print::NoBackend::Busy,
                false => print::NoBackend::Silent,
            };
            if let Ok(mut seen) = seen.lock() {
                *seen = Some((why, e.to_string()));
            }
        })
        .status()?;
    // Told not to ask a backend, this process still says whether one answers there (a
    // connection opened and closed: the backend reads no request from it).
    let (fell_back, said) = fell_back.lock().ok().and_then(|seen| seen.clone()).unzip();
    let why = why_none(&status, !args.daemon.no_daemon, fell_back, socket, holder);
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
            serde_json::to_string_pretty(&with_state(&status, why, said))?
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

/// Why `status` has no backend in it, when it has none: one was asked (`asks`) and
/// refused or did not answer (`fell_back`, what the fallback said), or was not asked though
/// one answers at `socket`, or none runs. A caller that did not see the fallback (the MCP
/// server's answerer, whose warnings go to its log) learns from the socket that one is
/// there: a connection taken there is a backend that holds the brain and did not answer.
pub(crate) fn why_none(
    status: &brain::service::StatusReport,
    asks: bool,
    fell_back: Option<print::NoBackend>,
    socket: std::path::PathBuf,
    holder: Option<u32>,
) -> print::NoBackend {
    if status.backend.is_some() {
        return print::NoBackend::NotRunning; // not read: a backend answered
    }
    match fell_back {
        Some(why) => why,
        None if answers_at(socket) => match asks {
            true => print::NoBackend::Silent,
            false => print::NoBackend::NotAsked,
        },
        None => match holder.filter(|&pid| pid != std::process::id()) {
            Some(pid) => print::NoBackend::Elsewhere(pid),
            None => print::NoBackend::NotRunning,
        },
    }
}

/// `status --json` (and the MCP tool's `json`): the report, then `backend_state`, and what
/// a backend that was asked and not used said (`error`).
pub(crate) fn with_state(
    status: &brain::service::StatusReport,
    why: print::NoBackend,
    error: Option<String>,
) -> WithState<'_> {
    let backend_state = match (status.backend.is_some(), why) {
        (true, _) => "answered",
        (false, print::NoBackend::NotAsked) => "not_asked",
        (false, print::NoBackend::Silent) => "not_answering",
        (false, print::NoBackend::Busy) => "busy",
        (false, print::NoBackend::NotRunning) => "not_running",
        (false, print::NoBackend::Elsewhere(_)) => "elsewhere",
    };
    WithState {
        report: status,
        backend_state,
        backend_error: error.filter(|_| status.backend.is_none()),
    }
}

/// `status --json`: the report, its fields in their order, then why `backend` is what it is.
#[derive(serde::Serialize)]
pub(crate) struct WithState<'a> {
    #[serde(flatten)]
    report: &'a brain::service::StatusReport,
    backend_state: &'static str,
    /// Why a backend that was asked was not used (it did not answer, it embeds with another
    /// model...), as the warning on stderr said it; `null` otherwise. The MCP server's
    /// warnings go to its log, which the model never reads: this is where it learns why.
    backend_error: Option<String>,
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
