//! `brain check`: what rotted. Broken and short-form links, entries missing a required
//! field or holding a value outside their schema, a `type` that disagrees with the folder,
//! slugs that are not kebab-case or taken twice, dates that do not parse or run backwards,
//! entries past their type's staleness rule, INDEX.md files out of date, frontmatter that
//! could not be read, and schema files that cannot be used. Read-only.

use std::collections::{BTreeMap, HashMap};

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use super::index_md::IndexFile;
use super::links::{Resolution, Resolver};
use super::schema::Schemas;
use super::slug::is_kebab;
use super::Entry;
use crate::date::{leading_date, value_date};
use crate::error::Error;
use crate::text::unicode_form::nfc;

/// What kind of problem; the names are a contract with `--json` readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A `SCHEMA.md` that cannot be used.
    Schema,
    /// Frontmatter that could not be read (the note was indexed as plain markdown), or a
    /// title or tags of a shape brain does not read.
    Frontmatter,
    /// A note that is not valid UTF-8 (indexed with replacement characters).
    Encoding,
    /// A file the index skips (UTF-16, binary, over `max_file_mb`, unreadable, a link out
    /// of the brain), or a folder it cannot read: not searchable, and not in any INDEX.md.
    Skipped,
    /// A link to no note.
    BrokenLink,
    /// A link in the short form `[[slug]]` where the convention is `[[type/slug]]`.
    ShortLink,
    /// A required field missing or empty.
    MissingField,
    /// A value outside the field's allowed values.
    BadValue,
    /// `type:` names another type than the folder.
    WrongType,
    /// A slug that is not kebab-case ASCII.
    BadSlug,
    /// Two entries of one type with one slug.
    DuplicateSlug,
    /// `created` or `updated` that is not a `YYYY-MM-DD` date.
    BadDate,
    /// `updated` before `created`.
    DatesOutOfOrder,
    /// Not updated within the type's `stale_after_days`.
    Stale,
    /// An INDEX.md that `brain index-md --write` would change.
    IndexOutdated,
}

impl ProblemKind {
    /// The heading of this kind's group in the human report.
    pub fn heading(self) -> &'static str {
        match self {
            ProblemKind::Schema => "schema files that cannot be used",
            ProblemKind::Frontmatter => "frontmatter that could not be read",
            ProblemKind::Encoding => {
                "notes that are not UTF-8 (indexed with replacement characters)"
            }
            ProblemKind::Skipped => "files the index skips (not searchable, not in INDEX.md)",
            ProblemKind::BrokenLink => "broken links",
            ProblemKind::ShortLink => "links in the short form (write [[type/slug]])",
            ProblemKind::MissingField => "missing required fields",
            ProblemKind::BadValue => "values outside the schema",
            ProblemKind::WrongType => "type that disagrees with the folder",
            ProblemKind::BadSlug => "slugs that are not kebab-case",
            ProblemKind::DuplicateSlug => "one slug, two entries",
            ProblemKind::BadDate => "dates that do not parse, or lie ahead",
            ProblemKind::DatesOutOfOrder => "updated before created",
            ProblemKind::Stale => "stale entries",
            ProblemKind::IndexOutdated => "INDEX.md out of date (brain index-md --write)",
        }
    }
}

/// One thing `brain check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// What kind.
    pub kind: ProblemKind,
    /// The file, relative to the root.
    pub path: String,
    /// 1-based line; `null` for a problem of the whole file.
    #[serde(default)]
    pub line: Option<u32>,
    /// What is wrong, and what to do.
    pub message: String,
}

/// `brain check --json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Notes looked at.
    pub notes: u64,
    /// Types with a schema.
    pub types: Vec<String>,
    /// Everything found, grouped by kind, then by path and line.
    pub problems: Vec<Problem>,
    /// Problems per kind.
    pub counts: BTreeMap<ProblemKind, u64>,
    /// Said when the index could not be brought up to date first (a read-only data dir):
    /// the audit is of the index as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// Audits `entries` against `schemas` as of `today`; `index_files` are the INDEX.md files
