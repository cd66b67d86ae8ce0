//! Calendar dates: the date a note carries (frontmatter `updated`, else `created`, else a
//! date leading its file name; the index falls back to the file's mtime), and the bounds
//! `--since` / `--before` accept (`30d`, `2w`, `YYYY-MM-DD`). Days are local days: a note
//! written at 23:30 belongs to that evening, not to tomorrow in UTC.

use jiff::civil::Date;
use serde_json::{Map, Value};

/// Today in the local time zone.
pub fn today() -> Date {
    jiff::ZonedDateTime::now().date()
}

/// The date in `text` when it starts with `YYYY-MM-DD` (a bare date, or a timestamp such
/// as `2026-10-01T09:30:00Z` or `2026-10-01 09:30`) that is a real calendar day.
pub fn leading_date(text: &str) -> Option<Date> {
    let head = text.trim().get(..10)?;
    let b = head.as_bytes();
    let shape = b.iter().enumerate().all(|(i, c)| match i {
        4 | 7 => *c == b'-',
        _ => c.is_ascii_digit(),
    });
    if !shape {
        return None;
    }
    let rest = &text.trim()[10..];
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    head.parse().ok()
}

/// A frontmatter value as a date: a string (or YAML timestamp, read as a string) that
/// starts with a real `YYYY-MM-DD`.
pub fn field_date(value: &Value) -> Option<Date> {
    value.as_str().and_then(leading_date)
}

/// The date a note's own text gives it: `updated`, else `created`, else a date leading its
/// file name (`2026-10-01-standup.md`). `None` when it has none; the index then uses the
/// file's modification day.
pub fn note_date(fields: &Map<String, Value>, rel_path: &str) -> Option<Date> {
    ["updated", "created"]
        .iter()
        .find_map(|k| fields.get(*k).and_then(field_date))
        .or_else(|| {
            let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
            leading_date(name)
        })
}

/// The first day a `--since` / `--before` bound names, relative to `today`: `30d` (30 days
/// ago), `2w` (14 days ago), or `YYYY-MM-DD`. The error says what was expected.
pub fn parse_bound(spec: &str, today: Date) -> Result<Date, String> {
    let s = spec.trim();
    let expected = || format!("{spec:?} is not a date: use 30d, 2w or YYYY-MM-DD");
    if let Some(date) = leading_date(s).filter(|_| s.len() == 10) {
        return Ok(date);
    }
    // By suffix, not by byte position: the last character may be several bytes long.
    let (number, days_per_unit) = match (s.strip_suffix(['d', 'D']), s.strip_suffix(['w', 'W'])) {
        (Some(n), _) => (n, 1),
        (_, Some(n)) => (n, 7),
        _ => return Err(expected()),
    };
    let n: i64 = number.parse().map_err(|_| expected())?;
    if !(0..=100_000).contains(&n) {
        return Err(expected());
    }
    today
        .checked_sub(jiff::Span::new().days(n * days_per_unit))
        .map_err(|_| expected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn a_note_date_prefers_updated_then_created_then_the_file_name() {
        let fields = |v: Value| v.as_object().cloned().unwrap();
        let both =
            fields(serde_json::json!({"created": "2025-01-02", "updated": "2026-03-04T10:00:00Z"}));
        assert_eq!(note_date(&both, "lore/x.md"), Some(date(2026, 3, 4)));
        let created = fields(serde_json::json!({"created": "2025-01-02 09:00", "updated": "soon"}));
        assert_eq!(note_date(&created, "lore/x.md"), Some(date(2025, 1, 2)));
        let none = Map::new();
        assert_eq!(
            note_date(&none, "journal/2026-10-01-standup.md"),
            Some(date(2026, 10, 1))
        );
        assert_eq!(note_date(&none, "lore/2026-13-01.md"), None, "no month 13");
        assert_eq!(note_date(&none, "lore/20261001.md"), None);
        assert_eq!(
            note_date(&none, "lore/2026-10-011.md"),
            None,
            "a longer number"
        );
    }

    #[test]
    fn bounds_are_relative_days_weeks_or_a_date() {
        let today = date(2026, 12, 1);
        assert_eq!(parse_bound("30d", today), Ok(date(2026, 11, 1)));
        assert_eq!(parse_bound("2w", today), Ok(date(2026, 11, 17)));
        assert_eq!(parse_bound("0d", today), Ok(today));
        assert_eq!(parse_bound("2026-10-01", today), Ok(date(2026, 10, 1)));
        for bad in [
            "",
            "d",
            "-3d",
            "yesterday",
            "30",
            "3m",
            "2026-02-30",
            "2026-10-01x",
            "1e9d",
        ] {
            let err = parse_bound(bad, today).unwrap_err();
            assert!(err.contains("30d, 2w or YYYY-MM-DD"), "{bad}: {err}");
        }
    }
}
