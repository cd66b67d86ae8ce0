//! One embedding pass over an index at a time, across processes: an exclusive `flock` on a
//! file beside the index. A second pass (`brain index` while the backend embeds, or two
//! `brain index`) embedded the same passages as the first, each taking twice as long for
//! nothing; it now waits for the first and takes over what that one leaves. The kernel
//! drops the lock when its process dies, however it dies.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A held pass lock; released when dropped (the file is closed).
#[derive(Debug)]
pub struct PassLock {
    _file: File,
}

/// What [`try_take`] found.
#[derive(Debug)]
pub enum Taken {
    /// This process holds it now.
    Held(PassLock),
    /// Another pass holds it.
    Busy,
    /// No lock can be had here (a read-only data dir): passes go on unlocked, as before.
    Unavailable,
}

/// The lock file of the index at `index`.
fn lock_path(index: &Path) -> PathBuf {
    index.with_file_name("embedding.lock")
}

/// The process that holds (or last held) the pass lock of the index at `index`, as it
/// wrote its pid there; `None` when none did.
pub fn holder(index: &Path) -> Option<u32> {
    std::fs::read_to_string(lock_path(index))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Takes the pass lock of the index at `index` without waiting.
pub fn try_take(index: &Path) -> Taken {
    let path = lock_path(index);
    // Read-only where it cannot be written (made by `sudo brain index`): `flock` takes
    // either, and the lock went off for that user without a word.
    let opened = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .or_else(|_| File::open(&path));
    let Ok(file) = opened else {
        return Taken::Unavailable;
    };
    // SAFETY: flock on a file descriptor this function owns, open for its whole call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        // Who holds it, for a pass that waits on it to name (a file opened read-only
        // takes no pid: the last holder's stays, which `holder` then names).
        let mut file = file;
        if file.set_len(0).is_ok() {
            let _ = write!(file, "{}", std::process::id());
        }
        return Taken::Held(PassLock { _file: file });
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EWOULDBLOCK) => Taken::Busy,
        _ => Taken::Unavailable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_told_busy_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("brain.sqlite");
        let first = try_take(&index);
        assert!(matches!(first, Taken::Held(_)), "{first:?}");
        assert_eq!(holder(&index), Some(std::process::id()));
        // Another open of the file (as another process makes) is refused, not waited on.
        assert!(matches!(try_take(&index), Taken::Busy));
        drop(first);
        assert!(matches!(try_take(&index), Taken::Held(_)));
        // No folder to hold the file: no lock, and no error either.
        assert!(matches!(
            try_take(&dir.path().join("gone/brain.sqlite")),
            Taken::Unavailable
        ));
    }
}
