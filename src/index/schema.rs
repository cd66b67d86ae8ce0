//! Numbered, append-only migrations. A migration is never edited once released and never
//! drops user data: the recall log in particular survives every upgrade. Derived data
//! (the FTS index, chunks, vectors) may be rebuilt, but only by adding a migration.

use rusqlite::{Connection, OptionalExtension};

/// Migrations in order; the schema version is the number of migrations applied.
const MIGRATIONS: &[&str] = &[
    // 1: notes, full-text index, chunks and their vectors, the recall log.
    r#"
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;

    -- AUTOINCREMENT: ids are never reused, so a cached vector matrix can never point a
    -- deleted note's id at a newer note.
    CREATE TABLE notes (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        path       TEXT NOT NULL UNIQUE,
        type       TEXT NOT NULL,
        title      TEXT NOT NULL,
        title_key  TEXT NOT NULL,                -- title as lowercase words: exact-name lookups
        stem_key   TEXT NOT NULL,                -- file name, the same way
        tags       TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
        fields     TEXT NOT NULL DEFAULT '{}',   -- frontmatter as a JSON object
        mtime_ns   INTEGER NOT NULL,             -- -1: written too close to its mtime, re-hash next time
        size       INTEGER NOT NULL,
        sha256     BLOB NOT NULL,
        body_line  INTEGER NOT NULL,             -- 1-based line where the body starts
        indexed_at INTEGER NOT NULL              -- unix seconds
    );
    CREATE INDEX notes_type ON notes(type);
    CREATE INDEX notes_title_key ON notes(title_key);
    CREATE INDEX notes_stem_key ON notes(stem_key);

    -- rowid = notes.id. Body is plain text, line-aligned with the file.
    CREATE VIRTUAL TABLE notes_fts USING fts5(
        title, tags, body,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );

    CREATE TABLE chunks (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        note_id  INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        seq      INTEGER NOT NULL,
        line     INTEGER NOT NULL,               -- first line of the passage in the file
        end_line INTEGER NOT NULL,
        heading  TEXT NOT NULL,
        text     TEXT NOT NULL,                  -- what is embedded: title, heading, passage
        hash     BLOB NOT NULL,                  -- sha256 of text: the vector's key
        UNIQUE (note_id, seq)
    );
    CREATE INDEX chunks_hash ON chunks(hash);

    -- One vector per distinct chunk text, for the model named in meta.embed_model.
    CREATE TABLE vectors (
        hash BLOB PRIMARY KEY,
        vec  BLOB NOT NULL                       -- little-endian f32 x meta.embed_dim
    ) WITHOUT ROWID;

    CREATE TABLE recalls (
        id       INTEGER PRIMARY KEY,
        ts       INTEGER NOT NULL,               -- unix milliseconds
        query    TEXT NOT NULL,
        mode     TEXT NOT NULL,
        filters  TEXT NOT NULL,                  -- JSON object
        results  TEXT NOT NULL,                  -- JSON array of paths, best first
        took_us  INTEGER NOT NULL
    );
    CREATE INDEX recalls_ts ON recalls(ts);
    "#,
    // 2: each note's date, and the read log.
    r#"
    -- The date the note's text gives it (frontmatter updated/created, or its file name),
    -- YYYY-MM-DD; NULL: the file's modification day stands in (see index::NOTE_DATE).
    ALTER TABLE notes ADD COLUMN date TEXT;
    -- Every note is re-read once, by the next sync, to fill it in. Vectors are keyed by
    -- passage text, so nothing is embedded again.
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1;
    CREATE INDEX notes_date ON notes(date);

    -- A note opened: by `brain get`, the MCP `get` tool, or Claude Code's Read (the hook).
    CREATE TABLE reads (
        id    INTEGER PRIMARY KEY,
        ts    INTEGER NOT NULL,                  -- unix milliseconds
        path  TEXT NOT NULL,                     -- relative to the brain root
        via   TEXT NOT NULL                      -- cli | mcp | hook | app
    );
    CREATE INDEX reads_ts ON reads(ts);
    "#,
    // 3: wikilinks, and what was wrong with a note when it was read (for `brain check`).
    r#"
    ALTER TABLE notes ADD COLUMN problem TEXT;    -- the first parse warning, NULL if none
    CREATE TABLE links (
        note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        target  TEXT NOT NULL,                    -- as written, before any | or #
        line    INTEGER NOT NULL                  -- 1-based line in the file
    );
    CREATE INDEX links_note ON links(note_id);
    CREATE INDEX links_target ON links(target);
    -- Re-read every note once to fill both in (vectors survive: keyed by passage text).
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1;
    "#,
    // 4: vectors in a rowid table, found through an index on their hash. In the WITHOUT
    // ROWID table a row keeps only ~1 KB on its b-tree page and the rest of a vector in
    // overflow pages, behind a deep tree of 32-byte keys: reading the 256 vectors that
    // re-rank an int8 scan was a third of a semantic search at 100k notes (768 dims).
    // A rowid table holds a 768-d vector on one page; the hash index is small enough to
    // stay cached. Same columns, same queries; the vectors are copied, not re-embedded.
    r#"
    CREATE TABLE vectors_by_row (
        id   INTEGER PRIMARY KEY,
        hash BLOB NOT NULL UNIQUE,
        vec  BLOB NOT NULL                       -- little-endian f32 x meta.embed_dim
    );
    INSERT INTO vectors_by_row(hash, vec) SELECT hash, vec FROM vectors ORDER BY hash;
    DROP TABLE vectors;
    ALTER TABLE vectors_by_row RENAME TO vectors;
    "#,
    // 5: the columns a sync compares with each file's stat, in path order, in an index of
    // their own. A sync that finds nothing changed scans every row: through the table
    // (titles, tags, frontmatter and all) that took 78 ms at 100k notes, through this
    // index 42 ms, about 5 MB more on disk.
    r#"
    CREATE INDEX notes_stat ON notes(path, mtime_ns, size);
    "#,
    // 6: which searches were typed in the panel (search as you type). Only such a row may
    // take the next keystroke of the same search; a CLI or MCP search stays its own row even
    // when the panel's next search extends it seconds later. Rows logged before are 0.
    r#"
    ALTER TABLE recalls ADD COLUMN typed INTEGER NOT NULL DEFAULT 0;
    "#,
    // 7: a passage cut into pieces gave every piece the whole range's first line, so a hit
    // on a later piece pointed pages before its text. The notes that hold such pieces are
    // read again by the next sync, which numbers each piece (their texts do not change, so
    // their vectors stay).
    r#"
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1
     WHERE id IN (SELECT note_id FROM chunks GROUP BY note_id, line, end_line HAVING count(*) > 1);
    "#,
    // 8: Chinese, Japanese and Korean characters are indexed one token each (`text::cjk`):
    // a run of them was one token, which only the whole run typed again matched. The notes
    // holding any (the ranges of `cjk::is_cjk`, written as code points: a character typed
    // here may be normalised to another) are read again by the next sync; their
    // passages do not change, so their vectors stay.
    r#"
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1
     WHERE id IN (SELECT rowid FROM notes_fts
                   WHERE title || ' ' || tags || ' ' || body
                         GLOB '*[' || char(0x1100, 0x2D, 0x11FF) ||
                              char(0x3040, 0x2D, 0x30FF) || char(0x3130, 0x2D, 0x318F) ||
                              char(0x31F0, 0x2D, 0x31FF) || char(0x3400, 0x2D, 0x4DBF) ||
                              char(0x4E00, 0x2D, 0x9FFF) || char(0xAC00, 0x2D, 0xD7AF) ||
                              char(0xF900, 0x2D, 0xFAFF) || char(0xFF66, 0x2D, 0xFF9F) ||
                              char(0x20000, 0x2D, 0x3134F) || ']*');
    "#,
    // 9: a letter's `++` or `#` is indexed as part of its token (`index::symbols`): `C++`
    // and `C#` were the token `c`. The notes holding either after a letter are read again
    // by the next sync (a few more than need it: the test is looser than the rule); their
    // passages do not change, so their vectors stay.
    r#"
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1
     WHERE id IN (SELECT rowid FROM notes_fts
                   WHERE title || ' ' || tags || ' ' || body GLOB '*[A-Za-z]++*'
                      OR title || ' ' || tags || ' ' || body GLOB '*[A-Za-z]#*');
    "#,
    // 10: how many notes a search's keyword list found (NULL where none ran: semantic
    // mode, and rows logged before). A hybrid search always has results, the notes nearest
    // in meaning; `brain stats` needs this to tell a query no note holds a word of (a hole
    // in the brain) from one that was answered.
    r#"
    ALTER TABLE recalls ADD COLUMN keywords INTEGER;
    "#,
    // 11: tags written as one string are split on its commas when it has any (`"Road
    // Safety, zebra"` is two tags, not three), and a number (`tags: 2024`) is a tag. The
    // notes whose tags are written so are read again by the next sync.
    r#"
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1
     WHERE json_type(fields, '$.tags') IN ('text', 'integer', 'real');
    "#,
    // 12: notes are read so since: a character reference for a line end (`&#10;`) no
    // longer moves the lines after it, an underlined title over two lines is one title, and
    // a soft hyphen, zero-width space, word joiner or byte-order mark no longer splits a
    // word (`text::visible`). Which notes hold any of these the index cannot tell (the
    // references were decoded, the headings flattened), so every note is read again by the
    // next sync; their passages mostly do not change, so their vectors stay.
    r#"
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1;
    "#,
    // 13: the heading a link names after `#`, so that `check` and `links` show the link
    // as written and the form `check` asks for keeps it. Notes with links are read again
    // by the next sync to fill it in.
    r#"
    ALTER TABLE links ADD COLUMN heading TEXT;    -- after '#', before any '|'; NULL if none
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1
     WHERE id IN (SELECT note_id FROM links);
    "#,
    // 14: a frontmatter `date` (Jekyll, Hugo, Obsidian templates) dates a note that has
    // neither `updated` nor `created` (`date::note_date`). The notes that have one are read
    // again by the next sync to date them so.
    r#"
    UPDATE notes SET sha256 = zeroblob(32), mtime_ns = -1
     WHERE json_type(fields, '$.date') IS NOT NULL;
    "#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migrations (by the version they bring a database to) that copy a large table and drop
/// the old one: the file keeps the freed pages, about as many as it had, until compacted.
const FREES_MOST_PAGES: &[i64] = &[4];

/// The version stored in `conn`, 0 for a new database.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    let has_meta: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false);
    if !has_meta {
        return Ok(0);
    }
    let v = super::meta(conn, "schema_version")?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Applies every migration the database lacks, each in its own IMMEDIATE transaction that
/// re-reads the version first, so two processes opening a new index never both migrate it.
/// True when one of them left most of an existing file's pages free (see [`compact`]).
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<bool> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// [`migrate`], up to version `last` only (tests look at one migration's work).
fn migrate_to(conn: &mut Connection, last: i64) -> rusqlite::Result<bool> {
    let mut freed = false;
    // A new database has nothing to free: only one that had data before this call counts.
    let mut had_data = None;
    loop {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let current = version(&tx)?;
        let had_data = *had_data.get_or_insert(current > 0);
        let Some(sql) = MIGRATIONS
            .get(current.max(0) as usize)
            .filter(|_| current < last)
        else {
            return Ok(freed);
        };
        freed |= had_data && FREES_MOST_PAGES.contains(&(current + 1));
        tx.execute_batch(sql)?;
        // A migration may mark notes to be read again, which only a walk does: the change
        // journal's mark goes, so the next sync walks.
        if had_data {
            tx.execute(
                "DELETE FROM meta WHERE key = ?1",
                [super::journal::MARK_KEY],
            )?;
        }
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [(current + 1).to_string()],
        )?;
        tx.commit()?;
    }
}

