//! The volume's change journal: which files changed since the last sync, asked of the
//! operating system instead of found by a walk.
//!
//! A sync without a running backend walks the whole brain first: at 100k notes that is
//! 100k `stat` calls, about 200 ms, on every `brain search --no-daemon`, MCP call or script
//! (the backend needs none of this: its watcher hears each save). macOS keeps a persistent
//! per-volume history of file-system events (FSEvents), which any process may replay from
//! an event id it was given earlier, even one that was not running when the events
//! happened. A sync that walked records where the journal stood before it began (a
//! [`Mark`] in the index's `meta` table); the next sync replays the history from there and
//! reads only the paths it names.
//!
//! The walk stays the authority, and checks the journal: a walk that finds changes replays
//! the journal over the same span, and the journal is relied on only once it has named
//! every one, and never again once it missed one ([`Mark::trusted`]), so a volume whose
//! history leaves the brain out is never relied on. The walk is also used whenever the
//! journal cannot vouch for what changed: no journal (Linux, a volume without one, a
//! network share), another journal than the one marked (the volume's history was reset,
//! the Mac restarted, the volume was mounted again), events the journal says it dropped or
//! must not be trusted for (`MustScanSubDirs`, dropped by the kernel or the daemon, ids
//! wrapped, a volume mounted or unmounted), an ignore file or a path that cannot be mapped,
//! more changed paths than a scoped sync is worth, other exclusions, size cap or release, a
//! replay that does not finish in time, a note that could not be read, and in any case once
//! [`WALK_EVERY`] has passed since the last walk, which bounds what any fault here could
//! cost to that long.
//!
//! Not handled (a walk within [`WALK_EVERY`] finds them, and then distrusts the journal):
//! an edit through a hard link from outside the brain, and a folder above the brain moved
//! away and back between two syncs.

#[cfg(target_os = "macos")]
mod fsevents;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
// A change to an ignore file alters which files are notes: the walk reads them, so a
// walk decides.
use crate::index::walk::IGNORE_FILES;

/// The `meta` key of the journal's [`Mark`].
pub(crate) const MARK_KEY: &str = "journal_mark";

/// A sync walks the whole brain at least this often (seconds), journal or not.
pub(crate) const WALK_EVERY: i64 = 600;

/// More changed paths than this and a walk is cheaper than a scoped sync (each walked entry
/// is checked against every path of a scope).
const MAX_PATHS: usize = 256;

/// Where the journal stood when a sync that can be trusted began, and what that sync assumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Mark {
    /// The identity of the volume's journal (FSEvents' UUID for the device): another value
    /// means its history was reset and says nothing about what happened before.
    pub journal: String,
    /// The journal's last event id before that sync began: the replay starts after it.
    pub event: u64,
    /// What else decides which files are notes and how they are read ([`settings`]).
    pub settings: String,
    /// When the last whole walk began (seconds since the epoch).
    pub walked_at: i64,
    /// Whether a walk that found changes has found the journal naming every one.
    pub confirmed: bool,
    /// Whether a walk has found a change the journal did not name: it is not relied on
    /// again for this brain until its identity or the settings change.
    pub missed: bool,
}

impl Mark {
    /// The mark as the index's `meta` holds it ([`MARK_KEY`]), if any and readable.
    pub fn from_meta(value: Option<String>) -> Option<Mark> {
        value.and_then(|json| serde_json::from_str(&json).ok())
    }

    /// Whether this mark was taken of the journal `journal` under `settings`: only then
    /// does it say anything of what happened since.
    pub fn is_of(&self, journal: &str, settings: &str) -> bool {
        self.journal == journal && self.settings == settings
    }

    /// Whether a sync may rely on the journal instead of a walk: confirmed, never caught
    /// missing a change (a volume whose history leaves this folder out is never relied on).
    pub fn trusted(&self) -> bool {
        self.confirmed && !self.missed
    }
}

/// What the journal says changed at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// The path as the journal gives it: absolute, symlinks resolved.
    pub path: PathBuf,
    /// What was there.
    pub kind: ChangeKind,
}

/// The kind of item a [`Change`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Made only by the macOS journal (and the tests) on other systems.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) enum ChangeKind {
    /// A file.
    File,
    /// A folder (created, removed, renamed: everything in it may have moved).
    Folder,
    /// A link, or an item the journal did not type.
    Other,
    /// The journal lost track: events were dropped, or it asks for a rescan.
    Lost,
}

/// A source of change history for the volume that holds a brain.
pub(crate) trait Journal: Sync {
    /// The journal's identity and its current event id for the volume holding `root`, or
    /// `None` when that volume keeps no journal (or `cookies`, below, cannot be used).
    fn position(&self, root: &Path, cookies: &Path) -> Option<(String, u64)>;

    /// Every change under `root` after event `since`, up to this call at least, or `None`
    /// when the journal cannot tell (an error, or a replay that did not finish in time).
    /// `cookies` is a folder of brain's own where the replay may write a file to mark the
    /// present in the stream of events.
    fn since(&self, root: &Path, since: u64, cookies: &Path) -> Option<Vec<Change>>;
}

/// The journal of this system: FSEvents on macOS, none elsewhere.
pub(crate) fn system() -> Option<&'static dyn Journal> {
    #[cfg(target_os = "macos")]
    {
        Some(&fsevents::FsEvents)
    }
    #[cfg(not(target_os = "macos"))]
    {
        None
    }
}

