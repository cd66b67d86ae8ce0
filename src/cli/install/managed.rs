//! Files brain writes into other programs' folders (the Claude Code skill, the autostart
//! unit) and must not clobber once a person has edited them. What brain last wrote to each
//! is recorded by hash in `install.json` in the data dir, so a file can be told apart as
//! ours-and-current, ours-but-outdated (an older brain wrote it: safe to update) or edited.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How a managed file on disk compares with what this brain would write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not there.
    Missing,
    /// Exactly what this brain ships.
    Current,
    /// What brain wrote earlier, no longer what this brain ships (an upgrade, or the binary
    /// moved): brain may replace it.
    Outdated,
    /// Changed by someone since brain wrote it (or never written by brain): replaced only
    /// with `--force`.
    Edited,
}

/// The hashes of what brain last wrote, by absolute path.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    files: BTreeMap<String, String>,
    changed: bool,
}

#[derive(Default, Serialize, Deserialize)]
struct OnDisk {
    #[serde(default)]
    files: BTreeMap<String, String>,
}

impl Record {
    /// Reads the record at `path`. A missing or unreadable record is an empty one: every
    /// file that differs then counts as edited, which errs on the side of keeping it.
    pub fn load(path: PathBuf) -> Record {
        let files = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<OnDisk>(&bytes).ok())
            .map(|d| d.files)
            .unwrap_or_default();
        Record {
            path,
            files,
            changed: false,
        }
    }

    /// Where `file` stands against `desired`.
    pub fn state(&self, file: &Path, desired: &str) -> Result<State> {
        self.state_among(file, desired, &[])
    }

    /// [`Record::state`], where a file holding any of `shipped` (the SHA-256 of what earlier
    /// brains wrote there) is ours too, recorded or not: a record lives in one data dir,
    /// and a file such as the skill is shared by every brain.
    pub fn state_among(&self, file: &Path, desired: &str, shipped: &[&str]) -> Result<State> {
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::Missing),
            Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
        };
        if bytes == desired.as_bytes() {
            return Ok(State::Current);
        }
        let h = hash(&bytes);
        let ours =
            self.files.get(&key(file)).is_some_and(|r| *r == h) || shipped.contains(&h.as_str());
        Ok(if ours { State::Outdated } else { State::Edited })
    }

    /// Notes that brain wrote `content` to `file`.
    pub fn remember(&mut self, file: &Path, content: &str) {
        let h = hash(content.as_bytes());
        if self.files.get(&key(file)) != Some(&h) {
            self.files.insert(key(file), h);
            self.changed = true;
        }
    }

    /// Forgets `file` (it was removed).
    pub fn forget(&mut self, file: &Path) {
        self.changed |= self.files.remove(&key(file)).is_some();
    }

    /// Writes the record back if it changed; removes it once it records nothing.
    pub fn save(&self) -> Result<()> {
        if !self.changed {
            return Ok(());
        }
        if self.files.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("removing {}", self.path.display()))
                }
                _ => Ok(()),
            };
        }
        let json = serde_json::to_string_pretty(&OnDisk {
            files: self.files.clone(),
        })?;
        write(&self.path, &json)
    }
}

/// [`write`], refused when `path` is a link into the brain folder `notes`: a SKILL.md
/// linked to a note had the note replaced by the skill (`install --force`). brain writes
/// into the notes folder only what it is asked to.
pub fn write_outside(path: &Path, content: &str, notes: &Path) -> Result<()> {
    if let (Ok(_), Ok(real), Ok(notes)) = (
        std::fs::read_link(path),
        std::fs::canonicalize(path),
        std::fs::canonicalize(notes),
    ) {
        if real.starts_with(&notes) {
            anyhow::bail!(
                "{} is a link to {}, in the brain folder, where brain does not write it: remove the link, then run this again",
                path.display(),
                real.display()
            );
        }
    }
    write(path, content)
}

/// Writes `content` to `path` whole or not at all (a temp file renamed over it), creating
/// the folders above it.
pub fn write(path: &Path, content: &str) -> Result<()> {
    // A symlinked file (a skill or unit kept in a dotfiles repo) is replaced where it
    // lives: a rename onto the link would put a plain file in its place.
    let resolved;
    let path = match std::fs::read_link(path) {
        Ok(target) => {
            resolved = path.parent().unwrap_or(Path::new("")).join(target);
            resolved.as_path()
        }
        Err(_) => path,
    };
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    brain::file::replace(path, content.as_bytes(), 0o666)
        .with_context(|| format!("writing {}", path.display()))
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_written_through_only_to_a_file_outside_the_brain() {
        let dir = tempfile::tempdir().unwrap();
        let (note, kept) = (
            dir.path().join("retry.md"),
            dir.path().join("dotfiles/SKILL.md"),
        );
        std::fs::write(&note, "my note").unwrap();
        std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
        std::fs::write(&kept, "old skill").unwrap();
        let skill = dir.path().join("skills/brain/SKILL.md");
        std::fs::create_dir_all(skill.parent().unwrap()).unwrap();

        std::os::unix::fs::symlink(&note, &skill).unwrap();
        let err = write_outside(&skill, "the skill", dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("in the brain folder, where brain does not write"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&note).unwrap(), "my note");

        std::fs::remove_file(&skill).unwrap();
        std::os::unix::fs::symlink(&kept, &skill).unwrap();
        let notes = dir.path().join("notes");
        std::fs::create_dir(&notes).unwrap();
        write_outside(&skill, "the skill", &notes).unwrap();
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "the skill");
        assert!(skill.symlink_metadata().unwrap().file_type().is_symlink());
    }
    #[test]
    fn tells_current_outdated_and_edited_apart() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("skills/brain/SKILL.md");
        let mut record = Record::load(dir.path().join("install.json"));
        assert_eq!(record.state(&file, "v2").unwrap(), State::Missing);

        write(&file, "v1").unwrap();
        assert_eq!(
            record.state(&file, "v2").unwrap(),
            State::Edited,
            "not written by brain"
        );
        record.remember(&file, "v1");
        record.save().unwrap();

        let record = Record::load(dir.path().join("install.json"));
        assert_eq!(record.state(&file, "v1").unwrap(), State::Current);
        assert_eq!(record.state(&file, "v2").unwrap(), State::Outdated);
        std::fs::write(&file, "v1 with my edits").unwrap();
        assert_eq!(record.state(&file, "v2").unwrap(), State::Edited);

        // Another data dir's record (another brain) knows nothing of it: what an earlier
        // brain shipped is still ours, by its hash; edits are still edits.
        let elsewhere = Record::load(dir.path().join("other/install.json"));
        std::fs::write(&file, "v1").unwrap();
        let v1 = hash(b"v1");
        assert_eq!(elsewhere.state(&file, "v2").unwrap(), State::Edited);
        assert_eq!(
            elsewhere.state_among(&file, "v2", &[&v1]).unwrap(),
            State::Outdated
        );
        std::fs::write(&file, "v1 with my edits").unwrap();
        assert_eq!(
            elsewhere.state_among(&file, "v2", &[&v1]).unwrap(),
            State::Edited
        );
    }

    #[test]
    fn empty_record_is_removed_and_garbage_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("install.json");
        let file = dir.path().join("f");
        let mut record = Record::load(path.clone());
        record.remember(&file, "x");
        record.save().unwrap();
        assert!(path.is_file());
        record.forget(&file);
        record.save().unwrap();
        assert!(!path.exists());

        std::fs::write(&path, "{not json").unwrap();
        std::fs::write(&file, "x").unwrap();
        assert_eq!(Record::load(path).state(&file, "y").unwrap(), State::Edited);
    }
}
