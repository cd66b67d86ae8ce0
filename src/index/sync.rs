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
use super::journal::{self, Journal, Mark, Plan};
use super::walk::{self, FileStat, Scope};
use super::{meta, set_meta, Index};
use crate::config::Config;
use crate::date::{now_ms, now_secs};
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

/// The mtime stored for a file written within [`RACY_NS`] of its sync: no file has it, so
/// the next walk reads the file again.
const RACY_MARK: i64 = -1;

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
    /// How many of `warnings` are of notes read (and indexed) with a problem, which the
    /// index keeps: the others are of files skipped, said again on every sync.
    #[serde(skip)]
    pub note_warnings: u64,
    /// The `warnings` of files (or folders) not read into the index, or kept as last
    /// indexed: what `brain check` lists as skipped. Of a whole-folder sync, every one.
    #[serde(skip)]
    pub skipped: Vec<String>,
    /// Paths whose stat differed from the index's, or that are gone: what a change journal
    /// must have reported (files marked to be read again for a racy write are left out).
    #[serde(skip)]
    pub changed: Vec<String>,
    /// Some notes could not be read (or a folder listed) and were kept as last indexed.
    #[serde(skip)]
    pub incomplete: bool,
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

impl Row {
    /// Whether the file's stat is the one indexed.
    fn stat_is(&self, stat: &FileStat) -> bool {
        self.mtime_ns == stat.mtime_ns && self.size == stat.size
    }
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
    /// New or changed content (the row it replaces, if any, is looked up by path when
    /// written).
    Changed {
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

/// Syncs the whole folder like [`sync`], but reads only what the volume's change journal
/// says changed since the last sync that could be trusted, when it can vouch for that
/// ([`journal`] says when); otherwise walks. What a command without a backend runs first.
pub fn sync_recent(index: &Index, config: &Config) -> Result<SyncReport> {
    sync_recent_with(index, config, journal::system())
}

/// [`sync_recent`] with the given journal (`None`: always walk).
pub(crate) fn sync_recent_with(
    index: &Index,
    config: &Config,
    journal: Option<&dyn Journal>,
) -> Result<SyncReport> {
    let Some(journal) = journal else {
        return sync(index, config);
    };
    let Ok(root_real) = std::fs::canonicalize(&config.root) else {
        return sync(index, config);
    };
    // Beside the index file: on the data dir's volume, which the journal checks.
    let cookies = index.path().with_file_name("journal");
    // Taken before anything is read: what happens from here on is replayed next time.
    let Some((id, event)) = journal.position(&root_real, &cookies) else {
        return sync(index, config);
    };
    let settings = journal::settings(config, &root_real);
    let now = now_secs();
    let recorded = super::meta(&*index.conn()?, journal::MARK_KEY).map_err(|e| index.err(e))?;
    let marked = Mark::from_meta(recorded).filter(|m| m.is_of(&id, &settings));
    let replay = |since: u64| {
        journal
            .since(&root_real, since, &cookies)
            .map(|changes| journal::plan(&root_real, &changes))
    };
    let recent = |m: &&Mark| (0..journal::WALK_EVERY).contains(&(now - m.walked_at));
    // What a replay before the walk said, if one ran: `None` inside when it did not finish.
    let mut first: Option<Option<Plan>> = None;
    if let Some(mark) = marked.as_ref().filter(recent).filter(|m| m.trusted()) {
        let plan = replay(mark.event);
        if let Some(Plan::Paths(paths)) = plan {
            if paths.is_empty() {
                // Nothing to read, and nothing written: the next replay starts from the
                // same mark, which the walk deadline keeps short.
                return Ok(SyncReport::default());
            }
            let report = sync_paths(index, config, &Scope::new(paths), SyncOptions::default())?;
            // A note that could not be read is named again by the next replay.
            if !report.incomplete {
                let moved = Mark {
                    event,
                    ..mark.clone()
                };
                record_mark(index, &moved);
            }
            return Ok(report);
        }
        first = Some(plan);
    }
    let report = sync(index, config)?;
    // The walk is the check of the journal: a walk that finds changes replays the same
    // span, after it (no news is no evidence). It earns trust by naming every change, and
    // loses it for good by missing one, or by a replay that does not finish (which would
    // otherwise cost that wait on every search; a daemon slow for a moment thus turns the
    // journal off until the next restart). A replay that just asked for a walk would
    // again.
    let (mut confirmed, mut missed) = marked
        .as_ref()
        .map_or((false, false), |m| (m.confirmed, m.missed));
    missed |= matches!(first, Some(None));
    let asked_for_a_walk = matches!(first, Some(Some(Plan::Walk)));
    if let Some(mark) = marked
        .as_ref()
        .filter(|_| !missed && !asked_for_a_walk && !report.changed.is_empty())
    {
        match replay(mark.event) {
            Some(Plan::Paths(named)) => {
                let named = Scope::new(named);
                match report.changed.iter().all(|path| named.contains(path)) {
                    true => confirmed = true,
                    false => missed = true,
                }
            }
            Some(Plan::Walk) => {}
            None => missed = true,
        }
    }
    // A note that could not be read is read again by the next sync's walk: unconfirmed.
    let mark = Mark {
        journal: id,
        event,
        settings,
        walked_at: now,
        confirmed: confirmed && !report.incomplete,
        missed,
    };
    record_mark(index, &mark);
    Ok(report)
}

/// Records where the journal stood before a sync that succeeded. Failing costs only a walk
/// next time.
fn record_mark(index: &Index, mark: &Mark) {
    let recorded = index.writer().and_then(|mut w| {
        let tx = w
            .conn
            .transaction_with_behavior(Immediate)
            .map_err(|e| index.err(e))?;
        let merged = merge_mark(&tx, mark).map_err(|e| index.err(e))?;
        let json = serde_json::to_string(&merged).unwrap_or_default();
        set_meta(&tx, journal::MARK_KEY, &json)
            .and_then(|()| tx.commit())
            .map_err(|e| index.err(e))
    });
    if let Err(e) = recorded {
        tracing::debug!(error = %e, "journal mark not recorded (the next sync walks)");
    }
}

/// `mark`, still distrusting the journal if another process caught it missing a change
/// since this sync read the mark (for the same journal and settings).
fn merge_mark(tx: &Transaction, mark: &Mark) -> rusqlite::Result<Mark> {
    let current = Mark::from_meta(super::meta(tx, journal::MARK_KEY)?)
        .filter(|c| c.is_of(&mark.journal, &mark.settings));
    let mut merged = mark.clone();
    merged.missed |= current.is_some_and(|c| c.missed);
    Ok(merged)
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
        skipped: walked.warnings.clone(),
        warnings: walked.warnings,
        incomplete: !hidden.is_empty(),
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
                report.changed.push(path);
            }
        }
        let row = rows.next_if(|(p, _)| *p == stat.rel);
        // A note over a lowered `max_file_mb` is read again, to be dropped as any new file
        // that size is.
        let unchanged_stat = row.as_ref().is_some_and(|(_, k)| {
            !options.force && k.stat_is(&stat) && stat.size <= config.max_file_bytes
        });
        // A note whose mode may refuse the read is read again to find out (a chmod moves
        // neither its time nor its size).
        let same_stat = unchanged_stat && stat.readable;
        if same_stat {
            // A file a scoped sync names (the watcher saw it written, a `brain new` saved it,
            // a backend's `similar` or `links` asked for it) is read whatever its stat says:
            // `cp -p`, `rsync -a` or a tar restore writes other text under the same size and
            // time, and it was never indexed (a whole sync still trusts the stat: reading
            // every note is the cost it exists to save). Its hash says whether it changed.
            if scope.names(&stat.rel) {
                candidates.push((stat, row.map(|(_, k)| k)));
            } else {
                report.unchanged += 1;
            }
            continue;
        }
        // Read again for a doubt of brain's (a racy stat, a mode that may refuse the
        // read), not for a change seen: not among the changes, which a change journal
        // is checked against (every walk would name it, and the journal never be trusted).
        if row.as_ref().is_none_or(|(_, k)| k.mtime_ns != RACY_MARK) && !unchanged_stat {
            report.changed.push(stat.rel.clone());
        }
        candidates.push((stat, row.map(|(_, k)| k)));
    }
    for (path, row) in rows.filter(|(p, _)| scope.contains(p) && !hides(p)) {
        removed.push(row.id);
        report.changed.push(path);
    }

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
        // Named files read again and found as they were, stat and all (a `similar` on a
        // note through the backend names it): nothing to write, so no write lock is taken.
        let as_stored = |(read, (stat, row)): (&Outcome, &(FileStat, Option<Row>))| {
            matches!(read, Outcome::Same { .. }) && row.as_ref().is_some_and(|k| k.stat_is(stat))
        };
        if reads.iter().zip(batch).all(as_stored) {
            report.unchanged += reads.len() as u64;
            continue;
        }
        let tx = writer
            .conn
            .transaction_with_behavior(Immediate)
            .map_err(|e| index.err(e))?;
        let changed = changes(&report);
        for r in reads {
            apply(&tx, r, now_ns, options.force, &mut report).map_err(|e| index.err(e))?;
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
            // Not counted when another process removed it first.
            report.removed += u64::from(delete_note(&tx, id).map_err(|e| index.err(e))?);
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
        let recorded = writer
            .conn
            .transaction_with_behavior(Immediate)
            .and_then(|tx| {
                let now = now_ms();
                let started = now.saturating_sub(report.took_ms as i64);
                let summary = SyncSummary::from(&report).after(&tx, started)?;
                let summary = serde_json::to_string(&summary).unwrap_or_default();
                set_meta(&tx, "last_sync_at", &(now / 1000).to_string())?;
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

/// The counts of the last sync, as kept in `meta`: of one sync, or of a burst of them
/// (see [`SyncSummary::after`]), summed per sync (a note changed twice counts twice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncSummary {
    /// New notes.
    pub added: u64,
    /// Changed notes.
    pub updated: u64,
    /// Removed notes.
    pub removed: u64,
    /// Warnings issued.
    pub warnings: u64,
    /// Wall time in milliseconds (of every sync counted, summed).
    pub took_ms: u64,
    /// How many syncs the counts are of: one, or a burst.
    #[serde(default = "one")]
    pub syncs: u64,
}

fn one() -> u64 {
    1
}

impl Default for SyncSummary {
    /// A sync that did nothing.
    fn default() -> Self {
        SyncSummary {
            added: 0,
            updated: 0,
            removed: 0,
            warnings: 0,
            took_ms: 0,
            syncs: 1,
        }
    }
}

/// A sync that changes notes at most this long after the last one that did ended is counted
/// with it: a `git pull` of 2,000 notes reaches the watcher in pieces over a few seconds, and
/// `brain status` said `+40` (the last piece) for it.
const BURST_GAP_MS: i64 = 5_000;

/// A burst is counted whole for at most this long from its first sync's start: an editor
/// that saves every few seconds for an hour is not one burst.
const BURST_MAX_MS: i64 = 60_000;

/// Where the start of the burst `last_sync` counts is kept (unix milliseconds).
const BURST_STARTED: &str = "last_sync_burst_started_ms";

impl SyncSummary {
    fn changed(&self) -> bool {
        self.added + self.updated + self.removed > 0
    }

    /// This sync's counts (it started at unix millisecond `started`), with the last
    /// recorded sync's added when both changed notes, that one ended at most
    /// [`BURST_GAP_MS`] before this one started, and the burst began at most
    /// [`BURST_MAX_MS`] ago. Records the burst's start in `tx`.
    fn after(self, tx: &Transaction, started: i64) -> rusqlite::Result<SyncSummary> {
        let at_ms: Option<i64> = meta(tx, "last_sync_at")?
            .and_then(|v| v.parse::<i64>().ok())
            .map(|s| s.saturating_mul(1000));
        let burst_began: Option<i64> = meta(tx, BURST_STARTED)?.and_then(|v| v.parse().ok());
        let before: Option<SyncSummary> =
            meta(tx, "last_sync")?.and_then(|v| serde_json::from_str(&v).ok());
        // `last_sync_at` is whole seconds: its end is up to a second later than it says.
        let close = |at: i64| (-1000..=BURST_GAP_MS).contains(&started.saturating_sub(at));
        let young = |began: i64| (0..=BURST_MAX_MS).contains(&started.saturating_sub(began));
        let (summary, began) = match (at_ms, burst_began, before) {
            (Some(at), Some(began), Some(b))
                if self.changed() && b.changed() && close(at) && young(began) =>
            {
                let sum = SyncSummary {
                    added: b.added + self.added,
                    updated: b.updated + self.updated,
                    removed: b.removed + self.removed,
                    warnings: b.warnings + self.warnings,
                    took_ms: b.took_ms + self.took_ms,
                    syncs: b.syncs + self.syncs,
                };
                (sum, began)
            }
            _ => (self, started),
        };
        set_meta(tx, BURST_STARTED, &began.to_string())?;
        Ok(summary)
    }
}

impl From<&SyncReport> for SyncSummary {
    fn from(r: &SyncReport) -> Self {
        SyncSummary {
            added: r.added,
            updated: r.updated,
            removed: r.removed,
            warnings: r.warnings.len() as u64,
            took_ms: r.took_ms,
            syncs: 1,
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

/// macOS's AppleDouble file `._note.md`, which it writes beside every note on exFAT, SMB or
/// a USB disk: its name and its magic number, so that a text note named `._x.md` is still a
/// note. Never a note, and not worth a warning on every sync (it was one, as binary).
fn is_apple_double(rel: &str, bytes: &[u8]) -> bool {
    const MAGIC: [u8; 4] = [0x00, 0x05, 0x16, 0x07];
    rel.rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("._"))
        && bytes.starts_with(&MAGIC)
}

fn read_one(stat: &FileStat, known: Option<&Known>, config: &Config, force: bool) -> Outcome {
    let id = known.map(|k| k.id);
    if stat.size > config.max_file_bytes {
        let warning = format!(
            "{}: skipped: {:.2} MiB is over the {:.0} MiB limit (max_file_mb)",
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
            // Searched as last indexed meanwhile; said with what to do, as `get` says it.
            let e = crate::error::reading_note(&stat.abs, e);
            let cause = match &e {
                Error::Io { cause, .. } => cause.to_string(),
                other => other.to_string(),
            };
            return Outcome::Keep {
                warning: format!("{}: not read: {cause}", stat.rel),
            };
        }
    };
    if bytes.len() as u64 > config.max_file_bytes {
        return Outcome::Drop {
            id,
            warning: Some(format!("{}: skipped: grew over the size limit", stat.rel)),
        };
    }
    if is_apple_double(&stat.rel, &bytes) {
        return Outcome::Drop { id, warning: None };
    }
    if crate::note::looks_binary(&bytes) {
        return Outcome::Drop {
            id,
            warning: Some(format!(
                "{}: skipped: {}",
                stat.rel,
                crate::note::not_text_why(&bytes)
            )),
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
    force: bool,
    report: &mut SyncReport,
) -> rusqlite::Result<()> {
    let racy = |stat: &FileStat| {
        if now_ns - (stat.mtime_ns as i128) < RACY_NS as i128 {
            RACY_MARK
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
            stat,
            sha,
            note,
            warning,
        } => {
            report.warnings.extend(warning.clone());
            report.note_warnings += u64::from(warning.is_some());
            // By path, not by the id read at the start: another process syncing the same
            // root (two `brain index` at once) may have written the row since, and then
            // what it wrote is what this sync read: counted unchanged, not rewritten (a
            // rewrite would give the note a new id for nothing).
            let current: Option<(i64, Vec<u8>)> = tx
                .prepare_cached("SELECT id, sha256 FROM notes WHERE path = ?1")?
                .query_row([&note.path], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            match current {
                Some((current, stored)) if !force && stored == sha => {
                    return apply(
                        tx,
                        Outcome::Same { id: current, stat },
                        now_ns,
                        force,
                        report,
                    );
                }
                Some((current, _)) => {
                    delete_note(tx, current)?;
                    report.updated += 1;
                }
                None => report.added += 1,
            }
            insert_note(tx, &note, &stat, racy(&stat), &sha, warning.as_deref())?;
        }
        Outcome::Drop { id, warning } => {
            if let Some(w) = warning {
                report.skipped.push(w.clone());
                report.warnings.push(w);
            }
            if let Some(id) = id {
                report.removed += u64::from(delete_note(tx, id)?);
            }
        }
        Outcome::Keep { warning } => {
            report.skipped.push(warning.clone());
            report.warnings.push(warning);
            report.incomplete = true;
        }
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
    let mut link = tx.prepare_cached(
        "INSERT INTO links(note_id, target, line, heading) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for l in crate::kb::links::extract(&note.body, note.body_line) {
        link.execute(params![id, l.target, l.line, l.heading])?;
    }
    tx.prepare_cached("INSERT INTO notes_fts(rowid, title, tags, body) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![
            id,
            super::fts_text::indexed(&note.title),
            super::fts_text::indexed(&note.tags.join(" ")),
            super::fts_text::indexed(&note.text)
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

/// Removes note `id` and all that hangs on it; whether it was there.
fn delete_note(tx: &Transaction, id: i64) -> rusqlite::Result<bool> {
    tx.prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM chunks WHERE note_id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM links WHERE note_id = ?1")?
        .execute([id])?;
    let deleted = tx
        .prepare_cached("DELETE FROM notes WHERE id = ?1")?
        .execute([id])?;
    Ok(deleted > 0)
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
            readable: true,
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
    fn a_burst_of_syncs_is_counted_whole_in_the_last_sync() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path());
        let index = Index::open(&dir.path().join(".data/i.sqlite")).unwrap();
        let last = || -> SyncSummary {
            let conn = index.conn().unwrap();
            serde_json::from_str(&meta(&conn, "last_sync").unwrap().unwrap()).unwrap()
        };
        let piece = |names: &[&str]| {
            for n in names.iter().filter(|n| !dir.path().join(n).exists()) {
                fs::write(dir.path().join(n), format!("# {n}\n")).unwrap();
            }
            sync_paths(
                &index,
                &cfg,
                &Scope::new(names.iter().copied()),
                SyncOptions::default(),
            )
            .unwrap();
        };
        // A checkout the watcher saw in three pieces, one of them an edit.
        piece(&["a.md", "b.md"]);
        piece(&["c.md"]);
        fs::write(dir.path().join("a.md"), "# a\nedited\n").unwrap();
        piece(&["a.md", "d.md"]);
        let l = last();
        assert_eq!(
            (l.added, l.updated, l.removed, l.syncs),
            (4, 1, 0, 3),
            "{l:?}"
        );
        // A sync that changes nothing is the last sync, as it was.
        sync(&index, &cfg).unwrap();
        assert_eq!((last().added, last().syncs), (0, 1));
        // A change seconds after another, but not after one that changed nothing, starts anew.
        piece(&["e.md"]);
        assert_eq!((last().added, last().syncs), (1, 1));
        piece(&["f.md"]);
        assert_eq!((last().added, last().syncs), (2, 2));
        let shift = |key: &str, by: i64| {
            index
                .conn()
                .unwrap()
                .execute(
                    "UPDATE meta SET value = value + ?1 WHERE key = ?2",
                    params![by, key],
                )
                .unwrap();
        };
        // Nor long after one that changed notes, nor after one the clock puts later.
        shift("last_sync_at", -60);
        piece(&["g.md"]);
        assert_eq!((last().added, last().syncs), (1, 1));
        shift("last_sync_at", 60);
        piece(&["h.md"]);
        assert_eq!((last().added, last().syncs), (1, 1));
        // A burst that began over a minute ago is not added to (an editor saving all day).
        piece(&["i.md"]);
        assert_eq!(last().syncs, 2);
        shift(BURST_STARTED, -61_000);
        piece(&["j.md"]);
        assert_eq!((last().added, last().syncs), (1, 1));
        // An older brain's record has no count of syncs: one.
        let old = r#"{"added":2,"updated":0,"removed":0,"warnings":0,"took_ms":3}"#;
        assert_eq!(serde_json::from_str::<SyncSummary>(old).unwrap().syncs, 1);
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

    /// A journal that reports what a test tells it: the real one is macOS's FSEvents,
    /// which cannot run here; this checks what the sync does with its answers.
    struct Told {
        id: std::sync::Mutex<String>,
        event: std::sync::atomic::AtomicU64,
        changes: std::sync::Mutex<Option<Vec<journal::Change>>>,
        asked: std::sync::Mutex<Vec<u64>>,
    }

    impl Told {
        fn new() -> Told {
            Told {
                id: std::sync::Mutex::new("volume-1".into()),
                event: std::sync::atomic::AtomicU64::new(100),
                changes: std::sync::Mutex::new(Some(vec![])),
                asked: std::sync::Mutex::new(vec![]),
            }
        }

        /// Moves the journal on and has it report `changes` (root-relative files; `None`:
        /// the replay fails) since any earlier event.
        fn report(&self, root: &std::path::Path, changes: Option<&[(&str, journal::ChangeKind)]>) {
            self.event.fetch_add(10, Ordering::SeqCst);
            let root = fs::canonicalize(root).unwrap();
            *self.changes.lock().unwrap() = changes.map(|c| {
                c.iter()
                    .map(|(rel, kind)| journal::Change {
                        path: root.join(rel),
                        kind: *kind,
                    })
                    .collect()
            });
        }
    }

    impl Journal for Told {
        fn position(&self, _: &std::path::Path, _: &std::path::Path) -> Option<(String, u64)> {
            let id = self.id.lock().unwrap().clone();
            Some((id, self.event.load(Ordering::SeqCst)))
        }

        fn since(
            &self,
            _: &std::path::Path,
            since: u64,
            _: &std::path::Path,
        ) -> Option<Vec<journal::Change>> {
            self.asked.lock().unwrap().push(since);
            self.changes.lock().unwrap().clone()
        }
    }

    /// Writes `text` dated an hour ago, plus one second per earlier call with `clock`: a
    /// file written within two seconds of a sync is read again by the next walk without any
    /// change (racy), so it would be no evidence of a change either way.
    fn write_aged(path: &std::path::Path, text: &str, clock: &std::sync::atomic::AtomicU64) {
        let ago = 3600 - clock.fetch_add(1, Ordering::SeqCst);
        let when = std::time::SystemTime::now() - Duration::from_secs(ago);
        crate::index::write_dated(path, text, when);
    }

    fn mark(index: &Index) -> Option<Mark> {
        let json = crate::index::meta(&index.conn().unwrap(), journal::MARK_KEY).unwrap()?;
        Some(serde_json::from_str(&json).unwrap())
    }

    /// Notes the sync looked at: every one for a walk, the reported ones for a replay.
    fn looked_at(r: &SyncReport) -> u64 {
        r.added + r.updated + r.removed + r.unchanged
    }

    #[test]
    fn a_trusted_journal_replaces_the_walk_and_anything_doubtful_walks() {
        use journal::ChangeKind::{File, Folder, Lost};
        let (_dir, config, index) = brain(&[("a.md", "a"), ("lore/b.md", "b"), ("lore/c.md", "c")]);
        // Dated in the past: see `write_aged`.
        let clock = std::sync::atomic::AtomicU64::new(0);
        let write = |rel: &str, text: &str| write_aged(&config.root.join(rel), text, &clock);
        for (rel, text) in [("a.md", "a"), ("lore/b.md", "b"), ("lore/c.md", "c")] {
            write(rel, text);
        }
        let told = Told::new();
        let sync = || sync_recent_with(&index, &config, Some(&told)).unwrap();
        let walks = |r: SyncReport| looked_at(&r) == paths(&index).len() as u64;

        // No mark yet: a walk, and the journal's position before it is recorded, untrusted.
        assert_eq!(sync().added, 3);
        let first = mark(&index).unwrap();
        assert_eq!((first.event, first.journal.as_str()), (100, "volume-1"));
        assert!(!first.trusted());
        assert!(told.asked.lock().unwrap().is_empty());

        // Untrusted, it is checked against a walk that finds a change: it named it.
        write("a.md", "a, edited");
        told.report(&config.root, Some(&[("a.md", File)]));
        let r = sync();
        assert_eq!((r.updated, looked_at(&r)), (1, 3));
        assert_eq!(told.asked.lock().unwrap().last(), Some(&100));
        let second = mark(&index).unwrap();
        assert!(second.trusted());

        // Trusted: two files change, the journal names one, and only that one is read.
        write("a.md", "a, edited again");
        write("lore/b.md", "b, edited unseen");
        told.report(
            &config.root,
            Some(&[("a.md", File), ("lore/.b.md.swp", File)]),
        );
        let r = sync();
        assert_eq!((r.updated, looked_at(&r)), (1, 1));
        assert_eq!(told.asked.lock().unwrap().last(), Some(&110));
        let third = mark(&index).unwrap();
        // The mark moves with the journal; its walk time stays that of the last walk (the
        // second sync's, which may fall in another second than the first's).
        assert_eq!((third.event, third.walked_at), (120, second.walked_at));

        // Nothing reported: nothing read, nothing written (the mark stays).
        told.report(&config.root, Some(&[]));
        assert_eq!(looked_at(&sync()), 0);
        assert_eq!(mark(&index).unwrap(), third);

        // A folder removed and a note added: both found under the reported paths.
        fs::remove_dir_all(config.root.join("lore")).unwrap();
        write("new.md", "n");
        told.report(&config.root, Some(&[("lore", Folder), ("new.md", File)]));
        let r = sync();
        assert_eq!((r.removed, r.added, looked_at(&r)), (2, 1, 3));
        assert_eq!(paths(&index), ["a.md", "new.md"]);

        // The journal lost events: a walk, and trust is kept.
        told.report(&config.root, Some(&[("lore", Lost)]));
        assert!(walks(sync()));
        assert!(mark(&index).unwrap().trusted());

        // Other exclusions: a walk, which drops the note now excluded.
        told.report(&config.root, Some(&[]));
        let mut excluding = config.clone();
        excluding.exclude.push("new.md".into());
        let r = sync_recent_with(&index, &excluding, Some(&told)).unwrap();
        assert_eq!((r.removed, looked_at(&r)), (1, 2));
        // Back to the old ones: a walk (the note comes back), and trust is earned again.
        assert_eq!(sync().added, 1);
        assert!(!mark(&index).unwrap().trusted());
        write("new.md", "n, edited");
        told.report(&config.root, Some(&[("new.md", File)]));
        assert!(walks(sync()));
        assert!(mark(&index).unwrap().trusted());

        // The last walk is too old: a walk, which here finds a change the journal did not
        // name, so the journal is no longer relied on.
        write("a.md", "a, edited behind the journal's back");
        let mut old = mark(&index).unwrap();
        assert!(old.trusted());
        old.walked_at -= journal::WALK_EVERY;
        record_mark(&index, &old);
        let r = sync();
        assert_eq!((r.updated, looked_at(&r)), (1, 2));
        assert!(!mark(&index).unwrap().trusted());
        assert!(walks(sync()));

        // Caught once, never relied on again, even after a walk it got right.
        write("a.md", "a, once more");
        told.report(&config.root, Some(&[("a.md", File)]));
        assert!(walks(sync()));
        let caught = mark(&index).unwrap();
        assert!(caught.confirmed && caught.missed && !caught.trusted());

        // Another journal (the volume's history was reset): a walk, a clean slate.
        *told.id.lock().unwrap() = "volume-2".into();
        assert!(walks(sync()));
        let fresh = mark(&index).unwrap();
        assert_eq!(fresh.journal, "volume-2");
        assert!(!fresh.confirmed && !fresh.missed);
    }

    #[test]
    fn a_miss_recorded_by_another_process_is_not_written_over() {
        let (_dir, _config, index) = brain(&[]);
        let caught = Mark {
            journal: "volume-1".into(),
            event: 5,
            settings: "s".into(),
            walked_at: 0,
            confirmed: true,
            missed: true,
        };
        record_mark(&index, &caught);
        let stale = Mark {
            event: 9,
            missed: false,
            ..caught.clone()
        };
        record_mark(&index, &stale);
        assert_eq!(
            mark(&index).unwrap(),
            Mark {
                event: 9,
                ..caught.clone()
            }
        );
        let other = Mark {
            journal: "volume-2".into(),
            ..stale
        };
        record_mark(&index, &other);
        assert_eq!(mark(&index).unwrap(), other);
    }

    #[test]
    fn a_replay_that_does_not_finish_is_not_waited_for_again() {
        let (_dir, config, index) = brain(&[]);
        let clock = std::sync::atomic::AtomicU64::new(0);
        write_aged(&config.root.join("a.md"), "a", &clock);
        let told = Told::new();
        let sync = || sync_recent_with(&index, &config, Some(&told)).unwrap();
        sync();
        write_aged(&config.root.join("a.md"), "a, edited", &clock);
        told.report(&config.root, Some(&[("a.md", journal::ChangeKind::File)]));
        sync();
        assert!(mark(&index).unwrap().trusted());
        let asked = || told.asked.lock().unwrap().len();
        let before = asked();
        told.report(&config.root, None);
        assert_eq!(looked_at(&sync()), 1, "a walk");
        assert_eq!(asked(), before + 1);
        assert!(mark(&index).unwrap().missed);
        write_aged(&config.root.join("a.md"), "a, edited again", &clock);
        told.report(&config.root, Some(&[("a.md", journal::ChangeKind::File)]));
        assert_eq!(sync().updated, 1);
        assert_eq!(asked(), before + 1, "neither replayed nor checked again");
    }

    /// The real journal, where there is one: FSEvents earns trust by naming an edit a walk
    /// found, then replaces the walk, seeing a save made just before (its cookie).
    #[cfg(target_os = "macos")]
    #[test]
    fn on_macos_fsevents_earns_trust_then_replaces_the_walk() {
        let (_dir, config, index) = brain(&[]);
        let clock = std::sync::atomic::AtomicU64::new(0);
        let write = |rel: &str, text: &str| write_aged(&config.root.join(rel), text, &clock);
        write("a.md", "a");
        write("b.md", "b");
        write("c.md", "c");
        let sync = || sync_recent(&index, &config).unwrap();
        assert_eq!(sync().added, 3);
        let first = mark(&index).expect("the temporary folder's volume keeps a journal");
        assert!(!first.trusted());
        write("a.md", "a, edited");
        let r = sync();
        assert_eq!((r.updated, looked_at(&r)), (1, 3), "untrusted, it walks");
        assert!(mark(&index).unwrap().trusted(), "{:?}", mark(&index));
        write("b.md", "b, edited");
        // b.md, and a.md again if its event was numbered after the walk began.
        let r = sync();
        assert_eq!(r.updated, 1);
        assert!(looked_at(&r) < 3, "no walk: {r:?}");
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
    fn a_file_the_watcher_names_is_read_though_its_size_and_time_are_the_same() {
        // `cp -p` / `rsync -a` / a tar restore: other text, same size, same mtime (set back
        // far from now, outside the racy window).
        let (_dir, config, index) = brain(&[("a.md", "# A\nmarker old1\n"), ("b.md", "b")]);
        let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let write_old =
            |rel: &str, text: &str| crate::index::write_dated(&config.root.join(rel), text, old);
        write_old("a.md", "# A\nmarker old1\n");
        sync(&index, &config).unwrap();
        write_old("a.md", "# A\nmarker new2\n");
        // A whole sync trusts the stat (what it exists to save); the watcher's path does not.
        assert!(sync(&index, &config).unwrap().is_noop());
        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["a.md"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert_eq!(r.updated, 1, "{r:?}");
        let found: i64 = index
            .conn()
            .unwrap()
            .query_row(
                "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'new2'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(found, 1);
        // Named again unchanged: read, found the same, nothing rewritten or reported.
        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["a.md", "b.md"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert!(r.is_noop() && r.changed.is_empty(), "{r:?}");
        // `rsync -a` into a folder names the folder too (it sets its times last): the file
        // is still read.
        fs::create_dir(config.root.join("lore")).unwrap();
        write_old("lore/c.md", "# C\nmarker old3\n");
        sync(&index, &config).unwrap();
        write_old("lore/c.md", "# C\nmarker new4\n");
        let r = sync_paths(
            &index,
            &config,
            &Scope::new(["lore/c.md", "lore"]),
            SyncOptions::default(),
        )
        .unwrap();
        assert_eq!(r.updated, 1, "{r:?}");
    }

    #[test]
    fn apple_double_files_are_skipped_without_a_word_and_a_text_note_so_named_is_kept() {
        let (_dir, config, index) = brain(&[("lore/n.md", "# N\n"), ("._ideas.md", "# Ideas\n")]);
        fs::write(
            config.root.join("lore/._n.md"),
            b"\0\x05\x16\x07\0\x02\0\0Mac OS X        ",
        )
        .unwrap();
        // A binary file of another name is still said.
        fs::write(config.root.join("lore/blob.md"), b"\0\x01\x02").unwrap();
        let r = sync(&index, &config).unwrap();
        assert_eq!(paths(&index), ["._ideas.md", "lore/n.md"]);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(
            r.warnings[0].starts_with("lore/blob.md: skipped"),
            "{:?}",
            r.warnings
        );
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
