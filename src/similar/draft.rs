//! A draft: markdown that may never have been saved, checked and split into passages the
//! way the indexer splits notes, so that its vectors are comparable with the stored ones.

use crate::error::{Error, Result};
use crate::index::{chunk_note, Chunk};
use crate::note;

/// A draft ready to compare.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    /// Its title: frontmatter `title`, else the first `# ` heading, else its first line.
    pub title: String,
    /// Its passages, as the indexer would cut them.
    pub chunks: Vec<Chunk>,
    /// Its plain text (title included), for the rare words.
    pub text: String,
}

impl Draft {
    /// Checks and parses `bytes` (named `name`, for a note of the brain its path). A draft
    /// over `max_bytes`, binary, not UTF-8, empty, or only frontmatter is refused with a
    /// line saying so.
    pub fn parse(name: &str, bytes: &[u8], max_bytes: u64) -> Result<Draft> {
        check(bytes, max_bytes)?;
        Draft::parsed(name, bytes)
    }

    /// Parses the note of the brain at `path` (its `bytes`) as the index read it: a byte
    /// that is not UTF-8 is read as the index reads it (a replacement character, which the
    /// sync warned of), not refused as a draft's is. Only a note grown past `max_bytes`
    /// since it was indexed is refused.
    pub fn of_note(path: &str, bytes: &[u8], max_bytes: u64) -> Result<Draft> {
        if bytes.len() as u64 > max_bytes {
            return Err(Error::InvalidInput(format!(
                "{path} is over the {:.0} MiB a note may be (max_file_mb): raise max_file_mb, or compare a shorter draft",
                crate::config::megabytes(max_bytes)
            )));
        }
        Draft::parsed(path, bytes)
    }

    fn parsed(name: &str, bytes: &[u8]) -> Result<Draft> {
        let (mut parsed, _) = note::parse(name, bytes);
        let body = parsed.text.trim();
        // A title counts only when it says something: `title: ""` or a bare `# ` would
        // otherwise leave the placeholder name (`draft.md`) to be compared as its words.
        let titled = parsed
            .fields
            .get("title")
            .is_some_and(|t| !t.as_str().is_some_and(|t| t.trim().is_empty()) && !t.is_null())
            || parsed
                .headings
                .iter()
                .any(|h| h.level == 1 && !h.text.trim().is_empty());
        if body.is_empty() && !titled {
            // A note of the brain is named as itself: "the draft is empty" read as if the
            // note's text had not been passed.
            let (what, then) = match name == DRAFT_NAME {
                true => ("the draft".to_string(), "give its text, or a title"),
                false => (name.to_string(), "write some text in it first"),
            };
            let has = match parsed.fields.is_empty() {
                true => "is empty",
                false => "has only frontmatter",
            };
            return Err(Error::InvalidInput(format!(
                "{what} {has}: nothing to compare ({then})"
            )));
        }
        if !titled && name == DRAFT_NAME {
            // A pasted draft has no file name to fall back on: its first line says best what
            // it is about.
            let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            parsed.title = first
                .chars()
                .take(120)
                .collect::<String>()
                .trim()
                .to_string();
        }
        let chunks = chunk_note(&parsed);
        let text = format!("{}\n{}", parsed.title, parsed.text);
        Ok(Draft {
            title: parsed.title,
            chunks,
            text,
        })
    }
}

/// Checks that `bytes` can be a draft (at most `max_bytes`, no NUL, UTF-8) and returns
/// them as text: what a client does before sending a draft to the backend.
pub fn check(bytes: &[u8], max_bytes: u64) -> Result<&str> {
    if bytes.len() as u64 > max_bytes {
        return Err(Error::InvalidInput(format!(
            // No size: from stdin only the limit and a byte more are read.
            "the draft is over the {:.0} MiB a note may be (max_file_mb): compare a shorter draft",
            crate::config::megabytes(max_bytes)
        )));
    }
    if bytes.contains(&0) {
        return Err(Error::InvalidInput(match crate::note::is_utf16(bytes) {
            true => format!("the draft is {}", crate::note::not_text_why(bytes)),
            false => "the draft holds NUL bytes, so it is not text: give a markdown draft".into(),
        }));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        Error::InvalidInput(format!(
            "the draft is not UTF-8 text (invalid byte at offset {}): save it as UTF-8",
            e.valid_up_to()
        ))
    })
}

/// The name a draft without a file is parsed under.
pub(crate) const DRAFT_NAME: &str = "draft.md";

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 10_000_000;

    fn err(bytes: &[u8]) -> String {
        Draft::parse(DRAFT_NAME, bytes, MB).unwrap_err().to_string()
    }

    #[test]
    fn bad_drafts_are_refused_with_their_cause() {
        assert!(err(b"").contains("empty"));
        assert!(err(b"  \n\n").contains("empty"));
        assert!(err(b"---\ntags: [a]\n---\n").contains("only frontmatter"));
        // An empty title is no title: the placeholder name is never compared.
        assert!(err(b"---\ntitle: \"\"\n---\n").contains("only frontmatter"));
        assert!(err(b"---\ntitle:\n---\n").contains("only frontmatter"));
        assert!(err(b"# \n").contains("empty"));
        assert!(err(b"#\n\n  \n").contains("empty"));
        assert!(err(b"a\0b").contains("NUL"));
        assert!(err(b"caf\xe9").contains("UTF-8"));
        let big = vec![b'a'; 11];
        let e = Draft::parse(DRAFT_NAME, &big, 10).unwrap_err().to_string();
        assert!(e.contains("max_file_mb"), "{e}");
    }

    #[test]
    fn a_title_alone_is_enough_and_a_pasted_draft_is_named_by_its_first_line() {
        assert_eq!(
            Draft::parse("lore/empty.md", b"", MB)
                .unwrap_err()
                .to_string(),
            "lore/empty.md is empty: nothing to compare (write some text in it first)"
        );
        let d = Draft::parse(DRAFT_NAME, b"---\ntitle: Retries need jitter\n---\n", MB).unwrap();
        assert_eq!(d.title, "Retries need jitter");
        let d = Draft::parse(
            DRAFT_NAME,
            b"\nUse --force-with-lease\nafter a rebase\n",
            MB,
        )
        .unwrap();
        assert_eq!(d.title, "Use --force-with-lease");
        assert!(!d.chunks.is_empty());
        let d = Draft::parse(DRAFT_NAME, b"```sh\ngit push --force-with-lease\n```\n", MB).unwrap();
        assert!(d.text.contains("force-with-lease"));
    }
}
