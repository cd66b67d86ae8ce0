//! What the person typed: the command line, as clap parses it. Turning it into library
//! requests happens in the command modules.

use std::path::PathBuf;

use brain::search::Mode;
use clap::{Args, Parser, Subcommand};

/// Search a folder of markdown notes by keywords and meaning.
#[derive(Debug, Parser)]
#[command(
    name = "brain",
    version,
    about,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// The brain folder [default: $BRAIN_DIR, else root in the config file, else ~/.brain]
    #[arg(long, global = true, value_name = "PATH")]
    pub dir: Option<PathBuf>,

    /// Colour the output: auto (at a terminal, unless NO_COLOR is set), always or never.
    /// Given before the command (`brain --color never search ...`): after `search`,
    /// `--color` is a flag to search for (`grep --color=auto`), as any other is
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// When to colour the output (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// At a terminal, unless `NO_COLOR` is set or `TERM` is `dumb`.
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sync the index with the folder: add new notes, update changed ones, drop deleted ones.
    Index(IndexArgs),
    /// Search the notes.
    Search(SearchArgs),
    /// Show what is indexed, where, and how it was last synced.
    Status(StatusArgs),
    /// Print a note, or the lines around a hit, with line numbers.
    Get(GetArgs),
    /// Did I already write this? The notes most like a draft or a note, with a verdict each.
    Similar(SimilarArgs),
    /// Write a new entry of a type from its template: TYPE/slug.md, dates set.
    New(NewArgs),
    /// What is broken or stale: links, fields, slugs, dates, INDEX.md (exit 1 if anything).
    Check(CheckArgs),
    /// Each typed folder's INDEX.md from its entries: shows the diff; --write writes them.
    IndexMd(IndexMdArgs),
    /// A note's outgoing and incoming [[links]], broken ones marked.
    Links(LinksArgs),
    /// What the brain is used for: searches, reads, dead queries, notes surfaced but not read.
    Stats(StatsArgs),
    /// Claude Code hook: log a Read of a note under the brain (payload on stdin; silent).
    LogRead,
    /// Measure retrieval quality per mode on judged query sets (tldr, Cranfield, notes).
    Eval(EvalArgs),
    /// Install, check and try the local embedding models.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Run the warm backend: keep the index fresh and answer other brain commands fast.
    Serve(ServeArgs),
    /// Serve brain's read-only tools (search, get, similar, status, check, links) to an AI
    /// assistant over MCP (stdio).
    Mcp(McpArgs),
    /// Install the Claude Code skill, create the brain folder, print the MCP setup line.
    Install(InstallArgs),
    /// Remove what 'brain install' added; the notes, the index and the config stay.
    Uninstall(UninstallArgs),
    /// Print the shell completion script for brain (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
}

/// `brain completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell whose completion script to print.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `brain mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Log verbosity on stderr (off, error, warn, info, debug, trace, or a tracing filter);
    /// stdout carries the protocol and nothing else.
    #[arg(long, env = "BRAIN_LOG", default_value = "warn", value_name = "LEVEL", value_parser = log_level)]
    pub log_level: String,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Report what is installed and what drifted; change nothing (exit 1 if anything is
    /// missing or drifted).
    #[arg(long, conflicts_with_all = ["dry_run", "force"])]
    pub check: bool,

    /// Print what would be done; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Replace a skill (or autostart file) that was edited since brain installed it.
    #[arg(long)]
    pub force: bool,

    /// Also start 'brain serve' at login: a LaunchAgent on macOS, a systemd user unit on Linux.
    #[arg(long)]
    pub autostart: bool,
}

/// `brain uninstall`.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Print what would be removed; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Also remove a skill (or autostart file) that was edited since brain installed it.
    #[arg(long)]
    pub force: bool,
}

