//! Which notes a search may return: the restrictions every client sends (`--type`,
//! `--tag`, `--since`, `--before`), and the SQL that applies them to the `notes n` table.

use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Restrictions on which notes may match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filters {
    /// Only notes of this type (case-insensitive).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only notes carrying this tag (case-insensitive, leading `#` ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Only notes dated on or after this day: `30d`, `2w` or `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only notes dated before this day: `30d`, `2w` or `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

impl Filters {
    /// Checks the date bounds (bad input names the flag and what it expects) and turns
    /// relative ones into days, so the recall log and the backend see absolute dates.
    pub fn resolve(&mut self) -> Result<()> {
        let today = crate::date::today();
        for (flag, bound) in [("--since", &mut self.since), ("--before", &mut self.before)] {
            if let Some(spec) = bound {
                let day = crate::date::parse_bound(spec, today)
                    .map_err(|e| Error::InvalidInput(format!("{flag}: {e}")))?;
                *spec = day.to_string();
            }
        }
        Ok(())
    }

    /// Appends `AND ...` clauses over the `notes n` alias and their arguments. A date bound
    /// that does not parse is skipped: [`Filters::resolve`] refuses it before any search.
    pub(crate) fn push_sql(&self, sql: &mut String, args: &mut Vec<SqlValue>) {
        if let Some(kind) = &self.kind {
            args.push(SqlValue::Text(kind.clone()));
            sql.push_str(&format!(" AND n.type = ?{} COLLATE NOCASE", args.len()));
        }
        if let Some(tag) = &self.tag {
            args.push(SqlValue::Text(tag.trim_start_matches('#').to_string()));
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM json_each(n.tags) WHERE json_each.value = ?{} COLLATE NOCASE)",
                args.len()
            ));
        }
        let today = crate::date::today();
        for (bound, op) in [(&self.since, ">="), (&self.before, "<")] {
            let day = bound
                .as_deref()
                .and_then(|b| crate::date::parse_bound(b, today).ok());
            if let Some(day) = day {
                args.push(SqlValue::Text(day.to_string()));
                sql.push_str(&format!(" AND {} {op} ?{}", super::NOTE_DATE, args.len()));
            }
        }
    }

    /// True when no filter is set.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none() && self.tag.is_none() && self.since.is_none() && self.before.is_none()
    }
}
