//! Human output. The search format follows the original recall tool:
//!
//! ```text
//! [1] [lore] lore/flag-cleanup-test-rework.md
//!     Flag Cleanup: Rework Tests, Don't Delete Them  (bm25=6.23)
//!     When cleaning up a feature flag, tests using «it» are testing the old behavior...
//! ```

use std::io::{self, Write};

use brain::search::{Exact, Explain, Hit, Mode, SearchResponse};
use brain::service::{BackendStatus, WatcherState};
use brain::similar::{ClustersResponse, SimilarResponse};
use brain::{JournalState, StatusReport, SyncReport};

use super::paint::Paint;

pub use brain::search::without_controls as shown;

/// Prints search results, then the recall line; `(no results)` is the last line when empty.
pub fn search(out: &mut impl Write, r: &SearchResponse, paint: Paint) -> io::Result<()> {
    for (i, hit) in r.results.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        // `path:line`, as `similar` and the MCP tool print it: the hit copied whole is what
        // `brain get` reads around the passage that matched.
        writeln!(
            out,
            "[{}] [{}] {}:{}",
            i + 1,
            shown(&hit.kind),
            paint.path(&shown(&hit.path)),
            paint.line(&hit.line.to_string())
        )?;
        let why = paint.dim(&format!("({})", annotation(r.mode, hit)));
        writeln!(out, "    {}  {why}", hit.title)?;
        if !hit.snippet.is_empty() {
            writeln!(out, "    {}", paint.marks(&hit.snippet))?;
        }
    }
    let footer = match r.recall_id {
        Some(id) => format!("(recall_id: {id}, mode: {})", r.mode),
        None => format!("(not logged; mode: {})", r.mode),
    };
    if r.results.is_empty() {
        writeln!(out, "{footer}")?;
        writeln!(out, "(no results)")
    } else {
        writeln!(out)?;
        writeln!(out, "{footer}")
    }
}

/// `brain similar`: the verdict line, then the candidates like search hits.
pub fn similar(out: &mut impl Write, r: &SimilarResponse, paint: Paint) -> io::Result<()> {
    writeln!(out, "{}", paint.strong(&shown(&r.summary)))?;
    for (i, hit) in r.results.iter().enumerate() {
        writeln!(out)?;
        writeln!(
            out,
            "[{}] {} [{}] {}:{}",
            i + 1,
            paint.strong(hit.verdict.as_str()),
            shown(&hit.kind),
            paint.path(&shown(&hit.path)),
            paint.line(&hit.line.to_string())
        )?;
        // To the four decimals the verdict is judged at: at three, a score of 0.2897 printed
        // as 0.290 beside "related at score >= 0.29" and the verdict `new`.
        match hit.likeness {
            Some(l) => writeln!(
                out,
                "    {}  (score={:.4}, likeness={l:.4})",
                hit.title, hit.score
            )?,
            None => writeln!(out, "    {}  (score={:.4})", hit.title, hit.score)?,
        }
        writeln!(out, "    {}", hit.reason)?;
        if let Some(e) = &hit.evidence {
            let opt = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.3}"));
            writeln!(
                out,
                "    evidence: best={} draft_covered={} note_covered={} rare_shared={:.2} title={:.2} words={:.3} lead={:.4}",
                opt(e.best),
                opt(e.draft_covered),
                opt(e.note_covered),
                e.rare_shared,
                e.title,
                e.words,
                e.lead
            )?;
            // Two notes of the brain: the score from each side, whose mean is the score.
            if let Some([from, back]) = e.both_ways {
                writeln!(
                    out,
                    "    both ways: {from:.4} (from this note), {back:.4} (from the other)"
                )?;
            }
        }
    }
    writeln!(out)?;
    // A backend from before `rule` existed sends none: the draft rule of its mode.
    let rule = match r.rule.is_empty() {
        false => r.rule.clone(),
        true => brain::similar::rule(r.mode == "semantic", brain::similar::Judged::Draft),
    };
    writeln!(out, "(mode: {}; {rule})", r.mode)
}

