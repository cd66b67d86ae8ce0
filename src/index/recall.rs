//! The recall log: every search, what was asked and what came back. Later work builds usage
//! analytics on it, so it is append-only and survives schema upgrades.

use rusqlite::{params, Connection};
use serde::Serialize;

/// Totals over the recall log, shown by `brain status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RecallTotals {
    /// Searches ever logged.
    pub searches: u64,
    /// Searches in the last 7 days.
    pub last_7_days: u64,
    /// Searches that returned nothing.
    pub empty: u64,
    /// Notes opened (`brain get`, MCP `get`, Claude Code's Read), ever logged.
    #[serde(default)]
    pub reads: u64,
    /// Notes opened in the last 7 days.
    #[serde(default)]
    pub reads_last_7_days: u64,
}

/// Appends one search to the log and returns its `recall_id`.
pub fn record(
    conn: &Connection,
    query: &str,
    mode: &str,
    filters: &serde_json::Value,
    paths: &[&str],
    took_us: u64,
) -> rusqlite::Result<i64> {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let results = serde_json::to_string(paths).unwrap_or_else(|_| "[]".into());
    conn.prepare_cached(
        "INSERT INTO recalls(ts, query, mode, filters, results, took_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![ts, query, mode, filters.to_string(), results, took_us as i64])?;
    Ok(conn.last_insert_rowid())
}

/// Totals over the whole log.
pub fn totals(conn: &Connection) -> rusqlite::Result<RecallTotals> {
    let week_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64 - 7 * 24 * 3600 * 1000)
        .unwrap_or(0);
    conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(ts >= ?1), 0), COALESCE(SUM(results = '[]'), 0),
                (SELECT COUNT(*) FROM reads), (SELECT COUNT(*) FROM reads WHERE ts >= ?1)
         FROM recalls",
        [week_ago],
        |r| {
            Ok(RecallTotals {
                searches: r.get::<_, i64>(0)? as u64,
                last_7_days: r.get::<_, i64>(1)? as u64,
                empty: r.get::<_, i64>(2)? as u64,
                reads: r.get::<_, i64>(3)? as u64,
                reads_last_7_days: r.get::<_, i64>(4)? as u64,
            })
        },
    )
}
