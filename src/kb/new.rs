//! `brain new TYPE TITLE`: an entry from its type's template, under a slug made from the
//! title, with `created` and `updated` set to today. It refuses a slug the type already
//! has, and never leaves half a file (temp file, then a rename that fails if the name was
//! taken in the meantime).

use std::path::{Path, PathBuf};

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use super::schema::{Schema, Schemas};
use super::slug::slugify;
use crate::error::{Error, Result};

/// What `brain new` made (`--json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEntry {
    /// Relative to the root.
    pub path: String,
    /// On disk.
    pub abs_path: String,
    /// The type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The title.
    pub title: String,
    /// The link that points at it.
    pub link: String,
    /// Fields its type's schema requires that were written empty (no default): what to
    /// fill in before `brain check` is content.
    #[serde(default)]
    pub to_fill: Vec<String>,
}

/// An entry ready to write.
#[derive(Debug, Clone)]
pub struct Planned {
    /// What it will be.
    pub entry: NewEntry,
    /// Where.
    pub file: PathBuf,
    /// Its text.
    pub text: String,
    /// The brain folder it goes in.
    pub brain: PathBuf,
}

/// A type folder's own files, as a Mac names them without case, and what each holds: an
/// entry `index.md` would be `INDEX.md`, written over by `index-md --write` (and "edit it"
/// sent the person to a generated file).
pub(crate) const RESERVED: [(&str, &str); 2] = [
    ("index", "the list of its entries brain index-md writes"),
    ("schema", "its fields and template"),
];

