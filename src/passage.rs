//! Reading a note's text back, whole or a run of its lines, for `brain get`, the socket's
//! `get` request and the app's preview. Only files inside the brain root are read: a path
//! that climbs out (`..`, an absolute path elsewhere, a symlink pointing away) is refused.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::index::walk;

/// Which note, and which of its lines, to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetRequest {
    /// The note: relative to the brain root (as search hits give it), or absolute inside it.
    pub path: String,
    /// First line to return, 1-based; the whole note when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// How many lines from `line` (or from the top); to the end when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

impl GetRequest {
    /// The whole note at `path`.
    pub fn new(path: impl Into<String>) -> Self {
        GetRequest { path: path.into(), line: None, count: None }
    }
}

/// Some or all of a note's lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// Path relative to the brain root, `/`-separated.
    pub path: String,
    /// Absolute path on disk.
    pub abs_path: String,
    /// 1-based number of the first line in `lines`.
    pub first_line: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// The lines asked for, without their line endings.
    pub lines: Vec<String>,
}

/// Reads the lines `req` asks for from a note inside `config.root`.
pub fn read(config: &Config, req: &GetRequest) -> Result<Passage> {
    let (abs, rel) = resolve(&config.root, &req.path)?;
    let mut bytes = Vec::new();
    let file = std::fs::File::open(&abs).map_err(|e| Error::io(&abs, e))?;
    file.take(config.max_file_bytes + 1).read_to_end(&mut bytes).map_err(|e| Error::io(&abs, e))?;
    if bytes.len() as u64 > config.max_file_bytes {
        return Err(Error::InvalidInput(format!("{rel}: larger than the {} MB limit", config.max_file_bytes >> 20)));
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    let total = all.len() as u32;
    let first = req.line.unwrap_or(1).max(1);
    if first > total.max(1) {
        return Err(Error::InvalidInput(format!("{rel} has {total} lines; line {first} is past the end")));
    }
    let start = (first - 1) as usize;
    let end = match req.count {
        Some(n) => (start + n as usize).min(all.len()),
        None => all.len(),
    };
    Ok(Passage {
        path: rel,
        abs_path: abs.to_string_lossy().into_owned(),
        first_line: first,
        total_lines: total,
        lines: all[start..end].iter().map(|l| l.to_string()).collect(),
    })
}

/// The canonical absolute path of `path` and its path relative to `root`, if it names a
/// file inside `root`.
fn resolve(root: &Path, path: &str) -> Result<(PathBuf, String)> {
    let given = Path::new(path);
    if path.is_empty() || given.components().any(|c| c == Component::ParentDir) {
        return Err(outside(path, root));
    }
    let joined = if given.is_absolute() { given.to_path_buf() } else { root.join(given) };
    let canon_root = std::fs::canonicalize(root).map_err(|_| Error::RootMissing { path: root.to_path_buf() })?;
    let abs = std::fs::canonicalize(&joined).map_err(|e| Error::io(&joined, e))?;
    let rel = match abs.strip_prefix(&canon_root) {
        Ok(_) => walk::relative(&canon_root, &abs).ok_or_else(|| outside(path, root))?,
        Err(_) => return Err(outside(path, root)),
    };
    if !abs.is_file() {
        return Err(Error::InvalidInput(format!("{path} is not a file")));
    }
    Ok((abs, rel))
}

fn outside(path: &str, root: &Path) -> Error {
    Error::InvalidInput(format!("{path:?} is not inside the brain folder {}", root.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brain() -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("root/lore")).unwrap();
        std::fs::write(dir.path().join("root/lore/a.md"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.path().join("secret.md"), "no").unwrap();
        let config = Config::for_root(dir.path().join("root"), dir.path().join("data"));
        (dir, config)
    }

    #[test]
    fn reads_whole_notes_and_line_ranges() {
        let (_dir, config) = brain();
        let all = read(&config, &GetRequest::new("lore/a.md")).unwrap();
        assert_eq!((all.first_line, all.total_lines, all.lines.len()), (1, 3, 3));
        let some = read(&config, &GetRequest { path: "lore/a.md".into(), line: Some(2), count: Some(5) }).unwrap();
        assert_eq!(some.lines, ["two", "three"]);
        assert_eq!(some.path, "lore/a.md");
        let abs = config.root.join("lore/a.md").to_string_lossy().into_owned();
        assert_eq!(read(&config, &GetRequest::new(abs)).unwrap().path, "lore/a.md");
    }

    #[test]
    fn refuses_paths_outside_the_root() {
        let (dir, config) = brain();
        std::os::unix::fs::symlink(dir.path().join("secret.md"), config.root.join("link.md")).unwrap();
        let abs = dir.path().join("secret.md").to_string_lossy().into_owned();
        for path in ["../secret.md", "link.md", abs.as_str(), ""] {
            let err = read(&config, &GetRequest::new(path)).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)), "{path}: {err}");
        }
        let err = read(&config, &GetRequest { path: "lore/a.md".into(), line: Some(9), count: None }).unwrap_err();
        assert!(err.to_string().contains("past the end"), "{err}");
    }
}
