//! One markdown file -> one [`Note`]: frontmatter fields, title, type, tags, the body, and a
//! plain-text rendering of the body that keeps every source line on its own line, so that a
//! position in the indexed text maps straight back to a line in the file.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

/// A heading inside a note's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#`, 2 for `##`, ...
    pub level: u8,
    /// The heading's text without markup.
    pub text: String,
    /// 1-based line in the file.
    pub line: u32,
    /// 1-based line of its last line of text: `line` but for a heading underlined with
    /// `===` or `---` that runs over several lines.
    pub last_line: u32,
}

/// A parsed note. Paths are relative to the brain root with `/` separators.
#[derive(Debug, Clone)]
pub struct Note {
    /// Relative path, e.g. `lore/flag-cleanup.md`.
    pub path: String,
    /// Frontmatter `type`, else the top-level folder, else `note`.
    pub kind: String,
    /// Frontmatter `title`, else the first `# ` heading, else the file stem.
    pub title: String,
    /// Frontmatter `tags` (a list, or a comma-separated string), without leading `#`.
    pub tags: Vec<String>,
    /// All frontmatter fields, as JSON.
    pub fields: Map<String, Value>,
    /// The markdown after the frontmatter.
    pub body: String,
    /// 1-based line in the file where `body` starts.
    pub body_line: u32,
    /// `body` reduced to plain text; line `i` of `text` is line `body_line + i` of the file.
    pub text: String,
    /// Headings in order.
    pub headings: Vec<Heading>,
}

/// The type of a note at the top of the brain folder without a `type` field: it has no
/// folder to take one from.
pub const LOOSE_TYPE: &str = "note";

/// How the warning for a note that is not UTF-8 starts (`brain check` files it apart).
pub const NOT_UTF8: &str = "invalid UTF-8";

/// A problem with a note that did not stop it being indexed.
pub type Warning = String;

/// Parses a note from its bytes. Never fails: problems (invalid UTF-8, broken frontmatter)
/// come back as warnings and the note is indexed as well as it can be.
pub fn parse(rel_path: &str, bytes: &[u8]) -> (Note, Vec<Warning>) {
    let mut warnings = Vec::new();
    let source = match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(e) => {
            warnings.push(format!(
                "{rel_path}: {NOT_UTF8} at byte {}; indexed with replacement characters",
                e.valid_up_to()
            ));
            String::from_utf8_lossy(bytes)
        }
    };
    let source = source.strip_prefix('\u{feff}').unwrap_or(&source);
    let source = mac_lines(source);
    let source: &str = &source;

    let (fields, body, body_line) = match split_frontmatter(source) {
        Frontmatter::None => (Map::new(), source, 1),
        Frontmatter::Unterminated => {
            warnings.push(format!(
                "{rel_path}: frontmatter has no closing '---'; read as plain markdown"
            ));
            (Map::new(), source, 1)
        }
        Frontmatter::Block {
            yaml,
            body,
            body_line,
        } => match parse_yaml(yaml) {
            Ok(fields) => (fields, body, body_line),
            Err(why) => {
                warnings.push(format!("{rel_path}: frontmatter ignored: {why}"));
                (Map::new(), body, body_line)
            }
        },
    };
    // A note that ends with its frontmatter's closing line has no line after it: its hits
    // point at that last line, which `brain get PATH:LINE` can show.
    let body_line = match body.is_empty() {
        true => body_line.saturating_sub(1).max(1),
        false => body_line,
    };

    // A field brain reads that holds a list or a map is not read; said, so that a note
    // filed under its file name or without its tags is not a mystery.
    for (key, instead) in [
        ("title", "the first heading or the file name is the title"),
        ("tags", "no tags are read"),
    ] {
        let shape = match fields.get(key) {
            Some(Value::Object(_)) => "a map",
            Some(Value::Array(_)) if key == "title" => "a list",
            Some(Value::Bool(_)) => "true or false",
            _ => continue,
        };
        warnings.push(format!(
            "{rel_path}: {key} is {shape}, not {}; {instead}",
            match key {
                "title" => "text",
                _ => "a list of words",
            }
        ));
    }
    let (mut text, headings) = plain_text(body, body_line);
    let title = string_field(&fields, "title")
        .or_else(|| {
            headings
                .iter()
                .find(|h| h.level == 1)
                .map(|h| h.text.clone())
        })
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| file_stem(rel_path).to_string());
    blank_title_heading(&mut text, &headings, &title, body_line);
    let kind = string_field(&fields, "type")
        .filter(|t| !t.trim().is_empty())
        .or_else(|| rel_path.split_once('/').map(|(dir, _)| dir.to_string()))
        .unwrap_or_else(|| LOOSE_TYPE.to_string());
    let tags = tags_of(&fields);
    let note = Note {
        path: rel_path.to_string(),
        kind,
        // A control character in a title (an escape sequence in YAML's "\e[31m") would
        // reach a terminal raw from every list that prints titles.
        // Line breaks (a YAML block title, `title: |`) are spaces: a title is one line.
        title: title
            .split(['\n', '\r'])
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .map(|c| match c {
                '\t' => ' ',
                c if c.is_control() => '\u{FFFD}',
                c => c,
            })
            .collect(),
        tags,
        fields,
        body: body.to_string(),
        body_line,
        text,
        headings,
    };
    (note, warnings)
}

