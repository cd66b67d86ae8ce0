//! The core through the real binary: indexing, keyword search, output contracts, and every
//! kind of bad input the core issue lists.

use crate::harness::{describe, paths, walk, Brain, Run};

#[test]
fn index_reports_changes_and_is_idempotent() {
    let b = Brain::example();
    let run = b.ok(&["index"]);
    let out = run.stdout();
    assert!(out.starts_with("indexed 34 notes (+34 ~0 -0) in "), "{out}");
    // No model here: the passages wait for one, and the index says so rather than "done".
    assert!(
        run.stderr()
            .contains("passages not embedded: semantic search off: run 'brain model fetch'"),
        "{}",
        run.stderr()
    );
    let out = b.ok(&["index"]).stdout();
    assert!(out.starts_with("indexed 34 notes (+0 ~0 -0) in "), "{out}");
}

#[test]
fn search_prints_the_recall_format() {
    let b = Brain::example();
    let out = b
        .ok(&[
            "search",
            "feature flag cleanup",
            "--mode",
            "bm25",
            "--top",
            "3",
        ])
        .stdout();
    let lines: Vec<&str> = out.lines().collect();
    // `path:line`, the passage's line: the hit copied whole is what `brain get` reads.
    assert_eq!(lines[0], "[1] [lore] lore/flag-cleanup-test-rework.md:10");
    assert!(
        lines[1].starts_with("    Flag Cleanup: Rework Tests, Don't Delete Them  (bm25="),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("    When cleaning up a «feature» «flag»"),
        "{}",
        lines[2]
    );
    assert!(lines.last().unwrap().starts_with("(recall_id: "), "{out}");
    assert!(lines.last().unwrap().ends_with(", mode: bm25)"), "{out}");
}

