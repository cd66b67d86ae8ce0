//! Finding the notes under a brain root: every `*.md`, minus dot-folders, `.gitignore` /
//! `.brainignore` entries and the configured non-notes. Only `stat` is called here (and an
//! open of each ignore file, to know its rules can be read), so a walk of thousands of
//! notes stays cheap enough to run before every search.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;

use crate::config::Config;
use crate::error::{Error, Result};

/// brain's own ignore file, read like `.gitignore` (for what git should keep but brain
/// should not search).
const BRAINIGNORE: &str = ".brainignore";

/// The files whose rules decide which files are notes: the walk honours all three (the
/// `ignore` crate reads `.ignore` as ripgrep does), so whatever watches the folder must
/// treat a change to any of them as a change to the set of notes.
pub const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", BRAINIGNORE];

/// A note file as seen by `stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    /// Path relative to the root, `/`-separated.
    pub rel: String,
    /// Absolute path.
    pub abs: PathBuf,
    /// Modification time in nanoseconds since the epoch (may be negative for old files).
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: u64,
    /// Whether its owner, group and mode let this process read it (ACLs aside). A `chmod`
    /// moves neither the time nor the size: a note made unreadable after it was indexed is
    /// read again by each sync (and said unreadable) only because of this.
    pub readable: bool,
}

/// The outcome of a walk: the files found and what had to be skipped, and why.
#[derive(Debug, Default)]
pub struct Walk {
    /// Note files, sorted by relative path.
    pub files: Vec<FileStat>,
    /// One line per problem (unreadable folder, symlink loop, ...), naming the path.
    pub warnings: Vec<String>,
    /// Folders (relative to the root; `""` for the whole brain) that were not read: they
    /// could not be listed for lack of permission, or their ignore files cannot be
    /// trusted. Their notes are not gone, so a sync keeps them as last indexed.
    pub unreadable: Vec<String>,
}

/// The most an ignore file may hold: the `ignore` crate reads one whole, so a link to
/// `/dev/zero` named `.brainignore` read until memory ran out.
const IGNORE_FILE_MAX_BYTES: u64 = 8 << 20;

/// Why the ignore files of `dir` cannot be trusted, if they cannot: one that is a pipe or
/// a device (the `ignore` crate's read of a FIFO blocked every sync forever), too large,
/// or unreadable (the crate then walked on without its rules, and a `.brainignore` the
/// person could not read let the notes it excludes into the index).
fn ignore_file_problem(dir: &Path) -> Option<String> {
    for name in IGNORE_FILES {
        let file = dir.join(name);
        if file.symlink_metadata().is_err() {
            continue;
        }
        return Some(match crate::file::open_regular(&file) {
            // A link to nowhere holds no rules, as no file would.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                format!("{name} is not a regular file (a folder, a pipe or a device)")
            }
            // A link into a folder brain may not enter, a loop, no permission: rules it
            // cannot read.
            Err(e) => format!("{name} cannot be read ({e})"),
            Ok((_, size)) if size > IGNORE_FILE_MAX_BYTES => format!(
                "{name} is {:.1} MiB, over the {} MiB an ignore file may be",
                crate::config::megabytes(size),
                IGNORE_FILE_MAX_BYTES >> 20
            ),
            Ok(_) => continue,
        });
    }
    None
}

impl Walk {
    /// Why the note `rel` was not read, when a folder over it was held back (an ignore
    /// file brain cannot trust, a folder it may not enter): the walk's line for that
    /// folder. `None` when no such folder holds it.
    pub fn why_held_back(&self, rel: &str) -> Option<String> {
        let dir = self.unreadable.iter().find(|dir| covers(dir, rel))?;
        let named = folder_named(dir);
        let why = self.warnings.iter().find(|l| l.starts_with(&named));
        Some(why.or(self.warnings.first()).cloned().unwrap_or(named))
    }
}

/// A folder as the walk's lines name it: `lore/`, or the brain folder itself for `""`.
fn folder_named(dir: &str) -> String {
    match dir.is_empty() {
        true => "the brain folder".to_string(),
        false => format!("{dir}/"),
    }
}

/// Whether `rel` lies in one of the `unreadable` folders of a [`Walk`].
pub fn under_any(unreadable: &[String], rel: &str) -> bool {
    unreadable.iter().any(|dir| covers(dir, rel))
}

/// The folder `e` could not list for lack of permission, relative to `root`.
fn unreadable_folder(root: &Path, e: &ignore::Error) -> Option<String> {
    match e {
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            unreadable_folder(root, err)
        }
        ignore::Error::WithPath { path, err } => match err.as_ref() {
            // A folder: a link to a file brain may not read is an unreadable note, not this.
            // One whose own `stat` is refused lies in a folder that can be listed but not
            // entered (the brain folder itself, mode r--): it is unreadable all the same.
            ignore::Error::Io(io)
                if io.kind() == std::io::ErrorKind::PermissionDenied
                    && std::fs::metadata(path).map_or_else(
                        |e| e.kind() == std::io::ErrorKind::PermissionDenied,
                        |m| m.is_dir(),
                    ) =>
            {
                relative(root, path).filter(|rel| !rel.is_empty())
            }
            other => unreadable_folder(root, other),
        },
        _ => None,
    }
}

