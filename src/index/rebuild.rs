//! Rebuilding an index that cannot be used (damaged, truncated, or written by a newer
//! brain). Everything in it but two logs can be made again from the notes; so the old file
//! is moved aside, never deleted, a new one is created, and what can still be read of the
//! logs (and of the vectors, which save re-embedding) is copied across before the notes are
//! read again. A damaged page stops a scan; each table is then read again from its other
//! end, so one bad page loses only the rows on it.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Serialize;

use super::{set_meta, Index};
use crate::error::{sqlite_cause as cause, Error, Result};

/// The suffix of the copy an index is moved to before it is rebuilt.
pub const BACKUP_SUFFIX: &str = ".bak";

/// What a rebuild kept of the old index.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Salvage {
    /// Where the old index now is (kept until the user removes it); `None` when there was
    /// no index to set aside.
    pub backup: Option<PathBuf>,
    /// Searches of the recall log copied across.
    pub recalls: u64,
    /// Rows of the read log copied across.
    pub reads: u64,
    /// Passage vectors copied across (passages whose text is unchanged are not embedded again).
    pub vectors: u64,
    /// What could not be read, one line each ("recalls: database disk image is malformed").
    pub lost: Vec<String>,
}

/// Moves the index at `path` (and its `-wal` and `-shm` side files) to `path.bak`, or to
/// `path.bak.2`, `.bak.3`, ... when older backups are there: a backup may be the only copy
/// of a damaged index's logs, so a later rebuild never replaces it (the user removes them).
/// Returns the backup's path, or `None` when there was no index.
pub fn set_aside(path: &Path) -> Result<Option<PathBuf>> {
    if !path.exists() {
        return Ok(None);
    }
    let backup = (1..)
        .map(|n| match n {
            1 => with_suffix(path, BACKUP_SUFFIX),
            n => with_suffix(path, &format!("{BACKUP_SUFFIX}.{n}")),
        })
        .find(|b| !b.exists())
        .unwrap_or_else(|| with_suffix(path, BACKUP_SUFFIX));
    // Side files left without their main file must not pair with the new backup (SQLite
    // would replay a stale WAL into it).
    remove_with_sides(&backup)?;
    // The main file last: while it is still in place the side files belong to it.
    for side in ["-wal", "-shm", ""] {
        let from = with_suffix(path, side);
        let to = with_suffix(&backup, side);
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !side.is_empty() => {}
            Err(e) => return Err(Error::io(from, e)),
        }
    }
    Ok(Some(backup))
}

/// Where a rebuild makes the new index, beside the one it replaces.
pub fn staging_path(path: &Path) -> PathBuf {
    with_suffix(path, ".rebuilding")
}

/// Where a rebuild's new index waits, complete, while the old one is moved aside.
pub fn rebuilt_path(path: &Path) -> PathBuf {
    with_suffix(path, ".rebuilt")
}

/// Puts a complete rebuilt index in place when a rebuild stopped after moving the old one
/// aside and before that (no index at `path`, a rebuilt one beside it): whoever opens the
/// index next finishes the swap, instead of starting an empty index there.
pub fn finish_interrupted(path: &Path) {
    let rebuilt = rebuilt_path(path);
    if !path.exists() && rebuilt.is_file() {
        match std::fs::rename(&rebuilt, path) {
            Ok(()) => tracing::info!(path = %path.display(), "finished an interrupted rebuild"),
            Err(e) => tracing::warn!(error = %e, "an interrupted rebuild could not be finished"),
        }
    }
}

/// Removes what a killed rebuild left beside the index at `path`: its half-made staging
/// index, side files and mark (as large as the index; nothing else removes it until the
/// next rebuild). The caller holds the lock that keeps rebuilds away ([`staging_path`] is
/// a running rebuild's otherwise). Returns whether there was one.
pub fn remove_abandoned(path: &Path) -> Result<bool> {
    let there = abandoned(path);
    if there {
        let staging = staging_path(path);
        remove_with_sides(&staging)?;
        let _ = std::fs::remove_file(super::made_path(&staging));
        tracing::info!(path = %staging.display(), "removed what a killed rebuild left");
    }
    Ok(there)
}