#[test]
fn json_output_keeps_the_contract_field_names() {
    let b = Brain::example();
    let j = b
        .ok(&[
            "search",
            "flag cleanup",
            "--mode",
            "bm25",
            "--type",
            "lore",
            "--top",
            "10",
            "--json",
        ])
        .json();
    assert_eq!(j["query"], "flag cleanup");
    assert_eq!(j["mode"], "bm25");
    let hit = &j["results"][0];
    for field in [
        "path",
        "abs_path",
        "type",
        "title",
        "tags",
        "snippet",
        "score",
        "bm25_rank",
        "sem_rank",
        "line",
    ] {
        assert!(hit.get(field).is_some(), "missing {field}: {hit}");
    }
    assert_eq!(hit["bm25_rank"], 1);
    assert!(hit["sem_rank"].is_null());
    assert!(hit["abs_path"]
        .as_str()
        .unwrap()
        .starts_with(b.root.to_str().unwrap()));
    assert!(j["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["type"] == "lore"));
}

#[test]
fn hit_line_points_at_the_matched_passage() {
    let b = Brain::example();
    let j = b
        .ok(&["search", "wal_checkpoint", "--mode", "bm25", "--json"])
        .json();
    let hit = &j["results"][0];
    let text = std::fs::read_to_string(hit["abs_path"].as_str().unwrap()).unwrap();
    let line = text
        .lines()
        .nth(hit["line"].as_u64().unwrap() as usize - 1)
        .unwrap();
    assert_ne!(
        hit["path"], "idea/resurface-stale-lore.md",
        "notes with the literal identifier come first"
    );
    assert!(
        line.to_lowercase().contains("wal_checkpoint"),
        "line {}: {line}",
        hit["line"]
    );

    // The match's own line, also when the snippet starts lines before it or with the
    // blank line after the frontmatter.
    b.write(
        "lore/zebra-a.md",
        "---\ntitle: Animals\n---\n\nThe zebrafinch has stripes.\n",
    );
    b.write(
        "lore/zebra-b.md",
        "# Herd\n\nSome text here.\nA zebrafinch herd moves.\n",
    );
    let j = b
        .ok(&["search", "zebrafinch", "--mode", "bm25", "--json"])
        .json();
    let lines: Vec<(String, u64)> = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(lines.contains(&("lore/zebra-a.md".into(), 5)), "{lines:?}");
    assert!(lines.contains(&("lore/zebra-b.md".into(), 4)), "{lines:?}");

    // A snippet that starts with a word the note also holds lines before: the snippet's
    // line, not the word's first.
    let mut text = String::from(
        "# Undo anything

Use git for it.

",
    );
    for i in 0..40 {
        text.push_str(&format!(
            "Filler line {i} about branches and merges.

"
        ));
    }
    text.push_str(
        "git reflog shows where HEAD was, so git reflog undoes a reset.
",
    );
    b.write("lore/undo-anything.md", &text);
    let j = b
        .ok(&["search", "git reflog", "--mode", "bm25", "--json"])
        .json();
    let hit = &j["results"][0];
    assert_eq!(hit["path"], "lore/undo-anything.md", "{j}");
    assert_eq!(hit["line"], 85, "{hit}");
}

#[test]
fn natural_language_question_is_or_ranked_not_and_filtered() {
    let b = Brain::example();
    let j = b
        .ok(&[
            "search",
            "how do i prevent silent failures from gitignore patterns",
            "--mode",
            "bm25",
            "--json",
        ])
        .json();
    assert!(
        !paths(&j).is_empty(),
        "a question missing some words must still rank notes"
    );
}

#[test]
fn filters_by_tag_and_type() {
    let b = Brain::example();
    let j = b
        .ok(&[
            "search", "sqlite", "--mode", "bm25", "--tag", "SQLite", "--json",
        ])
        .json();
    assert!(!paths(&j).is_empty());
    for hit in j["results"].as_array().unwrap() {
        let tags: Vec<String> = hit["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_lowercase())
            .collect();
        assert!(tags.contains(&"sqlite".to_string()), "{hit}");
    }
    let r = b.ok(&["search", "sqlite", "--mode", "bm25", "--type", "lor"]);
    assert!(r.stdout().ends_with("(no results)\n"), "{}", r.stdout());
    assert!(
        r.stderr().contains("no notes of type \"lor\""),
        "{}",
        r.stderr()
    );
    let r = b.ok(&["search", "sqlite", "--mode", "bm25", "--tag", "#sqlitee"]);
    assert!(r.stdout().ends_with("(no results)\n"), "{}", r.stdout());
    assert!(
        r.stderr().contains("no note is tagged \"sqlitee\""),
        "{}",
        r.stderr()
    );
}

#[test]
fn phrase_exclude_and_prefix() {
    let b = Brain::example();
    let all = paths(
        &b.ok(&[
            "search", "sqlite", "--mode", "bm25", "--top", "50", "--json",
        ])
        .json(),
    );
    let without = paths(
        &b.ok(&[
            "search",
            "sqlite",
            "-checkpoint",
            "--mode",
            "bm25",
            "--top",
            "50",
            "--json",
        ])
        .json(),
    );
    assert!(without.len() < all.len(), "exclusion removed nothing");
    assert!(!without.iter().any(|p| p.contains("checkpoint")));
    let prefix = paths(
        &b.ok(&["search", "idempot*", "--mode", "bm25", "--json"])
            .json(),
    );
    assert_eq!(prefix[0], "lore/idempotency-keys-payments.md");
    let phrase = paths(
        &b.ok(&["search", "\"busy_timeout\"", "--mode", "bm25", "--json"])
            .json(),
    );
    assert_eq!(phrase[0], "lore/sqlite-busy-timeout.md");
}

#[test]
fn no_results_ends_the_output() {
    let b = Brain::example();
    let out = b.ok(&["search", "zzqxj", "--mode", "bm25"]).stdout();
    assert_eq!(out.lines().last(), Some("(no results)"));
}

#[test]
fn sync_follows_edits_deletes_and_backwards_mtimes() {
    let b = Brain::example();
    b.ok(&["index"]);
    let path = b.write(
        "lore/new-note.md",
        "# Zebra crossings\n\nstriped zebra lore\n",
    );
    assert!(b.ok(&["index"]).stdout().contains("(+1 ~0 -0)"));
    // Same size, different content, mtime moved backwards: still an update.
    std::fs::write(&path, "# Zebra crossings\n\nstriped okapi lore\n").unwrap();
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert!(b.ok(&["index"]).stdout().contains("(+0 ~1 -0)"));
    assert_eq!(
        paths(
            &b.ok(&["search", "okapi", "--mode", "bm25", "--json"])
                .json()
        ),
        vec!["lore/new-note.md"]
    );
    // A touch changes nothing.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    assert!(b.ok(&["index"]).stdout().contains("(+0 ~0 -0)"));
    std::fs::remove_file(&path).unwrap();
    assert!(b.ok(&["index"]).stdout().contains("(+0 ~0 -1)"));
    assert!(b
        .ok(&["search", "okapi", "--mode", "bm25"])
        .stdout()
        .ends_with("(no results)\n"));
}

#[test]
fn search_syncs_first_unless_told_not_to() {
    let b = Brain::example();
    b.ok(&["index"]);
    b.write("idea/quokka.md", "# Quokka\n\nquokka smiles\n");
    let out = b
        .ok(&["search", "quokka", "--mode", "bm25", "--no-sync"])
        .stdout();
    assert!(out.ends_with("(no results)\n"), "{out}");
    let out = b.ok(&["search", "quokka", "--mode", "bm25"]).stdout();
    assert!(out.starts_with("[1] [idea] idea/quokka.md"), "{out}");
}

#[test]
fn hybrid_without_a_model_falls_back_with_one_line() {
    let b = Brain::example();
    let r = b.ok(&["search", "feature flag cleanup", "--json"]);
    assert_eq!(r.json()["mode"], "bm25");
    assert_eq!(r.stderr(), "semantic search off: run 'brain model fetch'\n");
}

#[test]
fn recall_log_counts_searches() {
    let b = Brain::example();
    let first = b.ok(&["search", "flag", "--mode", "bm25", "--json"]).json()["recall_id"]
        .as_i64()
        .unwrap();
    let second = b
        .ok(&["search", "zzqxj", "--mode", "bm25", "--json"])
        .json()["recall_id"]
        .as_i64()
        .unwrap();
    assert_eq!(second, first + 1);
    let status = b.ok(&["status", "--json"]).json();
    assert_eq!(status["recalls"]["searches"], 2);
    assert_eq!(status["recalls"]["empty"], 1);
    assert_eq!(status["notes"], 34);
    assert_eq!(status["backend_state"], "not_running", "{status}");
    let text = b.ok(&["status"]).stdout();
    assert!(
        text.contains("searches:  2 (2 in the last 7 days, 1 with no results)"),
        "{text}"
    );
}

#[test]
fn bad_files_are_warnings_that_name_the_file() {
    let b = Brain::new();
    b.write("lore/good.md", "# Good\n\nfine words\n");
    b.write(
        "lore/latin1.md",
        b"# Caf\xe9\n\nbad \xff bytes but searchable\n",
    );
    b.write("lore/binary.md", b"\x00\x01\x02binary");
    b.write(
        "lore/broken-yaml.md",
        "---\ntitle: [oops\n---\nbroken frontmatter body\n",
    );
    b.write(
        "lore/list-yaml.md",
        "---\n- a\n- b\n---\nlist frontmatter body\n",
    );
    b.write("lore/empty.md", "");
    let big = b.root.join("lore/huge.md");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(50 * 1024 * 1024)
        .unwrap();
    // A link to itself leads nowhere (one to a folder inside is an alias, walked never).
    std::os::unix::fs::symlink("loop.md", b.root.join("lore/loop.md")).unwrap();
    std::os::unix::fs::symlink(b.root.join("lore"), b.root.join("lore/alias")).unwrap();
    let r = b.ok(&["index"]);
    let err = r.stderr();
    for name in [
        "latin1.md",
        "binary.md",
        "broken-yaml.md",
        "list-yaml.md",
        "huge.md",
        "loop",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("warning: ") && l.contains(name)),
            "no warning naming {name}:\n{err}"
        );
    }
    assert!(
        !err.contains("good.md") && !err.contains("empty.md") && !err.contains("alias"),
        "{err}"
    );
    assert!(r.stdout().starts_with("indexed 5 notes"), "{}", r.stdout());
    assert!(!err.contains("indexed earlier"), "said just above: {err}");
    // Said once, by the sync that read them; later syncs point at `check`, which names
    // them, as a search's own sync would have left them unsaid.
    let again = b.ok(&["index"]).stderr();
    assert!(
        again.contains("note: 3 notes were indexed earlier with a problem")
            && again.contains("'brain check' names them"),
        "{again}"
    );
    for (query, path) in [
        ("searchable", "lore/latin1.md"),
        ("broken", "lore/broken-yaml.md"),
        ("list", "lore/list-yaml.md"),
    ] {
        assert_eq!(
            paths(&b.ok(&["search", query, "--mode", "bm25", "--json"]).json())[0],
            path
        );
    }
    b.ok(&["status"]);
}

/// A value an error echoes cannot make it two lines or reach the terminal as an escape,
/// and a huge one is cut in its middle, the cause and what to do kept.
#[test]
fn an_error_echoing_a_value_stays_one_line_of_plain_text() {
    let b = Brain::example();
    let r = b.run(&["get", "lore/x\nerror: forged line.md"]);
    assert_eq!(r.code(), 2);
    assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
    assert!(
        r.stderr().contains("lore/x\\nerror: forged line.md"),
        "{}",
        r.stderr()
    );
    let r = b.run(&["--dir", "/tmp/x\u{1b}]0;title\u{7}", "status"]);
    assert_eq!(r.code(), 2);
    assert!(!r.stderr().contains('\u{1b}'), "{}", r.stderr());
    assert!(
        r.stderr().contains("\\u{1b}]0;title\\u{7}"),
        "{}",
        r.stderr()
    );
    let long = format!("/no/such/{}brain", "dd/".repeat(1_000));
    let r = b.run(&["--dir", &long, "status"]);
    assert_eq!(r.code(), 2);
    let line = r.stderr();
    assert!(line.len() < 2_200, "{} bytes", line.len());
    assert!(
        line.starts_with("error: ") && line.contains("characters ...]"),
        "{line}"
    );
    assert!(line.trim_end().ends_with(&missing_root_tail()), "{line}");
}

/// How the missing-brain-folder error ends (what to do), as the short one says it.
fn missing_root_tail() -> String {
    let r = Brain::new().run(&["--dir", "/no/such/brain", "status"]);
    let line = r.stderr().trim_end().to_string();
    line[line.len() - 40..].to_string()
}

#[test]
fn missing_root_is_one_line_and_exit_2() {
    let b = Brain::new();
    let r = b.run(&["--dir", "/no/such/brain", "index"]);
    assert_eq!(r.code(), 2);
    assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
    assert!(
        r.stderr().contains("/no/such/brain does not exist"),
        "{}",
        r.stderr()
    );
    for args in [
        &["search", "x"][..],
        &["get", "a.md"],
        &["status"],
        &["check"],
        &["new", "lore", "x"],
    ] {
        let r = b.run(&[&["--dir", "/no/such/brain"][..], args].concat());
        assert_eq!(r.code(), 2, "{args:?}: {}", r.stderr());
        assert_eq!(r.stderr().lines().count(), 1, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains("does not exist"), "{}", r.stderr());
    }
    // `serve` too (it once served the missing folder, waiting for it): spawned, so that a
    // backend that does start is killed instead of hanging the suite.
    let mut serve = b
        .command()
        .args(["--dir", "/no/such/brain", "serve"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = serve.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            serve.kill().unwrap();
            panic!("brain serve ran for a brain folder that does not exist");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut serve.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    // A mistyped folder leaves no index behind.
    assert!(!b.data.join("indexes").exists());
    assert!(!b.data.join("logs").exists(), "serve wrote no log either");
}

#[test]
fn root_that_is_a_file_is_refused() {
    let b = Brain::new();
    let file = b.write("not-a-dir.md", "x");
    for args in [
        &["index"][..],
        &["search", "x"],
        &["get", "a.md"],
        &["new", "lore", "x"],
    ] {
        let r = b.run(&[&["--dir", file.to_str().unwrap()][..], args].concat());
        assert_eq!(r.code(), 2, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains("not a directory"), "{}", r.stderr());
    }
}

#[test]
fn a_data_folder_inside_the_brain_is_refused_and_nothing_is_written() {
    let b = Brain::example();
    let inside = b.root.join("data");
    let r = b
        .command()
        .env("BRAIN_DATA_DIR", &inside)
        .arg("index")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2), "{}", describe(&r));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("inside the brain folder"), "{err}");
    assert!(!inside.exists());
}

