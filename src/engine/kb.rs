//! The knowledge base as engine operations: the audit, INDEX.md as generated, the links of
//! a note. Each reads the schemas from the folder and every entry from the index in one
//! read transaction; the work itself is in [`crate::kb`].

use super::Engine;
use crate::error::{Error, Result};
use crate::kb::index_md::{self, IndexFile, INDEX_FILE};
use crate::kb::{self, CheckReport, Entry, LinksReport, Schemas};

impl Engine {
    /// The schemas and every entry, synced with the folder first when `sync`.
    /// The schemas and the index's entries, synced first when `sync`. With `as_it_is`, an
    /// index that cannot be written (a read-only data dir, a full disk) is read as it is,
    /// with the notice that says so, as a search does; `index-md`, whose answer becomes
    /// files, fails instead.
    fn kb_state(
        &self,
        sync: bool,
        as_it_is: bool,
    ) -> Result<(Schemas, Vec<Entry>, Option<String>)> {
        let mut notice = None;
        if sync && as_it_is {
            notice = self.sync_or_say_why()?.as_deref().map(super::behind_notice);
        } else if sync {
            self.sync()?;
        } else {
            crate::index::walk::check_root(&self.config.root)?;
        }
        let schemas = Schemas::load(&self.config.root)?;
        let entries = self.index.read()?.kb_entries()?;
        Ok((schemas, entries, notice))
    }

    /// `brain check`: what is broken or stale. Reads no note file.
    pub fn check(&self, sync: bool) -> Result<CheckReport> {
        let (schemas, entries, notice) = self.kb_state(sync, true)?;
        let files = self.index_files_of(&schemas, &entries);
        Ok(CheckReport {
            notice,
            ..kb::check::check(
                &self.config.root,
                &schemas,
                &entries,
                &files,
                crate::date::today(),
            )
        })
    }

    /// Each typed folder's INDEX.md as `brain index-md --write` would write it, with the
    /// file as it is now.
    pub fn index_files(&self, sync: bool) -> Result<Vec<IndexFile>> {
        let (schemas, entries, _) = self.kb_state(sync, false)?;
        Ok(self.index_files_of(&schemas, &entries))
    }

    fn index_files_of(&self, schemas: &Schemas, entries: &[Entry]) -> Vec<IndexFile> {
        schemas
            .types
            .values()
            .map(|schema| {
                let path = format!("{}/{INDEX_FILE}", schema.kind);
                IndexFile {
                    generated: index_md::render(schema, entries),
                    // Not a file (a pipe would block) or unreadable: as if missing, so
                    // `check` says it is out of date and `--write` replaces it.
                    current: kb::read_regular(
                        &self.config.root.join(&path),
                        self.config.max_file_bytes,
                    )
                    .ok(),
                    entries: index_md::count(&schema.kind, entries),
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
        let (_, entries, notice) = self.kb_state(sync, true)?;
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