/// as generated, with what is on disk now; `skipped`, the sync's warning line for each
/// file it did not read into the index.
pub fn check(
    root: &std::path::Path,
    schemas: &Schemas,
    entries: &[Entry],
    index_files: &[IndexFile],
    skipped: &[String],
    today: Date,
) -> CheckReport {
    let mut out = Vec::new();
    let mut push = |kind, path: &str, line: Option<u32>, message: String| {
        out.push(Problem {
            kind,
            path: path.to_string(),
            line,
            message,
        })
    };
    for e in &schemas.errors {
        let (path, line) = match e {
            Error::Schema { path, line, .. } => (path.as_path(), line.map(|l| l as u32)),
            Error::Io { path, .. } => (path.as_path(), None),
            _ => (root, None),
        };
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        // The message without the path and line the problem carries on its own.
        let message = match e {
            Error::Schema { message, .. } => message.clone(),
            Error::Io { cause, .. } => format!("cannot be read: {cause}"),
            other => other.to_string(),
        };
        push(ProblemKind::Schema, &rel, line, message);
    }

    for warning in skipped {
        let (path, message) = skipped_parts(warning);
        push(ProblemKind::Skipped, path, None, message.to_string());
    }

    let resolver = Resolver::new(entries.iter().map(|e| e.path.as_str())).on_disk(root);
    let mut headings = super::headings::Headings::new(root);
    // Keyed in lower case: `Retry-Budget.md` and `retry-budget.md` are one file on macOS,
    // and a link to either is ambiguous on Linux.
    let mut slugs: HashMap<(&str, String), Vec<&str>> = HashMap::new();
    let mut bad_slugs: Vec<(&str, &str, String, &str)> = Vec::new();
    for e in entries {
        if let Some(problem) = &e.problem {
            let message = problem
                .strip_prefix(&format!("{}: ", e.path))
                .unwrap_or(problem);
            // Bytes that are not UTF-8 are no frontmatter problem, and their line is the
            // one to fix (read from the note only then, as a field's line is).
            match message.starts_with(crate::note::NOT_UTF8) {
                true => push(
                    ProblemKind::Encoding,
                    &e.path,
                    Some(invalid_utf8_line(&root.join(&e.path)).unwrap_or(1)),
                    message.to_string(),
                ),
                false => push(
                    ProblemKind::Frontmatter,
                    &e.path,
                    Some(yaml_error_line(message).unwrap_or(1)),
                    message.to_string(),
                ),
            }
        }
        for l in &e.links {
            match resolver.resolve(&l.target) {
                Resolution::Note { path } => {
                    if let Some(why) = l
                        .heading
                        .as_deref()
                        .and_then(|h| headings.missing(&path, h))
                    {
                        push(
                            ProblemKind::BrokenLink,
                            &e.path,
                            Some(l.line),
                            format!("[[{}]]: {why}", l.written()),
                        );
                    }
                }
                Resolution::Unindexed { .. } => {}
                Resolution::Short { path } => push(
                    ProblemKind::ShortLink,
                    &e.path,
                    Some(l.line),
                    format!("[[{}]]: write [[{}]]", l.written(), l.canonical_for(&path)),
                ),
                Resolution::Broken { why } => push(
                    ProblemKind::BrokenLink,
                    &e.path,
                    Some(l.line),
                    format!("[[{}]]: {why}", l.written()),
                ),
            }
        }
        // The line of a field, read from the note only when a problem names it (check reads
        // no note otherwise); 1, the frontmatter's start, when it cannot be found.
        let line_of = |field: &str| field_line(&root.join(&e.path), field).unwrap_or(1);
        // A date that does not parse leaves the note on its file's day, in any folder: a
        // `--since` search then misses it, so every note's dates are checked, typed or not.
        let date = |field: &str| -> Option<Result<Date, String>> {
            let v = e.fields.get(field)?;
            if v.is_null() {
                return None;
            }
            let text = scalar(v);
            // Shown as written: a string quoted, a list or a number as YAML has it (a list
            // was shown as JSON inside quotes, `"[\"2026-01-01\"]"`).
            let shown = match v {
                serde_json::Value::String(s) => format!("{s:?}"),
                other => other.to_string(),
            };
            Some(value_date(&text).ok_or(shown))
        };
        let created = date("created");
        let updated = date("updated");
        for (field, d) in [("created", &created), ("updated", &updated)] {
            match d {
                Some(Err(text)) => push(
                    ProblemKind::BadDate,
                    &e.path,
                    Some(line_of(field)),
                    format!("{field}: {text} is not a date (write YYYY-MM-DD)"),
                ),
                // A day of slack: a note written today where the date is already tomorrow.
                // Past that, a typo (2062 for 2026), which would also keep it from going
                // stale for decades.
                Some(Ok(day)) if (*day - today).get_days() > 1 => push(
                    ProblemKind::BadDate,
                    &e.path,
                    Some(line_of(field)),
                    format!("{field}: {day} is in the future (today is {today}): a typo?"),
                ),
                _ => {}
            }
        }
        if let (Some(Ok(c)), Some(Ok(u))) = (&created, &updated) {
            if u < c {
                push(
                    ProblemKind::DatesOutOfOrder,
                    &e.path,
                    Some(line_of("updated")),
                    format!("updated {u} is before created {c}"),
                );
            }
        }
        let Some((folder, slug)) = e.slot() else {
            continue;
        };
        let Some(schema) = schemas.types.get(folder) else {
            continue;
        };
        // In NFC too: `café.md` written in both forms is two files on Linux, one on a Mac.
        slugs
            .entry((folder, nfc(slug).to_lowercase()))
            .or_default()
            .push(&e.path);
        let flat = e.path == format!("{folder}/{slug}.md");
        if let Some((_, what)) = super::new::RESERVED
            .iter()
            .find(|(name, _)| flat && slug.eq_ignore_ascii_case(name))
        {
            push(
                ProblemKind::BadSlug,
                &e.path,
                None,
                format!(
                    "is {folder}/{}.md on a Mac ({what}), which brain writes or reads in its place: rename it",
                    slug.to_uppercase()
                ),
            );
        } else if !is_kebab(slug) {
            let want = super::slug::slugify(slug).unwrap_or_default();
            bad_slugs.push((folder, slug, want, &e.path));
        }
        // Frontmatter that did not parse was said once above: its fields are not missing,
        // they are unread, and a line per field would bury the one cause. (A problem with
        // fields read, a tag list written as a map, leaves the other fields to check.)
        if e.problem.is_some() && e.fields.is_empty() {
            continue;
        }
        match e.fields.get("type") {
            // In NFC: a folder named by an older macOS tool (NFD) and a type typed on a
            // keyboard are one name ("café is not café" otherwise).
            // An empty one is a missing required field, said once as that.
            Some(serde_json::Value::String(t)) if !t.trim().is_empty() && nfc(t) != nfc(folder) => {
                push(
                    ProblemKind::WrongType,
                    &e.path,
                    Some(line_of("type")),
                    format!("type: {t}, but it sits in {folder}/ (move it, or fix its type)"),
                )
            }
            Some(serde_json::Value::String(_) | serde_json::Value::Null) | None => {}
            // A list or a number: the note is filed by its folder, which the value may not
            // say; one type name makes that explicit.
            Some(other) => push(
                ProblemKind::WrongType,
                &e.path,
                Some(line_of("type")),
                format!("type: {other} is not one type name (write type: {folder})"),
            ),
        }
        for field in &schema.required {
            let present = match e.fields.get(field.as_str()) {
                None | Some(serde_json::Value::Null) => false,
                Some(serde_json::Value::String(s)) => !s.trim().is_empty(),
                // `tags: []` is a deliberate "no tags".
                Some(_) => true,
            };
            if !present {
                // Written empty (`url: ""`, as `brain new` writes a field to fill in): at
                // its line; absent: at the frontmatter's start.
                let line = match e.fields.contains_key(field.as_str()) {
                    true => line_of(field),
                    false => 1,
                };
                push(
                    ProblemKind::MissingField,
                    &e.path,
                    Some(line),
                    format!("no {field} (required by {})", schema.file),
                );
            }
        }
        for (name, rule) in &schema.fields {
            if rule.values.is_empty() {
                continue;
            }
            let Some(value) = e.fields.get(name.as_str()) else {
                continue;
            };
            let values: Vec<String> = match value {
                serde_json::Value::Array(items) => items.iter().map(scalar).collect(),
                serde_json::Value::Null => continue,
                other => vec![scalar(other)],
            };
            for v in values
                .iter()
                .filter(|v| !v.is_empty() && !rule.values.contains(v))
            {
                push(
                    ProblemKind::BadValue,
                    &e.path,
                    Some(line_of(name)),
                    format!("{name}: {v:?} is not one of {}", rule.values.join(", ")),
                );
            }
        }
        if let (Some(days), Some(dated)) = (schema.stale_after_days, leading_date(&e.date)) {
            // A list (`phase: [Done]`) is exempt by any of its values, as `check` reads each.
            let exempt = schema
                .stale_except
                .iter()
                .any(|(field, values)| e.field_values(field).iter().any(|v| values.contains(v)));
            let age = (today - dated).get_days() as i64;
            if !exempt && age > days as i64 {
                push(
                    ProblemKind::Stale,
                    &e.path,
                    None,
                    format!(
                        "last updated {dated}, {age} days ago ({} allows {days}): update it, or close it",
                        schema.file
                    ),
                );
            }
        }
    }
    // Said once every slug is known: the kebab-case name may be another entry's, and a
    // rename as told would then write over it.
    for (folder, slug, want, path) in bad_slugs {
        let taken: Vec<&str> = slugs
            .get(&(folder, want.clone()))
            .into_iter()
            .flatten()
            .copied()
            .filter(|p| *p != path)
            .collect();
        let slug = crate::text::without_controls(slug);
        let message = match taken.first() {
            None => format!("\"{slug}\" is not kebab-case ASCII (rename it \"{want}\")"),
            Some(other) => format!(
                "\"{slug}\" is not kebab-case ASCII, and \"{want}\" is {other}: merge them, or give this one another name"
            ),
        };
        push(ProblemKind::BadSlug, path, None, message);
    }
    for ((folder, slug), paths) in &slugs {
        if paths.len() > 1 {
            let mut paths = paths.clone();
            paths.sort();
            for p in &paths[1..] {
                push(
                    ProblemKind::DuplicateSlug,
                    p,
                    None,
                    format!(
                        "{folder}/{slug} is also {}{}: merge them, or rename one",
                        paths[0],
                        // Alike to the eye: said, or the line reads as a file twice.
                        match p.to_lowercase() != paths[0].to_lowercase() && nfc(p) == nfc(paths[0])
                        {
                            true => " (the same name, its accents written another way)",
                            false => "",
                        }
                    ),
                );
            }
        }
    }
    for f in index_files.iter().filter(|f| f.changed()) {
        let there = root.join(&f.path).symlink_metadata();
        let message = match &f.current {
            // `index-md --write` puts its file in the place of a pipe or a device, and of a
            // file it cannot read (no permission, not UTF-8, too large).
            None if there.as_ref().is_ok_and(|m| m.is_file()) => {
                "cannot be read (no permission, not UTF-8, or too large): brain index-md --write replaces it"
                    .to_string()
            }
            None if there
                .as_ref()
                .is_ok_and(|m| !m.is_dir() && !m.file_type().is_symlink()) =>
            {
                "not a regular file (a pipe or a device): brain index-md --write replaces it"
                    .to_string()
            }
            // A folder, or a link (to one, to nowhere, out of the brain): never replaced.
            None if there.is_ok() => {
                "not a file that can be read: move it away, then brain index-md --write makes it"
                    .to_string()
            }
            None => "missing: brain index-md --write creates it".to_string(),
            Some(_) => {
                "differs from the entries' frontmatter: brain index-md shows how".to_string()
            }
        };
        push(ProblemKind::IndexOutdated, &f.path, None, message);
    }

    out.sort_by(|a, b| (a.kind, &a.path, a.line).cmp(&(b.kind, &b.path, b.line)));
    let mut counts = BTreeMap::new();
    for p in &out {
        *counts.entry(p.kind).or_insert(0) += 1;
    }
    CheckReport {
        notes: entries.len() as u64,
        types: schemas.types.keys().cloned().collect(),
        problems: out,
        counts,
        notice: None,
    }
}

