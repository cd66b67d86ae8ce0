//! The library's error type: every variant reads as a sentence that names the bad value.

use std::io;
use std::path::PathBuf;

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong inside brain, worded for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The brain folder does not exist.
    #[error("brain folder {} does not exist (set BRAIN_DIR, pass --dir, or set root in the config file)", path.display())]
    RootMissing {
        /// The folder that was looked for.
        path: PathBuf,
    },
    /// The brain folder exists but is not a readable directory.
    #[error("brain folder {} is not a readable directory: {reason}", path.display())]
    RootUnreadable {
        /// The folder.
        path: PathBuf,
        /// Why it could not be read.
        reason: String,
    },
    /// The brain folder, a symlink, leads to another folder than the one whose index is
    /// open (repointed under a running backend).
    #[error("brain folder {} now leads to {}, not to {}, whose index this is: restart what has it open ('brain serve', the app, or the MCP server) to use the folder it leads to now", path.display(), now.display(), was.display())]
    RootMoved {
        /// The brain folder as configured.
        path: PathBuf,
        /// Where it led when the index was opened.
        was: PathBuf,
        /// Where it leads now.
        now: PathBuf,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The operating system's error, said in the message (not a `source`, which a
        /// chained report would print a second time).
        cause: io::Error,
    },
    /// The SQLite index failed. (SQLite's error is not a `#[source]`: its message is said
    /// here once, with what to do, instead of three times down the chain.)
    #[error("{}", index_message(path, cause))]
    Index {
        /// The index file.
        path: PathBuf,
        /// SQLite's error (not named `source`: thiserror would chain it).
        cause: rusqlite::Error,
    },
    /// The index file was written by a newer brain than this one.
    #[error("index {} has schema version {found}, newer than this brain understands ({supported}); upgrade brain, or run 'brain index --rebuild' to build it again for this one", path.display())]
    IndexTooNew {
        /// The index file.
        path: PathBuf,
        /// The version stored in the index.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The configuration file or an environment variable holds a bad value.
    #[error("config: {0}")]
    Config(String),
    /// The user asked for something that cannot be done as asked (bad query, bad path, ...).
    #[error("{0}")]
    InvalidInput(String),
    /// A model file failed verification, or a model could not be loaded.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// A sync was asked to stop (shutdown) and did, between two committed batches.
    #[error("sync interrupted: the index keeps every batch committed so far; the next sync finishes the job")]
    Cancelled,
    /// A type's `SCHEMA.md` cannot be used: a YAML error, or rules that contradict each other.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Schema {
        /// The schema file.
        path: PathBuf,
        /// 1-based line in it, when known.
        line: Option<usize>,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The embedding model failed while running.
    #[error("embedding failed: {0}")]
    Embed(String),
    /// Another process re-embedded the index with another model while this backend ran:
    /// its own passes would clear those vectors and embed everything again with its model,
    /// and the other process's next pass would clear them back.
    #[error("the index's vectors are {stored}'s now (another brain process re-embedded it) and this backend embeds with {own}: to keep {stored}, make it the model where the backend starts (model in the config file, or BRAIN_MODEL) and restart the backend ('brain serve', or quit and reopen the app); to go back, run 'brain index' with {own}")]
    ModelSwitched {
        /// The model the index's vectors are now.
        stored: String,
        /// The model this backend embeds with.
        own: String,
    },
}

/// One line for an index failure: the cause once, and for the failures a person can fix
/// (a damaged file, a full disk, a read-only data dir) what to do.
fn index_message(path: &std::path::Path, e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    let folder = path.parent().unwrap_or(path).display();
    let code = match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
        _ => None,
    };
    let cause = (code, sqlite_cause(e));
    match cause {
        (Some(C::DatabaseCorrupt | C::NotADatabase), msg) => format!(
            "the index {} is damaged ({msg}); the notes are safe: run 'brain index --rebuild' to build it again from them (the search log is kept where it can be read)",
            path.display()
        ),
        (Some(C::DiskFull), _) => format!(
            "the disk holding the index {} is full: free space there, or set BRAIN_DATA_DIR to a folder on another disk, and retry",
            path.display()
        ),
        // What stands where the index file should be is a folder (or another non-file):
        // no permission would help.
        (Some(C::CannotOpen), _) if path.exists() && !path.is_file() => format!(
            "the index {} is not a file: move it away, or run 'brain index --rebuild' to build the index again from the notes",
            path.display()
        ),
        // The index is gone from under the process that holds it (its data folder deleted
        // or moved while the backend ran): no permission is missing, and the backend's
        // handle stays on the deleted file until it restarts.
        (Some(C::ReadOnly | C::CannotOpen), msg) if path.parent().is_some_and(|p| !p.exists()) => format!(
            "the index {} is gone ({msg}): its folder was deleted or moved while brain had it open; stop the backend (brain serve, or quit the app) and run brain index to build it again from the notes (they are safe)",
            path.display()
        ),
        (Some(C::ReadOnly | C::CannotOpen | C::PermissionDenied), msg) => format!(
            "cannot write the index {} ({msg}): make {folder} writable, or set BRAIN_DATA_DIR to a writable folder",
            path.display()
        ),
        // Met when the write-ahead log was deleted while a backend held it open (a new
        // connection then reads a log that disagrees with the shared memory), or when the
        // disk fails: both outlive a retry, and the notes are never at stake.
        (Some(C::SystemIoFailure), msg) => format!(
            "the index {} could not be read or written ({msg}): if a file beside it (-wal, -shm) was removed, stop the backend (brain serve, or quit the app) and retry; if it persists, run 'brain index --rebuild' (the notes are safe)",
            path.display()
        ),
        (_, msg) => format!("index {}: {msg}", path.display()),
    }
}

