//! `[[wikilinks]]`: finding them in a note's markdown (never inside code), and resolving a
//! target to a note. `[[lore/retries]]`, `[[lore/retries|the jitter lesson]]` and
//! `[[lore/retries#Fix]]` all point at `lore/retries.md`, or at the folder entry
//! `lore/retries/retries.md`. `[[retries]]` is the short form: it resolves when exactly one
//! note has that name, and `brain check` asks for the `type/slug` form.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::text::unicode_form::nfc;

/// A wikilink as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// What it points at: the text before any `|` or `#`, trimmed, without a `.md` suffix.
    pub target: String,
    /// The heading it names after `#` (`[[lore/retries#Fix]]`), trimmed; `None` when it
    /// names none. Kept so that what `check` and `links` print, and the form `check` asks
    /// for, still lead to that heading.
    #[serde(default)]
    pub heading: Option<String>,
    /// 1-based line in the file.
    pub line: u32,
}

impl Link {
    /// The link as `check` and `links` show it: `target#heading`, without a label.
    pub fn written(&self) -> String {
        with_heading(&self.target, self.heading.as_deref())
    }

    /// The form `check` asks for: the `type/slug` name of the note at `path` (which the
    /// link reaches in its short form), with the link's heading.
    pub fn canonical_for(&self, path: &str) -> String {
        with_heading(&canonical(path), self.heading.as_deref())
    }
}

/// `target` with `#heading` after it when there is one: how a link to a note's heading is
/// written.
pub(crate) fn with_heading(target: &str, heading: Option<&str>) -> String {
    match heading {
        Some(h) => format!("{target}#{h}"),
        None => target.to_string(),
    }
}

/// The links in `body` (markdown whose first line is line `first_line` of its file). Code
/// (fenced or indented blocks, also inside list items, and inline spans) and HTML comments
/// hold no links; `[[]]` and a link that does not close on its line are not links.
pub fn extract(body: &str, first_line: u32) -> Vec<Link> {
    let text = without_code(body);
    let mut links = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = first_line + i as u32;
        for (target, heading) in in_line(line) {
            links.push(Link {
                target,
                heading,
                line: line_no,
            });
        }
    }
    links
}

/// `body` with every byte of code and of HTML comments blanked to a space (line breaks
/// kept, so lines keep their numbers), as CommonMark reads them: a fence inside a list item
/// or a block indented four spaces is code as much as a fence at the margin.
fn without_code(body: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let mut blank: Vec<std::ops::Range<usize>> = Vec::new();
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        let comment = || body[range.clone()].trim_start().starts_with("<!--");
        match event {
            Event::Start(Tag::CodeBlock(_)) | Event::Code(_) => blank.push(range),
            Event::Start(Tag::HtmlBlock) | Event::InlineHtml(_) if comment() => blank.push(range),
            _ => {}
        }
    }
    if blank.is_empty() {
        return body.to_string();
    }
    let mut bytes = body.as_bytes().to_vec();
    for r in blank {
        for b in &mut bytes[r] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Every byte of a blanked character became a space and the rest is untouched, so this
    // is still UTF-8 (the lossy conversion never replaces anything).
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Extensions of the files a `[[...]]` can name that are not notes: what Obsidian embeds
/// (images, audio, video, PDF, canvas) and the documents people attach.
const ATTACHMENTS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "svg",
    "webp",
    "avif",
    "heic",
    "tif",
    "tiff",
    "ico",
    "mp3",
    "wav",
    "m4a",
    "ogg",
    "flac",
    "3gp",
    "mp4",
    "webm",
    "ogv",
    "mov",
    "mkv",
    "avi",
    "pdf",
    "canvas",
    "base",
    "excalidraw",
    "txt",
    "csv",
    "tsv",
    "json",
    "yaml",
    "yml",
    "xml",
    "html",
    "htm",
    "zip",
    "gz",
    "tar",
    "doc",
    "docx",
    "xls",
    "xlsx",
    "ppt",
    "pptx",
    "odt",
    "ods",
    "odp",
    "rtf",
    "epub",
    "key",
    "pages",
    "numbers",
    "drawio",
    "ipynb",
];