/// Whether `bytes` are a binary file rather than a note: a NUL byte in the first 8 KB,
/// as git and ripgrep decide it. The index skips such a file and `brain get` refuses it.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// What a file [`looks_binary`] holds, said with what to do: UTF-16 text (a byte-order mark
/// `FF FE` or `FE FF`, as Windows Notepad saves "Unicode") has a NUL in every ASCII
/// character, and was called binary, with no word on how to make it a note.
pub(crate) fn not_text_why(bytes: &[u8]) -> &'static str {
    match utf16_form(bytes) {
        Some(Utf16::Marked) => {
            "UTF-16 text (Windows' \"Unicode\"): save it as UTF-8 (iconv -f UTF-16 -t UTF-8)"
        }
        // Without a mark, iconv's `UTF-16` reads big-endian: the order must be named.
        Some(Utf16::Little) => {
            "UTF-16 text (Windows' \"Unicode\"): save it as UTF-8 (iconv -f UTF-16LE -t UTF-8)"
        }
        Some(Utf16::Big) => "UTF-16 text: save it as UTF-8 (iconv -f UTF-16BE -t UTF-8)",
        None => "binary file (NUL bytes)",
    }
}

/// How a UTF-16 text says its byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Utf16 {
    /// A byte-order mark (`FF FE` or `FE FF`) opens it.
    Marked,
    /// No mark; the NULs of Latin text on the odd bytes.
    Little,
    /// No mark; the NULs on the even bytes.
    Big,
}

/// Whether `bytes` are UTF-16 text ([`utf16_form`]).
pub(crate) fn is_utf16(bytes: &[u8]) -> bool {
    utf16_form(bytes).is_some()
}

/// `bytes` as UTF-16 text: opened by a byte-order mark, or, without one (as `iconv -t
/// UTF-16LE` writes), text whose every other byte is NUL at least half the time, and no
/// other byte is: the high byte of Latin text. A binary file has NULs on both sides.
pub(crate) fn utf16_form(bytes: &[u8]) -> Option<Utf16> {
    if matches!(bytes, [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..]) {
        return Some(Utf16::Marked);
    }
    // Eight characters at least: `bin\0ary` is too short to tell from text.
    let head = &bytes[..bytes.len().min(1024) & !1];
    if head.len() < 16 {
        return None;
    }
    let nuls = |from: usize| {
        head.iter()
            .skip(from)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count()
    };
    let (even, odd) = (nuls(0), nuls(1));
    let half = head.len() / 4;
    match (even, odd) {
        (0, odd) if odd >= half => Some(Utf16::Little),
        (even, 0) if even >= half => Some(Utf16::Big),
        _ => None,
    }
}

