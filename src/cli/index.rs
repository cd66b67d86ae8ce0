//! `brain index`: sync the index with the folder, embed new passages, say what changed.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use brain::{Config, Engine};

use super::args::IndexArgs;
use super::print;

/// Runs `brain index`.
pub fn run(config: Config, args: IndexArgs) -> Result<ExitCode> {
    let engine = Engine::open(config)?;
    let report = engine.sync()?;
    let notes = engine.status()?.notes;
    let mut err = io::stderr().lock();
    for w in &report.warnings {
        writeln!(err, "warning: {w}")?;
    }
    drop(err);
    let show_progress = io::stderr().is_terminal() && !args.json;
    let started = Instant::now();
    let embedded = engine.embed_pending_with(usize::MAX, &mut |done, total| {
        if show_progress {
            let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-3);
            let _ = write!(
                io::stderr(),
                "\r\x1b[Kembedding {done}/{total} passages ({rate:.0}/s)"
            );
        }
        true
    })?;
    if show_progress && embedded.embedded > 0 {
        let _ = write!(io::stderr(), "\r\x1b[K");
    }
    let mut out = io::stdout().lock();
    if args.json {
        let json = serde_json::json!({ "sync": report, "embed": embedded });
        writeln!(out, "{json}")?;
    } else {
        print::sync_line(&mut out, &report, notes)?;
        if embedded.embedded > 0 {
            print::embed_line(&mut out, &embedded)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
