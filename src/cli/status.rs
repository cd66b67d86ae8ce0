//! `brain status`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::Config;

use super::args::StatusArgs;
use super::{print, shim};

/// Runs `brain status`.
pub fn run(config: Config, args: StatusArgs) -> Result<ExitCode> {
    let status = shim::answerer(config, &args.daemon).status()?;
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
    } else {
        print::status(&mut out, &status)?;
    }
    Ok(ExitCode::SUCCESS)
}