/// Checks that the root exists and is a readable directory.
pub fn check_root(root: &Path) -> Result<()> {
    match std::fs::metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::RootMissing {
            path: root.to_path_buf(),
        }),
        Err(e) => Err(Error::RootUnreadable {
            path: root.to_path_buf(),
            reason: e.to_string(),
        }),
        Ok(m) if !m.is_dir() => Err(Error::RootUnreadable {
            path: root.to_path_buf(),
            reason: "not a directory".into(),
        }),
        Ok(_) => std::fs::read_dir(root)
            .map(|_| ())
            .map_err(|e| Error::RootUnreadable {
                path: root.to_path_buf(),
                reason: e.to_string(),
            }),
    }
}

/// A part of a brain: files and folders named by their paths relative to the root. A walk
/// or a sync limited to a scope reads nothing outside it, yet still honours every ignore
/// file on the way down from the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// Sorted, `/`-separated, none inside another; `[""]` is the whole brain.
    paths: Vec<String>,
    /// Every path given, sorted, those inside another kept: what [`Scope::names`] answers.
    named: Vec<String>,
}

impl Scope {
    /// The whole brain.
    pub fn everything() -> Scope {
        Scope {
            paths: vec![String::new()],
            named: Vec::new(),
        }
    }

    /// The given relative paths (files or folders, existing or not). An empty path or `.`
    /// means the whole brain; a path inside another one given is dropped as redundant.
    pub fn new<S: AsRef<str>>(paths: impl IntoIterator<Item = S>) -> Scope {
        let mut clean: Vec<String> = paths
            .into_iter()
            .map(|p| {
                let parts: Vec<&str> = p
                    .as_ref()
                    .split('/')
                    .filter(|c| !c.is_empty() && *c != ".")
                    .collect();
                parts.join("/")
            })
            .collect();
        clean.sort();
        clean.dedup();
        let mut paths: Vec<String> = Vec::with_capacity(clean.len());
        for p in &clean {
            // Sorted order puts a folder right before what it contains.
            if !paths.last().is_some_and(|parent| covers(parent, p)) {
                paths.push(p.clone());
            }
        }
        clean.retain(|p| !p.is_empty());
        Scope {
            paths,
            named: clean,
        }
    }

    /// True when the scope is the whole brain.
    pub fn is_everything(&self) -> bool {
        self.paths.iter().any(|p| p.is_empty())
    }

    /// True when nothing is in scope.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The paths, as normalised.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// True when `rel` is one of the paths or lies inside one.
    pub fn contains(&self, rel: &str) -> bool {
        self.paths.iter().any(|p| covers(p, rel))
    }

    /// True when `rel` was given itself (a file the watcher saw written), not only a folder
    /// holding it: `rsync -a` into a folder names both the files and the folder, whose
    /// times it sets last.
    pub fn names(&self, rel: &str) -> bool {
        self.named.binary_search_by(|p| p.as_str().cmp(rel)).is_ok()
    }

    /// True when the folder `rel` must be entered to reach something in scope.
    fn leads_to(&self, rel: &str) -> bool {
        self.paths
            .iter()
            .any(|p| p.len() > rel.len() && p.starts_with(rel) && p.as_bytes()[rel.len()] == b'/')
    }
}

/// Emacs's lock `.#note.md` beside a note with unsaved changes (a dangling link, or a small
/// file where links cannot be made): never a note, skipped without a warning on every sync
/// while it is open.
pub fn is_editor_lock(name: &str) -> bool {
    name.starts_with(".#")
}

/// True when `rel` is `base` or lies inside it (`""` covers everything).
fn covers(base: &str, rel: &str) -> bool {
    base.is_empty()
        || rel == base
        || (rel.starts_with(base) && rel.as_bytes().get(base.len()) == Some(&b'/'))
}

/// Whether any `.md` file lies under `root` outside dot-folders (ignore files and
/// exclusions not read; symlinks not followed); stops at the first. An empty index over a
/// folder without one needs notes, not `brain index`.
pub fn holds_any_note(root: &Path) -> bool {
    WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_some_and(|t| t.is_dir())
                    && e.file_name().to_str().is_some_and(|n| n.starts_with('.')))
        })
        .build()
        .filter_map(std::result::Result::ok)
        .any(|e| {
            e.file_type().is_some_and(|t| t.is_file())
                && e.path().extension().is_some_and(|x| x == "md")
        })
}

/// Lists the note files under `config.root`.
pub fn walk(config: &Config) -> Result<Walk> {
    walk_scoped(config, &Scope::everything())
}

