//! Type schemas: what a `lore/`, `idea/`... entry must carry. Each type folder may hold a
//! `SCHEMA.md` whose YAML frontmatter is the machine-readable schema (the markdown below it
//! is for people):
//!
//! ```yaml
//! ---
//! type: lore                                   # must name the folder it sits in
//! required: [type, title, created, updated, tags]   # the default when left out
//! fields:
//!   category:
//!     values: [pattern, convention, decision, lesson, anti-pattern, reference, behavior]
//!     required: true
//!     default: lesson                          # what `brain new` writes (else the first value)
//!   status:
//!     values: [active, deprecated, superseded]
//! group_by: category                           # INDEX.md's sections, in the values' order
//! stale_after_days: 730                        # optional: `brain check` flags older entries
//! stale_except: {status: [superseded]}         # ...but not these
//! template: |                                  # the body `brain new` writes under the title
//!   ## Context
//! ---
//! ```
//!
//! A folder without a `SCHEMA.md` is an untyped folder: indexed and searched as always,
//! never audited.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};

/// The schema file's name inside a type folder.
pub const SCHEMA_FILE: &str = "SCHEMA.md";

/// The most a `SCHEMA.md` is read of: a schema is a screenful, and a link to `/dev/zero`
/// must not be read until memory runs out.
const SCHEMA_MAX_BYTES: u64 = 1 << 20;

/// Fields `brain new` always writes, and those required when a schema lists none.
pub const BASE_FIELDS: &[&str] = &["type", "title", "created", "updated", "tags"];

/// One field's rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Field {
    /// The values allowed (compared case-sensitively, as written); empty: any value.
    pub values: Vec<String>,
    /// Entries must carry it.
    pub required: bool,
    /// What `brain new` writes: the schema's `default`, else its first value.
    pub default: Option<Scalar>,
}

/// One value as a schema's YAML gives it: its text, and whether YAML read it as a number or
/// a boolean, so that `brain new` writes `priority: 3` and `private: true` back as they
/// were written instead of as the strings `"3"` and `"true"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar {
    /// The value as text, as `brain check` compares it with a note's (a number or a boolean
    /// in YAML's own spelling).
    pub text: String,
    /// A number or a boolean: written bare.
    pub bare: bool,
}

/// What one type's entries must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    /// The type, which is also its folder.
    pub kind: String,
    /// The schema file, relative to the root.
    pub file: String,
    /// Fields every entry must have: the schema's `required` list (the base fields when it
    /// has none) and the fields marked `required: true`.
    pub required: Vec<String>,
    /// Per-field rules, by field name.
    pub fields: BTreeMap<String, Field>,
    /// The field INDEX.md groups by.
    pub group_by: Option<String>,
    /// Entries whose date is older than this many days are stale...
    pub stale_after_days: Option<u32>,
    /// ...unless one of these fields holds one of these values (an idea `Done`, a job
    /// `Closed`).
    pub stale_except: BTreeMap<String, Vec<String>>,
    /// The body `brain new` writes under the `# Title` line.
    pub template: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchema {
    #[serde(rename = "type")]
    kind: Option<String>,
    required: Option<Vec<String>>,
    #[serde(default)]
    fields: BTreeMap<String, RawField>,
    group_by: Option<String>,
    stale_after_days: Option<u32>,
    #[serde(default)]
    stale_except: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    template: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawField {
    // Read as YAML values, not strings, to keep what kind of scalar each one is.
    #[serde(default)]
    values: Vec<serde_yaml_ng::Value>,
    #[serde(default)]
    required: bool,
    default: Option<serde_yaml_ng::Value>,
}

/// A field's value as a [`Scalar`]; `None` for YAML's null (no value); an error naming
/// the field for a list or a map, which no entry's field could equal.
fn scalar_of(field: &str, v: serde_yaml_ng::Value) -> std::result::Result<Option<Scalar>, String> {
    use serde_yaml_ng::Value;
    let (text, bare) = match v {
        Value::Null => return Ok(None),
        // Trimmed as `check` trims a note's value: `" Exploring"` in the schema would
        // otherwise be written by `brain new` and then refused by `check`.
        Value::String(s) => (s.trim().to_string(), false),
        Value::Bool(b) => (b.to_string(), true),
        Value::Number(n) => (n.to_string(), true),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
            return Err(format!(
                "field {field}: a value or default must be one word, number or true/false, not a list or a map"
            ))
        }
    };
    Ok(Some(Scalar { text, bare }))
}