/// The targets of the `[[...]]` on one line: each `]]` closes the nearest `[[` before it.
fn in_line(line: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(close) = line[from..].find("]]").map(|c| from + c) {
        if let Some(open) = line[from..close].rfind("[[").map(|o| from + o) {
            let inner = &line[open + 2..close];
            // In a table the alias bar is escaped (`[[note\|alias]]`): the `\` is not part
            // of the name.
            let target = inner.split(['|', '#']).next().unwrap_or("").trim();
            // A heading is what follows the first `#` up to the label (`[[a#B|see B]]`).
            let heading = inner
                .split('|')
                .next()
                .and_then(|before_label| before_label.split_once('#'))
                .map(|(_, h)| h.strip_suffix('\\').unwrap_or(h).trim())
                .filter(|h| !h.is_empty())
                .map(str::to_string);
            let target = target.strip_suffix('\\').unwrap_or(target).trim_end();
            let written_md = target.ends_with(".md");
            let target = target
                .strip_suffix(".md")
                .unwrap_or(target)
                .trim_matches('/');
            // `![[diagram.png]]` embeds a file and `[[report.pdf]]` names one: neither
            // points at a note. `![[note]]` embeds a note, so it is a link to it. Only
            // the extensions of attachments say "a file": `[[notes/node.js]]` and
            // `[[idea/v1.2]]` name notes, and were once dropped unchecked.
            let other_file = !written_md
                && target
                    .rsplit('/')
                    .next()
                    .and_then(|name| name.rsplit_once('.'))
                    .is_some_and(|(stem, ext)| {
                        !stem.is_empty() && ATTACHMENTS.contains(&ext.to_ascii_lowercase().as_str())
                    });
            if !target.is_empty() && !other_file {
                found.push((target.to_string(), heading));
            }
        }
        from = close + 2;
    }
    found
}

/// Where a link points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resolves", rename_all = "snake_case")]
pub enum Resolution {
    /// To this note, written as `type/slug`.
    Note {
        /// The note's path.
        path: String,
    },
    /// To this note, but in the short form (`[[slug]]`).
    Short {
        /// The note's path.
        path: String,
    },
    /// To a file that is there but is not a note of the index: a type's `INDEX.md` or
    /// `SCHEMA.md`, the root's `README.md`, an excluded note. A hub linking its type's
    /// index is a working link, once called "no note lore/INDEX.md" beside the file.
    Unindexed {
        /// The file, relative to the root.
        path: String,
    },
    /// Nowhere: no note has that name (or, short form, several do).
    Broken {
        /// Why, for a person.
        why: String,
    },
}

/// Resolves link targets against the notes of one brain. Names are compared in NFC, so a
/// link typed `café` finds a file named in NFD (as macOS wrote names for years), and
/// without case when no note is spelled as written: macOS's file system (and Obsidian)
/// find `[[Lore/Retries]]` at `lore/retries.md`, so brain must not call it broken.
pub struct Resolver {
    /// Each note's path as the index holds it.
    exact: HashSet<String>,
    /// Each note's path in NFC -> the path as the index holds it.
    paths: HashMap<String, String>,
    /// Each note's path in NFC and lower case -> the paths so spelled.
    folded: HashMap<String, Vec<String>>,
    /// Short name (file stem, or a folder entry's folder) -> the notes so named.
    by_name: HashMap<String, Vec<String>>,
    /// The brain folder, where a link no note answers is looked for as a file.
    root: Option<std::path::PathBuf>,
}

/// The file under `root` named `rel` without case and Unicode form, as found on disk
/// (relative), when each part of it names one entry alone.
fn without_case(root: &std::path::Path, rel: &str) -> Option<String> {
    let mut found = std::path::PathBuf::new();
    for part in rel.split('/') {
        let want = nfc(part).to_lowercase();
        let mut matches = std::fs::read_dir(root.join(&found))
            .ok()?
            .flatten()
            .map(|e| e.file_name())
            .filter(|name| name.to_str().is_some_and(|n| nfc(n).to_lowercase() == want));
        let name = matches.next()?;
        if matches.next().is_some() {
            return None;
        }
        found.push(name);
    }
    root.join(&found)
        .is_file()
        .then(|| found.to_string_lossy().into_owned())
}