/// `brain similar --all`: each cluster, largest first.
pub fn clusters(out: &mut impl Write, r: &ClustersResponse, paint: Paint) -> io::Result<()> {
    if r.clusters.is_empty() {
        return writeln!(out, "no duplicates found (mode: {})", r.mode);
    }
    for (i, c) in r.clusters.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "[{}] {} notes", i + 1, c.paths.len())?;
        for p in &c.paths {
            writeln!(out, "    {}", paint.path(&shown(p)))?;
        }
        writeln!(out, "    {}", c.reason)?;
    }
    writeln!(out)?;
    match r.total {
        Some(total) => writeln!(
            out,
            "({} of {total} clusters shown, largest first; mode: {})",
            r.clusters.len(),
            r.mode
        ),
        None => writeln!(
            out,
            "({}; mode: {})",
            plural(r.clusters.len() as u64, "cluster"),
            r.mode
        ),
    }
}

/// Why a hit is there: `bm25=6.23`, `sem=0.812`, or `fused=0.734 bm25=#3 sem=-`.
pub fn annotation(mode: Mode, hit: &Hit) -> String {
    let rank = |r: Option<u32>| r.map(|r| format!("#{r}")).unwrap_or_else(|| "-".into());
    match mode {
        Mode::Bm25 => format!("bm25={:.2}", hit.score),
        Mode::Semantic => format!("sem={:.3}", hit.score),
        Mode::Hybrid => format!(
            "fused={:.3} bm25={} sem={}",
            hit.score,
            rank(hit.bm25_rank),
            rank(hit.sem_rank)
        ),
    }
}

/// `indexed 31 notes (+31 ~0 -0) in 45 ms`
pub fn sync_line(out: &mut impl Write, r: &SyncReport, notes: u64) -> io::Result<()> {
    writeln!(
        out,
        "indexed {} (+{} ~{} -{}) in {}",
        plural(notes, "note"),
        r.added,
        r.updated,
        r.removed,
        millis(r.took_ms)
    )
}

/// `embedded 812 passages with all-minilm-l6-v2 in 31.2 s (26/s)`
pub fn embed_line(out: &mut impl Write, r: &brain::EmbedReport) -> io::Result<()> {
    let model = r.model.as_deref().unwrap_or("?");
    let rate = r.embedded as f64 / (r.took_ms.max(1) as f64 / 1000.0);
    let redo = if r.reembedded_all {
        " (model changed: all passages re-embedded)"
    } else {
        ""
    };
    writeln!(
        out,
        "embedded {} with {model} in {} ({rate:.0}/s){redo}",
        plural(r.embedded, "passage"),
        millis(r.took_ms)
    )
}

