//! What Cmd/Ctrl+C and Cmd/Ctrl+Shift+C put on the clipboard for a note.

use serde::{Deserialize, Serialize};

/// Which text to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyKind {
    /// The absolute path, for a terminal or another app.
    Path,
    /// An Obsidian-style `[[type/slug]]` link, for another note.
    Wikilink,
}

/// The text to copy for a note at `rel` (relative to the brain root) and `abs` (absolute).
pub fn text(kind: CopyKind, rel: &str, abs: &str) -> String {
    match kind {
        CopyKind::Path => abs.to_string(),
        CopyKind::Wikilink => wikilink(rel),
    }
}

/// `lore/flag-cleanup.md` -> `[[lore/flag-cleanup]]`: the path inside the brain without
/// `.md`, which is `type/slug` for a note in its type folder and what Obsidian resolves.
pub fn wikilink(rel: &str) -> String {
    let rel = rel.replace('\\', "/");
    let rel = rel.trim_start_matches("./");
    let stem = rel.strip_suffix(".md").unwrap_or(rel);
    format!("[[{stem}]]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wikilinks_drop_the_extension() {
        assert_eq!(wikilink("lore/flag-cleanup.md"), "[[lore/flag-cleanup]]");
        assert_eq!(wikilink("./idea/x.y.md"), "[[idea/x.y]]");
        assert_eq!(wikilink("top.md"), "[[top]]");
        assert_eq!(wikilink(r"research-link\rrf.md"), "[[research-link/rrf]]");
    }

    #[test]
    fn copies_path_or_link() {
        assert_eq!(
            text(CopyKind::Path, "lore/a.md", "/b/lore/a.md"),
            "/b/lore/a.md"
        );
        assert_eq!(
            text(CopyKind::Wikilink, "lore/a.md", "/b/lore/a.md"),
            "[[lore/a]]"
        );
    }
}
