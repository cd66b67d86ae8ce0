//! The index: one SQLite file per brain root holding notes, their full-text index, chunks,
//! chunk vectors and the recall log. Readers and the single writer use separate connections
//! (WAL), so searches keep being answered from the last committed state while a sync runs.

mod bm25_parts;
pub(crate) mod chunk;
mod filter;
pub(crate) mod fts_text;
pub(crate) mod journal;
mod lengths_file;
pub(crate) mod pass_lock;
mod read;
pub(crate) mod rebuild;
pub(crate) mod recall;
pub(crate) mod schema;
pub(crate) mod sync;
pub(crate) mod usage;
pub(crate) mod vectors;
pub(crate) mod walk;

pub(crate) use bm25_parts::DocLengths;
pub(crate) use chunk::{chunk_note, Chunk};
pub use filter::{Condition, Filters};
pub(crate) use read::{ChunkRow, FtsQuery, NotesVersion, Reader};
pub use rebuild::Salvage;
pub use recall::RecallTotals;
pub use sync::{SyncOptions, SyncReport, SyncSummary};

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// How long a connection waits for another writer before giving up.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Connections kept open for reuse; more are opened on demand under load.
const POOL_KEEP: usize = 8;

/// An open index file.
pub(crate) struct Index {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
    /// Serialises brain's own writers (sync, embedding) so they never interleave batches.
    writer: Mutex<()>,
}

/// Past this size, the write-ahead log is emptied when an [`Index`] closes (see its `Drop`).
const WAL_EMPTY_BYTES: u64 = 1 << 20;

impl Drop for Index {
    /// Empties a write-ahead log past [`WAL_EMPTY_BYTES`], unless another process is using
    /// it. A process that opens the index alone rebuilds SQLite's index of the log from the
    /// whole log (every frame read and checksummed), and the log of processes that each
    /// write a little and exit (every search without a backend writes its recall-log row,
    /// about 9 KB of log) never starts over: their checkpoints complete, but only a write
    /// after one, within the same process's view of the log, begins it again. Without a
    /// backend the log so grew without bound, and every later command paid for all of it
    /// (a 10k-note search with nothing to find: 3 ms after emptying, 9-12 ms at 22 MB). Not
    /// waiting: a busy log belongs to a backend or a sync, whose open connections start it
    /// over themselves.
    fn drop(&mut self) {
        let big = std::fs::metadata(self.wal_path()).is_ok_and(|m| m.len() >= WAL_EMPTY_BYTES);
        let pool = self.pool.get_mut().unwrap_or_else(|e| e.into_inner());
        if let (true, Some(conn)) = (big, pool.first()) {
            let emptied = conn
                .busy_timeout(std::time::Duration::ZERO)
                .and_then(|()| truncate_wal(conn));
            tracing::debug!(?emptied, "write-ahead log checkpointed on close (1: busy)");
        }
    }
}

/// A pooled connection; goes back to the pool when dropped.
pub(crate) struct Conn<'a> {
    index: &'a Index,
    conn: Option<Connection>,
}

impl std::ops::Deref for Conn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("connection present until drop")
    }
}

impl std::ops::DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("connection present until drop")
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            // A connection left inside a transaction (a panic mid-write) is not reused.
            if conn.is_autocommit() {
                let mut pool = self.index.pool.lock().unwrap_or_else(|e| e.into_inner());
                if pool.len() < POOL_KEEP {
                    pool.push(conn);
                }
            }
        }
    }
}

/// The writer's turn: holds the write lock and a connection.
pub(crate) struct Writer<'a> {
    _guard: MutexGuard<'a, ()>,
    /// The connection to write through.
    pub conn: Conn<'a>,
}

/// An empty file beside the index file at `path` (`brain.sqlite.made`), made once the index
/// has its schema: where it is, an index was made, and an index file that is empty or
/// holds no tables is one cut short, not one another process is making.
pub(crate) fn made_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".made");
    path.with_file_name(name)
}