/// Plans the entry `title` of type `kind` in `root`: `kind/slug.md`, or with `folder`
/// `kind/slug/slug.md`. The type must have a schema or be an existing folder of the root.
pub fn plan(
    root: &Path,
    schemas: &Schemas,
    kind: &str,
    title: &str,
    folder: bool,
    today: Date,
) -> Result<Planned> {
    // The type as a shell completes a folder's name (`lore/`) is that type.
    let kind = kind.strip_suffix('/').unwrap_or(kind);
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        return Err(Error::InvalidInput(
            "the title is empty: say what the entry is about".into(),
        ));
    }
    if title
        .chars()
        .any(|c| c.is_control() || crate::text::is_bidi_control(c))
    {
        return Err(Error::InvalidInput(
            "the title holds control characters (an escape sequence, or a mark that turns text right to left?): type it as plain text"
                .into(),
        ));
    }
    // The title is the entry's heading and its line in INDEX.md: `[[x]]` there is a link,
    // to nowhere as often as not, and `brain check` failed the note it had just written.
    if title.contains("[[") || title.contains("]]") {
        return Err(Error::InvalidInput(
            "the title holds [[ or ]], which would make it a link in the entry's heading and in INDEX.md: write the words without the brackets, and link from the body".into(),
        ));
    }
    // Types are matched without case, as `--type` filters are (`IDEA` is `idea`); the
    // entry takes the type's own spelling. A type or folder named as typed is that one,
    // and two that differ only in case leave the name as typed (then refused if neither).
    let nfc = crate::text::unicode_form::nfc;
    let exact = schemas.types.contains_key(kind) || folders(root).iter().any(|f| f == kind);
    let mut alike: Vec<String> = schemas
        .types
        .keys()
        .cloned()
        .chain(folders(root))
        .filter(|k| nfc(k).to_lowercase() == nfc(kind).to_lowercase())
        .collect();
    alike.sort();
    alike.dedup();
    let canonical = match (exact, alike.as_slice()) {
        (false, [one]) => Some(one.clone()),
        _ => None,
    };
    let kind = canonical.as_deref().unwrap_or(kind);
    let schema = schemas.types.get(kind);
    if schema.is_none() {
        // A type whose schema is there but unusable is refused, not written without its
        // fields and template as if it had none.
        if let Some(e) = broken_schema(schemas, kind) {
            return Err(e);
        }
        let is_folder = is_plain_name(kind)
            && std::fs::symlink_metadata(root.join(kind)).is_ok_and(|m| m.is_dir());
        // Quoted as typed, without Rust's escapes (`"cafe\u{301}"` for an accent typed
        // apart): only control characters are replaced.
        let shown = format!("\"{}\"", crate::text::without_controls(kind));
        if !is_folder && is_plain_name(kind) && root.join(kind).is_dir() {
            return Err(Error::InvalidInput(format!(
                "type {shown}: {}/ is a symbolic link, which brain does not follow (the index skips it too): move the folder itself into the brain",
                crate::text::without_controls(kind)
            )));
        }
        if !is_folder {
            if !is_plain_name(kind) {
                return Err(Error::InvalidInput(format!(
                    "unknown type {shown}: a type is the name of a top-level folder of the brain, without '/' or a leading '.'"
                )));
            }
            // `note` is what a search calls the loose notes at the top of the brain folder,
            // which have no folder: said, so that a search's "types here: note" and this
            // refusal do not contradict each other.
            if kind == crate::note::LOOSE_TYPE {
                return Err(Error::InvalidInput(format!(
                    "type {shown} is the notes at the top of the brain folder, and brain new writes into a type's folder: make the folder ({}) to write entries of type note there, or give another type",
                    root.join(kind).display()
                )));
            }
            let mut known: Vec<String> = schemas.types.keys().cloned().collect();
            if known.is_empty() {
                known = folders(root);
            }
            if known.is_empty() {
                return Err(Error::InvalidInput(format!(
                    "unknown type {shown}: the brain has no types yet: make the folder ({}) or, in an empty brain folder, run 'brain install' for the default ones",
                    root.join(kind).display()
                )));
            }
            // `NOTES` with both `Notes/` and `notes/` there: not unknown, but not one type.
            if alike.len() > 1 {
                return Err(Error::InvalidInput(format!(
                    "type {shown} could be {}: folders differing only in case; give one exactly",
                    alike.join(" or ")
                )));
            }
            return Err(Error::InvalidInput(format!(
                "unknown type {shown}: the types are {} (or any top-level folder, without a schema)",
                known.join(", ")
            )));
        }
    }
    let slug = slugify(&title).ok_or_else(|| {
        Error::InvalidInput(format!(
            "the title {title:?} makes an empty file name: use some letters or digits"
        ))
    })?;
    // (`--folder` writes `lore/index/index.md`, which is no such file.)
    if let Some((_, what)) = RESERVED.iter().find(|(name, _)| !folder && *name == slug) {
        return Err(Error::InvalidInput(format!(
            "the title {title:?} makes {kind}/{slug}.md, which is {kind}/{}.md on a Mac ({what}): add a word to the title",
            slug.to_uppercase()
        )));
    }
    if let Some(taken) = taken(root, kind, &slug) {
        if super::slug::is_cut(&title) {
            return Err(Error::InvalidInput(format!(
                "{taken} already exists: a file name keeps only a title's first {} characters, and this title's are the same; edit that note, or begin the title differently",
                super::slug::MAX_SLUG
            )));
        }
        return Err(taken_error(&taken));
    }
    let rel = match folder {
        true => format!("{kind}/{slug}/{slug}.md"),
        false => format!("{kind}/{slug}.md"),
    };
    let file = root.join(&rel);
    let text = render(kind, &title, schema, today);
    let to_fill = schema.map_or_else(Vec::new, |s| {
        s.required
            .iter()
            .filter(|f| !super::schema::BASE_FIELDS.contains(&f.as_str()))
            .filter(|f| s.default_value(f).is_none_or(|d| d.text.is_empty()))
            .cloned()
            .collect()
    });
    Ok(Planned {
        entry: NewEntry {
            abs_path: file.to_string_lossy().into_owned(),
            link: format!("[[{kind}/{slug}]]"),
            path: rel,
            kind: kind.to_string(),
            title,
            to_fill,
        },
        file,
        text,
        brain: root.to_path_buf(),
    })
}

/// Whether `kind` could name a top-level folder: not empty, not hidden, no separator.
fn is_plain_name(kind: &str) -> bool {
    !kind.is_empty() && !kind.starts_with('.') && !kind.contains(['/', '\\'])
}

