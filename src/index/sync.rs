//! Bringing the index in line with the folder. A `stat` walk finds candidates; only files
//! whose (mtime, size) changed are read, and only those whose SHA-256 changed are parsed and
//! rewritten. Writes go in batches, one transaction each, so a crash leaves the last good
//! state and the next sync carries on from it.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use rusqlite::TransactionBehavior::Immediate;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::chunk::chunk_note;
use super::walk::{self, FileStat, Scope};
use super::{now_secs, set_meta, Index};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::note::{self, name_key, Note};

/// Notes written per transaction. Each transaction is IMMEDIATE: it takes the write lock
/// up front (waiting its turn) instead of upgrading a read, which fails at once with
/// SQLITE_BUSY when another writer (a search logging itself) committed in between.
const BATCH: usize = 500;

/// A sync that wrote at least this many notes merges the full-text index into one segment
/// (see [`merge_full_text`]).
const MERGE_AFTER: u64 = 1_000;

/// A file written this close to its sync is re-hashed next time: a second write inside the
/// same mtime tick would otherwise go unnoticed (git's "racy clean" problem).
const RACY_NS: i64 = 2_000_000_000;

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncReport {
    /// New notes.
    pub added: u64,
    /// Notes whose content changed.
    pub updated: u64,
    /// Notes gone from the folder (or now excluded).
    pub removed: u64,
    /// Notes whose content is unchanged.
    pub unchanged: u64,
    /// Files skipped or read with problems, one line each naming the file.
    pub warnings: Vec<String>,
    /// Wall time in milliseconds.
    pub took_ms: u64,
}

impl SyncReport {
    /// True when the sync changed nothing in the index.
    pub fn is_noop(&self) -> bool {
        self.added == 0 && self.updated == 0 && self.removed == 0
    }
}

/// An indexed note's stat columns: enough to tell that its file did not change.
struct Row {
    id: i64,
    mtime_ns: i64,
    size: u64,
}

/// A note whose file may have changed: its row and the hash of the content indexed, read
/// only for these few so that a sync's scan of every row stays on the covering index.
struct Known {
    id: i64,
    sha: [u8; 32],
}

/// The outcome of reading one candidate file.
enum Outcome {
    /// Same content as indexed: only the stat columns move.
    Same { id: i64, stat: FileStat },
    /// New or changed content.
    Changed {
        id: Option<i64>,
        stat: FileStat,
        sha: [u8; 32],
        note: Box<Note>,
        warning: Option<String>,
    },
    /// Not a note after all (deleted meanwhile, too large, binary): drop it from the index.
    Drop {
        id: Option<i64>,
        warning: Option<String>,
    },
    /// Could not be read this time (permissions, I/O): keep whatever the index has.
    Keep { warning: String },
}

/// How a sync runs; the default is an ordinary incremental sync.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncOptions<'a> {
    /// Re-read and rewrite every note even when its size, mtime and content are unchanged
    /// (a rebuild of the full-text index and passages; vectors survive, keyed by content).
    pub force: bool,
    /// Checked between batches: once set, the sync stops after the batch in hand and
    /// returns [`Error::Cancelled`], leaving every committed batch in place.
    pub cancel: Option<&'a AtomicBool>,
}

impl SyncOptions<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// Syncs the index with the folder named in `config`.
pub fn sync(index: &Index, config: &Config) -> Result<SyncReport> {
    sync_with(index, config, SyncOptions::default())
}

/// Syncs the whole folder, as `options` say.
pub fn sync_with(index: &Index, config: &Config, options: SyncOptions) -> Result<SyncReport> {
    let started = Instant::now();
    let everything = Scope::everything();
    // The walk (100k `stat` calls at 100k notes, most of a sync that finds nothing) and the
    // scan of the rows it is compared with run side by side. The rows are read outside the
    // write lock, as another process's sync may change them anyway: `apply` goes by path.
    let (walked, known) = std::thread::scope(|s| {
        let known = s.spawn(|| {
            let conn = index.conn()?;
            load_known(&conn, &everything).map_err(|e| index.err(e))
        });
        let walked = walk::walk(config);
        let known = known
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (walked, known)
    });
    reconcile(
        index,
        (walked?, known?),
        &everything,
        config,
        options,
        started,
    )
}

