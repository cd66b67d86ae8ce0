//! Reading a note (or the lines around a hit) for `brain get`, the socket's `get` and the
//! app's preview. Only files inside the brain root can be read: a path that climbs out
//! (`../`, an absolute path elsewhere, a symlink pointing outside) is refused.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Lines shown by `PATH:LINE` when no count is given.
pub const DEFAULT_CONTEXT: u32 = 20;
/// Of [`DEFAULT_CONTEXT`], how many come before LINE.
const LINES_BEFORE: u32 = 5;

/// What to read: `PATH`, `PATH:LINE` or `PATH:LINE:COUNT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteRef {
    /// Relative to the brain root (or absolute, inside it).
    pub path: String,
    /// 1-based line to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// How many lines from `line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

impl NoteRef {
    /// Parses `PATH[:LINE[:COUNT]]`. Colons inside the path are kept unless what follows
    /// them is a number.
    pub fn parse(spec: &str) -> Result<NoteRef> {
        let mut path = spec;
        let mut numbers = Vec::new();
        while numbers.len() < 2 {
            match path.rsplit_once(':') {
                Some((head, tail))
                    if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    let n: u32 = tail.parse().map_err(|_| {
                        Error::InvalidInput(format!(
                            "{spec}: {tail} is too large for a line number or a count"
                        ))
                    })?;
                    numbers.push(n);
                    path = head;
                }
                _ => break,
            }
        }
        numbers.reverse();
        if path.is_empty() {
            return Err(Error::InvalidInput(format!(
                "{spec:?}: expected PATH[:LINE[:COUNT]]"
            )));
        }
        let (line, count) = match numbers[..] {
            [] => (None, None),
            [l] => (Some(l), None),
            [l, c] => (Some(l), Some(c)),
            _ => unreachable!("at most two numbers are taken"),
        };
        let note = NoteRef {
            path: path.to_string(),
            line,
            count,
        };
        note.check(spec)?;
        Ok(note)
    }

    /// [`NoteRef::parse`], where `spec` may also name the note as a link does
    /// ([`link_form`]): `[[lore/x]]` is the note, and `#The fix` the lines of that
    /// heading's section (the heading, up to the next of its level or above).
    pub fn parse_at(root: &Path, spec: &str) -> Result<NoteRef> {
        let Some((name, heading)) = link_form(root, spec) else {
            return NoteRef::parse(spec);
        };
        if name.is_empty() {
            return Err(Error::InvalidInput(format!(
                "{spec}: name the note before the heading, as a link does: lore/x#Heading"
            )));
        }
        let mut note = NoteRef::parse(name)?;
        if let Some(heading) = heading {
            let (line, count) = section(root, &note.path, heading)?;
            (note.line, note.count) = (Some(line), Some(count));
        }
        Ok(note)
    }

    /// Refuses line 0 and a count of 0 (`spec` names the request in the message): also
    /// for a reference that came whole over the socket, not through [`NoteRef::parse`].
    pub fn check(&self, spec: &str) -> Result<()> {
        if self.line == Some(0) {
            return Err(Error::InvalidInput(format!(
                "{spec}: lines are numbered from 1"
            )));
        }
        if self.count == Some(0) {
            return Err(Error::InvalidInput(format!(
                "{spec}: COUNT must be at least 1"
            )));
        }
        Ok(())
    }
}

/// Some lines of a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// Path relative to the brain root.
    pub path: String,
    /// Absolute path.
    pub abs_path: String,
    /// First line shown (1-based).
    pub start_line: u32,
    /// Last line shown (0 for an empty file).
    pub end_line: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// The lines shown, joined by `\n`.
    pub text: String,
}

