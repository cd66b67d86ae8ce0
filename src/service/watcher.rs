//! The file watcher: notify (inotify on Linux, FSEvents on macOS) turned into the few
//! [`Change`]s the indexer cares about: "these paths changed", "rescan everything", "look
//! at the root". Debouncing happens in the indexer, which sees the whole stream.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use notify::event::{AccessKind, AccessMode, CreateKind, EventKind, ModifyKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};

use super::cookies::Cookies;
use crate::index::walk::IGNORE_FILES;

/// What one file event means for the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// These paths (relative to the root) changed.
    Paths(Vec<String>),
    /// Events were lost or cannot be trusted: the whole folder must be looked at.
    Rescan(String),
    /// An ignore file changed (this one): which notes the walk takes may have changed, so
    /// the whole folder is walked. An edit the person made, not a failure of the watch.
    Rules(String),
    /// Something happened to the brain folder itself.
    Root,
}

/// A running watch on a brain folder; stops when dropped.
pub struct FolderWatcher {
    _inner: RecommendedWatcher,
    identity: Option<(u64, u64)>,
    cookies: Arc<Cookies>,
}

impl Drop for FolderWatcher {
    fn drop(&mut self) {
        self.cookies.set_watching(false);
    }
}

impl FolderWatcher {
    /// Watches `root` recursively, telling `notify` what changes (from notify's thread).
    /// `data_dir` is ignored (an index kept inside the notes folder must not wake its own
    /// indexer), but for the folder of `cookies`, also watched, whose files it reports there.
    pub(crate) fn start(
        root: &Path,
        data_dir: &Path,
        cookies: Arc<Cookies>,
        notify: impl Fn(Change) + Send + 'static,
    ) -> Result<FolderWatcher, String> {
        let identity = identity(root);
        // The folder a symlinked brain folder leads to is watched, under its own path:
        // not following links (below) applies to the root too, so the link itself was
        // watched and no edit inside was ever seen; and FSEvents reports real paths,
        // which the link's path is not a prefix of.
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let (root_c, data_c) = (real(root), real(data_dir));
        let watched = root_c.clone();
        let cookie_dir = real(cookies.dir());
        let (heard, heard_dir) = (cookies.clone(), cookie_dir.clone());
        let handler = move |res: notify::Result<Event>| {
            let change = match res {
                Ok(event) if is_cookie(&heard, &heard_dir, &event) => None,
                Ok(event) => classify(&root_c, &data_c, &event),
                Err(e) => Some(Change::Rescan(format!("watcher error: {e}"))),
            };
            if let Some(change) = change {
                notify(change);
            }
        };
        // Symlinks inside the brain are not followed, as the walk does not follow them. A
        // followed link to a folder of the brain watches that folder twice, and inotify
        // keeps one watch per folder: its events then came under the link's path, which
        // the walk skips, and the folder's own edits were never synced. (FSEvents reports
        // real paths and has no such setting.)
        let config = notify::Config::default().with_follow_symlinks(false);
        let mut inner = RecommendedWatcher::new(handler, config).map_err(|e| e.to_string())?;
        inner
            .watch(&watched, RecursiveMode::Recursive)
            .map_err(|e| e.to_string())?;
        // By the same watcher, so its events queue with the notes' (an index kept inside
        // the notes folder is watched already). Without it, searches do not wait.
        let cookies_watched = cookie_dir.starts_with(&watched)
            || inner
                .watch(&cookie_dir, RecursiveMode::NonRecursive)
                .inspect_err(|e| tracing::debug!(error = %e, "sync cookies not watched"))
                .is_ok();
        cookies.set_watching(cookies_watched);
        Ok(FolderWatcher {
            _inner: inner,
            identity,
            cookies,
        })
    }

    /// True while `root` is still the folder this watcher was started on (not deleted,
    /// not replaced by another folder of the same name).
    pub fn still_watching(&self, root: &Path) -> bool {
        self.identity.is_some() && identity(root) == self.identity
    }
}

/// The folder's (device, inode), when it is a folder.
pub fn identity(root: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(root)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| (m.dev(), m.ino()))
}

/// Whether `event` is about a sync cookie (in `dir`, the cookies' folder as the watcher
/// names it), told to `cookies` when one was made.
fn is_cookie(cookies: &Cookies, dir: &Path, event: &Event) -> bool {
    let created = matches!(
        event.kind,
        EventKind::Create(CreateKind::File | CreateKind::Any)
    );
    let mut any = false;
    for path in event.paths.iter().filter(|p| p.parent() == Some(dir)) {
        // Named under the folder as the cookies know it (the watcher's is resolved).
        let named = cookies.dir().join(path.file_name().unwrap_or_default());
        any |= cookies.heard_of(&named, created);
    }
    any
}

/// What one notify event means for the index, if anything.
fn classify(root: &Path, data_dir: &Path, event: &Event) -> Option<Change> {
    if event.need_rescan() {
        return Some(Change::Rescan("file events overflowed".into()));
    }
    let kind = event.kind;
    let structural = matches!(
        kind,
        EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
    );
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
        // Opens and reads, including the indexer's own.
        EventKind::Access(_) => return None,
        _ => {}
    }
    let mut paths = Vec::new();
    for path in &event.paths {
        match relevance(root, data_dir, path, structural) {
            Relevance::Ignore => {}
            Relevance::Note(rel) => paths.push(rel),
            Relevance::Rules => return Some(Change::Rules(path.display().to_string())),
            Relevance::Root => return Some(Change::Root),
        }
    }
    (!paths.is_empty()).then_some(Change::Paths(paths))
}

