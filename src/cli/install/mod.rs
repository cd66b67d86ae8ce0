//! `brain install` and `brain uninstall`: put brain where Claude Code finds it, and take it
//! away again. An install writes the skill, creates the brain folder and an example config
//! when they are missing, optionally a login item for `brain serve`, and prints the line
//! that registers the MCP server. Running it twice changes nothing; `--dry-run` says what it
//! would do; `--check` reports without changing anything. Notes, index and config are never
//! removed.

mod autostart;
mod claude;
mod managed;

pub(crate) use claude::shell_word;

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use brain::config::DEFAULT_TYPE_FOLDERS;
use brain::Config;

use super::args::{InstallArgs, UninstallArgs};
use autostart::{Autostart, ServeCommand};
use claude::{Hook, Registration};
use managed::{Record, State};

/// Everything an install touches, resolved once.
struct Setup {
    config: Config,
    exe: PathBuf,
    /// How Claude Code should launch this binary: `brain` when PATH finds this very binary.
    program: String,
    /// The `brain` PATH finds, if any.
    on_path: Option<PathBuf>,
    skill: PathBuf,
    config_file: Option<PathBuf>,
    /// `BRAIN_CONFIG` as this install had it (absolute): what the MCP server and the login
    /// item must be given, since neither starts with this shell's variables.
    config_env: Option<PathBuf>,
    autostart: Option<Autostart>,
    record: Record,
    /// Nothing is changed; lines say "would".
    dry_run: bool,
    /// Something was left undone (exit 1).
    failed: bool,
    /// Why the config file could not be used, when it could not (only `--check` and
    /// `uninstall` go on without it).
    config_error: Option<String>,
}

impl Setup {
    fn new(config: Config, config_error: Option<String>, dry_run: bool) -> Result<Setup> {
        let exe = std::env::current_exe().context("finding this binary")?;
        let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
        let on_path = claude::brain_on_path();
        let program = match &on_path {
            Some(found) if claude::is_this_binary(found, &exe) => claude::NAME.to_string(),
            _ => exe.to_string_lossy().into_owned(),
        };
        claude::check_claude_dir()?;
        let skill = claude::skill_path().context("no home folder to install the skill into")?;
        // As the settings resolved it (`~` expanded, absolute): the unit's working folder
        // and home are not this shell's to rely on.
        let data_dir_env = std::env::var_os("BRAIN_DATA_DIR")
            .filter(|v| !v.is_empty())
            .map(|_| config.data_dir.clone());
        let config_env = std::env::var_os("BRAIN_CONFIG")
            .filter(|v| !v.is_empty())
            .and_then(|_| brain::config::config_file_path())
            .map(|p| std::path::absolute(&p).unwrap_or(p));
        let autostart = autostart::for_this_os(&ServeCommand {
            exe: &exe,
            root: &config.root,
            data_dir_env: data_dir_env.as_deref(),
            config_env: config_env.as_deref(),
            log_dir: &config.log_dir(),
        });
        let record = Record::load(config.data_dir.join("install.json"));
        Ok(Setup {
            exe,
            program,
            on_path,
            skill,
            config_file: brain::config::config_file_path(),
            config_env,
            autostart,
            record,
            config,
            dry_run,
            failed: false,
            config_error,
        })
    }

    /// `would create` in a dry run, `created` otherwise.
    fn did(&self, would: &str, did: &str) -> String {
        if self.dry_run {
            format!("would {would}")
        } else {
            did.to_string()
        }
    }
}

/// One line of the report: `skill      installed     /path`.
fn line(
    out: &mut impl Write,
    what: &str,
    outcome: &str,
    detail: impl AsRef<str>,
) -> io::Result<()> {
    writeln!(out, "{what:<10} {outcome:<13} {}", detail.as_ref())
}