/// A note named as a link writes it: `[[lore/x]]` or `[[lore/x#The fix|see the fix]]`
/// copied whole, or `lore/x#The fix` where the whole names no note (`lang/C#.md:12`,
/// `lang/C#` are the note `lang/C#.md`): the name and the heading. `None` for any other
/// spec.
pub fn link_form<'a>(root: &Path, spec: &'a str) -> Option<(&'a str, Option<&'a str>)> {
    let spec = spec.trim();
    let bracketed = spec.strip_prefix("[[").and_then(|s| s.strip_suffix("]]"));
    // A label (`|see the fix`) is the link's text, not its name.
    let inner = bracketed.map(|b| b.split('|').next().unwrap_or(b));
    // As every command reads a note named: a hit's `path:LINE`, a link's name, a file of
    // the current folder.
    let a_file = || {
        let path = without_line(root, spec).unwrap_or(spec);
        // There, whatever it is (a folder, a picture, a path out of the brain): refused as
        // it is, not read as another note's heading.
        root.join(path).symlink_metadata().is_ok()
            || Path::new(path).exists()
            || resolve(root, path).is_ok()
    };
    match (inner, spec.split_once('#')) {
        (Some(inner), _) => Some(match inner.split_once('#') {
            Some((name, heading)) => (name.trim(), Some(heading.trim())),
            None => (inner.trim(), None),
        }),
        (None, Some((name, heading))) if !a_file() => Some((name, Some(heading.trim()))),
        _ => None,
    }
    .map(|(name, heading)| (name, heading.filter(|h| !h.is_empty())))
}

/// The lines of the section `heading` names in the note `rel`: `(first line, count)`.
fn section(root: &Path, rel: &str, heading: &str) -> Result<(u32, u32)> {
    let real = resolve(root, rel)?;
    let headings = crate::kb::headings::read_headings(&real).ok_or_else(|| {
        Error::InvalidInput(format!(
            "{rel}: cannot be read for its headings (too large, or unreadable): give a :LINE instead"
        ))
    })?;
    if heading.starts_with('^') {
        return Err(Error::InvalidInput(format!(
            "{rel}#{heading}: a block reference, which brain does not read: give the note alone, or its :LINE"
        )));
    }
    let Some(h) = crate::kb::headings::named(&headings, heading) else {
        const LISTED: usize = 20;
        let mut held: Vec<&str> = headings
            .iter()
            .take(LISTED)
            .map(|h| h.text.as_str())
            .collect();
        let more = format!("and {} more", headings.len().saturating_sub(LISTED));
        if headings.len() > LISTED {
            held.push(&more);
        }
        return Err(Error::InvalidInput(format!(
            "{rel} has no heading \"{heading}\": its headings are {}",
            match held.is_empty() {
                true => "none".to_string(),
                false => held.join(", "),
            }
        )));
    };
    let next = headings
        .iter()
        .find(|o| o.line > h.last_line && o.level <= h.level)
        .map(|o| o.line);
    Ok((h.line, next.map_or(u32::MAX - h.line, |n| n - h.line)))
}

/// The longest note path looked up.
const MAX_PATH_BYTES: usize = 4096;

/// True when `rel`, a path meant relative to the brain folder, steps up out of it through
/// a `..` component: looked up from the folder, it would name a file outside.
pub fn climbs_out(rel: &str) -> bool {
    rel.split('/').any(|c| c == "..")
}

/// Refuses a note path that is empty or that no file system holds ([`check_length`]),
/// before anything is looked up: either would read as a garbled "no such note".
pub(crate) fn check_path(path: &str) -> Result<()> {
    if path.trim().is_empty() {
        return Err(Error::InvalidInput(
            "the note path is empty: give one relative to the brain folder, as search \
             results give it (lore/x.md)"
                .into(),
        ));
    }
    check_length(path)
}

/// Refuses a note path no file system holds (Linux allows 4096 bytes, macOS 1024) before
/// it is looked up: the error would otherwise quote it back whole (an assistant's 5 MB
/// argument, in every message about it).
pub(crate) fn check_length(path: &str) -> Result<()> {
    if path.len() > MAX_PATH_BYTES {
        return Err(Error::InvalidInput(format!(
            "a path of {} bytes: no note's path is longer than {MAX_PATH_BYTES}",
            path.len()
        )));
    }
    Ok(())
}

