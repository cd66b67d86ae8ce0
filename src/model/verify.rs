//! Hashing installed files against their pins.
//!
//! Loading goes through [`open_verified`]: each required file is opened once, mapped,
//! hashed, and the very same bytes are handed to the loader, so nothing can swap a file
//! between the check and the use. Files are hashed in parallel; a mapped file is hashed
//! straight from the page cache without copying.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::manifest::{FileSpec, Manifest};
use super::ModelError;

/// Below this size a file is read into memory; above it, mapped.
const MAP_THRESHOLD: u64 = 1 << 20;

/// The bytes of one verified file.
pub enum Bytes {
    /// A read-only mapping of a large file.
    Mapped(Mapping),
    /// A small file, read whole.
    Owned(Vec<u8>),
}

/// A mapped file, with what it was when it was verified.
pub struct Mapping {
    map: memmap2::Mmap,
    /// Kept open: its metadata is the mapped file's, whatever the path names later (a new
    /// install is renamed into place; the mapping still shows the old file, unchanged).
    file: File,
    path: std::path::PathBuf,
    /// The file as it was when its bytes last hashed to the pin.
    verified: std::sync::Mutex<Option<super::stamp::Identity>>,
    /// The pin.
    sha256: String,
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => &m.map,
            Bytes::Owned(v) => v,
        }
    }
}

impl Bytes {
    /// Whether the bytes are still the ones that were hashed. A private mapping shows
    /// writes made to its file after it was mapped, so a long-lived process (the backend)
    /// checks before each use: any write changes the file's ctime (which no process can set
    /// back) and a truncation its size, so the next use is refused instead of reading
    /// unhashed bytes, or faulting past a cut end. A file read whole cannot change.
    pub fn unchanged(&self, model: &str) -> Result<(), ModelError> {
        let Bytes::Mapped(m) = self else {
            return Ok(());
        };
        let now = m.file.metadata().map_err(|e| ModelError::io(&m.path, e))?;
        let changed = || ModelError::ChangedInUse {
            model: model.to_string(),
            file: m.path.clone(),
        };
        let mut verified = m.verified.lock().unwrap_or_else(|p| p.into_inner());
        match verified.as_ref() {
            Some(then) if then.resized_or_touched(&now) => Err(changed()),
            // Only the ctime moved: a write with the mtime put back, or only a chmod, a
            // chown, a hard link. The bytes say which, once; then this is the file's state.
            Some(then) if then.written_since(&now) => {
                if sha256_hex(&m.map) != m.sha256 {
                    return Err(changed());
                }
                *verified = super::stamp::Identity::of(&now);
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The required files of a model, verified, by hub-relative path.
pub struct VerifiedFiles {
    files: Vec<(String, std::sync::Arc<Bytes>)>,
}

impl VerifiedFiles {
    /// The bytes of `path` (one of the manifest's required files).
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, b)| &***b)
    }

    /// The bytes of `path`, shared: for a loader that keeps reading them after loading
    /// (the token table is read in place, see `embed::layers::TokenTable`).
    pub fn shared(&self, path: &str) -> Option<std::sync::Arc<Bytes>> {
        self.files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, b)| b.clone())
    }
}

/// The outcome of checking one file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileStatus {
    /// Hub-relative path.
    pub path: String,
    /// Whether loading needs it.
    pub required: bool,
    /// `ok`, `missing`, `wrong size`, `wrong hash`, or an I/O error.
    pub state: String,
}

