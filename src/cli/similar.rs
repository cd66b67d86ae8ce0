//! `brain similar`: "did I already write this?" for a draft, a note, or the whole brain.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use brain::similar::{check_draft, SimilarRequest, Source};
use brain::Config;

use super::args::SimilarArgs;
use super::paint::Paint;
use super::{print, shim};

/// Notes shown for a draft when `--top` is not given.
const DEFAULT_TOP: i64 = 5;

/// The most clusters `--all --top` asks for (more than a brain of a million notes holds).
const MAX_CLUSTERS_SHOWN: usize = 1_000_000;

/// Runs `brain similar`.
pub fn run(config: Config, args: SimilarArgs, paint: Paint) -> Result<ExitCode> {
    let answerer = shim::answerer(config.clone(), &args.daemon);
    if args.all {
        if args.source.is_some() || args.text.is_some() {
            bail!(brain::Error::InvalidInput(
                "--all compares the whole brain: give no draft with it".into()
            ));
        }
        if args.explain {
            bail!(brain::Error::InvalidInput(
                "--explain shows the numbers behind one draft's verdicts; with --all, each \
                 cluster's last line says why its notes were joined"
                    .into()
            ));
        }
        // Checked before the work, as for a draft.
        let shown = match args.top {
            Some(n) => Some(super::args::top(n, MAX_CLUSTERS_SHOWN)?),
            None => None,
        };
        let mut response = answerer.similar_all(!args.no_sync)?;
        if let Some(shown) = shown {
            response.shown(shown);
        }
        return emit(
            &response,
            response.notice.as_deref(),
            args.json,
            paint,
            print::clusters,
        );
    }
    let source = source(&config, &args)?;
    let request = SimilarRequest {
        source,
        top: super::args::top(args.top.unwrap_or(DEFAULT_TOP), brain::similar::MAX_TOP)?,
        explain: args.explain,
        sync: !args.no_sync,
    };
    let response = answerer.similar(&request)?;
    emit(
        &response,
        response.notice.as_deref(),
        args.json,
        paint,
        print::similar,
    )
}