impl Schema {
    /// Parses the schema file `file` (relative path `rel`) of the type folder `kind`.
    pub fn parse(kind: &str, rel: &str, file: &Path, text: &str) -> Result<Schema> {
        // One line whatever the file holds: a value quoted back may span lines (a YAML
        // block scalar; found by the fuzzer).
        let bad = |line: Option<usize>, message: String| Error::Schema {
            path: file.to_path_buf(),
            line,
            message: message.replace('\r', "\\r").replace('\n', "\\n"),
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let yaml = frontmatter(text).ok_or_else(|| {
            bad(
                Some(1),
                "no YAML frontmatter: the schema goes between two '---' lines at the top".into(),
            )
        })?;
        if let Some(why) = crate::note::too_deep(yaml) {
            return Err(bad(None, why));
        }
        let raw: RawSchema = serde_yaml_ng::from_str(yaml).map_err(|e| {
            // The YAML starts on the file's second line.
            let line = e.location().map(|l| l.line() + 1);
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            let hint = crate::note::tab_hint(yaml);
            bad(
                line,
                format!("{}{hint}", crate::error::in_plain_words(message)),
            )
        })?;
        // The line a key sits on, for the faults found after parsing (YAML starts on line 2).
        let at = |keys: &[&str]| line_of(yaml, keys);
        let nfc = crate::text::unicode_form::nfc;
        if let Some(named) = raw.kind.as_deref().filter(|k| nfc(k) != nfc(kind)) {
            return Err(bad(
                at(&["type"]),
                format!("says type: {named}, but sits in the {kind}/ folder; make them agree"),
            ));
        }
        // Without a `required` list, the base fields are required; with one, exactly it
        // (plus the fields marked `required: true`).
        let mut required: Vec<String> = match &raw.required {
            Some(list) => Vec::with_capacity(list.len()),
            None => BASE_FIELDS.iter().map(|s| s.to_string()).collect(),
        };
        for f in raw.required.iter().flatten().chain(
            raw.fields
                .iter()
                .filter(|(_, f)| f.required)
                .map(|(k, _)| k),
        ) {
            if !required.contains(f) {
                required.push(f.clone());
            }
        }
        let mut fields = BTreeMap::new();
        for (name, f) in raw.fields {
            let mut values = Vec::with_capacity(f.values.len());
            for v in f.values {
                match scalar_of(&name, v).map_err(|m| bad(at(&["fields", &name, "values"]), m))? {
                    Some(v) => values.push(v),
                    None => {
                        return Err(bad(
                            at(&["fields", &name, "values"]),
                            format!("field {name}: a value is empty (~ or null): leave it out"),
                        ))
                    }
                }
            }
            // `brain new` writes these itself; a default for one was dropped without a word.
            if f.default.is_some() && BASE_FIELDS.contains(&name.as_str()) {
                return Err(bad(
                    at(&["fields", &name, "default"]),
                    format!(
                        "field {name}: 'brain new' writes {name} itself (type and title from the \
                         command, created and updated as today, tags empty), so a default \
                         would never be used; remove it"
                    ),
                ));
            }
            let default = match f.default {
                Some(d) => {
                    scalar_of(&name, d).map_err(|m| bad(at(&["fields", &name, "default"]), m))?
                }
                None => None,
            };
            let texts: Vec<String> = values.iter().map(|v| v.text.clone()).collect();
            if let Some(d) = default
                .as_ref()
                .map(|d| d.text.as_str())
                .filter(|d| !texts.is_empty() && !texts.iter().any(|v| v == d))
            {
                return Err(bad(
                    at(&["fields", &name, "default"]),
                    format!(
                        "field {name}: default {d:?} is not one of its values ({})",
                        texts.join(", ")
                    ),
                ));
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(v) = texts.iter().find(|v| !seen.insert(v.as_str())) {
                return Err(bad(
                    at(&["fields", &name, "values"]),
                    format!("field {name}: value {v:?} is listed twice"),
                ));
            }
            fields.insert(
                name,
                Field {
                    default: default.or_else(|| values.into_iter().next()),
                    values: texts,
                    required: f.required,
                },
            );
        }
        if let Some(g) = &raw.group_by {
            if !fields.contains_key(g) && !BASE_FIELDS.contains(&g.as_str()) {
                let known: Vec<&str> = fields.keys().map(String::as_str).collect();
                return Err(bad(
                    at(&["group_by"]),
                    format!(
                        "group_by: {g} is not a field of {kind} (its fields: {})",
                        if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        }
        if raw.stale_after_days == Some(0) {
            return Err(bad(
                at(&["stale_after_days"]),
                "stale_after_days must be at least 1 (or left out)".into(),
            ));
        }
        Ok(Schema {
            kind: kind.to_string(),
            file: rel.to_string(),
            required,
            fields,
            group_by: raw.group_by,
            stale_after_days: raw.stale_after_days,
            stale_except: raw.stale_except,
            template: raw.template,
        })
    }

    /// The value `brain new` writes for `field`: its default, else its first allowed value.
    pub fn default_value(&self, field: &str) -> Option<&Scalar> {
        self.fields.get(field)?.default.as_ref()
    }
}

/// The file line (YAML's first line is the file's second) of the key `keys` names, each
/// nested in the one before (`fields`, `category`, `default`), found by indentation as a
/// person reads it; `None` when it is written another way (a flow map `{default: x}` on
/// its field's line is that line).
fn line_of(yaml: &str, keys: &[&str]) -> Option<usize> {
    let lines: Vec<&str> = yaml.lines().collect();
    let (mut from, mut parent, mut found) = (0, None::<usize>, None);
    for key in keys {
        let mut hit = None;
        for (i, line) in lines.iter().enumerate().skip(from) {
            let text = line.trim_start();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let indent = line.len() - text.len();
            if parent.is_some_and(|p| indent <= p) {
                break; // out of the parent's block
            }
            let name = text.split(':').next().unwrap_or("").trim();
            if text.contains(':') && name.trim_matches(['"', '\'']) == *key {
                hit = Some((i, indent));
                break;
            }
        }
        let Some((i, indent)) = hit else {
            // `c: {values: [a], default: b}`: the field's own line holds it.
            return found.map(|i: usize| i + 2);
        };
        (from, parent, found) = (i + 1, Some(indent), Some(i));
    }
    found.map(|i| i + 2)
}

/// The YAML between a leading `---` line and the next one.
fn frontmatter(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---")?;
    let rest = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some(&rest[..at]);
        }
        at += line.len();
    }
    None
}

/// The schemas of one brain, and the schema files that could not be used.
#[derive(Debug, Default)]
pub struct Schemas {
    /// By type.
    pub types: BTreeMap<String, Schema>,
    /// Schema files with an error (each type so broken is left out of `types`).
    pub errors: Vec<Error>,
}

impl Schemas {
    /// Reads `<type>/SCHEMA.md` in every top-level folder of `root` (dot-folders skipped).
    pub fn load(root: &Path) -> Result<Schemas> {
        let mut out = Schemas::default();
        let entries = std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
        // Real folders only: a symlinked one may point outside the brain, and the walk
        // does not follow those (writing its INDEX.md would write outside).
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for dir in dirs {
            let Some(kind) = dir.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
                continue;
            };
            if kind.starts_with('.') {
                continue;
            }
            let file = dir.join(SCHEMA_FILE);
            let text = match super::read_in_brain(root, &file, SCHEMA_MAX_BYTES) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                // A folder nobody may enter: whether it holds a schema cannot be known, and
                // the walk already says the folder is not read ("secret/SCHEMA.md cannot be
                // read" named a file that is not there).
                Err(_) if file.symlink_metadata().is_err() => continue,
                Err(e) => {
                    out.errors.push(Error::io(&file, e));
                    continue;
                }
            };
            let rel = format!("{kind}/{SCHEMA_FILE}");
            match Schema::parse(&kind, &rel, &file, &text) {
                Ok(s) => {
                    out.types.insert(kind, s);
                }
                Err(e) => out.errors.push(e),
            }
        }
        Ok(out)
    }
}

/// The schemas `brain install` writes into a new brain: `(type, SCHEMA.md)`.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("lore", include_str!("defaults/lore.md")),
    ("idea", include_str!("defaults/idea.md")),
    ("job", include_str!("defaults/job.md")),
    ("followup", include_str!("defaults/followup.md")),
    ("research-link", include_str!("defaults/research-link.md")),
];

/// The default `SCHEMA.md` of type `kind`, if it is one of [`DEFAULTS`].
pub fn default_for(kind: &str) -> Option<&'static str> {
    DEFAULTS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Schema> {
        Schema::parse(
            "lore",
            "lore/SCHEMA.md",
            Path::new("/b/lore/SCHEMA.md"),
            text,
        )
    }