/// A file whose lines end in a lone CR (classic Mac OS; some exporters still write them)
/// with LF line ends, so that its lines are lines here too: otherwise the whole file is
/// line 1, and blanking the title's heading there blanked the note. A file with any LF is
/// left as it is (a stray CR in it is not a line break to most editors).
pub fn mac_lines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\r') && !text.contains('\n') {
        std::borrow::Cow::Owned(text.replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// The `# Title` line repeats the title, which is indexed (and weighted) on its own: left in
/// the body it would count twice and open every snippet. Its line stays, empty, so line
/// numbers still match the file.
fn blank_title_heading(text: &mut String, headings: &[Heading], title: &str, body_line: u32) {
    let Some(h) = headings
        .first()
        .filter(|h| h.level == 1 && h.text.trim() == title.trim())
    else {
        return;
    };
    let first = (h.line - body_line) as usize;
    let last = (h.last_line.max(h.line) - body_line) as usize;
    let start: usize = text.split('\n').take(first).map(|l| l.len() + 1).sum();
    if start > text.len() {
        return;
    }
    // The heading's lines, each left empty (an underlined title may run over several).
    let kept: String = text[start..]
        .split('\n')
        .enumerate()
        .map(|(i, l)| if i <= last - first { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    text.replace_range(start.., &kept);
}

enum Frontmatter<'a> {
    None,
    Unterminated,
    Block {
        yaml: &'a str,
        body: &'a str,
        body_line: u32,
    },
}

/// The YAML of `source`'s frontmatter as [`parse`] finds it (a byte-order mark skipped,
/// classic Mac line ends read as lines); its first line is line 2 of the file. `None`
/// without a closed frontmatter block.
pub(crate) fn frontmatter_yaml(source: &str) -> Option<String> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    match split_frontmatter(&mac_lines(source)) {
        Frontmatter::Block { yaml, .. } => Some(yaml.to_string()),
        _ => None,
    }
}

/// Finds a `---` ... `---` (or `...`) block at the very top of the file.
fn split_frontmatter(source: &str) -> Frontmatter<'_> {
    let first_end = source.find('\n').unwrap_or(source.len());
    if source[..first_end].trim_end() != "---" {
        return Frontmatter::None;
    }
    let mut offset = (first_end + 1).min(source.len());
    let mut line = 2u32;
    while offset < source.len() {
        let end = source[offset..]
            .find('\n')
            .map(|i| offset + i)
            .unwrap_or(source.len());
        let text = source[offset..end].trim_end();
        if text == "---" || text == "..." {
            let body_start = (end + 1).min(source.len());
            return Frontmatter::Block {
                yaml: &source[first_end + 1..offset],
                body: &source[body_start..],
                body_line: line + 1,
            };
        }
        offset = end + 1;
        line += 1;
    }
    Frontmatter::Unterminated
}

/// Flow collections (`[`, `{`) nested deeper than this are refused before parsing: the
/// parser refuses them too, at its recursion limit, but only after a scan that grows with
/// the square of the depth (100,000 levels, 200 KB of frontmatter: 37 s per sync).
const MAX_FLOW_DEPTH: usize = 128;

/// Unclosed brackets anywhere, quoted or not, past which YAML is refused whatever the quotes
/// say: a stray `'` (`don't` in a plain scalar or a comment) hides what follows from
/// [`flow_depth`], and the parser's scan at this depth is still well under a second.
const MAX_BRACKETS: usize = 4096;

/// Why `yaml` is refused before parsing, if it is: flow collections nested past the
/// parser's limit. Used for notes' frontmatter and for `SCHEMA.md`.
pub(crate) fn too_deep(yaml: &str) -> Option<String> {
    let bare = yaml
        .chars()
        .fold((0usize, 0usize), |(depth, deepest), c| match c {
            '[' | '{' => (depth + 1, deepest.max(depth + 1)),
            ']' | '}' => (depth.saturating_sub(1), deepest),
            _ => (depth, deepest),
        });
    (flow_depth(yaml) > MAX_FLOW_DEPTH || bare.1 > MAX_BRACKETS)
        .then(|| format!("lists or maps nested over {MAX_FLOW_DEPTH} levels deep"))
}