/// Syncs only `scope`: the files and folders a watcher saw change. Files there are read and
/// written exactly as a full sync would; notes indexed under a path that no longer holds
/// one are removed. Nothing outside the scope is looked at.
pub fn sync_paths(
    index: &Index,
    config: &Config,
    scope: &Scope,
    options: SyncOptions,
) -> Result<SyncReport> {
    let started = Instant::now();
    if scope.is_empty() {
        return Ok(SyncReport::default());
    }
    let walked = walk::walk_scoped(config, scope)?;
    let known = load_known(&*index.conn()?, scope).map_err(|e| index.err(e))?;
    reconcile(index, (walked, known), scope, config, options, started)
}

/// Brings the notes under `scope` in line with `walked`, the files found there, and
/// `known`, the rows indexed there.
fn reconcile(
    index: &Index,
    (mut walked, known): (walk::Walk, Vec<(String, Row)>),
    scope: &Scope,
    config: &Config,
    options: SyncOptions,
    started: Instant,
) -> Result<SyncReport> {
    // A folder that could not be listed still holds its notes: they are kept, not removed
    // (and their vectors with them), as an unreadable note is.
    let hidden = std::mem::take(&mut walked.unreadable);
    let hides = |rel: &str| walk::under_any(&hidden, rel);
    let mut report = SyncReport {
        warnings: walked.warnings,
        ..Default::default()
    };

    let mut writer = index.writer()?;

    // Both lists are sorted by path (walk order, and byte order here, which is SQLite's
    // BINARY order too), so one merge pairs every file with its row: no map of 100k paths.
    let mut candidates: Vec<(FileStat, Option<Row>)> = Vec::new();
    let mut removed: Vec<i64> = Vec::new();
    let mut rows = known.into_iter().peekable();
    for stat in walked.files {
        while let Some((path, row)) = rows.next_if(|(p, _)| p.as_str() < stat.rel.as_str()) {
            if scope.contains(&path) && !hides(&path) {
                removed.push(row.id);
            }
        }
        match rows.next_if(|(p, _)| *p == stat.rel) {
            // A note over a lowered `max_file_mb` is read again, to be dropped as any
            // new file that size is.
            Some((_, k))
                if !options.force
                    && k.mtime_ns == stat.mtime_ns
                    && k.size == stat.size
                    && stat.size <= config.max_file_bytes =>
            {
                report.unchanged += 1
            }
            row => candidates.push((stat, row.map(|(_, k)| k))),
        }
    }
    removed.extend(
        rows.filter(|(p, _)| scope.contains(p) && !hides(p))
            .map(|(_, k)| k.id),
    );

    // To the nanosecond: whole seconds would stretch the racy window up to a second more,
    // and every file in it is read again by the next sync.
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    for batch in candidates.chunks(BATCH) {
        if options.cancelled() {
            return Err(Error::Cancelled);
        }
        let known = hashes(&writer.conn, batch).map_err(|e| index.err(e))?;
        let reads: Vec<Outcome> = batch
            .par_iter()
            .zip(&known)
            .map(|((stat, _), known)| read_one(stat, known.as_ref(), config, options.force))
            .collect();
        let tx = writer
            .conn
            .transaction_with_behavior(Immediate)
            .map_err(|e| index.err(e))?;
        let changed = changes(&report);
        for r in reads {
            apply(&tx, r, now_ns, &mut report).map_err(|e| index.err(e))?;
        }
        // In the batch's own transaction: a sync killed before its last one (which moves
        // the version) must not leave a recorded "nothing pending" behind its new passages.
        if changes(&report) != changed {
            texts_changed(&tx).map_err(|e| index.err(e))?;
        }
        tx.commit().map_err(|e| index.err(e))?;
    }
    for batch in removed.chunks(BATCH) {
        if options.cancelled() {
            return Err(Error::Cancelled);
        }
        let tx = writer
            .conn
            .transaction_with_behavior(Immediate)
            .map_err(|e| index.err(e))?;
        for &id in batch {
            delete_note(&tx, id).map_err(|e| index.err(e))?;
            report.removed += 1;
        }
        texts_changed(&tx).map_err(|e| index.err(e))?;
        tx.commit().map_err(|e| index.err(e))?;
    }
    if changes(&report) >= MERGE_AFTER {
        merge_full_text(&writer.conn);
    }
    report.took_ms = started.elapsed().as_millis() as u64;
    // A scoped sync that changed nothing is not worth a line in `brain status`.
    if scope.is_everything() || !report.is_noop() {
        let summary = serde_json::to_string(&SyncSummary::from(&report)).unwrap_or_default();
        let recorded = writer
            .conn
            .transaction_with_behavior(Immediate)
            .and_then(|tx| {
                set_meta(&tx, "last_sync_at", &now_secs().to_string())?;
                set_meta(&tx, "last_sync", &summary)?;
                tx.commit()
            })
            .map_err(|e| index.err(e));
        match recorded {
            Ok(()) => {}
            // Nothing changed, so the index is current: on a read-only data dir or a full
            // disk only `brain status`'s "last sync" line is missed, and a search must not
            // be told its index is behind.
            Err(e) if report.is_noop() && e.is_unwritable() => {
                tracing::debug!(error = %e, "the sync's time not recorded");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(report)
}

/// Merges FTS5's segments into one. A large write leaves the full-text index in many
/// segments (11 after building 100k notes), and every lookup of a word opens each of them:
/// a search's snippets, which look up its words once per hit, took 3.4 ms at 100k notes
/// against 1.0 ms with one segment. The merge costs about 1 s at 100k notes, once per
/// large write; FTS5's own automerge keeps the small segments of later edits few. Scores do
/// not change (they depend only on the notes). Failing costs only that speed.
fn merge_full_text(conn: &rusqlite::Connection) {
    if let Err(e) = conn.execute("INSERT INTO notes_fts(notes_fts) VALUES('optimize')", []) {
        tracing::warn!(error = %e, "full-text index not merged (searches are slower)");
    }
}

/// Marks, in the transaction that changed notes, that their texts changed: the record of
/// pending vectors is void, the notes version moves (the warm engine's remembered keyword
/// scores are keyed by it; every score depends on every note through BM25's document
/// frequencies and average length), and so does the vectors version (the matrix file and
/// every loaded matrix are keyed by it: a sync stopped after this batch, killed or
/// cancelled, must not leave them looking current with passages gone or added).
fn texts_changed(tx: &Transaction) -> rusqlite::Result<()> {
    super::vectors::forget_record(tx)?;
    super::vectors::bump_version(tx)?;
    super::bump_counter(tx, super::NOTES_VERSION)
}

/// Notes added, updated or removed so far.
fn changes(r: &SyncReport) -> u64 {
    r.added + r.updated + r.removed
}

/// The counts of the last sync, as kept in `meta`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncSummary {
    /// New notes.
    pub added: u64,
    /// Changed notes.
    pub updated: u64,
    /// Removed notes.
    pub removed: u64,
    /// Warnings issued.
    pub warnings: u64,
    /// Wall time in milliseconds.
    pub took_ms: u64,
}

impl From<&SyncReport> for SyncSummary {
    fn from(r: &SyncReport) -> Self {
        SyncSummary {
            added: r.added,
            updated: r.updated,
            removed: r.removed,
            warnings: r.warnings.len() as u64,
            took_ms: r.took_ms,
        }
    }
}

/// The path and stat columns of every indexed note in `scope`, sorted by path, all read
/// from the covering index `notes_stat` (half the time of a scan of the table at 100k
/// notes). A watcher's scope reads only its own rows, so one edit at 100k notes costs what
/// it costs at 100.
fn load_known(conn: &Connection, scope: &Scope) -> rusqlite::Result<Vec<(String, Row)>> {
    const SELECT: &str = "SELECT id, path, mtime_ns, size FROM notes INDEXED BY notes_stat";
    fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Row)> {
        Ok((
            r.get::<_, String>(1)?,
            Row {
                id: r.get(0)?,
                mtime_ns: r.get(2)?,
                size: r.get::<_, i64>(3)? as u64,
            },
        ))
    }
    let mut known = Vec::new();
    if scope.is_everything() {
        let mut stmt = conn.prepare(SELECT)?;
        for k in stmt.query_map([], row)? {
            known.push(k?);
        }
    } else {
        let mut exact = conn.prepare_cached(&format!("{SELECT} WHERE path = ?1"))?;
        // Everything inside the folder `p`: from `p/` up to `p0`, the byte after `/`.
        let mut inside =
            conn.prepare_cached(&format!("{SELECT} WHERE path >= ?1 AND path < ?2"))?;
        // Scope paths never lie inside one another, so no row is read twice.
        for p in scope.paths() {
            for k in exact.query_map([p], row)? {
                known.push(k?);
            }
            for k in inside.query_map([format!("{p}/"), format!("{p}0")], row)? {
                known.push(k?);
            }
        }
    }
    known.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(known)
}

/// For each file of the batch that has a row, the content hash indexed for it: a file
/// whose stat changed is re-indexed only when its bytes did too.
fn hashes(
    conn: &Connection,
    batch: &[(FileStat, Option<Row>)],
) -> rusqlite::Result<Vec<Option<Known>>> {
    let mut sha = conn.prepare_cached("SELECT sha256 FROM notes WHERE id = ?1")?;
    batch
        .iter()
        .map(|(_, row)| {
            let Some(r) = row else { return Ok(None) };
            // A row gone since the scan compares as a hash no content has: re-read.
            let hash: Option<Vec<u8>> = sha.query_row([r.id], |x| x.get(0)).optional()?;
            Ok(Some(Known {
                id: r.id,
                sha: hash.and_then(|h| h.try_into().ok()).unwrap_or([0; 32]),
            }))
        })
        .collect()
}

fn read_one(stat: &FileStat, known: Option<&Known>, config: &Config, force: bool) -> Outcome {
    let id = known.map(|k| k.id);
    if stat.size > config.max_file_bytes {
        let warning = format!(
            "{}: skipped: {:.2} MB is over the {:.0} MB limit (max_file_mb)",
            stat.rel,
            crate::config::megabytes(stat.size),
            crate::config::megabytes(config.max_file_bytes)
        );
        return Outcome::Drop {
            id,
            warning: Some(warning),
        };
    }
    let bytes = match read_capped(stat, config.max_file_bytes) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Outcome::Drop { id, warning: None }
        }
        Err(e) => {
            return Outcome::Keep {
                warning: format!("{}: not read: {e}", stat.rel),
            }
        }
    };
    if bytes.len() as u64 > config.max_file_bytes {
        return Outcome::Drop {
            id,
            warning: Some(format!("{}: skipped: grew over the size limit", stat.rel)),
        };
    }
    if crate::note::looks_binary(&bytes) {
        return Outcome::Drop {
            id,
            warning: Some(format!("{}: skipped: binary file (NUL bytes)", stat.rel)),
        };
    }
    let sha: [u8; 32] = Sha256::digest(&bytes).into();
    if let Some(k) = known.filter(|_| !force) {
        if k.sha == sha {
            return Outcome::Same {
                id: k.id,
                stat: stat.clone(),
            };
        }
    }
    let (note, warnings) = note::parse(&stat.rel, &bytes);
    // Only the first problem per file: one line per file keeps the output readable.
    let warning = warnings.into_iter().next();
    Outcome::Changed {
        id,
        stat: stat.clone(),
        sha,
        note: Box::new(note),
        warning,
    }
}

