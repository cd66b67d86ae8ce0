//! Claude Code's side of the install: where skills live, whether the MCP server is
//! registered, and the line that registers it. Claude Code keeps its files in `~/.claude`
//! and `~/.claude.json`, or under `CLAUDE_CONFIG_DIR` when that is set.

use std::path::{Path, PathBuf};

/// The skill, as shipped in this binary.
pub const SKILL: &str = include_str!("../../../skill/SKILL.md");

/// The name the skill and the MCP server are registered under.
pub const NAME: &str = "brain";

/// Claude Code's folder (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn claude_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::home_dir().map(|h| h.join(".claude")),
    }
}

/// Where the skill goes: `~/.claude/skills/brain/SKILL.md`.
pub fn skill_path() -> Option<PathBuf> {
    claude_dir().map(|d| d.join("skills").join(NAME).join("SKILL.md"))
}

/// Claude Code's settings file, which lists the MCP servers.
fn settings_path() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join(".claude.json")),
        None => dirs::home_dir().map(|h| h.join(".claude.json")),
    }
}

/// Where Claude Code has an MCP server called `brain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registration {
    /// For every project (`--scope user`).
    User,
    /// For one project folder (`--scope local`).
    Local(String),
    /// Nowhere that can be seen from here.
    None,
}

impl Registration {
    /// How `claude mcp remove` names this scope.
    pub fn scope(&self) -> &str {
        match self {
            Registration::User => "user",
            _ => "local",
        }
    }
}

/// Reads Claude Code's settings (read-only: they are Claude Code's to change).
pub fn registration() -> Registration {
    let Some(json) = settings_path()
        .and_then(|p| read_file(&p))
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Registration::None;
    };
    if json["mcpServers"].get(NAME).is_some() {
        return Registration::User;
    }
    let projects = json["projects"].as_object().into_iter().flatten();
    for (folder, project) in projects {
        if project["mcpServers"].get(NAME).is_some() {
            return Registration::Local(folder.clone());
        }
    }
    Registration::None
}

/// The command line that registers `brain mcp` with Claude Code for every project: a brain
/// is personal, not per project. `program` is `brain` when that finds this binary on PATH,
/// else this binary's absolute path.
///
/// With `config` (the install's `BRAIN_CONFIG`), the server is given it too: Claude Code
/// starts it without this shell's variables, and the default config may name another
/// brain. `-e` comes after the name: its values run on to the `--`.
pub fn mcp_add_line(program: &str, config: Option<&Path>) -> String {
    let env = config
        .map(|c| {
            format!(
                " -e {}",
                shell_word(&format!("BRAIN_CONFIG={}", c.to_string_lossy()))
            )
        })
        .unwrap_or_default();
    format!(
        "claude mcp add --scope user {NAME}{env} -- {} mcp",
        shell_word(program)
    )
}

/// The command line that undoes [`mcp_add_line`].
pub fn mcp_remove_line(registration: &Registration) -> String {
    format!("claude mcp remove --scope {} {NAME}", registration.scope())
}

/// The first `brain` on PATH.
pub fn brain_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(NAME))
        .find(|p| is_executable(p))
}

/// Whether `found` (a `brain` on PATH) is this very binary.
pub fn is_this_binary(found: &Path, exe: &Path) -> bool {
    match (std::fs::canonicalize(found), std::fs::canonicalize(exe)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%=,".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The bytes of a regular file at `path`; `None` for anything else (a FIFO would block the
/// read forever, a folder cannot be read).
fn read_file(path: &std::path::Path) -> Option<Vec<u8>> {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| std::fs::read(path).ok())
}

/// Claude Code's user settings, where hooks are configured (`~/.claude/settings.json`).
pub fn hook_settings_path() -> Option<PathBuf> {
    claude_dir().map(|d| d.join("settings.json"))
}

/// The `hooks` entry that makes Claude Code log every Read through `brain log-read`, for
/// the person to merge into their settings: brain does not edit Claude Code's files.
pub fn hook_snippet(program: &str) -> String {
    let snippet = serde_json::json!({
        "hooks": {
            "PostToolUse": [{
                "matcher": "Read",
                "hooks": [{"type": "command", "command": format!("{} log-read", shell_word(program))}]
            }]
        }
    });
    serde_json::to_string_pretty(&snippet).unwrap_or_default()
}

/// Why Claude Code's settings file, when there is one, is not JSON: no hook in it can run,
/// which "not installed" alone would hide.
pub fn settings_unreadable() -> Option<String> {
    let path = hook_settings_path()?;
    let bytes = read_file(&path)?;
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .err()
        .map(|e| format!("{} is not JSON ({e})", path.display()))
}

/// Whether Claude Code's settings run `log-read` after its Read tool.
pub fn hook_installed() -> bool {
    let Some(json) = hook_settings_path()
        .and_then(|p| read_file(&p))
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return false;
    };
    let entries = json["hooks"]["PostToolUse"]
        .as_array()
        .into_iter()
        .flatten();
    entries
        .filter(|e| matches_read(e["matcher"].as_str().unwrap_or("")))
        .flat_map(|e| e["hooks"].as_array().into_iter().flatten())
        .filter_map(|h| h["command"].as_str())
        .any(runs_log_read)
}

