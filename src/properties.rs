//! Property tests of every parser that reads outside input: note files, queries, the
//! socket's request lines, `PATH:LINE:COUNT`, wikilinks, schema files, slugs, date bounds,
//! `--where` conditions. Each runs a few hundred generated inputs in the normal suite; the
//! same parsers are fuzzed for longer by `scripts/fuzz.sh`.

use proptest::prelude::*;

use crate::index::{chunk_note, Condition};
use crate::kb::links;
use crate::passage::NoteRef;
use crate::search::query::Query;

/// Text that looks like markdown more often than random bytes would.
fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("---\n".to_string()),
        Just("# ".to_string()),
        Just("## ".to_string()),
        Just("```\n".to_string()),
        Just("~~~\n".to_string()),
        Just("`".to_string()),
        Just("[[".to_string()),
        Just("]]".to_string()),
        Just("|".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("title: x\n".to_string()),
        Just("tags: [a, b]\n".to_string()),
        Just("- item\n".to_string()),
        Just("<b>".to_string()),
        "[a-z /:#é]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any bytes parse; the plain text keeps one line per body line (the line map search
    /// results rely on), and every passage points at lines of the file.
    #[test]
    fn any_note_parses_line_aligned_and_chunks_inside_the_file(
        text in markdownish(),
        junk in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        for bytes in [text.as_bytes().to_vec(), junk] {
            let (note, _) = crate::note::parse("lore/x.md", &bytes);
            prop_assert!(note.body_line >= 1);
            // Never more text lines than body lines: a hit's line is always a line of the file.
            prop_assert!(note.text.split('\n').count() <= note.body.split('\n').count(),
                "{} text lines for {} body lines", note.text.split('\n').count(), note.body.split('\n').count());
            // Lines as brain reads them (a file of lone CRs has its CRs as line ends).
            let total = crate::note::mac_lines(&String::from_utf8_lossy(&bytes))
                .split('\n')
                .count() as u32
                + 1;
            for c in chunk_note(&note) {
                prop_assert!(c.line >= 1 && c.line <= c.end_line && c.end_line <= total,
                    "chunk {}..{} of {} lines", c.line, c.end_line, total);
            }
        }
    }

    /// Whatever is typed, the MATCH expressions built from it are valid FTS5: user text
    /// never reaches SQLite as syntax.
    #[test]
    fn any_query_becomes_valid_fts5(input in prop_oneof![
        any::<String>(),
        "[-\"*()a-z:^+ ]{0,30}",
        "(NOT|AND|OR|NEAR|-|--|\"|\\*|\\^|[a-z]{1,6}| ){0,12}",
    ]) {
        let q = Query::parse(&input);
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(title, tags, body, tokenize = 'porter unicode61 remove_diacritics 2');
             INSERT INTO t VALUES ('a title', 'tag', 'some body text -xzf --release');",
        ).unwrap();
        for expr in [q.to_match(), q.excluded_match()].into_iter().flatten() {
            let run = conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&expr], |r| r.get::<_, i64>(0));
            prop_assert!(run.is_ok(), "{input:?} -> {expr:?}: {run:?}");
        }
    }

    /// What the full-text index holds reads back as the note's text (snippets, bodies and
    /// line numbers rely on it), whatever the text is; and for text of words, names with
    /// symbols and CJK, a query of it marked the same way finds it.
    #[test]
    fn indexed_text_reads_back_as_written(
        any_text in any::<String>(),
        words in "([a-zA-Z_1-9é]{0,3}(\\+\\+|#|\\+|##)?[ .,(\n中文]?){0,12}",
    ) {
        use crate::index::fts_text;
        use crate::text::{cjk, symbols};
        for text in [&any_text, &words] {
            prop_assume!(!text.contains([cjk::MARK, symbols::PLUS, symbols::SHARP]));
            let held = fts_text::indexed(text);
            prop_assert_eq!(fts_text::shown(&held), fts_text::visible(text));
        }
        // (Any text is not searched for: a phrase of nothing but characters FTS5 drops,
        // combining marks among them, matches nothing.)
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2');",
        ).unwrap();
        conn.execute("INSERT INTO t VALUES (?1)", [fts_text::indexed(&words).as_ref()]).unwrap();
        if let Some(expr) = Query::parse(&format!("\"{words}\"")).to_match() {
            let found = conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&expr], |r| r.get::<_, i64>(0));
            prop_assert!(matches!(found, Ok(1)), "{words:?} -> {expr:?}: {found:?}");
        }
    }

    /// `PATH[:LINE[:COUNT]]` never panics, and what it accepts it reads back the same.
    #[test]
    fn note_refs_parse_and_round_trip(
        spec in any::<String>(),
        path in "[a-z/._-]{1,20}[a-z]",
        line in 1u32..100_000,
        count in 1u32..1000,
    ) {
        let _ = NoteRef::parse(&spec);
        let r = NoteRef::parse(&format!("{path}:{line}:{count}")).unwrap();
        prop_assert_eq!((r.path.as_str(), r.line, r.count), (path.as_str(), Some(line), Some(count)));
        let r = NoteRef::parse(&format!("{path}:{line}")).unwrap();
        prop_assert_eq!((r.path.as_str(), r.line, r.count), (path.as_str(), Some(line), None));
    }

    /// Links come out with a target and a line of the text, never from inside code.
    #[test]
    fn links_are_well_formed(body in markdownish(), first in 1u32..50) {
        let lines = body.lines().count() as u32;
        for l in links::extract(&body, first) {
            prop_assert!(!l.target.is_empty() && !l.target.contains("]]") && !l.target.contains('|'));
            prop_assert!(l.line >= first && l.line < first + lines.max(1));
        }
        let fenced = format!("```\n{}\n```\n", body.replace("```", "").replace("~~~", ""));
        prop_assert!(links::extract(&fenced, 1).is_empty(), "a link inside a fence: {fenced:?}");
    }

    /// A schema file either parses or gives one line naming the file.
    #[test]
    fn schema_files_parse_or_say_why_in_one_line(text in markdownish()) {
        let file = std::path::Path::new("/b/lore/SCHEMA.md");
        if let Err(e) = crate::kb::Schema::parse("lore", "lore/SCHEMA.md", file, &text) {
            let msg = e.to_string();
            prop_assert!(msg.starts_with("/b/lore/SCHEMA.md"), "{msg}");
            prop_assert_eq!(msg.lines().count(), 1, "{}", msg);
        }
    }

    /// Slugs are kebab-case ASCII of bounded length, or nothing.
    #[test]
    fn slugs_are_kebab_case(title in any::<String>()) {
        if let Some(slug) = crate::kb::slug::slugify(&title) {
            prop_assert!(crate::kb::slug::is_kebab(&slug), "{title:?} -> {slug:?}");
            prop_assert!(slug.len() <= crate::kb::slug::MAX_SLUG);
        }
    }

    /// Request lines of any shape decode or are refused; date bounds and `--where`
    /// conditions parse or say what they expect.
    #[test]
    fn requests_bounds_and_conditions_never_panic(line in any::<String>(), spec in "[-a-z0-9!=:_ ]{0,16}") {
        let _ = serde_json::from_str::<crate::service::protocol::Request>(&line);
        let _ = serde_json::from_str::<crate::service::protocol::Request>(
            &format!(r#"{{"v":1,"op":"search","query":{},"where":[{}]}}"#,
                serde_json::Value::String(line.clone()), serde_json::Value::String(spec.clone())));
        for s in [&line, &spec] {
            match crate::date::parse_bound(s, crate::date::today()) {
                Ok(_) => {}
                Err(e) => prop_assert!(e.contains("30d, 2w or YYYY-MM-DD")),
            }
            if let Ok(c) = Condition::parse(s) {
                prop_assert!(!c.field.is_empty());
            }
        }
    }
}

/// Inputs the fuzzer found (scripts/fuzz.sh), kept as plain tests.
mod found_by_fuzzing {
    use super::*;

    #[test]
    fn a_nul_inside_a_quoted_term_no_longer_leaves_the_fts5_quote_open() {
        crate::fuzzing::query("NOT AND OR D`A \u{1}\0\0xa b)+++\u{fffd}^x \"");
        crate::fuzzing::query("\0");
        assert_eq!(
            Query::parse("wal\0checkpoint").words(),
            ["wal", "checkpoint"]
        );
    }

    #[test]
    fn a_multi_line_type_in_a_schema_is_quoted_back_on_one_line() {
        let text = "---\ntype: loreArequ\u{e9}red:[ l%atrole\n\n   Notes\n---\n# job\n";
        let err = crate::kb::Schema::parse(
            "lore",
            "lore/SCHEMA.md",
            std::path::Path::new("/b/lore/SCHEMA.md"),
            text,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