/// `brain get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// PATH (relative to the brain folder, or to the current folder inside it, or
    /// absolute), PATH:LINE (20 lines around it) or PATH:LINE:COUNT (COUNT lines from LINE).
    #[arg(value_name = "PATH[:LINE[:COUNT]]")]
    pub spec: String,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `brain new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The type: a folder with a SCHEMA.md (lore, idea, job, followup, research-link...).
    #[arg(value_name = "TYPE")]
    pub kind: String,

    /// The title; the file name is made from it.
    #[arg(required = true, num_args = 1.., value_name = "TITLE")]
    pub title: Vec<String>,

    /// Make a folder entry: TYPE/slug/slug.md.
    #[arg(long)]
    pub folder: bool,

    /// Write it even when the brain already has a duplicate of it.
    #[arg(long)]
    pub force: bool,

    /// Print JSON: {"path", "abs_path", "type", "title", "link", "written", "to_fill",
    /// "to_link"}; a refusal adds
    /// "duplicates": [{"path", "title", "reason"}].
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain index-md`.
#[derive(Debug, Args)]
pub struct IndexMdArgs {
    /// Write the files that changed (without it: print the diff, change nothing).
    #[arg(long)]
    pub write: bool,

    /// Print JSON: {"files": [{"path", "changed", "written"}]}; a row that failed has "error".
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain links`.
#[derive(Debug, Args)]
pub struct LinksArgs {
    /// The note: as a search prints it (lore/x.md, or lore/x.md:12), as a link names it
    /// (lore/x), absolute, or from the current folder.
    #[arg(value_name = "NOTE")]
    pub path: String,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The window: the last N days.
    #[arg(long, default_value_t = 30, value_name = "N", value_parser = days,
          allow_negative_numbers = true)]
    pub days: u32,

    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,

    /// Empty the search and read logs (asks first).
    #[arg(long, conflicts_with_all = ["prune", "days"])]
    pub reset: bool,

    /// With --reset: do not ask.
    #[arg(long, requires = "reset")]
    pub yes: bool,

    /// Drop log rows older than DAYS days.
    #[arg(long, value_name = "DAYS", conflicts_with = "days", value_parser = days,
          allow_negative_numbers = true)]
    pub prune: Option<u32>,
}

/// `brain eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Only this set (repeatable): tldr, cranfield-new, notes-mix, jaebradley-notes,
    /// notes-mix-hard, jaebradley-hard, til-mix, yutsuten-notes, cranfield, tldr-keyword, tldr-paraphrase
    /// [default: every set whose corpus is found].
    #[arg(long = "set", value_name = "NAME")]
    pub sets: Vec<String>,

    /// Only the queries of this half: tune (developed on) or test (held back).
    #[arg(long, value_parser = parse_half, value_name = "HALF")]
    pub half: Option<brain::eval::sets::Half>,

    /// Only the first N queries of each set.
    // `allow_hyphen_values`: `--limit -1` reaches the range check, not clap's "unexpected
    // argument '-1'".
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = eval_count)]
    pub limit: Option<usize>,

    /// Index only the judged notes plus about N others (a quick run, as the tests do).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = eval_count)]
    pub slice: Option<usize>,

    /// A folder holding corpora (tldr/, cranfield/, notes-mix/, ...), looked in first
    /// (repeatable) [then: $BRAIN_CORPORA, ../shared/corpora, ../corpora-dev].
    #[arg(long, value_name = "DIR")]
    pub corpora: Vec<PathBuf>,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,

    /// Include where each query's answer ranked in each mode.
    #[arg(long)]
    pub details: bool,

    /// Print, one JSON object per query, the notes in any mode's top N that are not
    /// judged yet (for pooled judging), instead of the table.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub pool: Option<usize>,

    /// Write each query's hybrid explanation (top 100 of each list) to FILE as JSON lines.
    #[arg(long, value_name = "FILE")]
    pub dump: Option<PathBuf>,
}

fn parse_half(s: &str) -> Result<brain::eval::sets::Half, String> {
    match s {
        "tune" => Ok(brain::eval::sets::Half::Tune),
        "test" => Ok(brain::eval::sets::Half::Test),
        other => Err(format!("unknown half {other:?} (expected tune or test)")),
    }
}

