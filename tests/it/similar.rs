//! `brain similar`: verdicts on real notes with the real test model, the JSON contract,
//! bad input, the keywords-only fallback, `--all`, and the backend answering it.

use std::time::Duration;

use crate::harness::{eventually, Brain};

const DUPLICATE: &str = "# Add randomness to retry delays\n\n\
When thousands of clients fail at once and all back off exponentially, they still retry in \
lockstep: every wave is a synchronized spike on a service that is trying to recover. Doubling \
the wait only stretches the gaps. Choose each sleep at random between zero and the exponential \
cap (full jitter) so the clients spread out. Also cap the attempts, keep a retry budget of \
about 10% of requests, retry at only one layer, and honour Retry-After.\n";

const NEW: &str = "# Sourdough starter feeding\n\n\
Feed the starter twice a day with equal weights of rye flour and water. It is ready to bake \
with when it doubles within six hours and a spoonful floats in water. Keep it in the fridge \
between bakes and feed it the evening before.\n";

fn verdict(j: &serde_json::Value) -> &str {
    j["verdict"].as_str().unwrap_or("?")
}

#[test]
fn a_rewritten_lesson_is_a_duplicate_and_an_unrelated_one_is_new() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    // The README shows this very answer (`--top 2`): it is this build's, to the digit (it
    // went stale once, when a rare word began to count once whatever its form).
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let shown = readme
        .split("```\n")
        .find(|block| block.starts_with("duplicate of lore/retry-jitter-thundering-herd.md\n"))
        .expect("the README's sample of brain similar");
    let out = b
        .run_stdin(&["similar", "-", "--top", "2"], DUPLICATE.as_bytes())
        .stdout();
    assert_eq!(out, shown, "the README's sample is not this build's answer");
    let draft = b.path("../draft.md");
    std::fs::write(&draft, DUPLICATE).unwrap();
    let j = b.ok(&["similar", draft.to_str().unwrap(), "--json"]).json();
    assert_eq!(verdict(&j), "duplicate", "{j}");
    let top = &j["results"][0];
    assert_eq!(top["path"], "lore/retry-jitter-thundering-herd.md", "{j}");
    for key in [
        "path", "abs_path", "title", "type", "score", "likeness", "verdict", "reason", "line",
    ] {
        assert!(!top[key].is_null(), "{key} missing: {top}");
    }
    // Duplicates first, by likeness; then the others by score.
    let hits = j["results"].as_array().unwrap();
    let dup = |h: &serde_json::Value| h["verdict"] == "duplicate";
    let key = |h: &serde_json::Value| {
        h[if dup(h) { "likeness" } else { "score" }]
            .as_f64()
            .unwrap()
    };
    for w in hits.windows(2) {
        assert!(dup(&w[0]) >= dup(&w[1]), "a duplicate after another: {j}");
        if dup(&w[0]) == dup(&w[1]) {
            assert!(key(&w[0]) >= key(&w[1]), "out of order: {j}");
        }
    }
    assert!(top["abs_path"]
        .as_str()
        .unwrap()
        .ends_with("lore/retry-jitter-thundering-herd.md"));
    assert!(
        top["reason"].as_str().unwrap().contains("passages align"),
        "{top}"
    );
    assert_eq!(j["mode"], "semantic");

    let j = b
        .run_stdin(&["similar", "-", "--json"], NEW.as_bytes())
        .json();
    assert_eq!(verdict(&j), "new", "{j}");
    assert!(j["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["verdict"] == "new"));

    // Human output: the verdict line first, then hits like search's.
    let text = b.ok(&["similar", "--text", DUPLICATE]).stdout();
    assert!(
        text.starts_with("duplicate of lore/retry-jitter-thundering-herd.md\n"),
        "{text}"
    );
    assert!(
        text.contains("[1] duplicate [lore] lore/retry-jitter-thundering-herd.md:"),
        "{text}"
    );
    assert!(b
        .ok(&["similar", "--text", DUPLICATE, "--explain"])
        .stdout()
        .contains("evidence: best="));
    let j = b
        .ok(&["similar", "--text", DUPLICATE, "--explain", "--json"])
        .json();
    let words = j["results"][0]["evidence"]["words"].as_f64().unwrap();
    assert!(words > 0.2 && words <= 1.0, "{j}");
    // Every likeness is its evidence's, the lead over the other candidates included (the
    // README's formula: 0.4 x the rescaled draft coverage + the word overlap + the lead).
    for hit in j["results"].as_array().unwrap() {
        let e = &hit["evidence"];
        let covered = e["draft_covered"].as_f64().unwrap();
        let rescaled = ((covered - 0.2) / 0.8).clamp(0.0, 1.0);
        let recomputed =
            0.4 * rescaled + e["words"].as_f64().unwrap() + e["lead"].as_f64().unwrap();
        let likeness = hit["likeness"].as_f64().unwrap();
        assert!((recomputed - likeness).abs() < 1e-3, "{hit}");
    }
}

#[test]
fn a_note_of_the_brain_is_never_its_own_result() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    let note = "lore/retry-jitter-thundering-herd.md";
    for arg in [
        note.to_string(),
        b.root.join(note).to_string_lossy().into_owned(),
        // As a hit prints it.
        format!("{note}:12"),
    ] {
        let j = b.ok(&["similar", &arg, "--json", "--top", "10"]).json();
        let paths = crate::harness::paths(&j);
        assert!(!paths.iter().any(|p| p == note), "{paths:?}");
        assert_eq!(j["results"].as_array().unwrap().len(), 10);
    }
    // The same relative path in the folder the command runs in is another file: compared
    // as a draft, as asked, with a warning naming the note it was not.
    let here = b.tmp.path().join(note);
    assert!(!here.starts_with(&b.root));
    std::fs::create_dir_all(here.parent().unwrap()).unwrap();
    std::fs::write(&here, "# Cats\n\nCats sleep sixteen hours a day.\n").unwrap();
    let r = b.run(&["similar", note, "--json"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("is the file in this folder that was compared")
            && r.stderr().contains(&*b.root.join(note).to_string_lossy()),
        "{}",
        r.stderr()
    );
    assert_eq!(r.json()["verdict"], "new");
    std::fs::remove_file(&here).unwrap();

    // Two notes of the brain are duplicates only where `--all` would merge them, which it
    // does for none of these: each has neighbours on its topic, none is written twice.
    for note in [
        "lore/sqlite-busy-timeout.md",
        "research-link/dense-passage-retrieval.md",
        "lore/expand-contract-migrations.md",
    ] {
        let j = b.ok(&["similar", note, "--json"]).json();
        assert_ne!(verdict(&j), "duplicate", "{note}: {j}");
    }
}

#[test]
fn bad_drafts_get_one_line_and_exit_2_and_write_nothing() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    let before = crate::harness::snapshot(&b.root);
    let cases: Vec<(Vec<&str>, &[u8], &str)> = vec![
        (vec!["similar", "-"], b"", "empty"),
        (
            vec!["similar", "-"],
            b"---\ntags: [x]\n---\n",
            "only frontmatter",
        ),
        (vec!["similar", "-"], b"bin\0ary", "NUL"),
        (vec!["similar", "-"], b"caf\xe9", "UTF-8"),
        (vec!["similar", "nowhere/missing.md"], b"", "no such file"),
        (vec!["similar", "lore"], b"", "lore is a folder, not a file"),
        (
            vec!["similar", "/dev/null"],
            b"",
            "/dev/null is not a regular file",
        ),
        (vec!["similar"], b"", "say what to compare"),
        (vec!["similar", "x.md", "--text", "y"], b"", "not both"),
        (vec!["similar", "--all", "--text", "y"], b"", "no draft"),
        (vec!["similar", "--all", "--explain"], b"", "--explain"),
        (vec!["similar", "--all", "--top", "0"], b"", "--top"),
        (vec!["similar", "--text", "y", "--top", "0"], b"", "--top"),
    ];
    for (args, stdin, says) in cases {
        let run = b.run_stdin(&args, stdin);
        assert_eq!(run.code(), 2, "{args:?}: {}", run.stderr());
        let err = run.stderr();
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // A path that climbs out of the brain folder is not looked up from there: `../x.md`
    // next to the brain is no note, and no file here either.
    let beside = b.root.parent().unwrap().join("escape.md");
    std::fs::write(&beside, "# Escape\n\nwords\n").unwrap();
    let run = b.run(&["similar", "../escape.md"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("no such file"), "{}", run.stderr());
    std::fs::remove_file(&beside).unwrap();
    // Over the size limit (max_file_mb = 1 here).
    let big = b.path("../big.md");
    std::fs::write(&big, "word ".repeat(250_000)).unwrap();
    b.write_config("max_file_mb = 1\n");
    let run = b.run(&["similar", big.to_str().unwrap()]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("max_file_mb"), "{}", run.stderr());
    // A draft that cannot be read is named in the one line (root reads any mode, so the
    // unreadable file is the kernel's: reading process memory at offset 0 fails).
    let run = b.run(&["similar", "/proc/self/mem"]);
    assert_eq!(run.code(), 1, "{}", run.stderr());
    assert!(
        run.stderr().contains("/proc/self/mem: "),
        "{}",
        run.stderr()
    );
    assert_eq!(run.stderr().trim().lines().count(), 1, "{}", run.stderr());
    // A draft of only a code fence is text like any other.
    b.ok(&[
        "similar",
        "--text",
        "```sh\ngit push --force-with-lease\n```\n",
    ]);
    assert_eq!(before, crate::harness::snapshot(&b.root));
}

#[test]
fn a_note_named_as_a_link_names_it_is_that_note() {
    // `lore/x` as `[[lore/x]]` writes it (an assistant copies it from a note), and `lore/x.md`.
    let b = Brain::example();
    b.ok(&["index"]);
    let as_path = b.json(&["similar", "lore/sqlite-busy-timeout.md"]);
    let as_link = b.json(&["similar", "lore/sqlite-busy-timeout"]);
    assert_eq!(as_path["results"], as_link["results"]);
    assert!(as_link["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["path"] != "lore/sqlite-busy-timeout.md"));
}

#[test]
fn without_a_model_verdicts_come_from_words_and_say_so() {
    let b = Brain::example();
    b.ok(&["index"]);
    let run = b.ok(&["similar", "lore/retry-jitter-thundering-herd.md", "--json"]);
    assert!(
        run.stderr().contains("no embedding model"),
        "{}",
        run.stderr()
    );
    let j = run.json();
    assert_eq!(j["mode"], "keywords");
    assert!(!j["results"].as_array().unwrap().is_empty(), "{j}");
    // The words a rewrite keeps are enough to call it a duplicate of its original.
    let j = b
        .run_stdin(&["similar", "-", "--json"], DUPLICATE.as_bytes())
        .json();
    assert_eq!(verdict(&j), "duplicate", "{j}");
    assert_eq!(
        j["results"][0]["path"], "lore/retry-jitter-thundering-herd.md",
        "{j}"
    );
    let j = b
        .run_stdin(&["similar", "-", "--json"], NEW.as_bytes())
        .json();
    assert_eq!(verdict(&j), "new", "{j}");
    // A note the index took with a byte that is not UTF-8 (warned of, and searched, read
    // and linked as text) is compared as the index read it, not refused as a draft.
    std::fs::write(
        b.root.join("lore/latin1.md"),
        b"# Caf\xe9 cr\xe8me\n\nretry jitter backoff written in latin-1 text\n",
    )
    .unwrap();
    b.ok(&["index"]);
    let j = b.ok(&["similar", "lore/latin1.md", "--json"]).json();
    assert!(
        j["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"] != "lore/latin1.md"),
        "{j}"
    );
}

/// Without vectors a title of common words (none of them rare) still reaches the note that
/// has it: once nothing did, and `brain new` wrote a duplicate beside it.
#[test]
fn without_a_model_a_title_of_common_words_still_finds_its_note() {
    let b = Brain::new();
    for i in 0..12 {
        b.write(
            &format!("git/note-{i}.md"),
            format!("# Git note {i}\n\nShow how a file is ignored, or not, in git: topic {i}.\n"),
        );
    }
    let note = "git/show-how-a-file-is-ignored-in-git.md";
    b.write(
        note,
        "# Show how a file is ignored in Git\n\ngit check-ignore -v path/to/file\n",
    );
    b.ok(&["index"]);
    let j = b
        .ok(&[
            "similar",
            "--text",
            "# How a file is ignored in Git",
            "--json",
        ])
        .json();
    assert_eq!(j["results"][0]["path"], note, "{j}");
    assert_ne!(verdict(&j), "new", "{j}");
}

#[test]
fn all_finds_a_copied_note_and_nothing_else_in_the_examples() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    let j = b.ok(&["similar", "--all", "--json"]).json();
    assert_eq!(j["clusters"].as_array().unwrap().len(), 0, "{j}");
    let original = std::fs::read_to_string(b.root.join("lore/sqlite-busy-timeout.md")).unwrap();
    b.write(
        "idea/busy-timeout-again.md",
        original.replace("title:", "title: Again,"),
    );
    // No `brain index` between: as a search does, --all embeds a note saved a moment ago.
    let j = b.ok(&["similar", "--all", "--json"]).json();
    let clusters = j["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{j}");
    assert_eq!(
        clusters[0]["paths"],
        serde_json::json!(["idea/busy-timeout-again.md", "lore/sqlite-busy-timeout.md"])
    );
    assert!(!clusters[0]["reason"].as_str().unwrap().is_empty());
    assert!(b.ok(&["similar", "--all"]).stdout().contains("[1] 2 notes"));
    assert!(j.get("total").is_none(), "nothing left out: {j}");

    // `--top` keeps the largest clusters and says how many there were.
    let other =
        std::fs::read_to_string(b.root.join("lore/retry-jitter-thundering-herd.md")).unwrap();
    b.write(
        "idea/jitter-again.md",
        other.replace("title:", "title: Again,"),
    );
    b.write(
        "idea/jitter-once-more.md",
        other.replace("title:", "title: Once more,"),
    );
    b.ok(&["index"]);
    let j = b.ok(&["similar", "--all", "--json"]).json();
    assert_eq!(j["clusters"].as_array().unwrap().len(), 2, "{j}");
    let j = b.ok(&["similar", "--all", "--json", "--top", "1"]).json();
    let clusters = j["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{j}");
    assert_eq!(clusters[0]["paths"].as_array().unwrap().len(), 3, "{j}");
    assert_eq!(j["total"], 2, "{j}");
    // Of three notes, the reason names the pair it is about.
    let reason = clusters[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("idea/jitter-") || reason.starts_with("lore/retry-"),
        "{reason}"
    );
    assert!(
        reason.contains(".md and ") && reason.contains(".md: passages align"),
        "{reason}"
    );
    let human = b.ok(&["similar", "--all", "--top", "1"]).stdout();
    assert!(human.contains("1 of 2 clusters shown"), "{human}");
}

/// Two notes of the brain get one verdict and one score, whichever is asked about, and a
/// duplicate is a pair `--all` lists: a short note that one section of a long note covers
/// once looked like a duplicate from its own side and only related from the other's.
#[test]
fn two_notes_judge_each_other_alike_and_as_all_does() {
    let b = Brain::example().model();
    let original = std::fs::read_to_string(b.root.join("lore/sqlite-busy-timeout.md")).unwrap();
    let fix = original
        .split("## The part that still bites")
        .next()
        .unwrap()
        .replace("title:", "title: The fix,");
    b.write("idea/busy-timeout-fix.md", &fix);
    b.write(
        "idea/busy-timeout-again.md",
        original.replace("title:", "title: Again,"),
    );
    b.ok(&["index"]);
    let notes = [
        "idea/busy-timeout-fix.md",
        "idea/busy-timeout-again.md",
        "lore/sqlite-busy-timeout.md",
    ];
    let asked: Vec<serde_json::Value> = notes
        .iter()
        .map(|n| b.ok(&["similar", n, "--json", "--explain"]).json())
        .collect();
    let hit = |from: usize, to: usize| -> &serde_json::Value {
        asked[from]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["path"] == notes[to])
            .unwrap_or_else(|| panic!("{} not among {}'s results", notes[to], notes[from]))
    };
    let clusters = b.ok(&["similar", "--all", "--json"]).json();
    let listed = |x: &str, y: &str| {
        clusters["clusters"].as_array().unwrap().iter().any(|c| {
            let paths = c["paths"].as_array().unwrap();
            paths.iter().any(|p| p == x) && paths.iter().any(|p| p == y)
        })
    };
    for from in 0..3 {
        for to in (0..3).filter(|&t| t != from) {
            let (there, back) = (hit(from, to), hit(to, from));
            assert_eq!(there["score"], back["score"], "{there} / {back}");
            assert_eq!(there["verdict"], back["verdict"], "{there} / {back}");
            let both = there["evidence"]["both_ways"].as_array().unwrap();
            assert_eq!(both.len(), 2, "{there}");
            // The evidence shown is what scored the pair from this side.
            let e = &there["evidence"];
            let a = |k: &str| ((e[k].as_f64().unwrap() - 0.2) / 0.8).clamp(0.0, 1.0);
            let from_here = 0.6 * a("draft_covered")
                + 0.2 * a("note_covered")
                + 0.2 * e["rare_shared"].as_f64().unwrap();
            assert!(
                (from_here - both[0].as_f64().unwrap()).abs() < 1e-3,
                "{from_here} from {there}"
            );
            assert_eq!(
                there["verdict"] == "duplicate",
                listed(notes[from], notes[to]),
                "{there} / {clusters}"
            );
        }
    }
    // The copy is a duplicate of its original. The section and the whole note score far
    // apart from their two sides (0.96 and 0.72 with the test model), where one way alone
    // gave each side its own score.
    assert_eq!(hit(1, 2)["verdict"], "duplicate");
    let both = hit(0, 2)["evidence"]["both_ways"].clone();
    assert_ne!(both[0], both[1], "{both}");
    assert!(asked[0]["rule"].as_str().unwrap().contains("both ways"));
    let human = b
        .ok(&["similar", notes[1], "--explain", "--top", "1"])
        .stdout();
    assert!(human.contains("both ways: "), "{human}");
}

/// A name with an accent typed in one Unicode form names the note held in the other (macOS
/// wrote names decomposed for years; an assistant types them composed), as for `get`.
#[test]
fn a_note_named_in_the_other_unicode_form_is_that_note() {
    let b = Brain::example();
    // `café` decomposed on disk, composed as typed.
    let held = "lore/cafe\u{301}-espresso.md";
    let typed = "lore/caf\u{e9}-espresso.md";
    b.write(
        held,
        "# Espresso\n\nA ristretto is a short espresso pulled with less water.\n",
    );
    b.ok(&["index"]);
    for arg in [typed, typed.trim_end_matches(".md")] {
        let j = b.ok(&["similar", arg, "--json"]).json();
        assert!(
            j["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|h| h["path"] != held),
            "{arg}: the note itself is never a result: {j}"
        );
    }
    // From the note's own folder too, for `get`.
    let out = b
        .command()
        .args(["get", "caf\u{e9}-espresso.md"])
        .current_dir(b.root.join("lore"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ristretto"));
}

/// Input that cannot be compared as given says how to give it.
#[test]
fn a_folder_on_stdin_and_a_file_that_is_not_a_note_say_what_to_run() {
    let b = Brain::example();
    b.ok(&["index"]);
    let out = b
        .command()
        .args(["similar", "-"])
        .stdin(std::fs::File::open(&b.root).unwrap())
        .output()
        .unwrap();
    let run = crate::harness::Run(out);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert_eq!(
        run.stderr(),
        "error: standard input is a folder: give a file (brain similar - < draft.md)\n"
    );
    b.write("lore/draft.txt", "Retry with jitter, always.\n");
    let run = b.run(&["similar", "lore/draft.txt"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(
        run.stderr().contains(&format!(
            "compare its text as a draft instead (brain similar - < {}; the MCP tool's text)",
            b.root.join("lore/draft.txt").display()
        )),
        "{}",
        run.stderr()
    );
    // A FIFO is no draft either: reading it would wait for a writer that never comes.
    crate::harness::mkfifo(&b.root.join("lore/fifo.md"));
    let run = b.run(&["similar", "lore/fifo.md"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(
        run.stderr().ends_with(
            "error: lore/fifo.md is not a regular file: give a note or draft file, - for stdin, or --text \"...\"\n"
        ),
        "{}",
        run.stderr()
    );
}

/// "related to N notes" counts what the brain holds, whatever `--top` shows: a script
/// reading the summary once got 1, 2 or 3 as --top went.
#[test]
fn the_summary_counts_every_related_note_not_only_those_shown() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    let all = b
        .ok(&[
            "similar",
            "lore/sqlite-busy-timeout.md",
            "--json",
            "--top",
            "50",
        ])
        .json();
    let related = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["verdict"] == "related")
        .count();
    assert!(related >= 2, "{all}");
    let one = b
        .ok(&[
            "similar",
            "lore/sqlite-busy-timeout.md",
            "--json",
            "--top",
            "1",
        ])
        .json();
    assert_eq!(one["results"].as_array().unwrap().len(), 1);
    assert_eq!(one["summary"], all["summary"], "{one}");
    assert_eq!(all["summary"], format!("related to {related} notes"));
}

#[test]
fn a_draft_of_a_few_words_duplicates_only_a_copy_and_says_why() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    // A note's name typed as a draft (its slug's words): it was a duplicate of two notes.
    let j = b
        .ok(&["similar", "--text", "sqlite wal checkpoint", "--json"])
        .json();
    assert_eq!(verdict(&j), "related", "{j}");
    assert!(
        j["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["verdict"] != "duplicate"),
        "{j}"
    );
    assert_eq!(
        j["results"][0]["path"], "lore/sqlite-wal-checkpoint-starvation.md",
        "{j}"
    );
    let notice = j["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("the draft has 3 distinct words")
            && notice.contains("only if they share half their words"),
        "{j}"
    );
    assert!(
        j["rule"]
            .as_str()
            .unwrap()
            .contains("words overlap >= 0.5 for a draft of under 10 words"),
        "{j}"
    );
    // A draft of its own length still finds its duplicate, and a copy of a short note is
    // one: they share all their words.
    assert_eq!(
        verdict(&b.ok(&["similar", "--text", DUPLICATE, "--json"]).json()),
        "duplicate"
    );
    let tiny = "# git stash only some hunks\n\nUse git stash -p to stash only some of the hunks.\n";
    b.write("lore/stash-some-hunks.md", tiny);
    b.ok(&["index"]);
    let j = b.ok(&["similar", "--text", tiny, "--json"]).json();
    assert_eq!(verdict(&j), "duplicate", "{j}");
    assert_eq!(j["results"][0]["path"], "lore/stash-some-hunks.md", "{j}");
    assert!(j["notice"].is_null(), "{j}");
}

/// Without a model a title alone makes no duplicate: a brain kept in topic folders has a
/// `json.md` in each (`similar --all` grouped 149 such sets of notes-mix, `similar NOTE`
/// called 36 of 60 random notes a duplicate). Words in common still do.
#[test]
fn without_a_model_a_title_alone_makes_no_duplicate() {
    let b = Brain::new();
    let go = "# JSON\n\nDecode a request body with json.NewDecoder(r.Body).Decode(&v), and \
              encode a struct with json.Marshal; field tags rename keys.\n";
    b.write("go/json.md", go);
    b.write(
        "javascript/json.md",
        "# JSON\n\nJSON.stringify(obj, null, 2) pretty prints an object; JSON.parse turns \
         text back into one.\n",
    );
    b.write(
        "python/json.md",
        "# JSON\n\nThe json module: dumps with indent for humans, loads for machines.\n",
    );
    for i in 0..6 {
        b.write(
            &format!("misc/note-{i}.md"),
            format!("# Note {i}\n\nSomething else entirely, number {i}.\n"),
        );
    }
    b.ok(&["index"]);
    let j = b.ok(&["similar", "--all", "--json"]).json();
    assert_eq!(j["mode"], "keywords", "{j}");
    assert_eq!(j["clusters"], serde_json::json!([]), "{j}");
    let j = b.ok(&["similar", "go/json.md", "--json"]).json();
    assert_ne!(verdict(&j), "duplicate", "{j}");
    assert!(
        j["rule"].as_str().unwrap().contains("words overlap >= 0.5"),
        "{j}"
    );
    let j = b
        .ok(&[
            "similar",
            "--text",
            "# JSON\n\nIn Rust, serde_json::from_str reads it.",
            "--json",
        ])
        .json();
    assert_ne!(verdict(&j), "duplicate", "{j}");
    // A copy kept elsewhere is a duplicate, and a cluster.
    b.write("backup/json.md", go);
    b.ok(&["index"]);
    let j = b.ok(&["similar", "--all", "--json"]).json();
    assert_eq!(
        j["clusters"][0]["paths"],
        serde_json::json!(["backup/json.md", "go/json.md"]),
        "{j}"
    );
    let j = b.ok(&["similar", "go/json.md", "--json"]).json();
    assert_eq!(verdict(&j), "duplicate", "{j}");
}

/// `--no-sync` answers from the index as it stands and writes nothing: a note synced but
/// not embedded yet stays so (the note's passages were embedded first whatever the flag).
#[test]
fn similar_on_a_note_with_no_sync_embeds_nothing() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    b.write(
        "lore/fresh-lesson.md",
        "# Fresh lesson\n\nRetries need jitter or they stampede the database.\n",
    );
    // `check` syncs every note (it exits 1: the example holds a broken link on purpose).
    b.run(&["check"]);
    let pending = |b: &Brain| b.ok(&["status", "--json"]).json()["pending_chunks"].clone();
    let before = pending(&b);
    assert!(
        before.as_u64().unwrap() > 0,
        "synced, not embedded: {before}"
    );
    b.ok(&["similar", "lore/fresh-lesson.md", "--no-sync", "--json"]);
    assert_eq!(pending(&b), before);
    // Without the flag, it is embedded first, as a search's sync does.
    let j = b.ok(&["similar", "lore/fresh-lesson.md", "--json"]).json();
    assert_eq!(pending(&b), 0, "{j}");
}

/// `--top` up to its limit is honoured in a brain that holds that many notes near the
/// draft: the candidates by meaning were 30, so `--top 50` showed 36 to 46.
#[test]
fn top_fifty_shows_fifty_notes_when_the_brain_has_them() {
    let b = Brain::new().model();
    for i in 0..60 {
        b.write(
            &format!("lore/retry-{i:02}.md"),
            format!("# Retry lesson {i}\n\nRetries need jitter and a backoff, case {i}.\n"),
        );
    }
    b.ok(&["index"]);
    let j = b
        .ok(&[
            "similar",
            "--text",
            "Retries without jitter pile up on the server at once.",
            "--top",
            "50",
            "--json",
        ])
        .json();
    assert_eq!(j["results"].as_array().unwrap().len(), 50, "{j}");
}

#[test]
fn the_backend_answers_similar_like_the_cli() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    let _server = b.serve_synced(&[]);
    let warm = b.ok(&["similar", "--text", DUPLICATE, "--json"]).json();
    let cold = b
        .ok(&["similar", "--text", DUPLICATE, "--json", "--no-daemon"])
        .json();
    assert_eq!(warm["results"], cold["results"]);
    assert_eq!(verdict(&warm), "duplicate");
}

/// What a client has just written is there for the commands that name it or read every
/// note, though the backend's watcher may not have seen it yet, and is embedded; a note
/// `brain new` writes is seen by the next capture; and a draft longer than the
/// backend reads in one request is answered in-process, without a warning.
#[test]
fn the_backend_answers_about_a_note_written_a_moment_ago() {
    let b = Brain::example().model();
    b.ok(&["index"]);
    let _server = b.serve_synced(&[]);
    for i in 0..3 {
        let path = format!("idea/just-written-{i}.md");
        b.write(
            &path,
            format!(
                "---\ntype: idea\ntags: [retries]\ncreated: 2026-12-04\nphase: Exploring\n---\n\
                 # Just written {i}\n\nSee [[lore/sqlite-busy-timeout]] before retrying.\n"
            ),
        );
        // The note it links to lists it among the notes linking there at once: a links
        // answer depends on other notes than the one named (it was missing for 0.3 s).
        let target = "lore/sqlite-busy-timeout.md";
        let incoming = b.ok(&["links", target, "--json"]).json()["incoming"].to_string();
        assert!(incoming.contains(&path), "{incoming}");
        let similar = b.ok(&["similar", &path, "--json"]).json();
        assert!(similar["verdict"].is_string(), "{similar}");
        // Judged as a process without a backend judges it: its passages embedded first
        // and scored both ways, not from its side alone until the backend embeds it.
        assert!(
            similar["rule"].as_str().unwrap().contains("both ways"),
            "{similar}"
        );
        let links = b.ok(&["links", &path, "--json"]).json();
        assert!(
            links.to_string().contains("lore/sqlite-busy-timeout"),
            "{links}"
        );
        let dry = b.ok(&["index-md"]).stdout();
        assert!(dry.contains(&format!("[[idea/just-written-{i}]]")), "{dry}");
    }
    // The one-note sync those commands made leaves the watcher nothing to do: the backend
    // still embeds the notes' passages (they once waited until another file changed).
    eventually(Duration::from_secs(30), || {
        let status = b.ok(&["status", "--json"]).json();
        (status["pending_chunks"] == 0).then_some(())
    });

    // Two captures of one title in a row: the second sees the first at once.
    b.ok(&["new", "idea", "Axolotl tank water temperature"]);
    let again = b.run(&["new", "idea", "Axolotl tank water temperatures"]);
    assert_eq!(again.code(), 1, "{}", again.stderr());
    assert!(
        again
            .stderr()
            .contains("idea/axolotl-tank-water-temperature.md"),
        "{}",
        again.stderr()
    );

    let big = "Retries need jitter so that clients do not come back together.\n".repeat(20_000);
    assert!(big.len() > 1 << 20);
    b.write("../big-draft.md", &big);
    let run = b.ok(&[
        "similar",
        b.root.join("../big-draft.md").to_str().unwrap(),
        "--json",
    ]);
    assert!(
        !run.stderr().contains("stopped answering"),
        "{}",
        run.stderr()
    );
    assert!(run.json()["verdict"].is_string());
}

/// A model that is installed but has not embedded the notes yet is not called missing:
/// fetching it again would not help, `brain index` would.
#[test]
fn notes_not_embedded_yet_say_so_and_not_that_the_model_is_missing() {
    let b = Brain::example().model();
    let run = b.ok(&["similar", "--text", DUPLICATE, "--json", "--no-daemon"]);
    let err = run.stderr();
    assert!(err.contains("not embedded"), "{err}");
    assert!(err.contains("titles only until then"), "{err}");
    assert!(!err.contains("model fetch"), "{err}");
    assert_eq!(run.json()["mode"], "keywords");
}

/// A draft the model cannot read (Chinese: one unknown token per character to MiniLM)
/// would align with any other such text near 1.0; its verdict comes from words and titles,
/// and says why. A duplicate in words is still found.
#[test]
fn a_draft_the_model_cannot_read_is_judged_by_its_words() {
    let b = Brain::new().model();
    b.write(
        "db.md",
        "# 数据库连接池\n\n连接池上限只有十个，排查发现是配置错误。把上限调到五十以后恢复正常。\n",
    );
    b.write("rocket.md", "# 🚀✅\n\n🚀🚀✅✅ 🚀✅\n");
    b.write(
        "retry.md",
        "# Retries\n\nRetry with jitter so clients do not stampede.\n",
    );
    b.ok(&["index"]);
    let j = b
        .ok(&[
            "similar",
            "--text",
            "# 服务器监控\n\n监控服务器的内存和磁盘使用情况。",
            "--json",
        ])
        .json();
    assert_eq!(j["mode"], "keywords", "{j}");
    assert!(
        j["notice"]
            .as_str()
            .unwrap_or_default()
            .contains("does not know"),
        "{j}"
    );
    assert_ne!(j["verdict"], "duplicate", "{j}");
    let j = b
        .ok(&[
            "similar",
            "--text",
            "# 数据库连接池\n\n连接池上限只有十个，排查发现是配置错误；上限调到五十以后恢复正常。",
            "--json",
        ])
        .json();
    assert_eq!(j["verdict"], "duplicate", "{j}");
    assert_eq!(
        crate::harness::paths(&j).first().map(String::as_str),
        Some("db.md")
    );
    // Korean is never `[UNK]` to MiniLM (its normaliser spells each syllable as jamo, which
    // the vocabulary holds), but jamo carry no meaning the model learnt: a draft on
    // retries was once "related" to a kimchi recipe, passages aligned 0.82.
    b.write(
        "kimchi.md",
        "# 김치 만드는 법\n\n배추를 소금에 절이고 양념을 버무려 발효시킵니다.\n",
    );
    b.ok(&["index"]);
    let j = b
        .ok(&[
            "similar",
            "--text",
            "재시도와 지터가 없으면 서버가 죽는다. 지수 백오프만으로는 부족하다.",
            "--json",
        ])
        .json();
    assert_eq!(j["mode"], "keywords", "{j}");
    assert_eq!(j["verdict"], "new", "{j}");
}
