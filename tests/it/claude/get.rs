//! `brain get` as an assistant uses it: straight after a search, by the hit's path and line.

use crate::harness::Brain;

#[test]
fn get_reads_the_passage_a_hit_points_at() {
    let b = Brain::example();
    let j = b
        .ok(&["search", "busy_timeout", "--mode", "bm25", "--json"])
        .json();
    let hit = &j["results"][0];
    let (path, line) = (hit["path"].as_str().unwrap(), hit["line"].as_u64().unwrap());
    let out = b.ok(&["get", &format!("{path}:{line}:3")]).stdout();
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("{path}:{line}-{} (of 35 lines)", line + 2)
    );
    let first = lines.next().unwrap();
    assert!(
        first.trim_start().starts_with(&format!("{line}  ")),
        "{first}"
    );
    assert_eq!(out.lines().count(), 4);
    let around = b.ok(&["get", &format!("{path}:{line}")]).stdout();
    assert!(
        around.contains("PRAGMA busy_timeout"),
        "the default window covers the passage:\n{around}"
    );
}

#[test]
fn get_json_and_absolute_paths_inside_the_brain() {
    let b = Brain::example();
    let abs = b.root.join("lore/sqlite-busy-timeout.md");
    let j = b.ok(&["get", abs.to_str().unwrap(), "--json"]).json();
    assert_eq!(j["path"], "lore/sqlite-busy-timeout.md");
    assert_eq!(
        (
            j["start_line"].as_u64(),
            j["end_line"].as_u64(),
            j["total_lines"].as_u64()
        ),
        (Some(1), Some(35), Some(35))
    );
    assert!(j["text"].as_str().unwrap().starts_with("---\n"));
    let j = b
        .ok(&["get", "lore/sqlite-busy-timeout.md:34", "--json"])
        .json();
    assert_eq!(
        (j["start_line"].as_u64(), j["end_line"].as_u64()),
        (Some(16), Some(35)),
        "near the end the window slides back: still 20 lines"
    );
    // From a folder of the brain, a path relative to it; one to a file outside the brain
    // is refused as outside, not as a missing note.
    let from_lore = |spec: &str| {
        let out = b
            .command()
            .current_dir(b.root.join("lore"))
            .args(["get", spec, "--json"])
            .output()
            .unwrap();
        crate::harness::Run(out)
    };
    let r = from_lore("sqlite-busy-timeout.md:34");
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["path"], "lore/sqlite-busy-timeout.md");
    let r = b.run(&["get", "outside.md"]);
    assert!(r.stderr().contains("no such note"), "{}", r.stderr());
    std::fs::write(b.tmp.path().join("outside.md"), "# Out\n").unwrap();
    let r = b.run(&["get", "outside.md"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("outside the brain folder"),
        "{}",
        r.stderr()
    );
}

#[test]
fn get_refuses_bad_specs_with_one_line_and_exit_2() {
    let b = Brain::example();
    let long = format!("lore/{}.md", "x".repeat(100_000));
    std::fs::write(b.root.join("lore/binary.md"), b"PK\x03\x04\0\0 not text").unwrap();
    std::fs::write(b.tmp.path().join("secret.md"), "s").unwrap();
    for spec in [
        "../secret.md",
        "lore/sqlite-busy-timeout.md:0",
        "lore/sqlite-busy-timeout.md:36",
        "lore/missing.md",
        "lore",
        // Named as a link names a note, but no note is so named.
        "lore/nope",
        " ",
        "lore/binary.md",
        "lore/sqlite-busy-timeout.md:1:99999999999",
        &long,
    ] {
        let r = b.run(&["get", spec]);
        assert_eq!(r.code(), 2, "{spec}: {}", r.stderr());
        assert!(r.stdout().is_empty(), "{spec}: {}", r.stdout());
        let err = r.stderr();
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{spec}: {err}"
        );
        assert!(!err.contains("panicked"), "{spec}: {err}");
    }
    assert!(b
        .run(&["get", "../secret.md"])
        .stderr()
        .contains("outside the brain folder"));
    // A path no file system holds is not quoted back whole, by get, links or similar.
    for args in [&["get", &long][..], &["links", &long], &["similar", &long]] {
        let r = b.run(args);
        let err = r.stderr();
        let head = &err[..err.len().min(300)];
        assert_eq!(r.code(), 2, "{head}");
        assert!(
            err.len() < 200 && err.contains("a path of 100008 bytes"),
            "{head}"
        );
    }
}