/// Rewrites the file without its free pages (`VACUUM`, then the write-ahead log it filled
/// truncated): once, after a migration that moved a large table. At 100k notes with 768-d
/// vectors the move left a 2.1 GB file holding 1.2 GB. The copy VACUUM builds goes to a
/// temporary file, not memory (the connection's `temp_store` would otherwise hold the
/// whole database in RAM). False when the log could not be truncated yet (another process
/// is reading): SQLite truncates it at a later checkpoint (`journal_size_limit`).
pub fn compact(conn: &Connection) -> rusqlite::Result<bool> {
    let temp_store: i64 = conn.query_row("PRAGMA temp_store", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA temp_store = FILE;")?;
    let vacuumed = conn.execute_batch("VACUUM;");
    conn.execute_batch(&format!("PRAGMA temp_store = {temp_store};"))?;
    vacuumed?;
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    Ok(busy == 0)
}

/// Applies the first `version` migrations to a new database, as an older brain left it.
#[cfg(test)]
pub(crate) fn create_at(conn: &Connection, version: usize) {
    for sql in &MIGRATIONS[..version] {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute(
        "INSERT INTO meta VALUES ('schema_version', ?1)",
        [version.to_string()],
    )
    .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_from_empty_and_is_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(version(&conn).unwrap(), 0);
        assert!(
            !migrate(&mut conn).unwrap(),
            "a new file has nothing to compact"
        );
        assert_eq!(version(&conn).unwrap(), SCHEMA_VERSION);
        assert!(!migrate(&mut conn).unwrap());
        assert_eq!(version(&conn).unwrap(), SCHEMA_VERSION);
    }

    /// The statement of `sql` that would lose rows of a table people cannot rebuild from
    /// their notes (the logs), if any.
    fn drops_user_data(sql: &str) -> Option<String> {
        let words = sql.split_whitespace().collect::<Vec<_>>().join(" ");
        let upper = words.to_uppercase();
        USER_DATA.iter().find_map(|table| {
            let t = table.to_uppercase();
            [
                format!("DROP TABLE {t}"),
                format!("DROP TABLE IF EXISTS {t}"),
                format!("DELETE FROM {t}"),
                format!("ALTER TABLE {t} DROP"),
                format!("ALTER TABLE {t} RENAME"),
            ]
            .into_iter()
            .find(|bad| {
                upper.match_indices(bad.as_str()).any(|(at, _)| {
                    // A whole table name, not a prefix of another (`recalls_old`).
                    !upper[at + bad.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
            })
        })
    }

    /// Tables whose rows exist nowhere else.
    const USER_DATA: &[&str] = &["recalls", "reads"];

    #[test]
    fn an_upgrade_drops_the_journal_mark_so_the_next_sync_walks() {
        let mut conn = Connection::open_in_memory().unwrap();
        create_at(&conn, SCHEMA_VERSION as usize - 1);
        let key = super::super::journal::MARK_KEY;
        super::super::set_meta(&conn, key, "{}").unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(super::super::meta(&conn, key).unwrap(), None);
        super::super::set_meta(&conn, key, "{}").unwrap();
        migrate(&mut conn).unwrap();
        assert!(
            super::super::meta(&conn, key).unwrap().is_some(),
            "no upgrade, kept"
        );
    }

    #[test]
    fn an_older_log_survives_the_upgrade() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.execute_batch(
            "INSERT INTO meta VALUES ('schema_version', '1');
             INSERT INTO recalls(ts, query, mode, filters, results, took_us)
               VALUES (1, 'wal', 'bm25', '{}', '[\"lore/wal.md\"]', 5);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(version(&conn).unwrap(), SCHEMA_VERSION);
        let kept: String = conn
            .query_row("SELECT results FROM recalls WHERE query = 'wal'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kept, r#"["lore/wal.md"]"#);
    }

    #[test]
    fn vectors_survive_the_move_to_a_rowid_table() {
        let mut conn = Connection::open_in_memory().unwrap();
        create_at(&conn, 3);
        conn.execute_batch(
            "INSERT INTO vectors VALUES (x'02', x'00000040'), (x'01', x'0000803f');",
        )
        .unwrap();
        assert!(
            migrate(&mut conn).unwrap(),
            "the move frees the old table's pages"
        );
        let rows: Vec<(Vec<u8>, Vec<u8>)> = conn
            .prepare("SELECT hash, vec FROM vectors ORDER BY hash")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                (vec![1], vec![0, 0, 0x80, 0x3f]),
                (vec![2], vec![0, 0, 0, 0x40])
            ]
        );
        let table: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'vectors'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!table.contains("WITHOUT ROWID"), "{table}");
        // A text's vector is still stored once.
        let again = conn.execute(
            "INSERT INTO vectors(hash, vec) VALUES (x'01', x'00000000') ON CONFLICT(hash) DO NOTHING",
            [],
        );
        assert_eq!(again.unwrap(), 0);
    }

    /// Migrates `conn` one version on and returns each note's id and stored mtime: -1
    /// marks a note the next sync reads again.
    fn stamps_after_migrating(conn: &mut Connection) -> Vec<(i64, i64)> {
        let next = version(conn).unwrap() + 1;
        migrate_to(conn, next).unwrap();
        conn.prepare("SELECT id, mtime_ns FROM notes ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn notes_with_pieces_sharing_their_lines_are_read_again() {
        let mut conn = Connection::open_in_memory().unwrap();
        create_at(&conn, 6);
        conn.execute_batch(
            "INSERT INTO notes(id, path, type, title, title_key, stem_key, mtime_ns, size, sha256, body_line, indexed_at)
             VALUES (1, 'cut.md', 'n', 't', 't', 'cut', 5, 9, x'aa', 1, 0),
                    (2, 'fine.md', 'n', 't', 't', 'fine', 5, 9, x'bb', 1, 0);
             INSERT INTO chunks(note_id, seq, line, end_line, heading, text, hash)
             VALUES (1, 0, 5, 35, '', 'a', x'01'), (1, 1, 5, 35, '', 'b', x'02'),
                    (2, 0, 1, 4, '', 'c', x'03'), (2, 1, 4, 9, '', 'd', x'04');",
        )
        .unwrap();
        let rows = stamps_after_migrating(&mut conn);
        assert_eq!(rows, [(1, -1), (2, 5)]);
    }

    /// Notes 1, 2, ... at `version`, each with its (title, tags, body) in the full-text
    /// index and a stat a sync would trust (mtime 5).
    fn notes_at(version: usize, texts: &[(&str, &str, &str)]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        create_at(&conn, version);
        for (i, (title, tags, body)) in texts.iter().enumerate() {
            conn.execute(
                "INSERT INTO notes(id, path, type, title, title_key, stem_key, mtime_ns, size, sha256, body_line, indexed_at)
                 VALUES (?1, ?1 || '.md', 'n', 't', 't', ?1, 5, 9, x'aa', 1, 0)",
                [i as i64 + 1],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO notes_fts(rowid, title, tags, body) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![i as i64 + 1, title, tags, body],
            )
            .unwrap();
        }
        conn
    }

    #[test]
    fn notes_with_cjk_text_are_read_again() {
        let mut conn = notes_at(
            7,
            &[
                ("Proxy", "", "如何配置代理"),
                ("Proxy", "net", "café naïve — “quotes”"),
                ("キャッシュ", "", "clear"),
                ("x", "서버", "y"),
                ("x", "", "𠀋"),
                ("x", "", "prompt \u{E0A0} main \u{A000}"),
                ("x", "", "\u{F900}"),
            ],
        );
        let rows = stamps_after_migrating(&mut conn);
        // A Powerline icon (private use) and Yi are not CJK: not read again.
        assert_eq!(
            rows,
            [(1, -1), (2, 5), (3, -1), (4, -1), (5, -1), (6, 5), (7, -1)]
        );
    }

    #[test]
    fn notes_with_a_letters_plus_plus_or_sharp_are_read_again() {
        let mut conn = notes_at(
            8,
            &[
                ("Moves", "", "in C++17"),
                ("Async", "", "await in c#"),
                ("x", "a", "#tag and issue #12"),
                ("x", "", "x + y, a+b"),
                ("F# pipes", "", "y"),
            ],
        );
        let rows = stamps_after_migrating(&mut conn);
        assert_eq!(rows, [(1, -1), (2, -1), (3, 5), (4, 5), (5, -1)]);
    }

    #[test]
    fn notes_with_a_date_field_are_read_again() {
        let mut conn = notes_at(13, &[("a", "", "b"), ("c", "", "d"), ("e", "", "f")]);
        conn.execute_batch(
            "UPDATE notes SET fields = '{\"date\": \"2019-05-06\"}' WHERE id = 1;
             UPDATE notes SET fields = '{\"created\": \"2019-05-06\"}' WHERE id = 2;",
        )
        .unwrap();
        assert_eq!(stamps_after_migrating(&mut conn), [(1, -1), (2, 5), (3, 5)]);
    }

    #[test]
    fn every_note_is_read_again_by_the_parser_of_version_12() {
        let mut conn = notes_at(11, &[("a", "", "b"), ("c", "", "d")]);
        assert_eq!(stamps_after_migrating(&mut conn), [(1, -1), (2, -1)]);
    }

    #[test]
    fn migrations_never_drop_user_data() {
        for (i, sql) in MIGRATIONS.iter().enumerate() {
            assert_eq!(drops_user_data(sql), None, "migration {}", i + 1);
        }
    }

    #[test]
    fn the_user_data_check_sees_what_it_guards_against() {
        for bad in [
            "drop table recalls;",
            "DROP  TABLE\n IF EXISTS recalls",
            "delete from Recalls where ts < 5",
            "alter table recalls drop column took_us",
        ] {
            assert!(drops_user_data(bad).is_some(), "{bad}");
        }
        assert_eq!(drops_user_data("DROP TABLE recalls_scratch"), None);
        assert_eq!(drops_user_data("CREATE TABLE recalls (id INTEGER)"), None);
    }
}
