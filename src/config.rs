//! Where the brain lives, where its index lives, and which model embeds it.
//!
//! Settings are layered: built-in defaults, then the config file, then `BRAIN_*`
//! environment variables, then command-line flags. Each layer only overrides what it sets.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The default embedding model (a manifest name in `audit/`).
pub const DEFAULT_MODEL: &str = "nomic-embed-text-v1.5";

/// Files and folders that hold no notes in the original layout, skipped unless configured
/// otherwise. Gitignore syntax: a trailing `/` means a folder of that name anywhere (with a
/// `/` before it too, that path from the root). Logseq keeps a copy of a page in
/// `logseq/bak/` and `logseq/version-files/` at each conflicting save: indexed, every
/// search found the page two or three times, and `similar --all` called the copies
/// duplicates to merge.
pub const DEFAULT_EXCLUDE: &[&str] = &[
    "INDEX.md",
    "SCHEMA.md",
    "README.md",
    "MEMORY.md",
    "raw/",
    "attachments/",
    "logseq/bak/",
    "logseq/version-files/",
];

/// The most bytes of the brain folder's name in its index folder's name, which adds `-` and
/// 12 hex digits: what the 255 bytes of a file name leave, so that every name that made an
/// index before keeps it.
const MAX_INDEX_NAME_BYTES: usize = 255 - 13;

/// The folders `brain install` and the app create in a new brain.
/// Each gets the default `SCHEMA.md` of [`crate::kb::schema::DEFAULTS`].
pub const DEFAULT_TYPE_FOLDERS: &[&str] = &["lore", "idea", "job", "followup", "research-link"];

/// Default largest note that is read, in bytes; bigger files are skipped with a warning.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The largest `max_file_mb` accepted (1 TiB): a note is read whole, and a limit past the
/// memory of any machine is a typo.
pub const MAX_FILE_MB: u64 = 1024 * 1024;

/// `bytes` in the MB that `max_file_mb` counts (1,048,576 bytes each), as every message
/// about the limit says them: a size and the limit in one unit.
pub fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
/// How long the usage logs keep a row, in days, unless `log_keep_days` says otherwise.
pub const DEFAULT_LOG_KEEP_DAYS: u32 = 365;

/// The commented example written by `brain install` and shown in the README.
pub const EXAMPLE_CONFIG: &str = include_str!("config.example.toml");

/// Values given on the command line; `None` means "not given".
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--dir`: the brain folder.
    pub root: Option<PathBuf>,
    /// The model manifest name.
    pub model: Option<String>,
    /// A `BRAIN_CONFIG` that names no file yet is no config, not an error: `brain
    /// install` writes its example there.
    pub config_may_be_new: bool,
}

/// Settings of the menu-bar app, kept in the same file under `[app]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AppSettings {
    /// Global shortcut that toggles the panel, in Tauri's accelerator syntax.
    pub hotkey: String,
    /// How Enter opens a note: `default` (the system's app for .md), an editor command
    /// (`code`, `subl -w`...), or an URL template containing `{path}` (`obsidian://open?path={path}`).
    pub open_with: String,
}

impl Default for AppSettings {
    fn default() -> Self {
        AppSettings {
            hotkey: "Alt+Space".into(),
            open_with: "default".into(),
        }
    }
}

/// The config file as written by a person: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    root: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    model: Option<String>,
    model_dims: Option<usize>,
    exclude: Option<Vec<String>>,
    max_file_mb: Option<u64>,
    log_keep_days: Option<u32>,
    app: Option<AppSettings>,
}

/// The resolved settings every part of brain reads.
#[derive(Debug, Clone)]
pub struct Config {
    /// The brain folder: absolute, not necessarily existing yet.
    pub root: PathBuf,
    /// Where indexes, models and logs live (`BRAIN_DATA_DIR`, else the platform data dir).
    pub data_dir: PathBuf,
    /// The embedding model's manifest name.
    pub model: String,
    /// Shorter vectors from a model trained for them (Matryoshka: nomic-embed-text-v1.5
    /// takes 512, 256, 128 or 64); `None` is the model's full width.
    pub model_dims: Option<usize>,
    /// Gitignore-style patterns of files and folders that are not notes.
    pub exclude: Vec<String>,
    /// Notes larger than this are skipped with a warning.
    pub max_file_bytes: u64,
    /// Rows of the search and read logs older than this many days are dropped.
    pub log_keep_days: u32,
    /// The app's settings.
    pub app: AppSettings,
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
}

