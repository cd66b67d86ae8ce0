//! Writing a new entry the way `brain new` and the panel's capture (Cmd+N) both do: plan
//! it from the type's schema, ask the brain whether it already holds it (the similar-notes
//! check, through the one [`Answerer`]), and write it only when it does not.

use super::{Answerer, ServiceError};
use crate::kb::new::{self, NewEntry};
use crate::kb::Schemas;
use crate::similar::{SimilarHit, SimilarRequest, Source, Verdict};

/// How alike (0..1, the similar-notes title measure: the words both titles hold over the
/// words either holds) a note's title must be to the new entry's to stop the write. The draft is only a title, too short for the word overlap
/// that tells a duplicate from a related note, so the titles decide among the notes about
/// the same thing (related or duplicate): "Retries need jitter" against "Retries need
/// jitter, or they become a thundering herd" is 0.5; unrelated titles sharing a word,
/// ~0.1; entries of a series ("Standup 2026-12-03", "Q3 review"), 0.
pub const TITLE_ALIKE: f64 = 0.5;

/// Title likeness of the same words (in any order, case and plurals aside): such a note of
/// the type stops the write even when the title alone is too little text to be related to
/// it.
const SAME_TITLE: f64 = 1.0;

/// Notes the title is compared with: enough that an entry of the same type is among them
/// when other types hold notes of that title too.
const CANDIDATES: usize = 10;

/// Related notes listed to link from a new entry.
const RELATED_LISTED: usize = 3;

/// Why no sync finds a written entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unseen {
    /// Written where the index does not look (a folder excluded in the config, by
    /// `.gitignore`, `.ignore` or `.brainignore`): brain will not find it.
    Excluded,
    /// Written into a folder every sync holds back until it is fixed (an ignore file brain
    /// cannot trust, a folder it may not enter): the walk's line saying why.
    HeldBack(String),
}

/// What a capture did.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The entry, written or not.
    pub entry: NewEntry,
    /// True when the file was written.
    pub written: bool,
    /// Notes the brain already has under an alike title (the write stops on them unless
    /// forced).
    pub duplicates: Vec<SimilarHit>,
    /// Notes about the same thing, to link from the new entry.
    pub related: Vec<SimilarHit>,
    /// Why no sync will find the written entry, if none will.
    pub unseen: Option<Unseen>,
    /// Why the check for duplicates was of the index as it was (it could not be synced: a
    /// read-only data dir): a note written since may be one it did not see.
    pub behind: Option<String>,
    /// Why the written entry is not in the index yet (the sync after the write failed: a
    /// full data disk): found once a later sync takes it, and a `new` of the same title
    /// before then is not stopped.
    pub unsynced: Option<String>,
}

/// Whether the brain's note `hit` (compared with the new entry's title) stops an entry of
/// type `kind`. Only an entry of the same type does: `terraform/variables.md` is not a
/// second `jekyll/liquid/variables.md`, however alike the titles (it is listed to link).
/// The same title words stop it whatever the verdict: a title is too short a draft to reach
/// even "related" against a long note where its word is common (notes-mix's
/// `shell/commands/export.md`, "# export", was called nothing like "Export", and a second
/// one was written).
fn stops_the_write(hit: &SimilarHit, kind: &str) -> bool {
    let title = hit.evidence.as_ref().map_or(0.0, |e| e.title);
    let same_type = hit
        .path
        .strip_prefix(kind)
        .is_some_and(|rest| rest.starts_with('/'));
    same_type && (title >= SAME_TITLE || (hit.verdict != Verdict::New && title >= TITLE_ALIKE))
}