/// Opens, hashes and returns the required files of `manifest` in `dir`; the first problem
/// found (missing, wrong size, wrong hash) is the error. A file whose identity (size,
/// inode, mtime, ctime) is the one recorded when it last hashed right is not hashed again
/// (see [`super::stamp`]).
pub fn open_verified(manifest: &Manifest, dir: &Path) -> Result<VerifiedFiles, ModelError> {
    let required: Vec<&FileSpec> = manifest.required_files().collect();
    let stamps = super::stamp::Stamps::load(dir);
    let opened = required
        .par_iter()
        .map(|spec| {
            let path = file_path(dir, &spec.path);
            let (bytes, identity) = open_checked_with(manifest, spec, &path)?;
            let known = identity
                .as_ref()
                .is_some_and(|id| stamps.vouches(&spec.path, id, &spec.sha256));
            if !known {
                check_hash(manifest, spec, &path, &bytes)?;
            }
            Ok((spec.path.clone(), bytes, identity, known))
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    if opened.iter().any(|(_, _, _, known)| !known) {
        let mut fresh = super::stamp::Stamps::default();
        for (path, _, identity, _) in &opened {
            if let (Some(id), Some(spec)) = (identity, required.iter().find(|s| &s.path == path)) {
                fresh.record(path, id.clone(), &spec.sha256);
            }
        }
        // Only a cache: failing to write it costs a re-hash next time, nothing else.
        if let Err(e) = fresh.save(dir) {
            tracing::debug!(error = %e, "could not record the verified model files");
        }
    }
    Ok(VerifiedFiles {
        files: opened
            .into_iter()
            .map(|(p, b, _, _)| (p, std::sync::Arc::new(b)))
            .collect(),
    })
}

/// Checks every pinned file present in `dir` (and that every required one is present),
/// returning one status per pinned file; optional files that are absent are `missing`
/// without being an error. When every required file hashed to its pin, that is recorded as
/// a load records it (see [`super::stamp`]), so `status` stops naming a file this check
/// vouched for.
pub fn check_all(manifest: &Manifest, dir: &Path) -> Vec<(FileStatus, Option<ModelError>)> {
    let checked: Vec<_> = manifest
        .files
        .par_iter()
        .map(|spec| {
            let path = file_path(dir, &spec.path);
            let mut identity = None;
            let outcome = open_checked_with(manifest, spec, &path).and_then(|(b, id)| {
                identity = id;
                check_hash(manifest, spec, &path, &b)
            });
            let (state, err) = match outcome {
                Ok(()) => ("ok".to_string(), None),
                Err(ModelError::Missing { .. }) if !spec.required => ("missing".to_string(), None),
                Err(e @ ModelError::Missing { .. }) => ("missing".to_string(), Some(e)),
                Err(e @ ModelError::WrongSize { .. }) => ("wrong size".to_string(), Some(e)),
                Err(e @ ModelError::Mismatch { .. }) => ("wrong hash".to_string(), Some(e)),
                Err(e) => (e.to_string(), Some(e)),
            };
            let vouched = identity.filter(|_| err.is_none() && spec.required);
            (
                FileStatus {
                    path: spec.path.clone(),
                    required: spec.required,
                    state,
                },
                err,
                vouched,
            )
        })
        .collect();
    let required = manifest.required_files().count();
    let vouched: Vec<_> = manifest
        .files
        .iter()
        .zip(&checked)
        .filter_map(|(spec, (_, _, id))| id.as_ref().map(|id| (spec, id)))
        .collect();
    if vouched.len() == required {
        let mut fresh = super::stamp::Stamps::default();
        for (spec, id) in vouched {
            fresh.record(&spec.path, id.clone(), &spec.sha256);
        }
        // Only a cache, as in a load; a read-only models folder keeps the old record.
        if let Err(e) = fresh.save(dir) {
            tracing::debug!(error = %e, "could not record the verified model files");
        }
    }
    checked
        .into_iter()
        .map(|(status, err, _)| (status, err))
        .collect()
}

/// Whether every required file is present with its pinned size: the cheap check, no hashing.
pub fn looks_installed(manifest: &Manifest, dir: &Path) -> bool {
    manifest.required_files().all(|spec| {
        std::fs::metadata(file_path(dir, &spec.path))
            .is_ok_and(|m| m.is_file() && m.len() == spec.size)
    })
}

/// The required files of `manifest` in `dir` written to since a load last verified them
/// (their identity no longer the one recorded, so the next load hashes them again, and
/// refuses them if they changed): a `stat` each, for `status` to say so. A file no load has
/// verified yet is not listed.
pub fn changed_since_verified(manifest: &Manifest, dir: &Path) -> Vec<String> {
    let stamps = super::stamp::Stamps::load(dir);
    manifest
        .required_files()
        .filter(|spec| {
            // A file gone since it was verified is as changed as one written to.
            let changed = match std::fs::metadata(file_path(dir, &spec.path)) {
                Err(_) => true,
                Ok(m) => super::stamp::Identity::of(&m)
                    .is_some_and(|id| !stamps.vouches(&spec.path, &id, &spec.sha256)),
            };
            stamps.holds(&spec.path) && changed
        })
        .map(|spec| spec.path.clone())
        .collect()
}

/// `dir` joined with a `/`-separated hub path.
pub fn file_path(dir: &Path, hub_path: &str) -> PathBuf {
    hub_path
        .split('/')
        .fold(dir.to_path_buf(), |p, part| p.join(part))
}

/// Lowercase hex SHA-256 of a byte slice.
pub fn sha256_hex(bytes: &[u8]) -> String {
    // Large updates let sha2 run its SHA-NI loop without per-call overhead.
    hex::encode(Sha256::digest(bytes))
}

/// Lowercase hex SHA-256 of a file, streamed in large blocks.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let (mut file, _) = crate::file::open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Opens `path` and checks it is a file of the pinned size, returning its bytes and the
/// identity of the file actually opened (from the open descriptor, so it describes the
/// bytes returned, not whatever the path names later).
fn open_checked_with(
    manifest: &Manifest,
    spec: &FileSpec,
    path: &Path,
) -> Result<(Bytes, Option<super::stamp::Identity>), ModelError> {
    let missing = || ModelError::Missing {
        model: manifest.name.clone(),
        file: path.to_path_buf(),
    };
    // Not blocking: a pipe in a model file's place hung every search for good.
    let file = match crate::file::open_regular(path) {
        Ok((f, _)) => f,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidInput
            ) =>
        {
            return Err(missing())
        }
        Err(e) => return Err(ModelError::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| ModelError::io(path, e))?;
    if !meta.is_file() {
        return Err(missing());
    }
    if meta.len() != spec.size {
        return Err(ModelError::WrongSize {
            model: manifest.name.clone(),
            file: path.to_path_buf(),
            expected: spec.size,
            actual: meta.len(),
            remedy: super::error::on_disk_remedy(&manifest.name, spec),
        });
    }
    let identity = super::stamp::Identity::of(&meta);
    if meta.len() < MAP_THRESHOLD {
        let mut v = Vec::with_capacity(meta.len() as usize);
        (&file)
            .read_to_end(&mut v)
            .map_err(|e| ModelError::io(path, e))?;
        return Ok((Bytes::Owned(v), identity));
    }
    // SAFETY: the mapping is read-only and private to this process. Another process
    // truncating the file while it is mapped could fault; brain's data dir is its own,
    // and the same risk is accepted by every mmap-based weight loader.
    let map =
        unsafe { memmap2::MmapOptions::new().map(&file) }.map_err(|e| ModelError::io(path, e))?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok((
        Bytes::Mapped(Mapping {
            map,
            file,
            path: path.to_path_buf(),
            verified: std::sync::Mutex::new(identity.clone()),
            sha256: spec.sha256.clone(),
        }),
        identity,
    ))
}

fn check_hash(
    manifest: &Manifest,
    spec: &FileSpec,
    path: &Path,
    bytes: &[u8],
) -> Result<(), ModelError> {
    let actual = sha256_hex(bytes);
    if actual != spec.sha256 {
        return Err(ModelError::Mismatch {
            model: manifest.name.clone(),
            file: path.to_path_buf(),
            expected: spec.sha256.clone(),
            actual,
            remedy: super::error::on_disk_remedy(&manifest.name, spec),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_manifest;

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn verified_bytes_are_the_hashed_bytes_and_tampering_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![7u8; (MAP_THRESHOLD + 10) as usize];
        let m = test_manifest(
            "tiny",
            &[
                ("a/b.bin", &big, true),
                ("c.json", b"{}", true),
                ("opt.txt", b"x", false),
            ],
        );
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/b.bin"), &big).unwrap();
        std::fs::write(dir.path().join("c.json"), b"{}").unwrap();

        let v = open_verified(&m, dir.path()).unwrap();
        assert_eq!(v.get("c.json").unwrap(), b"{}");
        assert_eq!(v.get("a/b.bin").unwrap().len(), big.len());
        assert!(looks_installed(&m, dir.path()));
        let statuses = check_all(&m, dir.path());
        assert!(
            statuses.iter().all(|(_, e)| e.is_none()),
            "an absent optional file is not an error"
        );

        std::fs::write(dir.path().join("c.json"), b"[]").unwrap();
        let err = open_verified(&m, dir.path()).err().unwrap();
        assert!(matches!(err, ModelError::Mismatch { .. }), "{err}");
        assert!(err.to_string().contains("c.json"));

        std::fs::write(dir.path().join("c.json"), b"{ }").unwrap();
        let err = open_verified(&m, dir.path()).err().unwrap();
        assert!(
            matches!(
                err,
                ModelError::WrongSize {
                    expected: 2,
                    actual: 3,
                    ..
                }
            ),
            "{err}"
        );
        assert!(!looks_installed(&m, dir.path()));

        std::fs::remove_file(dir.path().join("c.json")).unwrap();
        assert!(matches!(
            open_verified(&m, dir.path()),
            Err(ModelError::Missing { .. })
        ));
        // A pipe in its place is not waited on (every search hung on one).
        crate::file::mkfifo(&dir.path().join("c.json"));
        assert!(matches!(
            open_verified(&m, dir.path()),
            Err(ModelError::Missing { .. })
        ));
        assert!(sha256_file(&dir.path().join("c.json")).is_err());
    }

    #[test]
    fn a_check_that_hashed_every_file_right_vouches_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let m = test_manifest("tiny", &[("c.json", b"{}", true), ("opt.txt", b"x", false)]);
        std::fs::write(dir.path().join("c.json"), b"{}").unwrap();
        open_verified(&m, dir.path()).unwrap();
        // The same bytes in another file (a copy over it): the record no longer vouches.
        // (After a pause: a kernel with coarse timestamps may reuse the inode and the time.)
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::remove_file(dir.path().join("c.json")).unwrap();
        // Gone is changed too.
        assert_eq!(changed_since_verified(&m, dir.path()), ["c.json"]);
        std::fs::write(dir.path().join("c.json"), b"{}").unwrap();
        assert_eq!(changed_since_verified(&m, dir.path()), ["c.json"]);
        assert!(check_all(&m, dir.path()).iter().all(|(_, e)| e.is_none()));
        assert!(changed_since_verified(&m, dir.path()).is_empty());
        // A check that fails records nothing: the changed file stays named.
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::write(dir.path().join("c.json"), b"[]").unwrap();
        assert!(check_all(&m, dir.path()).iter().any(|(_, e)| e.is_some()));
        assert_eq!(changed_since_verified(&m, dir.path()), ["c.json"]);
    }

    #[test]
    fn streamed_and_sliced_hashes_agree() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..(5u32 << 20) + 3).map(|i| (i * 31) as u8).collect();
        let p = dir.path().join("x");
        std::fs::write(&p, &data).unwrap();
        assert_eq!(sha256_file(&p).unwrap(), sha256_hex(&data));
    }
}