/// The note of a search hit copied whole, `path:LINE` (or `path:LINE:COUNT`): `lore/x.md`
/// of `lore/x.md:37`. `None` when `path` has no such ending, or when a file is really named
/// so, in the current folder or in `root`.
pub fn without_line<'a>(root: &Path, path: &'a str) -> Option<&'a str> {
    if Path::new(path).exists() || root.join(path).exists() {
        return None;
    }
    // Read as `get` reads it; the note is the head of `path` that the parse kept.
    let hit = NoteRef::parse(path).ok()?;
    (hit.line.is_some() && hit.path.ends_with(".md")).then(|| &path[..hit.path.len()])
}

/// A note named as a person or an assistant names it, as the index holds it (relative to
/// `root`): an absolute path inside the brain, a relative one through `..` or a symlinked
/// folder of the brain (what it leads to), or a search hit's `path:LINE` (the path). A
/// path that leads nowhere is given back as it is, for the caller's "not a note" to
/// quote; only one that leads out of the brain is refused. A name typed in the other
/// Unicode form than the file's (`café`) is the file's.
pub fn note_rel(root: &Path, path: &str) -> Result<String> {
    // `[[lore/x#Fix]]`, copied from a note: the note.
    let path = link_form(root, path).map_or(path, |(name, _)| name);
    // `lore/x.md:37` or `lore/x.md:37:5`, copied from a hit: the note, unless a file is
    // really named so.
    let path = without_line(root, path).unwrap_or(path);
    let root_real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let p = Path::new(path);
    let real = std::fs::canonicalize(root.join(p))
        .ok()
        .or_else(|| other_unicode_form(&root.join(p)));
    match real.as_deref().map(|r| r.strip_prefix(&root_real)) {
        Some(Ok(rel)) if !rel.as_os_str().is_empty() => Ok(rel.to_string_lossy().into_owned()),
        Some(Err(_)) => Err(Error::InvalidInput(format!(
            "{path} is outside the brain folder {}",
            root.display()
        ))),
        // Not there (deleted, never synced, mistyped): as given, relative to the root.
        _ => Ok(match p.strip_prefix(root) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string(),
        }),
    }
}

/// The first folder on the way from `root` to `rel` whose entries cannot be looked up.
fn blocked_folder(root: &Path, rel: &str) -> Option<PathBuf> {
    let mut dir = root.to_path_buf();
    for part in Path::new(rel).parent()?.components() {
        let next = dir.join(part);
        if std::fs::metadata(&next).is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        {
            return Some(dir);
        }
        dir = next;
    }
    // The note's own folder, when it is the one that cannot be searched.
    std::fs::metadata(root.join(rel))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        .then_some(dir)
}