/// Whether a hook matcher selects the Read tool: empty and `*` select every tool; anything
/// else is a regex over the whole tool name (`Read`, `Read|Edit`, `.*`).
fn matches_read(matcher: &str) -> bool {
    let matcher = matcher.trim();
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    regex::Regex::new(&format!("^(?:{matcher})$")).is_ok_and(|r| r.is_match("Read"))
}

/// Whether a hook's command runs `brain log-read`: a program named `brain` (any folder,
/// quoted or not) followed by the word `log-read`, whatever comes after (`2>/dev/null`).
fn runs_log_read(command: &str) -> bool {
    // Each command of the line (`a || b`, `a; b`) by its program, the first shell word: a
    // quoted one may hold spaces ('/Users/me/My Apps/brain'); `echo brain log-read` runs
    // echo.
    command
        .split([';', '|', '&'])
        .map(str::trim_start)
        .any(|segment| {
            let (program, rest) = match segment.chars().next() {
                Some(q @ ('\'' | '"')) => match segment[1..].find(q) {
                    Some(end) => (&segment[1..=end], &segment[end + 2..]),
                    None => return false,
                },
                _ => segment.split_at(segment.find(char::is_whitespace).unwrap_or(segment.len())),
            };
            rest.split_whitespace().next() == Some("log-read") && is_brain(program)
        })
}

/// Whether `program` runs brain: a program named `brain`, or this very binary by its path
/// (what install prints for the hook when no `brain` is on PATH).
fn is_brain(program: &str) -> bool {
    let path = std::path::Path::new(program);
    if path.file_name().is_some_and(|n| n == "brain") {
        return true;
    }
    let real = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    path.is_absolute()
        && real(path)
            .is_some_and(|p| std::env::current_exe().ok().and_then(|e| real(&e)) == Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_has_frontmatter_with_name_and_description() {
        let rest = SKILL.strip_prefix("---\n").expect("frontmatter first");
        let (front, _) = rest.split_once("\n---\n").expect("frontmatter closed");
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).unwrap();
        assert_eq!(yaml["name"].as_str(), Some(NAME));
        let description = yaml["description"].as_str().unwrap();
        assert!(
            description.len() > 80 && description.len() <= 1024,
            "{description}"
        );
    }

    #[test]
    fn command_lines_quote_odd_paths() {
        assert_eq!(
            mcp_add_line("brain", None),
            "claude mcp add --scope user brain -- brain mcp"
        );
        assert_eq!(
            mcp_add_line("/Users/me/My Apps/brain", None),
            "claude mcp add --scope user brain -- '/Users/me/My Apps/brain' mcp"
        );
        assert_eq!(
            mcp_add_line("brain", Some(Path::new("/c/my brain.toml"))),
            "claude mcp add --scope user brain -e 'BRAIN_CONFIG=/c/my brain.toml' -- brain mcp"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(
            mcp_remove_line(&Registration::User),
            "claude mcp remove --scope user brain"
        );
        let hook: serde_json::Value =
            serde_json::from_str(&hook_snippet("/Users/me/My Apps/brain")).unwrap();
        let command = hook["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert_eq!(command, "'/Users/me/My Apps/brain' log-read");
        assert!(runs_log_read(command));
    }

    #[test]
    fn the_hook_check_reads_matchers_as_regexes_and_wants_brain_log_read() {
        for yes in ["Read", "", "*", ".*", "Read.*", "Edit|Read", " Read "] {
            assert!(matches_read(yes), "{yes:?}");
        }
        for no in ["Edit", "Reader", "read", "Write|Edit", "("] {
            assert!(!matches_read(no), "{no:?}");
        }
        for yes in [
            "brain log-read",
            "/opt/bin/brain log-read 2>/dev/null || true",
            "\"/Applications/Brain.app/Contents/MacOS/brain\" log-read",
            "'/Users/me/My Apps/brain' log-read",
            "true && brain log-read",
        ] {
            assert!(runs_log_read(yes), "{yes:?}");
        }
        for no in [
            "echo not-log-read",
            "echo brain log-read",
            "/usr/bin/other-tool log-read",
            "brain log",
            "log-read",
        ] {
            assert!(!runs_log_read(no), "{no:?}");
        }
        // This binary by its own path, under another name: the line install prints when
        // no `brain` is on PATH.
        let me = std::env::current_exe().unwrap();
        assert!(runs_log_read(&format!("'{}' log-read", me.display())));
    }
}