/// The 1-based line of the top-level `field:` in the frontmatter of the note at `file`.
fn field_line(file: &std::path::Path, field: &str) -> Option<u32> {
    // The frontmatter is at the top: 1 MiB of it is plenty, and the note is read only if it
    // is still a regular file (replaced by a pipe since the sync, it would block).
    let bytes = crate::file::read_file(file, 1 << 20).ok()?;
    let yaml = crate::note::frontmatter_yaml(&String::from_utf8_lossy(&bytes))?;
    for (i, line) in yaml.lines().enumerate() {
        let line = line.trim_end();
        let key = line
            .strip_prefix(field)
            .or_else(|| line.strip_prefix(&format!("\"{field}\"")))
            .or_else(|| line.strip_prefix(&format!("'{field}'")));
        if key.is_some_and(|rest| rest.trim_start().starts_with(':')) {
            return u32::try_from(i + 2).ok();
        }
    }
    None
}

/// The file line a YAML error names first (`... at line 4 column 1, while ...`), which the
/// note's warning already gives in the file's lines.
fn yaml_error_line(message: &str) -> Option<u32> {
    let (_, after) = message.split_once(" at line ")?;
    let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    after[..digits].parse().ok()
}

/// The 1-based line of the first bytes in `file` that are not UTF-8; `None` when it cannot
/// be read or is UTF-8 now.
fn invalid_utf8_line(file: &std::path::Path) -> Option<u32> {
    let bytes = crate::file::read_file(file, u64::from(u32::MAX)).ok()?;
    let valid = std::str::from_utf8(&bytes).err()?.valid_up_to();
    let ends = bytes[..valid].iter().filter(|&&b| b == b'\n').count();
    u32::try_from(ends + 1).ok()
}

