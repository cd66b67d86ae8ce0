//! The journal of macOS: FSEvents' persistent per-volume history, replayed from an event
//! id. The replay runs a run loop, so it gets a short-lived thread of its own: the caller's
//! run loop (the app's main thread, say) is never driven from here.
//!
//! The history stops at what the daemon (fseventsd) has taken from the kernel, which may
//! lag a save made a moment before. So the replay also watches a file of brain's own (a
//! "cookie", as watchman calls it) that it writes after starting: the kernel queues events
//! in order, so once the cookie's event has come, so has every event before it.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use objc2_core_foundation::{kCFRunLoopDefaultMode, CFArray, CFRunLoop, CFString, CFUUID};
use objc2_core_services as fs;

use super::{Change, ChangeKind, Journal};

/// A replay that has not delivered the whole history and the cookie by then is abandoned
/// for a walk.
const REPLAY_LIMIT: Duration = Duration::from_secs(1);

/// Flags saying the history is incomplete or must not be trusted for what lies below.
const LOST: u32 = fs::kFSEventStreamEventFlagMustScanSubDirs
    | fs::kFSEventStreamEventFlagUserDropped
    | fs::kFSEventStreamEventFlagKernelDropped
    | fs::kFSEventStreamEventFlagEventIdsWrapped
    | fs::kFSEventStreamEventFlagRootChanged
    | fs::kFSEventStreamEventFlagMount
    | fs::kFSEventStreamEventFlagUnmount;

/// FSEvents, for the volume that holds the brain.
pub(super) struct FsEvents;

impl Journal for FsEvents {
    fn position(&self, root: &Path, cookies: &Path) -> Option<(String, u64)> {
        // A network share's journal holds only what this Mac wrote there.
        std::fs::create_dir_all(cookies).ok()?;
        if !local(root) {
            return None;
        }
        let device = std::fs::metadata(root).ok()?.dev();
        // On the same volume, the cookie's event is queued behind the notes' own.
        if std::fs::metadata(cookies).ok()?.dev() != device {
            return None;
        }
        // SAFETY: a query by device number; a volume without a journal gives `None`.
        let uuid = unsafe { fs::FSEventsCopyUUIDForDevice(device as libc::dev_t) }?;
        let history = CFUUID::new_string(None, Some(&uuid))?.to_string();
        // The boot and the device number too: one walk after a restart or a remount, when
        // events the daemon had not yet written may be gone without a new history.
        let journal = format!("{history}/{}/{device}", boot_session()?);
        // SAFETY: takes no argument; reads the system-wide event counter.
        let event = unsafe { fs::FSEventsGetCurrentEventId() };
        Some((journal, event))
    }

    fn since(&self, root: &Path, since: u64, cookies: &Path) -> Option<Vec<Change>> {
        let (root, cookies) = (root.to_path_buf(), cookies.to_path_buf());
        let deadline = Instant::now() + REPLAY_LIMIT;
        let (sent, answer) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("brain-journal".into())
            .spawn(move || {
                let _ = sent.send(replay(&root, since, &cookies, deadline));
            })
            .ok()?;
        // A daemon that does not answer must not hold a search: the thread is left to
        // finish on its own (it owns everything it touches).
        answer
            .recv_timeout(REPLAY_LIMIT + Duration::from_millis(100))
            .ok()
            .flatten()
    }
}

/// Whether `path` lies on a local volume.
fn local(path: &Path) -> bool {
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `statfs` fills the zeroed plain struct it is given from a valid C string.
    let mut fs = unsafe { std::mem::zeroed::<libc::statfs>() };
    let read = unsafe { libc::statfs(path.as_ptr(), &mut fs) } == 0;
    read && fs.f_flags & libc::MNT_LOCAL as u32 != 0
}

/// The identity of this boot (`kern.bootsessionuuid`).
fn boot_session() -> Option<String> {
    let mut buffer = [0u8; 64];
    let mut len = buffer.len();
    // SAFETY: the name is a C string; the kernel writes at most `len` bytes into `buffer`
    // and sets `len` to what it wrote.
    let read = unsafe {
        libc::sysctlbyname(
            c"kern.bootsessionuuid".as_ptr(),
            buffer.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    } == 0;
    if !read {
        return None;
    }
    let text = CStr::from_bytes_until_nul(buffer.get(..len)?).ok()?;
    Some(text.to_string_lossy().into_owned())
}

/// Removes cookies older than a minute: left by a process that exited mid-replay.
fn sweep(cookies: &Path) {
    let Ok(entries) = std::fs::read_dir(cookies) else {
        return;
    };
    let old = |e: &std::fs::DirEntry| {
        e.metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(60))
    };
    for entry in entries.flatten().filter(old) {
        let _ = std::fs::remove_file(entry.path());
    }
}

/// What the stream's callback has gathered so far.
struct Replay {
    changes: RefCell<Vec<Change>>,
    /// The history has been delivered whole (`HistoryDone`).
    done: Cell<bool>,
    /// The folder of cookies: its events are brain's own, never changes of notes.
    cookies: PathBuf,
    /// This replay's cookie, and whether its event has come.
    cookie: PathBuf,
    cookie_seen: Cell<bool>,
}

