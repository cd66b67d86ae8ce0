//! Whether the heading a link names (`[[lore/retries#The fix]]`) is in its note: the
//! commonest way such a link rots is a section renamed under it, which no other check sees.
//! The index holds no note's headings, so the notes these links name are read, each once.

use std::collections::HashMap;
use std::path::Path;

use crate::note::Heading;

/// A note larger than this is not read for its headings (no verdict, as for an unreadable
/// one): the index skips files past `max_file_mb` anyway.
const MAX_BYTES: u64 = 16 << 20;

/// The headings of the notes links name, read from their files once each.
pub struct Headings<'a> {
    root: &'a Path,
    read: HashMap<String, Option<Vec<Heading>>>,
}

impl<'a> Headings<'a> {
    /// Reads the notes of the brain at `root` as they are asked for.
    pub fn new(root: &'a Path) -> Self {
        Headings {
            root,
            read: HashMap::new(),
        }
    }

    /// Why `heading` of the note at `path` (relative to the root) leads nowhere; `None`
    /// when the note has it, or when its file cannot be read (no verdict on what was not
    /// seen). A block reference (`#^id`) is not a heading and is not checked.
    pub fn missing(&mut self, path: &str, heading: &str) -> Option<String> {
        // Obsidian's nested form, `#Setup#Linux`, names the last heading.
        let wanted = heading.rsplit('#').next().unwrap_or(heading).trim();
        if wanted.is_empty() || wanted.starts_with('^') {
            return None;
        }
        let root = self.root;
        let held = self
            .read
            .entry(path.to_string())
            .or_insert_with(|| read_headings(&root.join(path)))
            .as_ref()?;
        match named(held, heading) {
            Some(_) => None,
            None => Some(format!("{path} has no heading \"{wanted}\"")),
        }
    }
}

/// The heading of `headings` a link's `#part` names: as written, without case or runs of
/// spaces, or as a web anchor spells it; Obsidian's nested `#Setup#Linux` names the last.
pub fn named<'h>(headings: &'h [Heading], part: &str) -> Option<&'h Heading> {
    let wanted = part.rsplit('#').next().unwrap_or(part).trim();
    let (words, slug) = (words(wanted), slug(wanted));
    // An empty slug (a heading of emoji or punctuation alone) names no heading by itself.
    headings.iter().find(|h| {
        words == self::words(&h.text) || (!slug.is_empty() && slug == self::slug(&h.text))
    })
}

/// The headings of the note at `file`; `None` when it cannot be read or is too large.
pub fn read_headings(file: &Path) -> Option<Vec<Heading>> {
    if std::fs::metadata(file).ok()?.len() > MAX_BYTES {
        return None;
    }
    let bytes = std::fs::read(file).ok()?;
    let (note, _) = crate::note::parse("x.md", &bytes);
    Some(note.headings)
}

/// The heading as words: case and runs of spaces aside (Obsidian finds `#the  Fix`).
fn words(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The heading as a web page's anchor spells it (`#the-fix` for "The fix!"), which some
/// editors write in links.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else if (c == ' ' || c == '-') && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_is_found_as_written_without_case_or_as_an_anchor() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lore")).unwrap();
        std::fs::write(
            dir.path().join("lore/x.md"),
            "---\ntitle: X\n---\n# X\n\n## The fix!\n\ntext\n\n```\n# not a heading\n```\n\nSetup\n-----\n",
        )
        .unwrap();
        let mut h = Headings::new(dir.path());
        for found in [
            "The fix!",
            "the  FIX!",
            "the-fix",
            "Setup",
            "X",
            "Setup#The fix!",
            "^block1",
        ] {
            assert_eq!(h.missing("lore/x.md", found), None, "{found}");
        }
        assert_eq!(
            h.missing("lore/x.md", "No such heading"),
            Some("lore/x.md has no heading \"No such heading\"".to_string())
        );
        // Emoji alone match only as written.
        std::fs::write(dir.path().join("lore/e.md"), "# E\n\n## 🚀\n").unwrap();
        assert_eq!(h.missing("lore/e.md", "🚀"), None);
        assert!(h.missing("lore/e.md", "🎉").is_some());
        // A heading inside a code fence is code.
        assert!(h.missing("lore/x.md", "not a heading").is_some());
        // What cannot be read gets no verdict.
        assert_eq!(h.missing("lore/gone.md", "Anything"), None);
    }
}
