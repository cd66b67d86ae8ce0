//! Claude Code's side of the install: where skills live, whether the MCP server is
//! registered, and the line that registers it. Claude Code keeps its files in `~/.claude`
//! and `~/.claude.json`, or under `CLAUDE_CONFIG_DIR` when that is set.

use std::path::{Path, PathBuf};

/// The skill, as shipped in this binary.
pub const SKILL: &str = include_str!("../../../skill/SKILL.md");

/// The SHA-256 of every skill brain has shipped (`skill/shipped.sha256`, one per line,
/// `#` comments): an older copy is brain's own whichever data dir recorded it.
pub fn skills_shipped() -> Vec<&'static str> {
    include_str!("../../../skill/shipped.sha256")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The name the skill and the MCP server are registered under.
pub const NAME: &str = "brain";

/// Claude Code's folder (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn claude_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::home_dir().map(|h| h.join(".claude")),
    }
}

/// Refuses a `CLAUDE_CONFIG_DIR` that names something other than a folder (a file): every
/// path under it failed with the system's "Not a directory" and a path nobody wrote.
pub fn check_claude_dir() -> brain::Result<()> {
    match claude_dir().map(|d| (std::fs::metadata(&d), d)) {
        Some((Ok(m), dir)) if !m.is_dir() => Err(brain::Error::InvalidInput(format!(
            "CLAUDE_CONFIG_DIR names {}, which is not a folder: point it at Claude Code's folder, or unset it",
            dir.display()
        ))),
        _ => Ok(()),
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
    User(Server),
    /// For one project folder (`--scope local`).
    Local(String, Server),
    /// Nowhere that can be seen from here.
    None,
}

/// How Claude Code starts a registered server: what decides whether it starts this brain.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Server {
    /// The name it is registered under (`brain`, unless a person named it otherwise).
    pub name: String,
    /// The project folder of a registration for one project, which Claude Code starts it
    /// in (a relative folder it is given is read from there).
    pub project: Option<PathBuf>,
    /// The program (`command`); `None` for a server reached by URL.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// `BRAIN_CONFIG` from its `env`, if given.
    pub config: Option<String>,
    /// The brain folder it is given: `--dir X` among its arguments, else `BRAIN_DIR` from
    /// its `env` (the flag wins, as brain reads them).
    pub dir: Option<String>,
    /// `BRAIN_MODEL` from its `env`, if given.
    pub model: Option<String>,
    /// `BRAIN_DATA_DIR` from its `env`, if given.
    pub data_dir: Option<String>,
}