/// Every event under `root` after `since`, or `None` when the stream could not be made or
/// did not finish by `deadline`. Runs the current thread's run loop; writes and removes one
/// cookie file in `cookies`.
fn replay(root: &Path, since: u64, cookies: &Path, deadline: Instant) -> Option<Vec<Change>> {
    static COOKIES: AtomicU64 = AtomicU64::new(0);
    let cookies = std::fs::canonicalize(cookies).ok()?;
    sweep(&cookies);
    // A name no event of the replayed history can carry: another process's cookie, or an
    // earlier one of a process with the same pid, may come before events this one needs.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COOKIES.fetch_add(1, Ordering::Relaxed);
    let cookie = cookies.join(format!("{nanos}-{}-{n}", std::process::id()));
    let run_loop = CFRunLoop::current()?;
    // SAFETY: an immutable framework constant.
    let mode = unsafe { kCFRunLoopDefaultMode }?;
    let watched = [
        CFString::from_str(root.to_str()?),
        CFString::from_str(cookies.to_str()?),
    ];
    let paths = CFArray::from_retained_objects(&watched);
    let state = Replay {
        changes: RefCell::default(),
        done: Cell::new(false),
        cookies,
        cookie,
        cookie_seen: Cell::new(false),
    };
    let finished = || state.done.get() && state.cookie_seen.get();
    let mut context = fs::FSEventStreamContext {
        version: 0,
        info: (&state as *const Replay).cast_mut().cast::<c_void>(),
        retain: None,
        release: None,
        copyDescription: None,
    };
    // SAFETY: `callback` matches the stream's callback type and reads `info` as the
    // `Replay` above, which outlives the stream (released below, before `state` drops);
    // FSEvents copies the context and the paths.
    let stream = unsafe {
        fs::FSEventStreamCreate(
            None,
            Some(callback),
            &mut context,
            paths.as_opaque(),
            since,
            0.0,
            fs::kFSEventStreamCreateFlagFileEvents | fs::kFSEventStreamCreateFlagNoDefer,
        )
    };
    if stream.is_null() {
        return None;
    }
    // SAFETY: `stream` is the valid stream made above, scheduled on this thread's run loop,
    // which only this function runs; it is stopped, invalidated and released below.
    let started = unsafe {
        #[allow(deprecated)] // the dispatch-queue form needs a queue crate; a thread will do
        fs::FSEventStreamScheduleWithRunLoop(stream, &run_loop, mode);
        fs::FSEventStreamStart(stream)
    };
    // Written once the stream listens, so that its event comes live, after the history.
    let wrote = started && std::fs::write(&state.cookie, b"").is_ok();
    if wrote {
        while !finished() && Instant::now() < deadline {
            CFRunLoop::run_in_mode(Some(mode), 0.05, true);
        }
    }
    // SAFETY: as above; no callback comes after the stream is invalidated.
    unsafe {
        if started {
            fs::FSEventStreamStop(stream);
        }
        fs::FSEventStreamInvalidate(stream);
        fs::FSEventStreamRelease(stream);
    }
    if wrote {
        let _ = std::fs::remove_file(&state.cookie);
    }
    let complete = finished();
    complete.then(|| state.changes.into_inner())
}

/// The stream's callback: records each event as a [`Change`], and the end of the history.
unsafe extern "C-unwind" fn callback(
    _stream: fs::ConstFSEventStreamRef,
    info: *mut c_void,
    count: usize,
    paths: NonNull<c_void>,
    flags: NonNull<fs::FSEventStreamEventFlags>,
    _ids: NonNull<fs::FSEventStreamEventId>,
) {
    // SAFETY: `info` is the `Replay` given to the stream, alive while the stream is; without
    // `UseCFTypes`, `paths` is `count` C strings and `flags` holds `count` flags.
    let state = unsafe { &*info.cast_const().cast::<Replay>() };
    let paths = paths.as_ptr().cast_const().cast::<*const c_char>();
    for i in 0..count {
        let flag = unsafe { *flags.as_ptr().add(i) };
        if flag & fs::kFSEventStreamEventFlagHistoryDone != 0 {
            state.done.set(true);
            continue;
        }
        let path = unsafe { CStr::from_ptr(*paths.add(i)) };
        let path = Path::new(OsStr::from_bytes(path.to_bytes()));
        if path.starts_with(&state.cookies) {
            if path == state.cookie {
                state.cookie_seen.set(true);
            }
            continue;
        }
        state.changes.borrow_mut().push(Change {
            path: path.to_path_buf(),
            kind: kind(flag),
        });
    }
}

/// What an event's flags say it is about.
fn kind(flag: u32) -> ChangeKind {
    if flag & LOST != 0 {
        ChangeKind::Lost
    } else if flag & fs::kFSEventStreamEventFlagItemIsDir != 0 {
        ChangeKind::Folder
    } else if flag & fs::kFSEventStreamEventFlagItemIsSymlink != 0 {
        ChangeKind::Other
    } else if flag & fs::kFSEventStreamEventFlagItemIsFile != 0 {
        ChangeKind::File
    } else {
        ChangeKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_names_the_files_and_folders_changed_since_a_position() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let cookies = tempfile::tempdir().unwrap();
        let (journal, before) = FsEvents
            .position(&root, cookies.path())
            .expect("the temporary folder's volume keeps a journal");
        std::fs::write(root.join("note.md"), "a note").unwrap();
        std::fs::create_dir(root.join("folder")).unwrap();
        // At once: the cookie makes the replay wait for the events just made.
        let changes = FsEvents
            .since(&root, before, cookies.path())
            .expect("a replay finishes");
        let named = |rel: &str, kind: ChangeKind| {
            changes
                .iter()
                .any(|c| c.path == root.join(rel) && c.kind == kind)
        };
        assert!(named("note.md", ChangeKind::File), "{changes:?}");
        assert!(named("folder", ChangeKind::Folder), "{changes:?}");
        assert!(
            changes.iter().all(|c| c.path.starts_with(&root)),
            "{changes:?}"
        );
        assert_eq!(
            std::fs::read_dir(cookies.path()).unwrap().count(),
            0,
            "cookie left"
        );
        let (same, after) = FsEvents.position(&root, cookies.path()).unwrap();
        assert_eq!(same, journal);
        assert!(after > before);
    }
}
