//! Calendar dates: the date a note carries (frontmatter `updated`, else `created`, else a
//! date leading its file name; the index falls back to the file's mtime), and the bounds
//! `--since` / `--before` accept (`30d`, `2w`, `YYYY-MM-DD`). Days are local days: a note
//! written at 23:30 belongs to that evening, not to tomorrow in UTC.

use jiff::civil::Date;
use serde_json::{Map, Value};

/// A day in milliseconds, as the logs' timestamps count.
pub const DAY_MS: i64 = 24 * 3600 * 1000;

/// Now, in milliseconds since the Unix epoch (the logs' timestamps); 0 on a clock set
/// before 1970.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Now, in whole seconds since the Unix epoch; 0 on a clock set before 1970.
pub fn now_secs() -> i64 {
    now_ms() / 1000
}

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

/// A frontmatter value as a date: a string (or YAML timestamp, read as a string) that is
/// a real `YYYY-MM-DD`, alone or followed by a time of day that is one.
pub fn field_date(value: &Value) -> Option<Date> {
    value.as_str().and_then(value_date)
}

/// `text` as a date field's value: a real `YYYY-MM-DD`, alone or followed by a real time
/// (`T09:30`, ` 09:30:00.5`, with `Z` or an offset such as `+02:00` or YAML's `-5`).
/// `2026-01-01T25:00` or `2026-01-01garbage` is not a date: taken as its first ten
/// characters, it would be filed under a day its writer never meant.
pub fn value_date(text: &str) -> Option<Date> {
    let text = text.trim();
    let day = leading_date(text)?;
    let rest = &text[10..];
    (rest.is_empty() || is_time(rest)).then_some(day)
}

/// Whether `s` is `[T ]HH:MM[:SS[.frac]][ ][Z|±H[H][[:]MM]]` with the numbers in range.
fn is_time(s: &str) -> bool {
    // YAML's timestamp: `T`, or spaces and tabs, then an hour of one digit or two.
    let s = match s.strip_prefix(['T', 't']) {
        Some(s) => s,
        None if s.starts_with([' ', '\t']) => s.trim_start_matches([' ', '\t']),
        None => return false,
    };
    let one_digit_hour;
    let s = match s.as_bytes() {
        [h, b':', ..] if h.is_ascii_digit() => {
            one_digit_hour = format!("0{s}");
            one_digit_hour.as_str()
        }
        _ => s,
    };
    // Two digits, at most `max`, and what follows.
    fn two(s: &str, max: u32) -> Option<&str> {
        // Digits only: `parse` alone would take "+1".
        let d = s
            .get(..2)
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
        let n: u32 = d.parse().ok()?;
        (n <= max).then(|| &s[2..])
    }
    let Some(s) = two(s, 23)
        .and_then(|s| s.strip_prefix(':'))
        .and_then(|s| two(s, 59))
    else {
        return false;
    };
    let mut s = s;
    if let Some(sec) = s.strip_prefix(':') {
        // 60: a leap second.
        let Some(rest) = two(sec, 60) else {
            return false;
        };
        s = rest;
        if let Some(frac) = s.strip_prefix('.') {
            s = frac.trim_start_matches(|c: char| c.is_ascii_digit());
            if s.len() == frac.len() {
                return false;
            }
        }
    }
    let s = s.trim_start();
    if s.is_empty() || s == "Z" || s == "z" {
        return true;
    }
    let Some(offset) = s.strip_prefix(['+', '-']) else {
        return false;
    };
    let hours = offset.bytes().take_while(u8::is_ascii_digit).count();
    match hours {
        1 => offset[1..].is_empty(),
        2 => match two(offset, 23) {
            Some("") => true,
            Some(m) => two(m.strip_prefix(':').unwrap_or(m), 59) == Some(""),
            None => false,
        },
        4 => two(offset, 23).and_then(|m| two(m, 59)) == Some(""),
        _ => false,
    }
}

/// The date a note's own text gives it: `updated`, else `created`, else `date` (what
/// Jekyll, Hugo, Pelican and many Obsidian templates write: a thousand notes dated so were
/// all dated the day they were copied), else a date leading its file name
/// (`2026-10-01-standup.md`). `None` when it has none; the index then uses the file's
/// modification day.
pub fn note_date(fields: &Map<String, Value>, rel_path: &str) -> Option<Date> {
    ["updated", "created", "date"]
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
    // All digits but too many: it is in the form, and too far back.
    let too_far =
        || format!("{spec:?} is too far back: give at most 100000 days (or a YYYY-MM-DD date)");
    let digits = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    let n: i64 = match number.parse() {
        Ok(n) => n,
        Err(_) if digits => return Err(too_far()),
        Err(_) => return Err(expected()),
    };
    if n > 100_000 / days_per_unit {
        return Err(too_far());
    }
    if n < 0 {
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
        let jekyll = fields(serde_json::json!({"date": "2019-05-06 10:00:00 +0200"}));
        assert_eq!(note_date(&jekyll, "lore/x.md"), Some(date(2019, 5, 6)));
        let both = fields(serde_json::json!({"date": "2019-05-06", "created": "2020-01-01"}));
        assert_eq!(note_date(&both, "lore/x.md"), Some(date(2020, 1, 1)));
        let none = Map::new();
        assert_eq!(
            note_date(&none, "journal/2026-10-01-standup.md"),
            Some(date(2026, 10, 1))
        );
        assert_eq!(note_date(&none, "lore/2026-13-01.md"), None, "no month 13");
        for good in [
            "2026-01-01",
            "2026-01-01T09:30",
            "2026-01-01t09:30:00Z",
            "2026-01-01 23:59:60.25 -5",
            "2026-01-01T09:30:00+02:00",
            "2026-01-01T09:30:00-0230",
            "2026-01-01T09:30:00.123+02",
            "2026-01-01T9:30",
            "2026-01-01\t \t09:30",
        ] {
            assert_eq!(value_date(good), Some(date(2026, 1, 1)), "{good}");
        }
        for bad in [
            "2026-01-01T25:00:00",
            "2026-01-01T09:60",
            "2026-01-01garbage",
            "2026-01-01T",
            "2026-01-01T930",
            "2026-01-01T09:30:00.",
            "2026-01-01T09:30:00+25:00",
            "2026-01-01T09:30:00 UTC",
            "2026-01-01 soon",
        ] {
            assert_eq!(value_date(bad), None, "{bad}");
        }
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
        // In the form, but further back than any note: said so, not "not a date".
        for far in ["99999999999d", "100001d", "20000w"] {
            let err = parse_bound(far, today).unwrap_err();
            assert!(
                err.contains("is too far back: give at most 100000 days"),
                "{far}: {err}"
            );
        }
        assert!(parse_bound("100000d", today).is_ok());
    }
}