impl Config {
    /// The model these settings embed with, as one word: its name, with `@DIMS` when
    /// `model_dims` shortens its vectors. Two processes with the same label read and write
    /// the same vectors.
    pub fn model_label(&self) -> String {
        match self.model_dims {
            Some(d) => format!("{}@{d}", self.model),
            None => self.model.clone(),
        }
    }

    /// Resolves the settings from the config file, the environment and `overrides`.
    pub fn load(overrides: Overrides) -> Result<Config> {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let (config_file, file) = the_file(overrides.config_may_be_new)?;
        let in_file = |what: String| match &config_file {
            Some(f) => Error::Config(format!("{}: {what}", f.display())),
            None => Error::Config(what),
        };

        let model = overrides
            .model
            .or_else(|| env("BRAIN_MODEL").and_then(|v| v.into_string().ok()))
            .or(file.model)
            .unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let max_file_bytes = match file.max_file_mb {
            None => DEFAULT_MAX_FILE_BYTES,
            Some(mb) if (1..=MAX_FILE_MB).contains(&mb) => mb * 1024 * 1024,
            Some(mb) => {
                return Err(in_file(format!(
                    "max_file_mb = {mb}: give a whole number of MiB from 1 to {MAX_FILE_MB}"
                )))
            }
        };
        let log_keep_days = file.log_keep_days.unwrap_or(DEFAULT_LOG_KEEP_DAYS);
        if log_keep_days == 0 {
            return Err(in_file(
                "log_keep_days = 0: give a number of days, 1 or more (`brain stats --reset` \
                 empties the logs)"
                    .into(),
            ));
        }
        let (root, data_dir) = located(
            overrides
                .root
                .or_else(|| env("BRAIN_DIR").map(PathBuf::from))
                .or(file.root),
            env("BRAIN_DATA_DIR").map(PathBuf::from).or(file.data_dir),
        )?;
        // Read where the model is loaded; a typo there (`BRAIN_DEVICE=cpy`) would quietly
        // keep the GPU, so it is refused here, with the other settings.
        if let Some(device) = env("BRAIN_DEVICE") {
            if !device.eq_ignore_ascii_case("cpu") {
                return Err(Error::Config(format!(
                    "BRAIN_DEVICE={device:?} is not a device setting: set it to cpu to keep the model on the CPU, or unset it (the GPU is used when there is one)"
                )));
            }
        }
        check_data_outside_root(&data_dir, &root)?;
        let exclude = file
            .exclude
            .unwrap_or_else(|| DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect());
        // Refused here, with the other settings, so that every command says it: `status`
        // and `get`, which walk nothing, once answered as if the patterns were fine.
        exclude_overrides(&root, &exclude).map_err(|e| match e {
            Error::Config(why) => in_file(format!("{why}: fix or remove it")),
            other => other,
        })?;
        Ok(Config {
            root,
            data_dir,
            model,
            model_dims: file.model_dims,
            exclude,
            max_file_bytes,
            log_keep_days,
            app: file.app.unwrap_or_default(),
            config_file,
        })
    }

    /// The brain folder and data folder a command run with no `--dir`, `BRAIN_DIR` or
    /// `BRAIN_DATA_DIR` would use: the config file's, else the defaults. `brain install`
    /// compares them with its own, since the MCP server and the skill's commands start
    /// without those variables.
    pub fn unset_locations() -> Result<(PathBuf, PathBuf)> {
        let (_, file) = the_file(true)?;
        located(file.root, file.data_dir)
    }

    /// The model a process started without `BRAIN_MODEL` would use (the config file's,
    /// else the default), which `brain install` compares with its own for the same reason.
    pub fn unset_model() -> Result<String> {
        let (_, file) = the_file(true)?;
        Ok(file.model.unwrap_or_else(|| DEFAULT_MODEL.to_string()))
    }