/// `brain model ...`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Known models: installed? verified? size, dims, device.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download a model from the hub at its pinned revision (resumes an interrupted fetch).
    Fetch {
        /// Model name [default: BRAIN_MODEL, else the configured model].
        name: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Install a model from a local folder in the hub's layout (offline).
    Import {
        /// Model name (see 'brain model list').
        name: String,
        /// Folder holding config.json, tokenizer.json, model.safetensors, ...
        // Not named `dir`: clap would read it as the global `--dir`, the brain folder.
        #[arg(value_name = "DIR")]
        from: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Re-hash an installed model's files against their pins.
    Verify {
        /// Model name [default: the configured model].
        name: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Embed a text and print the vector's size, norm and first values (debugging).
    Embed {
        /// The text.
        #[arg(required = true, num_args = 1.., value_name = "TEXT")]
        text: Vec<String>,
        /// Embed as a search query (query prefix) instead of a document.
        #[arg(long)]
        query: bool,
        /// Matryoshka dimension (nomic: 768, 512, 256, 128, 64).
        #[arg(long, value_name = "N")]
        dims: Option<usize>,
        /// Model name [default: the configured model].
        #[arg(long)]
        model: Option<String>,
        /// Print the whole vector as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Whether a command may ask the warm backend.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Do the work in this process even when a backend ('brain serve', the app) is running.
    #[arg(long, env = "BRAIN_NO_DAEMON", value_parser = no_daemon)]
    pub no_daemon: bool,
}

/// `brain index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Print the sync report as JSON.
    #[arg(long)]
    pub json: bool,

    /// Build the index again from the notes (for a damaged one): the old file is kept as
    /// brain.sqlite.bak (.bak.2, ... beside older ones), and its search log, read log and
    /// vectors are kept where readable.
    #[arg(long)]
    pub rebuild: bool,
}

/// `brain search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for: words, "an exact phrase", -exclude, prefix*.
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,

    /// How to rank: hybrid (keywords + meaning), bm25 (keywords) or semantic (meaning).
    #[arg(long, default_value = "hybrid", value_parser = ModeParser)]
    pub mode: Mode,

    /// Only notes of this type (frontmatter `type`, else the top-level folder).
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: Option<String>,

    /// Only notes with this tag.
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,

    /// Only notes dated on or after: 30d, 2w or YYYY-MM-DD (the note's `updated`, else
    /// `created`, else a date in its file name, else its file's modification day).
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub since: Option<String>,

    /// Only notes dated before: 30d, 2w or YYYY-MM-DD.
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub before: Option<String>,

    /// Only notes whose frontmatter FIELD is VALUE (or a list holding it); FIELD!=VALUE
    /// for the others. Repeatable: all must hold.
    #[arg(long = "where", value_name = "FIELD=VALUE")]
    pub conditions: Vec<String>,

    /// How many results (1 to 1000); `--limit` is the same.
    #[arg(long, visible_alias = "limit", default_value_t = brain::search::DEFAULT_TOP as i64,
          value_name = "N", allow_negative_numbers = true, value_parser = whole_number)]
    pub top: i64,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,

    /// Skip the quick sync with the folder before searching.
    #[arg(long)]
    pub no_sync: bool,

    /// Show how each list ranked the results and how they were fused.
    #[arg(long)]
    pub explain: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain similar`.
#[derive(Debug, Args)]
pub struct SimilarArgs {
    /// A note of the brain, a draft file, or - to read a draft from stdin.
    #[arg(value_name = "NOTE|DRAFT|-")]
    pub source: Option<String>,

    /// The draft's text.
    // A draft begins with `---` when it has frontmatter, or with `- ` when it is a list.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true, value_parser = draft_text)]
    pub text: Option<String>,

    /// Clusters of notes that duplicate each other, across the whole brain.
    #[arg(long)]
    pub all: bool,

    /// How many notes to show, at most 50 [default: 5]; with --all, how many clusters,
    /// largest first [default: all]. `--limit` is the same.
    #[arg(
        long,
        visible_alias = "limit",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = whole_number
    )]
    pub top: Option<i64>,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,

    /// Show the numbers behind each verdict.
    #[arg(long)]
    pub explain: bool,

    /// Skip the quick sync with the folder first.
    #[arg(long)]
    pub no_sync: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,

    /// Also read the whole index file for damage (SQLite's quick_check; seconds for a
    /// large brain): exit 1, naming --rebuild, if any.
    #[arg(long)]
    pub check: bool,

    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `brain serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Do not watch the folder; every search syncs first instead, as without a backend.
    #[arg(long)]
    pub no_watch: bool,

    /// Log verbosity (off, error, warn, info, debug, trace, or a tracing filter such as
    /// "brain=debug"); the log is serve.log in the data dir's logs folder.
    #[arg(long, env = "BRAIN_LOG", default_value = "info", value_name = "LEVEL", value_parser = log_level)]
    pub log_level: String,

    /// Close a client that takes longer than this to send a request or read an answer.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub client_timeout: f64,
}

