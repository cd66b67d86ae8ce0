//! The programs the app starts: opening a note (per `[app] open_with`), revealing it in
//! the file manager, opening the brain folder. Built as data for a given [`Platform`].

use std::path::Path;

use crate::error::{Error, Result};

/// Where a launch will run. The app passes [`Platform::current`]; tests build both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// macOS: `open`, `open -R`.
    MacOs,
    /// Linux and other freedesktop systems: `xdg-open`, the FileManager1 D-Bus interface.
    Freedesktop,
}

impl Platform {
    /// The platform this binary was built for.
    pub fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Freedesktop
        }
    }

    /// The program that opens a file, folder or URL with the system's default handler.
    fn opener(self) -> &'static str {
        match self {
            Platform::MacOs => "open",
            Platform::Freedesktop => "xdg-open",
        }
    }
}

/// A program and its arguments, run without a shell (so no quoting or expansion happens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program, looked up on `PATH`.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl Launch {
    fn new(program: &str, args: impl IntoIterator<Item = String>) -> Launch {
        Launch {
            program: program.to_string(),
            args: args.into_iter().collect(),
        }
    }
}

/// How Enter opens a note, parsed from `[app] open_with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenWith {
    /// The system's default app for `.md` files.
    Default,
    /// An editor command: the note's path is appended, or replaces `{path}` in an argument.
    Command {
        /// The program.
        program: String,
        /// Its arguments, before the path.
        args: Vec<String>,
    },
    /// A URL template such as `obsidian://open?path={path}`, opened by the system.
    Url(String),
}

impl OpenWith {
    /// Parses the setting: `default` (or empty), a URL template (`scheme:...{path}...`), or
    /// a command line with optional single or double quotes.
    pub fn parse(setting: &str) -> Result<OpenWith> {
        let s = setting.trim();
        if s.is_empty() || s.eq_ignore_ascii_case("default") {
            return Ok(OpenWith::Default);
        }
        if has_url_scheme(s) {
            if !s.contains("{path}") {
                return Err(Error::Config(format!(
                    "app.open_with = {s:?}: a URL template needs {{path}}"
                )));
            }
            return Ok(OpenWith::Url(s.to_string()));
        }
        let mut words = split_words(s)?.into_iter();
        let program = words
            .next()
            .ok_or_else(|| Error::Config("app.open_with is empty".into()))?;
        Ok(OpenWith::Command {
            program,
            args: words.collect(),
        })
    }
}

/// What opens `note` (an absolute path) as the setting asks.
pub fn open_note(open_with: &OpenWith, note: &Path, platform: Platform) -> Launch {
    let path = note.to_string_lossy();
    match open_with {
        OpenWith::Default => Launch::new(platform.opener(), [path.into_owned()]),
        OpenWith::Command { program, args } => {
            let mut args: Vec<String> = args.clone();
            if args.iter().any(|a| a.contains("{path}")) {
                args.iter_mut()
                    .for_each(|a| *a = a.replace("{path}", &path));
            } else {
                args.push(path.into_owned());
            }
            Launch::new(program, args)
        }
        OpenWith::Url(template) => Launch::new(
            platform.opener(),
            [template.replace("{path}", &percent_encode(&path))],
        ),
    }
}

/// What shows `note` selected in the file manager, best first: the app tries the next when
/// one fails (not every Linux desktop answers the FileManager1 D-Bus call).
pub fn reveal(note: &Path, platform: Platform) -> Vec<Launch> {
    let path = note.to_string_lossy().into_owned();
    match platform {
        Platform::MacOs => vec![Launch::new("open", ["-R".to_string(), path])],
        Platform::Freedesktop => {
            let uri = format!("file://{}", percent_encode(&path));
            let parent = note.parent().unwrap_or(note).to_string_lossy().into_owned();
            vec![
                Launch::new(
                    "dbus-send",
                    [
                        "--session",
                        "--print-reply",
                        "--dest=org.freedesktop.FileManager1",
                        "--type=method_call",
                        "/org/freedesktop/FileManager1",
                        "org.freedesktop.FileManager1.ShowItems",
                    ]
                    .map(String::from)
                    .into_iter()
                    .chain([format!("array:string:{uri}"), "string:".to_string()]),
                ),
                Launch::new("xdg-open", [parent]),
            ]
        }
    }
}

/// What opens a folder (the brain folder) in the file manager.
pub fn open_folder(dir: &Path, platform: Platform) -> Launch {
    Launch::new(platform.opener(), [dir.to_string_lossy().into_owned()])
}