    #[test]
    fn the_default_schemas_parse() {
        for (kind, text) in DEFAULTS {
            let s = Schema::parse(kind, "x", Path::new("x"), text)
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert!(s.required.iter().any(|f| f == "created"), "{kind}");
        }
    }

    #[test]
    fn a_schema_is_read_with_its_rules() {
        let s = parse(
            "---\ntype: lore\nfields:\n  category:\n    values: [pattern, lesson]\n    required: true\n    default: lesson\ngroup_by: category\nstale_after_days: 30\ntemplate: |\n  ## Context\n---\n# Lore\n",
        )
        .unwrap();
        assert_eq!(
            s.required,
            ["type", "title", "created", "updated", "tags", "category"]
        );
        assert_eq!(
            s.default_value("category").map(|d| d.text.as_str()),
            Some("lesson")
        );
        assert_eq!(s.group_by.as_deref(), Some("category"));
        assert_eq!(s.template, "## Context\n");
    }

    #[test]
    fn numbers_and_booleans_keep_their_kind() {
        let s = parse(
            "---\nfields:\n  private:\n    default: true\n  priority:\n    values: [1, 2, 3]\n  size:\n    values: [\"1\", \"2\"]\n  note:\n    default: ~\n---\n",
        )
        .unwrap();
        let d = |f| s.default_value(f).map(|d| (d.text.as_str(), d.bare));
        assert_eq!(d("private"), Some(("true", true)));
        assert_eq!(d("priority"), Some(("1", true)));
        assert_eq!(d("size"), Some(("1", false)));
        assert_eq!(d("note"), None);
        assert_eq!(s.fields["priority"].values, ["1", "2", "3"]);
        let padded =
            parse("---\nfields:\n  phase:\n    values: [\" Exploring\", Done ]\n---\n").unwrap();
        assert_eq!(padded.fields["phase"].values, ["Exploring", "Done"]);
        assert_eq!(
            padded.fields["phase"]
                .default
                .as_ref()
                .map(|d| d.text.as_str()),
            Some("Exploring")
        );
    }