impl Index {
    /// Opens (creating if needed) the index at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Index> {
        if let Some(dir) = path.parent() {
            crate::file::private_dir(dir)
                .map_err(|e| Error::io(dir, crate::error::in_data_dir(e, dir)))?;
        }
        rebuild::finish_interrupted(path);
        let index = Index {
            path: path.to_path_buf(),
            pool: Mutex::new(Vec::new()),
            writer: Mutex::new(()),
        };
        // The process that makes the file takes the mark away first: any other that then
        // finds the file still empty, or without its tables, finds no mark and waits for
        // the index as SQLite has it wait.
        let existed = path.is_file();
        if !existed {
            let _ = std::fs::remove_file(made_path(path));
        }
        let lost = |why: &str| {
            index.err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(why.to_string()),
            ))
        };
        if existed && index.cut_to_nothing() {
            return Err(lost("the file is empty"));
        }
        let mut conn = index.connect()?;
        let found = schema::version(&conn).map_err(|e| index.err(e))?;
        // A file with no index in it, where one was made: a copy of the file without its
        // write-ahead log (a young index keeps everything there), or one cut short.
        if existed && found == 0 && made_path(path).is_file() {
            return Err(lost(
                "it holds no index: a copy of it without its -wal file, or one cut short",
            ));
        }
        if found > schema::SCHEMA_VERSION {
            return Err(Error::IndexTooNew {
                path: path.to_path_buf(),
                found,
                supported: schema::SCHEMA_VERSION,
            });
        }
        if found < schema::SCHEMA_VERSION && schema::migrate(&mut conn).map_err(|e| index.err(e))? {
            // Only space is lost if it fails (another process busy with the file): the
            // free pages are reused by later writes.
            let started = std::time::Instant::now();
            match schema::compact(&conn) {
                Ok(truncated) => tracing::info!(
                    truncated,
                    took_ms = started.elapsed().as_millis() as u64,
                    "index compacted after its upgrade"
                ),
                Err(e) => tracing::warn!(error = %e, "index not compacted after its upgrade"),
            }
        }
        // Set once, here rather than inside a search (which would wait on a running sync);
        // a read-only index does without it, and without the matrix file.
        if meta(&conn, INDEX_ID).ok().flatten().is_none() {
            let _ = ensure_id(&conn);
        }
        // Best effort: a read-only data dir does without it, and only loses the check.
        if !made_path(path).exists() {
            let _ = std::fs::File::create(made_path(path));
        }
        index
            .pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(conn);
        Ok(index)
    }

    /// Whether the index file is there but empty, with nothing in a write-ahead log beside
    /// it, where an index was made before: a copy or a sync tool cut it to nothing, and
    /// opening it would start a new index in silence, its search history gone. (A new index
    /// is an empty file for a moment too, while another process creates it: that process
    /// took the [`made_path`] mark away before it made the file.) Asked only of a file that
    /// was there before this process opened it.
    fn cut_to_nothing(&self) -> bool {
        let empty = |p: &Path| std::fs::metadata(p).map_or(true, |m| m.len() == 0);
        empty(&self.path) && empty(&self.wal_path()) && made_path(&self.path).is_file()
    }

    /// The index file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the int8 matrix is cached, next to the index file (see
    /// `search::matrix_file`).
    pub fn matrix_path(&self) -> PathBuf {
        self.path.with_file_name("matrix.bin")
    }

    /// Where FTS5's note lengths are cached, next to the index file (see
    /// `index::lengths_file`).
    pub fn lengths_path(&self) -> PathBuf {
        self.path.with_file_name("lengths.bin")
    }

    /// SQLite's write-ahead log, beside the index file.
    fn wal_path(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push("-wal");
        PathBuf::from(p)
    }

    /// Total bytes on disk: the database, its write-ahead log and the matrix and lengths
    /// caches.
    pub fn size_on_disk(&self) -> u64 {
        [
            self.path.clone(),
            self.wal_path(),
            self.matrix_path(),
            self.lengths_path(),
        ]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
        .sum()
    }

    /// A read transaction: every read through it sees one committed state.
    pub fn read(&self) -> Result<Reader<'_>> {
        Reader::begin(self)
    }

    /// A connection for reading (or for small self-contained writes such as the recall log).
    pub fn conn(&self) -> Result<Conn<'_>> {
        let pooled = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match pooled {
            Some(c) => c,
            None => self.connect()?,
        };
        Ok(Conn {
            index: self,
            conn: Some(conn),
        })
    }

    /// Waits for brain's write lock and returns a connection to write through.
    pub fn writer(&self) -> Result<Writer<'_>> {
        let guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Writer {
            _guard: guard,
            conn: self.conn()?,
        })
    }

    /// Runs `f` in one write transaction (taking brain's write lock) and commits it.
    ///
    /// The transaction takes SQLite's write lock when it begins (`BEGIN IMMEDIATE`), where
    /// the busy timeout waits for another process's writer. Begun deferred, one that read
    /// first and then wrote failed at once with "database is locked" whenever another
    /// process had committed in between (its snapshot was stale, which SQLite does not
    /// wait out): two MCP servers without a backend, embedding the same new notes.
    pub fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut w = self.writer()?;
        let tx = w
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let out = f(&tx).map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// Wraps a SQLite error with this index's path.
    pub fn err(&self, source: rusqlite::Error) -> Error {
        Error::Index {
            path: self.path.clone(),
            cause: source,
        }
    }

    /// Copies everything in the write-ahead log into the main file and empties the log,
    /// so that once this index is dropped its file alone holds it (a rebuild then renames
    /// it into place; the empty side files are removed).
    pub(crate) fn checkpoint_all(&self) -> Result<()> {
        let conn = self.conn()?;
        let busy = truncate_wal(&conn).map_err(|e| self.err(e))?;
        if busy != 0 {
            return Err(self.err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some("the new index is in use by another connection".into()),
            )));
        }
        Ok(())
    }

    fn connect(&self) -> Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(|e| self.err(e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| self.err(e))?;
        // Closing the last connection would otherwise checkpoint and truncate the WAL: ~10 ms
        // of writes on every short-lived CLI call. The index empties it on close once it is
        // big instead (`Drop for Index`): SQLite's auto-checkpoint alone does not bound it
        // for processes that each write a little and exit.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(|e| self.err(e))?;
        // WAL: readers never block the writer. NORMAL sync is crash-safe in WAL mode. A
        // large transaction (the full-text merge after a big sync, an upgrade) grows the log
        // to its size; `journal_size_limit` has SQLite cut it back to 64 MB once it is
        // checkpointed and reset, instead of keeping that size for good.
        use_wal(&conn).map_err(|e| self.err(e))?;
        conn.execute_batch(
            "PRAGMA synchronous = NORMAL;
             PRAGMA foreign_keys = ON;
             PRAGMA temp_store = MEMORY;
             PRAGMA journal_size_limit = 67108864;",
        )
        .map_err(|e| self.err(e))?;
        bm25_parts::register(&conn).map_err(|e| self.err(e))?;
        Ok(conn)
    }
}

