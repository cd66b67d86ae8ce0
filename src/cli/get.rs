//! `brain get PATH[:LINE[:COUNT]]`: a note, or the passage around a hit, with line numbers.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::passage::{self, NoteRef, Passage};
use brain::Config;

use super::args::GetArgs;

/// Runs `brain get`.
pub fn run(config: Config, args: GetArgs) -> Result<ExitCode> {
    let note = NoteRef::parse(&args.spec)?;
    let passage = passage::read(&config.root, &note)?;
    super::stats::record_read(&config, &passage.path, brain::usage::Via::Cli);
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&passage)?)?;
    } else {
        print(&mut out, &passage)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `lore/x.md:10-29 (of 45 lines)` then `   10  text` lines.
pub fn print(out: &mut impl Write, p: &Passage) -> io::Result<()> {
    writeln!(
        out,
        "{}:{}-{} (of {} lines)",
        p.path, p.start_line, p.end_line, p.total_lines
    )?;
    let width = p.end_line.to_string().len().max(4);
    for (i, line) in p.text.lines().enumerate() {
        writeln!(out, "{:>width$}  {line}", p.start_line as usize + i)?;
    }
    Ok(())
}
