//! Why a model could not be installed, verified or loaded: one line each, naming the file.

use std::io;
use std::path::PathBuf;

/// Why a model could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No manifest of that name is compiled in.
    #[error("{}", unknown(.0, SET_IT))]
    Unknown(String),
    /// No manifest of that name, which was typed as an argument (`brain model fetch X`):
    /// the setting is not the cause, so the line does not send the reader to it.
    #[error("{}", unknown(.0, "give one of 'brain model list'"))]
    UnknownArgument(String),
    /// The model is not installed in the data dir.
    #[error(
        "model {0} is not installed; run 'brain model fetch {0}' (or 'brain model import {0} DIR')"
    )]
    NotInstalled(String),
    /// A pinned file is absent.
    #[error("{}: missing (model {model} needs it)", file.display())]
    Missing {
        /// The model.
        model: String,
        /// The file that should be there.
        file: PathBuf,
    },
    /// A file has the wrong size: it cannot have the pinned hash.
    #[error("{}: size {actual} bytes, expected {expected} (pinned in audit/{model}.toml); refusing to use it: {remedy}", file.display())]
    WrongSize {
        /// The model.
        model: String,
        /// The file.
        file: PathBuf,
        /// Pinned size.
        expected: u64,
        /// Size on disk.
        actual: u64,
        /// What to do about it.
        remedy: String,
    },
    /// The server says its file has another size than the pinned one: it serves another
    /// revision, or an error page, and a retry would get the same.
    #[error("{url}: the server's file is {served} bytes, not the pinned {expected} (audit/{model}.toml): it is another revision or an error page, and fetching again would get the same{remedy}")]
    ServedOtherSize {
        /// The model.
        model: String,
        /// What was asked for.
        url: String,
        /// The size the server declared.
        served: u64,
        /// Pinned size.
        expected: u64,
        /// What to do, when there is something (another hub): `; ...`, or empty.
        remedy: String,
    },
    /// A file's SHA-256 is not the pinned one.
    #[error("{}: sha256 {actual}, expected {expected} (pinned in audit/{model}.toml); refusing to use it: {remedy}", file.display())]
    Mismatch {
        /// The model.
        model: String,
        /// The file (or the address it came from).
        file: PathBuf,
        /// Pinned hash.
        expected: String,
        /// Hash of the bytes on disk.
        actual: String,
        /// What to do: fetch again for a file on disk; for bytes a hub or a folder gave,
        /// where to get the pinned ones instead (the same source would give the same).
        remedy: String,
    },
    /// A loaded file was written to after it was verified (see `verify::Bytes::unchanged`).
    #[error(
        "{}: changed on disk since it was verified and loaded; refusing to use it: run 'brain model verify', then restart the backend (or the app)",
        file.display()
    )]
    ChangedInUse {
        /// The model.
        model: String,
        /// The file.
        file: PathBuf,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error, said in the message (not a `source`, which a
        /// chained report would print a second time).
        cause: io::Error,
    },
    /// A download failed (network, HTTP status, or an interrupted transfer).
    #[error("fetching {url}: {reason}")]
    Fetch {
        /// What was being downloaded.
        url: String,
        /// What went wrong, in one line.
        reason: String,
    },
    /// The files verified but the model could not be built from them.
    #[error("loading model {model}: {reason}")]
    Load {
        /// The model.
        model: String,
        /// What went wrong.
        reason: String,
    },
    /// A request that cannot be met as asked (bad folder, bad dimension, ...).
    #[error("{0}")]
    Invalid(String),
}

/// What to do about a model file on disk whose bytes are not the pinned ones.
pub fn refetch(model: &str) -> String {
    format!("'brain model fetch {model}' downloads it again")
}

/// What to do about the installed file `spec` of `model` when its bytes are not the
/// pinned ones: fetch it again, unless the hub does not serve it (a licence kept beside
/// the weights), which only an import brings back; an optional one may simply go.
pub fn on_disk_remedy(model: &str, spec: &super::manifest::FileSpec) -> String {
    match (spec.hub, spec.required) {
        (true, _) => refetch(model),
        (false, true) => format!(
            "'brain model fetch' does not bring this file: import the model again from a folder that has it ('brain model import {model} DIR')"
        ),
        (false, false) => format!(
            "it is optional (loading never reads it) and 'brain model fetch' does not bring it: remove it, or import the model again from a folder that has it ('brain model import {model} DIR')"
        ),
    }
}

