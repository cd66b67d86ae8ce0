//! `brain install` and `brain uninstall`: put brain where Claude Code finds it, and take it
//! away again. An install writes the skill, creates the brain folder and an example config
//! when they are missing, optionally a login item for `brain serve`, and prints the line
//! that registers the MCP server. Running it twice changes nothing; `--dry-run` says what it
//! would do; `--check` reports without changing anything. Notes, index and config are never
//! removed.

mod autostart;
mod claude;
mod managed;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use brain::config::DEFAULT_TYPE_FOLDERS;
use brain::Config;

use super::args::{InstallArgs, UninstallArgs};
use autostart::{Autostart, ServeCommand};
use claude::Registration;
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
}

impl Setup {
    fn new(config: Config, dry_run: bool) -> Result<Setup> {
        let exe = std::env::current_exe().context("finding this binary")?;
        let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
        let on_path = claude::brain_on_path();
        let program = match &on_path {
            Some(found) if claude::is_this_binary(found, &exe) => claude::NAME.to_string(),
            _ => exe.to_string_lossy().into_owned(),
        };
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
pub fn run(config: Config, args: InstallArgs) -> Result<ExitCode> {
    let mut setup = Setup::new(config, args.dry_run)?;
    let mut out = io::stdout().lock();
    if args.check {
        check(&mut setup, &mut out, args.autostart)?;
    } else {
        // A brain path that is there but is not a folder is refused before anything is
        // written (exit 2, as every command does): the skill and config would point at it.
        if setup.config.root.exists() {
            brain::usage::check_root(&setup.config)?;
        }
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
        if !brain::embed::is_installed(&setup.config) {
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

fn install_skill(s: &mut Setup, out: &mut impl Write, force: bool) -> Result<()> {
    let path = s.skill.clone();
    let shown = path.display().to_string();
    let (outcome, note) = match s.record.state(&path, claude::SKILL)? {
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
        managed::write(&path, claude::SKILL)?;
        s.record.remember(&path, claude::SKILL);
    }
    line(out, "skill", &outcome, format!("{shown}{note}"))?;
    Ok(())
}

fn install_root(s: &mut Setup, out: &mut impl Write) -> Result<()> {
    let root = s.config.root.clone();
    // A folder made by hand (`mkdir ~/.brain`, an empty clone) gets the default types
    // like a missing one; a folder that holds anything else is the user's, left alone.
    if root.is_dir() && !holds_only_dotfiles(&root) {
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
        brain::desktop::first_run::create_brain(&root)
            .with_context(|| format!("creating {}", root.display()))?;
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

/// Whether `dir` holds nothing but hidden entries (`.git`, `.DS_Store`); an unreadable
/// folder counts as holding something, so it is never written into.
fn holds_only_dotfiles(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .map(|e| e.map(|e| e.file_name().to_string_lossy().starts_with('.')))
            .all(|hidden| hidden.unwrap_or(false))
    })
}

fn install_config(s: &mut Setup, out: &mut impl Write) -> Result<()> {
    let Some(path) = s.config_file.clone() else {
        return Ok(());
    };
    // The MCP server Claude Code starts, and the skill's commands, have no --dir and may
    // have no BRAIN_DIR or BRAIN_DATA_DIR: what this install was told must be in the file,
    // or they look for another brain (and another data dir, without the model).
    let (root, data_dir) = Config::unset_locations()?;
    let pins: Vec<(&str, &Path)> = [
        ("root", s.config.root.as_path(), root),
        ("data_dir", s.config.data_dir.as_path(), data_dir),
    ]
    .into_iter()
    .filter(|(_, ours, unset)| ours != unset)
    .map(|(key, ours, _)| (key, ours))
    .collect();
    // A TOML file holds text: a path that is not UTF-8 (possible on Linux, never on APFS)
    // would be pinned as another path, so it is left out and said.
    let (pins, unwritable): (Vec<_>, Vec<_>) =
        pins.into_iter().partition(|(_, p)| p.to_str().is_some());
    for (key, p) in &unwritable {
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
                p.display()
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
                     --dir, BRAIN_DIR or BRAIN_DATA_DIR",
                    set.join(" and "),
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
        managed::write(&path, &text)?;
    }
    let said = match pins.is_empty() {
        true => "every setting commented out".to_string(),
        false => format!(
            "{} set to this brain's, the rest commented out",
            pins.iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(" and ")
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

/// `key = "value"`, the value a TOML string.
fn setting(key: &str, value: &Path) -> String {
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
        managed::write(&a.path, &a.content)?;
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

fn report_mcp(s: &Setup, out: &mut impl Write) -> Result<()> {
    match claude::registration() {
        Registration::None => {
            line(
                out,
                "mcp",
                "to do",
                "register the MCP server with Claude Code, once:",
            )?;
            writeln!(
                out,
                "\n    {}\n",
                claude::mcp_add_line(&s.program, s.config_env.as_deref())
            )?;
        }
        Registration::User => line(
            out,
            "mcp",
            "registered",
            "with Claude Code, for every project",
        )?,
        Registration::Local(folder) => line(
            out,
            "mcp",
            "registered",
            format!("with Claude Code, for {folder} only"),
        )?,
    }
    Ok(())
}

/// Says so and returns true when Claude Code's settings run the read-log hook.
fn hook_ok(out: &mut impl Write) -> io::Result<bool> {
    let installed = claude::hook_installed();
    if installed {
        line(
            out,
            "hook",
            "ok",
            "Claude Code logs its reads of notes (brain stats)",
        )?;
    }
    Ok(installed)
}

/// The read-log hook: brain does not edit Claude Code's settings, so it prints the entry.
fn report_hook(s: &Setup, out: &mut impl Write) -> Result<()> {
    if hook_ok(out)? {
        return Ok(());
    }
    if let Some(why) = claude::settings_unreadable() {
        line(out, "hook", "unreadable", format!("{why}: fix it first"))?;
    }
    let settings = claude::hook_settings_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "~/.claude/settings.json".into());
    line(
        out,
        "hook",
        "to do",
        format!("so brain stats sees what Claude reads, merge into {settings}:"),
    )?;
    writeln!(out)?;
    for l in claude::hook_snippet(&s.program).lines() {
        writeln!(out, "    {l}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// `brain install --check`: what is there, what drifted; exit 1 when anything is missing
/// or drifted. The MCP registration and the model are reported, not required.
fn check(s: &mut Setup, out: &mut impl Write, want_autostart: bool) -> Result<()> {
    let skill = s.skill.display().to_string();
    match s.record.state(&s.skill, claude::SKILL)? {
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
    match std::fs::metadata(&s.config.root) {
        Ok(m) if m.is_dir() => line(out, "brain", "ok", &root)?,
        // Something else in its place: install refuses it too, so no promise to create it.
        Ok(_) => fail(
            s,
            out,
            "brain",
            "not a folder",
            format!("{root}: move it away, or point BRAIN_DIR (or root in the config) at your notes folder"),
        )?,
        Err(_) => fail(
            s,
            out,
            "brain",
            "missing",
            format!("{root}: 'brain install' creates it"),
        )?,
    }
    match &s.config_file {
        Some(p) if p.is_file() => line(out, "config", "ok", p.display().to_string())?,
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
    match claude::registration() {
        Registration::User => line(
            out,
            "mcp",
            "ok",
            "registered with Claude Code for every project",
        )?,
        Registration::Local(folder) => line(
            out,
            "mcp",
            "ok",
            format!("registered with Claude Code for {folder}"),
        )?,
        Registration::None => line(
            out,
            "mcp",
            "off",
            format!(
                "optional: {}",
                claude::mcp_add_line(&s.program, s.config_env.as_deref())
            ),
        )?,
    }
    if !hook_ok(out)? {
        match claude::settings_unreadable() {
            Some(why) => line(
                out,
                "hook",
                "unreadable",
                format!("{why}: fix it, then 'brain install' prints the Read hook"),
            )?,
            None => line(
                out,
                "hook",
                "off",
                "optional: 'brain install' prints the Read hook for Claude Code's settings",
            )?,
        }
    }
    if brain::embed::is_installed(&s.config) {
        line(out, "model", "ok", &s.config.model)?;
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
pub fn uninstall(config: Config, args: UninstallArgs) -> Result<ExitCode> {
    let mut s = Setup::new(config, args.dry_run)?;
    let mut out = io::stdout().lock();
    if args.dry_run {
        writeln!(out, "dry run: nothing will be changed")?;
    }
    let skill = s.skill.clone();
    remove(&mut s, &mut out, "skill", &skill, claude::SKILL, args.force)?;
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
    if claude::hook_installed() {
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
        line(&mut out, "config", "kept", p.display().to_string())?;
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

/// Removes a managed file unless someone edited it (and `force` is off). True if removed.
fn remove(
    s: &mut Setup,
    out: &mut impl Write,
    what: &str,
    path: &Path,
    shipped: &str,
    force: bool,
) -> Result<bool> {
    let shown = path.display().to_string();
    match s.record.state(path, shipped)? {
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
