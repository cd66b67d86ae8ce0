//! The brain as a knowledge base: typed folders (`lore/`, `idea/`, ...) whose `SCHEMA.md`
//! says what an entry carries ([`schema`]), kebab-case slugs ([`slug`]), `[[type/slug]]`
//! links ([`links`]), the audit `brain check` runs ([`check`]), the per-type `INDEX.md`
//! ([`index_md`]), new entries from a type's template ([`new`]) and a new brain's folders
//! ([`create`]).
//!
//! Everything here works on an [`Entry`] list the engine reads from the index in one
//! transaction, so an audit of thousands of notes reads no note file but those a link's
//! `#heading` names ([`headings`]); only `brain new`,
//! `brain index-md --write` and a new brain's schemas are written, each file through a temp
//! file renamed into place.

pub mod check;
pub mod create;
pub mod headings;
pub mod index_md;
pub mod links;
pub mod new;
pub mod schema;
pub mod slug;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use check::{CheckReport, Problem, ProblemKind};
pub use create::{create_brain, unfinished};
pub use index_md::IndexFile;
pub use links::{Link, Resolution, Resolver};
pub use new::NewEntry;
pub use schema::{Schema, Schemas};

/// A note as the knowledge base sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Relative to the root.
    pub path: String,
    /// Its type (frontmatter `type`, else its top-level folder).
    pub kind: String,
    /// Its title.
    pub title: String,
    /// Its frontmatter.
    pub fields: Map<String, Value>,
    /// Its date, `YYYY-MM-DD`.
    pub date: String,
    /// What was wrong with it when it was indexed (broken frontmatter, invalid UTF-8).
    pub problem: Option<String>,
    /// Its outgoing links.
    pub links: Vec<Link>,
}

impl Entry {
    /// `(folder, slug)` when this note is an entry of a type folder: `type/slug.md` or the
    /// folder entry `type/slug/slug.md`. Other notes (deeper files, files at the root) are
    /// not entries.
    pub fn slot(&self) -> Option<(&str, &str)> {
        let bare = self.path.strip_suffix(".md")?;
        let parts: Vec<&str> = bare.split('/').collect();
        match parts[..] {
            [folder, slug] => Some((folder, slug)),
            [folder, dir, slug] if dir == slug => Some((folder, slug)),
            _ => None,
        }
    }

    /// A frontmatter field as text: a string as it is, a number or boolean written out;
    /// `None` when missing, null, empty, a list or a map.
    pub fn text_field(&self, name: &str) -> Option<String> {
        match self.fields.get(name)? {
            Value::Array(_) => None,
            _ => self.field_values(name).pop(),
        }
    }

    /// A frontmatter field's values as text: a list's items (those [`Entry::text_field`]
    /// would read alone), or the one value; empty when missing or null. `check` reads a list
    /// item by item, so `index-md`'s groups and `stale_except` must too: `phase: [Done]`
    /// was filed under "(no phase)" and called stale though exempt.
    pub fn field_values(&self, name: &str) -> Vec<String> {
        let one = |v: &Value| match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        match self.fields.get(name) {
            Some(Value::Array(items)) => items.iter().filter_map(one).collect(),
            Some(v) => one(v).into_iter().collect(),
            None => Vec::new(),
        }
    }
}

/// The links of one note, both ways: `brain links`, the MCP `links` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinksReport {
    /// The note.
    pub path: String,
    /// Its links, in order, each with where it points.
    pub outgoing: Vec<OutLink>,
    /// The notes linking to it.
    pub incoming: Vec<InLink>,
    /// Said when the index could not be brought up to date first (a read-only data dir).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// A link from the note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutLink {
    /// As written (before `|` or `#`).
    pub target: String,
    /// The heading it names after `#`; `null` when none.
    #[serde(default)]
    pub heading: Option<String>,
    /// 1-based line.
    pub line: u32,
    /// The note it points at; `None` when broken.
    pub path: Option<String>,
    /// `ok`, `short` (resolves, but not written as `type/slug`) or `broken`.
    pub state: String,
    /// Why it is broken or short (`null` when ok, but for a link to a file that is there and
    /// not indexed: `INDEX.md`, `SCHEMA.md`, `README.md`, an excluded note).
    #[serde(default)]
    pub why: Option<String>,
}

