//! The journal of macOS: FSEvents' persistent per-volume history, replayed from an event
//! id. The replay runs a run loop, so it gets a short-lived thread of its own: the caller's
//! run loop (the app's main thread, say) is never driven from here.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use objc2_core_foundation::{kCFRunLoopDefaultMode, CFArray, CFRunLoop, CFString, CFUUID};
use objc2_core_services as fs;

use super::{Change, ChangeKind, Journal};

/// A replay that has not delivered the whole history by then is abandoned for a walk.
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
    fn position(&self, root: &Path) -> Option<(String, u64)> {
        if !local(root) {
            return None;
        }
        let device = std::fs::metadata(root).ok()?.dev();
        // SAFETY: a query by device number; a volume without a journal gives `None`.
        let uuid = unsafe { fs::FSEventsCopyUUIDForDevice(device as libc::dev_t) }?;
        let journal = CFUUID::new_string(None, Some(&uuid))?.to_string();
        // SAFETY: takes no argument; reads the system-wide event counter.
        let event = unsafe { fs::FSEventsGetCurrentEventId() };
        Some((journal, event))
    }

    fn since(&self, root: &Path, since: u64) -> Option<Vec<Change>> {
        let root = root.to_path_buf();
        std::thread::Builder::new()
            .name("brain-journal".into())
            .spawn(move || replay(&root, since))
            .ok()?
            .join()
            .ok()?
    }
}

/// Whether `root` lies on a local volume: a network share's journal holds only what this
/// Mac wrote there, not what other machines did.
fn local(root: &Path) -> bool {
    let Ok(path) = CString::new(root.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `statfs` fills the zeroed plain struct it is given from a valid C string.
    let mut fs = unsafe { std::mem::zeroed::<libc::statfs>() };
    let read = unsafe { libc::statfs(path.as_ptr(), &mut fs) } == 0;
    read && fs.f_flags & libc::MNT_LOCAL as u32 != 0
}

/// What the stream's callback has gathered so far.
#[derive(Default)]
struct Replay {
    changes: RefCell<Vec<Change>>,
    /// The history has been delivered whole (`HistoryDone`).
    done: Cell<bool>,
}

/// Every event under `root` after `since`, or `None` when the stream could not be made or
/// did not finish in time. Runs the current thread's run loop.
fn replay(root: &Path, since: u64) -> Option<Vec<Change>> {
    let run_loop = CFRunLoop::current()?;
    // SAFETY: an immutable framework constant.
    let mode = unsafe { kCFRunLoopDefaultMode }?;
    let watched = CFString::from_str(root.to_str()?);
    let paths = CFArray::from_objects(&[&*watched]);
    let state = Replay::default();
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
            fs::kFSEventStreamCreateFlagFileEvents,
        )
    };
    if stream.is_null() {
        return None;
    }
    // SAFETY: `stream` is the valid stream made above, scheduled on this thread's run loop,
    // which only this function runs; it is stopped, invalidated and released before return.
    let finished = unsafe {
        #[allow(deprecated)] // the dispatch-queue form needs a queue crate; a thread will do
        fs::FSEventStreamScheduleWithRunLoop(stream, &run_loop, mode);
        let started = fs::FSEventStreamStart(stream);
        if started {
            let deadline = Instant::now() + REPLAY_LIMIT;
            while !state.done.get() && Instant::now() < deadline {
                CFRunLoop::run_in_mode(Some(mode), 0.05, true);
            }
            // Events already made but not yet handed over (a save just before this call)
            // come now, through the callback, before this returns.
            if state.done.get() {
                fs::FSEventStreamFlushSync(stream);
            }
            fs::FSEventStreamStop(stream);
        }
        fs::FSEventStreamInvalidate(stream);
        fs::FSEventStreamRelease(stream);
        started && state.done.get()
    };
    finished.then(|| state.changes.into_inner())
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
        state.changes.borrow_mut().push(Change {
            path: PathBuf::from(OsStr::from_bytes(path.to_bytes())),
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
        let (journal, before) = FsEvents
            .position(&root)
            .expect("the temporary folder's volume keeps a journal");
        std::fs::write(root.join("note.md"), "a note").unwrap();
        std::fs::create_dir(root.join("folder")).unwrap();
        // The daemon takes the kernel's events in a moment after they happen.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let changes = FsEvents.since(&root, before).expect("a replay finishes");
            let named = |rel: &str, kind: ChangeKind| {
                changes
                    .iter()
                    .any(|c| c.path == root.join(rel) && c.kind == kind)
            };
            if named("note.md", ChangeKind::File) && named("folder", ChangeKind::Folder) {
                break;
            }
            assert!(Instant::now() < deadline, "not replayed: {changes:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
        let (same, after) = FsEvents.position(&root).unwrap();
        assert_eq!(same, journal);
        assert!(after > before);
    }
}
