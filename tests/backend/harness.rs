//! A temp brain with its own HOME, runtime dir and data dir; the real `brain` binary run
//! against it; a `brain serve` child that is always killed; raw socket helpers.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_brain");

/// A brain folder and everything brain keeps about it, all under one temp dir.
pub struct Brain {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Brain {
    /// An empty brain.
    pub fn new() -> Brain {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        for sub in ["brain", "home", "run", "data", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Brain { dir, root }
    }

    /// A copy of examples/brain.
    pub fn examples() -> Brain {
        let brain = Brain::new();
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/brain"),
            &brain.root,
        );
        brain
    }

    pub fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// Writes a note (creating folders).
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The `brain` command with this brain's environment and nothing of the caller's.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(BIN);
        for var in [
            "BRAIN_CONFIG",
            "BRAIN_NO_DAEMON",
            "BRAIN_MODEL",
            "BRAIN_LOG",
            "RUST_LOG",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", self.path("home"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_DATA_HOME", self.path("home"))
            .env("BRAIN_DATA_DIR", self.path("data"))
            .env("BRAIN_DIR", &self.root)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `brain ARGS` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// `brain ARGS` that must succeed; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "brain {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `brain ARGS --json` parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    /// Starts `brain serve ARGS` and waits until it answers.
    pub fn serve(&self, args: &[&str]) -> Server {
        let stderr = std::fs::File::create(self.path("serve.stderr")).unwrap();
        let child = self
            .cmd()
            .arg("serve")
            .args(args)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut server = Server {
            child,
            socket: PathBuf::new(),
        };
        let run = self.path("run/brain");
        server.socket = eventually(Duration::from_secs(30), || {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "brain serve exited with {status}: {}",
                    std::fs::read_to_string(self.path("serve.stderr")).unwrap()
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

    /// `brain status --json` (through the backend when one runs).
    pub fn status(&self) -> Value {
        self.json(&["status"])
    }
}

/// A running `brain serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub socket: PathBuf,
}

impl Server {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn conn(&self) -> Conn {
        Conn::open(&self.socket).unwrap()
    }

    /// Sends `sig` and waits (bounded) for the exit.
    pub fn signal_and_wait(&mut self, sig: i32) -> ExitStatus {
        // SAFETY: signalling our own child by pid.
        unsafe { libc::kill(self.pid(), sig) };
        eventually(Duration::from_secs(30), || self.child.try_wait().unwrap())
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Peak resident memory in MiB.
    pub fn peak_rss_mib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<u64>()
            .unwrap()
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
    pub reader: BufReader<UnixStream>,
}

impl Conn {
    pub fn open(socket: &Path) -> std::io::Result<Conn> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            reader: BufReader::new(stream),
        })
    }

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
        self.send(format!("{line}\n").as_bytes()).unwrap();
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

/// Result paths of a search response (`result.search.results[].path`).
pub fn hit_paths(response: &Value) -> Vec<String> {
    response["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
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

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
