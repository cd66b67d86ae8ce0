//! `brain index`: sync the index with the folder and say what changed.

use std::io::{self, Write};
use std::process::ExitCode;

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
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        print::sync_line(&mut out, &report, notes)?;
    }
    Ok(ExitCode::SUCCESS)
}