/// The `--explain` stages: each list, the evidence and weights, and the fused list.
pub fn explain(out: &mut impl Write, e: &Explain) -> io::Result<()> {
    fn list<T>(
        out: &mut impl Write,
        title: &str,
        items: &[T],
        row: impl Fn(&T) -> (u32, &str, String),
    ) -> io::Result<()> {
        writeln!(out, "{title}")?;
        if items.is_empty() {
            return writeln!(out, "  (empty)");
        }
        for item in items {
            let (rank, path, rest) = row(item);
            writeln!(out, "  #{rank} {path}  {rest}")?;
        }
        Ok(())
    }
    let exact = |x: Exact| match x {
        Exact::Title => "  exact title",
        Exact::Identifier => "  literal identifier",
        Exact::None => "",
    };
    if !e.excluded.is_empty() {
        writeln!(
            out,
            "excluded: every note holding {}",
            e.excluded.join(" or ")
        )?;
    }
    if e.mode == Mode::Semantic {
        writeln!(out, "keyword list (bm25):\n  (not run: meaning only)")?;
    } else {
        list(out, "keyword list (bm25):", &e.bm25, |v| {
            (
                v.rank,
                &v.path,
                format!("bm25={:.2}{}", v.score, exact(v.exact)),
            )
        })?;
    }
    // A list the mode did not run is said to be that, not "(empty)", which reads as
    // "searched, found nothing".
    if e.mode == Mode::Bm25 {
        return writeln!(out, "semantic list:\n  (not run: keywords only)\n");
    }
    list(out, "semantic list:", &e.semantic, |v| {
        (
            v.rank,
            &v.path,
            format!(
                "sem={:.3}  (best passage {:.3}, whole note {:.3})",
                v.score, v.passage, v.whole
            ),
        )
    })?;
    if let (Some(w), Some(ev)) = (&e.weights, &e.evidence) {
        writeln!(
            out,
            "evidence: coverage={:.2} bm25_hits={} bm25_lead={:.2} bm25_peak={:.2} sem_gap={:.3}",
            ev.coverage, ev.bm25_hits, ev.bm25_lead, ev.bm25_peak, ev.sem_gap
        )?;
        for t in &ev.terms {
            writeln!(
                out,
                "  term {:?}: in {} notes, idf={:.2}{}",
                t.term,
                t.df,
                t.idf,
                if t.in_top { ", in keyword #1" } else { "" }
            )?;
        }
        writeln!(
            out,
            "weights: keywords {:.2}, meaning {:.2} ({})",
            w.alpha,
            1.0 - w.alpha,
            w.reason
        )?;
        if let Some(s) = &e.scale {
            let meaning = match (s.cos_min, s.cos_max) {
                (Some(lo), Some(hi)) if hi > lo => {
                    format!("meaning from sem {lo:.3} (0) to {hi:.3} (1)")
                }
                (Some(_), Some(_)) => "meaning 1 for every note (one similarity)".to_string(),
                _ => "meaning: no candidate has a vector yet".to_string(),
            };
            writeln!(
                out,
                "scale: keywords bm25 / {:.4} (the best among the candidates), {meaning}",
                s.bm25_max
            )?;
        }
        let k = e.k.unwrap_or(brain::search::RRF_K);
        let rank = |r: Option<u32>| r.map(|r| format!("#{r}")).unwrap_or_else(|| "-".into());
        list(
            out,
            &format!(
                "fused (title matches first, {}then weighted scores; rrf k={k} for comparison{}):",
                match e.weights.as_ref().is_some_and(|w| w.literals_first) {
                    true => "then notes holding the query's names literally, ",
                    false => "",
                },
                match e.fused_head {
                    Some(n) =>
                        format!("; past #{n}, ranked over the deeper lists on a scale of their own"),
                    None => String::new(),
                }
            ),
            e.fused.as_deref().unwrap_or_default(),
            |v| {
                (
                    v.rank,
                    &v.path,
                    format!(
                        "fused={:.3} = bm25 {:.3} ({}) + sem {:.3} ({}){}  rrf={:.4}{}",
                        v.score,
                        v.bm25_part,
                        rank(v.bm25_rank),
                        v.sem_part,
                        rank(v.sem_rank),
                        if v.exact_part > 0.0 {
                            format!(" + literal {:.2}", v.exact_part)
                        } else {
                            String::new()
                        },
                        v.rrf,
                        exact(v.exact)
                    ),
                )
            },
        )?;
    }
    writeln!(out)
}

/// Why a status report made in-process has no backend in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoBackend {
    /// None holds the brain.
    NotRunning,
    /// One holds it but did not answer (the warning above says so).
    Silent,
    /// One answers, but `--no-daemon` said not to ask it.
    NotAsked,
    /// One holds it and refused this client: every client slot is taken.
    Busy,
    /// One holds it (this pid) on another socket than this shell's: its `XDG_RUNTIME_DIR`
    /// is not this shell's.
    Elsewhere(u32),
}

/// The `brain status` block, saying why a report made in-process has no backend in it:
/// one that holds the brain and did not answer, or one not asked, is not "not running".
pub fn status_of(out: &mut impl Write, report: &StatusReport, silent: NoBackend) -> io::Result<()> {
    status_told(out, report, silent, None)
}