/// `e`, met making or writing `dir` in the data dir, with what to do when it says the data
/// dir cannot be written (as the index's own errors say it).
pub(crate) fn in_data_dir(e: io::Error, dir: &std::path::Path) -> io::Error {
    use io::ErrorKind::{
        AlreadyExists, NotADirectory, PermissionDenied, ReadOnlyFilesystem, StorageFull,
    };
    match e.kind() {
        // A file where a folder of the data dir goes (the index's own folder, or one above
        // it): "File exists" named no file and said nothing to do.
        AlreadyExists | NotADirectory => {
            match dir.ancestors().find(|d| d.is_file() || d.is_symlink() && !d.exists()) {
                Some(file) => io::Error::new(
                    e.kind(),
                    format!(
                        "{} a file where brain keeps a folder: move it away, or set \
                         BRAIN_DATA_DIR to another folder",
                        match file == dir {
                            true => "is".to_string(),
                            false => format!("{} is", file.display()),
                        }
                    ),
                ),
                None => e,
            }
        }
        StorageFull => io::Error::new(
            e.kind(),
            format!(
                "{e}: free space there, or set BRAIN_DATA_DIR to a folder on another disk, and retry"
            ),
        ),
        _ if e.raw_os_error() == Some(libc::ENAMETOOLONG) => io::Error::new(
            e.kind(),
            format!("{e}: set BRAIN_DATA_DIR to a shorter path"),
        ),
        // The folder to make writable is the deepest one there: `dir` itself may not be
        // made yet (a data dir under a read-only parent).
        ReadOnlyFilesystem | PermissionDenied => io::Error::new(
            e.kind(),
            format!(
                "{e}: make {} writable, or set BRAIN_DATA_DIR to a writable folder",
                dir.ancestors().find(|d| d.exists()).unwrap_or(dir).display()
            ),
        ),
        _ => e,
    }
}

/// `e`, met reading the note `path`: a failure of the machine (exit 1), not of the input;
/// one the person can fix says how (a note whose mode changed, another user's file).
pub(crate) fn reading_note(path: &std::path::Path, e: io::Error) -> Error {
    let e = match e.kind() {
        io::ErrorKind::PermissionDenied => io::Error::new(
            e.kind(),
            format!("{e}: make it readable (chmod u+r), or ask whoever owns it"),
        ),
        _ => e,
    };
    Error::io(path, e)
}

/// SQLite's own words for `e`, once (its message when it has one, else the code's).
pub(crate) fn sqlite_cause(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        rusqlite::Error::SqliteFailure(f, None) => f.to_string(),
        other => other.to_string(),
    }
}

impl Error {
    /// Whether this is the index (or a file beside it) that cannot be written: a full disk,
    /// a read-only or unwritable data dir. What is already indexed can still be read.
    pub fn is_unwritable(&self) -> bool {
        use rusqlite::ErrorCode as C;
        match self {
            Error::Index {
                cause: rusqlite::Error::SqliteFailure(f, _),
                ..
            } => matches!(f.code, C::DiskFull | C::ReadOnly | C::PermissionDenied),
            Error::Io { cause, .. } => matches!(
                cause.kind(),
                io::ErrorKind::StorageFull
                    | io::ErrorKind::ReadOnlyFilesystem
                    | io::ErrorKind::PermissionDenied
            ),
            _ => false,
        }
    }

    /// The process exit code a command should end with for this error: 2 for input that
    /// cannot be used as given (and for model verification failures), 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::InvalidInput(_)
            | Error::Config(_)
            | Error::RootMissing { .. }
            | Error::RootUnreadable { .. }
            | Error::Schema { .. } => 2,
            Error::Model(e) => e.exit_code(),
            _ => 1,
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            cause: source,
        }
    }
}