    #[test]
    fn bad_schemas_name_the_file_the_line_and_the_fix() {
        let cases = [
            (
                "no frontmatter\n",
                "/b/lore/SCHEMA.md:1: no YAML frontmatter",
            ),
            ("---\nfields: [oops\n---\n", "/b/lore/SCHEMA.md:2:"),
            (
                "---\ntype: lore\nfields:\n  a: {values: [x\n---\n",
                "/b/lore/SCHEMA.md:",
            ),
            (
                "---\ntype: lore\ngroup_by: category\n---\n",
                "/b/lore/SCHEMA.md:3: group_by: category is not a field of lore",
            ),
            (
                "---\ntype: idea\n---\n",
                "says type: idea, but sits in the lore/ folder",
            ),
            (
                "---\nfields:\n  c:\n    values: [a]\n    default: b\n---\n",
                "/b/lore/SCHEMA.md:5: field c: default \"b\" is not one of its values",
            ),
            (
                "---\nfields:\n  c:\n    values: [a, a]\n---\n",
                "/b/lore/SCHEMA.md:4: field c: value \"a\" is listed twice",
            ),
            (
                "---\n# the fields\nfields:\n  c: {values: [a], default: b}\n---\n",
                "/b/lore/SCHEMA.md:4: field c: default",
            ),
            ("---\ncolour: red\n---\n", "unknown field `colour`"),
            (
                "---\nfields:\n  c:\n    default: [a, b]\n---\n",
                "field c: a value or default must be one word",
            ),
            (
                "---\nfields:\n  c:\n    values: [a, ~]\n---\n",
                "field c: a value is empty",
            ),
            (
                "---\nstale_after_days: 0\n---\n",
                "stale_after_days must be at least 1",
            ),
            (
                "---\nfields:\n  tags: {default: inbox}\n---\n",
                "field tags: 'brain new' writes tags itself",
            ),
            (
                &format!("---\na: {}{}\n---\n", "[".repeat(5000), "]".repeat(5000)),
                "nested over 128 levels",
            ),
            // serde's words for Rust's types, said as a person writing YAML reads them.
            (
                "---\nstale_after_days: -5\n---\n",
                "negative number `-5`, expected a whole number",
            ),
            (
                "---\n- a\n- b\n---\n",
                "/b/lore/SCHEMA.md:2: invalid type: list, expected a map of keys (fields, required, group_by, ...)",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
}
