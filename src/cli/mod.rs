//! The `brain` binary's glue: parse arguments, call the library, print, pick the exit code.

mod args;
mod completions;
mod eval;
mod get;
mod index;
mod install;
pub(crate) mod kb;
mod mcp;
mod model;
pub(crate) mod paint;
pub(crate) mod print;
mod search;
mod serve;
mod shim;
mod similar;
pub(crate) mod stats;
mod status;

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::Config;
use clap::Parser;

use args::{Cli, Command};

/// Stdout for a command whose work goes on past what it prints, or whose exit status
/// reports a finding (`install`, `index-md`, `check`): once the reader has closed it
/// (`| head -1`), what is printed goes nowhere and the work and the status stand. With a
/// plain stdout the first line past the reader's stopped the install half-way, and
/// `check` with problems exited 0.
pub(crate) struct UntilClosed<W> {
    out: W,
    closed: bool,
}

impl<W: Write> UntilClosed<W> {
    /// `out`, written to until its reader closes it.
    pub(crate) fn new(out: W) -> UntilClosed<W> {
        UntilClosed { out, closed: false }
    }
}

impl<W: Write> UntilClosed<W> {
    /// `op` on the stream while its reader is there; `gone` (what success would have
    /// returned) once it has closed, now or before.
    fn unless_closed<T>(
        &mut self,
        gone: T,
        op: impl FnOnce(&mut W) -> io::Result<T>,
    ) -> io::Result<T> {
        if self.closed {
            return Ok(gone);
        }
        match op(&mut self.out) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(gone)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for UntilClosed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.unless_closed(buf.len(), |out| out.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.unless_closed((), |out| out.flush())
    }
}

/// Runs the command line and turns the outcome into an exit code: 0 success, 1 failure,
/// 2 bad input. A closed stdout (`brain search x | head -1`) is success, not an error,
/// but for the commands that print through [`UntilClosed`].
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(args::protect_excludes(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            if err
                .downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let code = err
                .downcast_ref::<brain::Error>()
                .map(brain::Error::exit_code)
                .or_else(|| {
                    err.downcast_ref::<brain::service::ServiceError>()
                        .map(|e| e.exit_code())
                })
                .unwrap_or(1);
            let _ = writeln!(io::stderr(), "error: {}", one_line(&format!("{err:#}")));
            ExitCode::from(code as u8)
        }
    }
}

/// A command line clap could not read: help and version as clap prints them, anything
/// else in one line, as every other error (clap's cause, its tip, where the help is),
/// exit 2.
fn usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        err.exit();
    }
    // clap's text: the cause (its first paragraph, which may list names on lines of its
    // own), tips, the usage line and a pointer to --help, in paragraphs.
    let text = err.to_string();
    let mut paragraphs = text.split("\n\n");
    let mut line = paragraphs
        .next()
        .unwrap_or("error: bad arguments")
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    // Lossy: an argument that is not UTF-8 must not panic the error's own path.
    let own_tip = value_tip(
        &err,
        std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned()),
    );
    for tip in paragraphs
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| l.starts_with("tip:"))
    {
        line.push_str("; ");
        match (&own_tip, tip.starts_with("tip: to pass")) {
            (Some(own), true) => line.push_str(own),
            _ => line.push_str(tip),
        }
    }
    let _ = writeln!(io::stderr(), "{} (see --help)", one_line(&line));
    ExitCode::from(2)
}

/// How much of an error line is shown: a value echoed in it (a 100 KB `--dir`) is cut in
/// its middle, so that the cause before it and what to do after it still show.
const ERROR_CHARS: usize = 2000;

/// The longest word of an error line shown whole.
const LONG_WORD: usize = 240;

/// An error message as one line of plain text: a control character from a value it
/// echoes (a newline in a path, which made a second `error:` line of the rest; a
/// terminal escape) is written as its escape (`\n`, `\u{1b}`), and a message past
/// [`ERROR_CHARS`] is cut in the middle.
fn one_line(message: &str) -> String {
    let escaped: String = message
        .chars()
        .flat_map(|c| {
            let plain = !c.is_control() && !brain::text::is_bidi_control(c);
            either(plain, c)
        })
        .collect();
    elided(&long_words_cut(&escaped), ERROR_CHARS, " ")
}

