//! The knowledge base as engine operations: the audit, INDEX.md as generated, the links of
//! a note. Each reads the schemas from the folder and every entry from the index in one
//! read transaction; the work itself is in [`crate::kb`].

use super::Engine;
use crate::error::{Error, Result};
use crate::kb::index_md::{self, IndexFile, INDEX_FILE};
use crate::kb::{self, CheckReport, Entry, LinksReport, Schemas};

/// What the knowledge-base operations read: the schemas, the index's entries, why the
/// index could not be synced first (if so), and the files the sync skipped.
struct KbState {
    schemas: Schemas,
    entries: Vec<Entry>,
    notice: Option<String>,
    skipped: Vec<String>,
}

/// How [`Engine::kb_state`] syncs first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KbSync {
    /// Not at all.
    No,
    /// As a search does (the change journal where one can be trusted); an index that
    /// cannot be written is read as it is, with a notice.
    Recent,
    /// A whole walk, so that every skipped file is met and said; an index that cannot be
    /// written is read as it is, with a notice (`check`, an audit).
    Walk,
    /// A whole walk; an index that cannot be written fails (`index-md`, whose answer
    /// becomes files).
    WalkOrFail,
}

impl Engine {
    /// The schemas and the index's entries, synced first as `how` says.
    fn kb_state(&self, how: KbSync) -> Result<KbState> {
        let (mut notice, mut skipped) = (None, Vec::new());
        match how {
            KbSync::No => crate::index::walk::check_root(&self.config.root)?,
            KbSync::Recent => {
                notice = self.sync_or_say_why()?.as_deref().map(super::behind_notice);
            }
            KbSync::Walk => match self.sync() {
                Ok(report) => skipped = report.skipped,
                Err(e) if e.is_unwritable() => {
                    notice = Some(super::behind_notice(&e.to_string()));
                }
                Err(e) => return Err(e),
            },
            KbSync::WalkOrFail => skipped = self.sync()?.skipped,
        }
        Ok(KbState {
            schemas: Schemas::load(&self.config.root)?,
            entries: self.index.read()?.kb_entries()?,
            notice,
            skipped,
        })
    }

    /// `brain check`: what is broken or stale, and the files the index skips. Reads no
    /// note file but those a problem names.
    pub fn check(&self, sync: bool) -> Result<CheckReport> {
        let state = self.kb_state(if sync { KbSync::Walk } else { KbSync::No })?;
        let files = self.index_files_of(&state.schemas, &state.entries, &state.skipped);
        Ok(CheckReport {
            notice: state.notice,
            ..kb::check::check(
                &self.config.root,
                &state.schemas,
                &state.entries,
                &files,
                &state.skipped,
                crate::date::today(),
            )
        })
    }

    /// Each typed folder's INDEX.md as `brain index-md --write` would write it, with the
    /// file as it is now.
    pub fn index_files(&self, sync: bool) -> Result<Vec<IndexFile>> {
        let state = self.kb_state(if sync { KbSync::WalkOrFail } else { KbSync::No })?;
        Ok(self.index_files_of(&state.schemas, &state.entries, &state.skipped))
    }

    fn index_files_of(
        &self,
        schemas: &Schemas,
        entries: &[Entry],
        skipped: &[String],
    ) -> Vec<IndexFile> {
        schemas
            .types
            .values()
            .map(|schema| {
                let path = format!("{}/{INDEX_FILE}", schema.kind);
                let folder = format!("{}/", schema.kind);
                IndexFile {
                    generated: index_md::render(schema, entries),
                    // Not a file (a pipe would block) or unreadable: as if missing, so
                    // `check` says it is out of date and `--write` replaces it.
                    current: kb::read_in_brain(
                        &self.config.root,
                        &self.config.root.join(&path),
                        self.config.max_file_bytes,
                    )
                    .ok(),
                    entries: index_md::count(&schema.kind, entries),
                    skipped: skipped
                        .iter()
                        .filter(|w| w.starts_with(&folder))
                        .cloned()
                        .collect(),
                    path,
                }
            })
            .collect()
    }

    /// The links from and to the note at `path` (relative to the root).
    pub fn links(&self, path: &str, sync: bool) -> Result<LinksReport> {
        let path = path.trim_start_matches("./");
        // Said before any sync: "  is not a note" would read as a garbled message.
        crate::passage::check_path(path)?;
        let KbState {
            entries, notice, ..
        } = self.kb_state(if sync { KbSync::Recent } else { KbSync::No })?;
        let report =
            kb::links_of(&self.config.root, &entries, path).ok_or_else(|| self.not_a_note(path))?;
        Ok(LinksReport { notice, ..report })
    }

    /// Why `path`, which the index does not hold, is no note: it names nothing (or a loop,
    /// or a file outside the brain), or a file the index skips, said as `get` says it ("a
    /// path relative to the brain folder" sent the person looking for a typo in a path
    /// that was right).
    pub(crate) fn not_a_note(&self, path: &str) -> Error {
        let real = match crate::passage::resolve(&self.config.root, path) {
            Ok(real) => real,
            Err(e) => return e,
        };
        let max = self.config.max_file_bytes;
        if let Some(size) = std::fs::metadata(&real)
            .ok()
            .map(|m| m.len())
            .filter(|&n| n > max)
        {
            return Error::InvalidInput(format!(
                "{path} is {:.2} MiB, over the {:.0} MiB limit (max_file_mb), so it is not indexed: raise max_file_mb to index it",
                crate::config::megabytes(size),
                crate::config::megabytes(max)
            ));
        }
        let head = crate::file::read_file(&real, 8192).unwrap_or_default();
        match crate::note::looks_binary(&head) {
            true => Error::InvalidInput(format!(
                "{path}: not a note, and the index skips it: a {}",
                crate::note::not_text_why(&head)
            )),
            false => Error::InvalidInput(format!(
                "{path} is a file the index does not hold: it is excluded (exclude, an ignore file, or a type's INDEX.md or SCHEMA.md), or not synced yet (brain index)"
            )),
        }
    }
}
