//! The warm backend end to end: a real `brain serve` on a temp brain, driven by the real CLI
//! and by raw socket clients, including the ones that misbehave.

mod library;

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use crate::harness::{describe, eventually, hit_paths, without_recall_id, Brain, Conn};
use serde_json::Value;

const SECOND: Duration = Duration::from_secs(1);

fn search_line(query: &str) -> String {
    serde_json::json!({"v": 1, "op": "search", "query": query, "mode": "bm25", "top": 5})
        .to_string()
}

fn error_code(response: &Value) -> &str {
    response["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {response}"))
}

#[test]
fn cli_output_is_the_same_through_the_backend_and_in_process() {
    let brain = Brain::example();
    let _server = brain.serve(&[]);
    let cases: [&[&str]; 5] = [
        &["search", "flag", "cleanup"],
        &["search", "sqlite", "wal", "--mode", "bm25", "--top", "3"],
        &["search", "retry", "jitter", "--json"],
        &["search", "nothing-matches-this-zzz"],
        &["search", "tests", "--type", "lroe"],
    ];
    for args in cases {
        let warm = brain.run(args);
        let mut cold_args = args.to_vec();
        cold_args.push("--no-daemon");
        let cold = brain.run(&cold_args);
        assert!(warm.status.success(), "{args:?}: {}", warm.stderr());
        assert_eq!(warm.status.code(), cold.status.code(), "{args:?}");
        let (w, c) = (warm.stdout(), cold.stdout());
        assert_eq!(without_recall_id(&w), without_recall_id(&c), "{args:?}");
        assert_eq!(warm.stderr, cold.stderr, "{args:?}");
    }
    // Bad input fails the same way either way.
    let warm = brain.run(&["search", "x", "--top", "0"]);
    let cold = brain
        .command()
        .args(["search", "x", "--top", "0"])
        .env("BRAIN_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert_eq!(
        (warm.status.code(), &warm.stderr),
        (cold.status.code(), &cold.stderr)
    );
    assert_eq!(warm.status.code(), Some(2));

    // The searches above did go through the backend; status says who answered.
    let status = brain.status();
    assert!(
        status["backend"]["requests"].as_u64().unwrap() >= 6,
        "{status}"
    );
    assert_eq!(status["notes"], 34);
    let text = brain.ok(&["status"]).stdout();
    assert!(text.contains("backend:   running (pid"), "{text}");
    assert!(text.contains("watcher:   on"), "{text}");
    // Told not to ask it, status still says one runs.
    let cold = brain.ok(&["status", "--no-daemon"]).stdout();
    assert!(
        cold.ends_with(
            "backend:   running, not asked (--no-daemon): the figures are this process's\n"
        ),
        "{cold}"
    );
    let cold = brain.json(&["status", "--no-daemon"]);
    assert!(cold["backend"].is_null(), "{cold}");
    assert_eq!(cold["backend_state"], "not_asked", "{cold}");
    assert_eq!(status["backend_state"], "answered", "{status}");
}