impl Resolver {
    /// A resolver over `paths` (relative, `/`-separated).
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Resolver {
        let mut r = Resolver {
            exact: HashSet::new(),
            paths: HashMap::new(),
            folded: HashMap::new(),
            by_name: HashMap::new(),
            root: None,
        };
        for p in paths {
            let same = nfc(p);
            r.exact.insert(p.to_string());
            r.paths.insert(same.to_string(), p.to_string());
            r.folded
                .entry(same.to_lowercase())
                .or_default()
                .push(p.to_string());
            let stem = same
                .rsplit('/')
                .next()
                .unwrap_or(&same)
                .trim_end_matches(".md");
            r.by_name
                .entry(stem.to_lowercase())
                .or_default()
                .push(p.to_string());
        }
        for list in r.by_name.values_mut().chain(r.folded.values_mut()) {
            list.sort();
            list.dedup();
        }
        r
    }

    /// Looks in `root` for a file a link names that no note of the index is
    /// ([`Resolution::Unindexed`]).
    pub fn on_disk(mut self, root: &std::path::Path) -> Resolver {
        self.root = Some(root.to_path_buf());
        self
    }

    /// Where `target` points.
    pub fn resolve(&self, target: &str) -> Resolution {
        match self.among_notes(target) {
            Ok(found) => found,
            // Only when no note has the name: a short link two notes answer stays broken,
            // whatever file of that name sits at the root.
            Err(why) => match self.unindexed(target) {
                Some(path) => Resolution::Unindexed { path },
                None => Resolution::Broken {
                    why: match self.unlinkable(target) {
                        Some(hint) => format!("{why}; {hint}"),
                        None => why,
                    },
                },
            },
        }
    }

    /// When a note's path goes on from `target` with a `#` or `|` (`misc/hash#tag.md` for
    /// `[[misc/hash#tag]]`, read as the heading `tag` of `misc/hash`; or a folder
    /// `misc/c#/`): what to say, since no link can name such a note. The link as written is
    /// not kept, so it is said as "if it means": `[[misc/c]]` may mean `misc/c.md`.
    fn unlinkable(&self, target: &str) -> Option<String> {
        let target = nfc(target).to_lowercase();
        let mut found: Vec<(&str, char, bool)> = Vec::new();
        for p in self.exact.iter().filter(|p| p.contains(['#', '|'])) {
            let full = nfc(p.strip_suffix(".md").unwrap_or(p)).to_lowercase();
            let name = full.rsplit('/').next().unwrap_or(&full).to_string();
            for n in [&full, &name] {
                let Some(rest) = n.strip_prefix(&target) else {
                    continue;
                };
                if let Some(c) = rest.chars().next().filter(|c| matches!(c, '#' | '|')) {
                    found.push((p.as_str(), c, rest.contains('/')));
                    break;
                }
            }
        }
        // The note itself before one under a folder so named, then by path.
        found.sort_unstable_by_key(|&(p, _, in_folder)| (in_folder, p));
        let (path, c, in_folder) = found.first().copied()?;
        let what = match c {
            '#' => "a heading",
            _ => "a label",
        };
        Some(match in_folder {
            true => format!(
                "if it means {path}: a link reads the '{c}' in its folder's name as the start of {what}, so no link reaches it; rename the folder"
            ),
            false => format!(
                "if it means {path}: a link reads the '{c}' in its name as the start of {what}, so no link reaches it; rename the file"
            ),
        })
    }

