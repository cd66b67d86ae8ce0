//! Which notes a search may return: the restrictions every client sends (`--type`,
//! `--tag`), and the SQL that applies them to the `notes n` table.

use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};

/// Restrictions on which notes may match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filters {
    /// Only notes of this type (case-insensitive).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only notes carrying this tag (case-insensitive, leading `#` ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl Filters {
    /// Appends `AND ...` clauses over the `notes n` alias and their arguments.
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
    }

    /// True when no filter is set.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none() && self.tag.is_none()
    }
}
