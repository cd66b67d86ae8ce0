//! What the brain is used for: the read log (which notes were opened, and by whom), the
//! report `brain stats` prints over it and the recall log, and the bounds that keep both
//! logs small. The logs live in the index file, inside the data dir, and nowhere else.
//!
//! Reads are recorded by the commands that show a note to a person or to Claude (`brain
//! get`, the MCP `get` tool, and Claude Code's Read through `brain log-read`); maintenance
//! work (`brain check`, `brain similar --all`) reads files directly and is never counted.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::index::usage::{self, Window};
use crate::index::Index;

pub use crate::index::usage::{
    Dropped, NoteUsage, QueryCount, Totals, READ_SHARE, SURFACED_OFTEN, SURFACED_TOP,
};

/// The longest window `brain stats --days` and `--prune` accept (about 100 years).
pub const MAX_DAYS: u32 = 36_500;

/// Who opened a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// `brain get`.
    Cli,
    /// The MCP `get` tool.
    Mcp,
    /// Claude Code's Read tool, through the `brain log-read` hook.
    Hook,
    /// The app (opening a note from the panel).
    App,
}

impl Via {
    /// The name stored in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Cli => "cli",
            Via::Mcp => "mcp",
            Via::Hook => "hook",
            Via::App => "app",
        }
    }
}

/// `brain stats`: one window of the logs. `--json` prints this; the field names are a
/// contract with scripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// The window, in days back from now.
    pub days: u32,
    /// Its first day, `YYYY-MM-DD`.
    pub since: String,
    /// Totals, top and dead queries, notes surfaced and read.
    #[serde(flatten)]
    pub window: Window,
}

/// The usage logs of one brain.
pub struct Usage {
    index: Index,
    keep_days: u32,
}

impl Usage {
    /// Opens the logs of `config.root`'s index, creating the index when there is none yet.
    pub fn open(config: &Config) -> Result<Usage> {
        Ok(Usage {
            index: Index::open(&config.index_path())?,
            keep_days: config.log_keep_days,
        })
    }

    /// Opens the logs only when the index exists: a hook firing before the first `brain
    /// index` must not create one.
    pub fn open_existing(config: &Config) -> Result<Option<Usage>> {
        let path = config.index_path();
        if !path.is_file() {
            return Ok(None);
        }
        Usage::open(config).map(Some)
    }

    /// Records that the note at `rel_path` was opened by `via`. Now and then it also drops
    /// rows past `log_keep_days`, so the logs never grow without bound.
    pub fn record_read(&self, rel_path: &str, via: Via) -> Result<()> {
        let conn = self.index.conn()?;
        // A hook or a `get` must not wait long behind a big sync: the read is dropped.
        conn.busy_timeout(Duration::from_millis(250))
            .map_err(|e| self.index.err(e))?;
        // Only a note of the index is a read worth counting.
        let recorded = usage::record_read(&conn, crate::date::now_ms(), rel_path, via.as_str())
            .map_err(|e| self.index.err(e))?;
        if !recorded {
            return Ok(());
        }
        // The cap runs on this connection, under the same short wait: a hook must never
        // sit behind a long sync for the cap's sake.
        if conn.last_insert_rowid() % PRUNE_EVERY == 0 {
            let cutoff = crate::date::now_ms()
                - self.keep_days.clamp(1, MAX_DAYS) as i64 * crate::date::DAY_MS;
            usage::prune(&conn, cutoff).map_err(|e| self.index.err(e))?;
        }
        Ok(())
    }

    /// The window of the last `days` days.
    pub fn stats(&self, days: u32) -> Result<Stats> {
        check_days("--days", days)?;
        let since_ms = crate::date::now_ms() - days as i64 * crate::date::DAY_MS;
        let window =
            usage::window(&*self.index.conn()?, since_ms).map_err(|e| self.index.err(e))?;
        let since = crate::date::today()
            .checked_sub(jiff::Span::new().days(days as i64))
            .map(|d| d.to_string())
            .unwrap_or_default();
        Ok(Stats {
            days,
            since,
            window,
        })
    }

    /// Drops log rows older than `days` days.
    pub fn prune(&self, days: u32) -> Result<Dropped> {
        check_days("--prune", days)?;
        let cutoff = crate::date::now_ms() - days as i64 * crate::date::DAY_MS;
        self.index.write(|tx| usage::prune(tx, cutoff))
    }

    /// Empties both logs.
    pub fn reset(&self) -> Result<Dropped> {
        self.index.write(|tx| usage::prune(tx, i64::MAX))
    }

    /// Earlier searches, most recent first, each once, as the panel's box writes them
    /// (words, then `type:`, `tag:`, `since:`, `before:`).
    pub fn recent_queries(&self, limit: usize) -> Result<Vec<String>> {
        usage::recent_queries(&*self.index.conn()?, limit).map_err(|e| self.index.err(e))
    }
}

/// The cap is applied on one insert in this many (cheap: an indexed range delete).
const PRUNE_EVERY: i64 = 500;

