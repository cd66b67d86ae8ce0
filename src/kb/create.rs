//! A new brain: its folder and the default type folders, each with its `SCHEMA.md`. What
//! `brain install` and the app's first run make.

use std::path::{Path, PathBuf};

use crate::config::DEFAULT_TYPE_FOLDERS;
use crate::error::{Error, Result};

/// Creates `root` and its type folders ([`DEFAULT_TYPE_FOLDERS`]), each with its default
/// `SCHEMA.md`; a type folder that holds anything is kept as it is (an empty one is given
/// its schema). Returns the folders it created. On failure (a full disk) the folders it
/// created are removed again: a brain made halfway, with an empty `lore/` and no schema,
/// looked like the user's own to every later install, which then never finished it.
pub fn create_brain(root: &Path) -> Result<Vec<PathBuf>> {
    let mut created = Vec::new();
    match make(root, &mut created) {
        Ok(()) => Ok(created),
        Err(e) => {
            // Each only if still empty (`remove_dir`): another process may be filling it.
            for dir in created.iter().rev() {
                let _ = std::fs::remove_dir(dir);
            }
            Err(e)
        }
    }
}

fn make(root: &Path, created: &mut Vec<PathBuf>) -> Result<()> {
    if !root.is_dir() {
        std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        created.push(root.to_path_buf());
    }
    for kind in DEFAULT_TYPE_FOLDERS {
        let dir = root.join(kind);
        if dir.is_dir() {
            if !is_empty(&dir) {
                continue;
            }
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            created.push(dir.clone());
        }
        if let Some(schema) = super::schema::default_for(kind) {
            let file = dir.join(super::schema::SCHEMA_FILE);
            match super::write_atomic(&file, schema, super::WriteMode::CreateNew) {
                // Another process making the brain at the same moment (the app's first
                // run and a `brain new`) wrote it first: the same text.
                Err(Error::Io { cause, .. })
                    if cause.kind() == std::io::ErrorKind::AlreadyExists => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// Whether `dir` holds nothing at all; an unreadable folder holds something.
fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// The default type folders [`create_brain`] would still make in `root` (missing, or
/// empty): none where `root` holds anything a person made ([`is_blank`]), which is theirs
/// to shape. A folder made by hand (`mkdir ~/.brain`, an empty clone) lacks them all.
pub fn unfinished(root: &Path) -> Vec<&'static str> {
    if !is_blank(root) {
        return Vec::new();
    }
    DEFAULT_TYPE_FOLDERS
        .iter()
        .copied()
        .filter(|kind| {
            let dir = root.join(kind);
            !dir.is_dir() || is_empty(&dir)
        })
        .collect()
}

/// Whether `root` holds nothing a person made: hidden entries only (`.git`, `.DS_Store`)
/// and default type folders as [`create_brain`] makes them, or emptier (one it could not
/// finish). Such a folder is made into a brain as a missing one is; an unreadable folder
/// holds something, so it is never written into.
fn is_blank(root: &Path) -> bool {
    let untouched = |dir: &Path, kind: &str| {
        let schema = super::schema::default_for(kind);
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.into_iter().all(|e| {
                e.is_ok_and(|e| {
                    e.file_name() == super::schema::SCHEMA_FILE
                        && schema.is_some_and(|text| {
                            // A pipe named so is not waited on, nor a huge file read.
                            crate::file::read_file(&e.path(), text.len() as u64 + 1)
                                .is_ok_and(|held| held == text.as_bytes())
                        })
                })
            })
        })
    };
    std::fs::read_dir(root).is_ok_and(|entries| {
        entries.into_iter().all(|e| {
            e.is_ok_and(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with('.')
                    || (DEFAULT_TYPE_FOLDERS.contains(&&*name)
                        && e.file_type().is_ok_and(|t| t.is_dir())
                        && untouched(&e.path(), &name))
            })
        })
    })
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