impl OutLink {
    /// The link as `links` shows it: `target#heading`, as [`Link::written`].
    pub fn written(&self) -> String {
        links::with_heading(&self.target, self.heading.as_deref())
    }
}

/// A link to the note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InLink {
    /// The note that links here.
    pub path: String,
    /// The line of the link in it.
    pub line: u32,
}

/// The links from and to `path` among `entries` of the brain at `root`; `None` when `path`
/// is not among them. `path` may be written as a link names the note (`lore/x`, a folder
/// entry's `idea/capture`), the form `check` and `links` print, copied back.
pub fn links_of(root: &std::path::Path, entries: &[Entry], path: &str) -> Option<LinksReport> {
    // Only the note's own links are looked for on disk: an incoming link is one that
    // resolves to a note (`among_notes`), and a stat per broken link of the brain would
    // find nothing.
    let resolver = Resolver::new(entries.iter().map(|e| e.path.as_str())).on_disk(root);
    let mut headings = headings::Headings::new(root);
    let linked = match resolver.among_notes(path) {
        Ok(Resolution::Note { path }) => Some(path),
        _ => None,
    };
    // Typed in one Unicode form, held in the other (a name with an accent): the same note.
    let me = entries
        .iter()
        .find(|e| e.path == path)
        .or_else(|| {
            let want = crate::text::unicode_form::nfc(path);
            entries
                .iter()
                .find(|e| crate::text::unicode_form::nfc(&e.path) == want)
        })
        .or_else(|| entries.iter().find(|e| Some(&e.path) == linked.as_ref()))?;
    let path = me.path.as_str();
    let outgoing = me
        .links
        .iter()
        .map(|l| {
            let (path, state, why) = match resolver.resolve(&l.target) {
                Resolution::Note { path } => {
                    let gone = l
                        .heading
                        .as_deref()
                        .and_then(|h| headings.missing(&path, h));
                    let state = if gone.is_some() { "broken" } else { "ok" };
                    (Some(path), state, gone)
                }
                Resolution::Short { path } => {
                    let why = format!("write it as [[{}]]", l.canonical_for(&path));
                    (Some(path), "short", Some(why))
                }
                Resolution::Unindexed { path } => {
                    let why =
                        "a file brain does not index (INDEX.md, SCHEMA.md, README.md, or excluded)";
                    (Some(path), "ok", Some(why.to_string()))
                }
                Resolution::Broken { why } => (None, "broken", Some(why)),
            };
            OutLink {
                target: l.target.clone(),
                heading: l.heading.clone(),
                line: l.line,
                path,
                state: state.into(),
                why,
            }
        })
        .collect();
    let mut incoming: Vec<InLink> = entries
        .iter()
        .filter(|e| e.path != path)
        .flat_map(|e| {
            e.links
                .iter()
                .filter_map(|l| match resolver.among_notes(&l.target) {
                    Ok(Resolution::Note { path: to } | Resolution::Short { path: to })
                        if to == path =>
                    {
                        Some(InLink {
                            path: e.path.clone(),
                            line: l.line,
                        })
                    }
                    _ => None,
                })
        })
        .collect();
    incoming.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    // A line linking twice (`[[x]] ... [[x#Fix]]`) is one place that links here.
    incoming.dedup_by(|a, b| a.path == b.path && a.line == b.line);
    Some(LinksReport {
        path: path.to_string(),
        outgoing,
        incoming,
        notice: None,
    })
}