/// How deep `yaml`'s flow collections nest (brackets in quotes not counted).
fn flow_depth(yaml: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in yaml.chars() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

fn parse_yaml(yaml: &str) -> Result<Map<String, Value>, String> {
    if yaml.trim().is_empty() {
        return Ok(Map::new());
    }
    if let Some(why) = too_deep(yaml) {
        return Err(format!("invalid YAML: {why}"));
    }
    // `--- oops` (a closing line with a word after it) starts a second YAML document,
    // which the parser words as "more than one document is not supported" at line 1.
    if let Some(at) = yaml.lines().position(|l| {
        ["--- ", "---\t", "... ", "...\t"]
            .iter()
            .any(|m| l.starts_with(m))
    }) {
        return Err(format!(
            "invalid YAML at line {}: a line starting with '{}' ends the frontmatter only on its own; remove what follows it, or the line",
            at + 2,
            &yaml.lines().nth(at).unwrap_or_default()[..3]
        ));
    }
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml)
        .map_err(|e| format!("invalid YAML: {}{}", in_file_lines(&e), tab_hint(yaml)))?;
    match yaml_to_json(value) {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(format!(
            "expected key: value pairs, found {}",
            json_kind(&other)
        )),
    }
}

/// What to add to a YAML error when a line of `yaml` is indented with a tab, which YAML
/// forbids and its parser words as "found character that cannot start any token".
pub(crate) fn tab_hint(yaml: &str) -> &'static str {
    let tab_indented = yaml
        .lines()
        .any(|l| l[..l.len() - l.trim_start().len()].contains('\t'));
    match tab_indented {
        true => " (YAML indents with spaces, not tabs: replace the tabs)",
        false => "",
    }
}

