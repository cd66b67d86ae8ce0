//! Downloading a model from the hub at its pinned revision: the only code in brain that
//! opens a network connection.
//!
//! Files land in a hidden `.NAME.partial/` folder beside the installed models. A transfer
//! that breaks keeps what it received, and the next fetch asks for the rest with an HTTP
//! `Range` request. Each file is hashed when complete; the folder is renamed into place
//! only when every file matches its pin.

use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use super::install::{commit, staging_dir, InstallReport};
use super::manifest::{FileSpec, Manifest};
use super::verify::{file_path, sha256_file};
use super::ModelError;

/// The hub used when `BRAIN_HUB_URL` is not set.
pub const DEFAULT_HUB_URL: &str = "https://huggingface.co";

/// The hub base URL: `BRAIN_HUB_URL` (a mirror, or a test server), else the default.
pub fn hub_url() -> String {
    std::env::var("BRAIN_HUB_URL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim_end_matches('/').to_string())
        .unwrap_or_else(|| DEFAULT_HUB_URL.to_string())
}

/// The URL of one pinned file: `{hub}/{repo}/resolve/{revision}/{path}`.
pub fn file_url(hub: &str, manifest: &Manifest, path: &str) -> String {
    format!(
        "{hub}/{}/resolve/{}/{path}",
        manifest.repo, manifest.revision
    )
}

/// What a fetch reports while it runs, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// A file starts (or resumes) downloading: `done` bytes are already there.
    Start {
        /// Hub-relative path.
        file: String,
        /// Bytes already present.
        done: u64,
        /// Pinned size.
        total: u64,
    },
    /// More bytes arrived.
    Advance {
        /// Hub-relative path.
        file: String,
        /// Bytes present now.
        done: u64,
        /// Pinned size.
        total: u64,
    },
    /// The file is complete and matches its pin.
    Verified {
        /// Hub-relative path.
        file: String,
    },
    /// An optional file (loading never reads it) could not be fetched as pinned: left out.
    Skipped {
        /// Hub-relative path.
        file: String,
        /// Why.
        reason: String,
    },
}

/// Downloads every hub file of `manifest` into `models_dir/NAME/`. Files already complete
/// in the staging folder are kept (after a hash check); partial ones are resumed.
pub fn fetch(
    manifest: &Manifest,
    models_dir: &Path,
    hub: &str,
    progress: &mut dyn FnMut(&Progress),
) -> Result<InstallReport, ModelError> {
    super::install::remove_abandoned_imports(models_dir, &manifest.name);
    let staging = staging_dir(models_dir, &manifest.name, "partial");
    fs::create_dir_all(&staging).map_err(|e| ModelError::io(&staging, e))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .user_agent(concat!("brain/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();

    let mut bytes = 0;
    let mut files = Vec::new();
    for spec in manifest.files.iter().filter(|f| f.hub) {
        let dest = file_path(&staging, &spec.path);
        let got = fetch_file(
            &agent,
            manifest,
            spec,
            &file_url(hub, manifest, &spec.path),
            &dest,
            progress,
        );
        match got {
            Ok(n) => {
                bytes += n;
                progress(&Progress::Verified {
                    file: spec.path.clone(),
                });
                files.push(spec.path.clone());
            }
            // Some optional files are pinned from the wheel only (audit/): one the hub does
            // not have, or has otherwise, must not keep the model from installing.
            Err(e) if !spec.required && not_on_the_hub(&e) => {
                let _ = remove(&dest);
                progress(&Progress::Skipped {
                    file: spec.path.clone(),
                    reason: e.to_string(),
                });
            }
            Err(e) => return Err(e),
        }
    }
    let target = models_dir.join(&manifest.name);
    commit(&staging, &target)?;
    Ok(InstallReport {
        model: manifest.name.clone(),
        dir: target,
        files,
        bytes,
        already_installed: false,
    })
}

/// Whether `e` says the hub has no such file, or other bytes than pinned: a network or
/// disk failure is not that, and fails the fetch (to be resumed) as for any file.
fn not_on_the_hub(e: &ModelError) -> bool {
    match e {
        ModelError::Mismatch { .. }
        | ModelError::WrongSize { .. }
        | ModelError::ServedOtherSize { .. } => true,
        ModelError::Fetch { reason, .. } => reason.starts_with("HTTP 404"),
        _ => false,
    }
}

/// Brings one file to its pinned bytes; returns how many bytes were downloaded.
fn fetch_file(
    agent: &ureq::Agent,
    manifest: &Manifest,
    spec: &FileSpec,
    url: &str,
    dest: &Path,
    progress: &mut dyn FnMut(&Progress),
) -> Result<u64, ModelError> {
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| ModelError::io(parent, e))?;
    }
    let mut have = fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
    if have > spec.size {
        remove(dest)?;
        have = 0;
    }
    let fail = |reason: String| ModelError::Fetch {
        url: url.to_string(),
        reason,
    };
    let mut downloaded = 0;
    if have < spec.size {
        progress(&Progress::Start {
            file: spec.path.clone(),
            done: have,
            total: spec.size,
        });
        let mut request = agent.get(url);
        if have > 0 {
            request = request.header("Range", format!("bytes={have}-"));
        }
        let response = request.call().map_err(|e| {
            // Unreachable (no network, a firewall, a proxy): the files can come another way.
            let offline = match e {
                ureq::Error::StatusCode(_) => String::new(),
                _ => format!(
                    "; without a network, 'brain model import {} DIR' installs it from a folder of its files",
                    manifest.name
                ),
            };
            fail(format!("{e}{offline}"))
        })?;
        let status = response.status().as_u16();
        let resumed = match status {
            206 if have > 0 && content_range(&response).map(|r| r.0) == Some(have) => true,
            200 => false,
            // A server that will not resume from here: start the file over next time.
            206 | 416 => {
                remove(dest)?;
                return Err(fail(format!(
                    "the server could not resume at byte {have}; run the fetch again"
                )));
            }
            _ => return Err(fail(format!("HTTP {status}"))),
        };
        if !resumed {
            have = 0;
        }
        // A mirror serving a file of another size would otherwise end "short" every time,
        // each fetch asking to be run again to resume what can never be completed.
        if let Some(served) = declared_size(&response) {
            if served != spec.size {
                remove(dest)?;
                let remedy = format!("; {}", other_source(url));
                return Err(ModelError::ServedOtherSize {
                    model: manifest.name.clone(),
                    url: url.to_string(),
                    served,
                    expected: spec.size,
                    remedy,
                });
            }
        }
        let mut out = OpenOptions::new()
            .create(true)
            .write(true)
            .append(resumed)
            .truncate(!resumed)
            .open(dest)
            .map_err(|e| ModelError::io(dest, e))?;
        let mut body = response.into_body().into_reader();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match body.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    let _ = out.flush();
                    return Err(fail(format!(
                        "transfer broke after {have} of {} bytes ({e}); run the fetch again to resume",
                        spec.size
                    )));
                }
            };
            if have + n as u64 > spec.size {
                drop(out);
                remove(dest)?;
                return Err(fail(format!(
                    "the server sent more than the pinned {} bytes",
                    spec.size
                )));
            }
            out.write_all(&buf[..n])
                .map_err(|e| ModelError::io(dest, e))?;
            have += n as u64;
            downloaded += n as u64;
            progress(&Progress::Advance {
                file: spec.path.clone(),
                done: have,
                total: spec.size,
            });
        }
        out.sync_all().map_err(|e| ModelError::io(dest, e))?;
        if have != spec.size {
            return Err(fail(format!(
                "transfer ended after {have} of {} bytes; run the fetch again to resume",
                spec.size
            )));
        }
    }
    let actual = sha256_file(dest).map_err(|e| ModelError::io(dest, e))?;
    if actual != spec.sha256 {
        // Wrong bytes are never kept: the next fetch starts this file over.
        remove(dest)?;
        // Bytes kept from an earlier, broken fetch may be the wrong ones (a disk fault, a
        // file written over): the server is blamed only for a file it sent whole.
        let earlier = spec.size.saturating_sub(downloaded);
        let remedy = match earlier {
            0 => format!(
                "the server sent other bytes, and fetching again would get the same; {}",
                other_source(url)
            ),
            kept => format!(
                "{kept} of its bytes were kept from an earlier fetch and may be the bad ones: run the fetch again, which starts this file over"
            ),
        };
        return Err(ModelError::Mismatch {
            model: manifest.name.clone(),
            file: Path::new(url).to_path_buf(),
            expected: spec.sha256.clone(),
            actual,
            remedy,
        });
    }
    Ok(downloaded)
}