/// The notice on stderr, then the answer as JSON or through `human`.
fn emit<T: serde::Serialize>(
    response: &T,
    notice: Option<&str>,
    json: bool,
    paint: Paint,
    human: fn(&mut io::StdoutLock<'static>, &T, Paint) -> io::Result<()>,
) -> Result<ExitCode> {
    if let Some(notice) = notice {
        writeln!(io::stderr(), "{notice}")?;
    }
    let mut out = io::stdout().lock();
    match json {
        true => writeln!(out, "{}", serde_json::to_string(response)?)?,
        false => human(&mut out, response, paint)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What to compare: `-` is stdin, a file inside the brain folder is that note, any other
/// file is a draft; `--text` is a draft.
fn source(config: &Config, args: &SimilarArgs) -> Result<Source> {
    let max = config.max_file_bytes;
    let invalid = |m: String| anyhow::Error::new(brain::Error::InvalidInput(m));
    match (&args.source, &args.text) {
        (Some(_), Some(_)) => Err(invalid(
            "give either a draft (a file, or - for stdin) or --text, not both".into(),
        )),
        (None, None) => Err(invalid(
            "say what to compare: a note or draft file, - for stdin, --text \"...\", or --all"
                .into(),
        )),
        (None, Some(text)) => Ok(Source::Text(check_draft(text.as_bytes(), max)?.to_string())),
        (Some(arg), None) if arg == "-" => {
            let mut bytes = Vec::new();
            io::stdin()
                .take(max + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| match e.raw_os_error() {
                    // `brain similar - < folder/`: input that cannot be used, not a failure.
                    Some(libc::EISDIR) => brain::Error::InvalidInput(
                        "standard input is a folder: give a file (brain similar - < draft.md)"
                            .into(),
                    ),
                    _ => brain::Error::io("standard input", e),
                })?;
            Ok(Source::Text(check_draft(&bytes, max)?.to_string()))
        }
        (Some(arg), None) => {
            // `[[lore/x]]`, copied from a note: the note it names.
            let arg =
                brain::passage::link_form(&config.root, arg).map_or(arg.as_str(), |(name, _)| name);
            // A hit copied whole (`lore/x.md:12`, as similar and search print them): the
            // note, unless a file is named so.
            let arg = brain::passage::without_line(&config.root, arg)
                .filter(|note| Path::new(note).is_file() || config.root.join(note).is_file())
                .unwrap_or(arg);
            // A name typed in either Unicode form (`café.md`) names the file on disk.
            let file_at = |p: &Path| brain::passage::on_disk(p).filter(|p| p.is_file());
            // A note named as a link names it (`lore/x` of `[[lore/x]]`), when no file is.
            let linked =
                if file_at(Path::new(arg)).is_some() || file_at(&config.root.join(arg)).is_some() {
                    None
                } else {
                    brain::kb::links::named_files(arg.trim_end_matches('/'))
                        .into_iter()
                        .filter(|_| !arg.ends_with(".md"))
                        .find(|rel| file_at(&config.root.join(rel)).is_some())
                };
            let arg = linked.as_deref().unwrap_or(arg);
            let file = if let Some(here) = file_at(Path::new(arg)) {
                let note = config.root.join(arg);
                // A path copied from a search names a note; the same path here is another
                // file, compared as asked, but the person should know which one it was.
                let other = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
                    (Ok(a), Ok(b)) => a != b,
                    _ => false,
                };
                if here.is_relative()
                    && note.is_file()
                    && inside(&config.root, &note).is_some()
                    && other(&here, &note)
                {
                    writeln!(
                        io::stderr(),
                        "warning: {arg} is the file in this folder that was compared; to compare the brain's note {arg}, give its full path ({})",
                        note.display()
                    )?;
                }
                here
            } else if let Some(note) =
                file_at(&config.root.join(arg)).filter(|note| inside(&config.root, note).is_some())
            {
                // A note named from the brain folder; `../x.md` from there is no note, and
                // comparing a file the person never meant would answer the wrong question.
                note
            } else {
                return Err(invalid(not_a_file(&config.root, arg)));
            };
            if let Some(rel) = inside(&config.root, &file) {
                return Ok(Source::Path(rel));
            }
            let meta = std::fs::metadata(&file).map_err(|e| brain::Error::io(&file, e))?;
            if meta.len() > max {
                return Err(invalid(format!(
                    "{arg} is {:.2} MiB, over the {:.0} MiB a note may be (max_file_mb): compare a shorter draft",
                    brain::config::megabytes(meta.len()),
                    brain::config::megabytes(max)
                )));
            }
            let bytes = std::fs::read(&file).map_err(|e| brain::Error::io(&file, e))?;
            Ok(Source::Text(check_draft(&bytes, max)?.to_string()))
        }
    }
}

/// Why `arg` (tried here, then in the brain folder `root`) gives no file to compare: it is
/// empty, a folder, something else that is not a regular file (`/dev/null`, a pipe), or
/// nothing at all. "No such file" for a folder that is there would send the person looking
/// for a typo.
fn not_a_file(root: &Path, arg: &str) -> String {
    const GIVE: &str = "give a note or draft file, - for stdin, or --text \"...\"";
    if arg.trim().is_empty() {
        return format!("the draft path is empty: {GIVE}");
    }
    // Not quoted back: no file system has such a path (an assistant's pasted text).
    if arg.len() > 4096 {
        return format!(
            "a path of {} bytes: no file's path is that long; {GIVE}",
            arg.len()
        );
    }
    // From the brain folder only what stays inside it, as the lookup itself does.
    let from_root = !brain::passage::climbs_out(arg);
    let found = std::iter::once(PathBuf::from(arg))
        .chain(from_root.then(|| root.join(arg)))
        .find_map(|p| std::fs::metadata(p).ok());
    match found {
        Some(m) if m.is_dir() => format!("{arg} is a folder, not a file: {GIVE}"),
        // A symlink in the brain to a file elsewhere: a file, but not one of the brain's.
        Some(m) if m.is_file() => format!(
            "{arg} leads outside the brain folder (a symlink): give the file's own path to compare it as a draft"
        ),
        Some(_) => format!("{arg} is not a regular file: {GIVE}"),
        None => format!(
            "no such file: {arg} (looked here and in the brain folder {})",
            root.display()
        ),
    }
}

/// `file`'s path relative to `root` with `/` separators, when it lies inside it (symlinks
/// resolved on both sides).
fn inside(root: &Path, file: &Path) -> Option<String> {
    let root = root.canonicalize().ok()?;
    let file = file.canonicalize().ok()?;
    let rel = file.strip_prefix(&root).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_is_no_regular_file_says_what_it_is() {
        // The repository stands in for a brain folder: `src` is a folder in it.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (arg, starts) in [
            (
                "src",
                "src is a folder, not a file: give a note or draft file",
            ),
            (
                "/dev/null",
                "/dev/null is not a regular file: give a note or draft file",
            ),
            ("", "the draft path is empty: "),
            (
                "src/nope.md",
                "no such file: src/nope.md (looked here and in the brain",
            ),
        ] {
            let msg = not_a_file(root, arg);
            assert!(msg.starts_with(starts), "{arg:?}: {msg}");
        }
    }
}