fn read_capped(stat: &FileStat, max: u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(&stat.abs)?;
    let mut bytes = Vec::with_capacity(stat.size as usize);
    file.by_ref().take(max + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn apply(
    tx: &Transaction,
    read: Outcome,
    now_ns: i128,
    report: &mut SyncReport,
) -> rusqlite::Result<()> {
    let racy = |stat: &FileStat| {
        if now_ns - (stat.mtime_ns as i128) < RACY_NS as i128 {
            -1
        } else {
            stat.mtime_ns
        }
    };
    match read {
        Outcome::Same { id, stat } => {
            tx.prepare_cached("UPDATE notes SET mtime_ns = ?2, size = ?3 WHERE id = ?1")?
                .execute(params![id, racy(&stat), stat.size as i64])?;
            report.unchanged += 1;
        }
        Outcome::Changed {
            id,
            stat,
            sha,
            note,
            warning,
        } => {
            report.warnings.extend(warning.clone());
            if id.is_some() {
                report.updated += 1;
            } else {
                report.added += 1;
            }
            // By path, not by the id read at the start: another process syncing the same
            // root may have replaced the row since.
            let current: Option<i64> = tx
                .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
                .query_row([&note.path], |r| r.get(0))
                .optional()?;
            if let Some(current) = current {
                delete_note(tx, current)?;
            }
            insert_note(tx, &note, &stat, racy(&stat), &sha, warning.as_deref())?;
        }
        Outcome::Drop { id, warning } => {
            if let Some(w) = warning {
                report.warnings.push(w);
            }
            if let Some(id) = id {
                delete_note(tx, id)?;
                report.removed += 1;
            }
        }
        Outcome::Keep { warning } => report.warnings.push(warning),
    }
    Ok(())
}

fn insert_note(
    tx: &Transaction,
    note: &Note,
    stat: &FileStat,
    mtime_ns: i64,
    sha: &[u8; 32],
    problem: Option<&str>,
) -> rusqlite::Result<()> {
    let tags = serde_json::to_string(&note.tags).unwrap_or_else(|_| "[]".into());
    let fields = serde_json::Value::Object(note.fields.clone()).to_string();
    tx.prepare_cached(
        "INSERT INTO notes(path, type, title, title_key, stem_key, tags, fields, mtime_ns, size, sha256, body_line, indexed_at, date, problem)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        note.path,
        note.kind,
        note.title,
        name_key(&note.title),
        name_key(note.path.rsplit('/').next().unwrap_or(&note.path).trim_end_matches(".md")),
        tags,
        fields,
        mtime_ns,
        stat.size as i64,
        &sha[..],
        note.body_line,
        now_secs(),
        crate::date::note_date(&note.fields, &note.path).map(|d| d.to_string()),
        problem
    ])?;
    let id = tx.last_insert_rowid();
    let mut link =
        tx.prepare_cached("INSERT INTO links(note_id, target, line) VALUES (?1, ?2, ?3)")?;
    for l in crate::kb::links::extract(&note.body, note.body_line) {
        link.execute(params![id, l.target, l.line])?;
    }
    tx.prepare_cached("INSERT INTO notes_fts(rowid, title, tags, body) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![
            id,
            super::cjk::spaced(&note.title),
            super::cjk::spaced(&note.tags.join(" ")),
            super::cjk::spaced(&note.text)
        ])?;
    let mut stmt = tx.prepare_cached(
        "INSERT INTO chunks(note_id, seq, line, end_line, heading, text, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for c in chunk_note(note) {
        stmt.execute(params![
            id,
            c.seq,
            c.line,
            c.end_line,
            c.heading,
            c.text,
            &c.hash[..]
        ])?;
    }
    Ok(())
}