    /// Only where the brain and its data are, for the commands that must work when the
    /// rest of the config file does not (`brain uninstall`, `brain install --check`): the
    /// file's `root` and `data_dir` are taken when it holds them as strings, whatever else
    /// is wrong in it, and so is the model (`BRAIN_MODEL`, else the file's `model`); every
    /// other setting is its default.
    pub fn load_locations(overrides: Overrides) -> Result<Config> {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let config_file = config_file_path().filter(|p| p.is_file());
        let table: toml::Table = config_file
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| text.parse().ok())
            .unwrap_or_default();
        let from_file = |key: &str| table.get(key).and_then(|v| v.as_str()).map(PathBuf::from);
        let (root, data_dir) = located(
            overrides
                .root
                .or_else(|| env("BRAIN_DIR").map(PathBuf::from))
                .or_else(|| from_file("root")),
            env("BRAIN_DATA_DIR")
                .map(PathBuf::from)
                .or_else(|| from_file("data_dir")),
        )?;
        // What `install.json` is written into stays out of the notes, here too.
        check_data_outside_root(&data_dir, &root)?;
        let mut config = Config {
            config_file,
            ..Config::for_root(root, data_dir)
        };
        // The model named, as far as it can be read: `install --check` reports on it, and
        // the default one (a 547 MB download) is not the one to tell a person to fetch.
        if let Some(model) = env("BRAIN_MODEL")
            .and_then(|m| m.into_string().ok())
            .or_else(|| {
                table
                    .get("model")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
        {
            config.model = model;
        }
        Ok(config)
    }

    /// A config for `root` with every other setting at its default and data under `data_dir`:
    /// what tests and embedders of the library use.
    pub fn for_root(root: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Config {
        Config {
            root: root.into(),
            data_dir: data_dir.into(),
            model: DEFAULT_MODEL.to_string(),
            model_dims: None,
            exclude: DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            log_keep_days: DEFAULT_LOG_KEEP_DAYS,
            app: AppSettings::default(),
            config_file: None,
        }
    }

    /// The folder holding this root's index: one per brain root, named after the folder and
    /// a hash of its full path so two roots called `notes` never share an index.
    pub fn index_dir(&self) -> PathBuf {
        let canonical = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
        let name: String = canonical
            .file_name()
            .map(|n| {
                let name: String = n
                    .to_string_lossy()
                    .chars()
                    .map(|c| if c.is_alphanumeric() { c } else { '_' })
                    .collect();
                // A file name holds 255 bytes; the hash tells roots apart, the name is for
                // a person, so a long one is cut (a folder name of 243 bytes or more was an
                // index that could not be made).
                crate::text::cut_at_char(&name, MAX_INDEX_NAME_BYTES).to_string()
            })
            .unwrap_or_else(|| "root".into());
        self.data_dir
            .join("indexes")
            .join(format!("{name}-{}", &hex::encode(digest)[..12]))
    }

    /// The SQLite index file for this root.
    pub fn index_path(&self) -> PathBuf {
        self.index_dir().join("brain.sqlite")
    }

    /// Where installed models live: `$BRAIN_DATA_DIR/models/<name>/`.
    pub fn models_dir(&self) -> PathBuf {
        self.data_dir.join("models")
    }

    /// The installed models (under [`Config::models_dir`]).
    pub fn models(&self) -> crate::model::Store {
        crate::model::Store::new(self.models_dir())
    }

    /// Where log files go.
    pub fn log_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }
}

/// The brain folder when nothing names one.
const DEFAULT_ROOT: &str = "~/.brain";

/// The data folder when nothing names one: the platform data dir's `brain/`.
fn default_data_dir() -> Result<PathBuf> {
    dirs::data_dir()
        .map(|d| d.join("brain"))
        .ok_or_else(|| Error::Config("no home folder; set BRAIN_DATA_DIR".into()))
}

/// The brain folder and the data folder, as given (`None`: the default), `~` expanded and
/// made absolute. An empty value (`root = ""`, `BRAIN_DIR=`) names no folder: said as a
/// setting to fix, not as the path library's "cannot make an empty path absolute".
fn located(root: Option<PathBuf>, data_dir: Option<PathBuf>) -> Result<(PathBuf, PathBuf)> {
    let root = root.unwrap_or_else(|| PathBuf::from(DEFAULT_ROOT));
    let data_dir = match data_dir {
        Some(d) => d,
        None => default_data_dir()?,
    };
    for (path, what) in [
        (
            &root,
            "the brain folder (BRAIN_DIR, --dir, or root in the config file)",
        ),
        (
            &data_dir,
            "the data folder (BRAIN_DATA_DIR, or data_dir in the config file)",
        ),
    ] {
        if path.as_os_str().is_empty() {
            return Err(Error::Config(format!(
                "{what} is set to an empty path: give a folder, or leave it unset for the default"
            )));
        }
    }
    Ok((
        absolute(&expand_tilde(&root))?,
        absolute(&expand_tilde(&data_dir))?,
    ))
}

/// The config file read (`None` when there is none to read) and its settings.
fn the_file(may_be_new: bool) -> Result<(Option<PathBuf>, FileConfig)> {
    let named = std::env::var_os("BRAIN_CONFIG").is_some_and(|v| !v.is_empty());
    match config_file_path() {
        Some(p) if may_be_new && std::fs::symlink_metadata(&p).is_err() => {
            Ok((None, FileConfig::default()))
        }
        Some(p) if file_to_read(&p, named)? => {
            let file = read_file_config(&p)?;
            Ok((Some(p), file))
        }
        _ => Ok((None, FileConfig::default())),
    }
}

/// The config file to read (and the one the app writes): `BRAIN_CONFIG`, else
/// `config.toml` in the platform config dir's `brain/` folder. `None` without a home folder.
pub fn config_file_path() -> Option<PathBuf> {
    match std::env::var_os("BRAIN_CONFIG").filter(|v| !v.is_empty()) {
        // `~/c.toml` as BRAIN_DIR takes it: what zsh passes on in `-e BRAIN_CONFIG=~/...`,
        // and what a systemd `Environment=` line or a JSON config holds.
        Some(p) => Some(expand_tilde(Path::new(&p))),
        None => dirs::config_dir().map(|d| d.join("brain").join("config.toml")),
    }
}

/// Whether the config file `path` is there to read (`named`: `BRAIN_CONFIG` gave it). Only
/// a default file that does not exist is no config; a folder or a device where the file
/// should be is refused, since settings the person wrote somewhere would otherwise be
/// silently ignored. A file that exists but cannot be read is left to `read_file_config`,
/// which says why.
fn file_to_read(path: &Path, named: bool) -> Result<bool> {
    use std::io::ErrorKind::{NotADirectory, NotFound};
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) => {
            let what = match m.is_dir() {
                true => "a folder",
                false => "not a regular file",
            };
            Err(Error::Config(match named {
                true => format!(
                    "BRAIN_CONFIG names {}, which is {what}: set it to a config file, or unset it",
                    path.display()
                ),
                false => format!(
                    "{} is {what}, not a config file: move it away, or set BRAIN_CONFIG to a file",
                    path.display()
                ),
            }))
        }
        // A link to nowhere is a config the person meant to have (a dotfiles checkout not
        // there yet): said, not taken for "no config".
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) => {
            Err(Error::Config(format!(
                "{} is a symlink to {}, which does not exist: fix the link, or remove it to use the defaults",
                path.display(),
                std::fs::read_link(path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into())
            )))
        }
        Err(e) if matches!(e.kind(), NotFound | NotADirectory) => match named {
            true => Err(Error::Config(format!(
                "BRAIN_CONFIG names {}, which does not exist (create it, or unset BRAIN_CONFIG)",
                path.display()
            ))),
            false => Ok(false),
        },
        Err(_) => Ok(true),
    }
}