/// Checkpoints the whole write-ahead log into the database and empties it; 1 when another
/// connection kept it busy (the log is then left as it was), else 0.
fn truncate_wal(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
}

/// Switches a connection's database to WAL. Leaving the rollback journal of a new file needs
/// an exclusive lock that SQLite takes without calling the busy handler, so when several
/// processes open a brain that has no index yet (the app, a CLI call, `brain mcp`) all but
/// one get "database is locked" at once; they retry here for as long as a write would wait.
fn use_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

/// A `meta` value, read in the caller's transaction.
pub fn meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()
}

/// Writes a `meta` value inside the caller's transaction.
pub fn set_meta(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?
    .execute([key, value])?;
    Ok(())
}

/// The `meta` key of this index's identity: a random number set the first time it is
/// asked for, never copied into another index (a rebuild gets its own). Passage ids are
/// only unique within one index, so what is cached by passage id elsewhere (the matrix
/// file) is keyed by it too.
pub(crate) const INDEX_ID: &str = "index_id";

/// This index's identity ([`INDEX_ID`]), set in the caller's transaction if it had none.
pub fn ensure_id(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO meta(key, value) VALUES (?1, CAST(abs(random() % 4503599627370496) + 1 AS TEXT))
         ON CONFLICT(key) DO NOTHING",
    )?
    .execute([INDEX_ID])?;
    counter(conn, INDEX_ID)
}

/// The [`counter`] that moves whenever a note's text in the full-text index changes.
pub(crate) const NOTES_VERSION: &str = "notes_version";

