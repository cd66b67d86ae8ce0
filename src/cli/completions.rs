//! `brain completions SHELL`: the shell's completion script, made from the same clap
//! definition the command line is parsed with, so that it names every subcommand, flag and
//! mode value there is, and never one that is gone.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use super::args::Cli;

/// Prints `shell`'s script on stdout (written whole: a shell sourcing it reads all or none).
pub fn run(shell: Shell) -> Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "brain", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
