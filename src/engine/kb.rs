//! The knowledge base as engine operations: the audit, INDEX.md as generated, the links of
//! a note. Each reads the schemas from the folder and every entry from the index in one
//! read transaction; the work itself is in [`crate::kb`].

use super::Engine;
use crate::error::{Error, Result};
use crate::kb::index_md::{self, IndexFile, INDEX_FILE};
use crate::kb::{self, CheckReport, Entry, LinksReport, Schemas};

impl Engine {
    /// The schemas and every entry, synced with the folder first when `sync`.
    fn kb_state(&self, sync: bool) -> Result<(Schemas, Vec<Entry>)> {
        if sync {
            self.sync()?;
        } else {
            crate::index::walk::check_root(&self.config.root)?;
        }
        let schemas = Schemas::load(&self.config.root)?;
        let entries = self.index.read()?.kb_entries()?;
        Ok((schemas, entries))
    }

    /// `brain check`: what is broken or stale. Reads no note file.
    pub fn check(&self, sync: bool) -> Result<CheckReport> {
        let (schemas, entries) = self.kb_state(sync)?;
        let files = self.index_files_of(&schemas, &entries);
        Ok(kb::check::check(
            &self.config.root,
            &schemas,
            &entries,
            &files,
            crate::date::today(),
        ))
    }

    /// Each typed folder's INDEX.md as `brain index-md --write` would write it, with the
    /// file as it is now.
    pub fn index_files(&self, sync: bool) -> Result<Vec<IndexFile>> {
        let (schemas, entries) = self.kb_state(sync)?;
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
                    current: std::fs::read_to_string(self.config.root.join(&path)).ok(),
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
        if path.trim().is_empty() {
            return Err(Error::InvalidInput(
                "the note path is empty: give one relative to the brain folder, as search \
                 results give it (lore/x.md)"
                    .into(),
            ));
        }
        crate::passage::check_length(path)?;
        let (_, entries) = self.kb_state(sync)?;
        kb::links_of(&entries, path).ok_or_else(|| {
            Error::InvalidInput(format!(
                "{path} is not a note of the index (a path relative to the brain folder, as search results give it)"
            ))
        })
    }
}