#[derive(Debug, PartialEq, Eq)]
enum Relevance {
    Ignore,
    /// A note, or a folder that may hold notes, at this relative path.
    Note(String),
    /// An ignore file: which files are notes may have changed.
    Rules,
    /// The brain folder itself.
    Root,
}

/// Sorts a changed path. `structural` events (removal, rename) keep paths of any name: a
/// folder that disappears takes its notes with it, whatever it was called.
fn relevance(root: &Path, data_dir: &Path, path: &Path, structural: bool) -> Relevance {
    if path == root {
        return Relevance::Root;
    }
    if path.starts_with(data_dir) {
        return Relevance::Ignore;
    }
    let Ok(rel) = path.strip_prefix(root) else {
        return Relevance::Ignore;
    };
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    if parts.len() != rel.components().count() || parts.is_empty() {
        return Relevance::Ignore;
    }
    let (name, dirs) = parts
        .split_last()
        .map(|(n, d)| (*n, d))
        .unwrap_or(("", &[]));
    if dirs.iter().any(|d| d.starts_with('.')) {
        return Relevance::Ignore;
    }
    if IGNORE_FILES.contains(&name) {
        return Relevance::Rules;
    }
    // The walk's rules: a dot-file note is a note (tldr's `..md`), an Emacs lock `.#x.md`
    // is not, and other dot-files (`.DS_Store`, a vim swap) are not notes. Ignoring every
    // dot-file, the backend never saw `.draft.md` made, changed or deleted, and answered
    // from an index the next `--no-daemon` sync disagreed with.
    if crate::index::walk::is_editor_lock(name) || (name.starts_with('.') && !name.ends_with(".md"))
    {
        return Relevance::Ignore;
    }
    let is_note = name.ends_with(".md");
    if is_note || structural || PathBuf::from(path).is_dir() {
        Relevance::Note(parts.join("/"))
    } else {
        Relevance::Ignore
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, RemoveKind, RenameMode};

    fn ev(kind: EventKind, paths: &[&str]) -> Event {
        let mut e = Event::new(kind);
        for p in paths {
            e = e.add_path(PathBuf::from(p));
        }
        e
    }

    fn changed(change: Option<Change>) -> Vec<String> {
        match change {
            Some(Change::Paths(p)) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn notes_pass_and_noise_does_not() {
        let (root, data) = (Path::new("/b"), Path::new("/b/.data"));
        let modify = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        assert_eq!(
            changed(classify(root, data, &ev(modify, &["/b/lore/x.md"]))),
            ["lore/x.md"]
        );
        // A dot-file note is a note to the walk, so to the watcher too, made or deleted.
        assert_eq!(
            changed(classify(root, data, &ev(modify, &["/b/lore/.draft.md"]))),
            ["lore/.draft.md"]
        );
        let gone = EventKind::Remove(RemoveKind::File);
        assert_eq!(
            changed(classify(root, data, &ev(gone, &["/b/.draft.md"]))),
            [".draft.md"]
        );
        for noise in [
            "/b/lore/.#x.md",
            "/b/.DS_Store",
            "/b/lore/.x.md.swp",
            "/b/.git/index",
            "/b/lore/x.md~",
            "/b/.data/brain.sqlite",
            "/elsewhere/y.md",
        ] {
            assert!(
                classify(root, data, &ev(modify, &[noise])).is_none(),
                "{noise}"
            );
        }
        let read = EventKind::Access(AccessKind::Open(notify::event::AccessMode::Read));
        assert!(classify(root, data, &ev(read, &["/b/lore/x.md"])).is_none());
    }

    #[test]
    fn removals_and_renames_keep_any_name() {
        let (root, data) = (Path::new("/b"), Path::new("/d"));
        let rename = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
        assert_eq!(
            changed(classify(root, data, &ev(rename, &["/b/old", "/b/v1.2"]))),
            ["old", "v1.2"]
        );
        let gone = EventKind::Remove(RemoveKind::Folder);
        assert_eq!(
            changed(classify(root, data, &ev(gone, &["/b/lore"]))),
            ["lore"]
        );
        assert!(classify(
            root,
            data,
            &ev(EventKind::Create(CreateKind::File), &["/b/notes.txt"])
        )
        .is_none());
    }

    #[test]
    fn rules_root_and_overflow_are_special() {
        let (root, data) = (Path::new("/b"), Path::new("/d"));
        let any = EventKind::Any;
        // Every ignore file the walk reads: `.ignore` went unheard once, so the backend
        // searched a note the walk left out until something else made it walk.
        for rules in ["/b/lore/.brainignore", "/b/.gitignore", "/b/sub/.ignore"] {
            assert_eq!(
                classify(root, data, &ev(any, &[rules])),
                Some(Change::Rules(rules.into())),
                "{rules}"
            );
        }
        assert!(matches!(
            classify(root, data, &ev(EventKind::Remove(RemoveKind::Any), &["/b"])),
            Some(Change::Root)
        ));
        let overflow = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(matches!(
            classify(root, data, &overflow),
            Some(Change::Rescan(_))
        ));
    }
}