/// Plans the entry `title` of type `kind` (a folder entry with `folder`), checks it against
/// the brain, and writes it unless the brain has it already (or `force`). Bad input (an
/// unknown type, an empty slug, a taken slug, a broken schema) is an error before anything
/// is asked or written.
pub fn capture(
    brain: &Answerer,
    kind: &str,
    title: &str,
    folder: bool,
    force: bool,
) -> Result<Captured, ServiceError> {
    let root = &brain.config().root;
    crate::index::walk::check_root(root)?;
    let schemas = Schemas::load(root)?;
    let planned = new::plan(root, &schemas, kind, title, folder, crate::date::today())?;
    let similar = brain.similar(&SimilarRequest {
        source: Source::Text(format!("# {}\n", planned.entry.title)),
        top: CANDIDATES,
        explain: true,
        sync: true,
    })?;
    // Only that notice: the others (no model, an empty brain) do not make the check wrong.
    let behind = similar
        .notice
        .as_deref()
        .filter(|n| n.starts_with(crate::engine::BEHIND))
        .map(|n| n.split("; ").next().unwrap_or(n).to_string());
    let (duplicates, others): (Vec<SimilarHit>, Vec<SimilarHit>) = similar
        .results
        .into_iter()
        .partition(|h| stops_the_write(h, &planned.entry.kind));
    let related = others
        .into_iter()
        .filter(|h| h.verdict != Verdict::New)
        .take(RELATED_LISTED)
        .collect();
    // Another `brain new` of the same title wrote it while this one checked (its entry is
    // then the duplicate found): the same refusal as when it came first, not "pass --force
    // to write it anyway", which could only fail on the file that is now there.
    if let Some(taken) = new::taken_since(&planned) {
        return Err(new::taken_error(&taken).into());
    }
    let written = duplicates.is_empty() || force;
    let mut unseen = None;
    let mut unsynced = None;
    if written {
        new::write(&planned)?;
        // The walk's own rules, on the one path: whether any sync will ever see it.
        let scope = crate::index::walk::Scope::new([planned.entry.path.as_str()]);
        // A folder held back (an ignore file brain cannot trust) is not an exclusion: the
        // entry is found once it is fixed, and the walk's line says what to fix (only
        // `brain index` printed it, and a search after the write blamed a typo).
        unseen = match crate::index::walk::walk_scoped(brain.config(), &scope) {
            Ok(w) if w.files.iter().any(|f| f.rel == planned.entry.path) => None,
            Ok(w) => Some(
                w.why_held_back(&planned.entry.path)
                    .map_or(Unseen::Excluded, Unseen::HeldBack),
            ),
            Err(_) => None,
        };
        // Written is what was asked; a brain that cannot sync the entry now still finds it
        // when its watcher or the next sync gets to it.
        if let Err(e) = brain.saved(&planned.entry.path) {
            tracing::debug!(error = %e, "the new entry waits for the next sync");
            unsynced = Some(format!(
                "the entry is written, but the index could not take it now ({e}); \
                 searches find it once a sync can"
            ));
        }
    }
    Ok(Captured {
        entry: planned.entry,
        written,
        duplicates,
        related,
        unseen,
        behind,
        unsynced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similar::PairEvidence;

    fn hit(path: &str, verdict: Verdict, title: f64) -> SimilarHit {
        SimilarHit {
            path: path.into(),
            abs_path: String::new(),
            title: String::new(),
            kind: String::new(),
            score: 0.0,
            likeness: None,
            verdict,
            reason: String::new(),
            line: 1,
            evidence: Some(PairEvidence {
                title,
                ..PairEvidence::default()
            }),
        }
    }

    #[test]
    fn the_same_title_of_the_same_type_stops_a_new_entry_whatever_the_verdict() {
        // A long note whose title is the entry's: meaning calls a one-line draft new.
        assert!(stops_the_write(
            &hit("shell/commands/export.md", Verdict::New, 1.0),
            "shell"
        ));
        // Alike titles stop it only when the notes are about the same thing.
        assert!(stops_the_write(
            &hit("lore/a.md", Verdict::Related, 0.5),
            "lore"
        ));
        assert!(!stops_the_write(
            &hit("lore/a.md", Verdict::New, 0.5),
            "lore"
        ));
        // Another type's note never does, nor a folder that only begins with the type.
        assert!(!stops_the_write(
            &hit("idea/a.md", Verdict::Duplicate, 1.0),
            "lore"
        ));
        assert!(!stops_the_write(
            &hit("lore-old/a.md", Verdict::Duplicate, 1.0),
            "lore"
        ));
    }
}