fn read_file_config(path: &Path) -> Result<FileConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::InvalidData => "it is not UTF-8 text".to_string(),
            _ => e.to_string(),
        };
        Error::Config(format!(
            "{} cannot be read ({why}): fix it, or set BRAIN_CONFIG to another file",
            path.display()
        ))
    })?;
    toml::from_str(&text).map_err(|e| {
        // toml's message names the problem; where it is comes from its span, as `FILE:LINE:COL`.
        let at = e
            .span()
            .map(|span| {
                let before = text.get(..span.start).unwrap_or(&text);
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(":{line}:{col}")
            })
            .unwrap_or_default();
        // Some messages run over two lines ("invalid string\nexpected ..."): one line here.
        let message: Vec<&str> = e.message().lines().map(str::trim).collect();
        Error::Config(format!(
            "{}{at}: {}: fix it there (the README's configuration table lists each setting)",
            path.display(),
            crate::error::in_plain_words(&message.join("; "))
        ))
    })
}

/// The longest name of one file or folder most file systems take, in bytes.
const NAME_MAX: usize = 255;

/// Refuses a data folder that is the brain folder or inside it: the index, its logs and the
/// models would be written among the notes (and synced or committed with them), and brain
/// writes there only when asked to (`new`, `index-md --write`, `install`).
fn check_data_outside_root(data_dir: &Path, root: &Path) -> Result<()> {
    // A file there would fail every command later with "Not a directory" under it.
    if data_dir.exists() && !data_dir.is_dir() {
        return Err(Error::Config(format!(
            "the data folder {} is a file, not a folder: set BRAIN_DATA_DIR (or data_dir in the config) to a folder",
            data_dir.display()
        )));
    }
    // A name the file system cannot take fails later as "File name too long", naming
    // an index folder under it and nothing to do.
    if let Some(long) = data_dir
        .components()
        .find(|c| c.as_os_str().len() > NAME_MAX)
    {
        return Err(Error::Config(format!(
            "the data folder's name {:?} is {} bytes, over the {NAME_MAX} a file system takes: set BRAIN_DATA_DIR (or data_dir in the config) to a shorter path",
            crate::text::cut_at_char(&long.as_os_str().to_string_lossy(), 40).to_string() + "...",
            long.as_os_str().len()
        )));
    }
    let (data, root) = (resolved(data_dir), resolved(root));
    if data.starts_with(&root) {
        return Err(Error::Config(format!(
            "the data folder {} is inside the brain folder {}: the index must not be written among the notes; set BRAIN_DATA_DIR (or data_dir in the config) to a folder outside it",
            data_dir.display(),
            root.display()
        )));
    }
    Ok(())
}

