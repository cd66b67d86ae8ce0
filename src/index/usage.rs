//! The usage logs' SQL: the read log (a note opened by `brain get`, the MCP `get` tool or
//! Claude Code's Read hook), the window queries `brain stats` reports, and pruning. The
//! recall log itself is written by [`super::recall`].

use std::collections::BTreeMap;

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

/// How many of a search's results count as surfaced: the first page a person or Claude
/// sees, so a `--top 1000` export does not surface the whole brain.
pub const SURFACED_TOP: i64 = 10;

/// Notes surfaced at least this often and read under [`READ_SHARE`] of those times are
/// reported as surfaced but not read.
pub const SURFACED_OFTEN: u64 = 3;
/// See [`SURFACED_OFTEN`].
pub const READ_SHARE: f64 = 0.3;

/// How many rows each list of `brain stats` shows.
const LIST: i64 = 10;

/// Appends one read of `path` (relative to the root) by `via`, when `path` is a note of the
/// index; whether it did. A file under `raw/`, a dot-folder, an ignore file or `exclude`
/// would be listed as "read but never surfaced", a hole search does not have. (One lookup:
/// a walk of the path by the walk's rules doubled the hook's time.)
pub fn record_read(conn: &Connection, ts_ms: i64, path: &str, via: &str) -> rusqlite::Result<bool> {
    let known: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM notes WHERE path = ?1)")?
        .query_row([path], |r| r.get(0))?;
    if known {
        conn.prepare_cached("INSERT INTO reads(ts, path, via) VALUES (?1, ?2, ?3)")?
            .execute(params![ts_ms, path, via])?;
    }
    Ok(known)
}

/// Rows dropped by a prune or a reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// Searches.
    pub searches: u64,
    /// Reads.
    pub reads: u64,
}

/// Drops log rows older than `cutoff_ms` (all of them with `i64::MAX`).
pub fn prune(conn: &Connection, cutoff_ms: i64) -> rusqlite::Result<Dropped> {
    let searches = conn.execute("DELETE FROM recalls WHERE ts < ?1", [cutoff_ms])? as u64;
    let reads = conn.execute("DELETE FROM reads WHERE ts < ?1", [cutoff_ms])? as u64;
    Ok(Dropped { searches, reads })
}

/// Totals over one window of the logs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Searches logged.
    pub searches: u64,
    /// Notes opened.
    pub reads: u64,
    /// Distinct notes in the first [`SURFACED_TOP`] results of some search.
    pub notes_surfaced: u64,
    /// Distinct notes opened.
    pub notes_read: u64,
    /// Searches whose words found no note: nothing at all, or (hybrid) no keyword hit, the
    /// misses under a filter or beside an excluded word included.
    pub dead_searches: u64,
}

/// A query and how often it was asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryCount {
    /// The query, lowercased and trimmed (the most recent spelling is not kept apart).
    pub query: String,
    /// Times asked.
    pub count: u64,
    /// Results the last time it was asked.
    pub results: u64,
}

/// A note and how often it was surfaced and read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteUsage {
    /// Relative to the brain root.
    pub path: String,
    /// Times in the first [`SURFACED_TOP`] results.
    pub surfaced: u64,
    /// Times opened.
    pub read: u64,
}

/// What the logs say about one window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Totals.
    pub totals: Totals,
    /// Most asked queries.
    pub top_queries: Vec<QueryCount>,
    /// Queries over the whole brain (no filter) that no note held a word of (no result, or
    /// in hybrid no keyword hit), and that no keyword list has answered since, by how
    /// often: holes in the brain.
    pub dead_queries: Vec<QueryCount>,
    /// Most surfaced notes.
    pub top_surfaced: Vec<NoteUsage>,
    /// Most read notes.
    pub top_read: Vec<NoteUsage>,
    /// Surfaced often, rarely opened: stale, misnamed or ranked too high.
    pub surfaced_not_read: Vec<NoteUsage>,
    /// Opened, never surfaced: notes search fails to find.
    pub read_not_surfaced: Vec<NoteUsage>,
    /// Searches per mode.
    pub by_mode: BTreeMap<String, u64>,
    /// Searches per `--type` filter (`"(any)"` without one).
    pub by_type: BTreeMap<String, u64>,
    /// Reads per reader: `cli`, `mcp`, `hook`, `app`.
    pub reads_by_via: BTreeMap<String, u64>,
}