/// Resolves `rel` against `root`, refusing anything that ends up outside it.
pub fn resolve(root: &Path, rel: &str) -> Result<PathBuf> {
    check_path(rel)?;
    // A root that cannot be resolved gets the walk's own words for why (missing, not a
    // folder, unreadable), as every other command says them.
    let root_real = match std::fs::canonicalize(root) {
        Ok(real) if real.is_dir() => real,
        other => {
            crate::index::walk::check_root(root)?;
            other.map_err(|e| Error::io(root, e))?
        }
    };
    let candidate = if Path::new(rel).is_absolute() {
        PathBuf::from(rel)
    } else {
        root.join(rel)
    };
    let real = match std::fs::canonicalize(&candidate)
        .or_else(|e| other_unicode_form(&candidate).ok_or(e))
        .or_else(|e| link_named(root, rel).ok_or(e))
    {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // `x.md:abc`, `x.md:1:-1`, `x.md:1:2:3`: a note named, with a line spec that is
            // not one (so it was read as part of the path).
            let spec = rel
                .find(".md:")
                .filter(|&at| root.join(&rel[..at + 3]).is_file())
                .map(|_| ": after the path, give :LINE or :LINE:COUNT, whole numbers from 1")
                .unwrap_or_default();
            return Err(Error::InvalidInput(format!(
                "{rel}: no such note in {}{spec}",
                root.display()
            )));
        }
        // A symlink loop names nothing, as a link to nowhere does (exit 2, not 1).
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Error::InvalidInput(format!(
                "{rel}: a symlink loop ({e}), not a note: point the link at a note, or remove it"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            // The brain folder, said as every other command says it (exit 2), or the folder
            // on the way that cannot be entered, with what to do.
            crate::index::walk::check_root(root)?;
            return Err(blocked_folder(root, rel).map_or_else(
                || crate::error::reading_note(&candidate, e),
                |dir| {
                    Error::io(
                        &dir,
                        std::io::Error::new(
                            std::io::ErrorKind::PermissionDenied,
                            "the folder cannot be entered (permission denied): make it \
                             readable (chmod u+rx), or ask whoever owns it",
                        ),
                    )
                },
            ));
        }
        Err(e) => return Err(Error::io(&candidate, e)),
    };
    // A folder entry named by its folder (`idea/capture` for `idea/capture/capture.md`).
    let real = match real.is_dir().then(|| link_named(root, rel)).flatten() {
        Some(entry) => entry,
        None => real,
    };
    if !real.starts_with(&root_real) {
        return Err(Error::InvalidInput(format!(
            "{rel}: outside the brain folder {}; refused",
            root.display()
        )));
    }
    if !real.is_file() {
        return Err(Error::InvalidInput(format!("{rel}: not a file")));
    }
    if real.extension().is_none_or(|e| e != "md") {
        return Err(Error::InvalidInput(format!(
            "{rel}: not a markdown note (.md)"
        )));
    }
    Ok(real)
}

/// The note `rel` names when it is written as a link names it (`lore/x` for `lore/x.md`,
/// or the folder entry `lore/x/x.md`), the form `check`, `links` and `similar` print and
/// take: copied from a `[[lore/x]]`, it reads the note. `None` for a path ending in `.md`.
fn link_named(root: &Path, rel: &str) -> Option<PathBuf> {
    if rel.ends_with(".md") || Path::new(rel).is_absolute() {
        return None;
    }
    crate::kb::links::named_files(rel.trim_end_matches('/'))
        .iter()
        .find_map(|name| std::fs::canonicalize(root.join(name)).ok())
}

/// `path` as the file system names it: itself when it is there, else the file a name typed
/// in the other Unicode form names (see [`other_unicode_form`]); `None` when neither is.
pub fn on_disk(path: &Path) -> Option<PathBuf> {
    match path.symlink_metadata() {
        Ok(_) => Some(path.to_path_buf()),
        Err(_) => other_unicode_form(path),
    }
}

/// The file `path` names when its name was typed in one Unicode form and is held in the
/// other (`café` typed, `cafe` and a combining accent on disk, as macOS wrote names for
/// years; APFS itself matches either, Linux's file systems do not): each missing part is
/// looked for among its folder's entries, compared in NFC. `None` when there is none, or
/// the path is ASCII (one form only).
fn other_unicode_form(path: &Path) -> Option<PathBuf> {
    use crate::text::unicode_form::nfc;
    let text = path.to_str()?;
    if text.is_ascii() {
        return None;
    }
    let mut found = PathBuf::new();
    for part in path.components() {
        let next = found.join(part);
        if next.symlink_metadata().is_ok() {
            found = next;
            continue;
        }
        let want = nfc(part.as_os_str().to_str()?).into_owned();
        let dir = if found.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &found
        };
        let name = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.file_name())
            .find(|n| n.to_str().is_some_and(|n| nfc(n) == want))?;
        found.push(name);
    }
    std::fs::canonicalize(found).ok()
}