/// Whether a killed rebuild left files beside the index at `path` (see
/// [`remove_abandoned`]): a few `stat`s, for a caller to take the lock only when so.
pub fn abandoned(path: &Path) -> bool {
    let staging = staging_path(path);
    ["", "-wal", "-shm"]
        .iter()
        .any(|side| with_suffix(&staging, side).exists())
        || super::made_path(&staging).exists()
}

/// Removes the index file at `path` and its `-wal` and `-shm` side files, those that are
/// there (a rebuild that was interrupted before its new index took the old one's place).
pub fn remove_with_sides(path: &Path) -> Result<()> {
    remove(path, &["-wal", "-shm", ""])
}

/// Removes the `-wal` and `-shm` side files of a closed index whose log was emptied.
pub fn remove_side_files(path: &Path) -> Result<()> {
    remove(path, &["-wal", "-shm"])
}

fn remove(path: &Path, sides: &[&str]) -> Result<()> {
    for side in sides {
        let file = with_suffix(path, side);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(file, e)),
        }
    }
    Ok(())
}

/// Copies what can be read of `old`'s logs and vectors into the new, empty `index`.
pub fn salvage(old: &Path, index: &Index) -> Result<Salvage> {
    let mut out = Salvage {
        backup: Some(old.to_path_buf()),
        ..Salvage::default()
    };
    let source = match open_old(old) {
        Ok(c) => c,
        Err(e) => {
            out.lost
                .push(format!("the old index could not be opened: {}", cause(&e)));
            return Ok(out);
        }
    };
    let mut w = index.writer()?;
    let tx = w.conn.transaction().map_err(|e| index.err(e))?;
    // Columns later schemas added (6: typed, 10: keywords) are kept where the old index
    // has them: `brain stats` reads its holes from `keywords`.
    let recall_columns = with_columns_of(
        &source,
        "recalls",
        "id, ts, query, mode, filters, results, took_us",
        &["typed", "keywords"],
    );
    out.recalls = copy_rows(
        &source,
        &tx,
        "recalls",
        &recall_columns,
        "id",
        &mut out.lost,
    )
    .map_err(|e| index.err(e))?;
    out.reads = copy_rows(
        &source,
        &tx,
        "reads",
        "id, ts, path, via",
        "id",
        &mut out.lost,
    )
    .map_err(|e| index.err(e))?;
    match super::vectors::stored_model(&source) {
        Ok(Some((model, dim))) => {
            set_meta(&tx, "embed_model", &model).map_err(|e| index.err(e))?;
            set_meta(&tx, "embed_dim", &dim.to_string()).map_err(|e| index.err(e))?;
            out.vectors = copy_rows(&source, &tx, "vectors", "hash, vec", "hash", &mut out.lost)
                .map_err(|e| index.err(e))?;
        }
        Ok(None) => {}
        Err(e) => out.lost.push(format!("vectors: {}", cause(&e))),
    }
    tx.commit().map_err(|e| index.err(e))?;
    Ok(out)
}

/// Opens the set-aside index for reading. Read-write, because SQLite needs that to replay
/// the WAL of a file it did not close; nothing is written to it.
fn open_old(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.execute_batch("PRAGMA query_only = ON;")?;
    // Reading sqlite_master is what fails first on a file that is not a database at all.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(conn)
}

