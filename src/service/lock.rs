//! One backend per index: an exclusive `flock` on a lock file that holds the owner's pid.
//! The kernel drops the lock when the process dies, however it dies, so a crash never
//! leaves brain locked out.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::ServiceError;
use super::location::{lock_path, socket_path};
use crate::config::Config;

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

/// The lock files this process holds now. A lock is an `flock` on an open file, which a
/// child being spawned by another thread shares until its `exec` closes it: a lock
/// released a moment ago can still read as held, with this process's own pid. One not in
/// this set is such a leftover, waited for; one in it is really held (a second backend).
static HELD: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// How long a lock this process released may stay held by a child being spawned.
const SPAWN_WAIT: Duration = Duration::from_secs(2);

impl Drop for InstanceLock {
    fn drop(&mut self) {
        held().remove(&self.path);
    }
}

fn held() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// Who holds the lock: a backend, or a `brain index --rebuild` (which keeps backends out
/// while it swaps the index file). Written after the pid, so that the one refused can be
/// told which it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// `brain serve`, or the app's backend.
    Backend,
    /// `brain index --rebuild`.
    Rebuild,
}

impl Holder {
    fn word(self) -> &'static str {
        match self {
            Holder::Backend => "serve",
            Holder::Rebuild => "rebuild",
        }
    }

    fn from_word(word: &str) -> Option<Holder> {
        [Holder::Backend, Holder::Rebuild]
            .into_iter()
            .find(|h| h.word() == word)
    }
}

/// What a lock file says of the process holding it: `PID WORD [SOCKET]` (`1234 serve
/// /run/user/1000/brain/brain-x.sock`). A brain before the holder was written says only
/// the pid, and it was a backend; one before the socket was written, no socket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Said {
    /// The holder's pid.
    pub pid: Option<u32>,
    /// What it is.
    pub holder: Option<Holder>,
    /// Where it listens, when it is a backend.
    pub socket: Option<PathBuf>,
}

impl Said {
    /// Reads a lock file's text. The socket is the rest of the line after the word: a
    /// path may hold spaces, and any word (a brain folder named `rebuild-notes`).
    fn read(text: &str) -> Said {
        let mut parts = text.lines().next().unwrap_or_default().splitn(3, ' ');
        Said {
            pid: parts.next().and_then(|p| p.parse().ok()),
            holder: parts.next().and_then(Holder::from_word),
            socket: parts.next().filter(|s| !s.is_empty()).map(PathBuf::from),
        }
    }
}

/// Why the lock could not be taken.
#[derive(Debug)]
pub enum LockFailure {
    /// Another process holds it, and what its lock file says of it.
    Held(Said),
    /// The lock file could not be opened or locked.
    Failed(ServiceError),
}

/// The pid of the backend holding `config`'s lock, from the kernel's list of locks (Linux's
/// `/proc/locks`): the lock is never taken to find out, so a backend starting meanwhile is
/// not refused. `None` where there is no such list, when no one holds it, or when a
/// rebuild does. For `status` in a shell whose `XDG_RUNTIME_DIR` is not the backend's (ssh
/// without a login session, cron), where its socket is another path.
pub fn backend_holder(config: &Config) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let path = lock_path(config);
        let ino = std::fs::metadata(&path).ok()?.ino();
        let said = std::fs::read_to_string(&path).map(|t| Said::read(&t));
        if said.is_ok_and(|s| s.holder == Some(Holder::Rebuild)) {
            return None;
        }
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        // `1: FLOCK  ADVISORY  WRITE 3636 fe:00:10010648 0 EOF`; a waiter's line has `->`
        // after the number, and is not the holder.
        locks.lines().find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (kind, pid, id) = (*f.get(1)?, f.get(4)?, f.get(5)?);
            let this = id.rsplit(':').next()?.parse::<u64>().ok()? == ino;
            (kind == "FLOCK" && this)
                .then(|| pid.parse().ok())
                .flatten()
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = config;
        None
    }
}

impl InstanceLock {
    /// Takes the one-backend-per-index lock of `config`'s brain for `holder` (creating its
    /// folder); [`ServiceError::AlreadyRunning`] or [`ServiceError::Rebuilding`], with the
    /// holder's pid, while another process has it.
    pub fn for_backend(config: &Config, holder: Holder) -> Result<InstanceLock, ServiceError> {
        let path = lock_path(config);
        let dir = path.parent().unwrap_or(&path);
        std::fs::create_dir_all(dir)
            .map_err(|e| ServiceError::io(dir, crate::error::in_data_dir(e, dir)))?;
        let root = config.root.to_string_lossy().into_owned();
        // A backend writes its socket beside its pid: a second one refused names where the
        // first listens, which this process's own XDG_RUNTIME_DIR may not (cron, ssh).
        let ours = socket_path(config);
        let says = (holder == Holder::Backend).then_some(ours.as_path());
        match InstanceLock::acquire(&path, holder, says) {
            Ok(lock) => Ok(lock),
            Err(LockFailure::Held(Said {
                pid,
                holder: Some(Holder::Rebuild),
                ..
            })) => Err(ServiceError::Rebuilding { root, pid }),
            Err(LockFailure::Held(Said { pid, socket, .. })) => Err(ServiceError::AlreadyRunning {
                root,
                pid,
                socket: socket.unwrap_or(ours),
            }),
            Err(LockFailure::Failed(ServiceError::Io { path, cause })) => Err(ServiceError::Io {
                cause: crate::error::in_data_dir(cause, dir),
                path,
            }),
            Err(LockFailure::Failed(e)) => Err(e),
        }
    }