/// `path` with symlinks resolved as far as it exists (a data folder is made on first use),
/// the rest appended as written.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Expands a leading `~` to the home folder.
pub fn expand_tilde(path: &Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => dirs::home_dir()
            .map(|h| h.join(rest))
            .unwrap_or_else(|| path.to_path_buf()),
        Err(_) => path.to_path_buf(),
    }
}

/// `path` made absolute. A `..` in it is resolved as `cd` resolves it, up to the last one
/// (`--dir ..` from `notes/lore` is `notes`, which every path brain prints then starts
/// with, not `notes/lore/..`); what follows stays as written, so a brain folder that is a
/// symlink is still the link.
fn absolute(path: &Path) -> Result<PathBuf> {
    let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
    let parts: Vec<_> = path.components().collect();
    let Some(last) = parts
        .iter()
        .rposition(|c| matches!(c, std::path::Component::ParentDir))
    else {
        return Ok(path);
    };
    let head: PathBuf = parts[..=last].iter().collect();
    Ok(match std::fs::canonicalize(&head) {
        Ok(real) => parts[last + 1..].iter().fold(real, |p, c| p.join(c)),
        Err(_) => path,
    })
}

/// Counts of anything keyed by name, sorted for stable output.
pub type Counts = BTreeMap<String, u64>;

