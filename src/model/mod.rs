//! Pinned models: the manifests in `audit/` (compiled in), verification of every required
//! file before every load, and the two ways to install a model: [`fetch`] from the hub (the
//! only network code in brain) and [`Store::import`] from a local folder.
//!
//! Installed models live in `$BRAIN_DATA_DIR/models/<name>/`, each file at its hub-relative
//! path. A folder there is complete by construction: installs are staged in a hidden folder
//! and renamed into place only after every file matched its pin.

mod error;
pub mod fetch;
pub mod install;
pub mod manifest;
mod stamp;
pub mod verify;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use error::ModelError;
pub use install::InstallReport;
pub use manifest::{Architecture, FileSpec, Manifest, Pooling};
pub use verify::{FileStatus, VerifiedFiles};

/// The name prefix of the stand-in embedder (`embed::stand_in`): a name brain accepts that
/// has no files. Kept here, below `embed`, so that this module's messages know it.
pub const STAND_IN_PREFIX: &str = "stand-in-hash-";

/// The widths a stand-in may have (`stand-in-hash-384`).
pub const STAND_IN_WIDTHS: std::ops::RangeInclusive<usize> = 8..=4096;

/// The manifest named `name`, or [`ModelError::Unknown`].
pub fn manifest(name: &str) -> Result<&'static Manifest, ModelError> {
    manifest::find(name).ok_or_else(|| ModelError::Unknown(name.to_string()))
}

/// The installed models: one folder per model, `<dir>/<name>/`, each file at its
/// hub-relative path. Knows only its folder, so the settings that choose it stay above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The models kept under `dir` (`$BRAIN_DATA_DIR/models`).
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    /// The folder holding every model.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `name` is (or would be) installed.
    pub fn install_dir(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether `name` is installed: every required file present with its pinned size. No
    /// hashing, so it is cheap enough to call before every search.
    pub fn is_installed(&self, name: &str) -> bool {
        manifest::find(name).is_some_and(|m| verify::looks_installed(m, &self.install_dir(name)))
    }

    /// The required files of the installed model `name` written to since a load last
    /// verified them (see [`verify::changed_since_verified`]).
    pub fn changed_since_verified(&self, name: &str) -> Vec<String> {
        manifest::find(name).map_or_else(Vec::new, |m| {
            verify::changed_since_verified(m, &self.install_dir(name))
        })
    }

    /// Hashes the required files of the installed model `name` and returns their verified
    /// bytes.
    pub fn open_verified(
        &self,
        name: &str,
    ) -> Result<(&'static Manifest, VerifiedFiles), ModelError> {
        let m = manifest(name)?;
        let dir = self.install_dir(name);
        if !dir.is_dir() {
            return Err(ModelError::NotInstalled(name.to_string()));
        }
        Ok((m, verify::open_verified(m, &dir)?))
    }
}

/// The result of `brain model verify`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The model.
    pub model: String,
    /// Its folder.
    pub dir: PathBuf,
    /// One line per pinned file.
    pub files: Vec<FileStatus>,
}

impl Store {
    /// Re-hashes every pinned file of the installed model `name`. The report lists every
    /// file; the error, when there is one, is the first failure (a missing required file, a
    /// wrong size or hash), so a caller can show every file and still fail on the first.
    pub fn verify(&self, name: &str) -> (VerifyReport, Option<ModelError>) {
        let dir = self.install_dir(name);
        let empty = |model: &str| VerifyReport {
            model: model.to_string(),
            dir: dir.clone(),
            files: vec![],
        };
        let m = match manifest(name) {
            Ok(m) => m,
            Err(e) => return (empty(name), Some(e)),
        };
        if !dir.is_dir() {
            return (
                empty(name),
                Some(ModelError::NotInstalled(name.to_string())),
            );
        }
        let checked = verify::check_all(m, &dir);
        let mut first_error = None;
        let mut files = Vec::with_capacity(checked.len());
        for (status, err) in checked {
            if first_error.is_none() {
                first_error = err;
            }
            files.push(status);
        }
        (
            VerifyReport {
                model: m.name.clone(),
                dir,
                files,
            },
            first_error,
        )
    }