/// Why `kind`'s `SCHEMA.md` cannot be used, when [`Schemas::load`] found it broken: a YAML
/// or rules error as it was said, or a file that could not be read (not UTF-8, no
/// permission), naming the file.
fn broken_schema(schemas: &Schemas, kind: &str) -> Option<Error> {
    let of_kind = |path: &Path| {
        path.parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == kind)
    };
    schemas.errors.iter().find_map(|e| match e {
        Error::Schema { path, .. } if of_kind(path) => Some(Error::InvalidInput(e.to_string())),
        // A link out of the brain says what to do itself.
        Error::Io { path, cause } if of_kind(path) && super::LinkOut::is(cause) => {
            Some(Error::InvalidInput(format!("{}: {cause}", path.display())))
        }
        Error::Io { path, cause } if of_kind(path) => Some(Error::InvalidInput(format!(
            "cannot read {} ({cause}): make it readable UTF-8 text, or remove it to write \
             {kind} entries without a schema",
            path.display()
        ))),
        _ => None,
    })
}

/// The refusal of an entry whose file `path` is there already (a note, or a link).
pub fn taken_error(path: &str) -> Error {
    Error::InvalidInput(format!(
        "{path} already exists: edit it, or choose another title"
    ))
}

/// The entry of `slug` in `kind` that is there already, in either form (`kind/slug.md`,
/// `kind/slug/slug.md`): one entry per slug, whichever form asked for.
fn taken(root: &Path, kind: &str, slug: &str) -> Option<String> {
    let file = format!("{slug}.md");
    let exact = [format!("{kind}/{file}"), format!("{kind}/{slug}/{file}")]
        .into_iter()
        // A link counts, to nowhere too: `exists` would follow it and say no.
        .find(|path| root.join(path).symlink_metadata().is_ok());
    // Case aside too (a slug is lowercase ASCII): on macOS `Make-cron.md` is the same file
    // as `make-cron.md`, and on Linux a second one beside it, whose links cannot tell
    // the two apart.
    exact.or_else(|| {
        let named = |dir: &Path, name: &str| -> Option<String> {
            std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
                let found = e.file_name().into_string().ok()?;
                (found.to_lowercase() == name).then_some(found)
            })
        };
        let folder = root.join(kind);
        // The type's own INDEX.md or SCHEMA.md is no entry: `--folder` may make the entry
        // `kind/index/index.md` beside it (the flat form is refused before this).
        let own = |found: &str| {
            found == super::schema::SCHEMA_FILE || found == super::index_md::INDEX_FILE
        };
        if let Some(found) = named(&folder, &file).filter(|found| !own(found)) {
            return Some(format!("{kind}/{found}"));
        }
        let sub = named(&folder, slug)?;
        let inner = named(&folder.join(&sub), &file)?;
        Some(format!("{kind}/{sub}/{inner}"))
    })
}

/// The entry `planned` would make that is there already (in either form): another `brain
/// new` of the same title wrote it since the plan was made.
pub fn taken_since(planned: &Planned) -> Option<String> {
    let slug = Path::new(&planned.entry.path)
        .file_stem()
        .and_then(|s| s.to_str())?;
    taken(&planned.brain, &planned.entry.kind, slug)
}

