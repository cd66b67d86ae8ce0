//! A new brain: its folder and the default type folders, each with its `SCHEMA.md`. What
//! `brain install` and the app's first run make.

use std::path::{Path, PathBuf};

use crate::config::DEFAULT_TYPE_FOLDERS;
use crate::error::{Error, Result};

/// Creates `root` and its type folders ([`DEFAULT_TYPE_FOLDERS`]), each created folder
/// with its default `SCHEMA.md`; folders that exist are kept as they are. Returns the
/// folders it created.
pub fn create_brain(root: &Path) -> Result<Vec<PathBuf>> {
    let mut created = Vec::new();
    if !root.is_dir() {
        std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        created.push(root.to_path_buf());
    }
    for kind in DEFAULT_TYPE_FOLDERS {
        let dir = root.join(kind);
        if dir.is_dir() {
            continue;
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        if let Some((_, schema)) = super::schema::DEFAULTS.iter().find(|(k, _)| k == kind) {
            let file = dir.join(super::schema::SCHEMA_FILE);
            match super::write_atomic(&file, schema, super::WriteMode::CreateNew) {
                // Another process making the brain at the same moment (the app's first
                // run and a `brain new`) wrote it first: the same text.
                Err(Error::Io { cause, .. })
                    if cause.kind() == std::io::ErrorKind::AlreadyExists => {}
                other => other?,
            }
        }
        created.push(dir);
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_the_type_folders_and_keeps_existing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(".brain");
        std::fs::create_dir_all(root.join("lore")).unwrap();
        std::fs::write(root.join("lore/a.md"), "kept").unwrap();
        let created = create_brain(&root).unwrap();
        assert_eq!(
            created,
            ["idea", "job", "followup", "research-link"].map(|k| root.join(k))
        );
        // Each new type folder has its schema, and it parses; an existing one is not given one.
        let schemas = super::super::Schemas::load(&root).unwrap();
        assert!(schemas.errors.is_empty(), "{:?}", schemas.errors);
        assert_eq!(
            schemas.types.keys().collect::<Vec<_>>(),
            ["followup", "idea", "job", "research-link"]
        );
        assert_eq!(
            std::fs::read_to_string(root.join("lore/a.md")).unwrap(),
            "kept"
        );
        assert!(create_brain(&root).unwrap().is_empty());
    }

    #[test]
    fn two_processes_making_one_brain_at_once_both_succeed() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..40 {
            let root = dir.path().join(format!("brain{round}"));
            let made: Vec<_> = std::thread::scope(|s| {
                let makers: Vec<_> = (0..4).map(|_| s.spawn(|| create_brain(&root))).collect();
                makers.into_iter().map(|m| m.join().unwrap()).collect()
            });
            for m in made {
                m.unwrap();
            }
            let schemas = super::super::Schemas::load(&root).unwrap();
            assert_eq!(
                schemas.types.len(),
                DEFAULT_TYPE_FOLDERS.len(),
                "round {round}"
            );
        }
    }
}
