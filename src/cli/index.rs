//! `brain index`: sync the index with the folder, embed new passages, say what changed.
//! `--rebuild` first sets a damaged index aside and keeps what can be read of it.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use brain::{Config, Engine, Eta, Salvage};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use super::args::IndexArgs;
use super::print;

/// Runs `brain index`.
pub fn run(config: Config, args: IndexArgs) -> Result<ExitCode> {
    let (engine, salvage, report, _lock) = if args.rebuild {
        let r = brain::service::rebuild(config)?;
        (r.engine, Some(r.salvage), r.synced, Some(r.lock))
    } else {
        let engine = Engine::open_named(config)?;
        // After the open, which refuses a brain folder that is not there: a mistyped one
        // must leave nothing behind in the data folder, the lock's folder included.
        brain::service::clear_abandoned(engine.config());
        let report = engine.sync()?;
        (engine, None, report, None)
    };
    let notes = engine.note_count()?;
    let mut err = io::stderr().lock();
    for lost in salvage.iter().flat_map(|s| &s.lost) {
        writeln!(err, "warning: not kept from the old index: {lost}")?;
    }
    for w in &report.warnings {
        // A file name may hold a newline or an escape: one line each, printable.
        writeln!(err, "warning: {}", super::print::shown(w))?;
    }
    // A note read with a problem is warned about once, by the sync that indexed it (a
    // search's, perhaps): the index keeps the problem, and `check` names it.
    let earlier = engine.problem_count()?.saturating_sub(report.note_warnings);
    if earlier > 0 {
        writeln!(
            err,
            "note: {} indexed earlier with a problem (invalid UTF-8, frontmatter): 'brain check' names {}",
            print::counted(earlier, "note was", "notes were"),
            match earlier {
                1 => "it",
                _ => "them",
            }
        )?;
    }
    if notes == 0 {
        // "indexed 0 notes" alone leaves a person to guess: an empty folder, or notes the
        // exclude patterns skip (a brain of README.md and raw/ is the second).
        let why = brain::search::WhyEmpty::of(engine.config());
        if why != brain::search::WhyEmpty::NotIndexed {
            writeln!(err, "{}", why.notice(engine.config()))?;
        }
    }
    drop(err);
    let bar = embed_bar();
    // Not at a terminal (a log, CI, `nohup`), the bar is not drawn: a line now and then
    // says how far it is instead of minutes of silence (a 9 MB note took 19 minutes).
    let to_terminal = io::stderr().is_terminal();
    let logged = !args.json && !to_terminal;
    // The rate's clock; started again when this pass's own work begins after a wait.
    let mut started = Instant::now();
    let mut said = started;
    // The time left (its backlog read once the pass has counted its work, timed from
    // then): a brain with nothing to embed does not pay for the read.
    let mut eta = Eta::default();
    // Said when the pass begins to wait for another process's (whose progress it then
    // shows), to a log or a pipe also with --json: a script sees why nothing moves.
    const WAITING: &str = "another brain process is embedding these; waiting for it";
    let mut was_waiting = false;
    let mut stall = Stall::new(Instant::now());
    let embedded = engine.embed_pending_with(usize::MAX, &mut |done, total| {
        let left = match logged || !args.json {
            true => eta.update(&engine, done, total),
            false => None,
        };
        let waiting = engine.waiting_for_other_pass();
        if waiting && !was_waiting && !to_terminal {
            eprintln!("{WAITING}");
        }
        if waiting && stall.update(done, Instant::now()) {
            let who = match engine.other_pass_holder() {
                Some(pid) => format!("process {pid}"),
                None => "its process unknown".to_string(),
            };
            bar.suspend(|| {
                eprintln!(
                    "warning: the pass this one waits for ({who}) has not moved for {} s: if it hangs, stop it (brain status names a backend), and this one goes on",
                    STALLED_AFTER.as_secs()
                )
            });
        }
        if was_waiting && !waiting {
            started = Instant::now();
        }
        was_waiting = waiting;
        if logged && said.elapsed() >= PROGRESS_EVERY && done < total {
            said = Instant::now();
            eprintln!("{}", progress_line(done, total, started.elapsed(), left));
        }
        if bar.is_hidden() && !args.json {
            // Drawn once passages are counted: a brain with nothing to embed shows no bar.
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        match waiting {
            true => bar.set_message(WAITING),
            false => bar.set_message(left.map(time_left).unwrap_or_default()),
        }
        bar.set_length(total);
        bar.set_position(done);
        true
    })?;
    bar.finish_and_clear();
    if embedded.model.is_none() && embedded.pending > 0 {
        // Keywords are indexed; without this line "indexed N notes" reads as all done.
        eprintln!(
            "{} not embedded: {}",
            print::plural(embedded.pending, "passage"),
            brain::NO_MODEL_NOTICE
        );
    }
    let mut out = io::stdout().lock();
    if args.json {
        let mut json = serde_json::json!({ "sync": report, "embed": embedded });
        if let Some(s) = &salvage {
            json["rebuild"] = serde_json::to_value(s)?;
        }
        writeln!(out, "{json}")?;
    } else {
        if let Some(s) = &salvage {
            rebuild_line(&mut out, s)?;
        }
        print::sync_line(&mut out, &report, notes)?;
        if embedded.embedded > 0 {
            print::embed_line(&mut out, &embedded)?;
        }
        if embedded.by_other > 0 {
            writeln!(
                out,
                "{} by another brain process (a backend, or another brain index), whose pass this one waited for",
                print::counted(embedded.by_other, "passage embedded", "passages embedded"),
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How long the pass waited for may show no progress before `brain index` says so.
const STALLED_AFTER: Duration = Duration::from_secs(60);

/// Whether another process's pass, waited for, has not moved for [`STALLED_AFTER`]: a
/// hung backend holds its lock for good, and `brain index` showed the same numbers forever.
struct Stall {
    done: u64,
    since: Instant,
    said: bool,
}

impl Stall {
    fn new(now: Instant) -> Stall {
        Stall {
            done: 0,
            since: now,
            said: false,
        }
    }

    /// The other pass has done `done` at `now`: true once, when it has stood still that long.
    fn update(&mut self, done: u64, now: Instant) -> bool {
        if done != self.done {
            (self.done, self.since) = (done, now);
            return false;
        }
        let stalled = !self.said && now.duration_since(self.since) >= STALLED_AFTER;
        self.said |= stalled;
        stalled
    }
}

/// How often a line of progress is written when stderr is no terminal.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// `embedding: 1200/12312 passages, 11/s, about 17 min left`, the time left as [`Eta`]
/// estimates it.
fn progress_line(done: u64, total: u64, took: Duration, left: Option<Duration>) -> String {
    let rate = done as f64 / took.as_secs_f64().max(1e-3);
    let left = match left {
        Some(left) => time_left(left),
        None => "time left not known yet".to_string(),
    };
    format!("embedding: {done}/{total} passages, {rate:.0}/s, {left}")
}

/// `about 40 s left`, `about 17 min left`.
fn time_left(left: Duration) -> String {
    match left.as_secs_f64() {
        s if s < 90.0 => format!("about {:.0} s left", s.max(1.0)),
        s => format!("about {:.0} min left", s / 60.0),
    }
}

/// A bar with rate and ETA for stderr, hidden until there is something to embed (and
/// drawn only to a terminal: indicatif hides it otherwise).
fn embed_bar() -> ProgressBar {
    let bar = ProgressBar::hidden();
    bar.set_style(
        ProgressStyle::with_template("embedding [{bar:30}] {pos}/{len} passages  {rate}  {msg}")
            .map(|s| {
                s.with_key(
                    "rate",
                    |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0}/s", state.per_sec());
                    },
                )
            })
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

/// `rebuilt the index; the old one is kept as …: 12 searches, 3 reads and 812 vectors kept`
fn rebuild_line(out: &mut impl Write, s: &Salvage) -> io::Result<()> {
    match &s.backup {
        Some(backup) => writeln!(
            out,
            "rebuilt the index from the notes; the old one is kept as {} (remove it when you like): kept {}, {} and {}",
            backup.display(),
            print::counted(s.recalls, "search", "searches"),
            print::plural(s.reads, "read"),
            print::plural(s.vectors, "vector")
        ),
        None => writeln!(out, "there was no index to rebuild: built a new one"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain::Backlog;

    #[test]
    fn a_pass_waited_for_that_stands_still_a_minute_is_said_once() {
        let t0 = Instant::now();
        let at = |secs| t0 + Duration::from_secs(secs);
        let mut stall = Stall::new(t0);
        assert!(!stall.update(0, at(59)));
        // Moving, the minute starts again.
        assert!(!stall.update(10, at(59)));
        assert!(!stall.update(10, at(118)));
        assert!(stall.update(10, at(119)));
        assert!(!stall.update(10, at(300)), "said once");
    }

    #[test]
    fn a_progress_line_says_how_far_how_fast_and_how_long_still() {
        let even = Backlog::new(vec![10; 12312]);
        let left =
            |w: &Backlog, done, total, secs| w.time_left(done, total, Duration::from_secs(secs));
        assert_eq!(
            progress_line(
                1200,
                12312,
                Duration::from_secs(109),
                left(&even, 1200, 12312, 109)
            ),
            "embedding: 1200/12312 passages, 11/s, about 17 min left"
        );
        let even = Backlog::new(vec![10; 100]);
        assert_eq!(
            progress_line(90, 100, Duration::from_secs(30), left(&even, 90, 100, 30)),
            "embedding: 90/100 passages, 3/s, about 3 s left"
        );
        assert_eq!(
            progress_line(0, 100, Duration::from_secs(30), left(&even, 0, 100, 30)),
            "embedding: 0/100 passages, 0/s, time left not known yet"
        );
    }
}