/// The text of the file at `path` (a symlink followed), when it is a regular file of at most
/// `max` bytes. A pipe or a device named `SCHEMA.md` or `INDEX.md` (or a link to
/// `/dev/zero`) once blocked `check`, `new` and `index-md` forever, or read until memory
/// ran out: such a file is an error here, said as the system's `InvalidInput`.
pub(crate) fn read_regular(path: &std::path::Path, max: u64) -> std::io::Result<String> {
    use std::io::Read;
    let (file, size) = crate::file::open_regular(path)?;
    if size > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{:.2} MiB, over the {:.0} MiB such a file may be",
                crate::config::megabytes(size),
                crate::config::megabytes(max)
            ),
        ));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    // Latin text in UTF-16 is valid UTF-8, NULs and all: told before it is read as text.
    if crate::note::is_utf16(&bytes) {
        let why = crate::note::not_text_why(&bytes);
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// [`read_regular`] for a file of the brain folder `root` (a `SCHEMA.md`, an `INDEX.md`):
/// a link that leads out of the folder is refused, as `brain get` refuses it; followed,
/// `check` showed the file's values, `new` copied its template into a note, and
/// `index-md` printed it whole (`/etc/passwd` through a link a shared brain carried).
pub(crate) fn read_in_brain(
    root: &std::path::Path,
    path: &std::path::Path,
    max: u64,
) -> std::io::Result<String> {
    if path.symlink_metadata()?.file_type().is_symlink() {
        let real = std::fs::canonicalize(path)?;
        let root_real = std::fs::canonicalize(root)?;
        if !real.starts_with(&root_real) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                LinkOut(real),
            ));
        }
    }
    read_regular(path, max)
}

/// What [`read_in_brain`] refuses: a link to this file, outside the brain folder. Its own
/// type, so that a caller that words its errors can tell it from a file it may not read.
#[derive(Debug)]
pub(crate) struct LinkOut(std::path::PathBuf);

impl LinkOut {
    /// Whether `e` is one.
    pub(crate) fn is(e: &std::io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<LinkOut>())
    }
}

impl std::fmt::Display for LinkOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a link to {}, outside the brain folder, where brain reads nothing: move the \
             file into the brain, or remove the link",
            crate::text::without_controls(&self.0.to_string_lossy())
        )
    }
}

impl std::error::Error for LinkOut {}

/// How [`write_atomic`] treats a file already at the path.
#[derive(Debug, Clone, Copy)]
pub enum WriteMode<'a> {
    /// Fail, leaving it alone (a link too, even one to nowhere).
    CreateNew,
    /// Replace it; a link is followed only to a file of the same name inside `brain` (the
    /// brain folder), outside its hidden folders: brain writes nowhere else.
    Replace {
        /// The brain folder.
        brain: &'a std::path::Path,
    },
}