/// A `meta` counter that moves whenever what it counts changes, read in the caller's
/// transaction (0 when it was never moved).
pub fn counter(conn: &Connection, key: &str) -> rusqlite::Result<i64> {
    Ok(meta(conn, key)?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Moves [`counter`] `key` on, in the caller's transaction. A new index starts from a
/// random number below 2^52, so two indexes (one rebuilt in place of the other, say)
/// practically never share a value: what is cached under it elsewhere stays stale.
pub fn bump_counter(conn: &Connection, key: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta(key, value)
         VALUES (?1, CAST(abs(random() % 4503599627370496) + 1 AS TEXT))
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
    )?
    .execute([key])?;
    Ok(())
}

/// A note's date as SQL over the `notes n` alias, `YYYY-MM-DD` in local time: the date its
/// text gives it, else its file's modification day (the sync day when the mtime was too
/// fresh to trust, or past year 9999, where SQLite's `date` gives NULL).
pub(crate) const NOTE_DATE: &str = "COALESCE(n.date, date(CASE WHEN n.mtime_ns > 0 \
     THEN n.mtime_ns / 1000000000 ELSE n.indexed_at END, 'unixepoch', 'localtime'), \
     date(n.indexed_at, 'unixepoch', 'localtime'), '1970-01-01')";

/// Writes `text` to `path` and dates the file `when` (tests of what a sync reads).
#[cfg(test)]
pub(crate) fn write_dated(path: &Path, text: &str, when: std::time::SystemTime) {
    std::fs::write(path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process without a backend leaves a small log behind; one that another process is
    /// reading is left alone.
    #[test]
    fn closing_empties_a_big_write_ahead_log_unless_it_is_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        let fill = |index: &Index| {
            let conn = index.conn().unwrap();
            conn.execute_batch("CREATE TABLE IF NOT EXISTS scratch (b BLOB)")
                .unwrap();
            for _ in 0..300 {
                conn.execute("INSERT INTO scratch VALUES (randomblob(4000))", [])
                    .unwrap();
            }
        };
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let index = Index::open(&path).unwrap();
        let wal = index.wal_path();
        fill(&index);
        assert!(size(&wal) >= WAL_EMPTY_BYTES, "{} bytes", size(&wal));
        drop(index);
        assert_eq!(size(&wal), 0, "emptied on close");

        let index = Index::open(&path).unwrap();
        fill(&index);
        let reader = rusqlite::Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let rows: i64 = reader
            .query_row("SELECT count(*) FROM scratch", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 600);
        drop(index);
        assert!(size(&wal) >= WAL_EMPTY_BYTES, "left to the reader");
        reader.execute_batch("COMMIT").unwrap();
        drop(reader);
        assert!(Index::open(&path).is_ok());
    }

    /// Two processes' writes that read first: the second waits for the first, as the busy
    /// timeout promises. Begun deferred, the one whose snapshot another had committed past
    /// failed at once with "database is locked" (two MCP servers without a backend).
    #[test]
    fn a_write_that_reads_first_waits_for_another_processs_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        let (one, two) = (Index::open(&path).unwrap(), Index::open(&path).unwrap());
        let (began, go) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let first = s.spawn(|| {
                one.write(|tx| {
                    let n: i64 = tx.query_row("SELECT count(*) FROM meta", [], |r| r.get(0))?;
                    began.send(()).unwrap();
                    // The other writes meanwhile (or waits, as it should).
                    std::thread::sleep(std::time::Duration::from_millis(300));
                    tx.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('one', ?1)",
                        [n.to_string()],
                    )
                })
            });
            go.recv().unwrap();
            let second = two.write(|tx| {
                let _: i64 = tx.query_row("SELECT count(*) FROM meta", [], |r| r.get(0))?;
                tx.execute("INSERT OR REPLACE INTO meta VALUES ('two', 'x')", [])
            });
            assert!(second.is_ok(), "{second:?}");
            let first = first.join().unwrap();
            assert!(first.is_ok(), "{first:?}");
        });
    }

    #[test]
    fn open_creates_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/brain.sqlite");
        let index = Index::open(&path).unwrap();
        assert_eq!(
            index
                .read()
                .unwrap()
                .meta("schema_version")
                .unwrap()
                .as_deref(),
            Some(&*schema::SCHEMA_VERSION.to_string())
        );
        drop(index);
        Index::open(&path).unwrap();
    }

    #[test]
    fn many_first_opens_at_once_all_succeed() {
        // The app, a CLI call and `brain mcp` can all open a brain that has no index yet.
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("brain.sqlite");
            let start = std::sync::Barrier::new(6);
            std::thread::scope(|s| {
                let opens: Vec<_> = (0..6)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            Index::open(&path).map(|_| ())
                        })
                    })
                    .collect();
                for open in opens {
                    open.join().unwrap().unwrap();
                }
            });
        }
    }

    #[test]
    fn an_upgrade_that_moves_the_vectors_gives_their_old_pages_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            schema::create_at(&conn, 3);
            let mut insert = conn
                .prepare("INSERT INTO vectors(hash, vec) VALUES (?1, zeroblob(3072))")
                .unwrap();
            for i in 0..2000u32 {
                insert.execute([i.to_be_bytes()]).unwrap();
            }
        }
        let before = std::fs::metadata(&path).unwrap().len();
        let index = Index::open(&path).unwrap();
        let conn = index.conn().unwrap();
        let kept: i64 = conn
            .query_row("SELECT count(*) FROM vectors", [], |r| r.get(0))
            .unwrap();
        let free: i64 = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .unwrap();
        let after = std::fs::metadata(&path).unwrap().len();
        let temp_store: i64 = conn
            .query_row("PRAGMA temp_store", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            temp_store, 2,
            "the connection's own temp_store (MEMORY) is back"
        );
        assert_eq!(kept, 2000);
        // Without the compaction the file would hold both copies, half of it free.
        assert!(
            free < 10 && after < before * 3 / 2,
            "{before} -> {after}, {free} free pages"
        );
    }

    #[test]
    fn refuses_an_index_from_the_future() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        let index = Index::open(&path).unwrap();
        set_meta(&index.conn().unwrap(), "schema_version", "999").unwrap();
        drop(index);
        let err = Index::open(&path).err().unwrap();
        assert!(err.to_string().contains("newer than this brain"), "{err}");
    }
}