/// Lists the note files under `config.root` that lie in `scope`, descending only into the
/// folders that lead there.
pub fn walk_scoped(config: &Config, scope: &Scope) -> Result<Walk> {
    let root = &config.root;
    check_root(root)?;
    let overrides = crate::config::exclude_overrides(root, &config.exclude)?;
    // Its rules would be read before any filter could look: nothing is walked, and every
    // note stays as last indexed (none is added that the rules may exclude).
    if let Some(why) = ignore_file_problem(root) {
        return Ok(Walk {
            warnings: vec![format!(
                "the brain folder's {why}; no note is read until it is fixed (notes are kept as last indexed)"
            )],
            unreadable: vec![String::new()],
            ..Walk::default()
        });
    }

    // A symlink is never followed. One to outside the brain: `brain get` refuses what lies
    // outside, so the index must not show it in snippets either (said once per sync). One
    // to inside: an alias of notes the walk meets under their own paths, which indexed
    // would be every note twice (two hits, each its own duplicate in `similar`) with one of
    // the two paths left stale by a watcher that reports a change under the other.
    let root_real = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let outside = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let (outside_seen, base) = (outside.clone(), root.clone());
    // Folders whose ignore files cannot be trusted, and why: not entered, notes kept.
    let distrusted = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let distrusted_seen = distrusted.clone();
    // One filter for everything: `filter_entry` replaces the filter set before it, so a
    // second call for the scope would drop the dot-folder and symlink rules.
    let scoped = (!scope.is_everything()).then(|| scope.clone());
    let mut builder = WalkBuilder::new(root);
    builder
        // Dot-folders (.git, .obsidian, .trash) hold no notes; dot-files may (tldr's `..md`).
        .hidden(false)
        .filter_entry(move |e| {
            if e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name().to_str().is_some_and(|n| n.starts_with('.'))
            {
                return false;
            }
            if e.depth() > 0 && e.file_name().to_str().is_some_and(is_editor_lock) {
                return false;
            }
            if e.depth() > 0 && e.path_is_symlink() {
                let why = match std::fs::canonicalize(e.path()) {
                    Ok(real) if real.starts_with(&root_real) => return false,
                    Ok(_) => "a symlink to outside the brain folder",
                    Err(_) => "a symlink that leads nowhere (dangling, or a loop)",
                };
                let rel = relative(&base, e.path()).unwrap_or_default();
                let mut seen = outside_seen.lock().unwrap_or_else(|p| p.into_inner());
                seen.push(format!("{rel}: skipped: {why}"));
                return false;
            }
            let in_scope = match &scoped {
                None => true,
                Some(scope) => match relative(&base, e.path()) {
                    Some(rel) => rel.is_empty() || scope.contains(&rel) || scope.leads_to(&rel),
                    None => false,
                },
            };
            // Only a folder the walk would enter: a scoped sync must not report (and hold
            // back) folders it was not asked about.
            if in_scope && e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir()) {
                if let Some(why) = ignore_file_problem(e.path()) {
                    // A name that is not UTF-8 holds no note the index can key: skipped, not
                    // recorded as "" (which would hold back the whole brain).
                    if let Some(rel) = relative(&base, e.path()).filter(|r| !r.is_empty()) {
                        let mut seen = distrusted_seen.lock().unwrap_or_else(|p| p.into_inner());
                        seen.push((rel, why));
                    }
                    return false;
                }
            }
            in_scope
        })
        .parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        // Symlinks are judged by the filter above, by what they point at, never walked.
        .follow_links(false)
        .add_custom_ignore_filename(BRAINIGNORE)
        .overrides(overrides.clone());
    // Two or more threads: at 100k notes a walk is mostly `stat` calls, which the kernel
    // answers in parallel, and every `brain search` without a backend walks first.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let found = std::sync::Mutex::new(Walk::default());
    builder.threads(threads).build_parallel().run(|| {
        let (found, root, overrides) = (&found, root.as_path(), &overrides);
        let mut folder = Folder::default();
        Box::new(move |entry| {
            if let Some(dir) = entry
                .as_ref()
                .err()
                .and_then(|e| unreadable_folder(root, e))
            {
                let mut out = found.lock().unwrap_or_else(|p| p.into_inner());
                out.warnings.push(format!(
                    "{dir}/: not read: permission denied; its notes are kept as last indexed"
                ));
                out.unreadable.push(dir);
                return ignore::WalkState::Continue;
            }
            if let Some(seen) = visit(root, entry, &mut folder, overrides) {
                let mut out = found.lock().unwrap_or_else(|p| p.into_inner());
                match seen {
                    Seen::File(file) => out.files.push(file),
                    Seen::Warning(warning) => out.warnings.push(warning),
                    Seen::Unsearchable(dir) => {
                        let named = folder_named(&dir);
                        out.warnings.push(format!(
                            "{named}: not read: permission denied (it can be listed, not entered); its notes are kept as last indexed"
                        ));
                        out.unreadable.push(dir);
                    }
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut out = found.into_inner().unwrap_or_else(|p| p.into_inner());
    // Threads finish folders in any order; sorted warnings read the same on every run.
    // An unsearchable folder is met once per file in it, and said once.
    out.warnings.sort();
    out.warnings.dedup();
    out.unreadable.sort();
    out.unreadable.dedup();
    out.files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    out.files.dedup_by(|a, b| a.rel == b.rel);
    let outside = std::mem::take(&mut *outside.lock().unwrap_or_else(|p| p.into_inner()));
    out.warnings.extend(outside);
    let mut distrusted = std::mem::take(&mut *distrusted.lock().unwrap_or_else(|p| p.into_inner()));
    distrusted.sort();
    for (dir, why) in distrusted {
        out.warnings.push(format!(
            "{dir}/{why}; the folder is not read until it is fixed (its notes are kept as last indexed)"
        ));
        out.unreadable.push(dir);
    }
    out.unreadable.sort();
    out.unreadable.dedup();
    Ok(out)
}

/// What one walked entry turned out to be.
enum Seen {
    /// A note file.
    File(FileStat),
    /// Something skipped, and why.
    Warning(String),
    /// A file in a folder that lists its names but lets nobody in (mode `r--`): the
    /// folder, relative to the root, whose notes are there but cannot be read.
    Unsearchable(String),
}

/// Why a file that its owner surely meant as a note is not one, or `None`. Only names
/// ending in `.md` are notes (links, `brain new` and `get` say so too); `Note.MD` and a
/// file named `.md` were skipped without a word, which on a Mac, where `Note.MD` opens as
/// markdown, reads as a lost note.
/// A name the exclusions (`README.md`, `drafts/*.md`) would skip once renamed is left
/// alone: renaming it would index nothing, and a `README.MD` is no lost note.
fn not_quite_a_note(
    root: &Path,
    path: &Path,
    excluded: &ignore::overrides::Override,
) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    if name == ".md" {
        return Some(
            "a note needs a name before .md; rename it (e.g. to note.md) to index it".into(),
        );
    }
    let (stem, ext) = name.rsplit_once('.')?;
    if ext == "md" || !ext.eq_ignore_ascii_case("md") || stem.is_empty() {
        return None;
    }
    let renamed = path.with_file_name(format!("{stem}.md"));
    // A type folder's own SCHEMA.md and INDEX.md are no notes; deeper, they are.
    let kb_file = relative(root, &renamed).is_some_and(|rel| is_kb_file(&rel));
    let skipped = excluded.matched(&renamed, false).is_ignore() || kb_file;
    (!skipped).then(|| {
        format!("only names ending in lowercase .md are notes; rename it to {stem}.md to index it")
    })
}

/// What one walked entry is, or `None` for nothing worth keeping.
fn visit(
    root: &Path,
    entry: std::result::Result<ignore::DirEntry, ignore::Error>,
    folder: &mut Folder,
    excluded: &ignore::overrides::Override,
) -> Option<Seen> {
    let entry = match entry {
        Ok(e) => e,
        Err(e) => return Some(Seen::Warning(format!("skipped: {e}"))),
    };
    let kind = entry.file_type()?;
    if !kind.is_file() {
        // A named pipe, socket or device named like a note is never read (a pipe would
        // wait for a writer), and said, as every other file skipped is.
        let odd = !kind.is_dir() && !kind.is_symlink();
        if odd && entry.path().extension().is_some_and(|e| e == "md") {
            let path = entry.path();
            let shown = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
            return Some(Seen::Warning(format!(
                "{shown}: skipped: not a regular file (a named pipe, socket or device)"
            )));
        }
        return None;
    }
    let path = entry.path();
    if let Some(why) = not_quite_a_note(root, path, excluded) {
        let shown = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
        return Some(Seen::Warning(format!("{shown}: skipped: {why}")));
    }
    if path.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let Some(rel) = relative(root, path) else {
        // The index keys notes by their path as text; one that is not UTF-8 cannot be a key.
        let shown = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
        return Some(Seen::Warning(format!(
            "{shown}: skipped: the file name is not UTF-8; rename it to index it"
        )));
    };
    if is_kb_file(&rel) {
        return None;
    }
    match folder.stat(path) {
        Ok((mtime_ns, size, readable)) => Some(Seen::File(FileStat {
            mtime_ns,
            size,
            readable,
            abs: path.to_path_buf(),
            rel,
        })),
        // Deleted between the directory listing and the stat: it is simply not there.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // A `stat` needs the folder's search permission only: the folder is the problem,
        // and its notes must not read as deleted.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(Seen::Unsearchable(
            rel.rsplit_once('/').map_or("", |(dir, _)| dir).to_string(),
        )),
        Err(e) => Some(Seen::Warning(format!("{rel}: skipped: {e}"))),
    }
}

/// The folder a walker thread last took a file from, kept open so that each `stat` names
/// the file relative to it: the kernel then looks up one name, not every component of the
/// full path again (at 100k notes those lookups were a fifth of a sync that finds nothing).
/// A thread is handed a folder's entries in a row, so one open serves most of them.
#[derive(Default)]
struct Folder {
    #[cfg(unix)]
    open: Option<(PathBuf, rustix::fd::OwnedFd)>,
}

impl Folder {
    /// The modification time (as [`mtime_ns`] gives it) and size of the file at `path`,
    /// and whether its mode lets this process read it, following a symlink as
    /// `std::fs::metadata` does.
    #[cfg(unix)]
    fn stat(&mut self, path: &Path) -> std::io::Result<(i64, u64, bool)> {
        use rustix::fs::{AtFlags, Mode, OFlags};
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return std_stat(path);
        };
        // Bytes, not `Path`'s `==`, which compares component by component.
        if self
            .open
            .as_ref()
            .is_none_or(|(p, _)| p.as_os_str() != parent.as_os_str())
        {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            match rustix::fs::open(parent, flags, Mode::empty()) {
                Ok(fd) => self.open = Some((parent.to_path_buf(), fd)),
                // A folder that cannot be opened (searchable but not readable): the full
                // path still works.
                Err(_) => {
                    self.open = None;
                    return std_stat(path);
                }
            }
        }
        let Some((_, fd)) = &self.open else {
            return std_stat(path);
        };
        let st = rustix::fs::statat(fd, name, AtFlags::empty())?;
        // The same arithmetic as `mtime_ns` on std's `SystemTime`, which is built from
        // these two fields: whole seconds (negative before 1970) plus nanoseconds.
        #[allow(clippy::unnecessary_cast)]
        let mtime_ns = st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64;
        #[allow(clippy::unnecessary_cast)]
        Ok((
            mtime_ns,
            st.st_size as u64,
            lets_read(st.st_mode as u32, st.st_uid as u32, st.st_gid as u32),
        ))
    }

    /// Elsewhere: the full path.
    #[cfg(not(unix))]
    fn stat(&mut self, path: &Path) -> std::io::Result<(i64, u64, bool)> {
        std_stat(path)
    }
}

/// The modification time and size of the file at `path`, by its full path, and whether
/// its mode lets this process read it.
fn std_stat(path: &Path) -> std::io::Result<(i64, u64, bool)> {
    let meta = std::fs::metadata(path)?;
    #[cfg(unix)]
    let readable = {
        use std::os::unix::fs::MetadataExt;
        lets_read(meta.mode(), meta.uid(), meta.gid())
    };
    #[cfg(not(unix))]
    let readable = true;
    Ok((mtime_ns(&meta), meta.len(), readable))
}

/// Whether this process reads files whatever their mode bits say: root, with (on Linux)
/// the capability to (a root that dropped it, in a container or under `setpriv`, is held
/// to the bits, as anyone else). Read once.
#[cfg(unix)]
fn reads_past_the_bits() -> bool {
    // SAFETY: takes nothing, cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        // CAP_DAC_OVERRIDE (1) or CAP_DAC_READ_SEARCH (2) among the effective ones.
        let caps = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("CapEff:"))
                    .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            });
        caps.is_none_or(|c| c & 0b110 != 0)
    }
    #[cfg(not(target_os = "linux"))]
    true
}