/// Writes `text` to `path` through a temp file in the same folder, renamed into place: a
/// crash leaves the old file or the new one, never half of either.
pub fn write_atomic(path: &std::path::Path, text: &str, mode: WriteMode) -> crate::Result<()> {
    let refuse = |why: String| crate::Error::InvalidInput(format!("{}: {why}", path.display()));
    // A symlinked file (an INDEX.md kept elsewhere in the brain) is replaced where it
    // lives: a rename onto the link would put a plain file in its place and leave the
    // target stale.
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match mode {
            // Creating, a link is a file that exists: the write fails below.
            WriteMode::CreateNew => path,
            WriteMode::Replace { brain: given } => {
                let brain = std::fs::canonicalize(given).unwrap_or_else(|_| given.to_path_buf());
                let target = std::fs::read_link(path).unwrap_or_default();
                let outside = |shown: &std::path::Path| {
                    refuse(format!(
                        "a link to {}, outside the brain folder, where brain does not write: \
                         remove the link, or move the file into the brain",
                        shown.display()
                    ))
                };
                resolved = match std::fs::canonicalize(path) {
                    Ok(resolved) => resolved,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        // Where it points, as written (relative to the link's folder).
                        let named = path.parent().unwrap_or(path).join(&target);
                        if !named.starts_with(&brain) && !named.starts_with(given) {
                            return Err(outside(&target));
                        }
                        return Err(refuse(format!(
                            "a link to {}, which does not exist: remove the link, or make the file it names",
                            target.display()
                        )));
                    }
                    // A loop, a folder it may not enter: the system's words, for the link.
                    Err(e) => return Err(crate::Error::io(path, e)),
                };
                if !resolved.starts_with(&brain) {
                    return Err(outside(&resolved));
                }
                // Only to a file of the link's own name, outside hidden folders: an
                // INDEX.md linked (by mistake, or by a tool) to a note, a SCHEMA.md or
                // `.git/config` had that file replaced by a generated list.
                let rel = resolved.strip_prefix(&brain).unwrap_or(&resolved);
                let hidden = rel
                    .components()
                    .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
                if resolved.file_name() != path.file_name() || hidden {
                    let name = path.file_name().unwrap_or_default().to_string_lossy();
                    return Err(refuse(format!(
                        "a link to {}, which is not a file brain writes: it writes through a link \
                         only to another {name}, outside hidden folders; remove the link so that \
                         {name} can be written",
                        rel.display()
                    )));
                }
                if resolved.is_dir() {
                    return Err(refuse(format!(
                        "a link to the folder {}, not a file: point it at a file, or remove it",
                        resolved.display()
                    )));
                }
                resolved.as_path()
            }
        },
        Ok(m) if m.is_dir() => {
            return Err(refuse(
                "a folder, not a file: move it away so that the file can be written".into(),
            ))
        }
        _ => path,
    };
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let rename = match mode {
        WriteMode::CreateNew => crate::file::Rename::NoClobber,
        WriteMode::Replace { .. } => crate::file::Rename::Over,
    };
    // A note is as readable as any file the person makes (a new file's mode cut by the
    // umask, as any other's); a file being replaced keeps its own mode exactly.
    crate::file::write_beside(path, dir, text.as_bytes(), 0o666, rename).map_err(|failed| {
        use crate::file::Step;
        let e = failed.error;
        match failed.step {
            Step::Temp => {
                // The OS's words alone: tempfile's error adds the random name of a file
                // that never came to be, which sends the person looking for it. Said with
                // the file it was for and what to do: the folder and the system's words
                // alone left the person guessing what brain was writing.
                let said = e.to_string();
                let plain = said.split(" at path \"").next().unwrap_or(&said);
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                let todo = match e.kind() {
                    std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::ReadOnlyFilesystem => ": make the folder writable",
                    std::io::ErrorKind::StorageFull => ": free some disk space",
                    _ => "",
                };
                let told = format!("cannot write {name} in it: {plain}{todo}");
                crate::Error::io(dir, std::io::Error::new(e.kind(), told))
            }
            // What to do, as when the temporary file could not be made at all. The file
            // named is the one being written.
            Step::Write if e.kind() == std::io::ErrorKind::StorageFull => crate::Error::io(
                path,
                std::io::Error::new(e.kind(), format!("{e}: free some disk space")),
            ),
            Step::Write | Step::Rename => crate::Error::io(path, e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn utf16_without_a_mark_is_said_so_with_its_byte_order() {
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("SCHEMA.md");
        let le: Vec<u8> = "---\ntype: lore\n---\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        std::fs::write(&schema, le).unwrap();
        let err = read_regular(&schema, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("iconv -f UTF-16LE -t UTF-8"), "{err}");
    }

    #[test]
    fn only_a_regular_file_of_bounded_size_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("SCHEMA.md");
        crate::file::mkfifo(&fifo);
        let err = read_regular(&fifo, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let zero = dir.path().join("INDEX.md");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read_regular(&zero, 1 << 20).is_err());
        let big = dir.path().join("big.md");
        std::fs::write(&big, "x".repeat(2000)).unwrap();
        assert!(read_regular(&big, 1000)
            .unwrap_err()
            .to_string()
            .contains("MiB"));
        assert_eq!(read_regular(&big, 4000).unwrap().len(), 2000);
    }

    #[test]
    fn a_folder_that_cannot_take_the_file_is_named_without_the_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("no-such-type");
        let err = write_atomic(&gone.join("x.md"), "x", WriteMode::CreateNew)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(&gone.display().to_string()), "{err}");
        assert!(err.contains("cannot write x.md in it: "), "{err}");
        assert!(!err.contains(".brain-"), "{err}");
        // A folder it may not write: said with what to do (root writes anywhere: skipped).
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            let locked = dir.path().join("locked");
            std::fs::create_dir(&locked).unwrap();
            std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
            let err = write_atomic(&locked.join("y.md"), "y", WriteMode::CreateNew)
                .unwrap_err()
                .to_string();
            assert!(err.ends_with(": make the folder writable"), "{err}");
        }
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_link_keeps_pointing_at_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("INDEX.md");
        std::fs::write(&file, "old").unwrap();
        // Group-writable: a umask of 022 would cut it to 0644 if it were applied again.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
        write_atomic(&file, "new", WriteMode::Replace { brain: dir.path() }).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o664);

        std::fs::create_dir(dir.path().join("lore")).unwrap();
        let link = dir.path().join("lore/INDEX.md");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        write_atomic(
            &link,
            "through the link",
            WriteMode::Replace { brain: dir.path() },
        )
        .unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "through the link");
        assert!(!std::fs::read_dir(dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")));
    }

    #[test]
    fn a_link_to_a_note_a_schema_or_a_hidden_file_is_refused_untouched() {
        let brain = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(brain.path().join("lore")).unwrap();
        std::fs::create_dir_all(brain.path().join(".git/x")).unwrap();
        for (target, text) in [
            ("lore/precious-lesson.md", "my lesson"),
            ("lore/SCHEMA.md", "---\ntype: lore\n---\n"),
            (".git/config", "[core]\n"),
            (".git/x/INDEX.md", "hidden"),
        ] {
            let file = brain.path().join(target);
            std::fs::write(&file, text).unwrap();
            let link = brain.path().join("lore/INDEX.md");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&file, &link).unwrap();
            let err = write_atomic(
                &link,
                "generated",
                WriteMode::Replace {
                    brain: brain.path(),
                },
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains(&format!(
                    "a link to {target}, which is not a file brain writes"
                )),
                "{err}"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
            assert_eq!(err.lines().count(), 1);
        }
    }

    #[test]
    fn a_link_out_of_the_brain_a_link_to_nowhere_and_a_folder_are_refused_untouched() {
        let outside = tempfile::tempdir().unwrap();
        let precious = outside.path().join("precious.md");
        std::fs::write(&precious, "mine").unwrap();
        let brain = tempfile::tempdir().unwrap();
        let out_link = brain.path().join("INDEX.md");
        std::os::unix::fs::symlink(&precious, &out_link).unwrap();
        let err = write_atomic(
            &out_link,
            "generated",
            WriteMode::Replace {
                brain: brain.path(),
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("outside the brain folder"), "{err}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "mine");

        let nowhere = brain.path().join("dangling.md");
        std::os::unix::fs::symlink(brain.path().join("gone.md"), &nowhere).unwrap();
        let err = write_atomic(
            &nowhere,
            "x",
            WriteMode::Replace {
                brain: brain.path(),
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("gone.md, which does not exist"), "{err}");
        assert!(!brain.path().join("gone.md").exists());
        // Creating, any link is a file that exists.
        let err = write_atomic(&nowhere, "x", WriteMode::CreateNew).unwrap_err();
        assert!(
            matches!(&err, crate::Error::Io { cause, .. } if cause.kind() == std::io::ErrorKind::AlreadyExists),
            "{err}"
        );

        let folder = brain.path().join("folder.md");
        std::fs::create_dir(&folder).unwrap();
        let err = write_atomic(
            &folder,
            "x",
            WriteMode::Replace {
                brain: brain.path(),
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("a folder, not a file"), "{err}");
        assert_eq!(err.lines().count(), 1);
    }
}