/// `--top N` (or its alias `--limit N`, which clap does not tell apart here) checked
/// against `max`, as one line of bad input. The flag is read as a signed
/// number (`allow_negative_numbers`) so that `--top -1` reaches this check: clap would
/// otherwise take `-1` for an unknown option and suggest `-- -1`, which makes it a query word.
pub fn top(n: i64, max: usize) -> brain::Result<usize> {
    usize::try_from(n)
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| {
            brain::Error::InvalidInput(format!(
                "--top (or --limit) must be a whole number from 1 to {max}, got {n}"
            ))
        })
}

/// A window in days, 1 to [`brain::usage::MAX_DAYS`], said as such for any other number
/// (clap's own range would be 0 to 4294967295).
fn days(s: &str) -> Result<u32, String> {
    let max = brain::usage::MAX_DAYS;
    s.trim()
        .parse::<u64>()
        .ok()
        .filter(|d| (1..=u64::from(max)).contains(d))
        .map(|d| d as u32)
        .ok_or_else(|| format!("must be between 1 and {max} days (about 100 years)"))
}

/// `--top`'s value as a number, said in words when it is none (`1.5`, `abc`): the range
/// is checked by [`top`], which knows the command's most.
fn whole_number(s: &str) -> Result<i64, String> {
    let s = s.trim();
    s.parse::<i64>().map_err(|_| {
        // A whole number past i64's range is one still, only far too many.
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            true if s.starts_with('-') => "expected a whole number from 1 up".to_string(),
            true => "far past the most results allowed".to_string(),
            false => "expected a whole number (how many results)".to_string(),
        }
    })
}

/// `eval --limit` and `--slice`: a whole number from 1 to a million, said so for `-1` or
/// `2.5` (clap's own parser said "invalid digit found in string").
fn eval_count(s: &str) -> Result<usize, String> {
    let n: i64 = s
        .trim()
        .parse()
        .map_err(|_| "expected a whole number from 1 to 1000000".to_string())?;
    usize::try_from(n)
        .ok()
        .filter(|n| (1..=1_000_000).contains(n))
        .ok_or_else(|| format!("{n} is not a whole number from 1 to 1000000"))
}

/// `BRAIN_NO_DAEMON`'s value (`true` when the flag is given): empty is unset, as for every
/// BRAIN_ variable, and a bad one names the variable (clap's own line names only the flag).
fn no_daemon(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "off" | "n" | "f" => Ok(false),
        "1" | "true" | "yes" | "on" | "y" | "t" => Ok(true),
        // clap says the value and the flag before this.
        _ => Err("BRAIN_NO_DAEMON takes 1 or 0 (true/false, yes/no, on/off), or nothing".into()),
    }
}

/// A log level (`error` .. `trace`, `off`) or a tracing filter with a directive
/// (`brain=debug`, `warn,brain::service=trace`). A lone word that is no level (`debgu`)
/// would be read as a target name and silence every line: refused instead.
fn log_level(s: &str) -> Result<String, String> {
    const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    let word = s.trim();
    let lone = !word.contains(['=', ',', ':', '[']);
    // An empty BRAIN_LOG is unset, as for every BRAIN_ variable: the command's default.
    if lone && !word.is_empty() && !LEVELS.contains(&word.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "not a log level: give BRAIN_LOG (or the flag) one of {}, or a filter such as brain=debug",
            LEVELS.join(", ")
        ));
    }
    // Checked here, where clap names where the value came from: a filter tracing cannot
    // read (`nonsense==` from BRAIN_LOG) was an error naming only `--log-level`.
    if !word.is_empty() {
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(word) {
            return Err(format!(
                "not a log filter ({e}): give BRAIN_LOG (or the flag) one of {}, or a filter such as brain=debug",
                LEVELS.join(", ")
            ));
        }
    }
    Ok(s.to_string())
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