/// Copies `columns` of `table` from `source` into the same table of `tx`, scanning by `key`
/// forwards and, if a damaged page stops it, backwards from the other end. Returns the rows
/// copied; a scan that stopped adds its cause to `lost`. Errors are the new index's own.
/// `base`, then those of `later` that `table` of `source` has (an index an older brain
/// wrote lacks them; where its columns cannot be read, `base` alone).
fn with_columns_of(source: &Connection, table: &str, base: &str, later: &[&str]) -> String {
    let has: Vec<String> = source
        .prepare("SELECT name FROM pragma_table_info(?1)")
        .and_then(|mut stmt| {
            stmt.query_map([table], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_default();
    let mut columns = base.to_string();
    for c in later.iter().filter(|c| has.iter().any(|h| h == *c)) {
        columns.push_str(", ");
        columns.push_str(c);
    }
    columns
}

fn copy_rows(
    source: &Connection,
    tx: &Connection,
    table: &str,
    columns: &str,
    key: &str,
    lost: &mut Vec<String>,
) -> rusqlite::Result<u64> {
    let exists = source
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |_| Ok(()),
        )
        .optional();
    match exists {
        Ok(Some(())) => {}
        // An older index without this table: nothing to keep.
        Ok(None) => return Ok(0),
        Err(e) => {
            lost.push(format!("{table}: {}", cause(&e)));
            return Ok(0);
        }
    }
    let width = columns.split(',').count();
    let marks = vec!["?"; width].join(", ");
    let mut insert = tx.prepare(&format!(
        "INSERT OR IGNORE INTO {table} ({columns}) VALUES ({marks})"
    ))?;
    let mut copied = 0u64;
    let mut stopped = None;
    for order in ["ASC", "DESC"] {
        let scan = (|| -> rusqlite::Result<()> {
            let mut stmt = source.prepare(&format!(
                "SELECT {columns} FROM {table} ORDER BY {key} {order}"
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let values = (0..width)
                    .map(|i| row.get::<_, rusqlite::types::Value>(i))
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                // The backward scan meets the forward one at the first row already copied.
                if insert.execute(rusqlite::params_from_iter(values))? == 0 && order == "DESC" {
                    break;
                }
                copied += 1;
            }
            Ok(())
        })();
        match scan {
            Ok(()) => break,
            Err(e) if is_new_index_error(&e) => return Err(e),
            Err(e) => stopped = Some(e),
        }
    }
    if let Some(e) = stopped {
        lost.push(format!(
            "{table}: the rows on damaged pages ({})",
            cause(&e)
        ));
    }
    Ok(copied)
}

/// Whether a failure during a copy came from writing the new index (which must stop the
/// rebuild) rather than reading the old one (which only loses rows).
fn is_new_index_error(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(C::DiskFull | C::ReadOnly | C::PermissionDenied | C::CannotOpen | C::SystemIoFailure)
    )
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_with_logs(dir: &Path) -> PathBuf {
        let path = dir.join("brain.sqlite");
        let index = Index::open(&path).unwrap();
        index
            .write(|tx| {
                for i in 0..500 {
                    tx.execute(
                        "INSERT INTO recalls(ts, query, mode, filters, results, took_us, typed, keywords)
                         VALUES (?1, ?2, 'bm25', '{}', '[]', 5, ?1 % 2, ?1 % 3)",
                        rusqlite::params![i, format!("query number {i} {}", "x".repeat(200))],
                    )?;
                }
                tx.execute(
                    "INSERT INTO reads(ts, path, via) VALUES (1, 'lore/a.md', 'cli')",
                    [],
                )?;
                set_meta(tx, "embed_model", "m")?;
                set_meta(tx, "embed_dim", "2")?;
                tx.execute(
                    "INSERT INTO vectors(hash, vec) VALUES (x'01', x'0000803f0000803f')",
                    [],
                )?;
                Ok(())
            })
            .unwrap();
        let conn = index.conn().unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        drop(conn);
        drop(index);
        path
    }

    #[test]
    fn an_intact_index_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let path = index_with_logs(dir.path());
        let backup = set_aside(&path).unwrap().unwrap();
        assert!(!path.exists() && backup.exists());
        let fresh = Index::open(&path).unwrap();
        let s = salvage(&backup, &fresh).unwrap();
        assert_eq!((s.recalls, s.reads, s.vectors), (500, 1, 1), "{s:?}");
        assert!(s.lost.is_empty(), "{s:?}");
        let conn = fresh.conn().unwrap();
        // The columns later schemas added come along (stats reads its holes from them).
        let sums: (i64, i64) = conn
            .query_row("SELECT SUM(typed), SUM(keywords) FROM recalls", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(sums, (250, (0..500).map(|i| i % 3).sum::<i64>()));
        assert_eq!(
            super::super::vectors::stored_model(&conn).unwrap(),
            Some(("m".into(), 2))
        );
    }

    #[test]
    fn an_older_index_without_the_later_columns_keeps_its_searches() {
        let dir = tempfile::tempdir().unwrap();
        let path = index_with_logs(dir.path());
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("ALTER TABLE recalls DROP COLUMN keywords;")
            .unwrap();
        drop(conn);
        let backup = set_aside(&path).unwrap().unwrap();
        let fresh = Index::open(&path).unwrap();
        let s = salvage(&backup, &fresh).unwrap();
        assert_eq!(s.recalls, 500, "{s:?}");
        assert!(s.lost.is_empty(), "{s:?}");
        let nulls: i64 = fresh
            .conn()
            .unwrap()
            .query_row(
                "SELECT COUNT(*) FROM recalls WHERE keywords IS NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(nulls, 500);
    }

    #[test]
    fn a_damaged_page_loses_only_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = index_with_logs(dir.path());
        // Find a page in the middle of the recall table and overwrite it.
        let conn = Connection::open(&path).unwrap();
        let pages: Vec<i64> = conn
            .prepare("SELECT pageno FROM dbstat WHERE name = 'recalls' AND pagetype = 'leaf' ORDER BY pageno")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .unwrap_or_default();
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        drop(conn);
        // Without dbstat, a page a little past the start is a recall leaf in this layout.
        let victim = pages.get(pages.len() / 2).copied().unwrap_or(12);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = ((victim - 1) * page_size) as usize;
        bytes[at..at + page_size as usize].fill(0x5a);
        std::fs::write(&path, bytes).unwrap();

        let backup = set_aside(&path).unwrap().unwrap();
        let fresh = Index::open(&path).unwrap();
        let s = salvage(&backup, &fresh).unwrap();
        assert!(s.recalls > 250 && s.recalls < 500, "{s:?}");
        assert_eq!(s.reads, 1, "{s:?}");
        assert!(s.lost.iter().any(|l| l.starts_with("recalls:")), "{s:?}");
    }

    #[test]
    fn a_file_that_is_no_database_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        std::fs::write(&path, vec![0x5a; 8192]).unwrap();
        let backup = set_aside(&path).unwrap().unwrap();
        let fresh = Index::open(&path).unwrap();
        let s = salvage(&backup, &fresh).unwrap();
        assert_eq!((s.recalls, s.reads, s.vectors), (0, 0, 0));
        assert_eq!(s.lost.len(), 1, "{s:?}");
        assert_eq!(std::fs::read(&backup).unwrap(), vec![0x5a; 8192]);
    }

    #[test]
    fn a_second_rebuild_keeps_the_first_backup_and_drops_stale_side_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        std::fs::write(&path, b"first").unwrap();
        std::fs::write(dir.path().join("brain.sqlite.bak-wal"), b"stale").unwrap();
        let first = set_aside(&path).unwrap().unwrap();
        assert_eq!(first, dir.path().join("brain.sqlite.bak"));
        assert!(!dir.path().join("brain.sqlite.bak-wal").exists());
        std::fs::write(&path, b"second").unwrap();
        let second = set_aside(&path).unwrap().unwrap();
        assert_eq!(second, dir.path().join("brain.sqlite.bak.2"));
        assert_eq!(std::fs::read(first).unwrap(), b"first");
        assert_eq!(std::fs::read(second).unwrap(), b"second");
        assert_eq!(set_aside(&path).unwrap(), None);
    }
}
