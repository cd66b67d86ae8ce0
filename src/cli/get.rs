//! `brain get PATH[:LINE[:COUNT]]`: a note, or the passage around a hit, with line numbers.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::passage::{self, NoteRef, Passage};
use brain::Config;

use super::args::GetArgs;
use super::paint::Paint;

/// Runs `brain get`.
pub fn run(config: Config, args: GetArgs, paint: Paint) -> Result<ExitCode> {
    // `x.md#Fix` from a folder inside the brain is this folder's `x.md`, as `x.md` is; a
    // link (`[[x]]`) is named from the brain folder, as in a note.
    let here = match passage::link_form(&config.root, &args.spec) {
        Some((name, Some(heading))) if !args.spec.trim_start().starts_with("[[") => {
            in_this_folder(&config.root, name)
                .and_then(|p| p.to_str().map(|p| format!("{p}#{heading}")))
        }
        _ => None,
    };
    let mut note = NoteRef::parse_at(&config.root, here.as_deref().unwrap_or(&args.spec))?;
    // It must still lie inside the brain (`passage::read` refuses one outside).
    if let Some(here) = in_this_folder(&config.root, &note.path) {
        note.path = here.to_string_lossy().into_owned();
    }
    let passage = passage::read(&config.root, &note)?;
    super::stats::record_read(&config, &passage.path, brain::usage::Via::Cli);
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&passage)?)?;
    } else {
        print(&mut out, &passage, paint)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The file of the current folder that a typed `path` names, when it is the one meant.
/// Paths are the brain's, as search prints them; one that names no note there but a file
/// here is that file (`cd lore; brain get x.md`), and `./x.md` or `../x.md` start from
/// here first, as a shell reads them (the brain's only when this folder has none).
pub(crate) fn in_this_folder(root: &std::path::Path, path: &str) -> Option<std::path::PathBuf> {
    let from_here = path.starts_with("./") || path.starts_with("../");
    // Either Unicode form of a name with an accent (`café.md`) names the file.
    let brains = !from_here && passage::on_disk(&root.join(path)).is_some();
    if std::path::Path::new(path).is_absolute() || brains {
        return None;
    }
    let here = passage::on_disk(&std::env::current_dir().ok()?.join(path))?;
    here.is_file().then_some(here)
}

/// `lore/x.md:10-29 (of 45 lines)` then `   10  text` lines.
pub fn print(out: &mut impl Write, p: &Passage, paint: Paint) -> io::Result<()> {
    if p.total_lines == 0 {
        let path = paint.path(&super::print::shown(&p.path));
        return writeln!(out, "{path}: (empty note)");
    }
    writeln!(
        out,
        "{}:{}-{} (of {} line{})",
        paint.path(&super::print::shown(&p.path)),
        p.start_line,
        p.end_line,
        p.total_lines,
        if p.total_lines == 1 { "" } else { "s" }
    )?;
    let width = p.end_line.to_string().len().max(4);
    // The text is the lines joined by `\n`: `lines()` would drop a blank last one.
    for (i, line) in p.text.split('\n').enumerate() {
        // `--json` keeps the text exact.
        let shown: String = line.chars().map(brain::search::printable).collect();
        let number = format!("{:>width$}", p.start_line as usize + i);
        writeln!(out, "{}  {shown}", paint.line(&number))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_note_says_so() {
        let p = Passage {
            path: "lore/empty.md".into(),
            abs_path: "/b/lore/empty.md".into(),
            start_line: 0,
            end_line: 0,
            total_lines: 0,
            text: String::new(),
        };
        let mut out = Vec::new();
        print(&mut out, &p, Paint::OFF).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "lore/empty.md: (empty note)\n"
        );
    }

    #[test]
    fn printed_lines_carry_no_control_characters() {
        let p = Passage {
            path: "a.md".into(),
            abs_path: "/b/a.md".into(),
            start_line: 9,
            end_line: 10,
            total_lines: 10,
            text: "\u{1b}]0;PWNED\u{7}\ttab\nnul\0".into(),
        };
        let mut out = Vec::new();
        print(&mut out, &p, Paint::OFF).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a.md:9-10 (of 10 lines)\n   9  \u{FFFD}]0;PWNED\u{FFFD}\ttab\n  10  nul\u{FFFD}\n"
        );
    }

    #[test]
    fn a_blank_last_line_is_shown() {
        let p = Passage {
            path: "a.md".into(),
            abs_path: "/b/a.md".into(),
            start_line: 1,
            end_line: 2,
            total_lines: 5,
            text: "# a\n".into(),
        };
        let mut out = Vec::new();
        print(&mut out, &p, Paint::OFF).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a.md:1-2 (of 5 lines)\n   1  # a\n   2  \n"
        );
    }
}