    /// `target.md`, or `target` as written (`[[scripts/deploy.sh]]`), as a file under the
    /// root, when [`Resolver::on_disk`] gave one: only a plain relative path (no `..`,
    /// nothing absolute), and a file, not a folder.
    fn unindexed(&self, target: &str) -> Option<String> {
        let root = self.root.as_ref()?;
        let rel = std::path::Path::new(target);
        let plain = rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !plain {
            return None;
        }
        let named = [format!("{target}.md"), target.to_string()];
        named
            .iter()
            .find(|file| root.join(file).is_file())
            .cloned()
            // As a note's name is matched: without case (a Mac's `lore/index` is its
            // `lore/INDEX.md`) and in either Unicode form, when one file alone is so named.
            .or_else(|| named.iter().find_map(|file| without_case(root, file)))
    }

    /// The note `target` names, `Ok(Broken)` when several could be meant, or `Err` with why
    /// none is; files on disk are not looked at.
    pub(crate) fn among_notes(&self, target: &str) -> Result<Resolution, String> {
        let same = nfc(target);
        if target.contains('/') {
            // As written first: a brain may hold both spellings of a name (Linux allows it),
            // and a link that names one of them exactly means that one.
            for spelled in [target, &*same] {
                for candidate in named_files(spelled) {
                    if self.exact.contains(&candidate) {
                        return Ok(Resolution::Note { path: candidate });
                    }
                    if spelled == &*same {
                        if let Some(path) = self.paths.get(&candidate) {
                            return Ok(Resolution::Note { path: path.clone() });
                        }
                    }
                }
            }
            // No note spelled as written: one whose name differs only in case is the one
            // meant (two such, on Linux, and the link cannot say which).
            for candidate in named_files(&same) {
                match self
                    .folded
                    .get(&candidate.to_lowercase())
                    .map(Vec::as_slice)
                {
                    Some([one]) => return Ok(Resolution::Note { path: one.clone() }),
                    Some(many) if many.len() > 1 => {
                        return Ok(Resolution::Broken {
                            why: format!(
                                "{} notes differ from {target} only in case: {}",
                                many.len(),
                                many.join(", ")
                            ),
                        })
                    }
                    _ => {}
                }
            }
            return Err(format!(
                "no note {target}.md (or {target}/{}.md)",
                target.rsplit('/').next().unwrap_or(target)
            ));
        }
        // A note at the root is named in full by its bare name (`[[a]]` for `a.md`): not the
        // short form, which `check` would ask to be written as itself.
        for spelled in [target, &*same] {
            let candidate = format!("{spelled}.md");
            if self.exact.contains(&candidate) {
                return Ok(Resolution::Note { path: candidate });
            }
            if let Some(path) = self.paths.get(&candidate).filter(|_| spelled == &*same) {
                return Ok(Resolution::Note { path: path.clone() });
            }
        }
        match self.by_name.get(&same.to_lowercase()).map(Vec::as_slice) {
            Some([one]) => Ok(Resolution::Short { path: one.clone() }),
            Some(many) if many.len() > 1 => Ok(Resolution::Broken {
                why: format!(
                    "{} notes are called {target}: {}",
                    many.len(),
                    many.join(", ")
                ),
            }),
            _ => Err(format!("no note is called {target}")),
        }
    }
}

/// The files a link `target` with a folder in it names, in the order they are looked for:
/// `lore/x` is `lore/x.md`, else the folder entry `lore/x/x.md` (what [`canonical`] writes
/// back as `lore/x`).
pub fn named_files(target: &str) -> [String; 2] {
    let last = target.rsplit('/').next().unwrap_or(target);
    [format!("{target}.md"), format!("{target}/{last}.md")]
}

