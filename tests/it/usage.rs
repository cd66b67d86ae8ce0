//! What the brain is used for: the read log (`brain get`, the `brain log-read` hook), `brain
//! stats` over a log seeded with known answers, its bounds (`--days`, `--prune`, `--reset`),
//! note dates and `--since` / `--before`, and the install's hook snippet.

use serde_json::{json, Value};

use crate::harness::{paths, Brain};

/// A Claude Code PostToolUse payload for `tool` on `file`.
fn payload(tool: &str, file: &std::path::Path) -> Vec<u8> {
    json!({
        "session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PostToolUse", "tool_name": tool,
        "tool_input": {"file_path": file}, "tool_response": {"type": "text"}
    })
    .to_string()
    .into_bytes()
}

fn stats(b: &Brain, args: &[&str]) -> Value {
    let mut all = vec!["stats"];
    all.extend_from_slice(args);
    b.json(&all)
}

#[test]
fn the_hook_logs_reads_of_notes_and_is_silent_about_everything_else() {
    let b = Brain::example();
    let note = b.path("brain/lore/sqlite-busy-timeout.md");
    // Before any index exists the hook creates nothing.
    let r = b.run_stdin(&["log-read"], &payload("Read", &note));
    assert_eq!(
        (r.code(), r.stdout(), r.stderr()),
        (0, String::new(), String::new())
    );
    assert!(!b.config().index_path().exists(), "the hook made an index");

    // Markdown in the brain folder that is not a note: the walk skips it, and so do reads.
    for not_a_note in ["raw/r.md", ".obsidian/o.md", "README.md", "ignored/i.md"] {
        b.write(not_a_note, "# not a note\n");
    }
    b.write(".gitignore", "ignored/\n");
    b.ok(&["index"]);
    std::fs::write(
        b.tmp.path().join("elsewhere.md"),
        "# not a note of the brain\n",
    )
    .unwrap();
    let mut ignored: Vec<Vec<u8>> = vec![
        payload("Edit", &note),
        payload("Read", &b.tmp.path().join("elsewhere.md")),
        payload("Read", &b.path("brain/lore/missing.md")),
        b"{not json".to_vec(),
        b"".to_vec(),
        vec![0xff, 0xfe, 0x00],
        br#"{"tool_name":"Read","tool_input":{}}"#.to_vec(),
    ];
    for not_a_note in ["raw/r.md", ".obsidian/o.md", "README.md", "ignored/i.md"] {
        ignored.push(payload("Read", &b.root.join(not_a_note)));
    }
    for p in &ignored {
        let r = b.run_stdin(&["log-read"], p);
        assert_eq!(
            (r.code(), r.stdout(), r.stderr()),
            (0, String::new(), String::new())
        );
    }
    assert_eq!(stats(&b, &[])["totals"]["reads"], 0);

    for _ in 0..2 {
        let r = b.run_stdin(&["log-read"], &payload("Read", &note));
        assert_eq!(
            (r.code(), r.stdout(), r.stderr()),
            (0, String::new(), String::new())
        );
    }
    let s = stats(&b, &[]);
    assert_eq!(s["totals"]["reads"], 2, "{s}");
    assert_eq!(s["reads_by_via"], json!({"hook": 2}));
    assert_eq!(
        s["read_not_surfaced"],
        json!([{"path": "lore/sqlite-busy-timeout.md", "surfaced": 0, "read": 2}])
    );
}

