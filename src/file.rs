//! Reading a file that may not be what its name says: a note, a schema or an ignore file
//! can be a pipe or a device (a link to `/dev/zero`), and a reader must neither wait on it
//! forever nor read it until memory runs out. And replacing a file whole or not at all.
//! Below every other module: it imports none.

use std::path::{Path, PathBuf};

/// The bytes of the regular file at `path` (a symlink followed), at most `max` of them,
/// opened so that a pipe cannot block: the file is opened non-blocking and checked as
/// opened, so one swapped for a FIFO after a `stat` is refused, not waited on forever.
pub fn read_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, _) = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes `dir` and any missing folder above it closed to other users (0700), and closes
/// `dir` itself when it is this user's and open: what brain keeps there (every note's
/// text in the index, the searches made, the logs) must be no easier to read than the
/// notes, whatever the umask. Folders above that existed are left as they are, and so is
/// `dir` where its mode cannot be changed (a read-only disk, a FAT or SMB mount): what is
/// in it is still read.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if meta.uid() == my_uid() && meta.mode() & 0o077 != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// This process's effective uid.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Where `path` leads: the file it names, links followed; for a link to a file not made
/// yet, that file as the link names it (from the link's folder). An error when it is
/// neither there nor a link.
pub fn leads_to(path: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(path).or_else(|e| match std::fs::read_link(path) {
        Ok(target) => Ok(path.parent().unwrap_or(Path::new("")).join(target)),
        Err(_) => Err(e),
    })
}

/// Writes `bytes` to `path` whole or not at all: into a temporary file beside it, flushed
/// to disk, then renamed over it, so a crash or a full disk leaves the old file or the new
/// one, never half of either (and a config file cut short would stop every command). A
/// file being replaced keeps its mode; a new one gets `new_mode`, less the umask.
pub fn replace(path: &Path, bytes: &[u8], new_mode: u32) -> std::io::Result<()> {
    // A link (a config kept in a dotfiles repository) is written where it leads: renamed
    // onto, the link would become a plain file and its target go stale.
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            // A link to a file not made yet is made there, as a write in place made it.
            resolved = leads_to(path)?;
            resolved.as_path()
        }
        _ => path,
    };
    // A file made read-only is left as it is, as a write in place would have left it.
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the file is read-only: make it writable for brain to change it",
        ));
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    write_beside(path, dir, bytes, new_mode, Rename::Over).map_err(|failed| failed.error)
}

/// The step of [`write_beside`] that failed, so that a caller can say what to do at each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Making the temporary file in the folder.
    Temp,
    /// Writing it and flushing it to disk.
    Write,
    /// Renaming it to the file's name.
    Rename,
}

/// A [`write_beside`] that failed, and where.
#[derive(Debug)]
pub(crate) struct WriteFailed {
    pub step: Step,
    pub error: std::io::Error,
}

/// Whether [`write_beside`] may rename over a file of that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rename {
    /// Replace the file there (its mode kept).
    Over,
    /// Fail with `AlreadyExists` when a file of that name is there (made meanwhile).
    NoClobber,
}

/// Writes `bytes` to `path` through a temporary file in `dir` (its folder), flushed, then
/// renamed: a crash or a full disk leaves the old file or the new one. The one core under
/// [`replace`] (settings, records) and the notes' writes (`kb::write_atomic`), which say
/// each step's failure in their own words.
pub(crate) fn write_beside(
    path: &Path,
    dir: &Path,
    bytes: &[u8],
    new_mode: u32,
    rename: Rename,
) -> Result<(), WriteFailed> {
    use std::io::Write;
    let at = |step| move |error| WriteFailed { step, error };
    let tmp = temp_beside(path, dir, new_mode).map_err(at(Step::Temp))?;
    // Through the file itself: NamedTempFile's own `Write` adds "at path" and the temp
    // name to its errors, a file the person never sees (it is removed on the way out).
    let mut file = tmp.as_file();
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(at(Step::Write))?;
    let persisted = match rename {
        Rename::Over => tmp.persist(path),
        Rename::NoClobber => tmp.persist_noclobber(path),
    };
    persisted.map_err(|e| at(Step::Rename)(e.error))?;
    // The rename is durable once the folder's entry is on disk; failing that is no error
    // of the write (some file systems refuse to sync a folder).
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// How old a temporary file of brain's is before a later write beside it removes it: a
/// younger one may be another process's write under way. (A process stopped longer than
/// this between writing and renaming, a laptop asleep mid-write, loses its write to the
/// sweep and fails with "not found": said, not lost silently.)
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// How brain's temporary files are named: `.brain-tmp-`, [`TEMP_LETTERS`] random letters
/// or digits, `.tmp`. A name of its own: the sweep removes exactly these, and a person's
/// `.brain-backup.tmp` in the notes folder (which an earlier `.brain-` + six letters took
/// for one) is theirs.
const TEMP_PREFIX: &str = ".brain-tmp-";
const TEMP_SUFFIX: &str = ".tmp";
const TEMP_LETTERS: usize = 10;

/// Whether `name` is one of brain's temporary files, as [`temp_beside`] names them.
fn is_brain_temp(name: &str) -> bool {
    is_temp_name(name, TEMP_PREFIX, TEMP_LETTERS, TEMP_SUFFIX)
}

/// Whether `name` is `prefix`, `letters` random letters or digits, and `suffix`.
pub(crate) fn is_temp_name(name: &str, prefix: &str, letters: usize, suffix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(suffix))
        .is_some_and(|middle| {
            middle.len() == letters && middle.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// Removes from `dir` the temporary files `is_temp` names that are older than
/// [`STALE_TEMP`]: left by a process killed between making one and renaming it into place
/// (the file is removed when dropped, which a kill skips), and found by nothing else.
pub(crate) fn sweep_stale_temps(dir: &Path, is_temp: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        // The name first: a folder of 10,000 notes is not 10,000 stats per write.
        if !entry.file_name().to_str().is_some_and(&is_temp) {
            continue;
        }
        // A file, not a link (whose own time says nothing of a write) or a folder.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A temporary file in `dir` (the folder of `path`) to be renamed over `path`, with the
/// mode of the file it replaces, or `new_mode` less the umask when there is none. Stale
/// ones a killed process left there are removed first.
pub(crate) fn temp_beside(
    path: &Path,
    dir: &Path,
    new_mode: u32,
) -> std::io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    sweep_stale_temps(dir, is_brain_temp);
    let old = std::fs::metadata(path).ok();
    let kept = old.as_ref().map(|m| m.permissions().mode() & 0o7777);
    let tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .rand_bytes(TEMP_LETTERS)
        .suffix(TEMP_SUFFIX)
        .permissions(std::fs::Permissions::from_mode(kept.unwrap_or(new_mode)))
        .tempfile_in(dir)?;
    if let Some(old) = &old {
        // Its owner too, where this process may give it (root, or the owner already): a
        // root `brain index-md --write` left the person's INDEX.md root's. Before the mode,
        // which a change of owner may clear (set-id bits).
        let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(old.uid()), Some(old.gid()));
    }
    if let Some(mode) = kept {
        // Past the umask, which cut the mode the temporary file was made with.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(tmp)
}

/// The regular file at `path` (a symlink followed), open for reading, with its size; an
/// error of kind `InvalidInput` for anything else. Opened non-blocking, so a pipe is
/// refused at once instead of waited on, and checked as opened, not by an earlier `stat`.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a folder, a pipe or a device): replace it with a file",
        ));
    }
    Ok((file, meta.len()))
}

