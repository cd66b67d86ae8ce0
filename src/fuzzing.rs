//! Entry points for `cargo fuzz` (built only with `--cfg fuzzing`, which cargo-fuzz sets):
//! thin wrappers over the crate-private parsers, so the fuzz targets in `fuzz/` reach what
//! outside input reaches, and nothing else is made public.

/// A note file: frontmatter, markdown, plain text with its line map, passages, links.
pub fn note(bytes: &[u8]) {
    let (note, _) = crate::note::parse("lore/fuzz.md", bytes);
    let lines = crate::note::mac_lines(&String::from_utf8_lossy(bytes))
        .split('\n')
        .count() as u32
        + 1;
    assert!(note.text.split('\n').count() <= note.body.split('\n').count());
    for c in crate::index::chunk_note(&note) {
        assert!(c.line >= 1 && c.line <= c.end_line && c.end_line <= lines);
    }
    for l in crate::kb::links::extract(&note.body, note.body_line) {
        assert!(!l.target.is_empty());
    }
}

/// A query: parsed, and its MATCH expressions run against a real FTS5 table (they must
/// always be valid FTS5).
pub fn query(text: &str) {
    thread_local! {
        static DB: rusqlite::Connection = {
            let conn = rusqlite::Connection::open_in_memory().expect("in-memory SQLite");
            conn.execute_batch(
                "CREATE VIRTUAL TABLE t USING fts5(title, tags, body, tokenize = 'porter unicode61 remove_diacritics 2');
                 INSERT INTO t VALUES ('a title', 'tag', 'some body -xzf --release');",
            )
            .expect("FTS5 table");
            conn
        };
    }
    let q = crate::search::query::Query::parse(text);
    DB.with(|db| {
        for expr in [q.to_match(), q.excluded_match()].into_iter().flatten() {
            let run = db.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&expr], |r| {
                r.get::<_, i64>(0)
            });
            assert!(run.is_ok(), "{text:?} -> {expr:?}: {run:?}");
        }
    });
}

/// A socket request line.
pub fn request(line: &[u8]) {
    let _ = serde_json::from_slice::<crate::service::protocol::Request>(line);
}

/// `brain get`'s `PATH[:LINE[:COUNT]]`, a `--since` bound and a `--where` condition.
pub fn specs(text: &str) {
    let _ = crate::passage::NoteRef::parse(text);
    let _ = crate::date::parse_bound(text, crate::date::today());
    let _ = crate::index::Condition::parse(text);
}

/// A type's `SCHEMA.md`.
pub fn schema(text: &str) {
    let file = std::path::Path::new("/b/lore/SCHEMA.md");
    if let Err(e) = crate::kb::Schema::parse("lore", "lore/SCHEMA.md", file, text) {
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }
}