/// Runs `brain install` (or `brain install --check`).
pub fn run(config: Config, config_error: Option<String>, args: InstallArgs) -> Result<ExitCode> {
    let mut setup = Setup::new(config, config_error, args.dry_run)?;
    let mut out = crate::cli::UntilClosed::new(io::stdout().lock());
    if args.check {
        check(&mut setup, &mut out, args.autostart)?;
    } else {
        // A brain path that is there but is not a folder is refused before anything is
        // written (exit 2, as every command does): the skill and config would point at it.
        refuse_unusable_root(&setup.config.root)?;
        if args.dry_run {
            writeln!(out, "dry run: nothing will be changed")?;
        }
        // What was written is recorded even when a later step fails: a skill left out of
        // the record would read as "edited by you" to the next install, and be kept.
        let steps = (|| -> Result<()> {
            install_skill(&mut setup, &mut out, args.force)?;
            install_root(&mut setup, &mut out)?;
            install_config(&mut setup, &mut out)?;
            if args.autostart {
                install_autostart(&mut setup, &mut out, args.force)?;
            }
            Ok(())
        })();
        if let Err(e) = steps {
            if !setup.dry_run {
                let _ = setup.record.save();
            }
            return Err(e);
        }
        report_path(&setup, &mut out)?;
        if let Err(e) = brain::embed::check_model_name(&setup.config) {
            line(&mut out, "model", "unknown", e.to_string())?;
        } else if !brain::embed::is_installed(&setup.config) {
            line(
                &mut out,
                "model",
                "to do",
                "search by meaning needs the model, once: brain model fetch",
            )?;
        }
        report_mcp(&setup, &mut out)?;
        if let Some(c) = &setup.config_env {
            // The MCP line carries it; the skill's commands run in Claude Code's shell.
            line(
                &mut out,
                "env",
                "to do",
                format!(
                    "the skill's commands run with Claude Code's environment: export \
                     BRAIN_CONFIG={} in your shell profile",
                    claude::shell_word(&c.to_string_lossy())
                ),
            )?;
        }
        report_hook(&setup, &mut out)?;
        if !setup.dry_run {
            setup.record.save()?;
        }
    }
    Ok(if setup.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Refuses, before anything is written, a brain path that is there but is no folder, a
/// symlink to a folder that does not exist, or a path through a file: creating it would
/// fail halfway, after the skill was written (and a dry run promised it). A path that does
/// not exist at all is created.
fn refuse_unusable_root(root: &Path) -> Result<()> {
    let unusable = |reason: String| brain::Error::RootUnreadable {
        path: root.to_path_buf(),
        reason,
    };
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.is_symlink() && std::fs::metadata(root).is_err() => {
            let target = std::fs::read_link(root).unwrap_or_default();
            Err(unusable(format!(
                "it is a symlink to {}, which does not exist: create that folder, or point \
                 BRAIN_DIR (or --dir) at your notes",
                target.display()
            ))
            .into())
        }
        Ok(_) => Ok(brain::usage::check_root_at(root)?),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => Err(unusable(
            "a part of its path is a file, not a folder: pass --dir with a folder".into(),
        )
        .into()),
        Err(_) => Ok(()),
    }
}

fn install_skill(s: &mut Setup, out: &mut impl Write, force: bool) -> Result<()> {
    let path = s.skill.clone();
    let shown = path.display().to_string();
    let (outcome, note) =
        match s
            .record
            .state_among(&path, claude::SKILL, &claude::skills_shipped())?
        {
            State::Current => {
                s.record.remember(&path, claude::SKILL);
                ("up to date".to_string(), String::new())
            }
            State::Missing => (s.did("install", "installed"), String::new()),
            State::Outdated => (s.did("update", "updated"), " (an older brain's)".into()),
            State::Edited if force => (
                s.did("replace", "replaced"),
                " (your edits are gone: --force)".into(),
            ),
            State::Edited => {
                s.failed = true;
                line(
                    out,
                    "skill",
                    "kept",
                    format!(
                    "{shown}: edited since brain installed it; 'brain install --force' replaces it"
                ),
                )?;
                return Ok(());
            }
        };
    if !s.dry_run && outcome != "up to date" {
        managed::write_outside(&path, claude::SKILL, &s.config.root)?;
        s.record.remember(&path, claude::SKILL);
    }
    line(out, "skill", &outcome, format!("{shown}{note}"))?;
    Ok(())
}

fn install_root(s: &mut Setup, out: &mut impl Write) -> Result<()> {
    let root = s.config.root.clone();
    // A folder made by hand (`mkdir ~/.brain`, an empty clone), or one an install could
    // not finish (a full disk), gets the default types like a missing one; a folder that
    // holds anything else is the user's, left alone.
    if root.is_dir() && brain::kb::unfinished(&root).is_empty() {
        return Ok(line(out, "brain", "exists", root.display().to_string())?);
    }
    if root.exists() && !root.is_dir() {
        s.failed = true;
        return Ok(line(
            out,
            "brain",
            "not a folder",
            format!("{}: move it away or pass --dir", root.display()),
        )?);
    }
    if !s.dry_run {
        brain::kb::create_brain(&root).with_context(|| format!("creating {}", root.display()))?;
    }
    let folders: Vec<String> = DEFAULT_TYPE_FOLDERS
        .iter()
        .map(|f| format!("{f}/"))
        .collect();
    line(
        out,
        "brain",
        &s.did("create", "created"),
        format!(
            "{} with {} (each with its SCHEMA.md)",
            root.display(),
            folders.join(" ")
        ),
    )?;
    Ok(())
}

fn install_config(s: &mut Setup, out: &mut impl Write) -> Result<()> {
    let Some(path) = s.config_file.clone() else {
        return Ok(());
    };
    // The MCP server Claude Code starts, and the skill's commands, have no --dir and may
    // have no BRAIN_DIR, BRAIN_DATA_DIR or BRAIN_MODEL: what this install was told must be
    // in the file, or they look for another brain (and another data dir, without the
    // model), or embed with a model that is not installed.
    let pins = pins(&s.config)?;
    let pins: Vec<(&str, &OsStr)> = pins.iter().map(|(k, p)| (*k, p.as_os_str())).collect();
    // A TOML file holds text: a path that is not UTF-8 (possible on Linux, never on APFS)
    // would be pinned as another path, so it is left out and said.
    let (pins, unwritable): (Vec<_>, Vec<_>) =
        pins.into_iter().partition(|(_, p)| p.to_str().is_some());
    for (key, p) in &unwritable {
        // A model name came from an environment variable as a String: always UTF-8.
        let env = match *key {
            "root" => "BRAIN_DIR",
            _ => "BRAIN_DATA_DIR",
        };
        line(
            out,
            "config",
            "to do",
            format!(
                "{key} {} is not UTF-8, which a config file cannot hold: set {env} to it \
                 where brain runs, or rename the folder",
                Path::new(p).display()
            ),
        )?;
    }
    // A symlink counts, dangling too (a dotfiles checkout not there yet): never replaced.
    if path.symlink_metadata().is_ok() {
        line(out, "config", "exists", path.display().to_string())?;
        if !pins.is_empty() {
            let set: Vec<String> = pins.iter().map(|(k, v)| setting(k, v)).collect();
            line(
                out,
                "config",
                "to do",
                format!(
                    "set {} in {}: the MCP server and the skill's commands start without \
                     --dir, BRAIN_DIR, BRAIN_DATA_DIR or BRAIN_MODEL",
                    in_words(&set),
                    path.display()
                ),
            )?;
        }
        return Ok(());
    }
    let mut text = brain::config::EXAMPLE_CONFIG.to_string();
    for (key, value) in &pins {
        text = text
            .lines()
            .map(|l| match l.starts_with(&format!("# {key} = ")) {
                true => setting(key, value),
                false => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
    }
    if !s.dry_run {
        managed::write_outside(&path, &text, &s.config.root)?;
    }
    let said = match pins.is_empty() {
        true => "every setting commented out".to_string(),
        false => format!(
            "{} set to this brain's, the rest commented out",
            in_words(&pins.iter().map(|(k, _)| *k).collect::<Vec<_>>())
        ),
    };
    line(
        out,
        "config",
        &s.did("write", "wrote"),
        format!("{} ({said})", path.display()),
    )?;
    Ok(())
}

/// The settings (`root`, `data_dir`, `model`) the config file must name for a process
/// started without `--dir`, `BRAIN_DIR`, `BRAIN_DATA_DIR` or `BRAIN_MODEL` (the MCP server,
/// the skill's commands) to use this brain: those where this install's differ from what
/// such a process would use. A `BRAIN_MODEL` left out made the MCP server embed with the
/// default model, not installed: its searches by meaning failed, saying to fetch it.
fn pins(config: &Config) -> Result<Vec<(&'static str, OsString)>> {
    let (root, data_dir) = Config::unset_locations()?;
    let mut pins: Vec<(&'static str, OsString)> = [
        ("root", &config.root, root),
        ("data_dir", &config.data_dir, data_dir),
    ]
    .into_iter()
    .filter(|(_, ours, unset)| *ours != unset)
    .map(|(key, ours, _)| (key, ours.clone().into_os_string()))
    .collect();
    // From the variable, not `config.model`: a config this install could only read the
    // locations of (a broken file) has the default model there, which is no one's choice.
    let model = std::env::var("BRAIN_MODEL").ok().filter(|m| !m.is_empty());
    if let Some(model) = model.filter(|m| Config::unset_model().is_ok_and(|unset| *m != unset)) {
        pins.push(("model", model.into()));
    }
    Ok(pins)
}

/// `a`, `a and b`, `a, b and c`.
fn in_words(items: &[impl AsRef<str>]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => format!(
            "{} and {}",
            rest.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// `key = "value"`, the value a TOML string.
fn setting(key: &str, value: &OsStr) -> String {
    let value = toml::Value::String(value.to_string_lossy().into_owned());
    format!("{key} = {value}")
}

fn install_autostart(s: &mut Setup, out: &mut impl Write, force: bool) -> Result<()> {
    let Some(a) = s.autostart.clone() else {
        s.failed = true;
        line(
            out,
            "autostart",
            "unsupported",
            "login items exist for macOS (LaunchAgent) and Linux (systemd user unit)",
        )?;
        return Ok(());
    };
    let shown = a.path.display().to_string();
    let outcome = match s.record.state(&a.path, &a.content)? {
        State::Current => {
            s.record.remember(&a.path, &a.content);
            "up to date".to_string()
        }
        State::Missing => s.did("install", "installed"),
        State::Outdated => s.did("update", "updated"),
        State::Edited if force => s.did("replace", "replaced"),
        State::Edited => {
            s.failed = true;
            line(
                out,
                "autostart",
                "kept",
                format!("{shown}: edited since brain installed it; --force replaces it"),
            )?;
            return Ok(());
        }
    };
    if !s.dry_run && outcome != "up to date" {
        managed::write_outside(&a.path, &a.content, &s.config.root)?;
        s.record.remember(&a.path, &a.content);
    }
    line(out, "autostart", &outcome, &shown)?;
    if outcome != "up to date" {
        line(out, "", "", &a.next)?;
    }
    Ok(())
}

/// The skill runs `brain ...` through the shell: say so when the shell won't find this one.
fn report_path(s: &Setup, out: &mut impl Write) -> Result<()> {
    match &s.on_path {
        Some(found) if claude::is_this_binary(found, &s.exe) => {}
        Some(found) => line(out, "path", "other", format!("'brain' on PATH is {}, not this {}", found.display(), s.exe.display()))?,
        None => line(
            out,
            "path",
            "missing",
            format!("the skill runs 'brain', which is not on PATH: ln -s {} ~/.local/bin/brain (or any PATH folder)", claude::shell_word(&s.exe.to_string_lossy())),
        )?,
    }
    Ok(())
}

/// Why the registered `server` would not serve this brain as this install does: another
/// program, folder or config, or (when the config could be read) another model.
fn mcp_drift(s: &Setup, server: &claude::Server) -> Option<String> {
    server
        .drift(s.config_env.as_deref(), &s.config.root)
        .or_else(|| {
            s.config_error
                .is_none()
                .then(|| server.model_drift(&s.config.model))
                .flatten()
        })
        .or_else(|| server.data_dir_drift(&s.config.data_dir))
}

fn report_mcp(s: &Setup, out: &mut impl Write) -> Result<()> {
    let registration = claude::registration();
    let add = claude::mcp_add_line(&s.program, s.config_env.as_deref());
    if let Some(why) = registration
        .server()
        .and_then(|server| mcp_drift(s, server))
    {
        line(
            out,
            "mcp",
            "to do",
            format!("the registered server would not start this brain ({why}); register it again:"),
        )?;
        writeln!(
            out,
            "\n    {}\n    {add}\n",
            claude::mcp_remove_line(&registration)
        )?;
        return Ok(());
    }
    match registration {
        Registration::None => {
            line(
                out,
                "mcp",
                "to do",
                "register the MCP server with Claude Code, once:",
            )?;
            writeln!(out, "\n    {add}\n")?;
        }
        Registration::User(_) => line(
            out,
            "mcp",
            "registered",
            "with Claude Code, for every project",
        )?,
        Registration::Local(folder, _) => line(
            out,
            "mcp",
            "registered",
            format!("with Claude Code, for {folder} only"),
        )?,
    }
    Ok(())
}

/// Says how the read-log hook stands, on one line unless it is off; returns it.
fn report_hook_state(out: &mut impl Write, root: &Path) -> io::Result<Hook> {
    let hook = claude::hook(root);
    match &hook {
        Hook::On => line(
            out,
            "hook",
            "ok",
            "Claude Code logs its reads of notes (brain stats)",
        )?,
        Hook::Missing(program) => line(
            out,
            "hook",
            "broken",
            format!(
                "the Read hook runs {program}, which is not there: point it at this brain ({})",
                hook_settings_shown()
            ),
        )?,
        Hook::BadArgument(word) => line(
            out,
            "hook",
            "broken",
            format!(
                "the Read hook runs log-read with {word:?}, which it does not take (exit 2 after every Read): remove it ({})",
                hook_settings_shown()
            ),
        )?,
        Hook::OtherBrain(dir, exists) => line(
            out,
            "hook",
            "broken",
            format!(
                "the Read hook logs into {dir}, {}, not this brain ({}): fix its --dir or BRAIN_DIR ({})",
                if *exists { "another brain folder" } else { "which does not exist" },
                root.display(),
                hook_settings_shown()
            ),
        )?,
        Hook::Disabled => line(
            out,
            "hook",
            "disabled",
            format!(
                "{} sets disableAllHooks: no read is logged until it is false",
                hook_settings_shown()
            ),
        )?,
        Hook::Unreadable(why) => line(out, "hook", "unreadable", format!("{why}: fix it first"))?,
        Hook::Off => {}
    }
    Ok(hook)
}

fn hook_settings_shown() -> String {
    claude::hook_settings_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "~/.claude/settings.json".into())
}

/// The read-log hook: brain does not edit Claude Code's settings, so it prints the entry.
fn report_hook(s: &Setup, out: &mut impl Write) -> Result<()> {
    if !matches!(
        report_hook_state(out, &s.config.root)?,
        Hook::Off | Hook::Missing(_) | Hook::BadArgument(_) | Hook::OtherBrain(..)
    ) {
        return Ok(());
    }
    line(
        out,
        "hook",
        "to do",
        format!(
            "so brain stats sees what Claude reads, merge into {}:",
            hook_settings_shown()
        ),
    )?;
    writeln!(out)?;
    for l in claude::hook_snippet(&s.program).lines() {
        writeln!(out, "    {l}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// `brain install --check`: what is there, what drifted; exit 1 when anything is missing
/// or drifted. The MCP registration and the model are reported, not required, unless they
/// are wrong: a registration that would not start this brain, a model name brain does not know.
fn check(s: &mut Setup, out: &mut impl Write, want_autostart: bool) -> Result<()> {
    let skill = s.skill.display().to_string();
    match s
        .record
        .state_among(&s.skill, claude::SKILL, &claude::skills_shipped())?
    {
        State::Current => line(out, "skill", "ok", &skill)?,
        State::Missing => fail(
            s,
            out,
            "skill",
            "missing",
            format!("{skill}: run 'brain install'"),
        )?,
        State::Outdated => fail(
            s,
            out,
            "skill",
            "outdated",
            format!("{skill}: an older brain's; 'brain install' updates it"),
        )?,
        State::Edited => fail(
            s,
            out,
            "skill",
            "edited",
            format!(
                "{skill}: differs from what brain installed; 'brain install --force' replaces it"
            ),
        )?,
    }
    let root = s.config.root.display().to_string();
    let unusable = refuse_unusable_root(&s.config.root).err();
    let unfinished: Vec<String> = brain::kb::unfinished(&s.config.root)
        .iter()
        .map(|f| format!("{f}/"))
        .collect();
    match std::fs::metadata(&s.config.root) {
        // One made by hand, or an install that could not finish: install completes it.
        Ok(m) if m.is_dir() && !unfinished.is_empty() => fail(
            s,
            out,
            "brain",
            "incomplete",
            format!("{root}: lacks {}: 'brain install' makes them", unfinished.join(" ")),
        )?,
        Ok(m) if m.is_dir() => line(out, "brain", "ok", &root)?,
        // Something else in its place: install refuses it too, so no promise to create it.
        Ok(_) => fail(
            s,
            out,
            "brain",
            "not a folder",
            format!("{root}: move it away, or point BRAIN_DIR (or root in the config) at your notes folder"),
        )?,
        // A link to nowhere, a path through a file: install refuses those too.
        Err(_) if unusable.is_some() => fail(
            s,
            out,
            "brain",
            "unusable",
            unusable.map(|e| e.to_string()).unwrap_or_default(),
        )?,
        Err(_) => fail(
            s,
            out,
            "brain",
            "missing",
            format!("{root}: 'brain install' creates it"),
        )?,
    }
    let pins = match s.config_error {
        None => pins(&s.config)?,
        Some(_) => Vec::new(),
    };
    match &s.config_file {
        _ if s.config_error.is_some() => {
            let why = s.config_error.clone().unwrap_or_default();
            fail(
                s,
                out,
                "config",
                "broken",
                format!("{why} (every command but this one and uninstall refuses it)"),
            )?
        }
        Some(p) if p.is_file() && pins.is_empty() => {
            line(out, "config", "ok", p.display().to_string())?
        }
        Some(p) if p.is_file() => {}
        // No file, and this brain is not the default one: one row, below, says both.
        Some(_) if !pins.is_empty() => {}
        Some(p) => line(
            out,
            "config",
            "none",
            format!(
                "defaults apply ('brain install' writes an example to {})",
                p.display()
            ),
        )?,
        None => line(out, "config", "none", "defaults apply")?,
    }
    if !pins.is_empty() {
        let set: Vec<String> = pins.iter().map(|(k, v)| setting(k, v)).collect();
        let file = s.config_file.as_ref().map_or_else(
            || "the config file".to_string(),
            |p| p.display().to_string(),
        );
        let (state, what, fix) = match s.config_file.as_ref().is_some_and(|p| p.is_file()) {
            true => ("drifted", format!("{file} does not name this brain"), "set"),
            false => (
                "none",
                format!("no config file ({file}), and this brain is not the default one"),
                "'brain install' writes one that sets",
            ),
        };
        fail(
            s,
            out,
            "config",
            state,
            format!(
                "{what}: the MCP server and the skill's commands, started without --dir, \
                 BRAIN_DIR, BRAIN_DATA_DIR or BRAIN_MODEL, would use another; {fix} {}",
                in_words(&set)
            ),
        )?;
    }
    match s.autostart.clone() {
        None => line(out, "autostart", "n/a", "no login item on this OS")?,
        Some(a) => {
            let shown = a.path.display().to_string();
            match s.record.state(&a.path, &a.content)? {
                State::Current => line(out, "autostart", "ok", &shown)?,
                State::Missing if want_autostart => fail(s, out, "autostart", "missing", format!("{shown}: 'brain install --autostart'"))?,
                State::Missing => line(out, "autostart", "off", "optional: 'brain install --autostart' starts 'brain serve' at login")?,
                State::Outdated => fail(s, out, "autostart", "outdated", format!("{shown}: 'brain install --autostart' updates it"))?,
                State::Edited => fail(s, out, "autostart", "edited", format!("{shown}: differs from what brain installed; 'brain install --autostart --force' replaces it"))?,
            }
        }
    }
    match &s.on_path {
        Some(found) if claude::is_this_binary(found, &s.exe) => {
            line(out, "path", "ok", found.display().to_string())?
        }
        Some(found) => line(
            out,
            "path",
            "other",
            format!(
                "'brain' on PATH is {}, not this {}",
                found.display(),
                s.exe.display()
            ),
        )?,
        None => fail(
            s,
            out,
            "path",
            "missing",
            format!(
                "'brain' is not on PATH, and the skill runs it: ln -s {} ~/.local/bin/brain",
                s.exe.display()
            ),
        )?,
    }
    let registration = claude::registration();
    let add = claude::mcp_add_line(&s.program, s.config_env.as_deref());
    let drift = registration
        .server()
        .and_then(|server| mcp_drift(s, server));
    // Read once, and only when no registration was found in it.
    let unreadable = matches!(registration, Registration::None)
        .then(claude::settings_unreadable)
        .flatten();
    match (&registration, drift) {
        (Registration::None, _) if unreadable.is_some() => fail(
            s,
            out,
            "mcp",
            "unknown",
            format!(
                "{}, so whether brain is registered cannot be told: mend it (Claude Code's own file), then check again",
                unreadable.unwrap_or_default()
            ),
        )?,
        (_, Some(why)) => fail(
            s,
            out,
            "mcp",
            "drifted",
            format!(
                "the registered server would not start this brain ({why}): {}; {add}",
                claude::mcp_remove_line(&registration)
            ),
        )?,
        (Registration::User(server), None) => line(
            out,
            "mcp",
            "ok",
            format!(
                "registered with Claude Code for every project{}",
                claude::as_named(server)
            ),
        )?,
        (Registration::Local(folder, server), None) => line(
            out,
            "mcp",
            "ok",
            format!(
                "registered with Claude Code for {folder}{}",
                claude::as_named(server)
            ),
        )?,
        (Registration::None, None) => line(out, "mcp", "off", format!("optional: {add}"))?,
    }
    match report_hook_state(out, &s.config.root)? {
        Hook::Off => line(
            out,
            "hook",
            "off",
            "optional: 'brain install' prints the Read hook for Claude Code's settings",
        )?,
        Hook::On | Hook::Disabled => {}
        Hook::Missing(_) | Hook::BadArgument(_) | Hook::OtherBrain(..) | Hook::Unreadable(_) => {
            s.failed = true
        }
    }
    if let Err(e) = brain::embed::check_model_name(&s.config) {
        fail(s, out, "model", "unknown", e.to_string())?;
    } else if brain::embed::is_installed(&s.config) {
        let changed = s.config.models().changed_since_verified(&s.config.model);
        match changed.is_empty() {
            true => line(out, "model", "ok", &s.config.model)?,
            false => fail(
                s,
                out,
                "model",
                "changed",
                format!(
                    "{}: {} written to since last verified: run 'brain model verify'",
                    s.config.model,
                    changed.join(", ")
                ),
            )?,
        }
    } else if let changed @ [_, ..] = &s.config.models().changed_since_verified(&s.config.model)[..]
    {
        // Installed once, now a file of another size: damaged, not absent.
        fail(
            s,
            out,
            "model",
            "changed",
            format!(
                "{}: {} written to since last verified, and a file is missing or no longer its \
                 pinned size: run 'brain model verify', then 'brain model fetch' (or import)",
                s.config.model,
                changed.join(", ")
            ),
        )?;
    } else {
        line(
            out,
            "model",
            "off",
            format!(
                "{} not installed: keyword search only until 'brain model fetch'",
                s.config.model
            ),
        )?;
    }
    Ok(())
}

fn fail(
    s: &mut Setup,
    out: &mut impl Write,
    what: &str,
    outcome: &str,
    detail: String,
) -> io::Result<()> {
    s.failed = true;
    line(out, what, outcome, detail)
}

/// Runs `brain uninstall`: removes the skill and the login item (unless edited, without
/// `--force`), and says how to unregister the MCP server. Notes, index, models and config stay.
pub fn uninstall(
    config: Config,
    config_error: Option<String>,
    args: UninstallArgs,
) -> Result<ExitCode> {
    let mut s = Setup::new(config, config_error, args.dry_run)?;
    let mut out = crate::cli::UntilClosed::new(io::stdout().lock());
    if args.dry_run {
        writeln!(out, "dry run: nothing will be changed")?;
    }
    let skill = s.skill.clone();
    let before = claude::skills_shipped();
    remove(
        &mut s,
        &mut out,
        "skill",
        &skill,
        claude::SKILL,
        &before,
        args.force,
    )?;
    if !s.dry_run {
        // The skill's own folder, if that leaves it empty; never anything above it.
        if let Some(dir) = skill.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    if let Some(a) = s.autostart.clone() {
        if a.path.exists() {
            let removed = remove(
                &mut s,
                &mut out,
                "autostart",
                &a.path,
                &a.content,
                &[],
                args.force,
            )?;
            if removed {
                for leftover in a.leftovers.iter().filter(|p| p.symlink_metadata().is_ok()) {
                    if !s.dry_run {
                        std::fs::remove_file(leftover)
                            .with_context(|| format!("removing {}", leftover.display()))?;
                    }
                    line(
                        &mut out,
                        "",
                        &s.did("remove", "removed"),
                        leftover.display().to_string(),
                    )?;
                }
                line(
                    &mut out,
                    "",
                    "",
                    format!("if it is running, stop it: {}", a.stop),
                )?;
            }
        }
    }
    let registration = claude::registration();
    if registration != Registration::None {
        line(
            &mut out,
            "mcp",
            "to do",
            "Claude Code's settings are its own; unregister the server with:",
        )?;
        writeln!(out, "\n    {}\n", claude::mcp_remove_line(&registration))?;
    }
    if matches!(
        claude::hook(&s.config.root),
        Hook::On | Hook::Missing(_) | Hook::BadArgument(_) | Hook::OtherBrain(..) | Hook::Disabled
    ) {
        // Once brain is gone, Claude Code would run a missing program after every Read.
        line(
            &mut out,
            "hook",
            "to do",
            format!(
                "remove the PostToolUse entry that runs 'brain log-read' from {}",
                claude::hook_settings_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "Claude Code's settings.json".into())
            ),
        )?;
    }
    line(
        &mut out,
        "notes",
        "kept",
        s.config.root.display().to_string(),
    )?;
    line(
        &mut out,
        "index",
        "kept",
        format!("{} (index and models)", s.config.data_dir.display()),
    )?;
    if let Some(p) = s.config_file.as_ref().filter(|p| p.exists()) {
        let shown = match &s.config_error {
            // The error names the file.
            Some(why) => format!("{why} (fix it before brain runs again)"),
            None => p.display().to_string(),
        };
        line(&mut out, "config", "kept", shown)?;
    }
    if !s.dry_run {
        s.record.save()?;
    }
    Ok(if s.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Removes a managed file unless someone edited it (and `force` is off); `before` holds the
/// SHA-256 of what earlier brains shipped there. True if removed.
fn remove(
    s: &mut Setup,
    out: &mut impl Write,
    what: &str,
    path: &Path,
    shipped: &str,
    before: &[&str],
    force: bool,
) -> Result<bool> {
    let shown = path.display().to_string();
    match s.record.state_among(path, shipped, before)? {
        State::Missing => {
            line(out, what, "absent", &shown)?;
            Ok(false)
        }
        State::Edited if !force => {
            s.failed = true;
            line(out, what, "kept", format!("{shown}: edited since brain installed it; 'brain uninstall --force' removes it"))?;
            Ok(false)
        }
        _ => {
            if !s.dry_run {
                std::fs::remove_file(path).with_context(|| format!("removing {}", shown))?;
                s.record.forget(path);
            }
            line(out, what, &s.did("remove", "removed"), &shown)?;
            Ok(true)
        }
    }
}