#[test]
fn stats_over_a_seeded_log_give_the_known_answers() {
    let b = Brain::example();
    // Three searches that surface the same notes, one of them read once.
    for _ in 0..3 {
        b.ok(&["search", "sqlite", "--mode", "bm25", "--top", "3"]);
    }
    let top: Vec<String> = paths(&b.json(&[
        "search",
        "sqlite",
        "--mode",
        "bm25",
        "--top",
        "3",
        "--no-sync",
    ]));
    assert_eq!(top.len(), 3, "{top:?}");
    b.ok(&["get", &top[0]]);
    // Two dead queries, one filtered search, one read of a note no search surfaced.
    b.run(&["search", "zqxjkv", "--mode", "bm25"]);
    b.run(&["search", "ZQXJKV ", "--mode", "bm25"]);
    b.ok(&["search", "jitter", "--type", "lore", "--mode", "bm25"]);
    b.ok(&["get", "idea/menu-bar-quick-capture.md:3:2"]);
    // Not holes: nothing found under a filter (that says it of the filter), and a query
    // that finds a note written since.
    b.run(&["search", "zqxjkv", "--type", "lore", "--mode", "bm25"]);
    b.run(&["search", "flurbophage", "--mode", "bm25"]);
    std::fs::write(
        b.root.join("lore/flurbophage.md"),
        "# Flurbophage\n\nA word no other note holds.\n",
    )
    .unwrap();
    b.ok(&["search", "flurbophage", "--mode", "bm25"]);

    let s = stats(&b, &["--days", "7"]);
    assert_eq!(s["days"], 7);
    let t = &s["totals"];
    assert_eq!(
        (
            t["searches"].as_u64(),
            t["reads"].as_u64(),
            t["dead_searches"].as_u64()
        ),
        (Some(10), Some(2), Some(4)),
        "{s}"
    );
    assert_eq!(
        s["top_queries"][0],
        json!({"query": "sqlite", "count": 4, "results": 3})
    );
    assert_eq!(
        s["dead_queries"],
        json!([{"query": "zqxjkv", "count": 2, "results": 0}])
    );
    // Surfaced 4 times each; the first read once (25% < 30%): all three are flagged.
    let flagged: Vec<&str> = s["surfaced_not_read"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(flagged.len(), 3, "{s}");
    assert!(
        top.iter().all(|p| flagged.contains(&p.as_str())),
        "{flagged:?}"
    );
    let first = s["top_surfaced"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == top[0].as_str())
        .unwrap();
    assert_eq!(
        (first["surfaced"].as_u64(), first["read"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(
        s["read_not_surfaced"],
        json!([{"path": "idea/menu-bar-quick-capture.md", "surfaced": 0, "read": 1}])
    );
    assert_eq!(s["by_mode"], json!({"bm25": 10}));
    assert_eq!(s["by_type"], json!({"(any)": 8, "lore": 2}));
    assert_eq!(s["reads_by_via"], json!({"cli": 2}));

    let human = b.ok(&["stats"]).stdout();
    for line in [
        "10 searches, 4 found no note by their words",
        "dead queries",
        "2x  zqxjkv",
        "read but never surfaced",
    ] {
        assert!(human.contains(line), "{line:?} missing:\n{human}");
    }
    // The short version in `brain status`.
    assert_eq!(b.status()["recalls"]["reads_last_7_days"], 2);
}

#[test]
fn the_logs_are_pruned_and_reset_only_when_asked_and_bad_windows_are_refused() {
    let b = Brain::example();
    b.ok(&["search", "wal", "--mode", "bm25"]);
    b.ok(&["get", "lore/sqlite-busy-timeout.md"]);
    for bad in [
        &["stats", "--days", "0"][..],
        &["stats", "--prune", "0"],
        &["stats", "--days", "99999999"],
        &["stats", "--prune", "99999999999"],
    ] {
        let r = b.run(bad);
        assert_eq!(r.code(), 2, "{bad:?}: {}", r.stderr());
        assert!(r.stderr().contains("between 1 and"), "{}", r.stderr());
    }
    // Nothing is older than a day: a prune keeps everything.
    assert_eq!(
        b.json(&["stats", "--prune", "1"]),
        json!({"searches": 0, "reads": 0})
    );
    // Without a terminal, --reset asks for --yes and removes nothing.
    let r = b.run(&["stats", "--reset"]);
    assert_eq!(r.code(), 2);
    assert!(r.stderr().contains("--yes"), "{}", r.stderr());
    assert_eq!(stats(&b, &[])["totals"]["searches"], 1);
    assert_eq!(
        b.json(&["stats", "--reset", "--yes"]),
        json!({"searches": 1, "reads": 1, "reset": true})
    );
    let s = stats(&b, &[]);
    assert_eq!(
        (
            s["totals"]["searches"].as_u64(),
            s["totals"]["reads"].as_u64()
        ),
        (Some(0), Some(0))
    );
}

/// A brain folder that is not there (a mistyped --dir) is refused, not answered with an
/// empty report, and neither it nor a bad window creates an index.
#[test]
fn stats_of_a_missing_brain_folder_is_an_error_and_creates_nothing() {
    let b = Brain::new();
    let missing = b.path("nowhere");
    let file = b.path("a-file");
    std::fs::write(&file, "x").unwrap();
    for dir in [&missing, &file] {
        let r = b
            .command()
            .args(["stats", "--json"])
            .env("BRAIN_DIR", dir)
            .output()
            .unwrap();
        assert_eq!(
            r.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(r.stdout.is_empty());
    }
    assert_eq!(b.run(&["stats", "--days", "0"]).code(), 2);
    assert!(
        !b.data.join("indexes").exists()
            || std::fs::read_dir(b.data.join("indexes"))
                .unwrap()
                .next()
                .is_none(),
        "an index was created"
    );
}

/// `brain stats --reset` answered `answer` at a real terminal (util-linux `script` gives it
/// one): its exit code and what the terminal showed.
#[cfg(target_os = "linux")]
fn reset_at_a_terminal(b: &Brain, answer: &str, json: bool) -> (i32, String) {
    // The harness's environment, for `script` and the brain it starts.
    let template = b.command();
    let mut cmd = std::process::Command::new("script");
    cmd.env_clear().current_dir(b.tmp.path());
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    let json = if json { " --json" } else { "" };
    let line = format!("'{}' stats --reset{json}", crate::harness::BIN);
    let r = crate::harness::Run(
        cmd.args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(answer.as_bytes())?;
                child.wait_with_output()
            })
            .expect("run script"),
    );
    (r.code(), r.stdout())
}

#[cfg(target_os = "linux")]
#[test]
fn declining_the_reset_at_the_terminal_resets_nothing_and_is_not_an_error() {
    let b = Brain::example();
    b.ok(&["search", "wal", "--mode", "bm25"]);
    let (code, shown) = reset_at_a_terminal(&b, "n\n", false);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("[y/N] nothing reset"), "{shown}");
    let (code, shown) = reset_at_a_terminal(&b, "n\n", true);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains(r#""reset":false"#) && shown.contains(r#""searches":0"#),
        "{shown}"
    );
    assert_eq!(stats(&b, &[])["totals"]["searches"], 1);
    let (code, shown) = reset_at_a_terminal(&b, "y\n", false);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("emptied the logs: 1 search and 0 reads removed"),
        "{shown}"
    );
    assert_eq!(stats(&b, &[])["totals"]["searches"], 0);
}

#[test]
fn notes_carry_dates_and_since_and_before_filter_on_them() {
    let b = Brain::example();
    b.write(
        "journal/2026-10-01-standup.md",
        "# Standup\n\nTalked about the retry storm.\n",
    );
    b.write(
        "lore/old-retry-lesson.md",
        "---\ncreated: 2024-01-01\nupdated: 2024-02-03T10:00:00Z\n---\n# Old retry lesson\n\nRetry storms again.\n",
    );
    // Jekyll's and Hugo's `date`, with its time and offset.
    b.write(
        "lore/jekyll-post.md",
        "---\ndate: 2019-05-06 10:00:00 +0200\n---\n# A retry storm post\n\nRetry storms in 2019.\n",
    );
    let all = b.json(&["search", "retry storm", "--mode", "bm25", "--top", "50"]);
    let date_of = |path: &str| -> String {
        all["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["path"] == path)
            .unwrap()["date"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        date_of("journal/2026-10-01-standup.md"),
        "2026-10-01",
        "from the file name"
    );
    assert_eq!(
        date_of("lore/old-retry-lesson.md"),
        "2024-02-03",
        "updated wins over created"
    );
    assert_eq!(date_of("lore/jekyll-post.md"), "2019-05-06", "its date");

    let since = paths(&b.json(&[
        "search",
        "retry storm",
        "--mode",
        "bm25",
        "--since",
        "2026-01-01",
    ]));
    assert!(
        since.contains(&"journal/2026-10-01-standup.md".to_string()),
        "{since:?}"
    );
    assert!(
        !since.contains(&"lore/old-retry-lesson.md".to_string()),
        "{since:?}"
    );
    let before = paths(&b.json(&[
        "search",
        "retry storm",
        "--mode",
        "bm25",
        "--before",
        "2025-01-01",
    ]));
    assert_eq!(before, ["lore/jekyll-post.md", "lore/old-retry-lesson.md"]);
    // A relative bound is relative to today: nothing of the example is dated in the future.
    let recent = paths(&b.json(&["search", "retry storm", "--mode", "bm25", "--since", "0d"]));
    assert!(
        !recent.contains(&"lore/old-retry-lesson.md".to_string()),
        "{recent:?}"
    );

    // A range with no day in it is refused, not answered "(no results)".
    for (since, before) in [("2024-03-01", "2024-02-01"), ("2024-03-01", "2024-03-01")] {
        let r = b.run(&["search", "retry", "--since", since, "--before", before]);
        assert_eq!(r.code(), 2, "{}", r.stderr());
        assert_eq!(
            r.stderr(),
            format!(
                "error: --since {since} is not before the range's end, {before}: no day is in \
                 it (the start's day is included, the end's is not)\n"
            )
        );
    }
    for bad in ["yesterday", "2026-02-30", "-3d", "3m"] {
        let r = b.run(&["search", "retry", &format!("--since={bad}")]);
        assert_eq!(r.code(), 2, "{bad}");
        assert!(
            r.stderr().contains("--since") && r.stderr().contains("30d, 2w or YYYY-MM-DD"),
            "{}",
            r.stderr()
        );
    }
}

#[test]
fn install_prints_the_hook_and_check_sees_it_once_merged() {
    let b = Brain::new();
    let claude = b.path("claude");
    let run = |args: &[&str]| {
        let out = b
            .command()
            .env("CLAUDE_CONFIG_DIR", &claude)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&["install"]);
    assert!(out.contains("hook       to do"), "{out}");
    assert!(out.contains("log-read"), "{out}");
    assert!(
        !claude.join("settings.json").exists(),
        "brain edited Claude's settings"
    );
    assert!(run(&["install", "--check"]).contains("hook       off"));
    // A settings file that is not JSON is said to be, not taken for "no hook".
    std::fs::write(claude.join("settings.json"), "{\"hooks\": ").unwrap();
    let check = run(&["install", "--check"]);
    assert!(
        check.contains("hook       unreadable") && check.contains("is not JSON"),
        "{check}"
    );

    // Merged as printed (the snippet is JSON), Claude Code's settings now run the hook.
    let start = out.find("    {").unwrap();
    let end = out[start..].find("\n\n").unwrap() + start;
    let snippet: Value = serde_json::from_str(&out[start..end]).expect("the snippet is JSON");
    assert_eq!(snippet["hooks"]["PostToolUse"][0]["matcher"], "Read");
    std::fs::write(claude.join("settings.json"), snippet.to_string()).unwrap();
    assert!(run(&["install", "--check"]).contains("hook       ok"));

    // Every hook turned off, or one whose program path is gone: said, not "ok".
    let mut off = snippet.clone();
    off["disableAllHooks"] = Value::Bool(true);
    std::fs::write(claude.join("settings.json"), off.to_string()).unwrap();
    assert!(run(&["install", "--check"]).contains("hook       disabled"));
    // The check with the hook's command set to `command`.
    let check_with = |command: &str| {
        let mut hook = snippet.clone();
        hook["hooks"]["PostToolUse"][0]["hooks"][0]["command"] = Value::String(command.into());
        std::fs::write(claude.join("settings.json"), hook.to_string()).unwrap();
        run(&["install", "--check"])
    };
    for (command, says) in [
        ("/nonexistent/brain log-read", "/nonexistent/brain"),
        // An argument log-read refuses (exit 2 after every Read).
        (
            "brain log-read --bogus",
            "\"--bogus\", which it does not take",
        ),
        // A folder that is not this brain.
        (
            "brain --dir /nonexistent/notes log-read",
            "logs into /nonexistent/notes, which does not exist",
        ),
    ] {
        let check = check_with(command);
        assert!(
            check.contains("hook       broken") && check.contains(says),
            "{command}: {check}"
        );
    }
    // Naming this brain is fine.
    let named = format!("brain --dir '{}' log-read", b.root.display());
    assert!(check_with(&named).contains("hook       ok"));
    // A model name brain does not know is wrong, not a model to fetch.
    let out = b
        .command()
        .env("CLAUDE_CONFIG_DIR", &claude)
        .env("BRAIN_MODEL", "bogus")
        .args(["install", "--check"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let check = String::from_utf8_lossy(&out.stdout);
    assert!(
        check.contains("model      unknown") && check.contains("unknown model \"bogus\""),
        "{check}"
    );
}