/// [`status_of`], saying why the backend was not used in `told` (what the fallback's
/// warning said) where the reader never saw that warning: the MCP tool's answer.
pub fn status_told(
    out: &mut impl Write,
    report: &StatusReport,
    silent: NoBackend,
    told: Option<&str>,
) -> io::Result<()> {
    let s = &report.status;
    // Largest first, and only the largest: a brain filed in a hundred folders made this one
    // line of hundreds of names. `--json` lists every type.
    const SHOWN_TYPES: usize = 8;
    let mut by_size: Vec<(&String, &u64)> = s.types.iter().collect();
    by_size.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut types: Vec<String> = by_size
        .iter()
        .take(SHOWN_TYPES)
        .map(|(k, v)| format!("{} {v}", shown(k)))
        .collect();
    if by_size.len() > SHOWN_TYPES {
        types.push(format!(
            "{}: brain status --json lists them",
            counted(
                (by_size.len() - SHOWN_TYPES) as u64,
                "more type",
                "more types"
            )
        ));
    }
    // There but not readable by this user (its mode changed, another user's folder):
    // the counts below are the index's, which a search here would refuse to use.
    let listed = s.root_exists.then(|| std::fs::read_dir(&s.root).map(drop));
    let missing = match listed {
        Some(Ok(())) => String::new(),
        Some(Err(e)) if e.kind() != std::io::ErrorKind::NotFound => format!(
            "  (not readable: {}; make it readable, the counts below are from the last sync)",
            e.kind()
        ),
        None | Some(Err(_)) => "  (missing!)".to_string(),
    };
    writeln!(out, "brain:     {}{missing}", s.root)?;
    writeln!(
        out,
        "notes:     {} ({})",
        s.notes,
        if types.is_empty() {
            "none".into()
        } else {
            types.join(", ")
        }
    )?;
    let embedded = match (&s.embedded_with, s.pending_chunks) {
        (Some(m), 0) => format!("all embedded with {m}"),
        (Some(m), n) => format!("embedded with {m}, {n} waiting"),
        (None, _) => "none embedded".to_string(),
    };
    writeln!(out, "passages:  {} ({embedded})", s.chunks)?;
    writeln!(
        out,
        "index:     {} ({})",
        s.index_path,
        bytes(s.index_bytes)
    )?;
    match (s.last_sync_at, &s.last_sync) {
        (Some(at), Some(l)) => writeln!(
            out,
            "last sync: {} ({}): +{} ~{} -{} in {}{}{}",
            utc(at),
            ago(at),
            l.added,
            l.updated,
            l.removed,
            millis(l.took_ms),
            // A burst (a `git pull` the watcher saw in pieces) is counted whole.
            if l.syncs > 1 {
                format!(" over {} syncs in a row", l.syncs)
            } else {
                String::new()
            },
            if l.warnings > 0 {
                format!(", {}", plural(l.warnings, "warning"))
            } else {
                String::new()
            }
        )?,
        _ => writeln!(out, "last sync: never (run 'brain index')")?,
    }
    if let Some(state) = s.change_journal {
        let how = match state {
            JournalState::Trusted => "relied on: a sync reads only what it names",
            JournalState::Unconfirmed => {
                "not yet relied on: a walk that finds a change must confirm it"
            }
            JournalState::Distrusted => {
                "not relied on: it missed a change or did not answer; syncs walk until a restart"
            }
        };
        writeln!(out, "changes:   from the FSEvents journal, {how}")?;
    }
    let installed = if s.model_installed && !s.model_changed.is_empty() {
        format!(
            "installed, runs on {}; changed since last verified: {}: the next search checks it (brain model verify)",
            s.device,
            s.model_changed.join(", ")
        )
    } else if s.model_installed {
        format!("installed, runs on {}", s.device)
    } else if !s.model_changed.is_empty() {
        // Installed once, now a file of another size (appended to, cut short): damaged,
        // not absent, and the file is the one to name.
        format!(
            "damaged: {} changed since last verified, and a file is missing or no longer its \
             pinned size: 'brain model verify' says more, 'brain model fetch' (or import) \
             installs it again",
            s.model_changed.join(", ")
        )
    } else {
        "not installed: run 'brain model fetch'".into()
    };
    writeln!(out, "model:     {} ({installed})", s.model)?;
    writeln!(
        out,
        "searches:  {} ({} in the last 7 days, {} with no results)",
        s.recalls.searches, s.recalls.last_7_days, s.recalls.empty
    )?;
    writeln!(
        out,
        "reads:     {} ({} in the last 7 days; brain stats for more)",
        s.recalls.reads, s.recalls.reads_last_7_days
    )?;
    backend(out, report.backend.as_ref(), silent, told)
}

