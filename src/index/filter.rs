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
    /// Frontmatter conditions, all of which must hold: `FIELD=VALUE` (the field is the
    /// value, or a list containing it; case-insensitive) or `FIELD!=VALUE` (it is not, or
    /// the note has no such field).
    #[serde(rename = "where", default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<String>,
}

/// One `--where` condition, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The frontmatter field.
    pub field: String,
    /// `!=` rather than `=`.
    pub negated: bool,
    /// The value compared with.
    pub value: String,
}

impl Condition {
    /// Parses `FIELD=VALUE` or `FIELD!=VALUE`; the error says which form is expected.
    pub fn parse(spec: &str) -> Result<Condition> {
        let bad = || {
            Error::InvalidInput(format!(
                "--where {spec:?}: expected FIELD=VALUE or FIELD!=VALUE (FIELD: letters, digits, - and _)"
            ))
        };
        let (field, value) = spec.split_once('=').ok_or_else(bad)?;
        let (field, negated) = match field.strip_suffix('!') {
            Some(f) => (f, true),
            None => (field, false),
        };
        let field = field.trim();
        let ok = !field.is_empty()
            && field
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(bad());
        }
        Ok(Condition {
            field: field.to_string(),
            negated,
            value: value.trim().to_string(),
        })
    }
}

/// The most `--where` conditions one search takes: each is a clause of the SQL, and about
/// a thousand overflowed SQLite's expression depth, said as trouble with the index.
pub const MAX_CONDITIONS: usize = 64;

impl Filters {
    /// Checks the number of conditions and the date bounds (bad input names the flag and
    /// what it expects) and turns relative ones into days, so the recall log and the
    /// backend see absolute dates.
    pub fn resolve(&mut self) -> Result<()> {
        if self.conditions.len() > MAX_CONDITIONS {
            return Err(Error::InvalidInput(format!(
                "--where: {} conditions, at most {MAX_CONDITIONS}",
                self.conditions.len()
            )));
        }
        // Only when asked: the local time zone's first lookup walks the zoneinfo folders
        // (~3 ms, most of a warm search's client side).
        let today = std::sync::LazyLock::new(crate::date::today);
        for (flag, bound) in [("--since", &mut self.since), ("--before", &mut self.before)] {
            if let Some(spec) = bound {
                let day = crate::date::parse_bound(spec, *today)
                    .map_err(|e| Error::InvalidInput(format!("{flag}: {e}")))?;
                *spec = day.to_string();
            }
        }
        // From `since` on, before `before`: the same day or a later one left nothing, and
        // "(no results)" would read as nothing written then.
        if let (Some(since), Some(before)) = (&self.since, &self.before) {
            if since >= before {
                // One flag named, first: over MCP it becomes the argument's name.
                return Err(Error::InvalidInput(format!(
                    "--since {since} is not before the range's end, {before}: no day is in it \
                     (the start's day is included, the end's is not)"
                )));
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
        let today = std::sync::LazyLock::new(crate::date::today);
        for (bound, op) in [(&self.since, ">="), (&self.before, "<")] {
            let day = bound
                .as_deref()
                .and_then(|b| crate::date::parse_bound(b, *today).ok());
            if let Some(day) = day {
                args.push(SqlValue::Text(day.to_string()));
                sql.push_str(&format!(" AND {} {op} ?{}", super::NOTE_DATE, args.len()));
            }
        }
        // json_each over a scalar yields the scalar itself: one test covers `status: active`
        // and `tags: [a, b]` alike. Booleans compare as `true`/`false` (json_each gives 1/0).
        // Case is ignored for ASCII letters (SQLite's `lower`, on both sides).
        for c in self
            .conditions
            .iter()
            .filter_map(|c| Condition::parse(c).ok())
        {
            // `tags` is read as `--tag` reads it, from the note's tags as parsed (a string
            // `"a, b"` is two tags), not from the raw field, where it is one string.
            if c.field == "tags" {
                args.push(SqlValue::Text(c.value.trim_start_matches('#').to_string()));
                sql.push_str(&format!(
                    " AND {}EXISTS (SELECT 1 FROM json_each(n.tags) \
                     WHERE lower(json_each.value) = lower(?{}))",
                    if c.negated { "NOT " } else { "" },
                    args.len()
                ));
                continue;
            }
            args.push(SqlValue::Text(format!("$.\"{}\"", c.field)));
            let path = args.len();
            args.push(SqlValue::Text(c.value));
            let value = args.len();
            sql.push_str(&format!(
                " AND {}EXISTS (SELECT 1 FROM json_each(n.fields, ?{path}) j \
                 WHERE lower(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' \
                 ELSE CAST(j.value AS TEXT) END) = lower(?{value}))",
                if c.negated { "NOT " } else { "" }
            ));
        }
    }

    /// True when no filter is set.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none()
            && self.tag.is_none()
            && self.since.is_none()
            && self.before.is_none()
            && self.conditions.is_empty()
    }

    /// The `--where` conditions, parsed; the first bad one is the error.
    pub fn parsed_conditions(&self) -> Result<Vec<Condition>> {
        self.conditions
            .iter()
            .map(|c| Condition::parse(c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_conditions_are_bad_input_naming_the_flag() {
        let mut f = Filters {
            conditions: vec!["status=open".to_string(); MAX_CONDITIONS],
            ..Default::default()
        };
        assert!(f.resolve().is_ok());
        f.conditions.push("status=open".to_string());
        let err = f.resolve().unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
        assert_eq!(err.to_string(), "--where: 65 conditions, at most 64");
    }
}
