//! One backend per index: an exclusive `flock` on a lock file that holds the owner's pid.
//! The kernel drops the lock when the process dies, however it dies, so a crash never
//! leaves brain locked out.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::error::ServiceError;
use super::location::{lock_path, socket_path};
use crate::config::Config;

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
}

/// Why the lock could not be taken.
#[derive(Debug)]
pub enum LockFailure {
    /// Another process holds it; its pid when the file says.
    Held(Option<u32>),
    /// The lock file could not be opened or locked.
    Failed(ServiceError),
}

/// `e`, with what to do when it says the data dir cannot be written (as the index's own
/// errors say it).
fn writable(e: std::io::Error, dir: &Path) -> std::io::Error {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    match e.kind() {
        ReadOnlyFilesystem | PermissionDenied => std::io::Error::new(
            e.kind(),
            format!(
                "{e}: make {} writable, or set BRAIN_DATA_DIR to a writable folder",
                dir.display()
            ),
        ),
        _ => e,
    }
}

impl InstanceLock {
    /// Takes the one-backend-per-index lock of `config`'s brain (creating its folder);
    /// [`ServiceError::AlreadyRunning`], with the holder's pid, while another process has it.
    pub fn for_backend(config: &Config) -> Result<InstanceLock, ServiceError> {
        let path = lock_path(config);
        let dir = path.parent().unwrap_or(&path);
        std::fs::create_dir_all(dir).map_err(|e| ServiceError::io(dir, writable(e, dir)))?;
        match InstanceLock::acquire(&path) {
            Ok(lock) => Ok(lock),
            Err(LockFailure::Held(pid)) => Err(ServiceError::AlreadyRunning {
                root: config.root.to_string_lossy().into_owned(),
                pid,
                socket: socket_path(config),
            }),
            Err(LockFailure::Failed(ServiceError::Io { path, cause })) => Err(ServiceError::Io {
                cause: writable(cause, dir),
                path,
            }),
            Err(LockFailure::Failed(e)) => Err(e),
        }
    }

    /// Takes the lock at `path` without waiting and writes this process's pid into it.
    pub fn acquire(path: &Path) -> Result<InstanceLock, LockFailure> {
        let io = |e| LockFailure::Failed(ServiceError::io(path, e));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(io)?;
        // SAFETY: the descriptor is open for the whole call; flock does not retain it.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::WouldBlock {
                let mut text = String::new();
                let pid = file
                    .read_to_string(&mut text)
                    .ok()
                    .and_then(|_| text.trim().parse().ok());
                return Err(LockFailure::Held(pid));
            }
            return Err(io(err));
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(InstanceLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_taker_is_refused_with_the_pid_until_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("backend.lock");
        let held = InstanceLock::acquire(&path).unwrap();
        match InstanceLock::acquire(&path) {
            Err(LockFailure::Held(pid)) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        drop(held);
        InstanceLock::acquire(&path).unwrap();
    }

    #[test]
    fn a_data_dir_that_cannot_be_written_says_what_to_do() {
        let dir = Path::new("/ro/run");
        let e = writable(std::io::ErrorKind::ReadOnlyFilesystem.into(), dir).to_string();
        assert!(
            e.contains("make /ro/run writable, or set BRAIN_DATA_DIR"),
            "{e}"
        );
        let other = writable(std::io::ErrorKind::NotFound.into(), dir).to_string();
        assert!(!other.contains("BRAIN_DATA_DIR"), "{other}");
    }
}