/// Writes a planned entry (creating its folder); fails, writing nothing, if the file
/// appeared meanwhile.
pub fn write(planned: &Planned) -> Result<()> {
    let dir = planned.file.parent().unwrap_or(Path::new("."));
    // A type or entry folder that is a symlink out of the brain would take the entry (and
    // the folders made for it) elsewhere: brain writes only inside the brain folder. The
    // deepest folder there already is decides, before anything is made.
    let there = dir.ancestors().find(|d| d.exists()).unwrap_or(dir);
    let inside = match (
        std::fs::canonicalize(there),
        std::fs::canonicalize(&planned.brain),
    ) {
        (Ok(there), Ok(brain)) => there.starts_with(brain),
        _ => false,
    };
    if !inside {
        return Err(Error::InvalidInput(format!(
            "{}: its folder leads out of the brain folder (a symlink), where brain does not write: remove the link, or choose another title",
            planned.entry.path
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        // A file (or a link to nowhere) where a folder is to be made: the input's clash, as
        // for a note there already, not an error of the system (`File exists (os error 17)`).
        // A link to a folder is a folder; any other error is said as it is.
        use std::io::ErrorKind::{AlreadyExists, NotADirectory};
        let clash = matches!(e.kind(), AlreadyExists | NotADirectory);
        let blocker = dir
            .ancestors()
            .take_while(|d| clash && d.starts_with(&planned.brain) && *d != planned.brain)
            .find(|d| d.symlink_metadata().is_ok() && !d.is_dir());
        match blocker.and_then(|b| b.strip_prefix(&planned.brain).ok()) {
            Some(rel) => Error::InvalidInput(format!(
                "{}: {} is there and is not a folder: move it away, or choose another title",
                planned.entry.path,
                rel.display()
            )),
            None => Error::io(dir, e),
        }
    })?;
    super::write_atomic(&planned.file, &planned.text, super::WriteMode::CreateNew).map_err(|e| {
        match e {
            // Another `brain new` of the same title won the race since the plan was checked:
            // the same answer as when it came first.
            Error::Io { cause, .. } if cause.kind() == std::io::ErrorKind::AlreadyExists => {
                taken_error(&planned.entry.path)
            }
            other => other,
        }
    })
}

/// The entry's text: frontmatter (the base fields, then the schema's fields with their
/// defaults), the title as a heading, the template.
fn render(kind: &str, title: &str, schema: Option<&Schema>, today: Date) -> String {
    let q = scalar;
    let mut fm = format!(
        "---\ntype: {}\ntitle: {}\ncreated: {today}\nupdated: {today}\ntags: []\n",
        q(kind),
        q(title)
    );
    let mut template = String::new();
    if let Some(schema) = schema {
        // The fields it declares, then those it only requires (`required: [owner]`), empty.
        let required = schema
            .required
            .iter()
            .filter(|f| !schema.fields.contains_key(f.as_str()));
        for name in schema.fields.keys().chain(required) {
            if super::schema::BASE_FIELDS.contains(&name.as_str()) {
                continue;
            }
            let value = match schema.default_value(name) {
                Some(d) if d.bare => d.text.clone(),
                Some(d) => q(&d.text),
                None => q(""),
            };
            fm.push_str(&format!("{}: {value}\n", q(name)));
        }
        template = schema.template.clone();
    }
    fm.push_str("---\n");
    fm.push_str(&format!("# {title}\n"));
    if !template.trim().is_empty() {
        fm.push('\n');
        fm.push_str(template.trim_end());
        fm.push('\n');
    }
    fm
}

/// `s` as a YAML string, written as a person would (`category: lesson`) where YAML reads
/// that back as the same string, quoted (as a JSON string, which YAML reads as it is)
/// where it would not: a folder called `null`, `yes`, `#drafts` or `a: b`, a title with a
/// colon or a quote, a number.
fn scalar(s: &str) -> String {
    const READ_AS_OTHER: &[&str] = &[
        "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf",
    ];
    // Letters of any script (a title in French or Japanese is as plain as one in
    // English); of the punctuation, only what means nothing to YAML inside a block scalar.
    let plain = s.chars().next().is_some_and(char::is_alphabetic)
        && !s.ends_with(' ')
        && !s.contains("  ")
        && s.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | ',' | '!' | '?' | '(' | ')')
        })
        && !READ_AS_OTHER.contains(&s.to_ascii_lowercase().as_str());
    match plain {
        true => s.to_string(),
        false => serde_json::Value::String(s.to_string()).to_string(),
    }
}

