//! Golden outputs of the commands scripts and the skill read, on `examples/brain`: a change
//! that moves a byte of `brain search` (human, `--json`, `--explain`) or `brain status`
//! fails here and shows the diff. What legitimately differs between runs (temp paths, the
//! index's hash-named folder, times, sizes, durations) is masked first; JSON numbers are
//! rounded to 4 decimals, since the last bits of a float differ between CPUs.
//!
//! After a deliberate change: `BRAIN_BLESS=1 cargo test --test it golden` rewrites the files
//! in `tests/it/golden/`; review them in the diff like code.

use std::path::PathBuf;

use crate::harness::{repo, Brain};
use regex::Regex;

/// One command whose output is pinned.
struct Case {
    file: &'static str,
    args: &'static [&'static str],
}

/// Without a model: keywords only (and the notice hybrid prints then).
const KEYWORDS: &[Case] = &[
    Case {
        file: "index.txt",
        args: &["index"],
    },
    Case {
        file: "bm25.txt",
        args: &["search", "feature flag cleanup", "--mode", "bm25"],
    },
    Case {
        file: "nomodel-explain.txt",
        args: &[
            "search",
            "how do i prevent silent failures from gitignore patterns",
            "--explain",
        ],
    },
    Case {
        file: "bm25.json",
        args: &[
            "search",
            "flag cleanup",
            "--json",
            "--mode",
            "bm25",
            "--type",
            "lore",
        ],
    },
    Case {
        file: "status-nomodel.txt",
        args: &["status"],
    },
];

/// With the test model, after `brain index` embedded every passage.
const WITH_MODEL: &[Case] = &[
    Case {
        file: "hybrid-explain.txt",
        args: &[
            "search",
            "how do i prevent silent failures from gitignore patterns",
            "--explain",
        ],
    },
    Case {
        file: "hybrid-explain.json",
        args: &[
            "search",
            "how do i prevent silent failures from gitignore patterns",
            "--explain",
            "--json",
        ],
    },
    Case {
        file: "hybrid.json",
        args: &["search", "tokio::select! cancellation", "--json"],
    },
    Case {
        file: "semantic.txt",
        args: &["search", "why did the deploy hang", "--mode", "semantic"],
    },
    Case {
        file: "hybrid.txt",
        args: &["search", "why did the deploy hang"],
    },
    Case {
        file: "status.txt",
        args: &["status"],
    },
    Case {
        file: "status.json",
        args: &["status", "--json"],
    },
];

fn golden_dir() -> PathBuf {
    repo().join("tests/it/golden")
}

/// Masks what differs between two runs of the same commands.
fn normalise(b: &Brain, text: &str) -> String {
    let tmp = b.tmp.path().to_string_lossy().into_owned();
    let text = text.replace(&tmp, "$TMP");
    let masks: &[(&str, &str)] = &[
        (r"brain-[0-9a-f]{12}", "brain-HASH"),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \([^)]*\)", "DATE"),
        (r"in \d+(\.\d+)? (ms|s)\b( \(\d+/s\))?", "in TIME"),
        (r"\(\d+(\.\d+)? (B|kB|MB|GB)\)", "(SIZE)"),
        (
            r#""(index_bytes|last_sync_at|took_ms|took_us)": ?\d+"#,
            "\"$1\": N",
        ),
    ];
    let mut text = text;
    for (pattern, with) in masks {
        text = Regex::new(pattern)
            .expect("mask pattern")
            .replace_all(&text, *with)
            .into_owned();
    }
    text
}

/// Rounds every number written with more than 4 decimals (the JSON floats) to 4, in place:
/// the text around them, key order included, stays as printed.
fn round_floats(text: &str) -> String {
    let long = Regex::new(r"-?\d+\.\d{5,}(e-?\d+)?").expect("number pattern");
    long.replace_all(text, |c: &regex::Captures<'_>| {
        let x: f64 = c[0].parse().unwrap_or(0.0);
        let rounded = format!("{x:.4}");
        rounded
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    })
    .into_owned()
}

fn check(b: &Brain, cases: &[Case], mismatches: &mut Vec<String>) {
    let bless = std::env::var_os("BRAIN_BLESS").is_some_and(|v| v == "1");
    for case in cases {
        let r = b
            .command()
            .env("BRAIN_NO_DAEMON", "1")
            .args(case.args)
            .output();
        let r = r.expect("run brain");
        let mut got = String::from_utf8_lossy(&r.stderr).into_owned();
        got.push_str(&String::from_utf8_lossy(&r.stdout));
        let got = round_floats(&normalise(b, &got));
        let path = golden_dir().join(case.file);
        if bless {
            std::fs::create_dir_all(golden_dir()).expect("mkdir golden");
            std::fs::write(&path, &got).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (BRAIN_BLESS=1 writes it)", path.display()));
        if got != want {
            mismatches.push(format!(
                "brain {:?} differs from {}:\n{}",
                case.args,
                path.display(),
                diff(&want, &got)
            ));
        }
    }
}

/// The lines that differ, `-` expected and `+` got, with their line numbers.
fn diff(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let mut out = String::new();
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i).copied(), g.get(i).copied());
        if a != b {
            out.push_str(&format!("{:>4} - {}\n", i + 1, a.unwrap_or("")));
            out.push_str(&format!("{:>4} + {}\n", i + 1, b.unwrap_or("")));
        }
    }
    out
}

#[test]
fn search_and_status_output_is_byte_for_byte_the_same() {
    let b = Brain::example();
    let mut mismatches = Vec::new();
    check(&b, KEYWORDS, &mut mismatches);
    let b = b.model();
    b.ok(&["index"]);
    check(&b, WITH_MODEL, &mut mismatches);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_masks_hide_only_what_varies() {
    let b = Brain::new();
    let tmp = b.tmp.path().display().to_string();
    let text = format!(
        "index:     {tmp}/data/indexes/brain-8550e72f85d4/brain.sqlite (1.3 MB)\n\
         last sync: 2026-12-01 09:12:36 UTC (just now): +0 ~0 -0 in 13 ms\n\
         embedded 154 passages with all-minilm-l6-v2 in 14.42 s (11/s)\n\
         notes:     34 (idea 9)"
    );
    assert_eq!(
        normalise(&b, &text),
        "index:     $TMP/data/indexes/brain-HASH/brain.sqlite (SIZE)\n\
         last sync: DATE: +0 ~0 -0 in TIME\n\
         embedded 154 passages with all-minilm-l6-v2 in TIME\n\
         notes:     34 (idea 9)"
    );
    assert_eq!(
        round_floats("{\"score\":0.93673505489,\"rank\":1,\"x\":1.234567e-7,\"y\":13.06}\n"),
        "{\"score\":0.9367,\"rank\":1,\"x\":0,\"y\":13.06}\n"
    );
}