/// A command whose settings name another model than the backend embeds with is not
/// answered with the backend's model: it works in-process with its own and says why (and
/// a model brain does not know is refused as without a backend, exit 2).
#[test]
fn a_client_with_another_model_works_in_process_and_says_why() {
    let brain = Brain::example().model();
    brain.ok(&["index"]);
    let _server = brain.serve(&[]);
    assert_eq!(brain.json(&["search", "retry"])["mode"], "hybrid");
    let other = |model: &str| {
        let out = brain
            .command()
            .args(["search", "retry", "--json"])
            .env("BRAIN_MODEL", model)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains("the backend serving this brain embeds with all-minilm-l6-v2")
                && err.contains(model)
                && err.contains("working in-process"),
            "{err}"
        );
        out
    };
    // A name brain does not know is refused before the backend is asked (no advice to
    // restart it with a model that does not exist).
    let out = brain
        .command()
        .args(["search", "retry", "--json", "--mode", "bm25"])
        .env("BRAIN_MODEL", "no-such-model")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown model \"no-such-model\"") && !err.contains("restart"),
        "{err}"
    );
    // What no model answers is answered by the backend all the same, without a word (it
    // advised restarting the backend for `brain check` under a typo in BRAIN_MODEL).
    for args in [
        &["check", "--json"][..],
        &["links", "lore/sqlite-busy-timeout.md"],
        &["get", "lore/sqlite-busy-timeout.md"],
    ] {
        let out = brain
            .command()
            .args(args)
            .env("BRAIN_MODEL", "stand-in-hash-64")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("restart"), "{args:?}: {err}");
    }
    let out = other("stand-in-hash-64");
    assert!(out.status.success());
    // Its own model has no vectors here: keywords, and the line saying so, not the
    // backend's hybrid answer.
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["mode"], "bm25", "{j}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not embedded with stand-in-hash-64"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `brain index` under another model, run while the backend serves, re-embeds the index
/// with that model; the backend's next pass leaves those vectors be and says why (it
/// cleared them and embedded every passage again with its own, and the next `brain index`
/// did the same back), and its searches say it rather than sending the person to `brain
/// index`.
#[test]
fn a_backend_leaves_vectors_another_process_switched_models_for() {
    let brain = Brain::example().model();
    brain.ok(&["index"]);
    let _server = brain.serve(&[]);
    assert_eq!(brain.json(&["search", "retry"])["mode"], "hybrid");
    let out = brain
        .command()
        .args(["index"])
        .env("BRAIN_MODEL", "stand-in-hash-64")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    brain.write(
        "idea/after-the-switch.md",
        "# After the switch\n\nA quokka note.\n",
    );
    let error = eventually(30 * SECOND, || {
        brain.status()["backend"]["last_error"]
            .as_str()
            .map(str::to_string)
    });
    assert!(
        error.contains("stand-in-hash-64's now")
            && error.contains("this backend embeds with all-minilm-l6-v2")
            && error.contains("restart the backend"),
        "{error}"
    );
    let index = brain.status()["index_path"].as_str().unwrap().to_string();
    let stored: String = rusqlite::Connection::open(&index)
        .unwrap()
        .query_row(
            "SELECT value FROM meta WHERE key = 'embed_model'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, "stand-in-hash-64", "the other model's vectors stay");
    let r = brain.ok(&["search", "quokka"]);
    assert!(
        r.stderr()
            .contains("semantic search off: the index's vectors are stand-in-hash-64's")
            && !r.stderr().contains("not embedded with"),
        "{}",
        r.stderr()
    );
}

/// The backend remembers each word's keyword scores between searches; what it answers is
/// still, to the last digit, what a process of its own computes, asked twice, and again
/// after a note that moves every score (more notes, other frequencies) arrives through the
/// watcher.
#[test]
fn remembered_keyword_scores_are_exact_and_follow_every_edit() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    let query = [
        "search",
        "retry jitter backoff",
        "--mode",
        "bm25",
        "--top",
        "20",
        "--json",
    ];
    let same = || {
        let warm = without_recall_id(&brain.ok(&query).stdout());
        let mut cold = query.to_vec();
        cold.extend(["--no-daemon", "--no-sync"]);
        assert_eq!(warm, without_recall_id(&brain.ok(&cold).stdout()));
        warm
    };
    let first = same();
    assert_eq!(same(), first, "asked again, from the remembered scores");
    brain.write(
        "lore/jitter-again.md",
        "# Jitter again\n\nretry with jitter, backoff with jitter\n",
    );
    eventually(5 * SECOND, || {
        let r = brain.json(&query[..query.len() - 1]);
        hit_paths(&r)
            .contains(&"lore/jitter-again.md".to_string())
            .then_some(())
    });
    let after = same();
    assert_ne!(after, first);
}