#[test]
fn get_reads_a_dot_slash_path_from_the_current_folder_first() {
    let b = Brain::new();
    b.write("o.md", "root note\n");
    b.write("sub/o.md", "sub note\n");
    b.write("sub/only.md", "only here\n");
    let from_sub = |path: &str| {
        let out = b
            .command()
            .current_dir(b.root.join("sub"))
            .args(["get", path])
            .output()
            .unwrap();
        crate::harness::Run(out)
    };
    // As a shell reads it: `./o.md` is this folder's; `o.md` is the brain's, as hits print.
    assert!(from_sub("./o.md").stdout().contains("sub note"));
    assert!(from_sub("o.md").stdout().contains("root note"));
    assert!(from_sub("only.md").stdout().contains("only here"));
    assert!(from_sub("../o.md").stdout().contains("root note"));
}

/// A link copied whole from a note reads its note, and a heading in it that section;
/// `links` and `similar` take it too (each said "no such note").
#[test]
fn get_links_and_similar_take_a_note_as_a_link_writes_it() {
    let b = Brain::example();
    let j = b.json(&[
        "get",
        "[[lore/retry-jitter-thundering-herd#Full jitter|the fix]]",
    ]);
    assert_eq!(j["start_line"], 19, "{j}");
    assert!(
        j["text"].as_str().unwrap().starts_with("## Full jitter"),
        "{j}"
    );
    assert!(
        !j["text"].as_str().unwrap().contains("## Other things"),
        "{j}"
    );
    let r = b.run(&["get", "lore/retry-jitter-thundering-herd#Half jitter"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("has no heading \"Half jitter\""),
        "{}",
        r.stderr()
    );
    // From the note's own folder, as `get x.md` reads it there.
    let out = b
        .command()
        .current_dir(b.root.join("lore"))
        .args([
            "get",
            "retry-jitter-thundering-herd.md#Full jitter",
            "--json",
        ])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["start_line"], 19, "{j}");
    let links = b.json(&["links", "[[lore/retry-jitter-thundering-herd]]"]);
    assert_eq!(
        links["path"], "lore/retry-jitter-thundering-herd.md",
        "{links}"
    );
    b.ok(&["similar", "[[lore/retry-jitter-thundering-herd]]"]);
}

#[test]
fn io_errors_say_their_cause_once() {
    let b = Brain::example();
    std::os::unix::fs::symlink("loop.md", b.root.join("loop.md")).unwrap();
    let r = b.run(&["get", "loop.md"]);
    assert_ne!(r.code(), 0);
    assert_eq!(
        r.stderr()
            .matches("Too many levels of symbolic links")
            .count(),
        1,
        "{}",
        r.stderr()
    );
}