fn delete_note(tx: &Transaction, id: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM chunks WHERE note_id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM links WHERE note_id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM notes WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::Duration;

    fn config(root: &std::path::Path) -> Config {
        Config::for_root(root, root.join(".data"))
    }

    #[test]
    fn file_deleted_between_walk_and_read_is_dropped_quietly() {
        let dir = tempfile::tempdir().unwrap();
        let stat = FileStat {
            rel: "gone.md".into(),
            abs: dir.path().join("gone.md"),
            mtime_ns: 1,
            size: 3,
        };
        let known = Known {
            id: 7,
            sha: [0; 32],
        };
        match read_one(&stat, Some(&known), &config(dir.path()), false) {
            Outcome::Drop {
                id: Some(7),
                warning: None,
            } => {}
            _ => panic!("expected a quiet drop"),
        }
    }

    #[test]
    fn adds_and_removals_interleaved_in_path_order_are_all_seen() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str| {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, format!("# {rel}\n\nbody of {rel}\n")).unwrap();
        };
        // `a/b.md` sorts after `a.md` and before `a0.md`: byte order, as SQLite's.
        for rel in ["a.md", "a/b.md", "c.md", "e/f.md", "g.md"] {
            write(rel);
        }
        let cfg = config(dir.path());
        let index = Index::open(&dir.path().join(".data/i.sqlite")).unwrap();
        assert_eq!(sync(&index, &cfg).unwrap().added, 5);
        fs::remove_file(dir.path().join("a/b.md")).unwrap();
        fs::remove_file(dir.path().join("g.md")).unwrap();
        for rel in ["a0.md", "b.md", "d.md", "z/z.md"] {
            write(rel);
        }
        let r = sync(&index, &cfg).unwrap();
        assert_eq!((r.added, r.removed, r.unchanged), (4, 2, 3), "{r:?}");
        let paths: Vec<String> = index
            .conn()
            .unwrap()
            .prepare("SELECT path FROM notes ORDER BY path")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            paths,
            ["a.md", "a0.md", "b.md", "c.md", "d.md", "e/f.md", "z/z.md"]
        );
        assert!(sync(&index, &cfg).unwrap().is_noop());
    }

    #[test]
    fn unchanged_content_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# A\nsame\n").unwrap();
        let cfg = config(dir.path());
        let index = Index::open(&dir.path().join(".data/i.sqlite")).unwrap();
        assert_eq!(sync(&index, &cfg).unwrap().added, 1);
        let id_before: i64 = index
            .conn()
            .unwrap()
            .query_row("SELECT id FROM notes", [], |r| r.get(0))
            .unwrap();
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join("a.md"))
            .unwrap();
        f.set_modified(std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(5))
            .unwrap();
        let report = sync(&index, &cfg).unwrap();
        assert!(report.is_noop(), "{report:?}");
        let id_after: i64 = index
            .conn()
            .unwrap()
            .query_row("SELECT id FROM notes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(id_before, id_after, "the row was rewritten");
    }

    #[test]
    fn racy_writes_are_rehashed_next_time() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "one").unwrap();
        let cfg = config(dir.path());
        let index = Index::open(&dir.path().join(".data/i.sqlite")).unwrap();
        sync(&index, &cfg).unwrap();
        let stored: i64 = index
            .conn()
            .unwrap()
            .query_row("SELECT mtime_ns FROM notes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            stored, -1,
            "a just-written file must be re-checked by content next time"
        );
    }

    fn brain(files: &[(&str, &str)]) -> (tempfile::TempDir, Config, Index) {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::for_root(dir.path().join("root"), dir.path().join("data"));
        for (path, text) in files {
            let p = config.root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        fs::create_dir_all(&config.root).unwrap();
        let index = Index::open(&config.index_path()).unwrap();
        (dir, config, index)
    }

    fn paths(index: &Index) -> Vec<String> {
        let conn = index.conn().unwrap();
        let mut stmt = conn
            .prepare("SELECT path FROM notes ORDER BY path")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn targeted_sync_touches_only_its_scope() {
        let (_dir, config, index) = brain(&[
            ("a.md", "a"),
            ("lore/b.md", "b"),
            ("lore/c.md", "c"),
            ("idea/d.md", "d"),
        ]);
        sync(&index, &config).unwrap();
        fs::write(config.root.join("new.md"), "n").unwrap();
        fs::remove_file(config.root.join("a.md")).unwrap();
        fs::remove_dir_all(config.root.join("lore")).unwrap();
        fs::write(config.root.join("idea/d.md"), "changed").unwrap();

        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["new.md", "lore"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert_eq!((r.added, r.updated, r.removed), (1, 0, 2));
        // a.md is gone and idea/d.md changed, but neither was in scope.
        assert_eq!(paths(&index), ["a.md", "idea/d.md", "new.md"]);

        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["a.md", "idea/d.md"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert_eq!((r.added, r.updated, r.removed), (0, 1, 1));
        assert_eq!(paths(&index), ["idea/d.md", "new.md"]);
    }

    #[test]
    fn a_folder_scope_reads_no_sibling_that_shares_its_name() {
        let (_dir, config, index) = brain(&[
            ("lore.md", "1"),
            ("lore-old/x.md", "2"),
            ("lore/b.md", "3"),
            ("lore0/y.md", "4"),
        ]);
        sync(&index, &config).unwrap();
        for p in ["lore.md", "lore-old", "lore", "lore0"] {
            let p = config.root.join(p);
            if p.is_dir() {
                fs::remove_dir_all(p).unwrap();
            } else {
                fs::remove_file(p).unwrap();
            }
        }
        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["lore"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert_eq!(r.removed, 1, "{r:?}");
        assert_eq!(paths(&index), ["lore-old/x.md", "lore.md", "lore0/y.md"]);
    }

    #[test]
    fn folder_moved_in_is_indexed_whole() {
        let (dir, config, index) = brain(&[("a.md", "a")]);
        sync(&index, &config).unwrap();
        let outside = dir.path().join("incoming");
        fs::create_dir_all(outside.join("deep")).unwrap();
        fs::write(outside.join("x.md"), "x").unwrap();
        fs::write(outside.join("deep/y.md"), "y").unwrap();
        fs::rename(&outside, config.root.join("incoming")).unwrap();
        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["incoming"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert_eq!(r.added, 2);
        assert_eq!(
            paths(&index),
            ["a.md", "incoming/deep/y.md", "incoming/x.md"]
        );
    }

    #[test]
    fn force_rewrites_and_cancel_stops() {
        let (_dir, config, index) = brain(&[("a.md", "a"), ("b.md", "b")]);
        sync(&index, &config).unwrap();
        let r = sync_with(
            &index,
            &config,
            SyncOptions {
                force: true,
                cancel: None,
            },
        )
        .unwrap();
        assert_eq!((r.updated, r.unchanged), (2, 0));
        let stop = AtomicBool::new(true);
        let err = sync_with(
            &index,
            &config,
            SyncOptions {
                force: true,
                cancel: Some(&stop),
            },
        )
        .unwrap_err();
        assert!(matches!(err, Error::Cancelled), "{err}");
    }

    #[test]
    fn each_batch_that_changes_texts_moves_both_versions_in_its_own_transaction() {
        let (_dir, _config, index) = brain(&[]);
        let mut conn = index.conn().unwrap();
        let versions = |c: &rusqlite::Connection| {
            (
                super::super::vectors::version(c).unwrap(),
                super::super::counter(c, super::super::NOTES_VERSION).unwrap(),
            )
        };
        let before = versions(&conn);
        let tx = conn.transaction().unwrap();
        texts_changed(&tx).unwrap();
        tx.commit().unwrap();
        let after = versions(&conn);
        assert!(
            after.0 > before.0 && after.1 > before.1,
            "{before:?} -> {after:?}"
        );
    }

    #[test]
    fn a_large_write_leaves_one_full_text_segment_and_a_small_one_merges_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let n = MERGE_AFTER as usize + 200;
        for i in 0..n {
            let p = dir.path().join(format!("n{i:05}.md"));
            fs::write(p, format!("# note {i}\n\nword{} shared text\n", i % 37)).unwrap();
        }
        let cfg = config(dir.path());
        let index = Index::open(&dir.path().join(".data/i.sqlite")).unwrap();
        let segments = || -> i64 {
            index
                .conn()
                .unwrap()
                .query_row("SELECT count(DISTINCT segid) FROM notes_fts_idx", [], |r| {
                    r.get(0)
                })
                .unwrap()
        };
        // Three batches, three segments, had it not merged them.
        assert_eq!(sync(&index, &cfg).unwrap().added, n as u64);
        assert_eq!(segments(), 1);
        fs::write(dir.path().join("new.md"), "# new\n\nfresh words\n").unwrap();
        assert_eq!(sync(&index, &cfg).unwrap().added, 1);
        assert_eq!(segments(), 2, "one note is not worth a merge");
    }
}