/// The settings a [`Mark`] holds: the brain folder as resolved, the exclusions and the size
/// cap. A change of any of them changes which files are notes, which only a walk finds out.
pub(crate) fn settings(config: &Config, root_real: &Path) -> String {
    // The version too: another release may walk by other rules. And the folder's inode:
    // another folder moved in under the same path has a history of its own.
    let version = env!("CARGO_PKG_VERSION");
    let inode = std::fs::metadata(root_real).map_or(0, |m| {
        use std::os::unix::fs::MetadataExt;
        m.ino()
    });
    let decides = (
        version,
        root_real,
        inode,
        &config.exclude,
        config.max_file_bytes,
    );
    serde_json::to_string(&decides).unwrap_or_default()
}

/// What a sync must look at, given what the journal reported.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Walk the whole brain.
    Walk,
    /// Sync only these paths (relative to the root); none means nothing changed.
    Paths(Vec<String>),
}

/// Turns the journal's changes under `root_real` into the paths a scoped sync reads.
/// Anything it cannot place asks for a walk.
pub(crate) fn plan(root_real: &Path, changes: &[Change]) -> Plan {
    let mut paths: Vec<String> = Vec::new();
    for change in changes {
        if change.kind == ChangeKind::Lost {
            return Plan::Walk;
        }
        let Some(rel) = change
            .path
            .strip_prefix(root_real)
            .ok()
            .and_then(|rel| rel.to_str())
        else {
            // Outside the root (the stream watches only the root, so some other spelling
            // of it), or a name that is not UTF-8: the walk knows what to make of it.
            return Plan::Walk;
        };
        let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        let Some((last, folders)) = parts.split_last() else {
            // The brain folder itself.
            return Plan::Walk;
        };
        // Dot-folders (.git, .obsidian) hold no notes; the walk never enters them.
        if folders.iter().any(|f| f.starts_with('.')) {
            continue;
        }
        if IGNORE_FILES.contains(last) {
            return Plan::Walk;
        }
        let wanted = match change.kind {
            ChangeKind::File => last.ends_with(".md"),
            ChangeKind::Folder => !last.starts_with('.'),
            ChangeKind::Other | ChangeKind::Lost => true,
        };
        if wanted {
            paths.push(parts.join("/"));
        }
    }
    paths.sort();
    paths.dedup();
    match paths.len() > MAX_PATHS {
        true => Plan::Walk,
        false => Plan::Paths(paths),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, kind: ChangeKind) -> Change {
        Change {
            path: PathBuf::from(path),
            kind,
        }
    }

    #[test]
    fn changed_notes_and_folders_become_paths_and_the_rest_is_left_out() {
        let root = Path::new("/Users/me/.brain");
        let changes = [
            change("/Users/me/.brain/lore/a.md", ChangeKind::File),
            change("/Users/me/.brain/lore/a.md", ChangeKind::File),
            change("/Users/me/.brain/moved", ChangeKind::Folder),
            change("/Users/me/.brain/..md", ChangeKind::File),
            change("/Users/me/.brain/link", ChangeKind::Other),
            change("/Users/me/.brain/lore/image.png", ChangeKind::File),
            change("/Users/me/.brain/lore/.a.md.swp", ChangeKind::File),
            change("/Users/me/.brain/.git/index", ChangeKind::File),
            change("/Users/me/.brain/.git/refs", ChangeKind::Folder),
            change("/Users/me/.brain/.obsidian", ChangeKind::Folder),
            change("/Users/me/.brain/.obsidian/x.md", ChangeKind::File),
            change(
                "/Users/me/.brain/.obsidian/plugins/.gitignore",
                ChangeKind::File,
            ),
        ];
        assert_eq!(
            plan(root, &changes),
            Plan::Paths(vec![
                "..md".into(),
                "link".into(),
                "lore/a.md".into(),
                "moved".into()
            ])
        );
        assert_eq!(plan(root, &[]), Plan::Paths(vec![]));
    }

    #[test]
    fn what_the_journal_cannot_vouch_for_asks_for_a_walk() {
        let root = Path::new("/Users/me/.brain");
        let walk = |c: Change| {
            plan(
                root,
                &[change("/Users/me/.brain/a.md", ChangeKind::File), c],
            )
        };
        let doubtful = [
            ("/Users/me/.brain", ChangeKind::Lost),
            ("/Users/me/.brain/x", ChangeKind::Lost),
            ("/Users/me/.brain", ChangeKind::Folder),
            ("/private/elsewhere/a.md", ChangeKind::File),
        ];
        for (path, kind) in doubtful {
            assert_eq!(walk(change(path, kind)), Plan::Walk, "{path}");
        }
        for ignore in IGNORE_FILES {
            let path = format!("/Users/me/.brain/lore/{ignore}");
            assert_eq!(
                walk(change(&path, ChangeKind::File)),
                Plan::Walk,
                "{ignore}"
            );
        }
        let many: Vec<Change> = (0..=MAX_PATHS)
            .map(|i| change(&format!("/Users/me/.brain/n{i}.md"), ChangeKind::File))
            .collect();
        assert_eq!(plan(root, &many), Plan::Walk);
        assert!(matches!(plan(root, &many[1..]), Plan::Paths(p) if p.len() == MAX_PATHS));
    }

    #[test]
    fn settings_change_with_what_decides_which_files_are_notes() {
        let root = Path::new("/r");
        let config = Config::for_root(root, root.join(".data"));
        let mut other = config.clone();
        other.exclude.push("drafts/**".into());
        let mut smaller = config.clone();
        smaller.max_file_bytes /= 2;
        let base = settings(&config, root);
        assert_ne!(base, settings(&other, root));
        assert_ne!(base, settings(&smaller, root));
        assert_ne!(base, settings(&config, Path::new("/s")));
        assert_eq!(base, settings(&config.clone(), root));
    }
}