#[test]
fn hostile_queries_never_break_search() {
    let b = Brain::example();
    b.ok(&["index"]);
    let long = "word ".repeat(2000);
    for q in ["NEAR(", "AND OR", "title:x", "a\"b", "NOT", long.as_str()] {
        let r = b.run(&["search", "--mode", "bm25", "--", q]);
        assert_eq!(r.code(), 0, "query {q:?}: {}", r.stderr());
        assert!(r.stdout().contains("(recall_id: "), "{q:?}");
    }
    // Only punctuation: nothing to search for (meaning would rank notes by noise).
    for q in ["\"", "*", ":", "(((", "^", "-", "() ;", "🐋", "→ …"] {
        for mode in ["bm25", "hybrid"] {
            let r = b.run(&["search", "--mode", mode, "--", q]);
            assert_eq!(r.code(), 2, "query {q:?}: {}", r.stderr());
            assert!(
                r.stderr().contains("has no words, only punctuation"),
                "{q:?}"
            );
            assert_eq!(r.stderr().lines().count(), 1);
        }
    }
    // Only words to leave out: nothing to rank by in any mode. The query is shown as
    // typed, in quotes it does not hold, never in Rust's debug form.
    for mode in ["bm25", "hybrid"] {
        let r = b.run(&["search", "--mode", mode, "--", "-cancellation -\"herd\""]);
        assert_eq!(r.code(), 2, "{mode}: {}", r.stderr());
        assert_eq!(
            r.stderr(),
            "error: the query '-cancellation -\"herd\"' only excludes: add a word to search for\n"
        );
    }
    let r = b.run(&["search", "--", "\u{1}"]);
    assert!(
        r.stderr()
            .starts_with("error: the query \"\\u{1}\" has no words"),
        "{}",
        r.stderr()
    );
    // A count that is no whole number, and a date bound or a window that begins with a
    // dash, each reach their own check: one line, exit 2.
    for (args, said) in [
        (
            &["search", "x", "--top", "1.5"][..],
            "expected a whole number (how many results)",
        ),
        (
            &["search", "x", "--limit", "abc"],
            "expected a whole number (how many results)",
        ),
        (
            &["search", "x", "--since", "-5d"],
            "--since: \"-5d\" is not a date",
        ),
        (
            &["stats", "--days", "-1"],
            "must be between 1 and 36500 days",
        ),
    ] {
        let r = b.run(args);
        assert_eq!(r.code(), 2, "{args:?}: {}", r.stderr());
        assert_eq!(r.stderr().lines().count(), 1, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains(said), "{args:?}: {}", r.stderr());
    }
    let r = b.run(&["search", "  "]);
    assert_eq!(r.code(), 2);
    assert_eq!(r.stderr(), "error: empty query: say what to search for\n");
    for top in ["0", "-1"] {
        let r = b.run(&["search", "x", "--top", top]);
        assert_eq!(r.code(), 2);
        assert_eq!(
            r.stderr(),
            format!("error: --top (or --limit) must be a whole number from 1 to 1000, got {top}\n")
        );
    }
}

#[test]
fn a_query_past_the_word_cap_says_once_that_words_were_left_out() {
    let b = Brain::example();
    let filler: String = (0..70).map(|i| format!("w{i} ")).collect();
    let query = format!("jitter {filler}");
    let said = "only the first 64 words of the query were searched for as keywords";
    let r = b.ok(&["search", "--mode", "bm25", &query]);
    assert_eq!(r.stderr(), format!("{said}\n"));
    assert!(r.stdout().contains("(recall_id: "), "{}", r.stdout());
    let r = b.ok(&["search", "--mode", "bm25", "--json", &query]);
    assert_eq!(r.json()["notice"], said);
    let r = b.ok(&["search", "--mode", "bm25", "--json", "jitter"]);
    assert!(r.json().get("notice").is_none(), "{}", r.stdout());
    // `-n 2`, as `head` takes it, is searched for, and the way to ask for two results said.
    let r = b.ok(&["search", "jitter", "-n", "2", "--mode", "bm25"]);
    assert!(
        r.stderr()
            .starts_with("note: \"-n 2\" was searched for as words"),
        "{}",
        r.stderr()
    );
    // `notice` carries what stderr said, this line too.
    let r = b.ok(&["search", "jitter", "-n", "2", "--mode", "bm25", "--json"]);
    assert!(
        r.json()["notice"]
            .as_str()
            .is_some_and(|n| n.starts_with("note: \"-n 2\" was searched for as words")),
        "{}",
        r.stdout()
    );
    // Words too common to search by, alone, are searched, and said to be that.
    let r = b.ok(&["search", "--mode", "bm25", "--json", "what is the"]);
    assert!(
        r.json()["notice"]
            .as_str()
            .is_some_and(|n| n.starts_with("every word of the query is too common")),
        "{}",
        r.stdout()
    );
    // A query past 10,000 bytes is cut, and says so too.
    let long = format!("{} jitter", "a".repeat(10_000));
    let r = b.ok(&["search", "--mode", "bm25", "--json", &long]);
    let notice = r.json()["notice"].as_str().unwrap_or_default().to_string();
    assert!(
        notice.contains("the query is 10007 bytes: only its first 10000"),
        "{notice}"
    );
}

#[test]
fn model_embed_refuses_empty_text_before_looking_for_a_model() {
    let b = Brain::new();
    let r = b.run(&["model", "embed", " "]);
    assert_eq!(r.code(), 2, "{}", describe(&r));
    assert_eq!(
        r.stderr(),
        "error: the text is empty: give the words to embed\n"
    );
}

#[test]
fn eval_without_any_corpus_is_one_line_and_exit_2() {
    let b = Brain::new();
    let empty = b.path("no-corpora");
    std::fs::create_dir_all(&empty).unwrap();
    // From `run/`, the default places (`../shared/corpora`, `../corpora-dev`) are inside
    // the temp dir, and empty.
    let out = b
        .command()
        .current_dir(b.path("run"))
        .env("BRAIN_CORPORA", &empty)
        .args(["eval", "--json"])
        .output()
        .unwrap();
    let r = crate::harness::Run(out);
    assert_eq!(r.code(), 2, "{}", describe(&r));
    assert_eq!(r.stdout(), "");
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "error: no evaluation corpus found in {}, ../shared/corpora, ../corpora-dev",
            empty.display()
        )),
        "{err}"
    );
    assert!(err.contains("BRAIN_CORPORA"), "{err}");
}