/// The backend lines of `brain status`.
fn backend(
    out: &mut impl Write,
    b: Option<&BackendStatus>,
    why: NoBackend,
    told: Option<&str>,
) -> io::Result<()> {
    let said = told.map_or("see the warning above".to_string(), |t| {
        format!("{}; asked again within a minute", shown(t))
    });
    let Some(b) = b else {
        return match why {
            NoBackend::Silent => writeln!(
                out,
                "backend:   {} ({said}): the figures are this process's",
                match told {
                    Some(_) => "not used",
                    None => "not answering",
                }
            ),
            NoBackend::NotAsked => writeln!(
                out,
                "backend:   running, not asked (--no-daemon): the figures are this process's"
            ),
            NoBackend::Busy => writeln!(
                out,
                "backend:   busy, every client slot taken ({said}): the figures are this process's"
            ),
            NoBackend::Elsewhere(pid) => writeln!(
                out,
                "backend:   running (pid {pid}), not on this shell's socket: its XDG_RUNTIME_DIR is another (or it is starting); commands here work in-process"
            ),
            NoBackend::NotRunning => writeln!(out, "backend:   not running"),
        };
    };
    writeln!(
        out,
        "backend:   running (pid {}, up {}, protocol {})",
        b.pid,
        uptime(b.uptime_secs),
        b.protocol
    )?;
    writeln!(out, "socket:    {}", b.socket)?;
    let mut watcher = match &b.watcher {
        WatcherState::On => format!(
            "on ({}, {})",
            plural(b.updates, "update"),
            plural(b.full_syncs, "full sync")
        ),
        WatcherState::Off => "off (--no-watch): each search syncs first".into(),
        WatcherState::Waiting => "waiting for the brain folder to come back".into(),
        WatcherState::Failed { reason } => format!("failed ({reason}): each search syncs first"),
    };
    if let Some(f) = &b.fell_back {
        watcher.push_str(&format!(
            "; fell back to a full sync {}: {}",
            ago(f.at),
            f.reason
        ));
    }
    writeln!(out, "watcher:   {watcher}")?;
    writeln!(
        out,
        "pending:   {}, {} to embed{}",
        plural(b.queued_changes, "change"),
        plural(b.pending_chunks, "passage"),
        if b.syncing { " (syncing now)" } else { "" }
    )?;
    if let Some(e) = &b.last_error {
        writeln!(out, "problem:   {e}")?;
    }
    Ok(())
}

/// `1 update`, `2 updates`.
pub(crate) fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `1 search`, `2 searches`: [`plural`] for a noun that does not just take an s.
pub(crate) fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `12s`, `5m 3s`, `2h 5m`, `3d 2h`.
fn uptime(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        s => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
    }
}

fn millis(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.2} s", ms as f64 / 1000.0)
    } else {
        format!("{ms} ms")
    }
}

