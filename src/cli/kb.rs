//! The knowledge-base commands: `brain new`, `brain check`, `brain index-md` and `brain
//! links`. The answers come from the [`Answerer`] (the backend when one runs); the two
//! that write (`new`, `index-md --write`) write here, each file atomically.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use brain::kb::{self, CheckReport, LinksReport, ProblemKind};
use brain::service::capture::{self, Unseen};
use brain::Config;

use super::args::{CheckArgs, IndexMdArgs, LinksArgs, NewArgs};
use super::print::shown;
use super::shim;

/// Runs `brain new TYPE TITLE`.
pub fn new(config: Config, args: NewArgs) -> Result<ExitCode> {
    let answerer = shim::answerer(config, &args.daemon);
    let title = args.title.join(" ");
    let done = capture::capture(&answerer, &args.kind, &title, args.folder, args.force)?;
    let mut err = io::stderr().lock();
    if let Some(behind) = &done.behind {
        writeln!(
            err,
            "warning: {behind}; the check for duplicates saw the index as it was"
        )?;
    }
    if !done.written {
        if args.json {
            // A script that asked for JSON gets it on a refusal too: what would have been
            // written, and the notes that stopped it.
            let duplicates: Vec<serde_json::Value> = done
                .duplicates
                .iter()
                .map(|h| serde_json::json!({"path": h.path, "title": h.title, "reason": h.reason}))
                .collect();
            let mut refused = serde_json::to_value(&done.entry)?;
            refused["written"] = false.into();
            refused["duplicates"] = duplicates.into();
            writeln!(io::stdout().lock(), "{refused}")?;
        }
        writeln!(err, "not written: the brain has it already")?;
        for hit in &done.duplicates {
            // A file name may hold a newline or an escape: one printable line per note.
            writeln!(
                err,
                "  {}  {}  ({})",
                shown(&hit.path),
                shown(&hit.title),
                hit.reason
            )?;
        }
        writeln!(
            err,
            "edit that note instead, or pass --force to write {} anyway",
            done.entry.path
        )?;
        return Ok(ExitCode::FAILURE);
    }
    if let Some(alike) = done.duplicates.first() {
        writeln!(
            err,
            "written anyway (--force), though {} is alike",
            shown(&alike.path)
        )?;
    }
    // Written anyway, the alike notes are the first to link from it.
    let to_link: Vec<_> = done.duplicates.iter().chain(&done.related).collect();
    if to_link.is_empty() {
        writeln!(err, "checked for duplicates: nothing like it")?;
    } else {
        let head = match done.duplicates.is_empty() {
            true => "checked for duplicates: none; related, to link from it:",
            false => "to link from it:",
        };
        writeln!(err, "{head}")?;
        for hit in to_link {
            writeln!(
                err,
                "  [[{}]]  {}",
                shown(&kb::links::canonical(&hit.path)),
                shown(&hit.title)
            )?;
        }
    }
    if !done.entry.to_fill.is_empty() {
        writeln!(
            err,
            "fill in: {} (required by {}/SCHEMA.md, written empty)",
            done.entry.to_fill.join(", "),
            shown(&done.entry.kind)
        )?;
    }
    let unseen = done.unseen.as_ref().map(|u| match u {
        Unseen::Excluded => format!(
            "{} is excluded from the index (exclude in the config, .gitignore, .ignore or .brainignore): brain will not find it",
            done.entry.path
        ),
        Unseen::HeldBack(why) => format!(
            "{} is not in the index until this is fixed: {why}",
            done.entry.path
        ),
    });
    if let Some(unseen) = &unseen {
        writeln!(err, "warning: {}", shown(unseen))?;
    }
    let mut out = io::stdout().lock();
    if args.json {
        // `written` as on a refusal, so a script reads one field either way.
        let mut written = serde_json::to_value(&done.entry)?;
        written["written"] = true.into();
        // What stderr lists to link from it, for a script (the skill's assistant) that
        // reads only the JSON: the alike notes written past (`--force`), then the related.
        let to_link: Vec<serde_json::Value> = done
            .duplicates
            .iter()
            .chain(&done.related)
            .map(|h| {
                serde_json::json!({
                    "path": h.path,
                    "title": h.title,
                    "link": kb::links::canonical(&h.path),
                })
            })
            .collect();
        written["to_link"] = to_link.into();
        let notices: Vec<&str> = [&done.behind, &unseen, &done.unsynced]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        if !notices.is_empty() {
            written["notice"] = notices.join("; ").into();
        }
        writeln!(out, "{written}")?;
    } else {
        writeln!(out, "{}", done.entry.abs_path)?;
    }
    if let Some(unsynced) = &done.unsynced {
        writeln!(io::stderr(), "warning: {unsynced}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `brain check`: exit 1 when it found anything.
pub fn check(config: Config, args: CheckArgs) -> Result<ExitCode> {
    let report = shim::answerer(config, &args.daemon).check()?;
    if let Some(notice) = &report.notice {
        eprintln!("{notice}");
    }
    let mut out = super::UntilClosed::new(io::stdout().lock());
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        print_check(&mut out, &report)?;
    }
    Ok(match report.problems.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}

pub(crate) fn print_check(out: &mut impl Write, r: &CheckReport) -> io::Result<()> {
    if r.types.is_empty() {
        // Schemas that are there but broken are listed below, each with its fault.
        let what = match r.problems.iter().any(|p| p.kind == ProblemKind::Schema) {
            true => "no usable type schemas (the broken ones are listed below)",
            false => "no type schemas (<type>/SCHEMA.md)",
        };
        writeln!(out, "{what}: only links and frontmatter were checked")?;
    }
    let mut kind = None;
    for p in &r.problems {
        if kind != Some(p.kind) {
            // A blank line between groups, not before the first line of the output.
            if kind.is_some() || r.types.is_empty() {
                writeln!(out)?;
            }
            kind = Some(p.kind);
            let n = r.counts.get(&p.kind).copied().unwrap_or(0);
            writeln!(out, "{} ({n})", p.kind.heading())?;
        }
        // A message may echo a note's value whole (a 200,000-character `type:`).
        let message = super::long_words_cut(&p.message);
        let message = shown(&message);
        match p.line {
            Some(line) => writeln!(out, "  {}:{line}: {message}", shown(&p.path))?,
            // The brain folder's own problem (an ignore file it cannot trust) has no path.
            None if p.path.is_empty() => writeln!(out, "  {message}")?,
            None => writeln!(out, "  {}: {message}", shown(&p.path))?,
        }
    }
    // The counts are of everything found; the list may be a part (the MCP tool's cap).
    let total = (r.counts.values().sum::<u64>() as usize).max(r.problems.len());
    if total > 0 {
        writeln!(out)?;
    }
    writeln!(
        out,
        "{} in {} ({} typed: {})",
        match total {
            0 => "nothing wrong".to_string(),
            1 => "1 problem".to_string(),
            n => format!("{n} problems"),
        },
        super::print::plural(r.notes, "note"),
        r.types.len(),
        if r.types.is_empty() {
            "none".into()
        } else {
            r.types.join(", ")
        }
    )
}

/// Runs `brain index-md [--write]`.
pub fn index_md(config: Config, args: IndexMdArgs) -> Result<ExitCode> {
    let root = config.root.clone();
    let files = shim::answerer(config, &args.daemon).index_files()?;
    let mut out = super::UntilClosed::new(io::stdout().lock());
    let mut rows = Vec::new();
    // A type whose INDEX.md cannot be written (a read-only folder) does not keep the others
    // from theirs: each failure is its own line, and the exit status says one failed.
    let mut failed: Vec<brain::Error> = Vec::new();
    // Two INDEX.md linked to one file would overwrite each other on every run. Where the
    // file is one type's own (no link on its way), that type writes it and the links to it
    // are refused, whichever type's name sorts first.
    let real_of = |f: &brain::kb::IndexFile| {
        // A file not there yet is where it will be made, through a link too: a link to
        // another type's INDEX.md not made yet leads where that one will be.
        let path = root.join(&f.path);
        let to = brain::file::leads_to(&path).unwrap_or(path);
        let dir = std::fs::canonicalize(to.parent()?).ok()?;
        Some(dir.join(to.file_name()?))
    };
    let reals: Vec<Option<PathBuf>> = files.iter().map(real_of).collect();
    let own_root = std::fs::canonicalize(&root).ok();
    let mut owners: HashMap<&PathBuf, Vec<(&str, bool)>> = HashMap::new();
    for (f, real) in files.iter().zip(&reals) {
        if let Some(real) = real {
            let own = own_root.as_ref().is_some_and(|r| r.join(&f.path) == *real);
            owners.entry(real).or_default().push((&f.path, own));
        }
    }
    // An entry the index skips is missing from the list: said, as `brain index` says it.
    for f in &files {
        for w in &f.skipped {
            eprintln!("warning: {}; not in {}", shown(w), f.path);
        }
    }
    for (f, real) in files.iter().zip(&reals) {
        let changed = f.changed();
        let path = root.join(&f.path);
        let sharing = real
            .as_ref()
            .and_then(|r| owners.get(r))
            .map_or(&[][..], |o| &o[..]);
        let shared = match sharing {
            [_] | [] => None,
            _ => match sharing.iter().find(|(_, own)| *own) {
                Some(&(owner, _)) if owner == f.path => None,
                Some(&(owner, _)) => Some(format!("{owner}, that type's own")),
                None => sharing
                    .iter()
                    .find(|(other, _)| *other != f.path)
                    .map(|(other, _)| format!("the same file as {other}")),
            },
        };
        let refused = |why: String| Err(brain::Error::InvalidInput(format!("{}: {why}", f.path)));
        let outcome = match (shared, args.write) {
            (_, false) => Ok(()),
            (Some(whose), true) => refused(format!(
                "leads to {whose}: each type needs an INDEX.md of its own; remove the link"
            )),
            (None, true) => match kb::index_md::case_twin(&root, &f.path) {
                Some(twin) => refused(format!(
                    "this file system matches names without case, so it is the note {twin}: rename that note, so that {} can be written",
                    f.path
                )),
                None if changed => kb::write_atomic(
                    &path,
                    &f.generated,
                    kb::WriteMode::Replace { brain: &root },
                ),
                None => Ok(()),
            },
        };
        let error = outcome.err().map(|e| {
            let said = format!("{e:#}");
            failed.push(e);
            said
        });
        if let Some(error) = error {
            rows.push(serde_json::json!({"path": f.path, "changed": true, "written": false, "error": error}));
            continue;
        }
        if !args.json && changed {
            if args.write {
                writeln!(out, "wrote {}", shown(&f.path))?;
            } else {
                let old = f.current.as_deref().unwrap_or("");
                let diff = textdiff::TextDiff::from_lines(old, &f.generated);
                let (a, b) = match f.current {
                    Some(_) => (format!("a/{}", f.path), format!("b/{}", f.path)),
                    None => ("/dev/null".to_string(), format!("b/{}", f.path)),
                };
                // The old file's lines and the notes' values, as they are: none may drive
                // the terminal (an OSC 52 line in an INDEX.md wrote the clipboard).
                let shown = diff
                    .unified_diff()
                    .context_radius(2)
                    .header(&a, &b)
                    .to_string();
                write!(out, "{}", brain::text::without_controls_but_lines(&shown))?;
            }
        }
        rows.push(serde_json::json!({"path": f.path, "changed": changed, "written": changed && args.write}));
    }
    // A type whose SCHEMA.md cannot be used has no INDEX.md made: said as a failure, as
    // `check` and `new` say it, rather than left out of the list unnoticed.
    for e in kb::Schemas::load(&root)
        .map(|s| s.errors)
        .unwrap_or_default()
    {
        if let brain::Error::Schema { path, .. } | brain::Error::Io { path, .. } = &e {
            let kind = path.parent().and_then(|p| p.file_name());
            let index = format!("{}/INDEX.md", kind.unwrap_or_default().to_string_lossy());
            rows.push(serde_json::json!({"path": index, "changed": false, "written": false, "error": format!("{e:#}")}));
        }
        failed.push(e);
    }
    let changed = files.iter().filter(|f| f.changed()).count();
    if args.json {
        writeln!(out, "{}", serde_json::json!({ "files": rows }))?;
    } else if files.is_empty() && !failed.is_empty() {
        // Every schema is broken: the error lines below say which.
    } else if files.is_empty() {
        writeln!(
            out,
            "no type schemas (<type>/SCHEMA.md): no INDEX.md to make"
        )?;
    } else if changed == 0 {
        writeln!(out, "{} INDEX.md files up to date", files.len())?;
    } else if !args.write {
        writeln!(
            out,
            "{changed} of {} INDEX.md files would change: brain index-md --write writes them",
            files.len()
        )?;
    }
    drop(out);
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let mut err = io::stderr().lock();
    for e in &failed {
        writeln!(err, "error: {}", shown(&format!("{e:#}")))?;
    }
    Ok(ExitCode::FAILURE)
}

/// Runs `brain links NOTE`.
pub fn links(config: Config, args: LinksArgs) -> Result<ExitCode> {
    let rel = relative(&config, &args.path)?;
    let report = shim::answerer(config, &args.daemon).links(&rel)?;
    if let Some(notice) = &report.notice {
        eprintln!("{notice}");
    }
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        print_links(&mut out, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `path` relative to the root, as [`brain::passage::note_rel`] reads it; first, as `get`
/// reads it, a path that names no note of the brain but a file of the current folder is
/// that file (`cd lore; brain links x.md`).
fn relative(config: &Config, path: &str) -> Result<String> {
    // A hit copied whole (`x.md:3`) names its note here too, from this folder as well.
    let path = brain::passage::without_line(&config.root, path).unwrap_or(path);
    let here = super::get::in_this_folder(&config.root, path);
    if let Some(here) = here.as_deref().and_then(Path::to_str) {
        return Ok(brain::passage::note_rel(&config.root, here)?);
    }
    Ok(brain::passage::note_rel(&config.root, path)?)
}

pub(crate) fn print_links(out: &mut impl Write, r: &LinksReport) -> io::Result<()> {
    writeln!(out, "{}", shown(&r.path))?;
    writeln!(out, "\nlinks to ({})", r.outgoing.len())?;
    for l in &r.outgoing {
        let to = shown(l.path.as_deref().unwrap_or("-"));
        let written = l.written();
        let target = shown(&written);
        match (l.state.as_str(), &l.why) {
            ("ok", _) => writeln!(out, "  :{}  [[{target}]]  {to}", l.line)?,
            // The reason quotes the link's target, which any note can fill with escapes.
            (state, Some(why)) => {
                writeln!(out, "  :{}  [[{target}]]  {state}: {}", l.line, shown(why))?
            }
            (state, None) => writeln!(out, "  :{}  [[{target}]]  {state}", l.line)?,
        }
    }
    writeln!(out, "\nlinked from ({})", r.incoming.len())?;
    for l in &r.incoming {
        writeln!(out, "  {}:{}", shown(&l.path), l.line)?;
    }
    Ok(())
}