#[test]
fn garbage_gets_an_error_and_ends_only_its_connection() {
    let brain = Brain::example();
    let server = brain.serve(&[]);
    for garbage in [
        &b"this is not json\n"[..],
        b"\xff\xfe\x00\x01garbage\n",
        b"[1,2,3]\n",
        b"{\"v\":1,\"op\":\"rm -rf\"}\n",
    ] {
        let mut c = server.conn();
        c.send(garbage).unwrap();
        let response = c.read().unwrap();
        assert_eq!(error_code(&response), "bad_request", "{response}");
        assert_eq!(response["v"], 1);
        assert!(
            c.read().is_none(),
            "the connection is closed after a malformed request"
        );
    }
    let mut c = server.conn();
    assert_eq!(
        error_code(&c.ask(r#"{"v":99,"op":"hello"}"#)),
        "unsupported_version"
    );
    let ok = server.conn().ask(&search_line("flag"));
    assert!(!hit_paths(&ok["result"]["search"]).is_empty(), "{ok}");
}

#[test]
fn partial_lines_wait_for_their_end_or_are_dropped() {
    let brain = Brain::example();
    let server = brain.serve(&[]);
    let mut c = server.conn();
    c.send(br#"{"v":1,"id":7,"op":"#).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    c.send(b"\"hello\"}\n{\"v\":1,\"id\":8,\"op\":\"status\"}\n")
        .unwrap();
    assert_eq!(c.read().unwrap()["id"], 7);
    assert_eq!(c.read().unwrap()["id"], 8);
    // A last request without its newline is still answered when the client stops writing.
    c.send(br#"{"v":1,"id":9,"op":"hello"}"#).unwrap();
    c.reader
        .get_ref()
        .shutdown(std::net::Shutdown::Write)
        .unwrap();
    assert_eq!(c.read().unwrap()["id"], 9);
    assert!(c.read().is_none());
    // A cut-off request followed by the client leaving costs nothing.
    let mut c = server.conn();
    c.send(br#"{"v":1,"op":"sea"#).unwrap();
    drop(c);
    assert!(server.conn().ask(r#"{"v":1,"op":"hello"}"#)["result"]["hello"].is_object());
}

#[test]
fn a_100_mb_line_is_refused_without_buffering_it() {
    let brain = Brain::example();
    let mut server = brain.serve(&[]);
    let mut c = server.conn();
    let mut writer = c.reader.get_ref().try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1 << 20];
        let mut sent = 0;
        for _ in 0..100 {
            if writer.write_all(&chunk).is_err() {
                break;
            }
            sent += 1;
        }
        sent
    });
    let response = c.read().unwrap();
    assert_eq!(error_code(&response), "too_large", "{response}");
    assert!(c.read().is_none());
    let sent = sender.join().unwrap();
    assert!(
        sent < 100,
        "the server should stop reading long before 100 MiB, read {sent} MiB"
    );
    assert!(server.alive());
    #[cfg(target_os = "linux")]
    assert!(
        server.peak_rss_mib() < 200,
        "peak RSS {} MiB",
        server.peak_rss_mib()
    );
    assert!(server.conn().ask(r#"{"v":1,"op":"hello"}"#)["result"].is_object());
}

#[test]
fn a_silent_client_is_closed_and_never_blocks_others() {
    let brain = Brain::example();
    let server = brain.serve(&["--client-timeout", "1"]);
    let mut silent = server.conn();
    let started = Instant::now();
    for _ in 0..5 {
        let r = server.conn().ask(&search_line("sqlite"));
        assert!(r["result"]["search"].is_object());
    }
    assert!(
        started.elapsed() < SECOND,
        "others were served while the silent client waited"
    );
    assert!(silent.read().is_none(), "the silent client is disconnected");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
}

#[test]
fn clients_that_leave_mid_answer_do_no_harm() {
    let brain = Brain::new();
    for i in 0..300 {
        brain.write(
            &format!("n/{i:04}.md"),
            format!("# Note {i}\n\ncommon words {}\n", "filler text ".repeat(40)),
        );
    }
    let mut server = brain.serve(&[]);
    eventually(10 * SECOND, || {
        (brain.status()["notes"] == 300).then_some(())
    });
    let big = serde_json::json!({"v": 1, "op": "search", "query": "common words", "mode": "bm25", "top": 1000}).to_string();
    for i in 0..30 {
        let mut c = server.conn();
        c.send(format!("{big}\n").as_bytes()).unwrap();
        if i % 2 == 0 {
            // Read a few bytes of the answer, then leave.
            let mut buf = [0u8; 16];
            let _ = std::io::Read::read(c.reader.get_mut(), &mut buf);
        }
        drop(c);
    }
    assert!(server.alive());
    let r = server.conn().ask(&big);
    assert_eq!(
        r["result"]["search"]["results"].as_array().unwrap().len(),
        300
    );
}

#[test]
fn fifty_clients_times_a_hundred_queries_during_full_reindexes() {
    const NOTES: usize = 400;
    let brain = Brain::new();
    for i in 0..NOTES {
        brain.write(
            &format!("n/{i:04}.md"),
            format!("# Note {i}\n\nmarker tok{i:04} and some shared words\n"),
        );
    }
    let server = brain.serve(&[]);
    eventually(20 * SECOND, || {
        (brain.status()["notes"] == NOTES).then_some(())
    });
    let socket = server.socket.clone();
    server.conn().ask(&search_line("tok0000"));
    let files_before = open_files(server.pid());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reindexer = {
        let (socket, done) = (socket.clone(), done.clone());
        std::thread::spawn(move || {
            let mut rounds = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let r = Conn::open(&socket)
                    .unwrap()
                    .ask(r#"{"v":1,"op":"reindex","full":true}"#);
                assert_eq!(r["result"]["reindex"]["updated"], NOTES, "{r}");
                rounds += 1;
            }
            rounds
        })
    };
    let clients: Vec<_> = (0..50)
        .map(|t| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let (mut errors, mut wrong) = (Vec::new(), 0);
                let mut conn = Conn::open(&socket).unwrap();
                for q in 0..100 {
                    if q % 10 == 0 {
                        conn = Conn::open(&socket).unwrap();
                    }
                    let i = (t * 100 + q * 7) % NOTES;
                    let r = conn.ask(&search_line(&format!("tok{i:04}")));
                    if r["error"].is_object() {
                        errors.push(r.to_string());
                    } else if hit_paths(&r["result"]["search"]) != [format!("n/{i:04}.md")] {
                        wrong += 1;
                    }
                }
                (errors, wrong)
            })
        })
        .collect();
    let (mut errors, mut wrong) = (Vec::new(), 0);
    for c in clients {
        let (e, w) = c.join().unwrap();
        errors.extend(e);
        wrong += w;
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let rounds = reindexer.join().unwrap();
    assert!(
        errors.is_empty(),
        "{} errors, first: {}",
        errors.len(),
        errors[0]
    );
    assert_eq!(wrong, 0, "wrong answers");
    assert!(rounds >= 1);
    // 5,000 searches on 500 connections leave no socket open: a leak of one descriptor per
    // connection or per search ends a backend that runs for weeks. What may stay is SQLite's:
    // it keeps the descriptor of a connection closed while another holds a lock on the file
    // and reuses it for the next, so a burst leaves up to one per thread that answered at
    // once (64 at most; the bound allows two each).
    if let Some(before) = files_before {
        let bound = before + 2 * 64 + 8;
        let deadline = std::time::Instant::now() + 5 * SECOND;
        let mut now = open_files(server.pid());
        while now.is_none_or(|n| n > bound) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            now = open_files(server.pid());
        }
        assert!(
            now.is_some_and(|n| n <= bound),
            "the backend held {before} files open before and {now:?} after"
        );
    }
}

/// How many files process `pid` holds open, where `/proc` says (Linux).
fn open_files(pid: i32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count())
}

#[test]
fn a_low_open_file_limit_is_raised_so_every_client_slot_can_be_used() {
    let brain = Brain::example();
    let server = brain.serve_with(&[], |command| {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only getrlimit and setrlimit run, both
        // async-signal-safe, on a struct of the child's own stack.
        unsafe {
            command.pre_exec(|| {
                let mut limit = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Below a macOS shell's 256, so that the suite sees it on any system.
                limit.rlim_cur = 64;
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    // A hundred clients connected and quiet (assistants' MCP servers, panels): the next one
    // was never accepted past the limit, and waited out its timeout.
    let held: Vec<Conn> = (0..100).map(|_| server.conn()).collect();
    let mut next = server.conn();
    next.reader
        .get_ref()
        .set_read_timeout(Some(10 * SECOND))
        .unwrap();
    let r = next.ask(&search_line("flag cleanup"));
    assert!(r["result"]["search"]["results"].is_array(), "{r}");
    drop(held);
}

#[test]
fn a_note_saved_a_hundred_times_in_a_second_ends_as_its_last_version() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    let before = brain.status()["backend"]["updates"].as_u64().unwrap();
    let started = Instant::now();
    for i in 0..100 {
        brain.write(
            "lore/busy.md",
            format!("# Busy note\n\nversion{i:03} of the text\n"),
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let writing = started.elapsed();
    eventually(5 * SECOND, || {
        let r = brain.json(&["search", "version099", "--mode", "bm25"]);
        (hit_paths(&r) == ["lore/busy.md"]).then_some(())
    });
    assert!(hit_paths(&brain.json(&["search", "version098", "--mode", "bm25"])).is_empty());
    let status = brain.status();
    let syncs = status["backend"]["updates"].as_u64().unwrap() - before;
    // One sync per half second at most while saves keep coming, plus the last one.
    let bound = writing.as_millis() as u64 / 500 + 3;
    assert!(
        (1..=bound).contains(&syncs),
        "{syncs} syncs for 100 saves in {writing:?}"
    );
    assert_eq!(status["notes"], 35);
}

/// A symlink to a folder of the brain is an alias: the watcher does not follow it, so the
/// folder's own changes keep their paths (followed, inotify's one watch per folder
/// reported them under the alias, which nothing indexes, and they were lost).
#[test]
fn a_folder_alias_does_not_blind_the_watcher_to_its_folder() {
    let brain = Brain::example();
    std::os::unix::fs::symlink(brain.root.join("lore"), brain.root.join("zlore")).unwrap();
    let _server = brain.serve_synced(&[]);
    let find = |q: &str| hit_paths(&brain.json(&["search", q, "--mode", "bm25"]));
    brain.write("lore/seen-through.md", "# Seen\n\nquokkaalias\n");
    eventually(5 * SECOND, || {
        (find("quokkaalias") == ["lore/seen-through.md"]).then_some(())
    });
    std::fs::remove_file(brain.root.join("lore/seen-through.md")).unwrap();
    eventually(5 * SECOND, || find("quokkaalias").is_empty().then_some(()));
}

/// The example brain moved to `real-notes`, its folder a symlink to it; and that folder.
fn brain_behind_a_link() -> (Brain, std::path::PathBuf) {
    let brain = Brain::example();
    let real = brain.tmp.path().join("real-notes");
    std::fs::rename(&brain.root, &real).unwrap();
    std::os::unix::fs::symlink(&real, &brain.root).unwrap();
    (brain, real)
}

#[test]
fn a_brain_folder_that_is_a_symlink_is_watched_where_it_leads() {
    let (brain, real) = brain_behind_a_link();
    let _server = brain.serve_synced(&[]);
    let find = |q: &str| hit_paths(&brain.json(&["search", q, "--mode", "bm25"]));
    std::fs::write(real.join("lore/through-link.md"), "# Seen\n\nwombatlink\n").unwrap();
    eventually(5 * SECOND, || {
        (find("wombatlink") == ["lore/through-link.md"]).then_some(())
    });
}

/// A note written just before a search (a script's `echo > note.md; brain search`) is
/// found: the search waits for the burst the watcher has reported. It was missed every
/// time, the indexer's 50 ms of quiet still running.
#[test]
fn a_search_right_after_a_write_finds_it() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    for round in 0..5 {
        let word = format!("quokkafresh{round}");
        brain.write(
            &format!("idea/fresh-{round}.md"),
            format!(
                "# Fresh {round}

{word}
"
            ),
        );
        let found = hit_paths(&brain.json(&["search", &word, "--mode", "bm25"]));
        assert_eq!(found, [format!("idea/fresh-{round}.md")], "round {round}");
    }
    // Answered by the backend, not by a process's own sync.
    let stats = brain.status();
    assert!(
        stats["backend"]["requests"].as_u64().unwrap() >= 5,
        "{stats}"
    );
}

/// Without a watcher (`serve --no-watch`) each search syncs first; what that sync finds is
/// embedded by the backend, as a watcher's is (it was left for good, over the 64 passages
/// a search embeds itself, while every search said it was "being embedded now").
#[test]
fn serve_without_a_watcher_embeds_what_its_searches_sync() {
    let brain = Brain::example().model();
    brain.ok(&["index"]);
    let _server = brain.serve_synced(&["--no-watch"]);
    // Two rounds: the first may meet the embedder's wake from the backend's start, still
    // on its way; the second has nothing but the search's sync to wake it. A keyword
    // search embeds nothing itself: a few passages are enough.
    for round in 0..2 {
        for i in 0..3 {
            brain.write(
                &format!("idea/nowatch-{round}-{i}.md"),
                format!(
                    "# No watch {round} {i}\n\n{}\n",
                    (0..200)
                        .map(|j| format!("quokka{round} {i} passage {j} "))
                        .collect::<String>()
                ),
            );
        }
        let r = brain.ok(&["search", &format!("quokka{round}"), "--mode", "bm25"]);
        assert!(r.stdout().contains("idea/nowatch-"), "{}", r.stdout());
        eventually(120 * SECOND, || {
            (brain.status()["pending_chunks"] == 0).then_some(())
        });
    }
}

/// A note saved just after a folder holding many folders was renamed is found by a search
/// at once: the watcher's one thread re-adds a watch per folder of the tree first, and the
/// search's flush reached the indexer before the note's event did (20 misses in 20 at
/// 1,000 folders). The search now waits for a sync cookie queued behind the note's event.
#[test]
fn a_search_right_after_a_tree_is_renamed_and_a_note_saved_finds_it() {
    let brain = Brain::example();
    for i in 0..1000 {
        std::fs::create_dir_all(brain.root.join(format!("tree/f{i}"))).unwrap();
    }
    let _server = brain.serve_synced(&[]);
    let (a, b) = (brain.root.join("tree"), brain.root.join("tree2"));
    for round in 0..4 {
        match round % 2 {
            0 => std::fs::rename(&a, &b).unwrap(),
            _ => std::fs::rename(&b, &a).unwrap(),
        }
        let word = format!("quokkatree{round}");
        brain.write("idea/after-rename.md", format!("# After\n\n{word}\n"));
        let found = hit_paths(&brain.json(&["search", &word, "--mode", "bm25"]));
        assert_eq!(found, ["idea/after-rename.md"], "round {round}");
    }
    // No cookie is left behind, and none was ever made in the notes folder.
    let cookies = brain.config().index_dir().join("watch-cookies");
    assert_eq!(std::fs::read_dir(&cookies).unwrap().count(), 0);
    assert!(!brain.root.join("watch-cookies").exists());
}

#[test]
fn the_watcher_follows_creates_renames_deletes_and_folder_moves() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    let find = |q: &str| hit_paths(&brain.json(&["search", q, "--mode", "bm25"]));
    let wait_for =
        |q: &str, want: &[&str]| eventually(5 * SECOND, || (find(q) == want).then_some(()));

    brain.write("idea/fresh.md", "# Fresh\n\nwombatfresh\n");
    wait_for("wombatfresh", &["idea/fresh.md"]);
    std::fs::rename(
        brain.root.join("idea/fresh.md"),
        brain.root.join("lore/renamed.md"),
    )
    .unwrap();
    wait_for("wombatfresh", &["lore/renamed.md"]);
    std::fs::remove_file(brain.root.join("lore/renamed.md")).unwrap();
    wait_for("wombatfresh", &[]);
    // A dot-file note is a note to the walk, so made and deleted it is seen (the watcher
    // once ignored every dot-file, and searched a deleted one until a restart).
    brain.write("idea/.draft.md", "# Draft\n\nwombatdot\n");
    wait_for("wombatdot", &["idea/.draft.md"]);
    std::fs::remove_file(brain.root.join("idea/.draft.md")).unwrap();
    wait_for("wombatdot", &[]);

    // A whole folder moved out, then back in under another name.
    let away = brain.path("away");
    std::fs::rename(brain.root.join("research-link"), &away).unwrap();
    eventually(5 * SECOND, || (brain.status()["notes"] == 25).then_some(()));
    std::fs::rename(&away, brain.root.join("links")).unwrap();
    eventually(5 * SECOND, || (brain.status()["notes"] == 34).then_some(()));
    assert!(find("Robertson").iter().any(|p| p.starts_with("links/")));
    // Editor noise is not a note.
    brain.write("lore/.swap.md.swp", "wombatswap");
    brain.write("lore/notes.txt", "wombatswap");
    std::thread::sleep(Duration::from_millis(300));
    assert!(find("wombatswap").is_empty());
}

#[test]
fn the_brain_folder_deleted_and_recreated_while_serving() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    std::fs::remove_dir_all(&brain.root).unwrap();
    eventually(5 * SECOND, || {
        (brain.status()["backend"]["watcher"]["state"] == "waiting").then_some(())
    });
    // The backend waits for it, and answers from the index as it stands meanwhile,
    // saying so; without a backend, a missing brain is refused.
    let warm = brain.run(&["search", "flag", "--mode", "bm25"]);
    let cold = brain.run(&["search", "flag", "--no-daemon"]);
    assert_eq!(warm.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&warm.stderr).contains("is not there: answered from the index"),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    assert_eq!(cold.status.code(), Some(2));

    brain.write("lore/reborn.md", "# Reborn\n\nphoenixword\n");
    eventually(5 * SECOND, || {
        let status = brain.status();
        (status["notes"] == 1 && status["backend"]["watcher"]["state"] == "on").then_some(())
    });
    assert_eq!(
        hit_paths(&brain.json(&["search", "phoenixword"])),
        ["lore/reborn.md"]
    );
    brain.write("lore/later.md", "# Later\n\nphoenixlater\n");
    eventually(5 * SECOND, || {
        (hit_paths(&brain.json(&["search", "phoenixlater"])) == ["lore/later.md"]).then_some(())
    });
}

#[test]
fn a_socket_removed_under_the_backend_is_made_again() {
    let brain = Brain::example();
    let server = brain.serve_synced(&[]);
    std::fs::remove_file(&server.socket).unwrap();
    eventually(15 * SECOND, || {
        (brain.status()["backend"]["pid"] == server.pid()).then_some(())
    });
}

#[test]
fn a_brain_folder_link_repointed_under_the_backend_is_a_problem_not_a_sync() {
    let (brain, _) = brain_behind_a_link();
    let server = brain.serve_synced(&[]);
    let status = || server.conn().ask(r#"{"v":1,"op":"status"}"#)["result"]["status"].clone();
    let notes = status()["notes"].clone();
    let other = brain.tmp.path().join("other-notes");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("o.md"), "# Other\n\nothertok\n").unwrap();
    std::fs::remove_file(&brain.root).unwrap();
    std::os::unix::fs::symlink(&other, &brain.root).unwrap();
    // (The CLI now names the other folder, with an index and socket of its own: the
    // backend is asked on its socket.)
    let reindex = server.conn().ask(r#"{"v":1,"op":"reindex"}"#);
    assert!(
        reindex["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("now leads to")),
        "{reindex}"
    );
    let now = status();
    assert_eq!(now["notes"], notes, "the other folder was synced in: {now}");
    assert!(
        now["backend"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("restart what has it open")),
        "{now}"
    );
}

#[test]
fn an_index_deleted_under_the_backend_is_a_problem_in_status() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    std::fs::remove_dir_all(brain.config().index_dir()).unwrap();
    eventually(10 * SECOND, || {
        brain.status()["backend"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("was deleted under this backend"))
            .then_some(())
    });
}

#[test]
fn a_second_serve_on_the_same_root_is_refused() {
    let brain = Brain::example();
    let server = brain.serve(&[]);
    let second = brain.run(&["serve"]);
    assert_eq!(second.status.code(), Some(3));
    let stderr = second.stderr();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("already running") && stderr.contains(&format!("pid {}", server.pid())),
        "{stderr}"
    );
}

#[test]
fn a_socket_planted_by_another_user_is_refused() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to give a file to another user");
        return;
    }
    let brain = Brain::example();
    let mut server = brain.serve(&[]);
    let socket = server.socket.clone();
    assert!(server.signal_and_wait(libc::SIGTERM).success());
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    chown(&socket, 65534);
    let out = brain.run(&["serve"]);
    let stderr = out.stderr();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("owned by uid 65534"), "{stderr}");
    assert_eq!(
        std::fs::symlink_metadata(&socket).unwrap().uid(),
        65534,
        "never removed"
    );
    // The CLI will not talk to it either, and says so.
    let out = brain.run(&["search", "flag"]);
    assert!(out.status.success());
    assert!(out.stderr().contains("refusing to use it"));

    // A runtime folder of another user is refused as well.
    std::fs::remove_file(&socket).unwrap();
    let run = socket.parent().unwrap();
    chown(run, 65534);
    let out = brain.run(&["serve"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr().contains("owned by uid 65534"));
}

/// A backend that accepts but never answers (stopped, stuck) costs a search the quick
/// requests' timeout, then the search runs in-process and says why in one line.
#[test]
fn a_frozen_backend_is_given_up_on_after_the_quick_timeout() {
    let brain = Brain::example();
    let server = brain.serve_synced(&[]);
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(server.pid(), libc::SIGSTOP) };
    let out = brain.run(&["search", "flag", "--mode", "bm25"]);
    let status = brain.run(&["status"]);
    let status_json = brain.run(&["status", "--json"]);
    // A command of several requests waits out the timeout once, and says so once.
    let new = brain.run(&["new", "idea", "Written past a frozen backend"]);
    // SAFETY: as above; the drop kills it either way.
    unsafe { libc::kill(server.pid(), libc::SIGCONT) };
    assert_eq!(new.code(), 0, "{}", new.stderr());
    assert_eq!(
        new.stderr().matches("working in-process").count(),
        1,
        "{}",
        new.stderr()
    );
    assert!(
        status.stdout().contains("backend:   not answering"),
        "{}",
        status.stdout()
    );
    assert_eq!(status_json.json()["backend_state"], "not_answering");
    assert!(
        status_json.json()["backend_error"]
            .as_str()
            .is_some_and(|e| e.contains("no answer within")),
        "{}",
        status_json.stdout()
    );
    let stderr = out.stderr();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("no answer within 10 s") && stderr.contains("in-process"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(out.stdout().contains("flag"), "{}", out.stdout());
}

fn chown(path: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
}

#[test]
fn a_stale_socket_is_ignored_by_clients_and_replaced_by_the_next_serve() {
    let brain = Brain::example();
    let mut server = brain.serve(&[]);
    let socket = server.socket.clone();
    server.signal_and_wait(libc::SIGKILL);
    assert!(socket.exists(), "kill -9 leaves the socket behind");
    let started = Instant::now();
    let out = brain.run(&["search", "flag"]);
    assert!(out.status.success());
    assert!(
        out.stderr.starts_with(b"semantic search off"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < 5 * SECOND);
    let server = brain.serve(&[]);
    assert_eq!(server.socket, socket);
}

#[test]
fn sigterm_stops_cleanly() {
    let brain = Brain::example();
    let mut server = brain.serve(&[]);
    let socket = server.socket.clone();
    let status = server.signal_and_wait(libc::SIGTERM);
    assert!(status.success(), "{status}");
    assert!(!socket.exists(), "the socket is removed");
    let log = std::fs::read_to_string(brain.path("data/logs/serve.log")).unwrap();
    assert!(
        log.contains("stopping on signal") && log.contains("backend stopped"),
        "{log}"
    );
    // And on its own stderr, where it said it started.
    let said = std::fs::read_to_string(brain.path("serve.stderr")).unwrap();
    assert!(
        said.ends_with(
            "brain serve: SIGTERM: stopping after the work in hand\nbrain serve: stopped\n"
        ),
        "{said}"
    );
    drop(brain.serve(&[]));
}

const BULK: usize = 3000;

/// A brain big enough that its first sync takes several batches.
fn bulk_brain() -> Brain {
    let brain = Brain::new();
    for i in 0..BULK {
        brain.write(
            &format!("bulk/{i:05}.md"),
            format!(
                "# Bulk {i}\n\nbulkword b{i:05}\n\n{}\n",
                "padding ".repeat(50)
            ),
        );
    }
    brain
}

/// Waits until the first batches are committed and returns how many notes they hold.
fn some_notes_indexed(brain: &Brain) -> u64 {
    eventually(30 * SECOND, || {
        let n = brain.json(&["status", "--no-daemon"])["notes"]
            .as_u64()
            .unwrap();
        (n > 0).then_some(n)
    })
}

#[test]
fn kill_9_mid_index_then_the_next_start_completes_it() {
    let brain = bulk_brain();
    let mut server = brain.serve(&[]);
    let seen = some_notes_indexed(&brain);
    server.signal_and_wait(libc::SIGKILL);
    eprintln!("killed with {seen} of {BULK} notes indexed");
    let _server = brain.serve(&[]);
    eventually(60 * SECOND, || {
        (brain.status()["notes"] == BULK).then_some(())
    });
    assert_eq!(
        hit_paths(&brain.json(&["search", "b02999"])),
        ["bulk/02999.md"]
    );
}

#[test]
fn sigterm_mid_index_stops_after_the_batch_in_hand() {
    let brain = bulk_brain();
    let mut server = brain.serve(&[]);
    some_notes_indexed(&brain);
    let started = Instant::now();
    assert!(server.signal_and_wait(libc::SIGTERM).success());
    let stopped_in = started.elapsed();
    let left = brain.json(&["status", "--no-daemon"])["notes"]
        .as_u64()
        .unwrap();
    eprintln!("stopped in {stopped_in:?} with {left} of {BULK} notes indexed");
    assert!(stopped_in < 10 * SECOND);
    let _server = brain.serve(&[]);
    eventually(60 * SECOND, || {
        (brain.status()["notes"] == BULK).then_some(())
    });
}

#[test]
fn reindex_and_get_over_the_socket() {
    let brain = Brain::example();
    let server = brain.serve(&[]);
    let mut c = server.conn();
    let r = c.ask(r#"{"v":1,"id":1,"op":"reindex"}"#);
    assert_eq!(r["result"]["reindex"]["unchanged"], 34, "{r}");
    let r = c.ask(
        r#"{"v":1,"id":2,"op":"get","path":"lore/sqlite-busy-timeout.md","line":1,"count":2}"#,
    );
    assert_eq!(
        r["result"]["get"]["text"].as_str().unwrap().lines().count(),
        2,
        "{r}"
    );
    assert_eq!(r["result"]["get"]["start_line"], 1);
    let r = c.ask(r#"{"v":1,"id":3,"op":"get","path":"../serve.stderr"}"#);
    assert_eq!(error_code(&r), "invalid_input", "{r}");
    assert_eq!(r["error"]["exit"], 2);
    // As the CLI and the MCP tool refuse them.
    for bad in [r#""line":0"#, r#""line":1,"count":0"#] {
        let r = c.ask(&format!(
            r#"{{"v":1,"id":4,"op":"get","path":"lore/sqlite-busy-timeout.md",{bad}}}"#
        ));
        assert_eq!(error_code(&r), "invalid_input", "{bad}: {r}");
    }
}

#[test]
fn a_changed_ignore_file_walks_the_whole_folder_as_an_edit_not_a_fallback() {
    let brain = Brain::example();
    let _server = brain.serve_synced(&[]);
    brain.write(".brainignore", "lore/\n");
    let status = eventually(5 * SECOND, || {
        let status = brain.status();
        (status["notes"] == 18).then_some(status)
    });
    // Editing an ignore file is the person's doing: it was a warning in the log for each
    // of an editor's events and "fell back to a full sync" in status, as a lost watch is.
    assert!(status["backend"]["fell_back"].is_null(), "{status}");
    let text = brain.ok(&["status"]).stdout();
    assert!(!text.contains("fell back"), "{text}");
    let log = std::fs::read_to_string(brain.path("data/logs/serve.log")).unwrap();
    assert!(
        log.contains("an ignore file changed: walking the whole folder"),
        "{log}"
    );
    assert!(
        !log.lines()
            .any(|l| l.contains("WARN") && l.contains("falling back")),
        "{log}"
    );
}

/// A backend started on a brain folder that is not there (an unmounted volume, a synced
/// folder not restored yet) waits for it, and says so where it said it serves: the reason
/// was only in its log.
#[test]
fn serve_says_it_waits_for_a_missing_brain_folder() {
    let brain = Brain::example();
    brain.ok(&["index"]);
    std::fs::remove_dir_all(&brain.root).unwrap();
    let _server = brain.serve(&[]);
    let said = eventually(10 * SECOND, || {
        let text = std::fs::read_to_string(brain.path("serve.stderr")).ok()?;
        text.contains("waiting for it to come back").then_some(text)
    });
    assert!(said.contains("is not there"), "{said}");
    // And answers from the index as it stands, as it said, saying so: a search (and the
    // MCP tool, which asks the same) refused as a CLI without a backend does.
    let r = brain.ok(&["search", "busy_timeout", "--mode", "bm25", "--json"]);
    assert_eq!(
        r.json()["results"][0]["path"],
        "lore/sqlite-busy-timeout.md",
        "{}",
        r.stdout()
    );
    assert!(
        r.stderr()
            .contains("is not there: answered from the index as it stands"),
        "{}",
        r.stderr()
    );
}

/// A shell whose XDG_RUNTIME_DIR is not the backend's (ssh without a login session, cron)
/// looks for its socket elsewhere: `status` said "not running" of a running backend. The
/// lock it holds tells (read from the kernel's list of locks, never taken).
#[test]
#[cfg(target_os = "linux")]
fn status_from_another_runtime_folder_says_the_backend_runs_elsewhere() {
    let brain = Brain::example();
    let server = brain.serve_synced(&[]);
    let other = brain.path("other-run");
    std::fs::create_dir_all(&other).unwrap();
    let status = |json: bool| {
        let mut cmd = brain.command();
        cmd.env("XDG_RUNTIME_DIR", &other).arg("status");
        if json {
            cmd.arg("--json");
        }
        crate::harness::Run(cmd.output().unwrap())
    };
    let text = status(false).stdout();
    assert!(
        text.contains(&format!(
            "backend:   running (pid {}), not on this shell's socket",
            server.pid()
        )),
        "{text}"
    );
    assert_eq!(status(true).json()["backend_state"], "elsewhere");
    // A second `serve` from there is refused, naming the socket the backend listens on
    // (it named the one its own XDG_RUNTIME_DIR would give, which is not there).
    let second = crate::harness::Run(
        brain
            .command()
            .env("XDG_RUNTIME_DIR", &other)
            .arg("serve")
            .output()
            .unwrap(),
    );
    assert_eq!(second.code(), 3, "{}", second.stderr());
    assert!(
        second
            .stderr()
            .contains(&format!("socket {}", server.socket.display())),
        "{}",
        second.stderr()
    );
    // Where the backend's own socket is, it answers as always.
    assert_eq!(brain.status()["backend_state"], "answered");
}