/// Whether a file of `mode`, owned by `uid` and `gid`, may be read by this process, from
/// the bits alone (no call per file: a sync stats 100k of them). Root reads anything
/// ([`reads_past_the_bits`]; one without the capability is held to the bits); where an
/// ACL reads past them, that file is read again each sync and found the same; an ACL that
/// refuses what the bits grant is not seen until the file changes.
#[cfg(unix)]
fn lets_read(mode: u32, uid: u32, gid: u32) -> bool {
    // This process's ids, read once; `None` for one that reads past the bits.
    static IDS: std::sync::OnceLock<Option<(u32, u32, Vec<u32>)>> = std::sync::OnceLock::new();
    let ids = IDS.get_or_init(|| {
        if reads_past_the_bits() {
            return None;
        }
        // SAFETY: these calls take no pointers but `getgroups`'s, which is given a buffer
        // of the length it is told, and cannot fail but for a too-small buffer.
        unsafe {
            let mut groups =
                vec![0 as libc::gid_t; libc::getgroups(0, std::ptr::null_mut()).max(0) as usize];
            let n = libc::getgroups(groups.len() as libc::c_int, groups.as_mut_ptr());
            groups.truncate(n.max(0) as usize);
            Some((libc::geteuid(), libc::getegid(), groups))
        }
    });
    let Some((euid, egid, groups)) = ids else {
        return true;
    };
    if uid == *euid {
        mode & 0o400 != 0
    } else if gid == *egid || groups.contains(&gid) {
        mode & 0o040 != 0
    } else {
        mode & 0o004 != 0
    }
}

