//! Verify once, not per call: a record, next to the model's files, of each file's identity
//! when it last hashed to its pin. Loading re-hashes a file only when its identity changed;
//! `brain model verify` always re-hashes.
//!
//! Why this keeps the guarantee: any write to a file, or a file put in its place, changes
//! its inode or its ctime, and the ctime cannot be set back from user space (utimes sets
//! mtime and atime only; the kernel stamps ctime on every change, including the utimes call
//! itself). So a file whose size, device, inode, mtime and ctime are all as recorded holds
//! the bytes that were hashed. The record itself is not trusted for anything else: an entry
//! vouches only for the pinned hash it was written with, so editing the record cannot make
//! a wrong file pass, only cost a re-hash. Identity comes from the open descriptor, so it
//! describes the very bytes that are loaded.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The record's file name, inside the model's install folder.
const FILE: &str = ".verified.json";

/// What identifies one file's contents without reading them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    size: u64,
    dev: u64,
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Identity {
    /// Whether the file this identity was taken from (still open, now `now`) was written
    /// to since: its size, mtime or ctime moved. A file that was unlinked (a new install
    /// renamed over it) has its ctime moved by the unlink alone, and can no longer be opened
    /// to be written: then only its size and mtime count.
    pub fn written_since(&self, now: &std::fs::Metadata) -> bool {
        self.resized_or_touched(now) || self.ctime_moved(now)
    }

    /// Whether the size or mtime moved: the bytes were changed (or the mtime set, which
    /// a writer that wants to hide does only after changing them).
    pub fn resized_or_touched(&self, now: &std::fs::Metadata) -> bool {
        Identity::of(now).is_some_and(|n| self.size != n.size || self.mtime_ns != n.mtime_ns)
    }

    /// Whether only the ctime tells of a change since (a write with the mtime put back, or
    /// just a chmod, a chown, a hard link), on a file that is still linked.
    fn ctime_moved(&self, now: &std::fs::Metadata) -> bool {
        let Some(now_id) = Identity::of(now) else {
            return false;
        };
        #[cfg(unix)]
        let unlinked = std::os::unix::fs::MetadataExt::nlink(now) == 0;
        #[cfg(not(unix))]
        let unlinked = false;
        !unlinked && self.ctime_ns != now_id.ctime_ns
    }

    /// The identity in `meta`; `None` where the platform has no inode or ctime.
    pub fn of(meta: &std::fs::Metadata) -> Option<Identity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
            Some(Identity {
                size: meta.len(),
                dev: meta.dev(),
                ino: meta.ino(),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    identity: Identity,
    sha256: String,
}

/// The verified files of one model, by hub-relative path.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Stamps {
    files: BTreeMap<String, Entry>,
}

impl Stamps {
    /// The record in `dir`, or an empty one (missing or unreadable: everything is hashed).
    pub fn load(dir: &Path) -> Stamps {
        // At most 1 MB, and a pipe in its place refused, not waited on (a search hung on one).
        crate::file::read_file(&dir.join(FILE), 1 << 20)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Whether the record holds `path` at all (a load verified it once).
    pub fn holds(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Whether `path`, now `identity`, was recorded as hashing to `sha256` (the pin).
    pub fn vouches(&self, path: &str, identity: &Identity, sha256: &str) -> bool {
        self.files
            .get(path)
            .is_some_and(|e| &e.identity == identity && e.sha256 == sha256)
    }

    /// Records that `path`, as `identity`, hashed to `sha256`.
    pub fn record(&mut self, path: &str, identity: Identity, sha256: &str) {
        self.files.insert(
            path.to_string(),
            Entry {
                identity,
                sha256: sha256.to_string(),
            },
        );
    }

    /// Writes the record into `dir` atomically (a temporary file, then a rename).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        // Two loads racing each write their own temporary file; the last rename wins with a
        // complete record. Earlier versions named theirs `FILE.PID.tmp`.
        let legacy = format!("{FILE}.");
        crate::file::sweep_stale_temps(dir, |n| {
            n.strip_prefix(&legacy)
                .and_then(|rest| rest.strip_suffix(".tmp"))
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        });
        crate::file::replace(&dir.join(FILE), &json, 0o644)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_in_the_records_place_is_no_record_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        crate::file::mkfifo(&dir.path().join(FILE));
        assert!(Stamps::load(dir.path()).files.is_empty());
    }

    #[test]
    fn a_rewritten_file_is_no_longer_vouched_for() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("w.bin");
        std::fs::write(&f, b"weights").unwrap();
        let id = Identity::of(&std::fs::metadata(&f).unwrap()).unwrap();
        let mut s = Stamps::default();
        s.record("w.bin", id.clone(), "abc");
        s.save(dir.path()).unwrap();
        let s = Stamps::load(dir.path());
        assert!(s.vouches("w.bin", &id, "abc"));
        assert!(
            !s.vouches("w.bin", &id, "other pin"),
            "an entry vouches for its pin only"
        );
        // Same size, same bytes count, mtime put back: the ctime still moves.
        let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(&f, b"WEIGHTS").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let now = Identity::of(&std::fs::metadata(&f).unwrap()).unwrap();
        assert_eq!(now.mtime_ns, id.mtime_ns, "mtime was set back");
        assert!(!s.vouches("w.bin", &now, "abc"));
        assert!(!Stamps::load(&dir.path().join("nowhere")).vouches("w.bin", &id, "abc"));
    }
}
