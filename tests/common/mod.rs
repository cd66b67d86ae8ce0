//! Shared helpers for integration tests: a temp brain with isolated HOME and data dir, and
//! a runner for the real `brain` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpora/<name>`: read-only test data next to the checkout.
pub fn corpus(name: &str) -> PathBuf {
    let path = repo().join("..").join("shared").join("corpora").join(name);
    assert!(path.is_dir(), "test corpus {} is missing (expected next to the checkout)", path.display());
    path
}

/// Copies a folder tree (files and folders only).
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        let ft = entry.file_type().unwrap();
        if ft.is_dir() {
            copy_dir(&entry.path(), &to);
        } else if ft.is_file() {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// A brain folder in a temp dir, with its own HOME, data dir and runtime dir.
pub struct Brain {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub data: PathBuf,
    pub home: PathBuf,
}

impl Brain {
    /// An empty brain folder.
    pub fn empty() -> Brain {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("brain");
        let data = tmp.path().join("data");
        let home = tmp.path().join("home");
        for d in [&root, &data, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        Brain { tmp, root, data, home }
    }

    /// A copy of `examples/brain`.
    pub fn example() -> Brain {
        let b = Brain::empty();
        copy_dir(&repo().join("examples/brain"), &b.root);
        b
    }

    /// A copy of a shared corpus.
    pub fn corpus(name: &str) -> Brain {
        let b = Brain::empty();
        copy_dir(&corpus(name), &b.root);
        b
    }

    /// Writes a note (creating folders).
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    /// The `brain` command with this brain's isolated environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_brain"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("BRAIN_DIR", &self.root)
            .env("BRAIN_DATA_DIR", &self.data)
            .env("XDG_RUNTIME_DIR", self.tmp.path().join("run"))
            .current_dir(self.tmp.path());
        cmd
    }

    /// Runs `brain ARGS` and returns its output.
    pub fn run(&self, args: &[&str]) -> Run {
        Run(self.command().args(args).output().expect("run brain"))
    }

    /// Runs `brain ARGS`, asserting success.
    pub fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert!(r.0.status.success(), "brain {args:?} failed: {}\n{}", r.stderr(), r.stdout());
        r
    }
}

/// A finished run.
pub struct Run(pub Output);

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout()))
    }
}