/// A type folder's `SCHEMA.md` or `INDEX.md`: the knowledge base's own files, never notes,
/// whatever `exclude` says (a person who sets `exclude` replaces the defaults).
pub(crate) fn is_kb_file(rel: &str) -> bool {
    matches!(rel.split_once('/'), Some((_, name)) if name == crate::kb::schema::SCHEMA_FILE || name == crate::kb::index_md::INDEX_FILE)
}

/// `path` relative to `root` with `/` separators, or `None` when it is not valid UTF-8.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    // Where `/` is the separator the path is already in shape: one copy, no split and join
    // (this runs once per note on every sync). `.` and doubled separators never come from
    // a walk, but callers may pass them, so those take the general path.
    if std::path::MAIN_SEPARATOR == '/' {
        let s = rel.to_str()?;
        if !s.contains("//") && !s.starts_with("./") && !s.contains("/./") && !s.ends_with('/') {
            return Some(s.to_owned());
        }
    }
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Modification time in nanoseconds since the epoch; files from before 1970 go negative.
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    match meta.modified() {
        Ok(t) => match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i64,
            Err(e) => -(e.duration().as_nanos() as i64),
        },
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Another user's note of mode 0600 is readable to a root that reads past the bits
    /// (it was read again by every sync, a search at 3,000 such notes 10 -> 30 ms), and
    /// unreadable to anyone else by them.
    #[test]
    #[cfg(unix)]
    fn the_mode_bits_say_who_reads_a_note() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let note = dir.path().join("theirs.md");
        fs::write(&note, "# Theirs\n").unwrap();
        fs::set_permissions(&note, fs::Permissions::from_mode(0o600)).unwrap();
        let mine = std_stat(&note).unwrap().2;
        assert!(mine, "the owner reads a 0600 note");
        fs::set_permissions(&note, fs::Permissions::from_mode(0o000)).unwrap();
        assert_eq!(std_stat(&note).unwrap().2, reads_past_the_bits());
        // SAFETY: takes nothing, cannot fail.
        let euid = unsafe { libc::geteuid() };
        if euid == 0 {
            let path = std::ffi::CString::new(note.as_os_str().as_encoded_bytes()).unwrap();
            fs::set_permissions(&note, fs::Permissions::from_mode(0o600)).unwrap();
            // SAFETY: a NUL-terminated path that outlives the call, and two ids.
            assert_eq!(unsafe { libc::chown(path.as_ptr(), 65534, 65534) }, 0);
            assert_eq!(std_stat(&note).unwrap().2, reads_past_the_bits());
        }
    }

    fn names(w: &Walk) -> Vec<&str> {
        w.files.iter().map(|f| f.rel.as_str()).collect()
    }

    /// Writes `text` at each of `paths` under `root`, making their folders.
    fn write_all(root: &Path, paths: &[&str], text: &str) {
        for p in paths {
            let path = root.join(p);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
        }
    }

    #[test]
    fn finds_notes_and_skips_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_all(
            root,
            &[
                "lore/a.md",
                "idea/b.md",
                "c.md",
                "README.md",
                "INDEX.md",
                "lore/MEMORY.md",
                "raw/x.md",
                "lore/attachments/y.md",
                ".git/z.md",
                ".hidden/h.md",
                "notes.txt",
                "ignored/i.md",
                "secret.md",
                "..md",
            ],
            "x",
        );
        fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        fs::write(root.join(".brainignore"), "secret.md\n").unwrap();
        let config = Config::for_root(root, root.join("data"));
        let w = walk(&config).unwrap();
        assert_eq!(names(&w), vec!["..md", "c.md", "idea/b.md", "lore/a.md"]);
    }

    /// An ignore file that is a pipe, a device or unreadable: its folder is not entered and
    /// its notes are kept as last indexed (a FIFO blocked every sync forever; `/dev/zero`
    /// was read until memory ran out; an unreadable `.brainignore` let what it excludes in).
    #[test]
    fn an_ignore_file_that_cannot_be_read_as_one_keeps_its_folder_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_all(root, &["a.md", "private/p.md", "dev/d.md"], "x");
        crate::file::mkfifo(&root.join("private/.brainignore"));
        std::os::unix::fs::symlink("/dev/zero", root.join("dev/.ignore")).unwrap();
        let config = Config::for_root(root, root.join("data"));
        let w = walk(&config).unwrap();
        assert_eq!(names(&w), vec!["a.md"]);
        assert_eq!(w.unreadable, vec!["dev", "private"]);
        assert!(
            w.warnings
                .iter()
                .any(|l| l.starts_with("private/.brainignore is not a regular file")),
            "{:?}",
            w.warnings
        );
        // A walk of another folder neither reports nor holds them back.
        let w = walk_scoped(&config, &Scope::new(["a.md"])).unwrap();
        assert_eq!(names(&w), vec!["a.md"]);
        assert!(w.unreadable.is_empty() && w.warnings.is_empty(), "{w:?}");
        // A link that loops is rules that cannot be read, as an unreadable file is.
        fs::create_dir(root.join("loop")).unwrap();
        fs::write(root.join("loop/l.md"), "x").unwrap();
        std::os::unix::fs::symlink(".brainignore", root.join("loop/.brainignore")).unwrap();
        assert_eq!(
            walk(&config).unwrap().unreadable,
            vec!["dev", "loop", "private"]
        );
        // At the root: nothing is walked, every note kept.
        std::os::unix::fs::symlink("/dev/zero", root.join(".gitignore")).unwrap();
        let w = walk(&config).unwrap();
        assert!(w.files.is_empty());
        assert_eq!(w.unreadable, vec![""]);
        assert!(w.warnings[0].starts_with("the brain folder's .gitignore is not a regular file"));
    }

    #[test]
    fn logseq_copies_of_pages_are_not_notes() {
        let dir = tempfile::tempdir().unwrap();
        write_all(
            dir.path(),
            &[
                "pages/retry.md",
                "logseq/bak/pages/retry/2026_12_01_10_00_00.Desktop.md",
                "logseq/version-files/base/pages/retry.md",
                "logseq/custom.md",
                "notes/logseq/bak/kept.md",
            ],
            "# Retry",
        );
        let config = Config::for_root(dir.path(), dir.path().join("data"));
        // Only the graph's own backups: a `logseq/bak` deeper in is someone's folder.
        assert_eq!(
            names(&walk(&config).unwrap()),
            vec![
                "logseq/custom.md",
                "notes/logseq/bak/kept.md",
                "pages/retry.md"
            ]
        );
    }

    #[test]
    fn exclusions_are_configurable() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("README.md"), "x").unwrap();
        fs::write(dir.path().join("draft.md"), "x").unwrap();
        let mut config = Config::for_root(dir.path(), dir.path().join("data"));
        fs::create_dir_all(dir.path().join("lore/deep")).unwrap();
        for kb in ["lore/SCHEMA.md", "lore/INDEX.md", "lore/deep/INDEX.md"] {
            fs::write(dir.path().join(kb), "x").unwrap();
        }
        config.exclude = vec!["draft.md".into()];
        // A type folder's SCHEMA.md and INDEX.md stay out; a deeper INDEX.md is a note.
        assert_eq!(
            names(&walk(&config).unwrap()),
            vec!["README.md", "lore/deep/INDEX.md"]
        );
    }

    #[test]
    fn a_symlink_out_of_the_brain_is_skipped_with_a_warning_and_one_inside_is_an_alias() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        fs::create_dir_all(root.join("lore")).unwrap();
        fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        fs::write(dir.path().join("secret.md"), "# secret").unwrap();
        fs::write(dir.path().join("elsewhere/x.md"), "# x").unwrap();
        fs::write(root.join("lore/real.md"), "# real").unwrap();
        let link =
            |to: &std::path::Path, at: &str| std::os::unix::fs::symlink(to, root.join(at)).unwrap();
        link(&dir.path().join("secret.md"), "lore/secret.md");
        link(&dir.path().join("elsewhere"), "outside-dir");
        link(&root.join("lore"), "lore-again");
        let config = Config::for_root(&root, dir.path().join("data"));
        // A watcher's scoped walk keeps the same rules (a second filter once dropped them).
        let scoped = walk_scoped(
            &config,
            &Scope::new(["lore/secret.md", "lore/real.md", ".git"]),
        )
        .unwrap();
        assert_eq!(names(&scoped), vec!["lore/real.md"]);
        let w = walk(&config).unwrap();
        // `lore-again` is `lore` again: each note once, under its own path.
        assert_eq!(names(&w), vec!["lore/real.md"]);
        let mut warnings = w.warnings.clone();
        warnings.sort();
        assert_eq!(
            warnings,
            [
                "lore/secret.md: skipped: a symlink to outside the brain folder",
                "outside-dir: skipped: a symlink to outside the brain folder",
            ]
        );
    }

    #[test]
    fn a_walk_reads_the_same_time_and_size_as_std() {
        // The walk `stat`s relative to each folder; a sync compares what it reads with
        // rows written from std's metadata, so one nanosecond apart would re-read every note.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        fs::create_dir_all(root.join("lore/deep")).unwrap();
        let set = |rel: &str, body: &str, since_epoch_ns: i64| {
            let at = std::time::Duration::from_nanos(since_epoch_ns.unsigned_abs());
            let when = if since_epoch_ns < 0 {
                UNIX_EPOCH - at
            } else {
                UNIX_EPOCH + at
            };
            crate::index::write_dated(&root.join(rel), body, when);
        };
        set("a.md", "# a", 1_764_000_000_123_456_789);
        set("lore/b.md", "# bee\n", 5);
        set("lore/deep/c.md", "", -1_500_000_001);
        let w = walk(&Config::for_root(&root, dir.path().join("data"))).unwrap();
        assert_eq!(names(&w), vec!["a.md", "lore/b.md", "lore/deep/c.md"]);
        for file in &w.files {
            let meta = fs::metadata(&file.abs).unwrap();
            assert_eq!((file.mtime_ns, file.size), (mtime_ns(&meta), meta.len()));
        }
        assert_eq!(w.files[0].mtime_ns, 1_764_000_000_123_456_789);
        assert_eq!(w.files[1].size, 6);
        assert_eq!(w.files[2].mtime_ns, -1_500_000_001);
    }

    #[test]
    fn a_named_pipe_named_like_a_note_is_a_warning_and_never_read() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("ok.md"), "x").unwrap();
        let fifo = std::ffi::CString::new(
            dir.path()
                .join("pipe.md")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        // SAFETY: a NUL-terminated path in this test's own folder.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let w = walk(&Config::for_root(dir.path(), "/nonexistent")).unwrap();
        assert_eq!(names(&w), vec!["ok.md"]);
        assert_eq!(
            w.warnings,
            ["pipe.md: skipped: not a regular file (a named pipe, socket or device)"]
        );
    }

    #[test]
    fn a_file_name_that_is_not_utf8_is_a_warning() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("ok.md"), "x").unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"bad\xff.md");
        fs::write(dir.path().join(bad), "okapi").unwrap();
        let w = walk(&Config::for_root(dir.path(), "/nonexistent")).unwrap();
        assert_eq!(names(&w), vec!["ok.md"]);
        assert_eq!(
            w.warnings,
            ["bad\u{FFFD}.md: skipped: the file name is not UTF-8; rename it to index it"]
        );
    }

    #[test]
    fn an_upper_case_extension_and_a_bare_dot_md_are_warnings_not_silence() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "ok.md",
            "Loud.MD",
            "mixed.Md",
            ".md",
            "notes.txt",
            "..md",
            "README.MD",
        ] {
            fs::write(dir.path().join(name), "x").unwrap();
        }
        // A type folder's own schema: no note either way. Deeper, an INDEX.MD is one.
        fs::create_dir_all(dir.path().join("lore/deep")).unwrap();
        fs::write(dir.path().join("lore/SCHEMA.MD"), "x").unwrap();
        fs::write(dir.path().join("lore/deep/INDEX.MD"), "x").unwrap();
        let w = walk(&Config::for_root(dir.path(), "/nonexistent")).unwrap();
        assert_eq!(names(&w), vec!["..md", "ok.md"]);
        assert_eq!(
            w.warnings,
            [
                ".md: skipped: a note needs a name before .md; rename it (e.g. to note.md) to index it",
                "Loud.MD: skipped: only names ending in lowercase .md are notes; rename it to Loud.md to index it",
                "mixed.Md: skipped: only names ending in lowercase .md are notes; rename it to mixed.md to index it",
            ]
        );
        // Without the default exclusions, a deeper INDEX.MD is a note to rename; a type
        // folder's own SCHEMA.MD is no note either way.
        let mut bare = Config::for_root(dir.path(), "/nonexistent");
        bare.exclude.clear();
        let w = walk(&bare).unwrap();
        assert!(
            w.warnings
                .iter()
                .any(|w| w.starts_with("lore/deep/INDEX.MD: skipped")),
            "{w:?}"
        );
        assert!(
            !w.warnings.iter().any(|w| w.starts_with("lore/SCHEMA.MD")),
            "{w:?}"
        );
    }

    #[test]
    fn a_symlink_loop_is_an_alias_and_a_dangling_one_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        fs::write(dir.path().join("a/n.md"), "x").unwrap();
        // A folder linked into itself is an alias like any other; a link to itself leads
        // nowhere, and a dangling one too.
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("a/loop")).unwrap();
        std::os::unix::fs::symlink("self.md", dir.path().join("self.md")).unwrap();
        std::os::unix::fs::symlink("gone.md", dir.path().join("a/dangling.md")).unwrap();
        // Emacs's lock beside a note being edited leads nowhere by design: skipped silently.
        std::os::unix::fs::symlink("me@host.42:1700000000", dir.path().join("a/.#n.md")).unwrap();
        // Where links cannot be made, the lock is a small file: skipped all the same.
        fs::write(dir.path().join(".#n.md"), "me@host.42:1700000000").unwrap();
        let w = walk(&Config::for_root(dir.path(), "/nonexistent")).unwrap();
        assert_eq!(names(&w), vec!["a/n.md"]);
        // A brain folder that is itself a symlink is walked as the folder it names.
        let via = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path(), via.path().join("brain")).unwrap();
        let linked = walk(&Config::for_root(via.path().join("brain"), "/nonexistent")).unwrap();
        assert_eq!(names(&linked), vec!["a/n.md"]);
        let mut warnings = w.warnings.clone();
        warnings.sort();
        assert_eq!(
            warnings,
            [
                "a/dangling.md: skipped: a symlink that leads nowhere (dangling, or a loop)",
                "self.md: skipped: a symlink that leads nowhere (dangling, or a loop)",
            ]
        );
    }

    #[test]
    fn scope_normalises_and_nests() {
        let s = Scope::new(["lore/", "lore/a.md", "./idea//b.md", "lorem.md"]);
        assert_eq!(s.paths(), ["idea/b.md", "lore", "lorem.md"]);
        assert!(s.contains("lore/x/y.md") && s.contains("lorem.md") && !s.contains("lore.md"));
        assert!(Scope::new(["a", "."]).is_everything());
        assert!(Scope::new(Vec::<String>::new()).is_empty());
    }

    #[test]
    fn scoped_walk_sees_only_its_scope_and_honours_ignores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_all(
            root,
            &[
                "lore/a.md",
                "lore/skip/s.md",
                "lore/deep/d.md",
                "idea/b.md",
                "c.md",
            ],
            "x",
        );
        fs::write(root.join(".gitignore"), "skip/\n").unwrap();
        let config = Config::for_root(root, root.join("data"));
        let w = walk_scoped(&config, &Scope::new(["lore", "c.md", "gone.md"])).unwrap();
        assert_eq!(names(&w), vec!["c.md", "lore/a.md", "lore/deep/d.md"]);
        let w = walk_scoped(&config, &Scope::new(["lore/skip/s.md"])).unwrap();
        assert!(
            w.files.is_empty(),
            "an ignored file stays ignored when named: {:?}",
            names(&w)
        );
    }

    #[test]
    fn missing_root_is_an_error() {
        let err = walk(&Config::for_root("/definitely/not/here", "/x")).unwrap_err();
        assert!(matches!(err, Error::RootMissing { .. }));
    }
}