    /// Takes the lock at `path` without waiting (but for a lock this process released a
    /// moment ago: see [`HELD`]) and writes this process's pid and `holder` into it.
    /// With `socket` (where this backend listens), written after the holder.
    pub fn acquire(
        path: &Path,
        holder: Holder,
        socket: Option<&Path>,
    ) -> Result<InstanceLock, LockFailure> {
        let deadline = Instant::now() + SPAWN_WAIT;
        loop {
            match InstanceLock::try_acquire(path, holder, socket) {
                Err(LockFailure::Held(Said { pid: Some(pid), .. }))
                    if pid == std::process::id()
                        && !held().contains(path)
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => return other,
            }
        }
    }

    fn try_acquire(
        path: &Path,
        holder: Holder,
        socket: Option<&Path>,
    ) -> Result<InstanceLock, LockFailure> {
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
                let _ = file.read_to_string(&mut text);
                return Err(LockFailure::Held(Said::read(&text)));
            }
            return Err(io(err));
        }
        // The lock is the `flock`; the text only tells the refused who holds it. A full
        // disk may refuse even these bytes: the lock holds all the same, and the command
        // goes on to say what it cannot write itself, in its own words.
        let said = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| match socket {
                Some(socket) => writeln!(
                    file,
                    "{} {} {}",
                    std::process::id(),
                    holder.word(),
                    socket.display()
                ),
                None => writeln!(file, "{} {}", std::process::id(), holder.word()),
            });
        if let Err(e) = said {
            tracing::debug!(error = %e, "the lock's holder not written");
        }
        held().insert(path.to_path_buf());
        Ok(InstanceLock {
            _file: file,
            path: path.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The holder is read from its word, not from anywhere in the file: a backend's socket
    /// path holding `rebuild` (its brain folder's name) made `status` say "not running".
    #[test]
    #[cfg(target_os = "linux")]
    fn a_backend_whose_socket_path_says_rebuild_is_still_the_backend() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::for_root(dir.path().join("rebuild-notes"), dir.path().join("data"));
        let path = lock_path(&config);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let socket = dir.path().join("run/rebuild-notes-1234.sock");
        let _held = InstanceLock::acquire(&path, Holder::Backend, Some(&socket)).unwrap();
        assert_eq!(backend_holder(&config), Some(std::process::id()));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(Said::read(&text).socket, Some(socket));
    }

    #[test]
    fn second_taker_is_refused_with_the_pid_until_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("backend.lock");
        let held = InstanceLock::acquire(&path, Holder::Rebuild, None).unwrap();
        match InstanceLock::acquire(&path, Holder::Backend, None) {
            Err(LockFailure::Held(said)) => {
                assert_eq!(
                    (said.pid, said.holder),
                    (Some(std::process::id()), Some(Holder::Rebuild))
                )
            }
            other => panic!("{other:?}"),
        }
        drop(held);
        let held = InstanceLock::acquire(&path, Holder::Backend, None).unwrap();
        assert!(matches!(
            InstanceLock::acquire(&path, Holder::Rebuild, None),
            Err(LockFailure::Held(Said {
                holder: Some(Holder::Backend),
                ..
            }))
        ));
        drop(held);
        // A lock file as an older brain wrote it: the pid alone.
        std::fs::write(&path, "42\n").unwrap();
        let _held = InstanceLock::acquire(&path, Holder::Backend, None).unwrap();
        let mut text = String::new();
        std::fs::File::open(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, format!("{} serve\n", std::process::id()));
    }

    #[test]
    fn a_lock_a_spawning_child_still_shares_is_waited_for_and_a_held_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("backend.lock");
        // What a child forked between this process's flock and its release holds: the
        // same lock, with this process's pid in the file, outside the locks it keeps.
        drop(InstanceLock::acquire(&path, Holder::Backend, None).unwrap());
        let leftover = File::open(&path).unwrap();
        // SAFETY: the descriptor is open for the whole call.
        assert_eq!(
            unsafe { libc::flock(leftover.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        let exec = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(leftover);
        });
        let started = Instant::now();
        let lock = InstanceLock::acquire(&path, Holder::Backend, None).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(150));
        exec.join().unwrap();
        // Held by this process for real: refused at once.
        let started = Instant::now();
        assert!(matches!(
            InstanceLock::acquire(&path, Holder::Backend, None),
            Err(LockFailure::Held(..))
        ));
        assert!(started.elapsed() < SPAWN_WAIT / 2);
        drop(lock);
    }

    #[test]
    fn a_data_dir_that_cannot_be_written_says_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let dir = run.as_path();
        let e = crate::error::in_data_dir(std::io::ErrorKind::ReadOnlyFilesystem.into(), dir)
            .to_string();
        assert!(
            e.contains(&format!(
                "make {} writable, or set BRAIN_DATA_DIR",
                run.display()
            )),
            "{e}"
        );
        // Not made yet (a data dir under a read-only parent): the folder that is there.
        let unmade = tmp.path().join("data/indexes/x");
        let e = crate::error::in_data_dir(std::io::ErrorKind::PermissionDenied.into(), &unmade)
            .to_string();
        assert!(
            e.contains(&format!("make {} writable", tmp.path().display())),
            "{e}"
        );
        let full =
            crate::error::in_data_dir(std::io::ErrorKind::StorageFull.into(), dir).to_string();
        assert!(full.contains("free space there"), "{full}");
        let other = crate::error::in_data_dir(std::io::ErrorKind::NotFound.into(), dir).to_string();
        assert!(!other.contains("BRAIN_DATA_DIR"), "{other}");
    }
}