/// Reads the window of the logs since `since_ms`.
pub fn window(conn: &Connection, since_ms: i64) -> rusqlite::Result<Window> {
    let one = |sql: &str| -> rusqlite::Result<u64> {
        conn.query_row(sql, [since_ms], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    let totals = Totals {
        searches: one("SELECT COUNT(*) FROM recalls WHERE ts >= ?1")?,
        reads: one("SELECT COUNT(*) FROM reads WHERE ts >= ?1")?,
        notes_surfaced: one(&format!(
            "SELECT COUNT(DISTINCT j.value) FROM recalls r, json_each(r.results) j
             WHERE r.ts >= ?1 AND j.key < {SURFACED_TOP}"
        ))?,
        notes_read: one("SELECT COUNT(DISTINCT path) FROM reads WHERE ts >= ?1")?,
        dead_searches: one(
            "SELECT COUNT(*) FROM recalls WHERE ts >= ?1 AND (results = '[]' OR keywords = 0)",
        )?,
    };
    // A hole is a query over the whole brain that found nothing by its words, and found
    // nothing since: no result at all, or (hybrid, which always has the notes nearest in
    // meaning) no keyword hit. A search under a filter (`--type idea`) that finds nothing
    // says that of the filter, and a keyword list that found notes since (with or without a
    // filter) shows the hole filled. A search by meaning alone says neither.
    let queries = |dead: bool| -> rusqlite::Result<Vec<QueryCount>> {
        let sql = match dead {
            true => format!(
                "WITH r AS (SELECT id, ts, lower(trim(query)) AS q,
                                   filters = '{{}}' AND (results = '[]' OR keywords = 0) AS missed,
                                   COALESCE(keywords > 0,
                                            mode = 'bm25' AND results != '[]') AS answered
                            FROM recalls WHERE ts >= ?1),
                      g AS (SELECT q, SUM(missed) AS n,
                                   MAX(CASE WHEN missed THEN id END) AS hole,
                                   MAX(CASE WHEN answered THEN id END) AS filled,
                                   MAX(ts) AS at
                            FROM r GROUP BY q)
                 SELECT q, n, 0 FROM g WHERE hole IS NOT NULL AND (filled IS NULL OR filled < hole)
                 ORDER BY n DESC, at DESC, q LIMIT {LIST}"
            ),
            // Grouped once; the result count comes from each group's latest row (a join
            // on its id, not a subquery per group over the whole window).
            false => format!(
                "WITH g AS (SELECT lower(trim(query)) AS q, COUNT(*) AS n, MAX(id) AS last, MAX(ts) AS at
                            FROM recalls WHERE ts >= ?1 GROUP BY q)
                 SELECT g.q, g.n, json_array_length(r.results) FROM g JOIN recalls r ON r.id = g.last
                 ORDER BY g.n DESC, g.at DESC, g.q LIMIT {LIST}"
            ),
        };
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([since_ms], |r| {
            Ok(QueryCount {
                query: r.get(0)?,
                count: r.get::<_, i64>(1)? as u64,
                results: r.get::<_, i64>(2)? as u64,
            })
        })?;
        rows.collect()
    };
    let top_queries = queries(false)?;
    let dead_queries = queries(true)?;

    // Every note surfaced or read in the window, with both counts.
    let mut stmt = conn.prepare(&format!(
        "WITH s AS (SELECT j.value AS path, COUNT(*) AS n FROM recalls r, json_each(r.results) j
                    WHERE r.ts >= ?1 AND j.key < {SURFACED_TOP} GROUP BY j.value),
              d AS (SELECT path, COUNT(*) AS n FROM reads WHERE ts >= ?1 GROUP BY path)
         SELECT s.path, s.n, COALESCE(d.n, 0) FROM s LEFT JOIN d ON d.path = s.path
         UNION ALL
         SELECT d.path, 0, d.n FROM d WHERE d.path NOT IN (SELECT path FROM s)"
    ))?;
    let notes: Vec<NoteUsage> = stmt
        .query_map([since_ms], |r| {
            Ok(NoteUsage {
                path: r.get(0)?,
                surfaced: r.get::<_, i64>(1)? as u64,
                read: r.get::<_, i64>(2)? as u64,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let top = |key: fn(&NoteUsage) -> u64, keep: &dyn Fn(&NoteUsage) -> bool| {
        let mut list: Vec<NoteUsage> = notes.iter().filter(|n| keep(n)).cloned().collect();
        list.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.path.cmp(&b.path)));
        list.truncate(LIST as usize);
        list
    };
    let top_surfaced = top(|n| n.surfaced, &|n| n.surfaced > 0);
    let top_read = top(|n| n.read, &|n| n.read > 0);
    let surfaced_not_read = top(|n| n.surfaced, &|n| {
        n.surfaced >= SURFACED_OFTEN && (n.read as f64) < READ_SHARE * n.surfaced as f64
    });
    let read_not_surfaced = top(|n| n.read, &|n| n.surfaced == 0 && n.read > 0);

    let grouped = |sql: &str| -> rusqlite::Result<BTreeMap<String, u64>> {
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([since_ms], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })?;
        rows.collect()
    };
    let by_mode = grouped("SELECT mode, COUNT(*) FROM recalls WHERE ts >= ?1 GROUP BY mode")?;
    let by_type = grouped(
        "SELECT COALESCE(lower(json_extract(filters, '$.type')), '(any)'), COUNT(*)
         FROM recalls WHERE ts >= ?1 GROUP BY 1",
    )?;
    let reads_by_via = grouped("SELECT via, COUNT(*) FROM reads WHERE ts >= ?1 GROUP BY via")?;
    Ok(Window {
        reads_by_via,
        totals,
        top_queries,
        dead_queries,
        top_surfaced,
        top_read,
        surfaced_not_read,
        read_not_surfaced,
        by_mode,
        by_type,
    })
}