/// The exclude patterns as the walk applies them (each a gitignore-style glob, relative to
/// `root`, that leaves matching paths out); a pattern that is no glob is an
/// [`Error::Config`] naming it.
pub(crate) fn exclude_overrides(
    root: &Path,
    patterns: &[String],
) -> Result<ignore::overrides::Override> {
    let mut overrides = ignore::overrides::OverrideBuilder::new(root);
    for pattern in patterns {
        overrides.add(&format!("!{pattern}")).map_err(|e| {
            // The glob's own complaint, without the `!` it was given here.
            let why = match e {
                ignore::Error::Glob { err, .. } => err,
                other => other.to_string(),
            };
            Error::Config(format!("exclude pattern {pattern:?}: {why}"))
        })?;
    }
    overrides
        .build()
        .map_err(|e| Error::Config(format!("exclude patterns: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_config_rejects_unknown_keys_with_their_name() {
        let err = toml::from_str::<FileConfig>("rot = '/x'").unwrap_err();
        assert!(err.message().contains("rot"), "{}", err.message());
    }

    #[test]
    fn a_dot_dot_is_resolved_and_a_linked_folder_after_it_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(real.join("notes/lore")).unwrap();
        std::os::unix::fs::symlink(real.join("notes"), real.join("link")).unwrap();
        assert_eq!(
            absolute(&real.join("notes/lore/..")).unwrap(),
            real.join("notes")
        );
        assert_eq!(
            absolute(&real.join("notes/lore/../../link")).unwrap(),
            real.join("link")
        );
        assert_eq!(absolute(&real.join("link")).unwrap(), real.join("link"));
        // Not there: as written.
        let gone = real.join("gone/../x");
        assert_eq!(absolute(&gone).unwrap(), gone);
    }

    #[test]
    fn example_config_parses() {
        let parsed: FileConfig = toml::from_str(EXAMPLE_CONFIG).unwrap();
        assert!(
            parsed.root.is_none(),
            "the example must leave every setting commented out"
        );
    }

    #[test]
    fn the_example_shows_the_defaults_it_says_are_the_defaults() {
        // Uncommented, as a person does to change one: the values shown must be the code's
        // defaults (the README says `exclude` replaces the list, so the list shown is the
        // one people copy).
        let uncommented: String = EXAMPLE_CONFIG
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(setting)
                    if ["exclude =", "model =", "max_file_mb =", "log_keep_days ="]
                        .iter()
                        .any(|key| setting.starts_with(key)) =>
                {
                    setting
                }
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let parsed: FileConfig = toml::from_str(&uncommented).unwrap();
        assert_eq!(parsed.exclude.unwrap(), DEFAULT_EXCLUDE);
        assert_eq!(parsed.model.as_deref(), Some(DEFAULT_MODEL));
        assert_eq!(
            parsed.max_file_mb.map(|mb| mb * 1024 * 1024),
            Some(DEFAULT_MAX_FILE_BYTES)
        );
        assert_eq!(parsed.log_keep_days, Some(DEFAULT_LOG_KEEP_DAYS));
    }

    #[test]
    fn a_long_folder_name_makes_an_index_folder_name_a_file_system_takes() {
        let long = Config::for_root(format!("/n/{}", "é".repeat(130)), "/d").index_dir();
        let name = long.file_name().unwrap().len();
        assert!(name <= 255, "{name}");
        // A name that fitted keeps its folder.
        let fits = Config::for_root(format!("/n/{}", "x".repeat(242)), "/d").index_dir();
        let name = fits.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(&"x".repeat(242)), "{name}");
        let short = Config::for_root("/n/notes", "/d").index_dir();
        let short = short.file_name().unwrap().to_string_lossy();
        assert!(
            short.starts_with("notes-") && short.len() == 6 + 12,
            "{short}"
        );
    }

    #[test]
    fn index_dir_differs_per_root() {
        let a = Config::for_root("/tmp/a/notes", "/data").index_dir();
        let b = Config::for_root("/tmp/b/notes", "/data").index_dir();
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("notes-"));
    }

    #[test]
    fn a_data_folder_among_the_notes_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&root, dir.path().join("alias")).unwrap();
        for inside in [
            root.clone(),
            root.join("data"),
            dir.path().join("alias/.index"),
        ] {
            let err = check_data_outside_root(&inside, &root).unwrap_err();
            assert!(matches!(err, Error::Config(_)), "{err}");
            assert!(err.to_string().contains("BRAIN_DATA_DIR"), "{err}");
        }
        for outside in [
            dir.path().join("data"),
            dir.path().join("brainy"),
            dir.path().into(),
        ] {
            check_data_outside_root(&outside, &root).unwrap();
        }
    }

    #[test]
    fn a_bad_config_file_is_a_config_error_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = 'x'\nroot = \n").unwrap();
        let err = read_file_config(&path).unwrap_err().to_string();
        assert!(err.contains("config.toml:2:8"), "{err}");
        std::fs::write(&path, b"\xff").unwrap();
        let err = read_file_config(&path).unwrap_err();
        assert!(matches!(err, Error::Config(_)));
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }

    #[test]
    fn a_folder_or_device_where_the_config_file_should_be_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        assert!(
            !file_to_read(&file, false).unwrap(),
            "no default file: no config"
        );
        let err = file_to_read(&file, true).unwrap_err().to_string();
        assert!(err.contains("which does not exist"), "{err}");
        std::os::unix::fs::symlink(dir.path().join("dotfiles/brain.toml"), &file).unwrap();
        let err = file_to_read(&file, false).unwrap_err().to_string();
        assert!(
            err.contains("is a symlink to") && err.contains("dotfiles/brain.toml"),
            "{err}"
        );
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        let err = file_to_read(&file, false).unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!(
                "config: {} is a folder, not a config",
                file.display()
            )),
            "{msg}"
        );
        assert!(msg.contains("BRAIN_CONFIG"), "{msg}");
        let err = file_to_read(&file, true).unwrap_err().to_string();
        assert!(
            err.contains("which is a folder: set it to a config file"),
            "{err}"
        );
        let err = file_to_read(Path::new("/dev/null"), false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("/dev/null is not a regular file"), "{err}");
        std::fs::remove_dir(&file).unwrap();
        std::fs::write(&file, "").unwrap();
        assert!(file_to_read(&file, false).unwrap());
    }

    #[test]
    fn tilde_expands_to_home() {
        let home = dirs::home_dir().unwrap();
        assert_eq!(expand_tilde(Path::new("~/.brain")), home.join(".brain"));
        assert_eq!(expand_tilde(Path::new("/x/~")), PathBuf::from("/x/~"));
    }
}
