//! The `brain` binary's glue: parse arguments, call the library, print, pick the exit code.

mod args;
mod print;

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::search::{Filters, SearchRequest};
use brain::{Config, Engine};
use clap::Parser;

use args::{Cli, Command, IndexArgs, SearchArgs, StatusArgs};

/// Runs the command line and turns the outcome into an exit code: 0 success, 1 failure,
/// 2 bad input. A closed stdout (`brain search x | head -1`) is success, not an error.
pub fn main() -> ExitCode {
    let cli = Cli::parse_from(args::protect_excludes(std::env::args_os().collect()));
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            if err.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) {
                return ExitCode::SUCCESS;
            }
            let code = err.downcast_ref::<brain::Error>().map(brain::Error::exit_code).unwrap_or(1);
            let _ = writeln!(io::stderr(), "error: {err:#}");
            ExitCode::from(code as u8)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let config = Config::load(brain::config::Overrides { root: cli.dir.clone(), ..Default::default() })?;
    match cli.command {
        Command::Index(args) => index(config, args),
        Command::Search(args) => search(config, args),
        Command::Status(args) => status(config, args),
    }
}

fn index(config: Config, args: IndexArgs) -> Result<ExitCode> {
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

fn search(config: Config, args: SearchArgs) -> Result<ExitCode> {
    let request = SearchRequest {
        query: args::restore_query(&args.query),
        mode: args.mode,
        top: args.top,
        filters: Filters { kind: args.kind, tag: args.tag },
        sync: !args.no_sync,
        explain: args.explain,
    };
    let engine = Engine::open(config)?;
    let response = engine.search(&request)?;
    if let Some(notice) = &response.notice {
        writeln!(io::stderr(), "{notice}")?;
    }
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&response)?)?;
    } else {
        print::search(&mut out, &response)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn status(config: Config, args: StatusArgs) -> Result<ExitCode> {
    let engine = Engine::open(config)?;
    let status = engine.status()?;
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
    } else {
        print::status(&mut out, &status)?;
    }
    Ok(ExitCode::SUCCESS)
}
