//! The brain as a knowledge base, through the binary: `brain check` finds the deliberate
//! problems of `examples/brain`, `brain index-md` (dry run, then `--write`, byte-stable),
//! `brain new` (template, dates, refusals, the duplicate check), `brain links`, and
//! `--where` filters.

use serde_json::{json, Value};

use crate::harness::{describe, paths, Brain};

/// `(kind, path, line)` of every problem in a `brain check --json` answer.
fn problems(report: &Value) -> Vec<(String, String, Option<u64>)> {
    report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_string(),
                p["path"].as_str().unwrap().to_string(),
                p["line"].as_u64(),
            )
        })
        .collect()
}

/// The message of `check --json`'s problem about `path` ("" when there is none).
fn message_about(report: &Value, path: &str) -> String {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == path)
        .map(|p| p["message"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

fn check_json(b: &Brain) -> (i32, Value) {
    let r = b.run(&["check", "--json"]);
    (r.code(), r.json())
}

#[test]
fn check_finds_the_deliberate_problems_of_the_example_brain() {
    let b = Brain::example();
    let (code, report) = check_json(&b);
    assert_eq!(code, 1, "problems found: exit 1");
    assert_eq!(report["notes"], 34);
    assert_eq!(report["types"], json!(["idea", "lore", "research-link"]));
    let found = problems(&report);
    let p = |k: &str, path: &str, line: Option<u64>| (k.to_string(), path.to_string(), line);
    for want in [
        p(
            "broken_link",
            "lore/retry-jitter-thundering-herd.md",
            Some(47),
        ),
        p("short_link", "idea/resurface-stale-lore.md", Some(36)),
        p(
            "missing_field",
            "lore/unicode-normalization-filenames.md",
            Some(1),
        ),
        // A field's problem at the field's line; a missing one at the frontmatter's start.
        p("bad_value", "idea/pr-review-checklist-bot.md", Some(6)),
        p("bad_value", "lore/flaky-tests-quarantine.md", Some(8)),
        p(
            "dates_out_of_order",
            "lore/unicode-normalization-filenames.md",
            Some(6),
        ),
        p("stale", "idea/postmortem-draft-from-timeline.md", None),
        p("index_outdated", "research-link/INDEX.md", None),
    ] {
        assert!(found.contains(&want), "{want:?} not found in {found:?}");
    }
    // Nothing else, but entries that go stale as the calendar moves on.
    let others: Vec<_> = found.iter().filter(|(k, ..)| k != "stale").collect();
    assert_eq!(others.len(), 7, "{found:?}");
    assert_eq!(report["counts"]["bad_value"], 2);

    let human = b.run(&["check"]).stdout();
    for line in [
        "broken links (1)",
        "  lore/retry-jitter-thundering-herd.md:47: [[lore/circuit-breakers]]: no note lore/circuit-breakers.md",
        "  idea/resurface-stale-lore.md:36: [[recall-from-vocabulary-drift]]: write [[idea/recall-from-vocabulary-drift]]",
        "phase: \"Maybe\" is not one of Exploring, Decided, In-Progress, Done, Parked",
        "in 34 notes (3 typed: idea, lore, research-link)",
    ] {
        assert!(human.contains(line), "{line:?} missing:\n{human}");
    }
}

#[test]
fn index_md_shows_a_diff_writes_only_when_asked_and_is_byte_stable() {
    let b = Brain::example();
    let before = std::fs::read(b.root.join("research-link/INDEX.md")).unwrap();
    let dry = b.ok(&["index-md"]).stdout();
    assert!(dry.contains("+++ b/research-link/INDEX.md"), "{dry}");
    assert!(
        dry.contains("+- [[research-link/tail-at-scale]] The Tail at Scale"),
        "{dry}"
    );
    assert!(dry.contains("1 of 3 INDEX.md files would change"), "{dry}");
    assert_eq!(
        std::fs::read(b.root.join("research-link/INDEX.md")).unwrap(),
        before,
        "a dry run wrote"
    );

    let wrote = b.json(&["index-md", "--write"]);
    assert_eq!(
        wrote["files"],
        json!([
            {"path": "idea/INDEX.md", "changed": false, "written": false},
            {"path": "lore/INDEX.md", "changed": false, "written": false},
            {"path": "research-link/INDEX.md", "changed": true, "written": true},
        ])
    );
    let after = std::fs::read(b.root.join("research-link/INDEX.md")).unwrap();
    assert_ne!(after, before);
    assert!(b
        .ok(&["index-md"])
        .stdout()
        .contains("3 INDEX.md files up to date"));
    b.ok(&["index-md", "--write"]);
    assert_eq!(
        std::fs::read(b.root.join("research-link/INDEX.md")).unwrap(),
        after,
        "not byte-stable"
    );
    let (_, report) = check_json(&b);
    assert!(
        !problems(&report)
            .iter()
            .any(|(k, ..)| k == "index_outdated"),
        "{report}"
    );
    // No temp file is left next to what was written.
    let leftovers: Vec<_> = std::fs::read_dir(b.root.join("research-link"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn index_md_write_writes_every_type_it_can_and_names_the_one_it_cannot() {
    let b = Brain::example();
    // A symlinked INDEX.md is written where it points; one that points into a folder that
    // is gone cannot be written (as root, too, unlike a read-only folder).
    let idea = b.root.join("idea/INDEX.md");
    std::fs::remove_file(&idea).unwrap();
    std::os::unix::fs::symlink(b.root.join("../gone/INDEX.md"), &idea).unwrap();
    b.write("lore/INDEX.md", "stale\n");
    b.ok(&["index"]);
    let run = b.run(&["index-md", "--write"]);
    assert_eq!(run.code(), 1, "{}", run.stderr());
    assert!(
        run.stdout().contains("wrote lore/INDEX.md"),
        "{}",
        run.stdout()
    );
    let err = run.stderr();
    assert!(err.contains("idea/INDEX.md"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(std::fs::read_to_string(b.root.join("lore/INDEX.md"))
        .unwrap()
        .starts_with("# lore"));
    let run = b.run(&["index-md", "--write", "--json"]);
    assert_eq!(run.code(), 1, "{}", run.stderr());
    let files = run.json()["files"].clone();
    assert_eq!(files[0]["path"], "idea/INDEX.md", "{files}");
    assert_eq!(files[0]["written"], false, "{files}");
    assert!(
        files[0]["error"]
            .as_str()
            .unwrap()
            .contains("idea/INDEX.md"),
        "{files}"
    );
    assert_eq!(files[1]["changed"], false, "lore was written: {files}");
    // check does not call it missing (a --write would not make it): it says what to do.
    let (_, report) = check_json(&b);
    let said = message_about(&report, "idea/INDEX.md");
    assert!(
        said.starts_with("not a file that can be read: move it away"),
        "{report}"
    );
    // A pipe in its place is what `index-md --write` replaces: check says so.
    let lore = b.root.join("lore/INDEX.md");
    std::fs::remove_file(&lore).unwrap();
    crate::harness::mkfifo(&lore);
    let (_, report) = check_json(&b);
    let said = message_about(&report, "lore/INDEX.md");
    assert_eq!(
        said, "not a regular file (a pipe or a device): brain index-md --write replaces it",
        "{report}"
    );
    b.run(&["index-md", "--write"]);
    assert!(std::fs::metadata(&lore).unwrap().is_file());
    // A file it cannot read (here not UTF-8) is one it replaces too, and no pipe.
    std::fs::write(&lore, b"\xff\xfe bytes").unwrap();
    let (_, report) = check_json(&b);
    assert_eq!(
        message_about(&report, "lore/INDEX.md"),
        "cannot be read (no permission, not UTF-8, or too large): brain index-md --write replaces it",
        "{report}"
    );
}

#[test]
fn new_writes_an_entry_from_its_template_and_refuses_what_it_should() {
    let b = Brain::example();
    let r = b.ok(&["new", "lore", "Connection pools need a ceiling", "--json"]);
    let made = r.json();
    assert_eq!(made["path"], "lore/connection-pools-need-a-ceiling.md");
    assert_eq!(made["link"], "[[lore/connection-pools-need-a-ceiling]]");
    assert!(
        r.stderr().contains("checked for duplicates"),
        "{}",
        r.stderr()
    );
    let text =
        std::fs::read_to_string(b.root.join("lore/connection-pools-need-a-ceiling.md")).unwrap();
    for line in [
        "type: lore\n",
        "title: Connection pools need a ceiling\n",
        "category: lesson\n",
        "# Connection pools need a ceiling",
        "## The lesson",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    // Today's date in both fields, and the new entry is searchable and clean.
    let created = text
        .lines()
        .find_map(|l| l.strip_prefix("created: "))
        .unwrap()
        .to_string();
    assert_eq!(
        text.lines().find_map(|l| l.strip_prefix("updated: ")),
        Some(created.as_str())
    );
    let found = b.json(&[
        "search",
        "connection pools ceiling",
        "--mode",
        "bm25",
        "--since",
        &created,
    ]);
    assert_eq!(paths(&found)[0], "lore/connection-pools-need-a-ceiling.md");
    let (_, report) = check_json(&b);
    let mine: Vec<_> = problems(&report)
        .into_iter()
        .filter(|(k, p, _)| p.contains("connection-pools") && k != "index_outdated")
        .collect();
    assert!(mine.is_empty(), "{mine:?}");

    let folder = b.json(&["new", "idea", "Context", "assistant", "--folder"]);
    assert_eq!(
        folder["path"],
        "idea/context-assistant/context-assistant.md"
    );
    assert!(b
        .root
        .join("idea/context-assistant/context-assistant.md")
        .is_file());
    // Always there, as every field the README lists: empty when nothing is left to fill.
    assert_eq!(folder["to_fill"], json!([]), "{folder}");
    // A required field without a default is written empty and named, so that the entry
    // is finished before `brain check` finds it missing; a type in capitals is the type.
    let r = b.ok(&["new", "RESEARCH-LINK", "Sparse retrieval", "--json"]);
    assert_eq!(r.json()["path"], "research-link/sparse-retrieval.md");
    assert_eq!(r.json()["to_fill"], json!(["url"]));
    assert!(
        r.stderr()
            .contains("fill in: url (required by research-link/SCHEMA.md, written empty)"),
        "{}",
        r.stderr()
    );

    let refusals = [
        (
            &["new", "lore", "connection POOLS need a ceiling"][..],
            "lore/connection-pools-need-a-ceiling.md already exists",
        ),
        (
            &["new", "lroe", "x"],
            "unknown type \"lroe\": the types are idea, lore, research-link",
        ),
        (&["new", "lore", "?!?"], "makes an empty file name"),
        (&["new", "lore", "   "], "the title is empty"),
    ];
    for (args, want) in refusals {
        let r = b.run(args);
        assert_eq!(r.code(), 2, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains(want), "{args:?}: {}", r.stderr());
        assert_eq!(
            r.stderr()
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count(),
            1
        );
    }
}

#[test]
fn new_checks_for_a_duplicate_first_and_writes_it_only_when_forced() {
    let b = Brain::example();
    let title = "\"database is locked\" means you forgot busy_timeout";
    let r = b.run(&["new", "lore", title]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    assert!(
        r.stderr().contains("not written: the brain has it already"),
        "{}",
        r.stderr()
    );
    assert!(
        r.stderr().contains("lore/sqlite-busy-timeout.md"),
        "{}",
        r.stderr()
    );
    let slug = "lore/database-is-locked-means-you-forgot-busy-timeout.md";
    assert!(!b.root.join(slug).exists(), "written despite the duplicate");
    // Asked for JSON, a refusal is JSON too: what was not written, and why.
    let r = b.run(&["new", "lore", title, "--json"]);
    assert_eq!(r.code(), 1);
    let refused = r.json();
    assert_eq!(refused["written"], false, "{refused}");
    assert_eq!(refused["path"], slug, "{refused}");
    assert_eq!(
        refused["duplicates"][0]["path"], "lore/sqlite-busy-timeout.md",
        "{refused}"
    );
    // An entry of another type is not a duplicate of it: written, the lore note to link.
    let r = b.ok(&["new", "idea", title, "--json"]);
    assert_eq!(r.json()["written"], true);
    // What stderr says to link from it is in the JSON too.
    assert_eq!(
        r.json()["to_link"][0]["link"],
        "lore/sqlite-busy-timeout",
        "{}",
        r.stdout()
    );
    assert!(
        r.stderr().contains("[[lore/sqlite-busy-timeout]]"),
        "{}",
        r.stderr()
    );
    let r = b.ok(&["new", "lore", title, "--force"]);
    let err = r.stderr();
    assert!(err.contains("written anyway (--force)"), "{err}");
    // The alike note is offered to link, and nothing says there was none.
    assert!(
        err.contains("to link from it:\n  [[lore/sqlite-busy-timeout]]") && !err.contains("none"),
        "{err}"
    );
    assert!(b.root.join(slug).is_file());

    // Entries of a series (a date, a number apart) are new entries, not duplicates.
    for title in [
        "Standup 2026-12-03",
        "Standup 2026-12-04",
        "Q3 planning review",
        "Q4 planning review",
    ] {
        let r = b.run(&["new", "lore", title]);
        assert_eq!(r.code(), 0, "{title}: {}", r.stderr());
    }
}

#[test]
fn of_two_new_entries_of_one_title_started_at_once_one_writes_and_the_other_is_refused_exit_2() {
    // The loser's duplicate check can find the winner's entry, just written: it once said
    // "the brain has it already ... pass --force" (exit 1), and --force then failed on the
    // file now there. A race, so several rounds: without the fix about one in seven lost
    // that way.
    let b = Brain::example();
    for round in 0..12 {
        let title = format!("Race round {round}");
        let spawn = || {
            b.command()
                .args(["new", "lore", &title])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (one, two) = (spawn(), spawn());
        let outs = [
            one.wait_with_output().unwrap(),
            two.wait_with_output().unwrap(),
        ];
        let codes: Vec<i32> = outs.iter().map(|o| o.status.code().unwrap_or(-1)).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 2], "round {round}: {codes:?} {outs:?}");
        let refused = outs.iter().find(|o| o.status.code() == Some(2)).unwrap();
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(
            err.contains(&format!("lore/race-round-{round}.md already exists")),
            "{err}"
        );
    }
}

#[test]
fn a_broken_schema_is_reported_with_its_line_and_stops_only_its_own_type() {
    let b = Brain::example();
    b.write(
        "idea/SCHEMA.md",
        "---\ntype: idea\nfields:\n  phase: {values: [a, b}\n---\n",
    );
    let (code, report) = check_json(&b);
    assert_eq!(code, 1);
    let schema: Vec<_> = problems(&report)
        .into_iter()
        .filter(|(k, ..)| k == "schema")
        .collect();
    assert_eq!(schema.len(), 1, "{report}");
    assert_eq!(schema[0].1, "idea/SCHEMA.md");
    assert!(schema[0].2.is_some(), "a YAML error has a line: {report}");
    assert_eq!(report["types"], json!(["lore", "research-link"]));
    let r = b.run(&["new", "idea", "Anything"]);
    assert_eq!(r.code(), 2);
    assert!(r.stderr().contains("idea/SCHEMA.md:"), "{}", r.stderr());
    assert!(!b.root.join("idea/anything.md").exists());
    b.ok(&["new", "lore", "A lesson about nothing in particular"]);
    // index-md makes the other types' INDEX.md and says which it could not make.
    b.write("lore/INDEX.md", "stale\n");
    let run = b.run(&["index-md", "--write"]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    assert!(
        run.stdout().contains("wrote lore/INDEX.md"),
        "{}",
        run.stdout()
    );
    let err = run.stderr();
    assert!(
        err.starts_with("error: ") && err.contains("idea/SCHEMA.md:"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let run = b.run(&["index-md", "--json"]);
    assert_eq!(run.code(), 1);
    let files = run.json()["files"].clone();
    let idea: Vec<_> = files
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == "idea/INDEX.md")
        .collect();
    assert_eq!(idea.len(), 1, "{files}");
    assert!(
        idea[0]["error"]
            .as_str()
            .unwrap()
            .contains("idea/SCHEMA.md"),
        "{files}"
    );
    // With every schema broken, check does not say there are none.
    for t in ["lore", "research-link"] {
        b.write(&format!("{t}/SCHEMA.md"), "prose only\n");
    }
    let r = b.run(&["check"]);
    assert!(
        r.stdout()
            .starts_with("no usable type schemas (the broken ones are listed below)"),
        "{}",
        r.stdout()
    );
}

#[test]
fn new_refuses_a_type_whose_schema_cannot_be_read_naming_it_and_writes_nothing() {
    let b = Brain::example();
    let schema = b.write("idea/SCHEMA.md", b"---\ntype: idea\n---\n\xff not UTF-8\n");
    let r = b.run(&["new", "idea", "Anything"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: cannot read {} (", schema.display())),
        "{err}"
    );
    assert!(!b.root.join("idea/anything.md").exists());
}

/// A `SCHEMA.md` or `INDEX.md` that is a link out of the brain (a shared brain can carry
/// one: git keeps links) is refused as `get` refuses a note so linked: `check` showed the
/// outside file's values, `new` copied its template into the brain, and `index-md`
/// printed it whole.
#[test]
fn schema_and_index_files_linked_out_of_the_brain_are_not_read() {
    let b = Brain::example();
    let outside = b.path("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("schema.md"),
        "---\ntemplate: \"OUTSIDE-SECRET\"\nfields:\n  x:\n    values: OUTSIDE-VALUE\n---\n",
    )
    .unwrap();
    std::fs::write(outside.join("index.md"), "OUTSIDE-INDEX line\n").unwrap();
    std::fs::remove_file(b.root.join("idea/SCHEMA.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("schema.md"), b.root.join("idea/SCHEMA.md")).unwrap();
    let _ = std::fs::remove_file(b.root.join("lore/INDEX.md"));
    std::os::unix::fs::symlink(outside.join("index.md"), b.root.join("lore/INDEX.md")).unwrap();

    let r = b.run(&["check"]);
    assert!(!r.stdout().contains("OUTSIDE"), "{}", r.stdout());
    assert!(
        r.stdout()
            .contains("idea/SCHEMA.md: cannot be read: a link to ")
            && r.stdout()
                .contains("outside the brain folder, where brain reads nothing"),
        "{}",
        r.stdout()
    );
    let r = b.run(&["new", "idea", "Anything"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("idea/SCHEMA.md: a link to ") && r.stderr().lines().count() == 1,
        "{}",
        r.stderr()
    );
    assert!(!b.root.join("idea/anything.md").exists());
    let r = b.run(&["index-md"]);
    assert!(
        !r.stdout().contains("OUTSIDE") && !r.stderr().contains("OUTSIDE"),
        "{}{}",
        r.stdout(),
        r.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("index.md")).unwrap(),
        "OUTSIDE-INDEX line\n",
        "nothing written there"
    );
}

/// What `index-md` shows of an old INDEX.md and of the notes' values cannot drive the
/// terminal (an OSC 52 line in a shared INDEX.md wrote the clipboard), nor can its error
/// lines; `stats` shows a type filter an assistant sent the same way.
#[test]
fn index_md_and_stats_print_no_terminal_escapes() {
    let b = Brain::example();
    b.write(
        "lore/INDEX.md",
        "# lore\n\nold \x1b]52;c;cm0gLXJmIH4K\x07 line\n",
    );
    let r = b.run(&["--color", "never", "index-md"]);
    assert!(r.stdout().contains("-old \u{FFFD}]52;c;"), "{}", r.stdout());
    assert!(!r.stdout().contains('\x1b') && !r.stdout().contains('\x07'));
    b.write("t\x1b[2Jx/SCHEMA.md", "---\ntype: other\n---\n");
    let r = b.run(&["--color", "never", "index-md"]);
    assert!(r.stderr().contains("t\u{FFFD}[2Jx"), "{}", r.stderr());
    assert!(!r.stderr().contains('\x1b'), "{}", r.stderr());
    b.ok(&[
        "search",
        "retry",
        "--type",
        "lore\x1b]0;OWNED\x07",
        "--mode",
        "bm25",
    ]);
    let out = b.ok(&["stats"]).stdout();
    assert!(
        out.contains("searches per type filter: lore\u{FFFD}]0;owned\u{FFFD}"),
        "{out}"
    );
}

/// A reader that stops early (`brain check | head -1`) neither turns `check`'s finding
/// into exit 0 nor stops `index-md --write` half-way: the output goes nowhere, the work
/// and the status stand.
#[test]
fn a_closed_stdout_keeps_the_exit_status_and_the_work() {
    let b = Brain::example();
    let closed = |args: &[&str]| {
        let mut child = b
            .command()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    };
    let out = closed(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    for index in ["lore/INDEX.md", "idea/INDEX.md"] {
        let _ = std::fs::remove_file(b.root.join(index));
    }
    let out = closed(&["index-md", "--write"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(b.root.join("lore/INDEX.md").exists() && b.root.join("idea/INDEX.md").exists());
}

#[test]
fn links_go_both_ways_and_broken_ones_say_why() {
    let b = Brain::example();
    let out = b.json(&["links", "lore/retry-jitter-thundering-herd.md"]);
    assert_eq!(
        out["outgoing"],
        json!([
            {"target": "research-link/aws-backoff-and-jitter", "heading": null, "line": 47, "path": "research-link/aws-backoff-and-jitter.md", "state": "ok", "why": null},
            {"target": "lore/circuit-breakers", "heading": null, "line": 47, "path": null, "state": "broken",
             "why": "no note lore/circuit-breakers.md (or lore/circuit-breakers/circuit-breakers.md)"},
        ])
    );
    let into = b.json(&["links", "research-link/dense-passage-retrieval.md"]);
    assert_eq!(
        into["incoming"],
        json!([{"path": "research-link/hnsw-malkov-yashunin.md", "line": 32}])
    );
    let abs = b.root.join("idea/recall-from-vocabulary-drift.md");
    let short = b.json(&["links", abs.to_str().unwrap()]);
    assert_eq!(
        short["incoming"],
        json!([{"path": "idea/resurface-stale-lore.md", "line": 36}])
    );
    // The note as a link names it, the form `check` prints.
    let linked = b.json(&["links", "idea/recall-from-vocabulary-drift"]);
    assert_eq!(linked["incoming"], short["incoming"]);
    assert_eq!(linked["path"], "idea/recall-from-vocabulary-drift.md");
    // From a folder of the brain, a file there, as `get` reads it.
    let out = b
        .command()
        .current_dir(b.root.join("idea"))
        .args(["links", "recall-from-vocabulary-drift.md", "--json"])
        .output()
        .unwrap();
    let here = crate::harness::Run(out);
    assert_eq!(here.code(), 0, "{}", here.stderr());
    assert_eq!(here.json()["incoming"], short["incoming"]);
    // And as a hit prints it, `path:LINE`, from there too.
    for (dir, note) in [
        (b.root.clone(), "idea/recall-from-vocabulary-drift.md:3"),
        (b.root.join("idea"), "recall-from-vocabulary-drift.md:3"),
    ] {
        let out = b
            .command()
            .current_dir(dir)
            .args(["links", note, "--json"])
            .output()
            .unwrap();
        let hit = crate::harness::Run(out);
        assert_eq!(hit.code(), 0, "{note}: {}", hit.stderr());
        assert_eq!(hit.json()["incoming"], short["incoming"], "{note}");
    }
    // What is not a note says why, as `get` does: nothing there, a file the index skips,
    // not text.
    b.write("lore/binary.md", b"\x89PNG\0\0");
    for (note, why) in [
        ("lore/nope.md", "lore/nope.md: no such note in "),
        (
            "lore/INDEX.md",
            "lore/INDEX.md is a file the index does not hold: it is excluded",
        ),
        (
            "lore/binary.md",
            "lore/binary.md: not a note, and the index skips it: a binary file",
        ),
    ] {
        let r = b.run(&["links", note]);
        assert_eq!(r.code(), 2, "{note}");
        assert!(r.stderr().contains(why), "{note}: {}", r.stderr());
    }
    let r = b.run(&["links", ""]);
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr().starts_with("error: the note path is empty: "),
        "{}",
        r.stderr()
    );
    assert_eq!(r.stderr().lines().count(), 1, "{}", r.stderr());
}

/// `[[x#Fix]]` names a heading of x: `check` and `links` show the link with it, the form
/// `check` asks for keeps it, and an index made before headings were kept learns them on
/// its next sync (the notes with links are read again).
#[test]
fn a_link_to_a_heading_keeps_it_in_what_links_and_check_print() {
    let b = Brain::example();
    b.write(
        "idea/heading-links.md",
        "---\ntitle: Heading links\n---\nSee [[retry-jitter-thundering-herd#Fix|the fix]] \
         and [[lore/gone#Part two]].\n\n[[lore/retry-jitter-thundering-herd#full JITTER]] \
         [[lore/retry-jitter-thundering-herd#Half jitter]]\n",
    );
    // A heading the note does not have (renamed, mistyped) is a broken link; one written
    // without its case is found, as editors find it.
    let no_heading = "[[lore/retry-jitter-thundering-herd#Half jitter]]: \
                      lore/retry-jitter-thundering-herd.md has no heading \"Half jitter\"";
    let short = "[[retry-jitter-thundering-herd#Fix]]: write \
                 [[lore/retry-jitter-thundering-herd#Fix]]";
    let broken = "[[lore/gone#Part two]]: no note lore/gone.md";
    let check = |b: &Brain| {
        let r = b.run(&["check"]);
        let out = r.stdout();
        assert!(out.contains(short), "{out}");
        assert!(out.contains(broken), "{out}");
        assert!(out.contains(no_heading), "{out}");
        assert!(!out.contains("full JITTER"), "{out}");
    };
    check(&b);
    let links = b.json(&["links", "idea/heading-links.md"]);
    assert_eq!(links["outgoing"][0]["heading"], "Fix", "{links}");
    assert_eq!(links["outgoing"][1]["heading"], "Part two", "{links}");
    assert_eq!(
        links["outgoing"][0]["why"],
        "write it as [[lore/retry-jitter-thundering-herd#Fix]]"
    );
    assert_eq!(links["outgoing"][2]["state"], "ok", "{links}");
    assert_eq!(links["outgoing"][3]["state"], "broken", "{links}");
    assert_eq!(
        links["outgoing"][3]["path"], "lore/retry-jitter-thundering-herd.md",
        "{links}"
    );
    let text = b.run(&["links", "idea/heading-links.md"]).stdout();
    assert!(text.contains("[[lore/gone#Part two]]  broken"), "{text}");

    // An index of the schema before: no headings, version 12. The next command reads the
    // notes with links again, and the headings are back.
    let db = b.config().index_path();
    rusqlite::Connection::open(&db)
        .and_then(|c| {
            c.execute_batch(
                "ALTER TABLE links DROP COLUMN heading;
                 UPDATE meta SET value = '12' WHERE key = 'schema_version';",
            )
        })
        .unwrap();
    check(&b);
    let again = b.json(&["links", "idea/heading-links.md"]);
    assert_eq!(again["outgoing"], links["outgoing"]);
}

#[test]
fn where_filters_on_any_frontmatter_field_and_names_the_fields_on_a_typo() {
    let b = Brain::example();
    // `brain search sqlite --mode bm25 --top 50`, with these conditions.
    let sqlite = |conditions: &[&str]| {
        let mut args = vec!["search", "sqlite", "--mode", "bm25", "--top", "50"];
        for c in conditions {
            args.extend(["--where", c]);
        }
        paths(&b.json(&args))
    };
    let lessons = sqlite(&["category=lesson"]);
    assert!(
        lessons.contains(&"lore/sqlite-wal-checkpoint-starvation.md".to_string()),
        "{lessons:?}"
    );
    assert!(
        lessons.iter().all(|p| p.starts_with("lore/")),
        "{lessons:?}"
    );
    let all = sqlite(&[]);
    let not = sqlite(&["category!=lesson"]);
    assert_eq!(
        lessons.len() + not.len(),
        all.len(),
        "= and != split the results"
    );
    assert!(
        not.iter().any(|p| p.starts_with("research-link/")),
        "a note without the field is not excluded by !="
    );
    // A list field holds the value; matching ignores case; conditions combine.
    let tagged = sqlite(&["tags=CONCURRENCY", "type=lore"]);
    assert_eq!(tagged, ["lore/sqlite-busy-timeout.md"]);

    let r = b.run(&["search", "sqlite", "--where", "categry=lesson"]);
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr().contains(
            "no note has a field \"categry\" and no SCHEMA.md declares it; the fields are"
        ) && r.stderr().contains("category")
            // Declared in lore/SCHEMA.md, set by no note: a field the condition may name.
            && r.stderr().contains("status"),
        "{}",
        r.stderr()
    );
    // A field a schema declares is one, though no note sets it yet (the README's example).
    let fresh = sqlite(&["status!=deprecated"]);
    assert_eq!(fresh, all, "no note is deprecated");
    for bad in ["category", "=lesson", "cat egory=x"] {
        let r = b.run(&["search", "sqlite", "--where", bad]);
        assert_eq!(r.code(), 2, "{bad}");
        assert!(
            r.stderr().contains("expected FIELD=VALUE or FIELD!=VALUE"),
            "{bad}: {}",
            r.stderr()
        );
    }
    // Tags written as one string are the tags `--tag` reads, for `--where` too: a tag of
    // two words stays one.
    b.write(
        "lore/crossing.md",
        "---\ntype: lore\ntags: \"Road Safety, zebra\"\n---\n# Crossing\n\nsqlite at the crossing\n",
    );
    for filter in [
        &["--where", "tags=road safety"][..],
        &["--tag", "Road Safety"],
        &["--where", "tags=zebra"],
    ] {
        let mut args = vec!["search", "sqlite", "--mode", "bm25"];
        args.extend(filter);
        assert_eq!(paths(&b.json(&args)), ["lore/crossing.md"], "{filter:?}");
    }
}

/// A file name holding a newline or an escape sequence is one printable line wherever the
/// knowledge-base commands print it: `new`'s list of alike notes, `check`, `links`.
#[test]
fn file_names_with_control_characters_print_as_one_line() {
    let b = Brain::example();
    let odd = "lore/axolotl\nwater\x1b[31m.md";
    b.write(
        odd,
        "---\ntype: lore\ntitle: Axolotl tank water temperature\ntags: [pets]\ncreated: 2026-12-01\n---\n# Axolotl tank water temperature\n\nKeep it cold. See [[lore/nowhere]].\n",
    );
    b.ok(&["index"]);
    let r = b.run(&["new", "lore", "Axolotl tank water temperature"]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.lines().count(), 3, "{err}");
    assert!(!err.contains('\x1b'), "{err}");
    let check = b.run(&["check"]).stdout();
    let line = check
        .lines()
        .find(|l| l.contains("lore/nowhere"))
        .unwrap_or_else(|| panic!("no broken link line in {check}"));
    assert!(line.contains("axolotl\u{FFFD}water"), "{line}");
    assert!(!check.contains('\x1b'), "{check}");
    let links = b.ok(&["links", odd]).stdout();
    assert!(
        !links.contains('\x1b') && links.lines().next().unwrap().ends_with(".md"),
        "{links}"
    );
    // A type (a folder's name, or frontmatter) with an escape, in search, similar and
    // status; a skipped file's name in `brain index`'s warning.
    b.write(
        "lore/odd-type.md",
        "---\ntype: \"ty\\e[33mpe\"\ntitle: Quokka habitat\n---\n# Quokka habitat\n\nquokkas live on Rottnest.\n",
    );
    std::fs::write(b.root.join("lore/bin\nary\x1b[31m.md"), b"a\0b").unwrap();
    let index = b.run(&["index"]);
    assert_eq!(index.code(), 0, "{}", index.stderr());
    let warning = index.stderr();
    assert!(!warning.contains('\x1b'), "{warning}");
    assert!(warning.contains("bin\u{FFFD}ary"), "{warning}");
    for args in [
        &["search", "quokkas", "--mode", "bm25"][..],
        &["similar", "--text", "quokkas live on Rottnest island"][..],
        &["status"][..],
    ] {
        let out = b.run(args);
        assert_eq!(out.code(), 0, "{args:?}: {}", out.stderr());
        assert!(!out.stdout().contains('\x1b'), "{args:?}: {}", out.stdout());
    }
}

/// An entry written where the index does not look is written, as asked, and said to be
/// out of the index: a search would never find it.
#[test]
fn new_says_when_it_writes_where_the_index_does_not_look() {
    let b = Brain::example();
    std::fs::create_dir_all(b.root.join("scratch")).unwrap();
    b.write(".brainignore", "scratch/\n");
    let r = b.run(&["new", "scratch", "Half an idea"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(b.root.join("scratch/half-an-idea.md").is_file());
    assert!(
        r.stderr()
            .contains("warning: scratch/half-an-idea.md is excluded from the index"),
        "{}",
        r.stderr()
    );
    let j = b.json(&["new", "scratch", "Another half"]);
    assert!(
        j["notice"]
            .as_str()
            .is_some_and(|n| n.contains("scratch/another-half.md is excluded")),
        "{j}"
    );
    let r = b.run(&["new", "idea", "A whole idea"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!r.stderr().contains("excluded"), "{}", r.stderr());

    // An ignore file brain cannot trust holds its folder back from every sync: the entry
    // is written, and the line says what to fix (a search then blamed a typo).
    std::fs::remove_file(b.root.join(".brainignore")).unwrap();
    let fifo = std::ffi::CString::new(
        b.root
            .join("idea/.gitignore")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let r = b.run(&["new", "idea", "Held back idea"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(b.root.join("idea/held-back-idea.md").is_file());
    assert!(
        r.stderr().contains(
            "warning: idea/held-back-idea.md is not in the index until this is fixed: idea/.gitignore"
        ),
        "{}",
        r.stderr()
    );
    // The brain folder's own: check names no path for it (it printed `  : the brain...`).
    let fifo = std::ffi::CString::new(
        b.root
            .join(".brainignore")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let check = b.run(&["check"]).stdout();
    assert!(
        check.contains("\n  the brain folder's .brainignore is not a regular file"),
        "{check}"
    );
}

#[test]
fn check_lists_the_files_a_type_loses_to_the_index_and_index_md_warns_of_them() {
    let b = Brain::example();
    // Latin text in UTF-16, and a note over max_file_mb: the index skips both, so
    // INDEX.md leaves them out; check said "nothing wrong" of them, index-md nothing.
    let utf16: Vec<u8> = "---\ntype: idea\ntitle: Wide\n---\nbody\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    b.write("idea/wide.md", [&[0xff, 0xfe][..], &utf16].concat());
    b.write_config("max_file_mb = 1\n");
    b.write(
        "idea/huge.md",
        "---\ntitle: Huge\n---\n".to_string() + &"word ".repeat(300_000),
    );
    let (code, report) = check_json(&b);
    assert_eq!(code, 1);
    let skipped: Vec<_> = problems(&report)
        .into_iter()
        .filter(|(kind, ..)| kind == "skipped")
        .map(|(_, path, line)| (path, line))
        .collect();
    assert_eq!(
        skipped,
        [
            ("idea/huge.md".to_string(), None),
            ("idea/wide.md".to_string(), None)
        ]
    );
    assert!(message_about(&report, "idea/wide.md").starts_with("skipped: UTF-16"));
    assert!(message_about(&report, "idea/huge.md").contains("over the 1 MiB limit"));
    let stderr = b.run(&["index-md"]).stderr();
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: idea/"))
        .collect();
    assert_eq!(warned.len(), 2, "{stderr}");
    assert!(warned.iter().all(|l| l.ends_with("; not in idea/INDEX.md")));
}

#[test]
fn index_md_writes_no_file_but_an_index_through_a_link() {
    let b = Brain::example();
    let note = b.root.join("lore/sqlite-busy-timeout.md");
    let before = std::fs::read(&note).unwrap();
    let schema = std::fs::read(b.root.join("idea/SCHEMA.md")).unwrap();
    for (link, target) in [
        ("lore/INDEX.md", "sqlite-busy-timeout.md"),
        ("idea/INDEX.md", "SCHEMA.md"),
    ] {
        let _ = std::fs::remove_file(b.root.join(link));
        std::os::unix::fs::symlink(target, b.root.join(link)).unwrap();
    }
    let r = b.run(&["index-md", "--write"]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("a link to lore/sqlite-busy-timeout.md, which is not a file brain writes"),
        "{}",
        r.stderr()
    );
    assert!(r
        .stderr()
        .contains("a link to idea/SCHEMA.md, which is not a file brain writes"));
    assert_eq!(std::fs::read(&note).unwrap(), before);
    assert_eq!(
        std::fs::read(b.root.join("idea/SCHEMA.md")).unwrap(),
        schema
    );

    // Two types' INDEX.md linked to one file: the type whose file it is writes it, the
    // link is refused (each run overwrote the other's, and check never settled), here
    // with the file not made yet.
    std::fs::remove_file(b.root.join("idea/INDEX.md")).unwrap();
    std::fs::remove_file(b.root.join("lore/INDEX.md")).unwrap();
    std::os::unix::fs::symlink("../idea/INDEX.md", b.root.join("lore/INDEX.md")).unwrap();
    let r = b.run(&["index-md", "--write"]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("lore/INDEX.md: leads to idea/INDEX.md, that type's own"),
        "{}",
        r.stderr()
    );
    assert!(std::fs::read_to_string(b.root.join("idea/INDEX.md"))
        .unwrap()
        .starts_with("# idea"));
    // The other way round, the type whose name sorts first holds the link: the file is
    // still its own type's, the link refused (the link's type wrote over it).
    std::fs::remove_file(b.root.join("lore/INDEX.md")).unwrap();
    b.ok(&["index-md", "--write"]);
    std::fs::remove_file(b.root.join("idea/INDEX.md")).unwrap();
    std::os::unix::fs::symlink("../lore/INDEX.md", b.root.join("idea/INDEX.md")).unwrap();
    let r = b.run(&["index-md", "--write"]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("idea/INDEX.md: leads to lore/INDEX.md, that type's own"),
        "{}",
        r.stderr()
    );
    assert!(
        !r.stdout().contains("wrote idea/INDEX.md"),
        "{}",
        r.stdout()
    );
    assert!(std::fs::read_to_string(b.root.join("lore/INDEX.md"))
        .unwrap()
        .starts_with("# lore"));
}

#[test]
fn an_index_md_with_crlf_line_endings_or_a_byte_order_mark_is_up_to_date() {
    let b = Brain::example();
    b.ok(&["index-md", "--write"]);
    let file = b.root.join("lore/INDEX.md");
    let text = std::fs::read_to_string(&file).unwrap();
    for changed in [text.replace('\n', "\r\n"), format!("\u{feff}{text}")] {
        std::fs::write(&file, &changed).unwrap();
        let r = b.run(&["index-md"]);
        assert!(
            r.stdout().contains("INDEX.md files up to date"),
            "{}",
            r.stdout()
        );
        let (_, report) = check_json(&b);
        assert!(
            !problems(&report)
                .iter()
                .any(|(kind, ..)| kind == "index_outdated"),
            "{report}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), changed);
    }
}

#[test]
fn check_flags_an_entry_named_as_its_folders_index_or_schema() {
    let b = Brain::example();
    b.write(
        "lore/index.md",
        "---\ntype: lore\ntitle: Our suppliers\n---\nprecious\n",
    );
    b.write(
        "lore/Schema.md",
        "---\ntype: lore\ntitle: Schema notes\n---\nx\n",
    );
    let (_, report) = check_json(&b);
    for (path, file) in [
        ("lore/index.md", "lore/INDEX.md"),
        ("lore/Schema.md", "lore/SCHEMA.md"),
    ] {
        assert!(
            problems(&report).contains(&("bad_slug".into(), path.into(), None)),
            "{report}"
        );
        let said = report["problems"].as_array().unwrap().iter().any(|p| {
            p["path"] == path
                && p["kind"] == "bad_slug"
                && p["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&format!("is {file} on a Mac")))
        });
        assert!(said, "{report}");
    }
}

#[test]
fn new_says_when_two_long_titles_make_one_file_name() {
    let b = Brain::example();
    let start = "Postmortem of the payment service outage caused by the expired intermediate TLS certificate on";
    b.ok(&["new", "lore", &format!("{start} the EU cluster")]);
    let r = b.run(&["new", "lore", &format!("{start} the US cluster"), "--force"]);
    r.assert_refused(
        "a second long title alike in its first 80 characters",
        "a file name keeps only a title's first 80 characters",
    );
}

#[test]
fn a_type_is_one_name_in_either_unicode_form_and_two_files_so_named_are_one_slug() {
    let b = Brain::new();
    let (nfd, nfc) = ("cafe\u{301}", "caf\u{e9}");
    // A folder named by an older macOS tool (NFD), its schema and a type typed on a
    // keyboard (NFC): "says type: café, but sits in the café/ folder" before.
    b.write(
        &format!("{nfd}/SCHEMA.md"),
        format!("---\ntype: {nfc}\n---\n"),
    );
    b.write(
        &format!("{nfd}/hand-written.md"),
        format!("---\ntype: {nfc}\ntitle: Hand written\ncreated: 2026-01-01\nupdated: 2026-01-01\ntags: []\n---\nx\n"),
    );
    let (_, report) = check_json(&b);
    let kinds: Vec<String> = problems(&report).into_iter().map(|(k, ..)| k).collect();
    assert!(
        !kinds.iter().any(|k| k == "schema" || k == "wrong_type"),
        "{report}"
    );
    let r = b.run(&["new", nfc, "Typed on a keyboard"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(b.root.join(nfd).join("typed-on-a-keyboard.md").is_file());

    // Two entries whose names differ only in Unicode form: one slug (one file on a Mac).
    b.write(&format!("{nfd}/{nfc}.md"), "# One\n");
    b.write(&format!("{nfd}/{nfd}.md"), "# Two\n");
    let (_, report) = check_json(&b);
    let twins: Vec<&Value> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "duplicate_slug")
        .collect();
    assert_eq!(twins.len(), 1, "{report}");
    assert!(
        twins[0]["message"]
            .as_str()
            .unwrap()
            .contains("its accents written another way"),
        "{report}"
    );
}

#[test]
fn new_says_a_symlinked_type_folder_is_not_followed() {
    let b = Brain::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(elsewhere.path().join("ext")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("ext"), b.root.join("ext")).unwrap();
    b.write("lore/x.md", "# X\n");
    b.run(&["new", "ext", "Through a link"]).assert_refused(
        "a type folder that is a symlink",
        "type \"ext\": ext/ is a symbolic link, which brain does not follow",
    );
}

#[test]
fn check_and_links_say_each_place_once_and_where_it_is() {
    let b = Brain::new();
    b.write(
        "rl/SCHEMA.md",
        "---\ntype: rl\nrequired: [type, title, url]\n---\n",
    );
    // A field written empty is reported at its own line, a missing one at line 1.
    b.write(
        "rl/empty-url.md",
        "---\ntype: rl\ntitle: Empty url\ncreated: [\"2026-01-01\"]\nurl: \"\"\n---\nx\n",
    );
    b.write("rl/no-url.md", "---\ntype: rl\ntitle: No url\n---\nx\n");
    b.write(
        "src.md",
        "# Src\n\n[[rl/no-url]] [[rl/no-url#x]] [[rl/no-url|label]]\n",
    );
    let (_, report) = check_json(&b);
    let all = problems(&report);
    assert!(
        all.contains(&("missing_field".into(), "rl/empty-url.md".into(), Some(5))),
        "{report}"
    );
    assert!(
        all.contains(&("missing_field".into(), "rl/no-url.md".into(), Some(1))),
        "{report}"
    );
    // A list is shown as YAML writes it, not as JSON in quotes.
    let dates: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "bad_date")
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert_eq!(
        dates,
        ["created: [\"2026-01-01\"] is not a date (write YYYY-MM-DD)"]
    );
    // Three links on one line are one place that links here.
    let links = b.json(&["links", "rl/no-url.md"]);
    assert_eq!(links["incoming"], json!([{"path": "src.md", "line": 3}]));
}
