//! Faults, for real: `brain index` and `brain serve` killed with SIGKILL at random moments
//! (with the WAL cut short as a power loss would), a data dir on a full filesystem, and
//! read-only folders. After each, the index passes SQLite's own integrity checks and the
//! next run completes; no note is ever touched.
//!
//! The loops are short here (`BRAIN_CRASH_LOOPS`, default 6 kills of each kind);
//! `scripts/crash-loop.sh` runs them 50 times. Mounting a tmpfs needs root: elsewhere the
//! filesystem tests say they were skipped, and why.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::harness::{eventually, hit_paths, Brain};

const NOTES: usize = 3000;

/// A keyword search of the example brain that answers from the index as it is.
const FIND_BUSY_TIMEOUT: &[&str] = &[
    "search",
    "busy_timeout",
    "--mode",
    "bm25",
    "--no-sync",
    "--json",
];

/// How many kills each crash loop makes.
fn loops() -> usize {
    std::env::var("BRAIN_CRASH_LOOPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6)
}

/// A small deterministic generator (seeded from the clock, printed, and settable with
/// `BRAIN_CRASH_SEED`), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("BRAIN_CRASH_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(7)
            });
        eprintln!("crash loop seed: BRAIN_CRASH_SEED={seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A brain of `NOTES` notes, each findable by its own word.
fn bulk() -> Brain {
    let b = Brain::new();
    for i in 0..NOTES {
        b.write(
            &format!("bulk/{:02}/{i:05}.md", i % 30),
            format!(
                "# Bulk note {i}\n\nword w{i:05} in a note about {}\n\n{}\n",
                ["retries", "caches", "queues"][i % 3],
                "filler text for the passage ".repeat(20)
            ),
        );
    }
    b
}

/// Rewrites `count` notes starting at `from` so the next sync has work to do.
fn touch(b: &Brain, from: usize, count: usize, round: usize) {
    for i in (from..from + count).map(|i| i % NOTES) {
        b.write(
            &format!("bulk/{:02}/{i:05}.md", i % 30),
            format!(
                "# Bulk note {i}\n\nword w{i:05} revised in round {round}\n\n{}\n",
                "more filler for the passage ".repeat(20)
            ),
        );
    }
}

/// Removes the index file `db` with each suffix of `sides` (`""` the file itself, `"-wal"`,
/// `"-shm"`), as a copy or a cleaner leaves it; what is not there is no error.
fn remove_index_files(db: &Path, sides: &[&str]) {
    for side in sides {
        let _ = std::fs::remove_file(format!("{}{side}", db.display()));
    }
}

/// Every `.md` byte of the notes folder, to prove nothing was written there.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// SQLite's integrity check and the FTS5 index's own, on the index file as it is.
fn assert_intact(index: &Path, after: &str) {
    let conn = Connection::open_with_flags(index, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .unwrap_or_else(|e| panic!("{after}: cannot open {}: {e}", index.display()));
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{after}: integrity_check failed to run: {e}"));
    assert_eq!(ok, "ok", "{after}: integrity_check");
    // A kill in the first milliseconds of a first index lands after the file is created and
    // before the schema's first transaction commits: an empty database, which the next
    // open migrates like a new one (the final run below checks that it does).
    let tables: i64 = conn
        .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    if tables == 0 {
        return;
    }
    conn.execute(
        "INSERT INTO notes_fts(notes_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap_or_else(|e| panic!("{after}: the full-text index is inconsistent: {e}"));
    let orphans: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM chunks WHERE note_id NOT IN (SELECT id FROM notes)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0, "{after}: passages of notes that are gone");
}

/// Cuts the write-ahead log short, as a power loss would: somewhere in the frames written
/// since the last checkpoint. Frames a checkpoint has copied (or begun to copy) into the
/// database are never cut: SQLite syncs the WAL before it checkpoints (also with
/// `synchronous = NORMAL`), so no power loss takes those away, while cutting them leaves a
/// half-updated database that no real crash can make (the first version of this loop did,
/// and integrity_check said so). The checkpoint's progress is in the wal-index (`-shm`):
/// `nBackfill` at byte 96 and `nBackfillAttempted` at byte 128, the page size at byte 14.
fn cut_wal(index: &Path, rng: &mut Rng) -> Option<u64> {
    let wal = PathBuf::from(format!("{}-wal", index.display()));
    let shm = std::fs::read(format!("{}-shm", index.display())).ok()?;
    let len = std::fs::metadata(&wal).ok()?.len();
    let u32_at = |at: usize| {
        shm.get(at..at + 4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
    };
    let page = shm
        .get(14..16)
        .map(|b| u16::from_ne_bytes(b.try_into().unwrap()))?;
    // 1 stands for 65536 in SQLite's header; WAL frames are a 24-byte header and a page.
    let page = if page == 1 { 65536 } else { page as u64 };
    let copied = u32_at(96)?.max(u32_at(128).unwrap_or(0)) as u64;
    let keep_at_least = 32 + copied * (24 + page);
    if page < 512 || len <= keep_at_least {
        return None;
    }
    let keep = keep_at_least + rng.below(len - keep_at_least);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&wal)
        .and_then(|f| f.set_len(keep))
        .ok()?;
    Some(len - keep)
}

/// After the loops: one run completes, every note is there, and a sample is found by its
/// own word.
fn assert_complete(b: &Brain, rng: &mut Rng) {
    b.ok(&["index"]);
    assert_intact(&b.config().index_path(), "the final index");
    assert_eq!(b.json(&["status", "--no-daemon"])["notes"], NOTES as u64);
    for _ in 0..12 {
        let i = rng.below(NOTES as u64) as usize;
        let found = hit_paths(&b.json(&[
            "search",
            &format!("w{i:05}"),
            "--mode",
            "bm25",
            "--no-sync",
            "--no-daemon",
        ]));
        assert_eq!(found, [format!("bulk/{:02}/{i:05}.md", i % 30)], "note {i}");
    }
}

#[test]
fn kill_9_at_random_moments_of_an_index_never_damages_it() {
    let b = bulk();
    let notes = snapshot(&b.root);
    let index = b.config().index_path();
    let mut rng = Rng::new();
    // How long a whole cold index takes here, to aim the kills inside it.
    let timed = Instant::now();
    b.ok(&["index"]);
    let mut span = (timed.elapsed().as_millis() as u64).max(200);
    std::fs::remove_dir_all(&b.data).unwrap();
    let (mut interrupted, mut cuts) = (0, 0);
    for round in 0..loops() {
        if round > 0 {
            touch(&b, rng.below(NOTES as u64) as usize, NOTES / 3, round);
        }
        let mut child = b
            .command()
            .arg("index")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(span)));
        if child.try_wait().unwrap().is_none() {
            interrupted += 1;
        } else {
            // Done before the kill: the cold index was timed on a busier machine than this
            // moment's (a CI runner building something beside it), or a third of the notes
            // take less. Aim shorter, so that kills still land inside an index.
            span = (span * 3 / 4).max(50);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if !index.exists() {
            continue;
        }
        let what = match round % 3 == 2 {
            true => match cut_wal(&index, &mut rng) {
                Some(cut) => {
                    cuts += 1;
                    format!("kill {round}, then {cut} bytes cut off the WAL")
                }
                None => format!("kill {round}"),
            },
            false => format!("kill {round}"),
        };
        assert_intact(&index, &what);
    }
    eprintln!(
        "{interrupted} of {} kills landed mid-index (the last aimed within {span} ms of its start); {cuts} WALs cut short",
        loops()
    );
    if loops() >= 4 {
        assert!(
            interrupted > 0,
            "no kill landed while indexing: aim the delays better"
        );
    }
    let touched = snapshot(&b.root);
    assert_eq!(
        touched.len(),
        notes.len(),
        "a file appeared in the notes folder"
    );
    assert_complete(&b, &mut rng);
}

/// A rebuild makes its new index beside the old one: killed at any moment, the index in
/// place still holds the whole search log (the old one's, or the new one's copy of it) and
/// every note, never the empty or half-read file a rebuild that moved the old one aside
/// first left behind.
#[test]
fn kill_9_at_random_moments_of_a_rebuild_never_loses_the_search_log() {
    let b = bulk();
    b.ok(&["index"]);
    for q in ["w00042", "retries", "caches queues", "w01234"] {
        b.ok(&["search", q, "--mode", "bm25", "--no-sync"]);
    }
    let index = b.config().index_path();
    let logged = recalls(&index);
    let mut rng = Rng::new();
    let timed = Instant::now();
    b.ok(&["index", "--rebuild"]);
    let span = (timed.elapsed().as_millis() as u64).max(100);
    for round in 0..loops() {
        let mut child = b
            .command()
            .args(["index", "--rebuild"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Most kills early, where the new index is being filled.
        std::thread::sleep(Duration::from_millis(rng.below(span / 4 + 1)));
        child.kill().unwrap();
        child.wait().unwrap();
        let what = format!("rebuild killed, round {round}");
        assert_intact(&index, &what);
        assert_eq!(recalls(&index), logged, "{what}");
        // Nor a new index half read: the notes are read in before it takes the place.
        assert_eq!(note_rows(&index), NOTES as i64, "{what}");
    }
    // A killed rebuild's staging index (as large as the index) is removed by the next
    // `brain index`, and by a backend at start, not only by the next rebuild.
    let staging = index.with_file_name(format!(
        "{}.rebuilding",
        index.file_name().unwrap().to_string_lossy()
    ));
    for start in ["index", "serve"] {
        std::fs::copy(&index, &staging).unwrap();
        match start {
            "index" => {
                b.ok(&["index"]);
            }
            _ => drop(b.serve(&[])),
        }
        // The staging index and its side files (a `.rebuilt` one, complete, left by a
        // kill between the renames above, waits for the next rebuild, which replaces it).
        assert!(
            ["", "-wal", "-shm"].iter().all(|side| {
                !staging
                    .with_file_name(format!(
                        "{}{side}",
                        staging.file_name().unwrap().to_string_lossy()
                    ))
                    .exists()
            }),
            "left after {start}"
        );
    }
    let j = b.json(&["index", "--rebuild"]);
    assert_eq!(j["rebuild"]["recalls"], logged, "{j}");
    assert!(
        !rebuild_leftovers(&index),
        "the staging index was left behind"
    );
    assert_eq!(b.json(&["status", "--no-daemon"])["notes"], NOTES as u64);
}

/// Whether a rebuild's staging index (or a side file of it) is next to `index`.
fn rebuild_leftovers(index: &Path) -> bool {
    let name = index.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(index.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(&format!("{name}.rebuilding"))
                || n.starts_with(&format!("{name}.rebuilt"))
        })
}

#[test]
fn kill_9_while_the_backend_embeds_and_answers_never_damages_the_index() {
    let b = Brain::new().model();
    for i in 0..200 {
        b.write(
            &format!("lore/n{i:03}.md"),
            format!(
                "# Lesson {i}\n\nword w{i:05}: retries need jitter, caches need a TTL, queue {i}\n\n{}\n",
                "a passage about backoff and load ".repeat(12)
            ),
        );
    }
    let index = b.config().index_path();
    let mut rng = Rng::new();
    for round in 0..loops().div_ceil(2) {
        let mut server = b.serve(&[]);
        // Queries while it syncs and embeds.
        let deadline = Instant::now() + Duration::from_millis(300 + rng.below(2500));
        while Instant::now() < deadline {
            let _ = b
                .command()
                .args(["search", "retries jitter", "--top", "3"])
                .output();
        }
        server.signal_and_wait(libc::SIGKILL);
        assert_intact(&index, &format!("backend kill {round}"));
    }
    // The next backend finishes the job: every passage gets its vector.
    let _server = b.serve(&[]);
    eventually(Duration::from_secs(180), || {
        let s = b.status();
        (s["notes"] == 200 && s["pending_chunks"] == 0).then_some(())
    });
    assert_eq!(
        hit_paths(&b.json(&["search", "w00042", "--mode", "bm25"])),
        ["lore/n042.md"]
    );
}

/// A brain with the model and 120 lessons, each with its own word and `filler` 30 times.
fn lessons(filler: &str) -> Brain {
    let b = Brain::new().model();
    for i in 0..120 {
        b.write(
            &format!("lore/n{i:03}.md"),
            format!("# Lesson {i}\n\nword w{i:05}: {}\n", filler.repeat(30)),
        );
    }
    b
}

/// `brain index --json` started, its output piped.
fn spawn_in(b: &Brain) -> std::process::Child {
    b.command()
        .args(["index", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Issue #17: two `brain index` at once (each waits for the other's batches: SQLite's busy
/// timeout), and `brain index` while the backend embeds. Both finish, nothing is lost, and
/// searches in between are answered from the last committed state.
#[test]
fn two_indexes_at_once_and_an_index_while_the_backend_embeds_both_finish() {
    let b = bulk();
    let index = b.config().index_path();
    let (first, second) = (spawn_in(&b), spawn_in(&b));
    let mut added = 0;
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", crate::harness::describe(&out));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        added += j["sync"]["added"].as_u64().unwrap();
    }
    // Each note counted added by one of them: the other finds it written as it read it
    // (both said every note added before).
    assert_eq!(added, NOTES as u64);
    assert_intact(&index, "after two indexes at once");
    assert_complete(&b, &mut Rng::new());

    // Two passes with a model, over one backlog, while another holds the pass lock (as a
    // backend embedding would): both wait and neither embeds meanwhile; then one embeds
    // every passage and the other, waiting on, finds them done (before the lock, each
    // embedded all of them, taking twice as long).
    let b = lessons("queues and caches ");
    // Synced, not embedded: more than a search embeds before it answers.
    b.ok(&["search", "queues", "--mode", "bm25"]);
    assert_eq!(b.status()["pending_chunks"], 120);
    let lock = b.config().index_path().with_file_name("embedding.lock");
    let held = std::fs::File::create(&lock).unwrap();
    // SAFETY: flock on a descriptor held open until the drop below.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) },
        0
    );
    // Each says it waits (its stderr a file: no terminal), once its model is loaded.
    let logs = [b.path("first.err"), b.path("second.err")];
    let [first, second] = logs.clone().map(|log| {
        b.command()
            .args(["index", "--json"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap()
    });
    eventually(Duration::from_secs(120), || {
        let said = |log: &PathBuf| std::fs::read_to_string(log).unwrap_or_default();
        logs.iter()
            .all(|log| said(log).contains("waiting for it"))
            .then_some(())
    });
    assert_eq!(
        b.status()["pending_chunks"],
        120,
        "nothing embedded while another pass holds the lock"
    );
    drop(held);
    let (mut embedded, mut by_other) = (0, 0);
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", crate::harness::describe(&out));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        embedded += j["embed"]["embedded"].as_u64().unwrap();
        by_other += j["embed"]["by_other"].as_u64().unwrap();
    }
    assert_eq!(
        (embedded, by_other),
        (120, 120),
        "each passage embedded once"
    );
    assert_eq!(b.status()["pending_chunks"], 0);

    let b = lessons("jitter for retries ");
    let _server = b.serve(&[]);
    // The backend is embedding its first sync's passages; the CLI embeds the same ones.
    let r = b.ok(&["index"]);
    assert!(r.stdout().contains("indexed 120 notes"), "{}", r.stdout());
    eventually(Duration::from_secs(120), || {
        (b.status()["pending_chunks"] == 0).then_some(())
    });
    assert_intact(
        &b.config().index_path(),
        "after an index during the backend's embedding",
    );
    assert_eq!(
        hit_paths(&b.json(&["search", "w00042", "--mode", "bm25"])),
        ["lore/n042.md"]
    );
}

/// A tmpfs mounted at `dir` for the life of the guard; `None` (after saying why) where
/// this process may not mount one.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, options: &str) -> Option<Tmpfs> {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mount -t tmpfs failed here (a container without CAP_SYS_ADMIN?)");
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }

    fn remount(&self, options: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "remount {options}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// One `error:` line naming `want`, and exit `code`.
fn assert_one_line(r: &crate::harness::Run, code: i32, want: &[&str]) {
    assert_eq!(r.code(), code, "{}", r.stderr());
    let stderr = r.stderr();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    for w in want {
        assert!(errors[0].contains(w), "{w:?} missing: {}", errors[0]);
    }
}

/// The searches logged in the index at `path`.
fn note_rows(path: &Path) -> i64 {
    Connection::open(path)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0)))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn recalls(path: &Path) -> i64 {
    Connection::open(path)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM recalls", [], |r| r.get(0)))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Issue #17: a truncated index, an index from a newer brain, and a rebuild while a backend
/// serves. `brain index --rebuild` sets the old file aside, keeps its logs and vectors where
/// readable, never touches a note, and refuses while a backend has the index open.
#[test]
fn a_truncated_or_newer_index_is_rebuilt_from_the_notes_and_keeps_its_log() {
    let b = Brain::example();
    b.ok(&["index"]);
    for q in ["retry jitter", "flag cleanup", "wal checkpoint"] {
        b.ok(&["search", q, "--mode", "bm25"]);
    }
    let db = b.config().index_path();
    let notes = snapshot(&b.root);
    let found = |b: &Brain| hit_paths(&b.json(&["search", "retry jitter", "--mode", "bm25"]));
    let before = found(&b);
    assert!(!before.is_empty());

    // From a newer brain: nothing is damaged, so every search of the log is kept.
    Connection::open(&db)
        .and_then(|c| {
            c.execute(
                "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
                [],
            )
        })
        .unwrap();
    let logged = recalls(&db);
    assert_one_line(
        &b.run(&["search", "retry"]),
        1,
        &["newer", "upgrade brain", "--rebuild"],
    );
    let j = b.json(&["index", "--rebuild"]);
    assert_eq!(j["rebuild"]["recalls"], logged, "{j}");
    assert_eq!(j["rebuild"]["lost"], serde_json::json!([]), "{j}");
    assert_eq!(found(&b), before);
    assert_intact(&db, "after a rebuild");

    // Not while a backend has it open: the backend's lock says who.
    let mut server = b.serve(&[]);
    let r = b.run(&["index", "--rebuild"]);
    assert_one_line(&r, 3, &["already running", &server.pid().to_string()]);
    server.signal_and_wait(libc::SIGTERM);

    // Truncated to a third, after a checkpoint, with its side files gone (a copy from a
    // backup tool, a sync service that stopped half-way).
    Connection::open(&db)
        .and_then(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);"))
        .unwrap();
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .and_then(|f| f.set_len(len / 3))
        .unwrap();
    remove_index_files(&db, &["-wal", "-shm"]);
    let r = b.run(&["search", "retry", "--mode", "bm25"]);
    assert_one_line(&r, 1, &["is damaged", "brain index --rebuild"]);

    let r = b.run(&["index", "--rebuild", "--json"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // The first rebuild's backup is kept: this one goes beside it, never over it.
    let backup = r.json()["rebuild"]["backup"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(backup.ends_with(".bak.2"), "{backup}");
    assert!(Path::new(backup.trim_end_matches(".2")).exists());
    assert_eq!(found(&b), before);
    assert_intact(&db, "after rebuilding a truncated index");

    // Cut to nothing, its side files gone: damaged too, not a new index whose search
    // history is silently gone.
    std::fs::File::create(&db).unwrap();
    remove_index_files(&db, &["-wal", "-shm"]);
    let r = b.run(&["search", "retry", "--mode", "bm25"]);
    assert_one_line(
        &r,
        1,
        &["is damaged", "the file is empty", "brain index --rebuild"],
    );
    b.ok(&["index", "--rebuild"]);
    assert_eq!(found(&b), before);

    // Deleted to start over, and opened by many at once: the one that makes the file takes
    // the mark away first, so none of the others takes the new, empty file for damage.
    for _ in 0..3 {
        remove_index_files(&db, &["", "-wal", "-shm"]);
        let runs: Vec<_> = (0..8)
            .map(|_| {
                b.command()
                    .args(["search", "retry", "--mode", "bm25"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for run in runs {
            let out = run.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    b.ok(&["index"]);
    assert_eq!(found(&b), before);

    // Its main file alone as a young index has it (its tables still in the -wal, which a
    // copy left behind): a database with no tables where an index was, damaged too.
    remove_index_files(&db, &["", "-wal", "-shm"]);
    Connection::open(&db)
        .and_then(|c| c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)))
        .unwrap();
    remove_index_files(&db, &["-wal", "-shm"]);
    assert!(std::fs::metadata(&db).unwrap().len() > 0);
    let r = b.run(&["search", "retry", "--mode", "bm25"]);
    assert_one_line(
        &r,
        1,
        &["is damaged", "holds no index", "brain index --rebuild"],
    );
    b.ok(&["index", "--rebuild"]);
    assert_eq!(found(&b), before);

    // A folder where the index file should be: no permission would help, so none is
    // asked for; a rebuild sets it aside.
    std::fs::rename(&db, db.with_extension("moved")).unwrap();
    remove_index_files(&db, &["-wal", "-shm"]);
    std::fs::create_dir(&db).unwrap();
    let r = b.run(&["status", "--no-daemon"]);
    assert_one_line(&r, 1, &["is not a file", "brain index --rebuild"]);
    assert!(!r.stderr().contains("writable"), "{}", r.stderr());
    b.ok(&["index", "--rebuild"]);
    assert_eq!(found(&b), before);
    assert_eq!(snapshot(&b.root), notes, "a rebuild touched the notes");
}

#[test]
fn a_full_disk_under_the_index_fails_in_one_line_and_the_next_run_recovers() {
    let b = bulk();
    let notes = snapshot(&b.root);
    let Some(disk) = Tmpfs::mount(&b.data, "size=1m") else {
        return;
    };
    let r = b.run(&["index"]);
    assert_one_line(&r, 1, &["is full", "free space", "BRAIN_DATA_DIR"]);
    assert_eq!(snapshot(&b.root), notes, "the notes folder changed");
    // Room again: the same index file carries on from its last committed batch.
    disk.remount("size=64m");
    b.ok(&["index"]);
    assert_intact(&b.config().index_path(), "after the disk filled up");
    assert_eq!(b.json(&["status", "--no-daemon"])["notes"], NOTES as u64);
}

/// An install a full disk stopped is finished by the next one: the half-made brain (an
/// empty `lore/`) once looked like the user's own folder, so every later install left it
/// without its types and `install --check` called it ok.
#[test]
fn an_install_a_full_disk_stopped_is_finished_by_the_next() {
    let b = Brain::new();
    let Some(_disk) = Tmpfs::mount(&b.root, "size=64k") else {
        return;
    };
    let filler = b.root.join(".filler");
    let _ = std::fs::write(&filler, vec![0u8; 128 << 10]);
    let r = b.run(&["install"]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    assert!(
        r.stderr().contains("free some disk space"),
        "{}",
        r.stderr()
    );
    let check = b.run(&["install", "--check"]);
    assert!(check.stdout().contains("incomplete"), "{}", check.stdout());
    assert_eq!(check.code(), 1);

    std::fs::remove_file(&filler).unwrap();
    let r = b.ok(&["install"]);
    assert!(r.stdout().contains("created"), "{}", r.stdout());
    for kind in ["lore", "idea", "job", "followup", "research-link"] {
        assert!(b.root.join(kind).join("SCHEMA.md").is_file(), "{kind}");
    }
    let check = b.run(&["install", "--check"]).stdout();
    assert!(!check.contains("incomplete"), "{check}");
    b.ok(&["new", "idea", "Anything at all"]);
    // Once a note is there the folder is the user's: no install adds to it.
    std::fs::remove_file(b.root.join("job/SCHEMA.md")).unwrap();
    assert!(b.ok(&["install"]).stdout().contains("exists"));
    assert!(!b.root.join("job/SCHEMA.md").exists());
}

/// The backend's sync fails while the disk under the index is full; once there is room
/// again it tries again by itself, and what was saved meanwhile becomes searchable without
/// another save to wake it. A search meanwhile answers from the index.
#[test]
fn the_backend_tries_a_sync_that_failed_on_a_full_disk_again() {
    let b = Brain::example();
    let Some(_disk) = Tmpfs::mount(&b.data, "size=8m") else {
        return;
    };
    b.ok(&["index"]);
    let _server = b.serve_synced(&[]);
    let filler = b.data.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        while f.write_all(&[0u8; 64 * 1024]).is_ok() {}
        let _ = f.sync_all();
    }
    for i in 0..30 {
        b.write(
            &format!("lore/full-{i}.md"),
            format!(
                "# Saved on a full disk {i}\n\nfulldiskword{i} {}\n",
                "filler ".repeat(200)
            ),
        );
    }
    eventually(Duration::from_secs(20), || {
        b.status()["backend"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("is full"))
            .then_some(())
    });
    let r = b.run(&["search", "busy_timeout", "--mode", "bm25"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stdout().contains("lore/sqlite-busy-timeout.md"),
        "{}",
        r.stdout()
    );

    std::fs::remove_file(&filler).unwrap();
    eventually(Duration::from_secs(40), || {
        let r = b.run(&[
            "search",
            "fulldiskword7",
            "--mode",
            "bm25",
            "--no-sync",
            "--json",
        ]);
        (r.code() == 0 && hit_paths(&r.json()).contains(&"lore/full-7.md".to_string()))
            .then_some(())
    });
    assert!(b.status()["backend"]["last_error"].is_null());
}

#[test]
fn read_only_folders_give_one_clear_line_and_nothing_is_half_written() {
    let b = Brain::new();
    let data = Tmpfs::mount(&b.data, "size=32m");
    let Some(data) = data else { return };
    let Some(notes) = Tmpfs::mount(&b.root, "size=8m") else {
        return;
    };
    crate::harness::copy_dir(&crate::harness::repo().join("examples/brain"), &b.root);
    b.ok(&["index"]);
    // Files written within 2 s of their index are read again by the next sync (their
    // mtime may still move): past that, one more sync settles them.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    b.ok(&["index"]);

    // A read-only data dir over a current index: nothing to write, nothing to say but
    // the search log's line. Its index folder left open by an older brain, whose mode
    // cannot be changed there: read as it is (closing it failed every command).
    let index = b.ok(&["status", "--json"]).json()["index_path"]
        .as_str()
        .unwrap()
        .to_string();
    let folder = std::path::Path::new(&index).parent().unwrap().to_path_buf();
    std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    data.remount("ro");
    b.ok(&["index"]);
    let r = b.run(FIND_BUSY_TIMEOUT);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!r.stderr().contains("brought up to date"), "{}", r.stderr());
    assert!(r.stderr().contains("not logged"), "{}", r.stderr());
    // With a note to add, the index cannot be written, and says what to do.
    b.write(
        "written-while-read-only.md",
        "# Written while read-only\n\nokapi\n",
    );
    let r = b.run(&["index"]);
    assert_one_line(
        &r,
        1,
        &["cannot write the index", "writable", "BRAIN_DATA_DIR"],
    );
    // A search still answers: only its line in the log is lost, and it says so.
    let r = b.run(FIND_BUSY_TIMEOUT);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stderr().contains("this search was not logged"),
        "{}",
        r.stderr()
    );
    let j = r.json();
    assert!(j["recall_id"].is_null(), "{j}");
    assert!(!j["results"].as_array().unwrap().is_empty(), "{j}");
    // So do check and links, from the index as it is, saying so once; index-md, whose
    // answer becomes files, refuses.
    let check = b.run(&["check", "--json"]);
    assert_eq!(
        check.code(),
        1,
        "the example's problems: {}",
        check.stderr()
    );
    assert_eq!(check.stderr().lines().count(), 1, "{}", check.stderr());
    assert!(check.stderr().contains("could not be brought up to date"));
    assert!(check.json()["notice"].is_string());
    let links = b.run(&["links", "lore/sqlite-busy-timeout.md"]);
    assert_eq!(links.code(), 0, "{}", links.stderr());
    assert!(links.stdout().starts_with("lore/sqlite-busy-timeout.md"));
    let similar = b.run(&["similar", "lore/sqlite-busy-timeout.md", "--json"]);
    assert_eq!(similar.code(), 0, "{}", similar.stderr());
    assert!(similar.json()["notice"]
        .as_str()
        .is_some_and(|n| n.contains("could not be brought up to date")));
    let r = b.run(&["index-md"]);
    assert_one_line(&r, 1, &["cannot write the index"]);
    // `new` writes the entry (the notes folder is writable), and says that its check for
    // duplicates saw the index as it was: it said "nothing like it" alone.
    let r = b.run(&["new", "lore", "Okapi herding while read-only", "--json"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stderr()
            .starts_with("warning: the index could not be brought up to date")
            && r.stderr()
                .contains("the check for duplicates saw the index as it was"),
        "{}",
        r.stderr()
    );
    assert!(r.json()["notice"]
        .as_str()
        .is_some_and(|n| n.starts_with("the index could not be brought up to date")));
    // And that the entry it wrote is not in the index yet (it exited 0 in silence).
    assert!(
        r.stderr()
            .contains("warning: the entry is written, but the index could not take it now"),
        "{}",
        r.stderr()
    );
    std::fs::remove_file(b.root.join("lore/okapi-herding-while-read-only.md")).unwrap();
    data.remount("rw");

    // A read-only notes folder: the commands that write say so; nothing appears.
    notes.remount("ro");
    let before = snapshot(&b.root);
    let r = b.run(&["new", "lore", "A lesson written nowhere"]);
    assert_one_line(&r, 1, &["lore"]);
    assert!(
        r.stderr().to_lowercase().contains("read-only"),
        "{}",
        r.stderr()
    );
    std::fs::write(b.root.join("research-link/INDEX.md"), "x").unwrap_err();
    let r = b.run(&["index-md", "--write"]);
    assert_one_line(&r, 1, &["research-link"]);
    assert_eq!(snapshot(&b.root), before, "something was written");
    // Reading still works.
    b.ok(&["search", "busy_timeout", "--mode", "bm25"]);
    let check = b.run(&["check", "--json"]);
    assert_eq!(
        check.code(),
        1,
        "the example's deliberate problems: {}",
        check.stderr()
    );
    assert!(check.json()["problems"]
        .as_array()
        .is_some_and(|p| !p.is_empty()));

    // A full notes folder: `new` says what to do, and leaves nothing behind.
    notes.remount("rw");
    let filler = b.root.join("filler.bin");
    let mut f = std::fs::File::create(&filler).unwrap();
    while std::io::Write::write_all(&mut f, &[0u8; 1 << 16]).is_ok() {}
    drop(f);
    let before = snapshot(&b.root);
    let r = b.run(&["new", "lore", "A lesson on a full disk"]);
    assert_one_line(&r, 1, &["free some disk space"]);
    assert_eq!(snapshot(&b.root), before, "something was written");
    std::fs::remove_file(&filler).unwrap();
}

/// A folder that cannot be listed (no read permission) is not a deleted one: its notes
/// stay in the index as last indexed (and their vectors with them), and nothing is added
/// again once it can be read. Root reads any folder, so brain runs here without the two
/// capabilities that let it.
#[test]
fn an_unreadable_folder_keeps_its_notes() {
    use std::os::unix::fs::PermissionsExt;
    let b = Brain::example();
    let Some(no_dac) = without_dac() else {
        return;
    };
    b.ok(&["index"]);
    let lore = b.root.join("lore");
    std::fs::set_permissions(&lore, std::fs::Permissions::from_mode(0o000)).unwrap();
    let r = wrapped(&b, &no_dac, &["index", "--json"]);
    let got = wrapped(&b, &no_dac, &["get", "lore/sqlite-busy-timeout.md"]);
    std::fs::set_permissions(&b.root, std::fs::Permissions::from_mode(0o000)).unwrap();
    let got_root = wrapped(&b, &no_dac, &["get", "lore/sqlite-busy-timeout.md"]);
    std::fs::set_permissions(&b.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&lore, std::fs::Permissions::from_mode(0o755)).unwrap();
    // `get` names the folder that cannot be entered and what to do; the brain folder
    // itself is exit 2, as every command says it.
    assert_one_line(
        &got,
        1,
        &["lore: the folder cannot be entered", "chmod u+rx"],
    );
    assert_one_line(&got_root, 2, &["is not a readable directory"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let j = r.json();
    assert_eq!(j["sync"]["removed"], 0, "{j}");
    assert!(
        j["sync"]["warnings"]
            .to_string()
            .contains("lore/: not read: permission denied"),
        "{j}"
    );
    let r = wrapped(&b, &no_dac, FIND_BUSY_TIMEOUT);
    assert!(hit_paths(&r.json()).contains(&"lore/sqlite-busy-timeout.md".to_string()));
    let j = b.json(&["index"]);
    assert_eq!(
        (j["sync"]["added"].as_u64(), j["sync"]["removed"].as_u64()),
        (Some(0), Some(0)),
        "{j}"
    );
    // A folder that can be listed but not entered (r--): its names are there, no `stat`
    // of them works; the notes are kept the same way, and said once.
    std::fs::set_permissions(&lore, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = wrapped(&b, &no_dac, &["index", "--json"]);
    std::fs::set_permissions(&lore, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let j = r.json();
    assert_eq!(j["sync"]["removed"], 0, "{j}");
    let warnings = j["sync"]["warnings"].to_string();
    assert_eq!(warnings.matches("lore/: not read").count(), 1, "{j}");
    assert!(warnings.contains("listed, not entered"), "{j}");
    // A note made unreadable after it was indexed (a chmod moves neither its time nor
    // its size): each sync says so, with what to do, and `check` lists it; it is kept.
    let note = lore.join("sqlite-busy-timeout.md");
    // An hour old, so that the index trusts its stat (a note written a moment ago is read
    // again by the next sync whatever its stat says).
    std::fs::File::options()
        .write(true)
        .open(&note)
        .and_then(|f| f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600)))
        .unwrap();
    b.ok(&["index"]);
    std::fs::set_permissions(&note, std::fs::Permissions::from_mode(0o000)).unwrap();
    let r = wrapped(&b, &no_dac, &["index", "--json"]);
    let checked = wrapped(&b, &no_dac, &["check", "--json"]);
    std::fs::set_permissions(&note, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let j = r.json();
    assert_eq!(j["sync"]["removed"], 0, "{j}");
    assert!(
        j["sync"]["warnings"].to_string().contains(
            "lore/sqlite-busy-timeout.md: not read: Permission denied (os error 13): make it readable"
        ),
        "{j}"
    );
    assert!(
        checked.stdout().contains("lore/sqlite-busy-timeout.md"),
        "{}",
        checked.stdout()
    );
    // The brain folder itself so: every note is kept.
    std::fs::set_permissions(&b.root, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = wrapped(&b, &no_dac, &["index", "--json"]);
    std::fs::set_permissions(&b.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["sync"]["removed"], 0, "{}", r.stdout());
}

/// A backend serving a brain folder whose mode changed under it (still watched: a `chmod`
/// does not drop the watches) answers from the index as it stands and says why, where
/// it answered in silence; a command without a backend refuses (exit 2).
#[test]
fn a_backend_on_a_brain_folder_made_unreadable_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let Some(no_dac) = without_dac() else {
        return;
    };
    let b = Brain::example();
    b.ok(&["index"]);
    let mut child = wrapped_command(&b, &no_dac, &["serve"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    eventually(Duration::from_secs(30), || {
        (b.status()["backend_state"] == "answered").then_some(())
    });
    std::fs::set_permissions(&b.root, std::fs::Permissions::from_mode(0o000)).unwrap();
    let search = ["search", "busy_timeout", "--mode", "bm25", "--json"];
    let warm = wrapped(&b, &no_dac, &search);
    let cold = wrapped(&b, &no_dac, &[&search[..], &["--no-daemon"]].concat());
    std::fs::set_permissions(&b.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(warm.code(), 0, "{}", warm.stderr());
    assert!(
        hit_paths(&warm.json()).contains(&"lore/sqlite-busy-timeout.md".to_string()),
        "{}",
        warm.stdout()
    );
    assert!(
        warm.stderr().contains("is not a readable directory")
            && warm
                .stderr()
                .contains("answered from the index as it stands"),
        "{}",
        warm.stderr()
    );
    assert_eq!(cold.code(), 2, "{}", cold.stderr());
}

/// The wrapper that runs brain as root without the two capabilities that read any folder
/// (root reads every folder otherwise); `None`, said, when this is not root.
fn without_dac() -> Option<[&'static str; 3]> {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: dropping the capabilities that read any folder needs root");
        return None;
    }
    Some([
        "setpriv",
        "--bounding-set=-dac_override,-dac_read_search",
        "--",
    ])
}

/// `brain ARGS` with `b`'s environment, run by `wrapper` (e.g. `unshare -n --`).
fn wrapped(b: &Brain, wrapper: &[&str], args: &[&str]) -> crate::harness::Run {
    let mut cmd = wrapped_command(b, wrapper, args);
    crate::harness::Run(cmd.stdin(Stdio::null()).output().expect("run the wrapper"))
}

/// The command [`wrapped`] runs, to spawn instead (a backend).
fn wrapped_command(b: &Brain, wrapper: &[&str], args: &[&str]) -> Command {
    let inner = b.command();
    let mut cmd = Command::new(wrapper[0]);
    cmd.args(&wrapper[1..])
        .arg(inner.get_program())
        .args(args)
        .env_clear();
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    if let Some(dir) = inner.get_current_dir() {
        cmd.current_dir(dir);
    }
    cmd
}

#[test]
fn without_a_network_everything_but_the_model_fetch_works() {
    let b = Brain::example().model();
    let ok = unsafe { libc::geteuid() } == 0
        && Command::new("unshare")
            .args(["-n", "true"])
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: a network namespace (unshare -n) needs root");
        return;
    }
    let offline = ["unshare", "-n", "--"];
    for args in [
        &["index"][..],
        &["search", "why do retries make outages worse", "--json"],
        &["similar", "--text", "Set busy_timeout on every connection"],
        &["status"],
        &["stats"],
    ] {
        let r = wrapped(&b, &offline, args);
        assert_eq!(r.code(), 0, "{args:?} offline: {}", r.stderr());
    }
    let hybrid = wrapped(
        &b,
        &offline,
        &["search", "why do retries make outages worse", "--json"],
    )
    .json();
    assert_eq!(hybrid["mode"], "hybrid", "the model runs offline");
    let r = wrapped(&b, &offline, &["check"]);
    assert_eq!(
        r.code(),
        1,
        "the example's deliberate problems, offline: {}",
        r.stderr()
    );
    // The one command that needs the network says so, in one line.
    let fresh = Brain::new();
    let r = wrapped(&fresh, &offline, &["model", "fetch"]);
    assert_ne!(r.code(), 0, "a fetch without a network succeeded?");
    assert_eq!(
        r.stderr()
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1,
        "{}",
        r.stderr()
    );

    // Where strace is installed: a search opens no internet socket at all.
    if Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let log = b.path("connect.log");
        let log_arg = log.to_str().unwrap().to_string();
        let tracer = [
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=socket,connect",
            "-o",
            &log_arg,
            "--",
        ];
        let r = wrapped(&b, &tracer, &["search", "retries jitter"]);
        assert_eq!(r.code(), 0, "{}", r.stderr());
        let calls = std::fs::read_to_string(&log).unwrap();
        assert!(!calls.contains("AF_INET"), "an internet socket:\n{calls}");
    } else {
        eprintln!("strace not installed: the no-socket check was skipped");
    }
}