impl ModelError {
    /// Exit code for a command that fails with this error: 2 when the input or the files on
    /// disk cannot be trusted or used as given, 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            ModelError::Unknown(_)
            | ModelError::UnknownArgument(_)
            | ModelError::Missing { .. }
            | ModelError::WrongSize { .. }
            | ModelError::ServedOtherSize { .. }
            | ModelError::Mismatch { .. }
            | ModelError::ChangedInUse { .. }
            | ModelError::Invalid(_) => 2,
            ModelError::NotInstalled(_)
            | ModelError::Io { .. }
            | ModelError::Fetch { .. }
            | ModelError::Load { .. } => 1,
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        ModelError::Io {
            path: path.into(),
            cause: source,
        }
    }

    /// Whether this error says the files on disk are not the pinned ones.
    pub fn is_verification_failure(&self) -> bool {
        matches!(
            self,
            ModelError::Missing { .. } | ModelError::WrongSize { .. } | ModelError::Mismatch { .. }
        )
    }
}

/// Where a model name brain reads by itself is set.
const SET_IT: &str = "set BRAIN_MODEL, or model in the config file, to one of 'brain model list'";

/// The line for a model name brain does not know: the closest known name when one is near
/// (a version typed without its dot), and where names are set.
fn unknown(name: &str, set: &str) -> String {
    let known = super::manifest::all();
    if name.trim().is_empty() {
        return format!("the model name is empty: {set}, or remove it");
    }
    if let Some(width) = name.strip_prefix(super::STAND_IN_PREFIX) {
        let widths = super::STAND_IN_WIDTHS;
        if width.parse().is_ok_and(|w: usize| widths.contains(&w)) {
            // Accepted by search and `model embed`, which make its vectors from nothing.
            return format!(
                "{name} is a stand-in that hashes words (for benchmarks), not a model: it has no files to fetch, import or verify"
            );
        }
        return format!(
            "{name} names no stand-in: give a width from {} to {} (stand-in-hash-384), or a \
             model of 'brain model list'",
            widths.start(),
            widths.end()
        );
    }
    let near = known
        .iter()
        .map(|m| {
            (
                strsim::normalized_damerau_levenshtein(name, &m.name),
                &m.name,
            )
        })
        .filter(|(likeness, _)| *likeness >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        // A part of the name (`minilm`, `allminilm`), far from the whole by edit distance.
        .or_else(|| {
            let letters = |s: &str| -> String {
                s.chars()
                    .filter(char::is_ascii_alphanumeric)
                    .map(|c| c.to_ascii_lowercase())
                    .collect()
            };
            let part = letters(name);
            (part.len() >= 4)
                .then(|| known.iter().find(|m| letters(&m.name).contains(&part)))
                .flatten()
                .map(|m| (1.0, &m.name))
        });
    match near {
        Some((_, close)) => format!("unknown model {name:?} (did you mean {close}?): {set}"),
        None => format!("unknown model {name:?}: {set}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_says_the_closest_one_and_where_names_are_set() {
        let typo = ModelError::Unknown("nomic-embed-text-v15".into()).to_string();
        assert_eq!(
            typo,
            "unknown model \"nomic-embed-text-v15\" (did you mean nomic-embed-text-v1.5?): \
             set BRAIN_MODEL, or model in the config file, to one of 'brain model list'"
        );
        let part = ModelError::Unknown("MiniLM".into()).to_string();
        assert!(part.contains("(did you mean all-minilm-l6-v2?)"), "{part}");
        let typed = ModelError::UnknownArgument("nomic-embed-text-v15".into()).to_string();
        assert_eq!(
            typed,
            "unknown model \"nomic-embed-text-v15\" (did you mean nomic-embed-text-v1.5?): \
             give one of 'brain model list'"
        );
        let far = ModelError::Unknown("gpt".into()).to_string();
        assert!(!far.contains("did you mean"), "{far}");
        let empty = ModelError::Unknown(" ".into()).to_string();
        assert!(empty.starts_with("the model name is empty"), "{empty}");
        let bad = ModelError::Unknown("stand-in-hash-0".into()).to_string();
        assert!(bad.contains("give a width from 8 to 4096"), "{bad}");
        let stand_in = ModelError::Unknown("stand-in-hash-64".into()).to_string();
        assert!(
            stand_in.contains("not a model: it has no files"),
            "{stand_in}"
        );
    }

    #[test]
    fn mismatch_is_one_line_naming_file_and_both_hashes_and_exits_2() {
        let e = ModelError::Mismatch {
            model: "m".into(),
            file: "/d/models/m/model.safetensors".into(),
            expected: "aa".into(),
            actual: "bb".into(),
            remedy: refetch("m"),
        };
        let msg = e.to_string();
        assert!(!msg.contains('\n'));
        for needle in ["model.safetensors", "aa", "bb", "audit/m.toml"] {
            assert!(msg.contains(needle), "{msg}");
        }
        assert_eq!(e.exit_code(), 2);
        assert_eq!(ModelError::NotInstalled("m".into()).exit_code(), 1);
    }
}