/// Earlier searches, most recent first, each once: the panel's Alt+Up history. Each is
/// written as the panel's box would write it, the words then the filters the box knows
/// (`retry tag:flaky since:30d`), so a search brought back is the search that was made,
/// not its words alone. A filter whose value holds a space cannot be written in the box and
/// is left out, as are `--where` conditions (the box has no way to write them).
pub fn recent_queries(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT query, filters FROM recalls GROUP BY query, filters ORDER BY MAX(id) DESC",
    )?;
    let mut rows = stmt.query([])?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while out.len() < limit {
        let Some(row) = rows.next()? else { break };
        let filters = serde_json::from_str(&row.get::<_, String>(1)?).unwrap_or_default();
        let text = super::recall::as_typed(&row.get::<_, String>(0)?, &filters);
        if seen.insert(text.clone()) {
            out.push(text);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Logs one search: `(query, mode, filters, results, keyword hits)`.
    fn log(conn: &Connection, rows: &[(&str, &str, &str, &str, Option<i64>)]) {
        for (i, (query, mode, filters, results, keywords)) in rows.iter().enumerate() {
            conn.execute(
                "INSERT INTO recalls(ts, query, mode, filters, results, took_us, keywords)
                 VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)",
                rusqlite::params![1000 + i as i64, query, mode, filters, results, keywords],
            )
            .unwrap();
        }
    }

    #[test]
    fn a_hole_is_an_unfiltered_miss_no_keyword_list_answered_since() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let found = r#"["a.md"]"#;
        let idea = r#"{"type":"idea"}"#;
        log(
            &conn,
            &[
                // Missed twice by keywords, then a search by meaning alone: still a hole.
                ("zqx", "bm25", "{}", "[]", Some(0)),
                ("ZQX ", "bm25", "{}", "[]", Some(0)),
                ("zqx", "semantic", "{}", found, None),
                // Hybrid's nearest notes, no note holding a word: a hole all the same.
                ("blorp", "hybrid", "{}", found, Some(0)),
                // Missed, then found under a filter: filled.
                ("flurb", "bm25", "{}", "[]", Some(0)),
                ("flurb", "bm25", idea, found, Some(1)),
                // Missed, then hybrid with keyword hits: filled.
                ("wal", "hybrid", "{}", found, Some(0)),
                ("wal", "hybrid", "{}", found, Some(3)),
                // Found, then missed: a hole again (the note went away).
                ("gone", "bm25", "{}", found, Some(1)),
                ("gone", "bm25", "{}", "[]", Some(0)),
                // Only missed under a filter: the filter's doing, not a hole.
                ("jitter", "bm25", idea, "[]", Some(0)),
                // A row from before the keyword count: nothing found is a miss.
                ("old", "bm25", "{}", "[]", None),
            ],
        );
        let w = window(&conn, 0).unwrap();
        let holes: Vec<(&str, u64)> = w
            .dead_queries
            .iter()
            .map(|q| (q.query.as_str(), q.count))
            .collect();
        assert_eq!(holes, [("zqx", 2), ("old", 1), ("gone", 1), ("blorp", 1)]);
        assert_eq!(w.totals.dead_searches, 8);
    }

    #[test]
    fn the_history_brings_back_a_search_with_its_filters_most_recent_first() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let none = "{}";
        let idea = r#"{"type":"idea","since":"30d"}"#;
        let spaced = r#"{"tag":"two words","before":"2026-01-01"}"#;
        let cond = r#"{"where":["status=open"]}"#;
        log(
            &conn,
            &[
                ("retry", "hybrid", none, "[]", None),
                ("checklist", "hybrid", idea, "[]", None),
                ("retry", "bm25", none, "[]", None),
                ("flaky", "hybrid", spaced, "[]", None),
                // A `--where` search reads as its words alone: the same entry as "retry".
                ("retry", "hybrid", cond, "[]", None),
            ],
        );
        let got = recent_queries(&conn, 10).unwrap();
        assert_eq!(
            got,
            [
                "retry",
                "flaky before:2026-01-01",
                "checklist type:idea since:30d"
            ]
        );
        assert_eq!(recent_queries(&conn, 2).unwrap().len(), 2);
    }
}