impl Server {
    fn from_json(name: &str, v: &serde_json::Value) -> Server {
        let args = v["args"].as_array().into_iter().flatten();
        Server {
            name: name.to_string(),
            project: None,
            command: v["command"].as_str().map(str::to_string),
            args: args
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect(),
            config: v["env"]["BRAIN_CONFIG"].as_str().map(str::to_string),
            dir: dir_argument(
                v["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str()),
            )
            .or_else(|| v["env"]["BRAIN_DIR"].as_str().map(str::to_string))
            .filter(|d| !d.is_empty()),
            model: v["env"]["BRAIN_MODEL"]
                .as_str()
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            data_dir: v["env"]["BRAIN_DATA_DIR"]
                .as_str()
                .filter(|d| !d.is_empty())
                .map(str::to_string),
        }
    }

    /// Why this server would keep its index and models in another data folder than `ours`
    /// (this install's), or `None`: a `BRAIN_DATA_DIR` in its `env` wins over the config
    /// file, and a server there searches another index, without this brain's model.
    pub fn data_dir_drift(&self, ours: &Path) -> Option<String> {
        let given = self.data_dir.as_ref()?;
        let Some(folder) = self.placed(given) else {
            return Some(relative("BRAIN_DATA_DIR", given));
        };
        (!same_folder(&folder, ours)).then(|| {
            format!(
                "it is given BRAIN_DATA_DIR={given}, not this brain's {}",
                ours.display()
            )
        })
    }

    /// Why this server would embed with another model than `ours` (this install's), or
    /// `None`: a `BRAIN_MODEL` in its `env` wins over the config file, and a server on
    /// another model searches by meaning with vectors this brain's index does not hold (or
    /// a model not installed).
    pub fn model_drift(&self, ours: &str) -> Option<String> {
        self.model
            .as_ref()
            .filter(|m| m.as_str() != ours)
            .map(|m| format!("it is given BRAIN_MODEL={m}, not this brain's {ours}"))
    }

    /// Where a folder it is given lies: as the shell reads `~/`, absolute, or under the
    /// project folder of a registration for one project; `None` for a relative folder
    /// given to a server of every project.
    fn placed(&self, given: &str) -> Option<PathBuf> {
        folder_of(given).or_else(|| self.project.as_ref().map(|p| p.join(given)))
    }

    /// Whether this server runs `brain mcp`: its program is named `brain` (or is this
    /// binary) and its arguments read as that command.
    fn runs_brain_mcp(&self) -> bool {
        let Some(command) = &self.command else {
            return false;
        };
        let named = Path::new(command).file_name().is_some_and(|n| n == NAME)
            || std::env::current_exe().is_ok_and(|me| is_this_binary(Path::new(command), &me));
        named && self.parses_as_mcp(command).is_ok()
    }

    /// `Ok` when `command` with these arguments is `brain mcp` as brain reads them; else
    /// what it is instead (another command, or the parser's refusal).
    fn parses_as_mcp(&self, command: &str) -> Result<(), String> {
        use clap::CommandFactory;
        let args = std::iter::once(command).chain(self.args.iter().map(String::as_str));
        // Without the variables an argument may come from (`BRAIN_LOG`,
        // `BRAIN_NO_DAEMON`): this shell's are not the server's, and a bad one here
        // called a sound registration drifted.
        let unset = |a: clap::Arg| a.env(Option::<&'static str>::None);
        let cli = crate::cli::args::Cli::command()
            .mut_args(unset)
            .mut_subcommand("mcp", |c| c.mut_args(unset));
        match cli.try_get_matches_from(args) {
            Ok(m) if m.subcommand_name() == Some("mcp") => Ok(()),
            Ok(_) => Err(format!(
                "it runs {command} {}, not 'brain mcp'",
                self.args.join(" ")
            )),
            Err(e) => {
                let said = e.to_string();
                let why = said
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ");
                Err(format!(
                    "'{command} {}' would not start: {why}",
                    self.args.join(" ")
                ))
            }
        }
    }

    /// Why this server would not start brain's MCP server with `config` (this install's
    /// `BRAIN_CONFIG`), or `None` when it would. A registration left by an older install
    /// (a binary since moved, a config since named) is found by name alone, and Claude
    /// Code would then start nothing, or another brain.
    pub fn drift(&self, config: Option<&Path>, root: &Path) -> Option<String> {
        let Some(command) = &self.command else {
            return Some("it is reached by URL, not started as 'brain mcp'".into());
        };
        // ('path' says whether this shell finds brain.)
        if !program_there(command) {
            return Some(format!("its program {command} is not there"));
        }
        // Read as brain reads them: `search mcp` (a search for "mcp"), `mcp extra` and
        // `mcp --tpo` (refused at start) all hold the word, and none starts the server.
        if let Err(why) = self.parses_as_mcp(command) {
            return Some(why);
        }
        // A folder given that is not this brain's; a relative one given to a server of
        // every project is each project's own folder, which is not this brain either.
        if let Some(dir) = &self.dir {
            let Some(folder) = self.placed(dir) else {
                return Some(relative("the brain folder", dir));
            };
            if !same_folder(&folder, root) {
                return Some(format!(
                    "it is given the brain folder {dir}, not this brain's {}{}",
                    root.display(),
                    if folder.is_dir() {
                        ""
                    } else {
                        ", and that folder does not exist"
                    }
                ));
            }
        }
        let want = config.map(|c| c.to_string_lossy().into_owned());
        match (&want, &self.config) {
            (Some(want), given) if given.as_ref() != Some(want) => Some(format!(
                "it is not given BRAIN_CONFIG={want}, so it reads another config"
            )),
            (None, Some(given)) => Some(format!(
                "it is given BRAIN_CONFIG={given}, a config this shell's brain does not read"
            )),
            _ => None,
        }
    }
}

impl Registration {
    /// How `claude mcp remove` names this scope.
    pub fn scope(&self) -> &str {
        match self {
            Registration::User(_) => "user",
            _ => "local",
        }
    }

    /// The registered server, if any.
    pub fn server(&self) -> Option<&Server> {
        match self {
            Registration::User(s) | Registration::Local(_, s) => Some(s),
            Registration::None => None,
        }
    }
}

/// Why Claude Code's settings file, which is there, cannot be read as JSON (`None` when
/// it reads, or is not there): then whether brain is registered is not known, which is not
/// "not registered".
pub fn settings_unreadable() -> Option<String> {
    let path = settings_path()?;
    let bytes = read_file(&path)?;
    let err = serde_json::from_slice::<serde_json::Value>(&bytes).err()?;
    Some(format!("{} is not JSON ({err})", path.display()))
}

/// Reads Claude Code's settings (read-only: they are Claude Code's to change).
pub fn registration() -> Registration {
    let Some(json) = settings_path()
        .and_then(|p| read_file(&p))
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Registration::None;
    };
    // Under brain's name first; else under any name a person gave it (`notes`): brain's
    // server all the same, and "not registered" would have it registered twice.
    let found = |servers: &serde_json::Value| -> Option<Server> {
        if let Some(server) = servers.get(NAME) {
            return Some(Server::from_json(NAME, server));
        }
        servers.as_object()?.iter().find_map(|(name, v)| {
            let server = Server::from_json(name, v);
            server.runs_brain_mcp().then_some(server)
        })
    };
    if let Some(server) = found(&json["mcpServers"]) {
        return Registration::User(server);
    }
    let projects = json["projects"].as_object().into_iter().flatten();
    for (folder, project) in projects {
        if let Some(mut server) = found(&project["mcpServers"]) {
            server.project = Some(PathBuf::from(folder));
            return Registration::Local(folder.clone(), server);
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

/// Why a relative folder given to a server of every project is drift.
fn relative(what: &str, given: &str) -> String {
    format!(
        "it is given {what} {given}, a relative path, which Claude Code reads from each project's folder: give an absolute one"
    )
}

/// ` (as NAME)` for a server registered under another name than brain's, else nothing.
pub fn as_named(server: &Server) -> String {
    match server.name.as_str() {
        "" | NAME => String::new(),
        other => format!(" (as {other})"),
    }
}

/// The command line that undoes [`mcp_add_line`]. A local registration belongs to its
/// project folder: `claude mcp remove` run anywhere else removes nothing.
pub fn mcp_remove_line(registration: &Registration) -> String {
    let name = registration
        .server()
        .map(|s| s.name.as_str())
        .filter(|n| !n.is_empty())
        .unwrap_or(NAME);
    let line = format!(
        "claude mcp remove --scope {} {}",
        registration.scope(),
        shell_word(name)
    );
    match registration {
        Registration::Local(folder, _) => format!("cd {} && {line}", shell_word(folder)),
        _ => line,
    }
}

/// The first `brain` on PATH.
pub fn brain_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(NAME))
        .find(|p| brain::desktop::cli_path::is_executable(p))
}

/// Whether the program a registration or a hook runs is there: a bare name is looked up on
/// Claude Code's PATH, which is not this shell's, so it counts as there; a path is read as
/// the shell reads `~/` and `$HOME/`.
fn program_there(program: &str) -> bool {
    if !program.contains('/') {
        return true;
    }
    match expand_home(program) {
        Some(path) => brain::desktop::cli_path::is_executable(&path),
        None => brain::desktop::cli_path::is_executable(Path::new(program)),
    }
}

/// Whether `found` (a `brain` on PATH) is this very binary.
pub fn is_this_binary(found: &Path, exe: &Path) -> bool {
    match (std::fs::canonicalize(found), std::fs::canonicalize(exe)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
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
/// read forever, a folder cannot be read). Claude Code's `~/.claude.json` keeps its
/// projects' history and grows to megabytes: the cap only stops a runaway read.
fn read_file(path: &std::path::Path) -> Option<Vec<u8>> {
    brain::file::read_file(path, 256 << 20).ok()
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

/// What Claude Code's settings say about the read-log hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hook {
    /// A Read hook runs `brain log-read`.
    On,
    /// No hook runs it.
    Off,
    /// One does, but its program is not there: Claude Code runs a missing program after
    /// every Read, and logs nothing.
    Missing(String),
    /// One does, but with an argument `log-read` does not take (the word): it exits 2 after
    /// every Read, and logs nothing.
    BadArgument(String),
    /// One does, but into another brain folder (`--dir X` or `BRAIN_DIR=X`): this brain's
    /// stats never see a read. The folder as written, and whether it exists.
    OtherBrain(String, bool),
    /// One does, but the settings turn every hook off (`disableAllHooks`).
    Disabled,
    /// The settings file is there but cannot be read as settings: why.
    Unreadable(String),
}

/// Reads the hook's state from Claude Code's user settings (read-only), for the brain
/// folder `root`.
pub fn hook(root: &Path) -> Hook {
    let Some(path) = hook_settings_path() else {
        return Hook::Off;
    };
    let json = match std::fs::metadata(&path) {
        Err(_) => return Hook::Off,
        Ok(m) if !m.is_file() => {
            return Hook::Unreadable(format!("{} is not a file", path.display()))
        }
        Ok(_) => match std::fs::read(&path) {
            Err(e) => return Hook::Unreadable(format!("{} cannot be read ({e})", path.display())),
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Err(e) => return Hook::Unreadable(format!("{} is not JSON ({e})", path.display())),
                Ok(json) => json,
            },
        },
    };
    let entries = json["hooks"]["PostToolUse"]
        .as_array()
        .into_iter()
        .flatten();
    let found: Vec<LogRead> = entries
        .filter(|e| matches_read(e["matcher"].as_str().unwrap_or("")))
        .flat_map(|e| e["hooks"].as_array().into_iter().flatten())
        .filter_map(|h| h["command"].as_str())
        .filter_map(log_read_program)
        .collect();
    // A path through a variable other than HOME cannot be read from here.
    let there = |p: &String| program_there(p) || (p.starts_with('$') && expand_home(p).is_none());
    let works = |f: &LogRead| there(&f.program) && f.bad.is_none();
    // Its folder: none named, one that is this brain, or one that cannot be placed from
    // here (relative to Claude's working folder, or through a variable) log into it.
    let ours = |f: &LogRead| match &f.dir {
        None => true,
        Some(dir) => match folder_of(dir) {
            None => true,
            Some(folder) => same_folder(&folder, root),
        },
    };
    match found.first() {
        None => Hook::Off,
        Some(_) if json["disableAllHooks"].as_bool() == Some(true) => Hook::Disabled,
        Some(_) if found.iter().any(|f| works(f) && ours(f)) => Hook::On,
        Some(_) if found.iter().any(works) => {
            let dir = found
                .iter()
                .filter(|f| works(f))
                .find_map(|f| f.dir.clone())
                .unwrap_or_default();
            let exists = folder_of(&dir).is_some_and(|f| f.is_dir());
            Hook::OtherBrain(dir, exists)
        }
        Some(first) if !found.iter().any(|f| there(&f.program)) => {
            Hook::Missing(first.program.clone())
        }
        Some(_) => Hook::BadArgument(found.iter().find_map(|f| f.bad.clone()).unwrap_or_default()),
    }
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

/// The program of a hook command that runs `brain log-read`, if it does: a program named
/// `brain` (any folder, quoted or not) whose first word after its options is `log-read`,
/// whatever comes after (`2>/dev/null`). What people put before it is read past: variables
/// (`BRAIN_DIR=x brain ...`), `env [-i] [-u NAME]`, `exec`, `command`, `nohup`, `nice [-n
/// N]`, `timeout [-k T] DURATION`, and `sh -c '...'` (or bash's, zsh's) holding the line;
/// and `--dir X` after it: the forms a person with another brain or config writes.
fn log_read_program(command: &str) -> Option<LogRead> {
    commands_of(command)
        .into_iter()
        .find_map(|words| log_read_in(&words, 0))
}

/// A hook command that runs `brain log-read`: its program, the brain folder it names
/// (`--dir X`, `BRAIN_DIR=X`), and the first word after `log-read` that it does not take
/// (it would exit 2 on every call).
struct LogRead {
    program: String,
    dir: Option<String>,
    bad: Option<String>,
}

/// The value of `--dir X` or `--dir=X` among a command's arguments.
fn dir_argument<'a>(args: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        if a == "--dir" {
            return args.next().map(str::to_string);
        }
        if let Some(dir) = a.strip_prefix("--dir=") {
            return Some(dir.to_string());
        }
    }
    None
}

/// A hook's `--dir` as a folder here: absolute, or from `~/` or `$HOME/`; `None` for one
/// that cannot be placed from here (relative, or through another variable).
fn folder_of(dir: &str) -> Option<PathBuf> {
    match expand_home(dir) {
        Some(home) => Some(home),
        None if Path::new(dir).is_absolute() => Some(PathBuf::from(dir)),
        None => None,
    }
}

/// Whether two paths name one folder (links resolved; as written when one is missing).
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The commands of a shell line (`a || b`, `a; b`), each as its words: split by words,
/// honouring quotes (a path may hold `;`), then, for separators written against a word
/// (`true;brain`), cut at every separator character.
fn commands_of(line: &str) -> Vec<Vec<String>> {
    let mut commands = by_words(line);
    commands.extend(line.split([';', '|', '&']).filter_map(shlex::split));
    commands
}

/// [`commands_of`] by shell words: separators that stand as words of their own, or end
/// one (`true; brain`). Nothing for a line shlex cannot read (a quote left open).
fn by_words(line: &str) -> Vec<Vec<String>> {
    let Some(words) = shlex::split(line) else {
        return Vec::new();
    };
    let (mut commands, mut current) = (Vec::new(), Vec::new());
    for word in words {
        match word.as_str() {
            ";" | "&&" | "||" | "|" | "&" => commands.push(std::mem::take(&mut current)),
            _ => match word.strip_suffix(';') {
                Some(last) => {
                    current.push(last.to_string());
                    commands.push(std::mem::take(&mut current));
                }
                None => current.push(word),
            },
        }
    }
    commands.push(current);
    commands
}

/// [`log_read_program`] for one command's `words`; `depth` bounds `sh -c` inside `sh -c`.
fn log_read_in(words: &[String], depth: u8) -> Option<LogRead> {
    let mut i = 0;
    let mut dir = None;
    loop {
        let w = words.get(i)?.as_str();
        let assignment = w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        match w {
            _ if assignment => {
                if let Some(value) = w.strip_prefix("BRAIN_DIR=") {
                    dir = Some(value.to_string());
                }
                i += 1;
            }
            "exec" | "command" | "nohup" => i += 1,
            "env" | "nice" | "timeout" => {
                i += 1;
                while let Some(option) = words.get(i).filter(|o| o.starts_with('-')) {
                    i += 1;
                    // Options that take the next word as their value.
                    if matches!(option.as_str(), "-u" | "-n" | "-s" | "-k" | "--unset") {
                        i += 1;
                    }
                }
                if w == "timeout" {
                    i += 1; // its duration
                }
            }
            "sh" | "bash" | "zsh" | "dash" if depth < 2 => {
                return match words.get(i + 1).map(String::as_str) {
                    Some("-c") => commands_of(words.get(i + 2)?)
                        .into_iter()
                        .find_map(|inner| log_read_in(&inner, depth + 1)),
                    _ => None,
                };
            }
            _ => break,
        }
    }
    let program = words.get(i)?.clone();
    let mut rest = words.iter().skip(i + 1);
    loop {
        match rest.next()?.as_str() {
            "log-read" => break,
            "--dir" => dir = Some(rest.next()?.clone()),
            w if w.starts_with("--dir=") => dir = w.strip_prefix("--dir=").map(String::from),
            _ => return None,
        }
    }
    // After it: `--dir` (clap takes it there too) and redirections; anything else is an
    // argument it refuses (`brain log-read --bogus` is exit 2, after every Read).
    let mut bad = None;
    while let Some(w) = rest.next() {
        match w.as_str() {
            "--dir" => dir = rest.next().cloned(),
            w if w.starts_with("--dir=") => dir = w.strip_prefix("--dir=").map(String::from),
            ">" | ">>" | "<" | "1>" | "2>" | "2>>" | "&>" => {
                rest.next();
            }
            w if w.contains(['<', '>']) => {}
            w => {
                bad = Some(w.to_string());
                break;
            }
        }
    }
    is_brain(&program).then_some(LogRead { program, dir, bad })
}

/// `program` with a leading `~/`, `$HOME/` or `${HOME}/` read as the shell that runs a
/// hook reads it; `None` when it starts with none of them.
fn expand_home(program: &str) -> Option<PathBuf> {
    let rest = ["~/", "$HOME/", "${HOME}/"]
        .iter()
        .find_map(|prefix| program.strip_prefix(prefix))?;
    dirs::home_dir().map(|h| h.join(rest))
}

#[cfg(test)]
fn runs_log_read(command: &str) -> bool {
    log_read_program(command).is_some()
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
    fn a_registration_that_would_not_start_this_brain_is_drift() {
        let me = std::env::current_exe().unwrap().display().to_string();
        let server = |command: Option<&str>, args: &[&str], config: Option<&str>| Server {
            name: NAME.to_string(),
            project: None,
            command: command.map(str::to_string),
            args: args.iter().map(|a| a.to_string()).collect(),
            config: config.map(str::to_string),
            dir: None,
            model: None,
            data_dir: None,
        };
        let root = Path::new("/nonexistent-brain");
        // Another data folder: another index, without this brain's model.
        let other = Server {
            data_dir: Some("/tmp/other-data".into()),
            ..server(Some(&me), &["mcp"], None)
        };
        assert!(other
            .data_dir_drift(Path::new("/tmp/this-data"))
            .unwrap()
            .contains("BRAIN_DATA_DIR=/tmp/other-data"));
        assert_eq!(other.data_dir_drift(Path::new("/tmp/other-data")), None);
        assert_eq!(server(Some(&me), &["mcp"], None).drift(None, root), None);
        let gone = server(Some("/nonexistent/old/brain"), &["mcp"], None).drift(None, root);
        assert!(gone.unwrap().contains("is not there"));
        let serve = server(Some(&me), &["serve"], None).drift(None, root);
        assert!(serve.unwrap().contains("not 'brain mcp'"));
        // Holding the word is not enough: read as brain reads its arguments.
        let search = server(Some(&me), &["search", "mcp"], None).drift(None, root);
        assert!(search.unwrap().contains("not 'brain mcp'"));
        for bad in [
            &["mcp", "extra"][..],
            &["mcp", "--tpo"],
            &["mcp", "--log-level", "bogus=="],
        ] {
            let why = server(Some(&me), bad, None).drift(None, root);
            assert!(
                why.as_deref()
                    .unwrap_or_default()
                    .contains("would not start"),
                "{bad:?}: {why:?}"
            );
        }
        assert_eq!(
            server(
                Some(&me),
                &["--dir", "/nonexistent-brain", "mcp", "--log-level", "info"],
                None
            )
            .drift(None, root),
            None
        );
        assert!(server(None, &[], None)
            .drift(None, root)
            .unwrap()
            .contains("URL"));
        let c = Path::new("/c/brain.toml");
        let other = server(Some(&me), &["mcp"], None).drift(Some(c), root);
        assert!(other.unwrap().contains("BRAIN_CONFIG=/c/brain.toml"));
        assert_eq!(
            server(Some(&me), &["mcp"], Some("/c/brain.toml")).drift(Some(c), root),
            None
        );
        let given = server(Some(&me), &["mcp"], Some("/c/brain.toml")).drift(None, root);
        assert!(given.unwrap().contains("does not read"));
        // Claude Code's PATH is its own: a bare name is not judged by this shell's.
        assert_eq!(
            server(Some("brain-not-here"), &["mcp"], None).drift(None, root),
            None
        );
        // A brain folder given, by flag or variable, must be this one.
        let home = tempfile::tempdir().unwrap();
        let given = |args: &[&str], env: serde_json::Value| {
            Server::from_json(
                NAME,
                &serde_json::json!({"command": me, "args": args, "env": env}),
            )
        };
        let here = home.path().display().to_string();
        for ok in [
            given(&["mcp", "--dir", &here], serde_json::json!({})),
            given(&[&format!("--dir={here}"), "mcp"], serde_json::json!({})),
            given(&["mcp"], serde_json::json!({"BRAIN_DIR": here})),
        ] {
            assert_eq!(ok.drift(None, home.path()), None, "{ok:?}");
        }
        // A relative folder is each project's own to a server of every project (it was
        // not judged); to one project's server it is under that project.
        let relative = given(&["mcp", "--dir", "notes"], serde_json::json!({}));
        let why = relative.drift(None, home.path()).unwrap_or_default();
        assert!(why.contains("notes, a relative path"), "{why}");
        let data = given(&["mcp"], serde_json::json!({"BRAIN_DATA_DIR": "data"}));
        let why = data.data_dir_drift(home.path()).unwrap_or_default();
        assert!(
            why.contains("BRAIN_DATA_DIR data, a relative path"),
            "{why}"
        );
        std::fs::create_dir(home.path().join("notes")).unwrap();
        let project = Server {
            project: Some(home.path().to_path_buf()),
            ..relative
        };
        assert_eq!(project.drift(None, &home.path().join("notes")), None);
        let other = given(&["mcp", "--dir", "/elsewhere/brain"], serde_json::json!({}));
        let why = other.drift(None, home.path()).unwrap();
        assert!(
            why.starts_with("it is given the brain folder /elsewhere/brain, not this brain's")
                && why.ends_with("and that folder does not exist"),
            "{why}"
        );
        let by_env = given(&["mcp"], serde_json::json!({"BRAIN_DIR": "/elsewhere"}));
        assert!(by_env.drift(None, home.path()).is_some());
        // A project's registration is removed from its folder.
        let local = Registration::Local("/home/me/my proj".into(), Server::default());
        assert_eq!(
            mcp_remove_line(&local),
            "cd '/home/me/my proj' && claude mcp remove --scope local brain"
        );
    }

    #[test]
    fn the_skill_shipped_now_is_listed_for_the_brains_after_it() {
        use sha2::{Digest, Sha256};
        let now = format!("{:x}", Sha256::digest(SKILL.as_bytes()));
        assert!(
            skills_shipped().contains(&now.as_str()),
            "append {now} to skill/shipped.sha256: a later brain must know this skill as its own"
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
            mcp_remove_line(&Registration::User(Server::default())),
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
            // Another brain or config, as a person writes it.
            "BRAIN_CONFIG=/x/c.toml brain log-read",
            "env BRAIN_DIR=/x brain log-read",
            "brain --dir '/my notes' log-read",
            "brain --dir=/x log-read",
            "exec brain log-read",
            "~/.cargo/bin/brain log-read",
            "\"$HOME/bin/brain\" log-read",
            "env -u BRAIN_DIR brain log-read",
            "timeout 5 brain log-read",
            "timeout -k 2 5 nice -n 10 brain log-read",
            "sh -c 'brain log-read 2>/dev/null || true'",
            "bash -c \"cd /tmp && brain log-read\"",
            "'/Users/me/a;b/brain' log-read",
            "true; brain log-read",
            "true;brain log-read",
        ] {
            assert!(runs_log_read(yes), "{yes:?}");
        }
        for no in [
            "echo not-log-read",
            "echo brain log-read",
            "/usr/bin/other-tool log-read",
            "brain log",
            "log-read",
            "brain search log-read",
            "env brain",
            "X=1 echo brain log-read",
            "sh -c 'echo brain log-read'",
            "sh brain log-read",
            "timeout brain log-read",
        ] {
            assert!(!runs_log_read(no), "{no:?}");
        }
        // This binary by its own path, under another name: the line install prints when
        // no `brain` is on PATH.
        let me = std::env::current_exe().unwrap();
        assert!(runs_log_read(&format!("'{}' log-read", me.display())));
        // What comes after log-read: --dir and redirections it takes; anything else it
        // refuses with exit 2, so that hook is said to be broken, naming the word.
        let bad = |line: &str| log_read_program(line).and_then(|f| f.bad);
        for fine in [
            "brain log-read",
            "brain log-read --dir /x",
            "brain log-read --dir=/x 2>/dev/null",
            "brain log-read > /dev/null 2>&1",
            "brain log-read 2>> /tmp/log || true",
        ] {
            assert_eq!(bad(fine), None, "{fine:?}");
        }
        assert_eq!(bad("brain log-read --bogus").as_deref(), Some("--bogus"));
        // The folder it logs into, wherever it is named.
        let dir = |line: &str| log_read_program(line).and_then(|f| f.dir);
        for (line, want) in [
            ("brain --dir /x log-read", Some("/x")),
            ("brain log-read --dir=/y 2>/dev/null", Some("/y")),
            ("BRAIN_DIR=~/notes brain log-read", Some("~/notes")),
            ("env BRAIN_DIR=/z brain log-read", Some("/z")),
            ("brain log-read", None),
        ] {
            assert_eq!(dir(line).as_deref(), want, "{line:?}");
        }
        assert_eq!(folder_of("relative/notes"), None);
        assert_eq!(folder_of("/abs"), Some(PathBuf::from("/abs")));
        assert_eq!(
            bad("brain log-read extra 2>/dev/null").as_deref(),
            Some("extra")
        );
    }
}