/// Reads the lines `note` asks for.
pub fn read(root: &Path, note: &NoteRef) -> Result<Passage> {
    note.check(&note.path)?;
    let real = resolve(root, &note.path)?;
    let bytes = crate::file::read_file(&real, u64::MAX)
        .map_err(|e| crate::error::reading_note(&real, e))?;
    if crate::note::looks_binary(&bytes) {
        return Err(Error::InvalidInput(format!(
            "{}: not a note, and the index skips it too: a {}",
            note.path,
            crate::note::not_text_why(&bytes)
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = crate::note::mac_lines(&text);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len() as u32;
    let (start, count) = match (note.line, note.count) {
        (None, _) => (1, total.max(1)),
        (Some(l), Some(c)) => (l, c),
        // Near the end the window slides back, as it does at the start: a hit on the last
        // line still shows DEFAULT_CONTEXT lines, not the last few.
        (Some(l), None) => (
            l.saturating_sub(LINES_BEFORE)
                .min(total.saturating_sub(DEFAULT_CONTEXT - 1))
                .max(1),
            DEFAULT_CONTEXT,
        ),
    };
    if let Some(line) = note.line.filter(|&l| l > total.max(1)) {
        return Err(Error::InvalidInput(format!(
            "{}: line {line} is past the end ({total} lines)",
            note.path
        )));
    }
    let end = start.saturating_add(count - 1).min(total);
    let shown = if total == 0 {
        String::new()
    } else {
        lines[start as usize - 1..end as usize].join("\n")
    };
    let root_real = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let rel = crate::index::walk::relative(&root_real, &real).unwrap_or_else(|| note.path.clone());
    Ok(Passage {
        path: rel,
        abs_path: real.to_string_lossy().into_owned(),
        start_line: if total == 0 { 0 } else { start },
        end_line: end,
        total_lines: total,
        text: shown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_refused_without_waiting_and_a_loop_is_bad_input() {
        let root = tempfile::tempdir().unwrap();
        let fifo = root.path().join("pipe.md");
        crate::file::mkfifo(&fifo);
        // No writer: a blocking open would wait forever.
        let err = crate::file::read_file(&fifo, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        std::os::unix::fs::symlink("b.md", root.path().join("a.md")).unwrap();
        std::os::unix::fs::symlink("a.md", root.path().join("b.md")).unwrap();
        let err = read(root.path(), &NoteRef::parse("a.md").unwrap()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string().starts_with("a.md: a symlink loop ("),
            "{err}"
        );
    }

    #[test]
    fn a_note_named_as_a_link_is_read_and_its_heading_is_its_section() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("lore")).unwrap();
        std::fs::write(
            root.path().join("lore/x.md"),
            "# X\n\nintro\n\n## The fix\n\nfix\n\n### Detail\n\nmore\n\n## After\n\nend\n",
        )
        .unwrap();
        std::fs::write(root.path().join("C#.md"), "sharp\n").unwrap();
        let lines = |spec: &str| {
            let note = NoteRef::parse_at(root.path(), spec)?;
            let p = read(root.path(), &note)?;
            Ok::<_, Error>((p.path, p.start_line, p.end_line))
        };
        let lines = |spec: &str| lines(spec).map_err(|e| e.to_string());
        let x = |a, b| Ok(("lore/x.md".to_string(), a, b));
        assert_eq!(lines("[[lore/x]]"), x(1, 15));
        // The section runs to the next heading of its level, over deeper ones.
        assert_eq!(lines("[[lore/x#The fix|see the fix]]"), x(5, 12));
        assert_eq!(lines("lore/x#the FIX"), x(5, 12));
        assert_eq!(lines("lore/x#after"), x(13, 15));
        assert_eq!(lines("lore/x.md#Detail"), x(9, 12));
        // A note named with `#` is that note, as a hit or a link names it, even beside
        // the note named by what comes before its `#`.
        std::fs::write(root.path().join("C.md"), "c\n").unwrap();
        for spec in ["C#.md", "C#.md:1", "C#"] {
            assert_eq!(lines(spec), Ok(("C#.md".to_string(), 1, 1)), "{spec}");
        }
        // A folder or another file named with `#` is refused as it is.
        std::fs::create_dir(root.path().join("D#")).unwrap();
        std::fs::write(root.path().join("D.md"), "d\n").unwrap();
        std::fs::write(root.path().join("E#.png"), "png").unwrap();
        std::fs::write(root.path().join("E.md"), "e\n").unwrap();
        assert!(lines("D#").is_err());
        assert!(lines("E#.png").unwrap_err().contains("not a markdown note"));
        // In a link, as in a note, `#` begins the heading: `[[C#]]` is C.
        assert_eq!(lines("[[C#]]"), Ok(("C.md".to_string(), 1, 1)));
        assert!(lines("lore/x#^block1")
            .unwrap_err()
            .contains("a block reference"));
        let err = lines("[[lore/x#Nope]]").unwrap_err();
        assert!(
            err.contains(
                "lore/x has no heading \"Nope\": its headings are X, The fix, Detail, After"
            ),
            "{err}"
        );
        assert!(lines("#Nope")
            .unwrap_err()
            .to_string()
            .contains("name the note"));
        assert_eq!(link_form(root.path(), "lore/x.md"), None);
    }

    #[test]
    fn a_hit_near_the_end_still_shows_a_whole_window() {
        let root = tempfile::tempdir().unwrap();
        let text: String = (1..=48).map(|i| format!("line {i}\n")).collect();
        std::fs::write(root.path().join("x.md"), text).unwrap();
        std::fs::write(root.path().join("short.md"), "a\nb\nc\n").unwrap();
        let window = |spec: &str| {
            let p = read(root.path(), &NoteRef::parse(spec).unwrap()).unwrap();
            (p.start_line, p.end_line)
        };
        assert_eq!(window("x.md:9"), (4, 23));
        assert_eq!(window("x.md:1"), (1, 20));
        assert_eq!(window("x.md:48"), (29, 48));
        assert_eq!(window("x.md:40"), (29, 48));
        assert_eq!(window("x.md:48:3"), (48, 48), "a count given is kept");
        assert_eq!(window("short.md:3"), (1, 3));
    }

    #[test]
    fn only_a_dot_dot_component_climbs_out() {
        for out in ["../x.md", "lore/../../x.md", "a/.."] {
            assert!(climbs_out(out), "{out}");
        }
        for inside in ["lore/x.md", "..x.md", "lore/..hidden/x.md", "./x.md"] {
            assert!(!climbs_out(inside), "{inside}");
        }
    }

    #[test]
    fn a_note_named_as_a_link_names_it_is_read() {
        let root = tempfile::tempdir().unwrap();
        let lore = root.path().join("lore");
        std::fs::create_dir_all(lore.join("entry")).unwrap();
        std::fs::write(lore.join("x.md"), "# x\n").unwrap();
        std::fs::write(lore.join("entry/entry.md"), "# entry\n").unwrap();
        let real = |rel| resolve(root.path(), rel).map(|p| p.file_name().unwrap().to_owned());
        assert_eq!(real("lore/x").unwrap(), "x.md");
        assert_eq!(real("lore/entry").unwrap(), "entry.md");
        assert_eq!(real("lore/entry/").unwrap(), "entry.md");
        let err = resolve(root.path(), "lore/nope").unwrap_err();
        assert!(err.to_string().contains("no such note"), "{err}");
        let err = resolve(root.path(), "lore").unwrap_err();
        assert!(err.to_string().contains("not a file"), "{err}");
    }

    #[test]
    fn a_name_typed_in_the_other_unicode_form_is_the_same_note() {
        let root = tempfile::tempdir().unwrap();
        // Folder and file both named in NFD on disk, typed in NFC.
        let dir = root.path().join("re\u{301}sume\u{301}s");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("cafe\u{301}.md"), "# caf\u{e9}\n").unwrap();
        let real = resolve(root.path(), "r\u{e9}sum\u{e9}s/caf\u{e9}.md").unwrap();
        assert_eq!(real, dir.join("cafe\u{301}.md").canonicalize().unwrap());
        let err = resolve(root.path(), "r\u{e9}sum\u{e9}s/th\u{e9}.md").unwrap_err();
        assert!(err.to_string().contains("no such note"), "{err}");
    }

    #[test]
    fn a_note_is_named_relative_to_the_brain_however_it_was_given() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("brain");
        std::fs::create_dir_all(root.join("lore")).unwrap();
        std::fs::write(root.join("lore/x.md"), "# x\n").unwrap();
        std::fs::write(tmp.path().join("outside.md"), "# out\n").unwrap();
        std::os::unix::fs::symlink(root.join("lore"), root.join("alias")).unwrap();
        let abs = root.join("lore/x.md");
        for given in [
            "lore/x.md",
            abs.to_str().unwrap(),
            "lore/../lore/x.md",
            "alias/x.md",
            "lore/x.md:37",
            "lore/x.md:37:5",
        ] {
            assert_eq!(note_rel(&root, given).unwrap(), "lore/x.md", "{given}");
        }
        // Nowhere: as given, for the caller to say so.
        assert_eq!(note_rel(&root, "lore/gone.md").unwrap(), "lore/gone.md");
        assert_eq!(note_rel(&root, "lore/x.md:abc").unwrap(), "lore/x.md:abc");
        let outside = tmp.path().join("outside.md");
        for out in ["../outside.md", outside.to_str().unwrap()] {
            let err = note_rel(&root, out).unwrap_err().to_string();
            assert!(err.contains("is outside the brain folder"), "{err}");
        }
    }

    #[test]
    fn parses_specs() {
        assert_eq!(
            NoteRef::parse("a.md").unwrap(),
            NoteRef {
                path: "a.md".into(),
                line: None,
                count: None
            }
        );
        assert_eq!(NoteRef::parse("a.md:12").unwrap().line, Some(12));
        let r = NoteRef::parse("dir:x/a.md:3:4").unwrap();
        assert_eq!(
            (r.path.as_str(), r.line, r.count),
            ("dir:x/a.md", Some(3), Some(4))
        );
        assert!(NoteRef::parse("a.md:0").is_err());
        assert!(NoteRef::parse("a.md:1:0").is_err());
        assert!(NoteRef::parse(":3").is_err());
        assert!(NoteRef::parse("a.md:99999999999").is_err());
    }

    #[test]
    fn reads_ranges_and_refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(root.join("lore")).unwrap();
        let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(root.join("lore/a.md"), &body).unwrap();
        std::fs::write(dir.path().join("secret.md"), "s").unwrap();
        std::fs::write(root.join("notes.txt"), "t").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.md"), root.join("link.md")).unwrap();

        let p = read(&root, &NoteRef::parse("lore/a.md:10:3").unwrap()).unwrap();
        assert_eq!((p.start_line, p.end_line, p.total_lines), (10, 12, 30));
        assert_eq!(p.text, "line 10\nline 11\nline 12");
        let p = read(&root, &NoteRef::parse("lore/a.md:2").unwrap()).unwrap();
        assert_eq!((p.start_line, p.end_line), (1, 20));
        let p = read(&root, &NoteRef::parse("lore/a.md:29:10").unwrap()).unwrap();
        assert_eq!(p.end_line, 30);
        assert!(read(&root, &NoteRef::parse("lore/a.md:31").unwrap()).is_err());

        for bad in ["../secret.md", "link.md", "notes.txt", "lore", "missing.md"] {
            let err = read(&root, &NoteRef::parse(bad).unwrap()).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)), "{bad}: {err}");
        }
        let abs = dir.path().join("secret.md");
        assert!(read(&root, &NoteRef::parse(abs.to_str().unwrap()).unwrap()).is_err());
        // A note named with a line spec that is not one says what a spec is.
        for bad in ["lore/a.md:abc", "lore/a.md:1:-1", "lore/a.md:1:2:3"] {
            let err = read(&root, &NoteRef::parse(bad).unwrap())
                .unwrap_err()
                .to_string();
            assert!(err.contains("give :LINE or :LINE:COUNT"), "{bad}: {err}");
        }
        let err = read(&root, &NoteRef::parse("missing.md:x").unwrap()).unwrap_err();
        assert!(!err.to_string().contains(":LINE"), "{err}");
    }
}