/// `--mode`'s parser: the library's names and their aliases (`keywords`, `meaning`), with
/// its own error; the three names are the values help and shell completion offer.
#[derive(Debug, Clone, Copy)]
struct ModeParser;

impl clap::builder::TypedValueParser for ModeParser {
    type Value = Mode;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Mode, clap::Error> {
        parse_mode.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = ["hybrid", "bm25", "semantic"];
        Some(Box::new(
            names.into_iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

/// Stands in for a leading `-` of a query word while clap parses, so `brain search flags
/// -legacy` reads `-legacy` as an exclusion and `brain search cargo test --release` reads
/// `--release` as a flag to search for, instead of unknown options.
pub const EXCLUDE_MARK: char = '\u{E000}';

/// The long options `brain search` itself takes (`--mode`, `--top`, ...; `--help`), each
/// with whether it takes the next token as its value.
/// `--text`'s parser: any text, a draft beginning with `-` included, but one option's name
/// alone (`--text --json`): the text was left out, and the option is not a draft.
fn draft_text(s: &str) -> Result<String, String> {
    let option = s.strip_prefix("--").is_some_and(|name| {
        name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
    });
    match option {
        true => Err(format!(
            "the draft's text is missing (it was followed by the option {s}): give it in \
             quotes, or read it from stdin with -"
        )),
        false => Ok(s.to_string()),
    }
}

/// brain's own options that take a value (`--dir`, `--color`), as given before a command.
fn options_taking_values() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_arguments()
        .filter(|a| a.get_action().takes_values())
        .flat_map(|a| {
            let longs = a
                .get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(|l| format!("--{l}"));
            let shorts = a.get_short().into_iter().map(|c| format!("-{c}"));
            longs.chain(shorts).collect::<Vec<_>>()
        })
        .collect()
}

fn search_options() -> Vec<(String, bool)> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let search = cli.find_subcommand("search");
    // Of brain's own options, only the global ones (`--dir`) may follow `search`.
    let mut options: Vec<(String, bool)> = cli
        .get_arguments()
        .filter(|a| a.is_global_set())
        .chain(search.into_iter().flat_map(|c| c.get_arguments()))
        .flat_map(|a| {
            let takes = a.get_action().takes_values();
            // An alias (`--limit` of `--top`) is as much an option as the name.
            let aliases = a.get_all_aliases().unwrap_or_default();
            a.get_long()
                .into_iter()
                .chain(aliases)
                .map(move |l| (format!("--{l}"), takes))
        })
        .collect();
    options.extend([("--help".into(), false), ("--version".into(), false)]);
    options
}

/// Rewrites `-word` and unknown `--word` tokens after the command `search` into
/// [`EXCLUDE_MARK`]`word` (see [`restore_query`]). Only `search` itself: a title, a
/// `--text` or a path that is the word `search` leaves the other commands' flags alone.
pub fn protect_excludes(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut in_search = false;
    // Before the command only brain's own options come: the first other word is the command.
    let mut command_seen = false;
    let mut after_global_value_option = false;
    let mut before_command: Option<Vec<String>> = None;
    let mut after_value_option = false;
    let mut after_double_dash = false;
    // A query word came: `-h` after one is a flag searched for (`ls -h`), not help.
    let mut query_started = false;
    let mut known: Option<Vec<(String, bool)>> = None;
    for arg in args {
        let rewritten = match arg.to_str() {
            Some(s) if in_search && !after_value_option && !after_double_dash => {
                let mut chars = s.chars();
                let short = chars.next() == Some('-')
                    && chars
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '"')
                    && (s != "-h" || query_started);
                let name = s.split('=').next().unwrap_or(s);
                let options = known.get_or_insert_with(search_options);
                // A near miss of one of search's own options (`--jsn`, `--nosync`) is a
                // typo, left for clap to refuse, not a word to search for.
                let long = s.starts_with("--")
                    && s[2..].starts_with(|c: char| c.is_alphanumeric())
                    && !options.iter().any(|(o, _)| o == name || mistyped(name, o));
                (short || long).then(|| format!("{EXCLUDE_MARK}{}", &s[1..]).into())
            }
            _ => None,
        };
        let s = arg.to_str().unwrap_or("");
        let after_value_option_before = after_value_option;
        after_value_option = in_search
            && rewritten.is_none()
            && !s.contains('=')
            && known
                .get_or_insert_with(search_options)
                .iter()
                .any(|(o, value)| *value && o == s);
        query_started |= in_search && !after_value_option_before && !s.starts_with('-');
        after_double_dash |= in_search && s == "--";
        if !command_seen && !out.is_empty() {
            if after_global_value_option || s.starts_with('-') {
                // `--dir PATH`, `--color never`: the value is the option's, not the command.
                after_global_value_option = !after_global_value_option
                    && !s.contains('=')
                    && before_command
                        .get_or_insert_with(options_taking_values)
                        .iter()
                        .any(|o| o == s);
            } else {
                command_seen = true;
                in_search = s == "search";
            }
        }
        out.push(rewritten.unwrap_or(arg));
    }
    out
}

/// Whether `given` (`--jsn`) is a typo of the option `known` (`--json`): one edit apart
/// (a swap of neighbours is one), two for names of seven letters or more. Closer than
/// that to a real flag a person searches for (`--release`, `--force`, `--dry-run`) none
/// of search's options comes.
fn mistyped(given: &str, known: &str) -> bool {
    let distance = strsim::osa_distance(given, known);
    distance == 1 || (distance == 2 && known.len() >= 2 + 7)
}

/// A line for a query holding `-n N` (as `head -n 5` takes it): searched for as words, as
/// every flag in a query is, when the person most likely meant how many results.
pub fn count_hint(query: &str) -> Option<String> {
    let words: Vec<&str> = query.split_whitespace().collect();
    words.windows(2).find_map(|w| match w {
        ["-n", n] if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => Some(format!(
            "note: \"-n {n}\" was searched for as words, as a flag in a query is; --top {n} \
             (or --limit {n}) sets how many results"
        )),
        _ => None,
    })
}

/// Joins the query words and turns [`EXCLUDE_MARK`] back into `-`.
pub fn restore_query(words: &[String]) -> String {
    words.join(" ").replace(EXCLUDE_MARK, "-")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The query and mode `brain ARGS` would search with.
    fn parsed(args: &[&str]) -> (String, Mode) {
        let argv = std::iter::once("brain")
            .chain(args.iter().copied())
            .map(std::ffi::OsString::from)
            .collect();
        match Cli::try_parse_from(protect_excludes(argv))
            .expect("parses")
            .command
        {
            Command::Search(s) => (restore_query(&s.query), s.mode),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn eval_counts_say_their_range_for_negative_and_fractional_values() {
        assert_eq!(eval_count("3"), Ok(3));
        assert_eq!(
            eval_count("-1"),
            Err("-1 is not a whole number from 1 to 1000000".into())
        );
        assert!(eval_count("2.5")
            .unwrap_err()
            .contains("expected a whole number"));
        let err = Cli::try_parse_from(["brain", "eval", "--limit", "-1"]).unwrap_err();
        assert!(
            err.to_string().contains("-1 is not a whole number from 1"),
            "{err}"
        );
    }

    #[test]
    fn top_is_a_whole_number_in_range_or_one_line_that_says_so() {
        let max = brain::search::MAX_TOP;
        for bad in [-1, 0, max as i64 + 1, i64::MIN] {
            let err = top(bad, max).unwrap_err();
            assert_eq!(err.exit_code(), 2);
            assert_eq!(
                err.to_string(),
                format!("--top (or --limit) must be a whole number from 1 to {max}, got {bad}")
            );
        }
        assert_eq!(top(7, max).unwrap(), 7);
        assert_eq!(
            whole_number("-99999999999999999999").unwrap_err(),
            "expected a whole number from 1 up"
        );
        assert_eq!(
            whole_number("99999999999999999999").unwrap_err(),
            "far past the most results allowed"
        );
        assert!(whole_number("2.5")
            .unwrap_err()
            .starts_with("expected a whole number"));
        // `-1` is the flag's value, not an unknown option.
        for args in [
            &["brain", "search", "x", "--top", "-1"][..],
            &["brain", "similar", "--top", "-1", "-"],
        ] {
            match Cli::try_parse_from(args).map(|c| c.command) {
                Ok(Command::Search(SearchArgs { top, .. })) => assert_eq!(top, -1),
                Ok(Command::Similar(SimilarArgs { top, .. })) => assert_eq!(top, Some(-1)),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_log_level_is_a_level_or_a_filter() {
        for ok in [
            "warn",
            "DEBUG",
            "off",
            "",
            "brain=debug",
            "warn,brain::service=trace",
        ] {
            assert!(log_level(ok).is_ok(), "{ok:?}");
        }
        for bad in ["debgu", "verbose", "2"] {
            assert!(
                log_level(bad).unwrap_err().contains("not a log level"),
                "{bad:?}"
            );
        }
        let bad = log_level("nonsense==").unwrap_err();
        assert!(
            bad.contains("not a log filter") && bad.contains("BRAIN_LOG"),
            "{bad}"
        );
    }

    #[test]
    fn flags_and_excludes_in_a_query_are_not_options() {
        assert_eq!(
            parsed(&["search", "cargo", "test", "--release", "--mode", "bm25"]),
            ("cargo test --release".into(), Mode::Bm25)
        );
        assert_eq!(parsed(&["search", "tar", "-xzf"]).0, "tar -xzf");
        // `-h` after a word of the query is one too (`ls -h`); before any, it is help.
        assert_eq!(parsed(&["search", "ls", "-h"]).0, "ls -h");
        assert_eq!(parsed(&["search", "--mode", "bm25", "du", "-h"]).0, "du -h");
        for help in [
            &["brain", "search", "-h"][..],
            &["brain", "search", "--mode", "bm25", "-h"],
        ] {
            let argv = help.iter().map(std::ffi::OsString::from).collect();
            let err = Cli::try_parse_from(protect_excludes(argv)).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{help:?}");
        }
        assert_eq!(parsed(&["search", "flags", "-legacy"]).0, "flags -legacy");
        assert_eq!(
            parsed(&["search", "--mode=semantic", "git", "--no-verify"]),
            ("git --no-verify".into(), Mode::Semantic)
        );
        assert_eq!(
            parsed(&["--dir", "/x", "search", "q", "--", "--mode"]).0,
            "q --mode"
        );
        // Flags a person searches for stay words; a typo of search's own is refused.
        for flag in [
            "--force",
            "--dry-run",
            "--release",
            "--all",
            "--verbose",
            "--tags-only",
        ] {
            assert_eq!(parsed(&["search", "git", flag]).0, format!("git {flag}"));
        }
        for typo in [
            "--jsn",
            "--josn",
            "--nosync",
            "--explian",
            "--no-deamon",
            "--mdoe",
        ] {
            let argv = ["brain", "search", "retry", typo].map(std::ffi::OsString::from);
            let err = Cli::try_parse_from(protect_excludes(argv.to_vec())).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::UnknownArgument,
                "{typo}"
            );
        }
    }

    #[test]
    fn only_the_search_command_has_its_flags_read_as_query_words() {
        let argv = |args: &[&str]| -> Vec<std::ffi::OsString> {
            std::iter::once("brain")
                .chain(args.iter().copied())
                .map(std::ffi::OsString::from)
                .collect()
        };
        // The word `search` as a title, a --text or a path leaves the flags after it alone.
        for args in [
            &["new", "idea", "search", "--folder"][..],
            &["similar", "--text", "search", "--all"],
            &["links", "search", "-x"],
            &["--dir", "search", "new", "idea", "--force", "t"],
        ] {
            assert_eq!(protect_excludes(argv(args)), argv(args), "{args:?}");
        }
        match Cli::try_parse_from(protect_excludes(argv(&[
            "new", "idea", "search", "--folder",
        ])))
        .map(|c| c.command)
        {
            Ok(Command::New(n)) => assert!(n.folder, "{n:?}"),
            other => panic!("{other:?}"),
        }
        // A brain folder named `search` is the option's value; the command comes after.
        assert_eq!(
            parsed(&["--dir", "search", "search", "tar", "-xzf"]).0,
            "tar -xzf"
        );
        assert_eq!(parsed(&["--dir=/x", "search", "ls", "-la"]).0, "ls -la");
        // `--color WHEN` takes its value before the command, as the README shows it.
        assert_eq!(
            parsed(&["--color", "never", "search", "tar", "-xzf", "--release"]).0,
            "tar -xzf --release"
        );
    }

    #[test]
    fn a_draft_given_with_text_may_begin_with_frontmatter_or_a_list() {
        for draft in [
            "---\ntitle: Retry storms\n---\n# Retry storms\n",
            "- a list item",
        ] {
            let argv = ["brain", "similar", "--text", draft].map(std::ffi::OsString::from);
            match Cli::try_parse_from(protect_excludes(argv.to_vec())).map(|c| c.command) {
                Ok(Command::Similar(s)) => assert_eq!(s.text.as_deref(), Some(draft)),
                other => panic!("{draft:?}: {other:?}"),
            }
        }
        // An option where the text should be is the text left out, not a draft.
        let argv = ["brain", "similar", "--text", "--json"].map(std::ffi::OsString::from);
        let err = Cli::try_parse_from(protect_excludes(argv.to_vec())).unwrap_err();
        assert!(
            err.to_string().contains("the draft's text is missing"),
            "{err}"
        );
    }

    #[test]
    fn a_count_typed_as_head_takes_it_gets_a_hint() {
        assert!(count_hint("retry -n 2").is_some_and(|h| h.contains("--top 2 (or --limit 2)")));
        for none in [
            "retry -n",
            "grep -n pattern",
            "retry n 2",
            "-n2",
            "retry -n -2",
        ] {
            assert_eq!(count_hint(none), None, "{none}");
        }
    }

    #[test]
    fn eval_help_names_every_set() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let eval = cli.find_subcommand("eval").expect("eval");
        let set = eval
            .get_arguments()
            .find(|a| a.get_id() == "sets")
            .expect("--set");
        let help = set.get_help().map(|h| h.to_string()).unwrap_or_default();
        for name in brain::eval::sets::names() {
            assert!(
                help.contains(name),
                "--set's help leaves out {name}: {help}"
            );
        }
    }

    #[test]
    fn limit_is_another_name_for_top_not_a_word_to_search() {
        for args in [
            &["search", "mac", "ports", "--limit", "3"][..],
            &["search", "mac", "--limit=3", "ports"],
            &["search", "--limit", "3", "mac", "ports"],
        ] {
            let argv = std::iter::once("brain")
                .chain(args.iter().copied())
                .map(std::ffi::OsString::from)
                .collect();
            match Cli::try_parse_from(protect_excludes(argv)).map(|c| c.command) {
                Ok(Command::Search(s)) => {
                    assert_eq!((restore_query(&s.query).as_str(), s.top), ("mac ports", 3))
                }
                other => panic!("{args:?}: {other:?}"),
            }
        }
        // Close to `--limit` now counts as a typo of it, as for the other options.
        let argv = ["brain", "search", "retry", "--limt", "3"].map(std::ffi::OsString::from);
        let err = Cli::try_parse_from(protect_excludes(argv.to_vec())).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        match Cli::try_parse_from(["brain", "similar", "--limit", "2", "-"]).map(|c| c.command) {
            Ok(Command::Similar(SimilarArgs { top, .. })) => assert_eq!(top, Some(2)),
            other => panic!("{other:?}"),
        }
    }
}