/// The root's top-level folders (not dot-folders), sorted.
pub fn folders(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.'))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn brain() -> (tempfile::TempDir, Schemas) {
        let dir = tempfile::tempdir().unwrap();
        for (kind, text) in super::super::schema::DEFAULTS {
            std::fs::create_dir_all(dir.path().join(kind)).unwrap();
            std::fs::write(dir.path().join(kind).join("SCHEMA.md"), text).unwrap();
        }
        let schemas = Schemas::load(dir.path()).unwrap();
        (dir, schemas)
    }

    #[test]
    fn a_file_where_the_entry_folder_goes_is_a_clash_not_a_system_error() {
        let (dir, schemas) = brain();
        std::fs::write(dir.path().join("lore/barfile"), "x").unwrap();
        std::os::unix::fs::symlink("nowhere", dir.path().join("lore/outlink")).unwrap();
        for (title, blocker) in [("barfile", "lore/barfile"), ("Outlink", "lore/outlink")] {
            let p = plan(dir.path(), &schemas, "lore", title, true, date(2026, 12, 1)).unwrap();
            let e = write(&p).unwrap_err();
            assert!(matches!(e, Error::InvalidInput(_)), "{e:?}");
            assert!(
                e.to_string()
                    .contains(&format!("{blocker} is there and is not a folder")),
                "{e}"
            );
        }
        assert_eq!(
            std::fs::read(dir.path().join("lore/barfile")).unwrap(),
            b"x"
        );
    }

    #[test]
    fn a_new_entry_has_its_types_fields_and_template_and_parses_back() {
        let (dir, schemas) = brain();
        let p = plan(
            dir.path(),
            &schemas,
            "lore",
            "Retries need jitter!",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(p.entry.path, "lore/retries-need-jitter.md");
        assert_eq!(p.entry.link, "[[lore/retries-need-jitter]]");
        write(&p).unwrap();
        let text = std::fs::read_to_string(dir.path().join("lore/retries-need-jitter.md")).unwrap();
        let (note, warnings) = crate::note::parse(&p.entry.path, text.as_bytes());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(note.title, "Retries need jitter!");
        assert_eq!(note.fields["category"], "lesson");
        assert_eq!(note.fields["created"], "2026-12-01");
        assert!(text.contains("## The lesson"), "{text}");
        // A plan made before another writer took the slug: the same refusal, exit 2, and
        // the other's file untouched.
        let late = plan(
            dir.path(),
            &schemas,
            "lore",
            "Raced title",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        std::fs::write(&late.file, "theirs").unwrap();
        let err = write(&late).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert_eq!(
            err.to_string(),
            "lore/raced-title.md already exists: edit it, or choose another title"
        );
        // Taken since the plan, in either form: what `brain new` checks after its duplicate
        // search, which finds the other writer's entry (`--folder` raced by a plain one).
        let folder = plan(
            dir.path(),
            &schemas,
            "lore",
            "Raced again",
            true,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(taken_since(&folder), None);
        std::fs::write(dir.path().join("lore/raced-again.md"), "theirs").unwrap();
        assert_eq!(taken_since(&folder).as_deref(), Some("lore/raced-again.md"));
        // Case aside: a note named by hand with capitals is the slug's already.
        std::fs::write(
            dir.path().join("lore/Make-Cron-Run.md"),
            "# Make cron run\n",
        )
        .unwrap();
        let err = plan(
            dir.path(),
            &schemas,
            "lore",
            "make cron run",
            false,
            date(2026, 12, 1),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("lore/Make-Cron-Run.md already exists"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&late.file).unwrap(), "theirs");
        // The slug is taken now, in either form.
        for folder in [false, true] {
            let err = plan(
                dir.path(),
                &schemas,
                "lore",
                "retries need JITTER",
                folder,
                date(2026, 12, 1),
            )
            .unwrap_err();
            assert!(
                err.to_string()
                    .contains("lore/retries-need-jitter.md already exists"),
                "{err}"
            );
        }
        let p = plan(
            dir.path(),
            &schemas,
            "idea",
            "Context assistant",
            true,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(p.entry.path, "idea/context-assistant/context-assistant.md");
        assert!(p.entry.to_fill.is_empty());
        // A required field with no default is written empty, and said to be filled in.
        let p = plan(
            dir.path(),
            &schemas,
            "research-link",
            "Dense passage retrieval",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(p.entry.to_fill, ["url"]);
        assert!(p.text.contains("\nurl: \"\"\n"), "{}", p.text);
        // A field the schema only requires is written too, empty, and named.
        std::fs::create_dir_all(dir.path().join("task")).unwrap();
        std::fs::write(
            dir.path().join("task/SCHEMA.md"),
            "---\ntype: task\nrequired: [type, title, created, owner]\n---\n# task\n",
        )
        .unwrap();
        let schemas = Schemas::load(dir.path()).unwrap();
        let p = plan(
            dir.path(),
            &schemas,
            "task",
            "Fix it",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(p.entry.to_fill, ["owner"]);
        assert!(p.text.contains("\nowner: \"\"\n"), "{}", p.text);
        // Numbers and booleans are written back as YAML typed them, not as strings.
        std::fs::create_dir_all(dir.path().join("chore")).unwrap();
        std::fs::write(
            dir.path().join("chore/SCHEMA.md"),
            "---\ntype: chore\nfields:\n  private:\n    default: true\n  priority:\n    values: [1, 2, 3]\n  size:\n    values: [\"10\", \"20\"]\n---\n# chore\n",
        )
        .unwrap();
        let schemas = Schemas::load(dir.path()).unwrap();
        let p = plan(
            dir.path(),
            &schemas,
            "chore",
            "Water plants",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        for line in ["\nprivate: true\n", "\npriority: 1\n", "\nsize: \"10\"\n"] {
            assert!(p.text.contains(line), "{line:?} in {}", p.text);
        }
        let (parsed, _) = crate::note::parse("chore/water-plants.md", p.text.as_bytes());
        assert_eq!(parsed.fields["private"], serde_json::json!(true));
        assert_eq!(parsed.fields["priority"], serde_json::json!(1));
        // Folders that differ only in case: the one named as typed, and no guess between
        // them for a third spelling.
        for f in ["Journal", "journal"] {
            std::fs::create_dir_all(dir.path().join(f)).unwrap();
        }
        let p = plan(
            dir.path(),
            &schemas,
            "journal",
            "Day",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(p.entry.path, "journal/day.md");
        assert!(plan(
            dir.path(),
            &schemas,
            "JOURNAL",
            "Day",
            false,
            date(2026, 12, 1)
        )
        .is_err());
        // A type in other case is the type.
        let p = plan(
            dir.path(),
            &schemas,
            "IDEA",
            "Shouted",
            false,
            date(2026, 12, 1),
        )
        .unwrap();
        assert_eq!(
            (p.entry.path.as_str(), p.entry.kind.as_str()),
            ("idea/shouted.md", "idea")
        );
    }

    #[test]
    fn frontmatter_strings_are_plain_where_yaml_reads_them_back_the_same() {
        for (s, plain) in [
            ("lore", true),
            ("research-link", true),
            ("Retries need jitter", true),
            ("v1.2 rollout", true),
            ("Retries: need jitter", false),
            ("null", false),
            ("Yes", false),
            ("#drafts", false),
            ("2026", false),
            ("say \"hi\"", false),
            ("trailing ", false),
            ("", false),
            ("Café crème", true),
            ("日本語のメモ", true),
            ("Why retry (again)?", true),
            ("Don't, ever!", false),
            ("a, b", true),
            ("x #tag", false),
            ("ǅ", true),
        ] {
            let written = scalar(s);
            assert_eq!(written == s, plain, "{s:?} written as {written}");
            let back: serde_yaml_ng::Value =
                serde_yaml_ng::from_str(&format!("k: {written}")).unwrap();
            assert_eq!(back["k"].as_str(), Some(s), "{s:?} written as {written}");
        }
    }

    #[test]
    fn bad_types_and_titles_are_refused_with_what_to_do() {
        let (dir, schemas) = brain();
        let today = date(2026, 12, 1);
        let err = plan(dir.path(), &schemas, "lroe", "x", false, today)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "unknown type \"lroe\": the types are followup, idea, job, lore, research-link (or any top-level folder, without a schema)"
            ),
            "{err}"
        );
        // The type as a shell completes its folder is that type; `lore//` is not.
        let p = plan(dir.path(), &schemas, "lore/", "Tab completed", false, today).unwrap();
        assert_eq!(p.entry.path, "lore/tab-completed.md");
        assert!(plan(dir.path(), &schemas, "lore//", "x", false, today).is_err());
        // Two folders differing only in case: the type asked for could be either.
        // (A file system that ignores case, as macOS's does by default, holds one of them.)
        std::fs::create_dir(dir.path().join("Notes")).unwrap();
        if std::fs::create_dir(dir.path().join("notes")).is_ok() {
            let err = plan(dir.path(), &schemas, "NOTES", "x", false, today)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("type \"NOTES\" could be Notes or notes"),
                "{err}"
            );
        }
        for (title, want) in [
            ("?!", "makes an empty file name"),
            ("   ", "the title is empty"),
            ("a\x1bb\x07c", "control characters"),
            ("notes\u{202E}dm.exe", "control characters"),
            ("[[link]] in title", "holds [[ or ]]"),
            // The type folder's own files, on a file system without case.
            (
                "Index",
                "makes lore/index.md, which is lore/INDEX.md on a Mac",
            ),
            (
                "SCHEMA",
                "makes lore/schema.md, which is lore/SCHEMA.md on a Mac",
            ),
        ] {
            let err = plan(dir.path(), &schemas, "lore", title, false, today)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err}");
        }
        // In a folder of its own, the name is no type file's, and the type's own INDEX.md
        // and SCHEMA.md are not entries that hold the slug.
        std::fs::write(dir.path().join("lore/INDEX.md"), "# lore\n").unwrap();
        assert!(dir.path().join("lore/SCHEMA.md").is_file());
        let own = plan(dir.path(), &schemas, "lore", "Index", true, today).unwrap();
        assert_eq!(own.entry.path, "lore/index/index.md");
        let own = plan(dir.path(), &schemas, "lore", "Schema", true, today).unwrap();
        assert_eq!(own.entry.path, "lore/schema/schema.md");
        for kind in ["../x", ".git", ""] {
            let err = plan(dir.path(), &schemas, kind, "x", false, today).unwrap_err();
            assert!(
                err.to_string()
                    .contains("a type is the name of a top-level folder"),
                "{kind}: {err}"
            );
        }
        // A brain of loose notes has no types: the line says how to make one, and the
        // folder is not made for it.
        let flat = tempfile::tempdir().unwrap();
        std::fs::write(flat.path().join("a.md"), "# A\n").unwrap();
        let none = Schemas::load(flat.path()).unwrap();
        let err = plan(flat.path(), &none, "lore", "x", false, today)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the brain has no types yet: make the folder (")
                && err.contains("run 'brain install' for the default ones"),
            "{err}"
        );
        assert!(!flat.path().join("lore").exists());
        let err = plan(flat.path(), &none, "note", "x", false, today)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is the notes at the top of the brain folder"),
            "{err}"
        );
    }

    #[test]
    fn an_entry_folder_linked_out_of_the_brain_is_refused_and_nothing_is_written_there() {
        let (dir, schemas) = brain();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("lore/linked-out")).unwrap();
        let p = plan(
            dir.path(),
            &schemas,
            "lore",
            "Linked out",
            true,
            date(2026, 12, 1),
        )
        .unwrap();
        let err = write(&p).unwrap_err().to_string();
        assert!(err.contains("leads out of the brain folder"), "{err}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_unreadable_schema_is_refused_naming_it_and_nothing_is_planned() {
        let (dir, _) = brain();
        let file = dir.path().join("idea/SCHEMA.md");
        std::fs::write(&file, b"---\ntype: idea\n---\n\xff\xfe\n").unwrap();
        let schemas = Schemas::load(dir.path()).unwrap();
        let err = plan(dir.path(), &schemas, "idea", "x", false, date(2026, 12, 1)).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("cannot read {} (", file.display())),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "{msg}");
        // The other types are not held back by it.
        assert!(plan(dir.path(), &schemas, "lore", "x", false, date(2026, 12, 1)).is_ok());
    }
}
