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

/// Notes the title is compared with: enough that an entry of the same type is among them
/// when other types hold notes of that title too.
const CANDIDATES: usize = 10;

/// Related notes listed to link from a new entry.
const RELATED_LISTED: usize = 3;

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
    /// True when the entry was written where the index does not look (a folder excluded in
    /// the config, by `.gitignore`, `.ignore` or `.brainignore`): brain will not find it.
    pub excluded: bool,
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
    // Only an entry of the same type stops the write: `terraform/variables.md` is not a
    // second `jekyll/liquid/variables.md`, however alike the titles (it is listed to link).
    let folder = format!("{}/", planned.entry.kind);
    let alike = |h: &SimilarHit| {
        h.verdict != Verdict::New
            && h.path.starts_with(&folder)
            && h.evidence.as_ref().is_some_and(|e| e.title >= TITLE_ALIKE)
    };
    let (duplicates, others): (Vec<SimilarHit>, Vec<SimilarHit>) =
        similar.results.into_iter().partition(alike);
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
    let mut excluded = false;
    if written {
        new::write(&planned)?;
        // The walk's own rules, on the one path: whether any sync will ever see it.
        let scope = crate::index::walk::Scope::new([planned.entry.path.as_str()]);
        // A folder held back (an ignore file brain cannot trust) is not an exclusion: the
        // walk's warning says why, and the entry is found once it is fixed.
        excluded = crate::index::walk::walk_scoped(brain.config(), &scope).is_ok_and(|w| {
            w.files.iter().all(|f| f.rel != planned.entry.path)
                && !crate::index::walk::under_any(&w.unreadable, &planned.entry.path)
        });
        // Written is what was asked; a brain that cannot sync the entry now still finds it
        // when its watcher or the next sync gets to it.
        if let Err(e) = brain.saved(&planned.entry.path) {
            tracing::debug!(error = %e, "the new entry waits for the next sync");
        }
    }
    Ok(Captured {
        entry: planned.entry,
        written,
        duplicates,
        related,
        excluded,
    })
}