/// Percent-encodes a path for a URL: unreserved characters and `/` stay, every other byte
/// of the UTF-8 text becomes `%XX`.
pub fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `scheme:` at the start, as in RFC 3986 (a letter, then letters, digits, `+`, `-`, `.`),
/// and more than one letter so that `C:\...` is not taken for a URL.
fn has_url_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Splits a command line into words: whitespace separates, quotes group, nothing expands.
fn split_words(s: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(Error::Config(format!(
            "app.open_with = {s:?}: a quote is not closed"
        )));
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(program: &str, args: &[&str]) -> Launch {
        Launch::new(program, args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_open_with() {
        assert_eq!(OpenWith::parse("").unwrap(), OpenWith::Default);
        assert_eq!(OpenWith::parse(" Default ").unwrap(), OpenWith::Default);
        assert_eq!(
            OpenWith::parse("obsidian://open?path={path}").unwrap(),
            OpenWith::Url("obsidian://open?path={path}".into())
        );
        assert_eq!(
            OpenWith::parse("subl -w").unwrap(),
            OpenWith::Command {
                program: "subl".into(),
                args: vec!["-w".into()]
            }
        );
        assert_eq!(
            OpenWith::parse(r#""/Applications/My Editor.app/bin/ed" --line 'a b'"#).unwrap(),
            OpenWith::Command {
                program: "/Applications/My Editor.app/bin/ed".into(),
                args: vec!["--line".into(), "a b".into()]
            }
        );
        assert!(
            OpenWith::parse("obsidian://open").is_err(),
            "a URL without {{path}} cannot name the note"
        );
        assert!(OpenWith::parse("code \"unclosed").is_err());
        assert!(matches!(
            OpenWith::parse(r"C:\editor.exe").unwrap(),
            OpenWith::Command { .. }
        ));
    }

    #[test]
    fn opens_by_default_with_the_system_opener() {
        let note = Path::new("/b/lore/a b.md");
        assert_eq!(
            open_note(&OpenWith::Default, note, Platform::MacOs),
            launch("open", &["/b/lore/a b.md"])
        );
        assert_eq!(
            open_note(&OpenWith::Default, note, Platform::Freedesktop),
            launch("xdg-open", &["/b/lore/a b.md"])
        );
    }

    #[test]
    fn editor_commands_get_the_path_appended_or_substituted() {
        let note = Path::new("/b/lore/a.md");
        let code = OpenWith::parse("code --reuse-window").unwrap();
        assert_eq!(
            open_note(&code, note, Platform::MacOs),
            launch("code", &["--reuse-window", "/b/lore/a.md"])
        );
        let goto = OpenWith::parse("code -g {path}:1").unwrap();
        assert_eq!(
            open_note(&goto, note, Platform::Freedesktop),
            launch("code", &["-g", "/b/lore/a.md:1"])
        );
    }

    #[test]
    fn url_templates_get_an_encoded_path() {
        let obsidian = OpenWith::parse("obsidian://open?path={path}").unwrap();
        let l = open_note(&obsidian, Path::new("/b/lore/a b&c.md"), Platform::MacOs);
        assert_eq!(
            l,
            launch("open", &["obsidian://open?path=/b/lore/a%20b%26c.md"])
        );
        let l = open_note(&obsidian, Path::new("/b/idée.md"), Platform::Freedesktop);
        assert_eq!(
            l,
            launch("xdg-open", &["obsidian://open?path=/b/id%C3%A9e.md"])
        );
    }

    #[test]
    fn reveals_per_platform() {
        let note = Path::new("/b/lore/a b.md");
        assert_eq!(
            reveal(note, Platform::MacOs),
            vec![launch("open", &["-R", "/b/lore/a b.md"])]
        );
        let linux = reveal(note, Platform::Freedesktop);
        assert_eq!(linux[0].program, "dbus-send");
        assert!(linux[0]
            .args
            .contains(&"array:string:file:///b/lore/a%20b.md".to_string()));
        assert_eq!(linux[1], launch("xdg-open", &["/b/lore"]));
    }

    #[test]
    fn opens_folders() {
        assert_eq!(
            open_folder(Path::new("/b"), Platform::MacOs),
            launch("open", &["/b"])
        );
        assert_eq!(
            open_folder(Path::new("/b"), Platform::Freedesktop),
            launch("xdg-open", &["/b"])
        );
    }
}