/// Where the pinned bytes can come from when `url`'s server gives others.
fn other_source(url: &str) -> &'static str {
    match url.starts_with(DEFAULT_HUB_URL) {
        true => "'brain model import' takes the pinned files from a folder",
        false => "set BRAIN_HUB_URL to a mirror of the pinned revision, or unset it to fetch from the Hugging Face hub",
    }
}

/// The whole file's size as the server declares it: `Content-Range`'s total for a resumed
/// transfer, else `Content-Length` (unless the body is encoded, when that is not the file's).
fn declared_size(response: &ureq::http::Response<ureq::Body>) -> Option<u64> {
    let header = |name: &str| response.headers().get(name)?.to_str().ok();
    if response.status().as_u16() == 206 {
        return content_range(response)?.1;
    }
    if header("content-encoding").is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity")) {
        return None;
    }
    header("content-length")?.trim().parse().ok()
}

/// `Content-Range: bytes START-END/TOTAL`: START, and TOTAL unless it is `*` (unknown).
fn content_range(response: &ureq::http::Response<ureq::Body>) -> Option<(u64, Option<u64>)> {
    let value = response.headers().get("content-range")?.to_str().ok()?;
    let range = value.trim().strip_prefix("bytes")?.trim();
    let start = range.split('-').next()?.trim().parse().ok()?;
    let total = range.rsplit('/').next().and_then(|t| t.trim().parse().ok());
    Some((start, total))
}

fn remove(path: &Path) -> Result<(), ModelError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ModelError::io(path, e)),
    }
}

/// Whether a staging folder with a partial download exists for `name`.
pub fn has_partial(models_dir: &Path, name: &str) -> bool {
    staging_dir(models_dir, name, "partial").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_the_hub_layout_at_the_pinned_revision() {
        let m = crate::model::manifest::find("all-minilm-l6-v2").unwrap();
        assert_eq!(
            file_url("http://127.0.0.1:9", m, "1_Pooling/config.json"),
            "http://127.0.0.1:9/sentence-transformers/all-MiniLM-L6-v2/resolve/1110a243fdf4706b3f48f1d95db1a4f5529b4d41/1_Pooling/config.json"
        );
    }
}