#[test]
fn eval_dump_into_a_missing_folder_is_one_line_and_exit_2() {
    let b = Brain::new();
    // A corpus folder is found (empty), so the run gets as far as opening the dump.
    let corpora = b.path("corpora");
    std::fs::create_dir_all(corpora.join("tldr")).unwrap();
    let dump = b.path("no-such-folder/dump.jsonl");
    let out = b
        .command()
        .args(["eval", "--set", "tldr", "--json", "--corpora"])
        .arg(&corpora)
        .arg("--dump")
        .arg(&dump)
        .output()
        .unwrap();
    let r = crate::harness::Run(out);
    assert_eq!(r.code(), 2, "{}", describe(&r));
    assert_eq!(r.stdout(), "");
    assert_eq!(
        r.stderr(),
        format!(
            "error: --dump {}: its folder does not exist; create it, or name a file in a folder that does\n",
            dump.display()
        )
    );
    // A folder: said so, exit 2.
    let out = b
        .command()
        .args(["eval", "--set", "tldr", "--json", "--corpora"])
        .arg(&corpora)
        .arg("--dump")
        .arg(&corpora)
        .output()
        .unwrap();
    let r = crate::harness::Run(out);
    assert_eq!(r.code(), 2, "{}", describe(&r));
    assert!(
        r.stderr().contains("a folder, not a file"),
        "{}",
        r.stderr()
    );
}

#[test]
fn broken_pipe_is_not_an_error() {
    let b = Brain::corpus("tldr");
    b.ok(&["index"]);
    let mut child = b
        .command()
        .args(["search", "file", "--mode", "bm25", "--top", "500"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn tldr_corpus_indexes_fully_and_finds_commands_by_name() {
    let b = Brain::corpus("tldr");
    let out = b.ok(&["index"]).stdout();
    assert!(out.starts_with("indexed 7426 notes (+7426 ~0 -0)"), "{out}");
    let j = b
        .ok(&[
            "search",
            "git commit",
            "--mode",
            "bm25",
            "--top",
            "5",
            "--json",
        ])
        .json();
    assert_eq!(
        paths(&j)[0],
        "common/git-commit.md",
        "an exact title wins: {j}"
    );
    let j = b
        .ok(&[
            "search", "tar", "--mode", "bm25", "--type", "common", "--top", "1", "--json",
        ])
        .json();
    assert_eq!(paths(&j), vec!["common/tar.md"]);
}

#[test]
fn index_lives_outside_the_notes_folder() {
    let b = Brain::example();
    b.ok(&["index"]);
    let status = b.ok(&["status", "--json"]).json();
    let index = std::path::PathBuf::from(status["index_path"].as_str().unwrap());
    assert!(index.starts_with(&b.data), "{}", index.display());
    let mut stray = Vec::new();
    for entry in walk(&b.root) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".md") {
            stray.push(name);
        }
    }
    assert!(
        stray.is_empty(),
        "brain wrote into the notes folder: {stray:?}"
    );
}

#[test]
fn config_file_and_env_layering() {
    let b = Brain::example();
    let cfg = b.tmp.path().join("config.toml");
    std::fs::write(&cfg, "exclude = [\"lore/\"]\n").unwrap();
    let out = b
        .command()
        .env("BRAIN_CONFIG", &cfg)
        .arg("index")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("indexed 19 notes"),
        "{:?}",
        out
    );
    std::fs::write(&cfg, "exclud = []\n").unwrap();
    let out = b
        .command()
        .env("BRAIN_CONFIG", &cfg)
        .arg("index")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config") && err.contains("exclud"), "{err}");
}

