//! Tool answers as text for an assistant. Close to the CLI's human format (the skill
//! explains one format, not two), with what an assistant needs to act on a hit put where it
//! looks: `path:line` ready to pass to `get`, and the absolute path to edit the file.

use std::fmt::Write as _;
use std::path::Path;

use brain::passage::Passage;
use brain::search::SearchResponse;
use brain::StatusReport;

use super::super::print;

/// ```text
/// [1] [lore] lore/flag-cleanup-test-rework.md:9
///     Flag Cleanup: Rework Tests, Don't Delete Them  (fused=0.981 bm25=#1 sem=#1)
///     When cleaning up a «feature» «flag», tests using it are testing...
///
/// (2 results, mode: hybrid; notes in /home/me/.brain)
/// ```
pub fn search(r: &SearchResponse, root: &Path) -> String {
    let mut out = String::new();
    for (i, hit) in r.results.iter().enumerate() {
        // A control character in a name (a newline, from a file named so) would break the
        // one-block-per-hit shape: shown as the CLI shows it (`--json` has the name as is).
        let path = print::shown(&hit.path);
        let _ = writeln!(out, "[{}] [{}] {path}:{}", i + 1, hit.kind, hit.line);
        let _ = writeln!(
            out,
            "    {}  ({})",
            print::shown(&hit.title),
            print::annotation(r.mode, hit)
        );
        if !hit.snippet.is_empty() {
            let _ = writeln!(out, "    {}", hit.snippet);
        }
        out.push('\n');
    }
    let count = match r.results.len() {
        0 => "no results".to_string(),
        1 => "1 result".to_string(),
        n => format!("{n} results"),
    };
    let _ = writeln!(
        out,
        "({count}, mode: {}; notes in {})",
        r.mode,
        root.display()
    );
    if let Some(notice) = &r.notice {
        let _ = writeln!(out, "note: {notice}");
    }
    out
}

/// `brain get`'s numbered lines, then the file to edit.
pub fn passage(p: &Passage) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = super::super::get::print(&mut out, p, super::super::paint::Paint::OFF);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    let _ = writeln!(text, "(file: {})", p.abs_path);
    text
}

/// The `brain check` report.
pub fn check(r: &brain::kb::CheckReport) -> String {
    let mut out = Vec::new();
    let _ = crate::cli::kb::print_check(&mut out, r);
    with_notice(String::from_utf8_lossy(&out).trim(), r.notice.as_deref())
}

/// `text`, then the notice the CLI would print on stderr (the model has no stderr).
fn with_notice(text: &str, notice: Option<&str>) -> String {
    match notice {
        Some(n) => format!("{text}\nnote: {n}"),
        None => text.to_string(),
    }
}

/// The `brain links` report.
pub fn links(r: &brain::kb::LinksReport) -> String {
    let mut out = Vec::new();
    let _ = crate::cli::kb::print_links(&mut out, r);
    with_notice(String::from_utf8_lossy(&out).trim(), r.notice.as_deref())
}

/// The `brain status` block.
pub fn status(s: &StatusReport, why: print::NoBackend, told: Option<&str>) -> String {
    let mut out = Vec::new();
    let _ = print::status_told(&mut out, s, why, told);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain::search::{Hit, Mode};

    fn hit(bm25: Option<u32>, sem: Option<u32>) -> Hit {
        Hit {
            path: "lore/a.md".into(),
            abs_path: "/b/lore/a.md".into(),
            kind: "lore".into(),
            title: "A".into(),
            tags: vec![],
            date: "2026-10-01".into(),
            snippet: "the «word»".into(),
            score: 0.0325,
            bm25_rank: bm25,
            sem_rank: sem,
            line: 7,
        }
    }

    #[test]
    fn hits_carry_path_line_and_ranks() {
        let r = SearchResponse {
            query: "word".into(),
            mode: Mode::Hybrid,
            results: vec![hit(Some(1), None)],
            recall_id: Some(1),
            notice: None,
            explain: None,
        };
        let text = search(&r, Path::new("/b"));
        assert_eq!(
            text,
            "[1] [lore] lore/a.md:7\n    A  (fused=0.033 bm25=#1 sem=-)\n    the «word»\n\n(1 result, mode: hybrid; notes in /b)\n"
        );
    }

    #[test]
    fn a_control_character_in_a_name_keeps_each_hit_to_its_block() {
        let mut odd = hit(Some(1), None);
        odd.path = "lore/new\nline.md".into();
        odd.title = "A\ttab".into();
        let r = SearchResponse {
            query: "x".into(),
            mode: Mode::Hybrid,
            results: vec![odd],
            recall_id: Some(1),
            notice: None,
            explain: None,
        };
        let text = search(&r, Path::new("/b"));
        assert!(
            text.starts_with("[1] [lore] lore/new\u{FFFD}line.md:7\n    A\u{FFFD}tab  ("),
            "{text}"
        );
    }

    #[test]
    fn empty_answer_says_so_and_keeps_the_notice() {
        let r = SearchResponse {
            query: "x".into(),
            mode: Mode::Bm25,
            results: vec![],
            recall_id: Some(1),
            notice: Some("semantic search off: run 'brain model fetch'".into()),
            explain: None,
        };
        let text = search(&r, Path::new("/b"));
        assert!(
            text.starts_with("(no results, mode: bm25; notes in /b)\n"),
            "{text}"
        );
        assert!(
            text.ends_with("note: semantic search off: run 'brain model fetch'\n"),
            "{text}"
        );
    }
}