/// `message` with each word past [`LONG_WORD`] characters (a path, a value echoed whole)
/// cut in its middle: the words around it, the cause and what to do, stay whole.
pub(crate) fn long_words_cut(message: &str) -> String {
    message
        .split(' ')
        .map(|word| elided(word, LONG_WORD, ""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` if it is `max` characters or fewer, else its first and last `max / 2` with how
/// many were left out between them (`gap` on each side of that mark).
fn elided(text: &str, max: usize, gap: &str) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let keep = max / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(n - keep).collect();
    format!(
        "{head}{gap}[... {} characters ...]{gap}{tail}",
        n - 2 * keep
    )
}

/// `c` itself, or its escape.
fn either(plain: bool, c: char) -> impl Iterator<Item = char> {
    let (one, escaped) = match plain {
        true => (Some(c), None),
        false => (None, Some(c.escape_default())),
    };
    one.into_iter().chain(escaped.into_iter().flatten())
}

/// The tip for a value that begins with `-` (a title such as `- draft` or `-x marks`):
/// clap's tip names only the flag it read (`'- '`, `'-x'`) and leaves the quotes out, so
/// its `-- - ` loses the value. The whole argument, quoted for a shell, from `args`.
fn value_tip(err: &clap::Error, args: impl Iterator<Item = String>) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(read)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    // `--name=value` is read as the flag `--name`: no value that begins with `-` is there.
    // A short flag's cluster is read one letter at a time: the value is the argument
    // that begins with what was read.
    let whole = args.into_iter().find(|a| {
        a == read
            || (!read.starts_with("--") && read.starts_with('-') && a.starts_with(read.as_str()))
    })?;
    let quoted = shlex::try_quote(&whole).ok()?;
    Some(format!(
        "tip: to pass '{whole}' as a value, give the options first, then -- before it: -- {quoted}"
    ))
}

fn run(cli: Cli) -> Result<ExitCode> {
    if let Command::LogRead = cli.command {
        // A hook: whatever happens, print nothing and exit 0.
        stats::log_read(cli.dir.clone());
        return Ok(ExitCode::SUCCESS);
    }
    // Needs nothing of the brain's: a config that does not load must not stop it.
    if let Command::Completions(args) = &cli.command {
        return completions::run(args.shell);
    }
    let overrides = brain::config::Overrides {
        root: cli.dir.clone(),
        // Install writes the config `BRAIN_CONFIG` names when there is none yet.
        config_may_be_new: matches!(cli.command, Command::Install(_)),
        ..Default::default()
    };
    // Taking brain away, or saying what is wrong with an install, must not need the very
    // settings that may be what is wrong: those two go on from the file's locations.
    let lenient = match &cli.command {
        Command::Uninstall(_) => true,
        Command::Install(args) => args.check,
        _ => false,
    };
    let (config, config_error) = match Config::load(overrides.clone()) {
        Err(brain::Error::Config(why)) if lenient => {
            (Config::load_locations(overrides)?, Some(why))
        }
        loaded => (loaded?, None),
    };
    // A model name brain does not know is a setting to fix for every command that may
    // embed (a keyword search never loads the model, and passed it by; through a backend
    // it was told to restart it with that model). The others never read it: `get`, the
    // knowledge-base commands and `mcp` (whose keyword search keeps working, and whose
    // refusal at start would only reach a log) go on; `model` lists the names.
    if matches!(
        cli.command,
        Command::Search(_)
            | Command::Similar(_)
            | Command::Index(_)
            | Command::Serve(_)
            | Command::Eval(_)
    ) {
        brain::embed::check_model_name(&config)?;
    }
    let paint = paint::Paint::for_stdout(cli.color);
    match cli.command {
        Command::Index(args) => index::run(config, args),
        Command::Search(args) => search::run(config, args, paint),
        Command::Status(args) => status::run(config, args),
        Command::Similar(args) => similar::run(config, args, paint),
        Command::Stats(args) => stats::run(config, args),
        Command::New(args) => kb::new(config, args),
        Command::Check(args) => kb::check(config, args),
        Command::IndexMd(args) => kb::index_md(config, args),
        Command::Links(args) => kb::links(config, args),
        Command::LogRead | Command::Completions(_) => Ok(ExitCode::SUCCESS),
        Command::Eval(args) => eval::run(config, args),
        Command::Get(args) => get::run(config, args, paint),
        Command::Model(cmd) => model::run(config, cmd),
        Command::Serve(args) => serve::run(config, args),
        Command::Mcp(args) => mcp::run(config, args),
        Command::Install(args) => install::run(config, config_error, args),
        Command::Uninstall(args) => install::uninstall(config, config_error, args),
    }
}