/// serde's names for the values a setting takes, in the words a person writing TOML (the
/// config) or YAML (a schema) uses: `expected u32` and `struct RawSchema` are Rust's.
pub(crate) fn in_plain_words(message: &str) -> String {
    // A positive whole number refused by its type is one too large ("integer `99999999999`,
    // expected a whole number" read as if it were not one).
    let unsigned = ["expected usize", "expected u64", "expected u32"];
    if message.starts_with("invalid value: integer `")
        && !message.starts_with("invalid value: integer `-")
    {
        if let Some(kind) = unsigned.iter().find(|k| message.contains(*k)) {
            return message.replace(kind, "expected a smaller whole number");
        }
    }
    [
        ("expected usize", "expected a whole number"),
        ("expected u64", "expected a whole number"),
        ("expected u32", "expected a whole number"),
        ("expected path string", "expected a path in quotes"),
        ("expected a sequence", "expected a list in brackets"),
        ("integer `-", "negative number `-"),
        // A schema file holding a list, or a field's rule given as a value.
        // Whole phrases only: a key of the person's own (`sequence:`) is quoted as typed.
        (
            "expected struct RawSchema",
            "expected a map of keys (fields, required, group_by, ...)",
        ),
        (
            "expected struct RawField",
            "expected a map of keys (values, required, default)",
        ),
        ("invalid type: sequence", "invalid type: list"),
    ]
    .iter()
    .fold(message.to_string(), |m, (from, to)| m.replace(from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_where_a_data_folder_goes_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("indexes");
        std::fs::write(&file, b"x").unwrap();
        for wanted in [file.clone(), file.join("notes-abc")] {
            let e = std::fs::create_dir_all(&wanted).unwrap_err();
            let said = in_data_dir(e, &wanted).to_string();
            assert!(said.contains("a file where brain keeps a folder"), "{said}");
            assert_eq!(
                said.contains(&file.display().to_string()),
                wanted != file,
                "{said}"
            );
        }
    }

    #[test]
    fn a_whole_number_too_large_for_its_setting_is_said_to_be_too_large() {
        assert_eq!(
            in_plain_words("invalid value: integer `99999999999`, expected u32"),
            "invalid value: integer `99999999999`, expected a smaller whole number"
        );
        assert_eq!(
            in_plain_words("invalid value: integer `-3`, expected u32"),
            "invalid value: negative number `-3`, expected a whole number"
        );
    }

    #[test]
    fn a_note_that_cannot_be_read_is_a_failure_that_says_how_to_fix_it() {
        let path = std::path::Path::new("/b/lore/x.md");
        let denied = reading_note(path, io::ErrorKind::PermissionDenied.into());
        assert_eq!(denied.exit_code(), 1);
        assert!(
            denied
                .to_string()
                .starts_with("/b/lore/x.md: permission denied")
                && denied
                    .to_string()
                    .ends_with("make it readable (chmod u+r), or ask whoever owns it"),
            "{denied}"
        );
        let other = reading_note(path, io::ErrorKind::Interrupted.into());
        assert!(!other.to_string().contains("chmod"), "{other}");
    }

    fn failure(code: std::ffi::c_int, msg: &str) -> Error {
        Error::Index {
            path: PathBuf::from("/data/indexes/notes-1/brain.sqlite"),
            cause: rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                Some(msg.to_string()),
            ),
        }
    }

    #[test]
    fn each_index_failure_a_person_can_fix_says_how_on_one_line() {
        let io = failure(rusqlite::ffi::SQLITE_IOERR_SHORT_READ, "disk I/O error").to_string();
        assert!(io.contains("(disk I/O error)"), "{io}");
        assert!(
            io.contains("stop the backend") && io.contains("--rebuild"),
            "{io}"
        );
        let corrupt = failure(rusqlite::ffi::SQLITE_CORRUPT, "malformed").to_string();
        assert!(corrupt.contains("damaged (malformed)"), "{corrupt}");
        let full = failure(rusqlite::ffi::SQLITE_FULL, "full").to_string();
        assert!(full.contains("is full"), "{full}");
        // The test index's folder does not exist: a data folder deleted under a backend.
        let gone = failure(rusqlite::ffi::SQLITE_READONLY, "readonly").to_string();
        assert!(
            gone.contains("is gone (")
                && gone.contains("stop the backend")
                && !gone.contains("writable"),
            "{gone}"
        );
        for message in [io, corrupt, full] {
            assert!(!message.contains('\n'), "{message}");
        }
        // Anything else is SQLite's words, once, with the file.
        let other = failure(rusqlite::ffi::SQLITE_MISMATCH, "datatype mismatch").to_string();
        assert_eq!(
            other,
            "index /data/indexes/notes-1/brain.sqlite: datatype mismatch"
        );
    }
}