/// The link that points at `path` in the `type/slug` form: the path without `.md`, and a
/// folder entry (`type/slug/slug.md`) as `type/slug`.
pub fn canonical(path: &str) -> String {
    let bare = path.strip_suffix(".md").unwrap_or(path);
    match bare.rsplit_once('/') {
        // `type/slug/slug` only: `lore/lore.md` is an entry named lore, not a folder entry.
        Some((dir, last)) if dir.contains('/') && dir.rsplit('/').next() == Some(last) => {
            dir.to_string()
        }
        _ => bare.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(body: &str) -> Vec<(String, u32)> {
        extract(body, 10)
            .into_iter()
            .map(|l| (l.target, l.line))
            .collect()
    }

    #[test]
    fn links_are_found_with_their_lines_and_never_inside_code() {
        let body = "See [[lore/retries]] and [[idea/x|the idea]].\n\
                    `[[not/a-link]]` but [[lore/y#Fix]] is.\n\
                    ```\n[[in/a-fence]]\n```\n\
                    ~~~~md\n[[also/fenced]]\n~~~\n[[still/fenced]]\n~~~~\n\
                    [[]] [[ ]] [[open only\n\
                    [[lore/z.md]] [[a [[lore/inner]]\n\
                    ![[diagram.png]] [[report.pdf]] [[idea/v1.2]] [[notes/version-2.0]]\n\
                    \n\
                    \x20   [[indented/code]]\n\
                    \n\
                    - a list item\n\
                    \x20   ```toml\n\
                    \x20   [[tool.mypy.overrides]]\n\
                    \x20   ```\n\
                    \n\
                    <!-- [[in/a-comment]] -->\n\
                    Café ``[[x]]`` [[lore/after-code]] <!-- [[inline/comment]] -->\n\
                    | [[lore/in-table\\|alias]] | [[notes/node.js]] [[notes/socket.io.md]] |\n\
                    ![[lore/embedded]] ![[Photo.JPG]] [[notes/gone.tool]]";
        assert_eq!(
            targets(body),
            [
                ("lore/retries".into(), 10),
                ("idea/x".into(), 10),
                ("lore/y".into(), 11),
                ("lore/z".into(), 21),
                ("lore/inner".into(), 21),
                ("idea/v1.2".into(), 22),
                ("notes/version-2.0".into(), 22),
                ("lore/after-code".into(), 32),
                ("lore/in-table".into(), 33),
                ("notes/node.js".into(), 33),
                ("notes/socket.io".into(), 33),
                ("lore/embedded".into(), 34),
                ("notes/gone.tool".into(), 34),
            ]
        );
    }

    #[test]
    fn a_heading_is_kept_apart_from_the_target_and_the_label() {
        let body = "[[lore/y#Fix]] [[lore/y#Fix it|see the fix]] [[lore/y|a#b]] [[lore/y#]]\n\
                    | [[lore/t# In a table \\|alias]] | [[#Only a heading]] |";
        let found: Vec<_> = extract(body, 1)
            .into_iter()
            .map(|l| (l.written(), l.heading))
            .collect();
        assert_eq!(
            found,
            [
                ("lore/y#Fix".to_string(), Some("Fix".to_string())),
                ("lore/y#Fix it".into(), Some("Fix it".into())),
                // A `#` in the label is the label's.
                ("lore/y".into(), None),
                ("lore/y".into(), None),
                ("lore/t#In a table".into(), Some("In a table".into())),
            ]
        );
    }

    #[test]
    fn targets_resolve_to_notes_and_folder_entries_and_short_forms_are_told_apart() {
        let r = Resolver::new([
            "lore/retries.md",
            "idea/capture/capture.md",
            "lore/a/dup.md",
            "idea/dup.md",
        ]);
        assert_eq!(
            r.resolve("lore/retries"),
            Resolution::Note {
                path: "lore/retries.md".into()
            }
        );
        assert_eq!(
            r.resolve("idea/capture"),
            Resolution::Note {
                path: "idea/capture/capture.md".into()
            }
        );
        assert_eq!(
            r.resolve("retries"),
            Resolution::Short {
                path: "lore/retries.md".into()
            }
        );
        assert!(matches!(
            r.resolve("lore/missing"),
            Resolution::Broken { .. }
        ));
        let Resolution::Broken { why } = r.resolve("dup") else {
            panic!()
        };
        assert!(why.contains("2 notes are called dup"), "{why}");
        // A `#` in a file name: the link stops at it, and the message says so.
        let r = Resolver::new(["misc/hash#tag.md", "lore/a|b.md", "lang/c#/basics.md"]);
        for (target, says) in [
            ("misc/hash", "if it means misc/hash#tag.md: a link reads the '#' in its name as the start of a heading"),
            ("hash", "if it means misc/hash#tag.md: a link reads the '#'"),
            ("lore/a", "if it means lore/a|b.md: a link reads the '|' in its name as the start of a label"),
            ("lang/c", "if it means lang/c#/basics.md: a link reads the '#' in its folder's name"),
        ] {
            let Resolution::Broken { why } = r.resolve(target) else {
                panic!("{target}")
            };
            assert!(why.contains(says), "{why}");
        }
        let Resolution::Broken { why } = r.resolve("misc/has") else {
            panic!()
        };
        assert!(!why.contains("if it means"), "{why}");
        // A note at the root: its bare name is its full link, even beside a namesake.
        let r = Resolver::new(["a.md", "lore/b.md", "lore/a.md"]);
        assert_eq!(
            r.resolve("a"),
            Resolution::Note {
                path: "a.md".into()
            }
        );
        assert_eq!(
            r.resolve("b"),
            Resolution::Short {
                path: "lore/b.md".into()
            }
        );
        // A file named in NFD, linked in NFC (and the other way): the path as it is held.
        let r = Resolver::new(["lore/cafe\u{301}-nfd.md", "lore/na\u{ef}ve.md"]);
        for (link, path) in [
            ("lore/caf\u{e9}-nfd", "lore/cafe\u{301}-nfd.md"),
            ("lore/nai\u{308}ve", "lore/na\u{ef}ve.md"),
        ] {
            assert_eq!(r.resolve(link), Resolution::Note { path: path.into() });
        }
        assert_eq!(
            r.resolve("caf\u{e9}-nfd"),
            Resolution::Short {
                path: "lore/cafe\u{301}-nfd.md".into()
            }
        );
        // Case: as written first, then without case when one note is so spelled.
        let r = Resolver::new([
            "lore/retries.md",
            "Idea/Capture/Capture.md",
            "x/A.md",
            "x/a.md",
        ]);
        for (link, path) in [
            ("Lore/Retries", "lore/retries.md"),
            ("idea/capture", "Idea/Capture/Capture.md"),
            ("x/A", "x/A.md"),
            ("x/a", "x/a.md"),
        ] {
            assert_eq!(
                r.resolve(link),
                Resolution::Note { path: path.into() },
                "{link}"
            );
        }
        let Resolution::Broken { why } = r.resolve("X/A") else {
            panic!("two notes differ only in case")
        };
        assert!(
            why.contains("2 notes differ from X/A only in case"),
            "{why}"
        );
        // A file that is there but not a note of the index: a working link, not a broken one.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lore")).unwrap();
        std::fs::write(dir.path().join("lore/INDEX.md"), "# Lore\n").unwrap();
        std::fs::write(dir.path().join("README.md"), "# Brain\n").unwrap();
        let r = Resolver::new(["lore/retries.md"]).on_disk(dir.path());
        for (link, file) in [("lore/INDEX", "lore/INDEX.md"), ("README", "README.md")] {
            assert_eq!(
                r.resolve(link),
                Resolution::Unindexed { path: file.into() },
                "{link}"
            );
        }
        std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/deploy.sh"), "#!/bin/sh\n").unwrap();
        assert_eq!(
            r.resolve("scripts/deploy.sh"),
            Resolution::Unindexed {
                path: "scripts/deploy.sh".into()
            }
        );
        // Two notes called guide: a root guide.md not indexed does not settle it.
        std::fs::write(dir.path().join("guide.md"), "# Guide\n").unwrap();
        let two = Resolver::new(["lore/guide.md", "idea/guide.md"]).on_disk(dir.path());
        assert!(matches!(two.resolve("guide"), Resolution::Broken { .. }));
        for broken in ["lore/SCHEMA", "../lore/INDEX", "lore", "scripts/gone.sh"] {
            assert!(
                matches!(r.resolve(broken), Resolution::Broken { .. }),
                "{broken}"
            );
        }
        assert_eq!(canonical("idea/capture/capture.md"), "idea/capture");
        assert_eq!(canonical("lore/retries.md"), "lore/retries");
        assert_eq!(
            canonical("lore/lore.md"),
            "lore/lore",
            "an entry named like its type"
        );
    }
}
