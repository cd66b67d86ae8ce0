//! `brain stats` (what the logs say), `brain stats --reset` / `--prune`, and the two
//! writers of the read log that live in the CLI: `brain get` and the `brain log-read` hook.

use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use brain::usage::{Dropped, NoteUsage, QueryCount, Stats, Usage, Via, MAX_DAYS};
use brain::Config;

use super::args::StatsArgs;

/// The most of a hook payload read from stdin; a Read payload is a few hundred bytes plus
/// the file's text, which may be as large as a note may be (`max_file_mb`, 10 MiB by
/// default): at 8 MiB, the read of a 9 MiB note was cut, did not parse, and went
/// uncounted.
const MAX_PAYLOAD: u64 = 64 * 1024 * 1024;

/// Runs `brain stats`.
pub fn run(config: Config, args: StatsArgs) -> Result<ExitCode> {
    // Checked before the index is opened, which would create one: a mistyped --dir or a
    // bad value is said, not answered with an empty report.
    brain::usage::check_days("--days", args.days)?;
    if let Some(days) = args.prune {
        brain::usage::check_days("--prune", days)?;
    }
    brain::usage::check_root(&config)?;
    let usage = Usage::open(&config)?;
    let mut out = io::stdout().lock();
    if args.reset {
        let all = usage.stats(MAX_DAYS)?.window.totals;
        let question = format!(
            "Empty the usage logs of {}: {} and {}? [y/N] ",
            config.root.display(),
            searches(all.searches),
            reads(all.reads)
        );
        if !args.yes && !confirm(&question)? {
            // Declining is an answer, not bad input: nothing to do, and that is done.
            match args.json {
                true => writeln!(out, "{}", reset_json(Dropped::default(), false)?)?,
                false => writeln!(out, "nothing reset")?,
            }
            return Ok(ExitCode::SUCCESS);
        }
        let dropped = usage.reset()?;
        if args.json {
            writeln!(out, "{}", reset_json(dropped, true)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        return report(&mut out, false, "emptied the logs", dropped);
    }
    if let Some(days) = args.prune {
        let dropped = usage.prune(days)?;
        return report(
            &mut out,
            args.json,
            &format!("dropped rows older than {days} days"),
            dropped,
        );
    }
    let stats = usage.stats(args.days)?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&stats)?)?;
    } else {
        print(&mut out, &stats)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn report(
    out: &mut impl Write,
    json: bool,
    what: &str,
    dropped: brain::usage::Dropped,
) -> Result<ExitCode> {
    if json {
        writeln!(out, "{}", serde_json::to_string(&dropped)?)?;
    } else {
        writeln!(
            out,
            "{what}: {} and {} removed",
            searches(dropped.searches),
            reads(dropped.reads)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--reset --json`: what was removed, and `reset`, false when the question was declined
/// (which removes nothing, as emptying empty logs does: a script tells them apart by it).
fn reset_json(dropped: Dropped, reset: bool) -> Result<String> {
    let mut value = serde_json::to_value(dropped)?;
    if let Some(fields) = value.as_object_mut() {
        fields.insert("reset".into(), reset.into());
    }
    Ok(value.to_string())
}

/// Asks `question` on the terminal: true for yes, false for anything else. Without a
/// terminal there is nobody to ask, so scripts must say `--yes` (exit 2).
fn confirm(question: &str) -> Result<bool> {
    if !io::stdin().is_terminal() {
        return Err(brain::Error::InvalidInput(
            "brain stats --reset asks before emptying the logs: pass --yes to skip the question"
                .into(),
        )
        .into());
    }
    eprint!("{question}");
    io::stderr().flush()?;
    // Bytes: an answer that is not UTF-8 is not yes, not an error.
    let mut answer = Vec::new();
    io::stdin().lock().read_until(b'\n', &mut answer)?;
    Ok(is_yes(&answer))
}

/// Whether a typed answer is yes (`y` or `yes`, any case); an empty line is the default,
/// no, and so is anything that is not text.
fn is_yes(answer: &[u8]) -> bool {
    matches!(
        String::from_utf8_lossy(answer)
            .trim()
            .to_ascii_lowercase()
            .as_str(),
        "y" | "yes"
    )
}

/// The human report: totals, then one short table per question the logs answer.
fn print(out: &mut impl Write, s: &Stats) -> io::Result<()> {
    let t = &s.window.totals;
    let days = match s.days {
        1 => "day".to_string(),
        n => format!("{n} days"),
    };
    writeln!(out, "the last {days} (since {})", s.since)?;
    writeln!(
        out,
        "  {}, {} found no note by their words; {}; {} surfaced, {} read",
        searches(t.searches),
        t.dead_searches,
        reads(t.reads),
        super::print::plural(t.notes_surfaced, "note"),
        t.notes_read
    )?;
    let w = &s.window;
    queries(out, "top queries", &w.top_queries, true)?;
    queries(
        out,
        "dead queries (holes in the brain)",
        &w.dead_queries,
        false,
    )?;
    notes(out, "most surfaced", &w.top_surfaced)?;
    notes(out, "most read", &w.top_read)?;
    notes(
        out,
        &format!(
            "surfaced {}+ times, read under {:.0}% of them (stale, misnamed or ranked too high?)",
            brain::usage::SURFACED_OFTEN,
            brain::usage::READ_SHARE * 100.0
        ),
        &w.surfaced_not_read,
    )?;
    notes(
        out,
        "read but never surfaced (search misses them?)",
        &w.read_not_surfaced,
    )?;
    let counts = |m: &std::collections::BTreeMap<String, u64>| {
        if m.is_empty() {
            return "(none)".to_string();
        }
        m.iter()
            // A type filter is what a client sent (an assistant's MCP argument).
            .map(|(k, n)| format!("{} {n}", brief(k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out)?;
    writeln!(out, "searches per mode: {}", counts(&w.by_mode))?;
    writeln!(out, "searches per type filter: {}", counts(&w.by_type))?;
    writeln!(out, "reads per reader: {}", counts(&w.reads_by_via))
}

fn queries(
    out: &mut impl Write,
    title: &str,
    list: &[QueryCount],
    results: bool,
) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{title}")?;
    if list.is_empty() {
        return writeln!(out, "  (none)");
    }
    for q in list {
        if results {
            writeln!(
                out,
                "  {:>4}x  {}  ({} result{} last time)",
                q.count,
                brief(&q.query),
                q.results,
                if q.results == 1 { "" } else { "s" }
            )?;
        } else {
            writeln!(out, "  {:>4}x  {}", q.count, brief(&q.query))?;
        }
    }
    Ok(())
}

/// The most of a logged query a table line shows: a pasted page was logged whole (up to
/// 10 kB), and one such line would bury the rest of the report.
const QUERY_SHOWN: usize = 120;

/// `query` for a table line: printable, and cut to [`QUERY_SHOWN`] characters with `…`.
fn brief(query: &str) -> String {
    let shown = super::print::shown(query);
    match shown.chars().nth(QUERY_SHOWN) {
        None => shown.into_owned(),
        Some(_) => {
            let head: String = shown.chars().take(QUERY_SHOWN - 1).collect();
            format!("{head}…")
        }
    }
}

fn notes(out: &mut impl Write, title: &str, list: &[NoteUsage]) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{title}")?;
    if list.is_empty() {
        return writeln!(out, "  (none)");
    }
    writeln!(out, "  surfaced  read  note")?;
    for n in list {
        writeln!(
            out,
            "  {:>8}  {:>4}  {}",
            n.surfaced,
            n.read,
            super::print::shown(&n.path)
        )?;
    }
    Ok(())
}

/// Logs that `rel_path` was read by `via`. Best effort: a `get` that worked is not turned
/// into a failure by its log (a read-only data dir, a long sync holding the lock).
pub fn record_read(config: &Config, rel_path: &str, via: Via) {
    let logged = Usage::open_existing(config).and_then(|u| match u {
        Some(u) => u.record_read(rel_path, via),
        None => Ok(()),
    });
    if let Err(e) = logged {
        tracing::debug!("read of {rel_path} not logged: {e}");
    }
}

/// `brain log-read`: Claude Code's PostToolUse hook. Reads the payload on stdin and logs a
/// Read of a note inside the brain; anything else (another tool, another folder, bad JSON,
/// no index yet) is ignored. Never prints, never fails: it runs on every tool call.
pub fn log_read(dir: Option<PathBuf>) {
    let mut payload = Vec::new();
    if io::stdin()
        .lock()
        .take(MAX_PAYLOAD)
        .read_to_end(&mut payload)
        .is_err()
    {
        return;
    }
    let Ok(config) = Config::load(brain::config::Overrides {
        root: dir,
        ..Default::default()
    }) else {
        return;
    };
    if let Some(rel) = brain::usage::hook_read_path(&payload, &config) {
        record_read(&config, &rel, Via::Hook);
    }
}

/// `1 search`, `7 searches`.
fn searches(n: u64) -> String {
    super::print::counted(n, "search", "searches")
}

/// `1 read`, `2 reads`.
fn reads(n: u64) -> String {
    super::print::plural(n, "read")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_query_is_cut_in_the_tables() {
        assert_eq!(brief("retry jitter"), "retry jitter");
        let long = "word ".repeat(100);
        let cut = brief(&long);
        assert_eq!(cut.chars().count(), QUERY_SHOWN);
        assert!(cut.ends_with('…'), "{cut}");
    }

    #[test]
    fn only_yes_resets() {
        for yes in ["y\n", "Y", " yes \n", "YES"] {
            assert!(is_yes(yes.as_bytes()), "{yes:?}");
        }
        for no in ["n\n", "", "\n", "no", "yess", "oui"] {
            assert!(!is_yes(no.as_bytes()), "{no:?}");
        }
        assert!(!is_yes(b"\xff\xfe\n"));
    }
}