/// `1.2 MB`, in decimal units (a kB is 1,000 bytes) as macOS's Finder counts them and the
/// README quotes them: a model file of 546,938,168 bytes reads "546.9 MB" in both.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "kB", "MB", "GB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Unix seconds as `YYYY-MM-DD HH:MM:SS UTC` (civil-from-days; no time zone database needed).
pub fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `just now`, `5m ago`, `3h ago`, `2d ago`.
pub fn ago(secs: i64) -> String {
    let now = brain::date::now_secs();
    match (now - secs).max(0) {
        d if d < 60 => "just now".into(),
        d if d < 3600 => format!("{}m ago", d / 60),
        d if d < 86_400 => format!("{}h ago", d / 3600),
        d => format!("{}d ago", d / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_709_251_199), "2024-02-29 23:59:59 UTC");
        assert_eq!(utc(-1), "1969-12-31 23:59:59 UTC");
    }

    /// A status report of an empty brain at `/b`, as JSON, for a test to change.
    fn report_json() -> serde_json::Value {
        serde_json::json!({
            "root": "/b", "root_exists": true, "index_path": "/d/brain.sqlite",
            "index_bytes": 0, "notes": 0, "types": {}, "chunks": 0, "pending_chunks": 0,
            "last_sync_at": null, "last_sync": null, "model": "m",
            "model_installed": false, "device": "cpu", "embedded_with": null,
            "recalls": {"searches": 0, "last_7_days": 0, "empty": 0, "reads": 0,
                        "reads_last_7_days": 0},
            "backend": null
        })
    }

    #[test]
    fn the_change_journal_has_a_line_only_where_there_is_one() {
        let report = |journal: &str| -> StatusReport {
            let mut json = report_json();
            if !journal.is_empty() {
                json["change_journal"] = journal.into();
            }
            serde_json::from_value(json).unwrap()
        };
        let shown = |journal: &str| {
            let mut out = Vec::new();
            status_of(&mut out, &report(journal), NoBackend::NotRunning).unwrap();
            let text = String::from_utf8(out).unwrap();
            let line = text.lines().find(|l| l.starts_with("changes:"));
            line.map(str::to_string)
        };
        assert_eq!(shown(""), None);
        assert!(shown("trusted")
            .unwrap()
            .contains("relied on: a sync reads only"));
        assert!(shown("unconfirmed").unwrap().contains("not yet relied on"));
        assert!(shown("distrusted")
            .unwrap()
            .contains("syncs walk until a restart"));
        let back = serde_json::to_value(report("trusted")).unwrap();
        assert_eq!(back["change_journal"], "trusted");
        assert!(serde_json::to_value(report(""))
            .unwrap()
            .get("change_journal")
            .is_none());
    }

    #[test]
    fn a_burst_of_syncs_is_said_with_its_count_and_warnings_last() {
        let line = |last: serde_json::Value| {
            let mut json = report_json();
            json["last_sync_at"] = 0.into();
            json["last_sync"] = last;
            let report: StatusReport = serde_json::from_value(json).unwrap();
            let mut out = Vec::new();
            status_of(&mut out, &report, NoBackend::NotRunning).unwrap();
            let text = String::from_utf8(out).unwrap();
            let line = text.lines().find(|l| l.starts_with("last sync:")).unwrap();
            line.split_once("): ").unwrap().1.to_string()
        };
        let burst = serde_json::json!({"added": 2000, "updated": 1, "removed": 0,
            "warnings": 2, "took_ms": 264, "syncs": 19});
        assert_eq!(
            line(burst),
            "+2000 ~1 -0 in 264 ms over 19 syncs in a row, 2 warnings"
        );
        // An older brain's record, without the count: one sync, said as before.
        let one = serde_json::json!({"added": 3, "updated": 0, "removed": 0,
            "warnings": 0, "took_ms": 13});
        assert_eq!(line(one), "+3 ~0 -0 in 13 ms");
    }

    #[test]
    fn a_brain_folder_that_cannot_be_read_is_said_so_beside_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-folder");
        std::fs::write(&file, "x").unwrap();
        let line = |root: &std::path::Path, exists: bool| {
            let report: StatusReport = serde_json::from_value({
                let mut json = report_json();
                json["root"] = root.to_string_lossy().into_owned().into();
                json["root_exists"] = exists.into();
                json
            })
            .unwrap();
            let mut out = Vec::new();
            status_of(&mut out, &report, NoBackend::NotRunning).unwrap();
            String::from_utf8(out)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        // Read by this process, which the backend's answer was not (its mode changed since).
        assert_eq!(
            line(&file, true),
            format!(
                "brain:     {}  (not readable: not a directory; make it readable, the counts below are from the last sync)",
                file.display()
            )
        );
        assert_eq!(
            line(tmp.path(), true),
            format!("brain:     {}", tmp.path().display())
        );
        let gone = tmp.path().join("gone");
        assert_eq!(
            line(&gone, false),
            format!("brain:     {}  (missing!)", gone.display())
        );
        assert_eq!(
            line(&gone, true),
            format!("brain:     {}  (missing!)", gone.display())
        );
    }

    #[test]
    fn status_names_the_largest_types_first_and_counts_the_rest() {
        let notes_line = |types: serde_json::Value| {
            let report: StatusReport = serde_json::from_value({
                let mut json = report_json();
                json["notes"] = 99.into();
                json["types"] = types;
                json
            })
            .unwrap();
            let mut out = Vec::new();
            status_of(&mut out, &report, NoBackend::NotRunning).unwrap();
            let text = String::from_utf8(out).unwrap();
            text.lines()
                .find(|l| l.starts_with("notes:"))
                .unwrap()
                .to_string()
        };
        assert_eq!(
            notes_line(serde_json::json!({"a": 1, "b": 5, "c": 5})),
            "notes:     99 (b 5, c 5, a 1)"
        );
        let many: serde_json::Map<String, serde_json::Value> = (0..11)
            .map(|i| (format!("t{i:02}"), (i + 1).into()))
            .collect();
        assert_eq!(
            notes_line(many.into()),
            "notes:     99 (t10 11, t09 10, t08 9, t07 8, t06 7, t05 6, t04 5, t03 4, \
             3 more types: brain status --json lists them)"
        );
    }

    #[test]
    fn uptimes() {
        assert_eq!(uptime(59), "59s");
        assert_eq!(uptime(3 * 3600 + 5 * 60 + 9), "3h 5m");
        assert_eq!(uptime(2 * 86_400 + 3600), "2d 1h");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 kB");
        assert_eq!(bytes(546_938_168), "546.9 MB");
        assert_eq!(bytes(90_868_376), "90.9 MB");
        assert_eq!(bytes(1_130_000_000), "1.1 GB");
    }

    #[test]
    fn names_and_queries_cannot_drive_the_terminal() {
        assert_eq!(shown("lore/a b.md"), "lore/a b.md");
        assert_eq!(shown("x/esc\x1b[31mred.md"), "x/esc\u{FFFD}[31mred.md");
        assert_eq!(shown("rebase\nFAKE LINE"), "rebase\u{FFFD}FAKE LINE");
    }
}