/// Makes a FIFO at `path`, for tests of files that would block a reader.
#[cfg(test)]
pub(crate) fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).expect("no NUL");
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_folder_is_made_closed_and_closed_again_when_found_open() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("data/logs");
        private_dir(&logs).unwrap();
        assert_eq!(mode(&logs), 0o700);
        assert_eq!(
            mode(&dir.path().join("data")),
            0o700,
            "a folder it made above"
        );
        std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&logs).unwrap();
        assert_eq!(mode(&logs), 0o700, "closed again");
    }
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_nothing_is_left_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        replace(&path, b"new", 0o600).unwrap();
        assert_eq!(
            (std::fs::read(&path).unwrap(), mode(&path)),
            (b"new".to_vec(), 0o600)
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        replace(&path, b"again", 0o600).unwrap();
        assert_eq!(
            (std::fs::read(&path).unwrap(), mode(&path)),
            (b"again".to_vec(), 0o640)
        );
        // Replaced by root (the tests' user here), a person's file stays theirs.
        if unsafe { libc::geteuid() } == 0 {
            use std::os::unix::fs::MetadataExt;
            std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
            replace(&path, b"theirs", 0o600).unwrap();
            let m = std::fs::metadata(&path).unwrap();
            assert_eq!((m.uid(), m.gid(), mode(&path)), (65534, 65534, 0o640));
        }
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A temporary file a killed write left goes once it is old; a young one stays.
        // A person's own files named alike are theirs, however old.
        let left = dir.path().join(".brain-tmp-AbC123dEf4.tmp");
        let young = dir.path().join(".brain-tmp-XyZ789uvw0.tmp");
        let theirs = [
            ".brain-backup.tmp",
            ".brain-tmp-.tmp",
            ".brain-tmp-AbC12-dEf4.tmp",
        ]
        .map(|n| dir.path().join(n));
        let old = std::time::SystemTime::now() - STALE_TEMP * 2;
        for (file, text) in [(&left, "half"), (&young, "under way")]
            .into_iter()
            .chain(theirs.iter().map(|t| (t, "mine")))
        {
            std::fs::write(file, text).unwrap();
            if file != &young {
                std::fs::File::options()
                    .write(true)
                    .open(file)
                    .and_then(|f| f.set_modified(old))
                    .unwrap();
            }
        }
        replace(&path, b"third", 0o600).unwrap();
        assert!(!left.exists() && young.exists());
        assert!(theirs.iter().all(|t| t.exists()));
        // A link is written through; a read-only file is not written.
        let target = dir.path().join("target.toml");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        replace(&link, b"through", 0o600).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"through");
        let ahead = dir.path().join("ahead.toml");
        std::os::unix::fs::symlink("not-yet.toml", &ahead).unwrap();
        replace(&ahead, b"made", 0o600).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("not-yet.toml")).unwrap(),
            b"made"
        );
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = replace(&link, b"refused", 0o600).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        assert_eq!(std::fs::read(&target).unwrap(), b"through");
        // No folder to write in: an error, and nothing made.
        assert!(replace(&dir.path().join("gone/x"), b"x", 0o600).is_err());
        assert!(!dir.path().join("gone").exists());
    }
}
