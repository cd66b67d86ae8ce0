//! First run: the choice of brain folder remembered in the config file (the folder itself
//! is made by [`crate::kb::create_brain`]).

use std::path::Path;

use crate::config::EXAMPLE_CONFIG;
use crate::error::{Error, Result};

/// Records `root` as the brain folder in `config_file`, keeping the rest of the file
/// (comments included). A file that does not exist yet starts as the commented example.
pub fn save_root(config_file: &Path, root: &Path) -> Result<()> {
    let text = match std::fs::read_to_string(config_file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => EXAMPLE_CONFIG.to_string(),
        Err(e) => return Err(Error::io(config_file, e)),
    };
    let root_str = root
        .to_str()
        .ok_or_else(|| Error::Config(format!("{}: not valid UTF-8", root.display())))?;
    let updated = with_root(&text, root_str);
    // Check the edit before writing it: a file the edit could not handle is left alone.
    let parsed: toml::Table = toml::from_str(&updated).map_err(|e| {
        Error::Config(format!(
            "{}: could not set root: {}",
            config_file.display(),
            e.message()
        ))
    })?;
    if parsed.get("root").and_then(|v| v.as_str()) != Some(root_str) {
        return Err(Error::Config(format!(
            "{}: could not set root; edit it by hand",
            config_file.display()
        )));
    }
    if let Some(dir) = config_file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    crate::file::replace(config_file, updated.as_bytes(), 0o666)
        .map_err(|e| Error::io(config_file, e))
}

/// `text` with its top-level `root = ...` line replaced, or a new one placed after the
/// commented-out example line (else first).
fn with_root(text: &str, root: &str) -> String {
    let line = format!("root = {}", toml::Value::String(root.to_string()));
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Only keys before the first table header belong to the top level.
    let top = lines
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .unwrap_or(lines.len());
    let is_key = |l: &str, key: &str| l.split_once('=').is_some_and(|(k, _)| k.trim() == key);
    if let Some(i) = lines[..top].iter().position(|l| is_key(l.as_str(), "root")) {
        lines[i] = line;
    } else if let Some(i) = lines[..top]
        .iter()
        .position(|l| is_key(l.trim_start().trim_start_matches('#'), "root"))
    {
        lines.insert(i + 1, line);
    } else {
        lines.insert(0, line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_example_with_root_set_when_there_is_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg/brain/config.toml");
        save_root(&file, Path::new("/home/me/My Notes")).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("# root = \"~/.brain\"\nroot = \"/home/me/My Notes\"\n"),
            "{text}"
        );
        assert!(text.contains("# [app]"), "the rest of the example is kept");
    }

    #[test]
    fn replaces_an_existing_root_and_leaves_tables_alone() {
        let text = "# mine\nroot = \"/old\"\nmodel = \"x\"\n\n[app]\nhotkey = \"Alt+B\"\n";
        assert_eq!(
            with_root(text, "/new"),
            "# mine\nroot = \"/new\"\nmodel = \"x\"\n\n[app]\nhotkey = \"Alt+B\"\n"
        );
        let tables_only = "[app]\nroot_like = 1\n";
        assert_eq!(
            with_root(tables_only, "/n"),
            "root = \"/n\"\n[app]\nroot_like = 1\n"
        );
    }

    #[test]
    fn quotes_are_escaped_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "model = \"m\"\n").unwrap();
        save_root(&file, Path::new("/tmp/a \"quoted\" \\ dir")).unwrap();
        let parsed: toml::Table = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(parsed["root"].as_str(), Some("/tmp/a \"quoted\" \\ dir"));
        assert_eq!(parsed["model"].as_str(), Some("m"));
    }

    #[test]
    fn refuses_to_write_over_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "model = \"unterminated\n").unwrap();
        assert!(matches!(
            save_root(&file, Path::new("/x")),
            Err(Error::Config(_))
        ));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "model = \"unterminated\n"
        );
    }
}
