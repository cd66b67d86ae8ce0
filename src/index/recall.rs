//! The recall log: every search, what was asked and what came back. Later work builds usage
//! analytics on it, so it is append-only and survives schema upgrades.

use rusqlite::{params, Connection, OptionalExtension};
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

/// One search, as the recall log keeps it.
pub struct Entry<'a> {
    /// The query as searched.
    pub query: &'a str,
    /// The mode that answered.
    pub mode: &'a str,
    /// The request's filters.
    pub filters: &'a serde_json::Value,
    /// The results, best first.
    pub paths: &'a [&'a str],
    /// How long it took.
    pub took_us: u64,
    /// Sent by search as you type ([`crate::search::SearchRequest::as_you_type`]).
    pub as_you_type: bool,
    /// How many notes the keyword list found, when one ran (not in semantic mode).
    pub keywords: Option<u64>,
}

/// Appends one search to the log and returns its `recall_id`.
pub fn record(conn: &Connection, e: &Entry<'_>) -> rusqlite::Result<i64> {
    let ts = crate::date::now_ms();
    let results = serde_json::to_string(e.paths).unwrap_or_else(|_| "[]".into());
    let filters = e.filters.to_string();
    let (query, mode, took_us) = (e.query, e.mode, e.took_us);
    let keywords = e.keywords.map(|n| n as i64);
    // Search as you type sends "r", "re", "ret"... within moments: the same search being
    // typed (or backspaced) is one row, ending with what the person settled on, so the
    // history and `brain stats` see queries, not keystrokes. The same text again is a
    // search of its own, and so is every search of a client that does not type (a script
    // running `brain search tar` then `brain search "tar -xzf"` asked twice).
    let last: Option<(i64, i64, String, String, String)> = match e.as_you_type {
        true => conn
            .prepare_cached(
                "SELECT id, ts, query, mode, filters FROM recalls
                 WHERE typed = 1 AND id = (SELECT max(id) FROM recalls)",
            )?
            .query_row([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()?,
        false => None,
    };
    if let Some((id, at, before, m, f)) = last {
        // Compared as the box holds them, filters included: `checklist`, `checklist
        // type:i`, ... `checklist type:idea` are one search being typed.
        let logged: Option<serde_json::Value> = serde_json::from_str(&f).ok();
        let before = as_typed(&before, logged.as_ref().unwrap_or(&serde_json::Value::Null));
        let now = as_typed(query, e.filters);
        let same_where = logged.is_some_and(|f| f.get("where") == e.filters.get("where"));
        let typing = ts - at < TYPING_MS
            && m == mode
            && same_where
            && before != now
            && (now.starts_with(before.as_str()) || before.starts_with(now.as_str()));
        if typing {
            conn.prepare_cached(
                "UPDATE recalls SET ts = ?2, query = ?3, results = ?4, took_us = ?5, keywords = ?6,
                                    filters = ?7
                 WHERE id = ?1",
            )?
            .execute(params![
                id,
                ts,
                query,
                results,
                took_us as i64,
                keywords,
                filters
            ])?;
            return Ok(id);
        }
    }
    conn.prepare_cached(
        "INSERT INTO recalls(ts, query, mode, filters, results, took_us, typed, keywords)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        ts,
        query,
        mode,
        filters,
        results,
        took_us as i64,
        e.as_you_type,
        keywords
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Two searches this close, one's text a prefix of the other's, are one search being typed.
pub const TYPING_MS: i64 = 3000;

/// A logged search as the panel's box writes it: its words, then `key:value` for each
/// filter the box can write (`retry tag:flaky since:30d`). A value holding a space cannot
/// be written there and is left out, as are `--where` conditions.
pub(crate) fn as_typed(query: &str, filters: &serde_json::Value) -> String {
    let mut text = query.to_owned();
    for key in ["type", "tag", "since", "before"] {
        if let Some(value) = filters.get(key).and_then(|v| v.as_str()) {
            if !value.is_empty() && !value.chars().any(char::is_whitespace) {
                text.push_str(&format!(" {key}:{value}"));
            }
        }
    }
    text
}

/// Totals over the whole log.
pub fn totals(conn: &Connection) -> rusqlite::Result<RecallTotals> {
    let week_ago = crate::date::now_ms() - 7 * crate::date::DAY_MS;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystrokes_of_one_search_are_one_row_and_other_searches_are_their_own() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::index::schema::migrate(&mut conn).unwrap();
        let none = serde_json::json!({});
        fn entry<'a>(
            q: &'a str,
            mode: &'a str,
            none: &'a serde_json::Value,
            typed: bool,
        ) -> Entry<'a> {
            Entry {
                query: q,
                mode,
                filters: none,
                paths: &[],
                took_us: 1,
                as_you_type: typed,
                keywords: None,
            }
        }
        let log = |q: &str, mode: &str| record(&conn, &entry(q, mode, &none, true)).unwrap();
        let first = log("r", "hybrid");
        assert_eq!(log("ret", "hybrid"), first);
        assert_eq!(log("retries jitter", "hybrid"), first);
        assert_eq!(log("retries", "hybrid"), first, "backspacing");
        let other = log("caches", "hybrid");
        assert_ne!(other, first);
        assert_ne!(
            log("caches", "hybrid"),
            other,
            "the same search again is counted"
        );
        assert_ne!(
            log("caches", "bm25"),
            other,
            "another mode is another search"
        );
        let rows: Vec<String> = conn
            .prepare("SELECT query FROM recalls ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(rows, ["retries", "caches", "caches", "caches"]);
        // A client that does not type: each search is its own row, however close.
        let cli = record(&conn, &entry("tar", "hybrid", &none, false)).unwrap();
        let refined = record(&conn, &entry("tar -xzf", "hybrid", &none, false)).unwrap();
        assert_ne!(cli, refined);
        // ...and the panel's next keystroke does not fold into a CLI row either.
        assert_ne!(log("tar -xzf v", "hybrid"), refined);
        // A filter typed in the box, one letter at a time, is the same search going on.
        let typed = |q: &str, f: serde_json::Value| {
            let mut e = entry(q, "hybrid", &none, true);
            e.filters = &f;
            record(&conn, &e).unwrap()
        };
        let start = typed("checklist", serde_json::json!({}));
        assert_ne!(start, first);
        assert_eq!(typed("checklist", serde_json::json!({"type": "i"})), start);
        assert_eq!(
            typed("checklist", serde_json::json!({"type": "idea"})),
            start
        );
        let kept: String = conn
            .query_row("SELECT filters FROM recalls WHERE id = ?1", [start], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kept, r#"{"type":"idea"}"#);
        assert_ne!(
            typed("checklist", serde_json::json!({"type": "lore"})),
            start,
            "another filter is another search"
        );
    }
}