/// The parser counts lines from the first line of YAML, which is line 2 of the file (after
/// the opening `---`): every line it names (the error's, and the "while parsing" one) is
/// moved on by one, to the line a person opens.
fn in_file_lines(e: &serde_yaml_ng::Error) -> String {
    const AT: &str = "at line ";
    let message = e.to_string();
    let mut out = String::with_capacity(message.len());
    let mut rest = message.as_str();
    while let Some(i) = rest.find(AT) {
        let (before, after) = rest.split_at(i + AT.len());
        out.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..digits].parse::<u64>() {
            Ok(line) => out.push_str(&(line + 1).to_string()),
            Err(_) => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// YAML allows non-string keys and tagged values; JSON does not. Keys become strings.
fn yaml_to_json(v: serde_yaml_ng::Value) -> Value {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .unwrap_or(Value::Null)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(t) => yaml_to_json(t.value),
    }
}

fn string_field(fields: &Map<String, Value>, key: &str) -> Option<String> {
    match fields.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn tags_of(fields: &Map<String, Value>) -> Vec<String> {
    let raw: Vec<String> = match fields.get("tags") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        // `"a, b"` is two tags, `"Road Safety, zebra"` too; without a comma, words are
        // tags (`"#a #b"`, as hashtags are written).
        Some(Value::String(s)) if s.contains(',') => s.split(',').map(str::to_string).collect(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Number(n)) => vec![n.to_string()],
        _ => Vec::new(),
    };
    // First spelling kept, in order; a set, not a scan of the list per tag (200,000 tags
    // took 26 s).
    let mut seen = std::collections::HashSet::new();
    let mut tags: Vec<String> = Vec::new();
    for t in &raw {
        let t = t.trim().trim_start_matches('#').trim();
        if !t.is_empty() && seen.insert(t) {
            tags.push(t.to_string());
        }
    }
    tags
}

fn file_stem(rel_path: &str) -> &str {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    name.strip_suffix(".md").unwrap_or(name)
}

/// Renders markdown to plain text, placing each piece of text on the line it came from.
/// Link targets and markup characters are dropped; code and literal HTML are kept.
fn plain_text(body: &str, body_line: u32) -> (String, Vec<Heading>) {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |offset: usize| {
        line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    };

    let mut out = String::with_capacity(body.len());
    let mut cur_line = 0usize;
    let mut need_space = false;
    let mut headings = Vec::new();
    // Level, first line, text so far, last line with text.
    let mut heading: Option<(u8, usize, String, usize)> = None;

    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        let text = match &event {
            // HTML stays searchable as literal text: it is the user's writing, and the panel
            // always shows it as text, never as markup.
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => t.as_ref(),
            Event::Start(Tag::Heading { level, .. }) => {
                let line = line_of(range.start);
                heading = Some((heading_level(*level), line, String::new(), line));
                continue;
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, line, text, last)) = heading.take() {
                    headings.push(Heading {
                        level,
                        text: text.trim().to_string(),
                        line: body_line + line as u32,
                        last_line: body_line + last as u32,
                    });
                }
                need_space = true;
                continue;
            }
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableCell
                | TagEnd::BlockQuote(_),
            )
            | Event::SoftBreak
            | Event::HardBreak => {
                // A heading's lines (`Retry` / `policy` / `===`) are one title of words.
                if let Some((_, _, h, _)) = heading.as_mut() {
                    h.push(' ');
                }
                need_space = true;
                continue;
            }
            _ => continue,
        };
        // `&#10;` or `&NewLine;` is decoded to a line end the file does not have: kept, it
        // would push every later line past its place (hits on lines past the end, the
        // title's blanking on a line of text). Such a text is one line, as in the file.
        let spaced;
        let text = if text.matches('\n').count() > body[range.clone()].matches('\n').count() {
            spaced = text.replace('\n', " ");
            spaced.as_str()
        } else {
            text
        };
        let line = line_of(range.start);
        if let Some((_, _, h, last)) = heading.as_mut() {
            h.push_str(text);
            *last = line;
        }
        if line > cur_line {
            out.extend(std::iter::repeat_n('\n', line - cur_line));
            cur_line = line;
        } else if need_space && !out.ends_with(char::is_whitespace) && !out.is_empty() {
            out.push(' ');
        }
        need_space = false;
        out.push_str(text);
        cur_line += text.matches('\n').count();
    }
    (out, headings)
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// A name as lowercase alphanumeric words joined by single spaces: `Git-Commit` and
/// `git commit` both become `git commit`. Titles and file names are stored this way so a
/// query that *is* a note's name finds it directly.
pub fn name_key(s: &str) -> String {
    crate::text::visible(s)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_key_ignores_case_and_punctuation() {
        assert_eq!(name_key("Git-Commit"), "git commit");
        assert_eq!(name_key("  tokio::select! "), "tokio select");
        assert_eq!(name_key("--"), "");
        assert_eq!(name_key("Soft\u{AD}ware"), "software");
    }

    #[test]
    fn a_title_or_tags_of_the_wrong_shape_is_said_and_not_read() {
        let (n, w) = parse(
            "lore/odd.md",
            b"---\ntitle: [a, list]\ntags: {x: 1}\ntype: lore\n---\nbody\n",
        );
        assert_eq!(n.title, "odd");
        assert!(n.tags.is_empty());
        assert_eq!(
            w,
            [
                "lore/odd.md: title is a list, not text; the first heading or the file name is the title",
                "lore/odd.md: tags is a map, not a list of words; no tags are read",
            ]
        );
        // A list of tags, a comma string, a number title: what brain reads, no warning.
        let (n, w) = parse("a.md", b"---\ntitle: 2026\ntags: a, b\n---\n");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((n.title.as_str(), n.tags.len()), ("2026", 2));
    }

    #[test]
    fn a_file_of_classic_mac_line_ends_keeps_its_body_and_its_lines() {
        let src = "---\rtitle: Old Mac\r---\r# Old Mac CR\r\rsecond\r\rThe marmoset line.\r";
        let (n, w) = parse("lore/cr.md", src.as_bytes());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(n.title, "Old Mac");
        assert_eq!(n.body_line, 4);
        let line = n.text.lines().position(|l| l.contains("marmoset"));
        assert_eq!(
            line.map(|i| n.body_line + i as u32),
            Some(8),
            "{:?}",
            n.text
        );
        // One stray CR in an LF file is not a line end.
        let (n, _) = parse("a.md", b"# T\n\nfirst\rstill first\n");
        assert_eq!(n.text.lines().count(), 3, "{:?}", n.text);
    }

    #[test]
    fn a_note_of_only_frontmatter_points_at_its_last_line() {
        for (src, line) in [
            ("---\ntitle: Only FM\n---\n", 3),
            ("---\ntitle: Only FM\n---", 3),
            ("---\ntitle: Only FM\n---\n\n", 4),
            ("", 1),
        ] {
            let (n, _) = parse("x/a.md", src.as_bytes());
            assert_eq!(n.body_line, line, "{src:?}");
        }
    }

    #[test]
    fn utf16_is_told_apart_from_binary() {
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("# Note".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert!(looks_binary(&utf16));
        assert!(not_text_why(&utf16).starts_with("UTF-16 text"));
        assert_eq!(not_text_why(b"\x89PNG\0"), "binary file (NUL bytes)");
        // Without a byte-order mark, either byte order.
        let text = "# Note\nhello, world\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(utf16_form(&le), Some(Utf16::Little));
        assert_eq!(utf16_form(&be), Some(Utf16::Big));
        assert!(not_text_why(&le).contains("iconv -f UTF-16LE -t UTF-8"));
        assert!(not_text_why(&be).contains("iconv -f UTF-16BE -t UTF-8"));
        // NULs on both sides, or too few: binary.
        assert!(!is_utf16(b"\0\0\x01\0\0\x02\0\0ab"));
        assert!(!is_utf16(b"abcdefgh\0ijklmnopqrstuvwxyz"));
        assert!(!is_utf16(b"bin\0ary"));
    }

    #[test]
    fn frontmatter_nested_past_the_limit_is_refused_at_once() {
        assert_eq!(flow_depth("a: [1, {b: [2]}]\nc: \"[[[[\"\nd: '{{'"), 3);
        let deep = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        // Refused before the parser's scan (its own refusal says "recursion limit").
        let err = parse_yaml(&deep).unwrap_err();
        assert!(err.contains("nested over 128 levels"), "{err}");
        assert!(parse_yaml(&format!("a: {}{}", "[".repeat(20), "]".repeat(20))).is_ok());
        // A stray quote before it does not hide it.
        let hidden = format!(
            "a: don't\nb: {}{}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(parse_yaml(&hidden).unwrap_err().contains("nested over"));
    }

    #[test]
    fn frontmatter_fields_title_type_tags() {
        let src = "---\ntitle: \"Flag Cleanup: Rework Tests\"\ntype: lore\ntags: [testing, 'feature-flags']\nsource: pr-123\n---\n# Heading\n\nBody text.\n";
        let (n, w) = parse("lore/flag.md", src.as_bytes());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(n.title, "Flag Cleanup: Rework Tests");
        assert_eq!(n.kind, "lore");
        assert_eq!(n.tags, vec!["testing", "feature-flags"]);
        assert_eq!(n.fields["source"], "pr-123");
        assert_eq!(n.body_line, 7);
        assert_eq!(
            n.headings,
            vec![Heading {
                level: 1,
                text: "Heading".into(),
                line: 7,
                last_line: 7
            }]
        );
    }

    #[test]
    fn a_decoded_line_end_does_not_move_later_lines() {
        let (n, _) = parse(
            "nl.md",
            b"# NL\n\nstart&NewLine;&#10;&#x0A; wombat\nsecond okapi\n",
        );
        let lines: Vec<&str> = n.text.split('\n').collect();
        assert_eq!(lines.len(), 4, "{:?}", n.text);
        assert!(lines[2].contains("wombat") && lines[3].contains("okapi"));
        // The title's line is the one blanked, not a line of text after it.
        let (n, _) = parse("blank.md", b"a&#10;okapi\n# Title\nrest\n");
        assert!(n.text.contains("okapi"), "{:?}", n.text);
        assert!(!n.text.contains("Title"), "{:?}", n.text);
    }

    #[test]
    fn an_underlined_heading_over_two_lines_is_one_title_of_words() {
        let (n, _) = parse("r.md", b"Retry\npolicy\n======\n\nbody text quokka\n");
        assert_eq!(n.title, "Retry policy");
        assert_eq!(n.headings[0].line, 1);
        assert_eq!(n.headings[0].last_line, 2);
        // Both of its lines are blanked; the body stays where it was.
        assert_eq!(n.text.split('\n').nth(4), Some("body text quokka"));
        assert!(!n.text.contains("policy"), "{:?}", n.text);
    }

    #[test]
    fn a_closing_line_with_words_after_it_is_named_at_its_line() {
        let (n, w) = parse(
            "b.md",
            b"---\ntitle: Fence typo\n--- oops\ntags: [a]\n---\nbody\n",
        );
        assert_eq!(n.title, "b");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("b.md: frontmatter ignored: invalid YAML at line 3: a line starting with '---' ends the frontmatter only on its own"),
            "{w:?}"
        );
        // Inside a block scalar (indented) it is text, not a marker.
        let (n, w) = parse("c.md", b"---\ntitle: T\nnote: |\n  --- kept\n---\nbody\n");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(n.title, "T");
    }

    #[test]
    fn a_yaml_error_names_the_lines_of_the_file() {
        let lines_named = |src: &str| -> Vec<String> {
            let (n, w) = parse("a.md", src.as_bytes());
            assert_eq!(n.title, "a");
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(
                w[0].starts_with("a.md: frontmatter ignored: invalid YAML"),
                "{w:?}"
            );
            w[0].split("at line ")
                .skip(1)
                .map(|rest| {
                    let n: usize = rest.split(' ').next().unwrap().parse().unwrap();
                    src.lines().nth(n - 1).unwrap().to_string()
                })
                .collect()
        };
        // line 1 is `---`, line 2 is fine, line 3 is the bad one
        assert_eq!(
            lines_named("---\ntitle: ok\nkey: value: more\n---\nbody\n"),
            ["key: value: more"]
        );
        // an unclosed list is found at the end of the block, opened where it was opened
        assert_eq!(
            lines_named("---\ntitle: ok\ntags: [unclosed\n---\nbody\n"),
            ["---", "tags: [unclosed"]
        );
        // a tab where YAML wants spaces is named as such, at its line
        assert_eq!(lines_named("---\ntags:\n\t- a\n---\n"), ["\t- a"]);
        let (_, w) = parse("a.md", b"---\ntags:\n\t- a\n---\n");
        assert!(
            w[0].ends_with("(YAML indents with spaces, not tabs: replace the tabs)"),
            "{w:?}"
        );
        let (_, w) = parse("a.md", b"---\nkey: value: more\n---\n");
        assert!(!w[0].contains("tabs"), "{w:?}");
    }

    #[test]
    fn block_list_tags_and_hash_prefix() {
        let src = "---\ntags:\n  - '#rust'\n  - sqlite\n  - rust\n---\nx\n";
        let (n, _) = parse("a.md", src.as_bytes());
        assert_eq!(n.tags, vec!["rust", "sqlite"]);
    }

    #[test]
    fn comma_separated_tag_string() {
        let (n, _) = parse("a.md", b"---\ntags: rust, sqlite\n---\n");
        assert_eq!(n.tags, vec!["rust", "sqlite"]);
        // A tag of two words stays one; without commas, words are tags (`#a #b`).
        let (n, _) = parse("a.md", b"---\ntags: \"Road Safety, zebra\"\n---\n");
        assert_eq!(n.tags, vec!["Road Safety", "zebra"]);
        let (n, _) = parse("a.md", b"---\ntags: \"#rust #sqlite\"\n---\n");
        assert_eq!(n.tags, vec!["rust", "sqlite"]);
        let (n, _) = parse("a.md", b"---\ntags: 2024\n---\n");
        assert_eq!(n.tags, vec!["2024"]);
    }

    #[test]
    fn a_titles_control_characters_never_reach_a_terminal() {
        let (n, _) = parse(
            "a.md",
            b"---\ntitle: \"evil \\e]0;pwned\\a \\e[31mred\"\n---\nx\n",
        );
        assert!(!n.title.chars().any(char::is_control), "{:?}", n.title);
        assert!(n.title.contains("pwned") && n.title.contains('\u{FFFD}'));
        // A block title's lines are one line.
        let (n, _) = parse(
            "a.md",
            b"---\ntitle: |\n  first line\n  second line\n---\nx\n",
        );
        assert_eq!(n.title, "first line second line");
    }

    #[test]
    fn title_falls_back_to_heading_then_stem() {
        let (n, _) = parse("idea/x.md", b"some text\n\n# Real Title\n");
        assert_eq!(n.title, "Real Title");
        let (n, _) = parse("idea/my-note.md", b"## not level one\n");
        assert_eq!(n.title, "my-note");
    }

    #[test]
    fn type_falls_back_to_top_folder_then_note() {
        assert_eq!(
            parse("research-link/deep/x.md", b"").0.kind,
            "research-link"
        );
        assert_eq!(parse("x.md", b"").0.kind, "note");
    }

    #[test]
    fn broken_frontmatter_is_a_warning_not_a_failure() {
        let (n, w) = parse("a.md", b"---\ntitle: [unclosed\n---\nbody words\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("a.md"));
        assert!(n.text.contains("body words"));
        assert_eq!(n.title, "a");
    }

    #[test]
    fn non_mapping_frontmatter_is_a_warning() {
        let (_, w) = parse("a.md", b"---\n- just\n- a list\n---\nbody\n");
        assert!(
            w[0].contains("expected key: value pairs, found a list"),
            "{w:?}"
        );
    }

    #[test]
    fn unterminated_frontmatter_keeps_all_text() {
        let (n, w) = parse("a.md", b"---\ntitle: x\nno end here\n");
        assert_eq!(w.len(), 1);
        assert!(n.text.contains("no end here"));
    }

    #[test]
    fn invalid_utf8_is_indexed_lossily_with_a_warning() {
        let (n, w) = parse("bad.md", b"hello \xff\xfe world\n");
        assert!(w[0].contains("bad.md") && w[0].contains("UTF-8"));
        assert!(n.text.contains("hello") && n.text.contains("world"));
    }

    #[test]
    fn title_heading_is_not_repeated_in_the_text() {
        let (n, _) = parse("a.md", b"# Flags\n\nFlags are fun.\n## Flags\n");
        assert_eq!(n.text, "\n\nFlags are fun.\nFlags");
        let (n, _) = parse("a.md", b"---\ntitle: Other\n---\n# Flags\nx\n");
        assert!(n.text.starts_with("Flags"));
    }

    #[test]
    fn empty_file() {
        let (n, w) = parse("lore/empty.md", b"");
        assert!(w.is_empty());
        assert_eq!(n.title, "empty");
        assert_eq!(n.text, "");
    }

    #[test]
    fn plain_text_keeps_lines_aligned_with_the_file() {
        let src = "---\ntitle: t\n---\n# Top\n\nSome *emphasis* and [a link](http://x.y).\n\n```rust\nfn main() {}\nlet x = 1;\n```\n\n- item one\n- item two\n";
        let (n, _) = parse("a.md", src.as_bytes());
        let file_lines: Vec<&str> = src.lines().collect();
        for (i, line) in n.text.lines().enumerate() {
            let file_line = file_lines[n.body_line as usize - 1 + i];
            for word in line.split_whitespace() {
                let word = word.trim_matches(|c: char| !c.is_alphanumeric());
                assert!(
                    file_line.contains(word),
                    "line {i}: {word:?} not in {file_line:?}"
                );
            }
        }
        assert!(n.text.contains("Some emphasis and a link."));
        assert!(!n.text.contains("http://x.y"));
        assert!(n.text.contains("fn main() {}\nlet x = 1;"));
    }

    #[test]
    fn html_is_kept_as_literal_text() {
        let (n, _) = parse("a.md", b"<script>alert(1)</script>\n\nkept\n");
        assert!(n.text.contains("<script>alert(1)</script>"));
        assert!(n.text.contains("kept"));
    }
}