/// `model_dims` (Matryoshka) is checked against the model: MiniLM has no shorter widths, so
/// asking for 256 is one line and exit 2, and without the key it runs at its width.
#[test]
fn model_dims_the_model_does_not_make_is_refused_in_one_line() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    b.write_config("model_dims = 256\n");
    let r = b.run(&["search", "retry jitter", "--mode", "semantic"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("only 384-d") && err.contains("256"), "{err}");
    // `status` reads the settings too: the same line, before anything else.
    let r = b.run(&["status"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(r.stderr().contains("model_dims = 256"), "{}", r.stderr());
    b.write_config("model_dims = 384\n");
    assert!(
        !crate::harness::hit_paths(&b.json(&["search", "retry jitter", "--mode", "semantic"]))
            .is_empty()
    );
}

#[test]
fn bad_settings_are_one_line_and_exit_2() {
    let b = Brain::example();
    let refused = |what: &str, r: crate::harness::Run, needle: &str| r.assert_refused(what, needle);
    b.write_config("max_file_mb = 0\n");
    refused("max_file_mb 0", b.run(&["status"]), "max_file_mb");
    b.write_config("root = \"\"\n");
    let out = b
        .command()
        .env_remove("BRAIN_DIR")
        .arg("status")
        .output()
        .unwrap();
    refused(
        "an empty root",
        crate::harness::Run(out),
        "the brain folder (BRAIN_DIR, --dir, or root in the config file) is set to an empty path",
    );
    b.write_config("max_file_mb = 99999999999\n");
    refused(
        "max_file_mb past any machine",
        b.run(&["status"]),
        "from 1 to 1048576",
    );
    b.write_config("exclude = [\"[\"]\n");
    let r = b.run(&["index"]);
    refused("a bad exclude glob", r, "exclude pattern \"[\"");
    assert!(!b.run(&["index"]).stderr().contains("'!["));
    // Commands that walk nothing say it too (status once answered as if all were well).
    for args in [&["status"][..], &["get", "lore/sqlite-busy-timeout.md:1:1"]] {
        refused("a bad exclude glob", b.run(args), "exclude pattern \"[\"");
    }
    b.write_config("root = \n");
    refused("bad TOML", b.run(&["status"]), "config.toml:1:8");
    std::fs::remove_file(b.config_file()).unwrap();
    let long = format!("/tmp/{}", "d".repeat(300));
    refused(
        "a data folder name past the file system's",
        crate::harness::Run(
            b.command()
                .env("BRAIN_DATA_DIR", &long)
                .args(["search", "x"])
                .output()
                .unwrap(),
        ),
        "is 300 bytes, over the 255 a file system takes",
    );
    std::fs::write(b.config_file(), b"\xff\xfe").unwrap();
    refused("not UTF-8", b.run(&["status"]), "not UTF-8");
    std::fs::remove_file(b.config_file()).unwrap();
    std::fs::create_dir(b.config_file()).unwrap();
    refused("a folder", b.run(&["status"]), "config.toml is a folder");
    std::fs::remove_dir(b.config_file()).unwrap();
    let r = b
        .command()
        .env("BRAIN_MODEL", "no-such-model")
        .args(["search", "retry"])
        .output()
        .unwrap();
    refused("unknown model", crate::harness::Run(r), "unknown model");
    // Whether or not the command loads the model, and for the variables brain reads.
    for (var, value, args, says) in [
        (
            "BRAIN_MODEL",
            "no-such-model",
            &["index"][..],
            "unknown model",
        ),
        (
            "BRAIN_MODEL",
            "no-such-model",
            &["search", "retry", "--mode", "bm25"][..],
            "unknown model",
        ),
        (
            "BRAIN_DEVICE",
            "cpy",
            &["status"][..],
            "BRAIN_DEVICE=\"cpy\"",
        ),
        (
            "BRAIN_NO_DAEMON",
            "2",
            &["status"][..],
            "BRAIN_NO_DAEMON takes 1 or 0",
        ),
    ] {
        let r = b.command().env(var, value).args(args).output().unwrap();
        refused(var, crate::harness::Run(r), says);
    }
    // A command that never embeds is not stopped by the model's name.
    let r = b
        .command()
        .env("BRAIN_MODEL", "no-such-model")
        .args(["get", "lore/sqlite-busy-timeout.md:1:1"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", describe(&r));
    // An empty variable is unset, not a bad value.
    let r = b
        .command()
        .env("BRAIN_NO_DAEMON", "")
        .args(["search", "retry", "--mode", "bm25"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", describe(&r));
    // A data folder that is a file is a setting that cannot be used.
    let file = b.tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = b
        .command()
        .env("BRAIN_DATA_DIR", &file)
        .args(["status"])
        .output()
        .unwrap();
    refused(
        "data dir is a file",
        crate::harness::Run(r),
        "is a file, not a folder",
    );
    // What clap cannot read is one line too, and a typo of a flag is not a query word.
    refused("a typo", b.run(&["search", "retry", "--jsn"]), "'--json'");
    refused("no query", b.run(&["search"]), "<QUERY>");
    refused(
        "a bad number",
        b.run(&["search", "x", "--top", "1.5"]),
        "--top",
    );
    refused("no command", b.run(&["bogus"]), "bogus");
    // A title that begins with `-` is read as flags: the tip gives it back whole, quoted.
    refused(
        "a title that begins with '- '",
        b.run(&["new", "lore", "- draft title"]),
        "then -- before it: -- '- draft title'",
    );
    refused(
        "a title that begins with '-x'",
        b.run(&["new", "lore", "-x marks the spot"]),
        "then -- before it: -- '-x marks the spot'",
    );
    // Out of range is refused before anything starts (1e300 s is no Duration at all).
    for t in ["1e300", "0", "0.000001", "NaN", "inf"] {
        refused(
            &format!("--client-timeout {t}"),
            b.run(&["serve", "--client-timeout", t]),
            "--client-timeout must be between",
        );
    }
}

#[test]
fn a_model_folder_with_wrong_files_is_refused_not_taken_for_no_model() {
    let b = Brain::example();
    b.import_model();
    // A copy cut short (a full disk, an interrupted copy) is named, not searched around.
    let weights = b.models_dir().join("all-minilm-l6-v2/model.safetensors");
    let head = std::fs::read(&weights).unwrap()[..1000].to_vec();
    std::fs::write(&weights, head).unwrap();
    let r = b.run(&["search", "retry storms", "--no-daemon"]);
    assert_eq!(r.code(), 2, "{}", describe(&r));
    assert!(r.stderr().contains("model.safetensors"), "{}", r.stderr());
}

/// An answer from an index that holds no notes says so, instead of a confident "nothing
/// found" or "new: nothing like it".
#[test]
fn an_empty_index_says_so_instead_of_finding_nothing() {
    let b = Brain::example();
    let fresh = b.tmp.path().join("fresh-data");
    let run = |args: &[&str]| {
        let out = b
            .command()
            .env("BRAIN_DATA_DIR", &fresh)
            .args(args)
            .output()
            .unwrap();
        let r = crate::harness::Run(out);
        assert_eq!(r.code(), 0, "{args:?}: {}", r.stderr());
        r.json()
    };
    let said = "the index holds no notes: run 'brain index'";
    let j = run(&["search", "retry", "--no-sync", "--json", "--no-daemon"]);
    assert!(
        j["notice"].as_str().unwrap_or_default().contains(said),
        "{j}"
    );
    let j = run(&[
        "similar",
        "--text",
        "Retries need jitter",
        "--no-sync",
        "--json",
        "--no-daemon",
    ]);
    assert_eq!(j["verdict"], "new");
    assert!(
        j["notice"].as_str().unwrap_or_default().contains(said),
        "{j}"
    );
    let j = run(&["search", "retry", "--json", "--no-daemon"]);
    assert!(!j.to_string().contains(said), "{j}");
    // A folder with no note at all: `brain index` would not help, notes would.
    let empty = b.tmp.path().join("empty-brain");
    std::fs::create_dir_all(empty.join(".obsidian")).unwrap();
    std::fs::write(empty.join(".obsidian/x.md"), "hidden").unwrap();
    let out = b
        .command()
        .env("BRAIN_DIR", &empty)
        .env("BRAIN_DATA_DIR", b.tmp.path().join("empty-data"))
        .args(["search", "retry", "--json", "--no-daemon"])
        .output()
        .unwrap();
    let r = crate::harness::Run(out);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let notice = r.json()["notice"].as_str().unwrap_or_default().to_string();
    assert!(
        notice.contains("holds no notes yet (no .md files)"),
        "{notice}"
    );
    assert!(!notice.contains("brain index"), "{notice}");
    // Only files the default exclude patterns skip (README.md, raw/): `brain index` and a
    // search both say so, rather than "indexed 0 notes" and "run brain index".
    let skipped = b.tmp.path().join("skipped-brain");
    std::fs::create_dir_all(skipped.join("raw")).unwrap();
    std::fs::write(skipped.join("README.md"), "# About\n").unwrap();
    std::fs::write(skipped.join("raw/clip.md"), "# Clip\n").unwrap();
    let in_skipped = |args: &[&str]| {
        let out = b
            .command()
            .env("BRAIN_DIR", &skipped)
            .env("BRAIN_DATA_DIR", b.tmp.path().join("skipped-data"))
            .args(args)
            .output()
            .unwrap();
        crate::harness::Run(out)
    };
    let r = in_skipped(&["index"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().starts_with("indexed 0 notes"), "{}", r.stdout());
    assert!(
        r.stderr().contains("skipped, by the exclude patterns") && r.stderr().contains("raw/"),
        "{}",
        r.stderr()
    );
    let r = in_skipped(&["search", "clip", "--json", "--no-daemon"]);
    let notice = r.json()["notice"].as_str().unwrap_or_default().to_string();
    assert!(
        notice.contains("skipped, by the exclude patterns"),
        "{notice}"
    );
    assert!(!notice.contains("run 'brain index'"), "{notice}");
}

/// A large note's keyword hit shows the passage holding the word, at its line: FTS5's
/// snippet of a note that size takes time growing with the square of its matches.
#[test]
fn a_large_notes_keyword_hit_shows_the_passage_with_the_word() {
    let b = Brain::example();
    let mut text = String::from("# Big log\n\n");
    for i in 0..6000 {
        text.push_str(&format!("line {i} alpha beta gamma delta\n\n"));
    }
    text.push_str("the needleword sits here\n");
    assert!(text.len() > 32 * 1024);
    b.write("lore/big-log.md", &text);
    b.ok(&["index"]);
    let j = b
        .ok(&["search", "needleword", "--mode", "bm25", "--json"])
        .json();
    let hit = &j["results"][0];
    assert_eq!(hit["path"], "lore/big-log.md", "{j}");
    assert!(
        hit["snippet"].as_str().unwrap().contains("«needleword»"),
        "{hit}"
    );
    let line = hit["line"].as_u64().unwrap() as usize;
    let at: Vec<&str> = text.lines().skip(line - 1).take(20).collect();
    assert!(
        at.iter().any(|l| l.contains("needleword")),
        "line {line}: {at:?}"
    );
    // A phrase is found at its own line, not at the first line holding one of its words;
    // and words, at the first line holding them all.
    for (query, want) in [
        ("\"line 5000 alpha\"", "line 5000 alpha"),
        ("needleword sits", "the needleword sits here"),
    ] {
        let j = b.ok(&["search", query, "--mode", "bm25", "--json"]).json();
        let hits = j["results"].as_array().unwrap();
        let big = hits
            .iter()
            .find(|h| h["path"] == "lore/big-log.md")
            .unwrap();
        let line = big["line"].as_u64().unwrap() as usize;
        assert!(
            text.lines().nth(line - 1).unwrap().contains(want),
            "{query}: line {line}"
        );
    }
}

/// Lowering `max_file_mb` drops the notes already indexed over it at the next sync, as
/// it skips new ones, saying the size.
#[test]
fn a_lowered_size_limit_drops_notes_indexed_under_the_old_one() {
    let b = Brain::example();
    b.write(
        "lore/big.md",
        format!("# Big\n\n{}", "word ".repeat(300_000)),
    );
    b.ok(&["index"]);
    let hits = |b: &Brain| b.ok(&["search", "big", "--mode", "bm25", "--json"]).json();
    assert!(hits(&b).to_string().contains("lore/big.md"));
    b.write_config("max_file_mb = 1\n");
    let r = b.ok(&["index"]);
    assert!(
        r.stderr()
            .contains("lore/big.md: skipped: 1.43 MiB is over the 1 MiB limit"),
        "{}",
        r.stderr()
    );
    assert!(!hits(&b).to_string().contains("lore/big.md"));
}

/// `C++`, `C#` and `F#` are names of their own, not the letter: a search for one finds its
/// notes, not notes on C or `bash -c`, and shows the name as written.
#[test]
fn names_spelled_with_symbols_are_searched_as_themselves() {
    let b = Brain::example();
    b.write(
        "lore/cpp-move.md",
        "# Move semantics\n\nIn C++17, std::move only casts to an rvalue reference.\n",
    );
    b.write(
        "lore/c-pointers.md",
        "# Pointers in C\n\nC has no references: pass a pointer, as C does everywhere.\n",
    );
    b.write(
        "lore/cs-async.md",
        "# Async in C#\n\nIn C# an await yields to the caller.\n",
    );
    b.write(
        "lore/bash-c.md",
        "# Run a string\n\nbash -c 'cmd' runs a string; so does sh -c.\n",
    );
    b.ok(&["index"]);
    let found = |q: &str| paths(&b.json(&["search", q, "--mode", "bm25", "--no-sync"]));
    assert_eq!(found("C++"), ["lore/cpp-move.md"]);
    assert_eq!(found("c#"), ["lore/cs-async.md"]);
    assert_eq!(found("C++17"), ["lore/cpp-move.md"]);
    assert!(!found("C").contains(&"lore/cpp-move.md".to_string()));
    let j = b.json(&["search", "C#", "--mode", "bm25", "--no-sync"]);
    let snippet = j["results"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("«C#»"), "{snippet:?}");
    let shown = b.ok(&["get", "lore/cpp-move.md"]).stdout();
    assert!(shown.contains("In C++17, std::move"), "{shown}");
}

/// Chinese, Japanese and Korean write words without spaces: a word inside a run is found
/// (`代理` in `如何配置代理服务器`), as a phrase (its characters side by side), and what is
/// shown is the note's own text at its own line.
#[test]
fn words_inside_cjk_text_are_found_and_shown_as_written() {
    let b = Brain::example();
    b.write(
        "lore/proxy-zh.md",
        "---\ntitle: 代理设置\ntags: [网络]\n---\n\n# 配置说明\n\n第一段没有关键词。\n\n如何配置代理服务器，让终端走代理。\n",
    );
    b.write(
        "lore/cache-ja.md",
        "# キャッシュの削除\n\nブラウザのキャッシュをクリアする方法。Rustのビルドも速くなる。\n",
    );
    b.write(
        "lore/server-ko.md",
        "# 서버 설정\n\n서버를 다시 시작하는 방법.\n",
    );
    b.ok(&["index"]);
    let top = |q: &str| -> serde_json::Value {
        let j = b.json(&["search", q, "--mode", "bm25", "--no-sync"]);
        j["results"][0].clone()
    };
    let hit = top("代理");
    assert_eq!(hit["path"], "lore/proxy-zh.md", "{hit}");
    let snippet = hit["snippet"].as_str().unwrap();
    assert!(snippet.contains("«代理»服务器"), "{snippet}");
    assert!(!snippet.contains('\u{200B}'), "{snippet:?}");
    assert_eq!(hit["line"], 10, "{hit}");
    assert_eq!(hit["title"], "代理设置");
    for (q, path) in [
        ("服务器", "lore/proxy-zh.md"),
        ("キャッシュ", "lore/cache-ja.md"),
        ("クリア", "lore/cache-ja.md"),
        ("Rustの", "lore/cache-ja.md"),
        ("서버", "lore/server-ko.md"),
        ("网络", "lore/proxy-zh.md"),
    ] {
        assert_eq!(top(q)["path"], path, "{q}");
    }
    // A question typed as one run finds the note sharing most of it.
    assert_eq!(top("怎么配置代理服务器")["path"], "lore/proxy-zh.md");
    // A phrase: the characters side by side, not each anywhere in the note.
    let j = b.json(&["search", "理代", "--mode", "bm25", "--no-sync"]);
    assert!(paths(&j).is_empty(), "{j}");
    // The exact title still leads, and the body reads back unchanged.
    assert_eq!(top("代理设置")["path"], "lore/proxy-zh.md");
    let shown = b.ok(&["get", "lore/proxy-zh.md:10:1"]).stdout();
    assert!(
        shown.contains("如何配置代理服务器，让终端走代理。"),
        "{shown}"
    );
}

#[test]
fn completions_are_printed_for_each_shell_and_bash_completes_with_them() {
    let b = Brain::example();
    // They need nothing of the brain's: a config that does not load does not stop them.
    b.write_config("root = \n");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = b.ok(&["completions", shell]).stdout();
        assert!(
            out.contains("similar") && out.contains("no-sync") && out.contains("semantic"),
            "{shell}: {out}"
        );
    }
    b.run(&["completions", "tcsh"])
        .assert_refused("an unknown shell", "possible values: bash");

    // Sourced by bash, the script completes subcommands, options and --mode's names.
    let script = b.tmp.path().join("brain.bash");
    std::fs::write(&script, b.ok(&["completions", "bash"]).stdout()).unwrap();
    let probe = format!(
        r#"source '{}'
t() {{ COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}
     _brain brain "${{COMP_WORDS[-1]}}" "${{COMP_WORDS[-2]}}"; echo "${{COMPREPLY[*]}}"; }}
t brain se
t brain search --mode ''
t brain similar --t"#,
        script.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &probe])
        .output()
        .expect("run bash");
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        ["search serve", "hybrid bm25 semantic", "--text --top"],
        "{}",
        describe(&out)
    );
}

#[test]
fn colour_is_for_a_terminal_or_when_asked_and_never_changes_piped_output() {
    let b = Brain::example();
    b.ok(&["index"]);
    let search = [
        "search",
        "feature flag cleanup",
        "--mode",
        "bm25",
        "--top",
        "2",
    ];
    let piped = b.ok(&search).stdout();
    assert!(piped.contains('«') && !piped.contains('\x1b'), "{piped}");
    // Each search is logged under its own recall id.
    let id = regex::Regex::new(r"recall_id: \d+").unwrap();
    let piped = id.replace(&piped, "recall_id: N").into_owned();
    let never = [&["--color", "never"][..], &search[..]].concat();
    assert_eq!(id.replace(&b.ok(&never).stdout(), "recall_id: N"), piped);
    let always = [&["--color", "always"][..], &search[..]].concat();
    let coloured = b.ok(&always).stdout();
    assert!(
        coloured.contains("\x1b[35mlore/flag-cleanup-test-rework.md\x1b[0m")
            && coloured.contains("\x1b[31m")
            && !coloured.contains('«'),
        "{coloured}"
    );
    // Without its escapes, the coloured text is the piped one, marks aside.
    let plain = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let plain = plain.replace_all(&coloured, "");
    assert_eq!(
        id.replace(&plain, "recall_id: N"),
        piped.replace(['«', '»'], "")
    );
    // CLICOLOR_FORCE forces colour into a pipe, except as 0 (the convention's "not forced").
    for (force, coloured) in [("1", true), ("0", false)] {
        let r = b
            .command()
            .env("CLICOLOR_FORCE", force)
            .args(search)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&r.stdout).contains('\x1b'),
            coloured,
            "CLICOLOR_FORCE={force}"
        );
    }
    // The flag is what the person asked for this once: it wins over NO_COLOR.
    let r = b
        .command()
        .env("NO_COLOR", "1")
        .args(&always)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&r.stdout).contains('\x1b'));
    let got = b
        .ok(&[
            "--color",
            "always",
            "get",
            "lore/flag-cleanup-test-rework.md:1:2",
        ])
        .stdout();
    assert!(got.contains("\x1b[32m   1\x1b[0m  "), "{got}");
    // After `search`, `--color` is a flag to search for, as `--release` is: not an option.
    let r = b.ok(&["search", "grep", "--color", "--mode", "bm25", "--json"]);
    assert_eq!(r.json()["query"], "grep --color", "{}", r.stdout());
    b.run(&["--color", "sometimes", "search", "x"])
        .assert_refused("an unknown --color", "possible values: auto, always, never");
}