/// After the log row `id` was written: on one row in [`PRUNE_EVERY`], drops rows older
/// than `keep_days`, so the logs never grow without bound.
pub(crate) fn now_and_then_cap(index: &Index, id: i64, keep_days: u32) -> Result<()> {
    if id % PRUNE_EVERY == 0 {
        let cutoff =
            crate::date::now_ms() - keep_days.clamp(1, MAX_DAYS) as i64 * crate::date::DAY_MS;
        index.write(|tx| usage::prune(tx, cutoff))?;
    }
    Ok(())
}

/// Whether `days` is a window `flag` (`--days`, `--prune`) accepts: 1 to [`MAX_DAYS`].
pub fn check_days(flag: &str, days: u32) -> Result<()> {
    if days == 0 || days > MAX_DAYS {
        return Err(Error::InvalidInput(format!(
            "{flag} must be between 1 and {MAX_DAYS} days, got {days}"
        )));
    }
    Ok(())
}

/// Refuses a brain folder that is missing or not a folder (exit 2), as every command does.
pub fn check_root(config: &Config) -> Result<()> {
    check_root_at(&config.root)
}

/// [`check_root`] for a folder given by its path.
pub fn check_root_at(root: &std::path::Path) -> Result<()> {
    crate::index::walk::check_root(root)
}

/// What a Claude Code hook payload says was read: the file of a `Read` tool call, as a
/// path relative to `root` when it is a note inside it. `None` for anything else (another
/// tool, another folder, a payload that is not JSON): the hook stays silent about those.
pub fn hook_read_path(payload: &[u8], config: &Config) -> Option<String> {
    #[derive(Deserialize)]
    struct Payload {
        tool_name: String,
        tool_input: Input,
        /// Claude Code's working folder, which a relative `file_path` is relative to.
        #[serde(default)]
        cwd: Option<String>,
        /// `PostToolUse` for a read that happened; a `PreToolUse` hook runs before it, and
        /// may be refused, so it is no read.
        #[serde(default)]
        hook_event_name: Option<String>,
    }
    #[derive(Deserialize)]
    struct Input {
        file_path: String,
    }
    let p: Payload = serde_json::from_slice(payload).ok()?;
    if p.tool_name != "Read" || p.hook_event_name.is_some_and(|e| e != "PostToolUse") {
        return None;
    }
    let named = std::path::Path::new(&p.tool_input.file_path);
    let named = match (named.is_relative(), &p.cwd) {
        (true, Some(cwd)) => std::path::Path::new(cwd).join(named),
        _ => named.to_path_buf(),
    };
    let file = std::fs::canonicalize(&named).ok()?;
    let root = std::fs::canonicalize(&config.root).ok()?;
    if file.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let rel = crate::index::walk::relative(&root, &file)?;
    (!crate::index::walk::is_kb_file(&rel)).then_some(rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_hook_payload_names_a_note_only_for_a_read_inside_the_brain() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brain");
        std::fs::create_dir_all(root.join("lore")).unwrap();
        std::fs::write(root.join("lore/x.md"), "# X\n").unwrap();
        std::fs::write(root.join("lore/x.txt"), "x").unwrap();
        std::fs::write(root.join("lore/SCHEMA.md"), "---\n---\n").unwrap();
        std::fs::write(dir.path().join("outside.md"), "# O\n").unwrap();
        let config = Config::for_root(&root, dir.path().join("data"));
        let payload = |tool: &str, path: &Path| {
            serde_json::json!({"session_id": "s", "hook_event_name": "PostToolUse",
                "tool_name": tool, "tool_input": {"file_path": path}, "tool_response": {}})
            .to_string()
        };
        let read = |p: String| hook_read_path(p.as_bytes(), &config);
        assert_eq!(
            read(payload("Read", &root.join("lore/x.md"))).as_deref(),
            Some("lore/x.md")
        );
        assert_eq!(
            read(payload("Read", &root.join("lore/../lore/x.md"))).as_deref(),
            Some("lore/x.md")
        );
        assert_eq!(read(payload("Edit", &root.join("lore/x.md"))), None);
        assert_eq!(read(payload("Read", &root.join("lore/x.txt"))), None);
        assert_eq!(read(payload("Read", &root.join("lore/SCHEMA.md"))), None);
        assert_eq!(read(payload("Read", &dir.path().join("outside.md"))), None);
        assert_eq!(read(payload("Read", &root.join("lore/gone.md"))), None);
        assert_eq!(read("not json".into()), None);
        assert_eq!(read(r#"{"tool_name":"Read"}"#.into()), None);
        assert_eq!(
            read(r#"{"tool_name":"Read","tool_input":{"file_path":7}}"#.into()),
            None
        );
        // A relative path is Claude Code's working folder's; a PreToolUse hook is no read.
        let relative = serde_json::json!({"hook_event_name": "PostToolUse", "cwd": root,
            "tool_name": "Read", "tool_input": {"file_path": "lore/x.md"}});
        assert_eq!(read(relative.to_string()).as_deref(), Some("lore/x.md"));
        let before = serde_json::json!({"hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": {"file_path": root.join("lore/x.md")}});
        assert_eq!(read(before.to_string()), None);
    }
}