    /// Every known model with its install state; `selected` is the configured model's
    /// name, `device` where a model would run and why (the caller knows), and `hash`
    /// re-hashes installed ones (slower).
    pub fn list(&self, selected: &str, device: (&str, Option<&str>), hash: bool) -> Vec<ModelInfo> {
        manifest::all()
            .iter()
            .map(|m| {
                let dir = self.install_dir(&m.name);
                let installed = verify::looks_installed(m, &dir);
                let verified = (installed && hash).then(|| self.verify(&m.name).1.is_none());
                ModelInfo {
                    name: m.name.clone(),
                    selected: m.name == selected,
                    repo: m.repo.clone(),
                    revision: m.revision.clone(),
                    architecture: m.architecture,
                    dims: m.dims,
                    size: m.total_size(),
                    installed,
                    verified,
                    device: device.0.to_string(),
                    device_note: device.1.map(str::to_string),
                    damaged: !installed && !self.changed_since_verified(&m.name).is_empty(),
                    dir,
                    partial_fetch: fetch::has_partial(&self.dir, &m.name),
                }
            })
            .collect()
    }

    /// Installs `name` from `src`, a folder in the hub's layout, verifying every file.
    pub fn import(&self, name: &str, src: &Path) -> Result<InstallReport, ModelError> {
        let m = manifest(name)?;
        self.usable()?;
        install::import(m, &self.dir, src)
    }

    /// Refuses a models folder that is a file (or anything but a folder): every install
    /// would fail inside it with "Not a directory" and a staging path nobody made.
    fn usable(&self) -> Result<(), ModelError> {
        match std::fs::metadata(&self.dir) {
            Ok(m) if !m.is_dir() => Err(ModelError::Invalid(format!(
                "the models folder {} is a file, not a folder: move it away (brain makes the folder)",
                self.dir.display()
            ))),
            _ => Ok(()),
        }
    }

    /// Downloads `name` from `hub` (see [`fetch::hub_url`]) at its pinned revision. A model
    /// that is already installed and verifies is left alone.
    pub fn fetch(
        &self,
        name: &str,
        hub: &str,
        progress: &mut dyn FnMut(&fetch::Progress),
    ) -> Result<InstallReport, ModelError> {
        let m = manifest(name)?;
        self.usable()?;
        let dir = self.install_dir(name);
        if verify::looks_installed(m, &dir) && self.verify(name).1.is_none() {
            return Ok(InstallReport {
                model: m.name.clone(),
                dir,
                files: vec![],
                bytes: 0,
                already_installed: true,
            });
        }
        fetch::fetch(m, &self.dir, hub, progress)
    }
}

/// One row of `brain model list`.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    /// Manifest name.
    pub name: String,
    /// Whether this is the configured model.
    pub selected: bool,
    /// Hub repository.
    pub repo: String,
    /// Pinned revision.
    pub revision: String,
    /// Architecture.
    pub architecture: Architecture,
    /// Vector length.
    pub dims: usize,
    /// Total size of the pinned files, in bytes.
    pub size: u64,
    /// Every required file present with its pinned size.
    pub installed: bool,
    /// Every present file hashed and matched (`None` when not installed or not checked).
    pub verified: Option<bool>,
    /// Where the model would run.
    pub device: String,
    /// Why on the CPU although this build supports a GPU (none found, `BRAIN_DEVICE=cpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_note: Option<String>,
    /// Installed once (verified), and now a file is missing or not its pinned size: what
    /// `brain status` calls damaged, not a model never installed.
    pub damaged: bool,
    /// Install folder.
    pub dir: PathBuf,
    /// A fetch was interrupted and can be resumed.
    pub partial_fetch: bool,
}

/// A copy of a real manifest pinning the given (path, bytes, required) files instead.
#[cfg(test)]
pub(crate) fn test_manifest(name: &str, files: &[(&str, &[u8], bool)]) -> Manifest {
    let mut m = manifest::find("all-minilm-l6-v2")
        .expect("compiled in")
        .clone();
    m.name = name.into();
    m.files = files
        .iter()
        .map(|(p, b, req)| FileSpec {
            path: p.to_string(),
            size: b.len() as u64,
            sha256: verify::sha256_hex(b),
            required: *req,
            hub: true,
        })
        .collect();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_folder_that_is_a_file_is_said_so_before_any_install() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("models");
        std::fs::write(&file, "x").unwrap();
        let store = Store::new(&file);
        let err = store
            .import("all-minilm-l6-v2", dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a file, not a folder"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }
}