#[test]
fn a_notes_own_guillemets_are_not_marks() {
    let b = Brain::example();
    b.write(
        "lore/bonjour.md",
        "# Greeting\n\nIntro.\n\nLe serveur a dit « bonjour » puis le «cache» a expiré.\n",
    );
    let j = b.json(&["search", "serveur", "--mode", "bm25"]);
    let hit = &j["results"][0];
    assert_eq!(hit["path"], "lore/bonjour.md", "{j}");
    // Only the word searched for is marked; the note's quotation is shown as ‹ ›.
    assert_eq!(
        hit["snippet"], "Intro. Le «serveur» a dit ‹ bonjour › puis le ‹cache› a expiré.",
        "{j}"
    );
    assert_eq!(hit["line"], 5, "{j}");
    // Searched for, the word inside them is the mark.
    let j = b.json(&["search", "cache expiré", "--mode", "bm25"]);
    let hit = crate::harness::hit_of(&j, "lore/bonjour.md");
    let snippet = hit["snippet"].as_str().unwrap_or_default();
    assert!(
        snippet.contains("‹«cache»›") && snippet.contains("«expiré»"),
        "{snippet}"
    );
}

#[test]
fn brain_config_starting_with_a_tilde_is_under_home() {
    let b = Brain::example();
    // Read (its bad value refused) rather than "does not exist", as BRAIN_DIR's `~` is.
    std::fs::write(b.home.join("c.toml"), "max_file_mb = 0\n").unwrap();
    let r = Run(b
        .command()
        .env("BRAIN_CONFIG", "~/c.toml")
        .args(["status"])
        .output()
        .unwrap());
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(r.stderr().contains("max_file_mb"), "{}", r.stderr());
}

/// The index holds every note's text and every search made: its folder is closed to other
/// users whatever the umask (it was 0755 under the usual 022, the file 0644, and a note
/// kept 0600 in a 0700 folder could be read from it), and so is the logs folder. A folder
/// an older brain left open is closed when the index is next opened.
#[test]
fn the_index_and_log_folders_are_closed_to_other_users() {
    use std::os::unix::fs::PermissionsExt;
    let b = Brain::example();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let mut index = b.command();
    index.arg("index");
    // SAFETY: umask is async-signal-safe and the closure touches nothing else.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut index, || {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = index.output().unwrap();
    assert!(out.status.success());
    let index = b.ok(&["status", "--json"]).json()["index_path"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = std::path::Path::new(&index).parent().unwrap().to_path_buf();
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    b.ok(&["search", "retry", "--mode", "bm25"]);
    assert_eq!(mode(&dir), 0o700, "closed again");
}