/// A frontmatter scalar as text (a list item, a date written as a number...).
fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    }
}

/// A sync's warning line split into the path it names and what it says: at its verdict
/// (`: skipped: `, `: not read: `), which no path holds in practice, else at the first
/// `: ` (a line of another shape is kept whole, on the brain folder).
fn skipped_parts(warning: &str) -> (&str, &str) {
    [": skipped: ", ": not read: "]
        .iter()
        .find_map(|mark| warning.find(mark))
        .or_else(|| warning.find(": "))
        .map_or(("", warning), |at| (&warning[..at], &warning[at + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::schema::Schema;

    fn lore() -> Schemas {
        let text = "---\ntype: lore\nrequired: [type, title, created]\nfields:\n  category:\n    values: [lesson]\n---\n";
        let schema = Schema::parse("lore", "lore/SCHEMA.md", "lore/SCHEMA.md".as_ref(), text)
            .expect("the schema parses");
        Schemas {
            types: [("lore".to_string(), schema)].into(),
            errors: Vec::new(),
        }
    }

    fn entry(path: &str, fields: serde_json::Value, problem: Option<&str>) -> Entry {
        Entry {
            path: path.into(),
            kind: "lore".into(),
            title: "t".into(),
            fields: fields.as_object().cloned().unwrap_or_default(),
            date: "2026-01-01".into(),
            problem: problem.map(String::from),
            links: Vec::new(),
        }
    }

    /// `check` of `entries` in a brain without type schemas, on 2026-06-01.
    fn untyped(root: &std::path::Path, entries: &[Entry]) -> CheckReport {
        check(
            root,
            &Schemas::default(),
            entries,
            &[],
            &[],
            Date::constant(2026, 6, 1),
        )
    }

    fn kinds(report: &CheckReport, path: &str) -> Vec<(ProblemKind, String)> {
        report
            .problems
            .iter()
            .filter(|p| p.path == path)
            .map(|p| (p.kind, p.message.clone()))
            .collect()
    }

    #[test]
    fn a_field_problem_is_said_at_the_field_s_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lore")).unwrap();
        std::fs::write(
            dir.path().join("lore/x.md"),
            "---\ntitle: t\ntags: [a]\ncategory: Maybe\ncreated: 2026-02-01\nupdated: 2026-01-01\ntype: idea\n---\nbody\n",
        )
        .unwrap();
        let entries = [entry(
            "lore/x.md",
            serde_json::json!({"title": "t", "category": "Maybe", "created": "2026-02-01",
                "updated": "2026-01-01", "type": "idea"}),
            None,
        )];
        let today = Date::constant(2026, 6, 1);
        let report = check(dir.path(), &lore(), &entries, &[], &[], today);
        let line = |kind| {
            report
                .problems
                .iter()
                .find(|p| p.kind == kind)
                .and_then(|p| p.line)
        };
        assert_eq!(line(ProblemKind::BadValue), Some(4));
        assert_eq!(line(ProblemKind::DatesOutOfOrder), Some(6));
        assert_eq!(line(ProblemKind::WrongType), Some(7));
        assert_eq!(field_line(&dir.path().join("lore/x.md"), "body"), None);
        assert_eq!(field_line(&dir.path().join("lore/none.md"), "title"), None);
    }

    #[test]
    fn a_rename_a_slug_problem_suggests_onto_another_entry_says_so() {
        let fields = serde_json::json!({"type": "lore", "title": "t", "created": "2026-01-01"});
        let entries = [
            entry("lore/retry-budget.md", fields.clone(), None),
            entry("lore/Retry-Budget.md", fields.clone(), None),
            entry("lore/retry budget.md", fields.clone(), None),
            entry("lore/Fine Name.md", fields, None),
        ];
        let report = check(
            "/b".as_ref(),
            &lore(),
            &entries,
            &[],
            &[],
            Date::constant(2026, 6, 1),
        );
        let taken = "is not kebab-case ASCII, and \"retry-budget\" is lore/retry-budget.md: \
                     merge them, or give this one another name";
        assert_eq!(
            kinds(&report, "lore/retry budget.md"),
            [(ProblemKind::BadSlug, format!("\"retry budget\" {taken}"))]
        );
        // Capitals aside, one slug used twice (one file on macOS).
        let twin = kinds(&report, "lore/retry-budget.md");
        assert!(
            twin.iter().any(
                |(k, m)| *k == ProblemKind::DuplicateSlug && m.contains("lore/Retry-Budget.md")
            ),
            "{report:?}"
        );
        assert_eq!(
            kinds(&report, "lore/Fine Name.md"),
            [(
                ProblemKind::BadSlug,
                "\"Fine Name\" is not kebab-case ASCII (rename it \"fine-name\")".to_string()
            )]
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_encoding_problem_at_their_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.md"), b"# X\n\ncaf\xe9 au lait\n").unwrap();
        let entries = [Entry {
            kind: "notes".into(),
            ..entry(
                "x.md",
                serde_json::json!({}),
                Some("x.md: invalid UTF-8 at byte 8; indexed with replacement characters"),
            )
        }];
        let report = untyped(dir.path(), &entries);
        let p = &report.problems[0];
        assert_eq!((p.kind, p.line), (ProblemKind::Encoding, Some(3)));
        assert!(p.message.starts_with("invalid UTF-8 at byte 8"), "{p:?}");
    }

    #[test]
    fn unread_frontmatter_is_said_at_the_line_its_error_names() {
        let problem = "x.md: frontmatter ignored: invalid YAML: found character that cannot \
                       start any token at line 4 column 1, while scanning for the next token";
        let entries = [Entry {
            kind: "notes".into(),
            ..entry("x.md", serde_json::json!({}), Some(problem))
        }];
        let report = untyped("/b".as_ref(), &entries);
        let p = &report.problems[0];
        assert_eq!((p.kind, p.line), (ProblemKind::Frontmatter, Some(4)));
        assert_eq!(yaml_error_line("frontmatter has no closing '---'"), None);
    }

    #[test]
    fn dates_are_checked_in_every_folder_not_only_typed_ones() {
        let loose = |path: &str, fields| Entry {
            kind: "notes".into(),
            ..entry(path, fields, None)
        };
        let entries = [
            loose("root.md", serde_json::json!({"created": "2024-02-30"})),
            loose(
                "misc/x.md",
                serde_json::json!({"created": "2026-02-01", "updated": "2026-01-01"}),
            ),
            loose("misc/fine.md", serde_json::json!({"created": "2024-02-29"})),
        ];
        let report = untyped("/b".as_ref(), &entries);
        assert_eq!(
            kinds(&report, "root.md"),
            [(
                ProblemKind::BadDate,
                "created: \"2024-02-30\" is not a date (write YYYY-MM-DD)".to_string()
            )]
        );
        assert_eq!(
            kinds(&report, "misc/x.md"),
            [(
                ProblemKind::DatesOutOfOrder,
                "updated 2026-01-01 is before created 2026-02-01".to_string()
            )]
        );
        assert!(kinds(&report, "misc/fine.md").is_empty(), "{report:?}");
    }

    #[test]
    fn a_list_value_is_exempt_from_staleness_by_any_of_its_values() {
        let text = "---\nfields:\n  phase:\n    values: [Exploring, Done]\nstale_after_days: 30\nstale_except:\n  phase: [Done]\n---\n";
        let schema = Schema::parse("idea", "idea/SCHEMA.md", "idea/SCHEMA.md".as_ref(), text)
            .expect("the schema parses");
        let schemas = Schemas {
            types: [("idea".to_string(), schema)].into(),
            errors: Vec::new(),
        };
        let old = |path: &str, phase: serde_json::Value| Entry {
            kind: "idea".into(),
            date: "2020-01-01".into(),
            ..entry(path, serde_json::json!({ "phase": phase }), None)
        };
        let entries = [
            old("idea/closed.md", serde_json::json!(["Done"])),
            old("idea/open.md", serde_json::json!(["Exploring"])),
        ];
        let report = check(
            "/b".as_ref(),
            &schemas,
            &entries,
            &[],
            &[],
            Date::constant(2026, 6, 1),
        );
        let future = old("idea/later.md", serde_json::json!("Done"));
        let future = Entry {
            fields: serde_json::json!({"created": "2099-01-01", "updated": "2026-06-02"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ..future
        };
        let report2 = check(
            "/b".as_ref(),
            &schemas,
            &[future],
            &[],
            &[],
            Date::constant(2026, 6, 1),
        );
        let dates: Vec<_> = kinds(&report2, "idea/later.md")
            .into_iter()
            .filter(|(k, _)| *k == ProblemKind::BadDate)
            .map(|(_, m)| m)
            .collect();
        assert_eq!(
            dates,
            ["created: 2099-01-01 is in the future (today is 2026-06-01): a typo?"],
            "tomorrow's date is within the slack"
        );
        let stale = |path| {
            kinds(&report, path)
                .iter()
                .any(|(k, _)| *k == ProblemKind::Stale)
        };
        assert!(!stale("idea/closed.md"), "{report:?}");
        assert!(stale("idea/open.md"), "{report:?}");
    }

    #[test]
    fn unread_frontmatter_is_one_problem_not_one_per_field() {
        let entries = [entry(
            "lore/broken.md",
            serde_json::json!({}),
            Some("lore/broken.md: frontmatter is not YAML: did not find expected key at line 3"),
        )];
        let today = Date::constant(2026, 6, 1);
        let report = check("/b".as_ref(), &lore(), &entries, &[], &[], today);
        let found = kinds(&report, "lore/broken.md");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, ProblemKind::Frontmatter);
        assert!(
            found[0].1.starts_with("frontmatter is not YAML"),
            "{found:?}"
        );
    }

    #[test]
    fn a_type_that_is_not_one_name_is_said_and_a_matching_one_is_not() {
        let base = serde_json::json!({"title": "t", "created": "2026-01-01"});
        let with = |t: serde_json::Value| {
            let mut f = base.clone();
            f["type"] = t;
            f
        };
        let entries = [
            entry(
                "lore/list.md",
                with(serde_json::json!(["lore", "idea"])),
                None,
            ),
            entry("lore/number.md", with(serde_json::json!(5)), None),
            entry("lore/fine.md", with(serde_json::json!("lore")), None),
            entry("lore/other.md", with(serde_json::json!("idea")), None),
            entry("lore/empty.md", with(serde_json::json!("")), None),
        ];
        let today = Date::constant(2026, 6, 1);
        let report = check("/b".as_ref(), &lore(), &entries, &[], &[], today);
        let list = kinds(&report, "lore/list.md");
        assert_eq!(
            list,
            [(
                ProblemKind::WrongType,
                "type: [\"lore\",\"idea\"] is not one type name (write type: lore)".to_string()
            )]
        );
        assert_eq!(
            kinds(&report, "lore/number.md")[0].0,
            ProblemKind::WrongType
        );
        assert!(kinds(&report, "lore/fine.md").is_empty());
        assert!(kinds(&report, "lore/other.md")[0]
            .1
            .starts_with("type: idea, but"));
        // An empty type is a missing field, said once ("type: , but it sits in" read garbled).
        let empty = kinds(&report, "lore/empty.md");
        assert_eq!(empty.len(), 1, "{empty:?}");
        assert_eq!(empty[0].0, ProblemKind::MissingField);
    }
}
