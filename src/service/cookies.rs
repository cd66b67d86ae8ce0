//! Sync cookies: proof that the watcher has passed on every file event up to now.
//!
//! A search that syncs first has the indexer sync what the watcher reported, but an event
//! still on its way is not among it: a note saved a moment before the search was missed.
//! The way is usually microseconds, but the watcher's one thread also re-adds a watch for
//! every folder of a tree renamed or moved in (inotify watches folders one by one): after
//! a rename of a folder holding 1,000 folders, a note saved and searched at once was
//! missed 19 times in 20. So the search first makes a file in a folder the same watcher
//! watches, and waits until the watcher reports it: a volume's events come in the order
//! they happened (inotify keeps one queue for all of a watcher's folders; FSEvents numbers
//! them), so every save made before the search was passed on first (Watchman does the
//! same). The files live in the index's folder, never in the notes folder.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The cookies of one backend, and which of them the watcher has reported.
pub(crate) struct Cookies {
    dir: PathBuf,
    next: AtomicU64,
    /// Set while a watcher watches `dir` and its cookies have not been found lost.
    watching: AtomicBool,
    state: Mutex<Heard>,
    arrived: Condvar,
}

#[derive(Default)]
struct Heard {
    /// Cookies reported and not yet taken by their waiter.
    ids: HashSet<u64>,
    /// The last cookie whose waiter gave up: reported later, the watcher is only slow;
    /// never, its events do not come (a folder it cannot watch), and cookies are not made
    /// again until the next watcher.
    late: Option<u64>,
}

impl Cookies {
    /// Cookies made in `dir` (created, and emptied of a crashed backend's).
    pub fn new(dir: PathBuf) -> Cookies {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let made = std::fs::create_dir_all(&dir).is_ok();
        if !made {
            tracing::debug!(dir = %dir.display(), "no sync cookies: the folder cannot be made");
        }
        Cookies {
            dir,
            next: AtomicU64::new(0),
            watching: AtomicBool::new(false),
            state: Mutex::new(Heard::default()),
            arrived: Condvar::new(),
        }
    }

    /// The folder the watcher must watch.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Says whether a watcher now watches [`Cookies::dir`].
    pub fn set_watching(&self, on: bool) {
        self.watching
            .store(on && self.dir.is_dir(), Ordering::Relaxed);
        if on {
            self.heard().late = None;
        }
    }

    /// Called on the watcher's thread for each path of an event (`created`: a creation):
    /// true when it is a cookie's, which is then no concern of the index.
    pub fn heard_of(&self, path: &Path, created: bool) -> bool {
        if path.parent() != Some(self.dir.as_path()) {
            return false;
        }
        let id = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<u64>().ok());
        if let (Some(id), true) = (id, created) {
            self.heard().ids.insert(id);
            self.arrived.notify_all();
        }
        true
    }

    /// Makes a cookie and waits, at most `wait`, until the watcher reports it: true when
    /// it did, so every event before this call has been passed on. False at once when no
    /// watcher watches the cookies' folder or the file cannot be made.
    pub fn barrier(&self, wait: Duration) -> bool {
        if !self.watching.load(Ordering::Relaxed) {
            return false;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(id.to_string());
        {
            let mut heard = self.heard();
            if let Some(late) = heard.late.take() {
                if !heard.ids.remove(&late) {
                    drop(heard);
                    tracing::warn!(
                        dir = %self.dir.display(),
                        "the watcher never reported a sync cookie: searches no longer wait for its events"
                    );
                    self.watching.store(false, Ordering::Relaxed);
                    return false;
                }
            }
        }
        if let Err(e) = std::fs::File::create(&path) {
            tracing::debug!(error = %e, "no sync cookie");
            return false;
        }
        let deadline = Instant::now() + wait;
        let mut heard = self.heard();
        let reported = loop {
            if heard.ids.remove(&id) {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                heard.late = Some(id);
                break false;
            }
            heard = self
                .arrived
                .wait_timeout(heard, left)
                .map_or_else(|p| p.into_inner().0, |(g, _)| g);
        };
        drop(heard);
        let _ = std::fs::remove_file(&path);
        if !reported {
            tracing::debug!(
                waited_ms = wait.as_millis() as u64,
                "a sync cookie was not reported in time"
            );
        }
        reported
    }

    fn heard(&self) -> MutexGuard<'_, Heard> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_reported_lets_the_waiter_go_and_one_never_reported_stops_the_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let cookies = std::sync::Arc::new(Cookies::new(dir.path().join("cookies")));
        // No watcher: no cookie, no wait.
        assert!(!cookies.barrier(Duration::from_secs(5)));
        assert_eq!(std::fs::read_dir(cookies.dir()).unwrap().count(), 0);

        // A stand-in watcher thread that reports each cookie it finds made.
        cookies.set_watching(true);
        let (stop, reporter) = (std::sync::Arc::new(AtomicBool::new(false)), cookies.clone());
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut told = HashSet::new();
            while !stopping.load(Ordering::Relaxed) {
                for e in std::fs::read_dir(reporter.dir()).unwrap().flatten() {
                    if told.insert(e.file_name()) {
                        assert!(reporter.heard_of(&e.path(), true));
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        assert!(cookies.barrier(Duration::from_secs(10)));
        assert!(cookies.barrier(Duration::from_secs(10)));
        // The cookie is removed once reported; other paths are not cookies.
        assert_eq!(std::fs::read_dir(cookies.dir()).unwrap().count(), 0);
        assert!(!cookies.heard_of(&dir.path().join("note.md"), true));
        stop.store(true, Ordering::Relaxed);
        thread.join().unwrap();

        // A watcher that reports nothing: the wait ends at its limit, and once a cookie
        // given up on was never reported, no search waits again.
        let started = Instant::now();
        assert!(!cookies.barrier(Duration::from_millis(50)));
        assert!(started.elapsed() >= Duration::from_millis(50));
        let started = Instant::now();
        assert!(!cookies.barrier(Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(5));
        // A new watcher starts trusting them again.
        cookies.set_watching(true);
        assert!(cookies.watching.load(Ordering::Relaxed));
    }
}
