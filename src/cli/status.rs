//! `brain status`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::service::protocol::{Op, Reply};
use brain::{Config, Engine};

use super::args::StatusArgs;
use super::{print, shim};

/// Runs `brain status`.
pub fn run(config: Config, args: StatusArgs) -> Result<ExitCode> {
    let status = match shim::ask(&config, &args.daemon, Op::Status)? {
        Some(Reply::Status(status)) => *status,
        Some(other) => anyhow::bail!("the backend answered a status request with {}", other.op()),
        None => Engine::open(config)?.status()?,
    };
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
    } else {
        print::status(&mut out, &status)?;
    }
    Ok(ExitCode::SUCCESS)
}
