//! `brain serve`: the headless host of the warm backend (Linux, SSH sessions, tests). It
//! logs to a file, stops cleanly on SIGTERM or SIGINT, and refuses to start twice.

use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use brain::service::{Backend, BackendOptions};
use brain::Config;
use tokio::signal::unix::{signal, SignalKind};
use tracing_subscriber::EnvFilter;

use super::args::ServeArgs;

/// The shortest `--client-timeout`, in seconds.
const MIN_CLIENT_TIMEOUT: f64 = 0.1;
/// The longest, a day.
const MAX_CLIENT_TIMEOUT: f64 = 86_400.0;

/// Runs `brain serve` until a signal stops it.
pub fn run(config: Config, args: ServeArgs) -> Result<ExitCode> {
    let level = match args.log_level.trim() {
        "" => "info",
        level => level,
    };
    let filter = EnvFilter::try_new(brain::service::log_filter(level)).map_err(|e| {
        brain::Error::InvalidInput(format!("--log-level {:?}: {e}", args.log_level))
    })?;
    // Below a tenth of a second every client is cut off mid-request; past a day is no
    // limit at all (and past u64 seconds no Duration).
    if !(MIN_CLIENT_TIMEOUT..=MAX_CLIENT_TIMEOUT).contains(&args.client_timeout) {
        return Err(brain::Error::InvalidInput(format!(
            "--client-timeout must be between {MIN_CLIENT_TIMEOUT} and {MAX_CLIENT_TIMEOUT} seconds, got {}",
            args.client_timeout
        ))
        .into());
    }
    // As every other command: a mistyped --dir is refused and leaves no data behind. A
    // folder gone from under an index it has (an unmounted disk) is waited for, as the
    // app waits.
    brain::Engine::check_named(&config)?;
    let log_dir = config.log_dir();
    // The log is the backend's first write: a data dir it cannot write gets what to do.
    let unwritable = || {
        format!(
            "cannot write the backend's log in {} (make it writable, or set BRAIN_DATA_DIR to a folder that is)",
            log_dir.display()
        )
    };
    // Its lines name notes (a warning about one): as closed to others as the index.
    brain::file::private_dir(&log_dir).with_context(unwritable)?;
    let log_path = log_dir.join("serve.log");
    let log = brain::service::RotatingLog::open(&log_path).with_context(unwritable)?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Mutex::new(log))
        .with_ansi(false)
        // A log that cannot be written (a full disk) is no error of each event's, on the
        // terminal that started the backend: the log says nothing then, and `status`
        // says why the index cannot be written either.
        .log_internal_errors(false)
        .init();

    let options = BackendOptions {
        watch: !args.no_watch,
        client_timeout: Duration::from_secs_f64(args.client_timeout),
        ..BackendOptions::default()
    };
    // Signals are caught from before the backend starts, so none can kill it half-made.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut term, mut int) = runtime.block_on(async {
        let term =
            signal(SignalKind::terminate()).map_err(|e| anyhow!("cannot catch SIGTERM: {e}"))?;
        let int =
            signal(SignalKind::interrupt()).map_err(|e| anyhow!("cannot catch SIGINT: {e}"))?;
        Ok::<_, anyhow::Error>((term, int))
    })?;
    let root = config.root.clone();
    let backend = Backend::start(config, options)?;
    writeln!(
        io::stderr(),
        "brain serve: serving {} on {} (pid {}); log: {}",
        root.display(),
        backend.socket_path().display(),
        std::process::id(),
        log_path.display()
    )?;
    // Said where the person looks (it was only in the log): what it serves meanwhile.
    if !root.is_dir() {
        writeln!(
            io::stderr(),
            "brain serve: {} is not there: waiting for it to come back; searches answer from the index as it stands",
            root.display()
        )?;
    }
    let signal = runtime.block_on(async {
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        }
    });
    tracing::info!(signal, "stopping on signal");
    // Said where the start was said: a stop can take seconds (the batch in hand finishes).
    let _ = writeln!(
        io::stderr(),
        "brain serve: {signal}: stopping after the work in hand"
    );
    backend.shutdown();
    let _ = writeln!(io::stderr(), "brain serve: stopped");
    Ok(ExitCode::SUCCESS)
}
