//! `brain install`, `--check`, `--dry-run`, `--force`, `--autostart` and `brain uninstall`,
//! each in a temp HOME (the test brain's), never the real one.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::harness::{describe, repo, walk, Brain, Run, TEST_MODEL};

fn shipped_skill() -> String {
    std::fs::read_to_string(repo().join("skill/SKILL.md")).unwrap()
}

/// A temp brain whose folder does not exist yet.
fn fresh() -> Brain {
    let b = Brain::new();
    std::fs::remove_dir(&b.root).unwrap();
    b
}

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_brain"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `brain ARGS` with this brain's environment and this binary first on PATH.
fn brain(b: &Brain, args: &[&str]) -> Run {
    brain_with_config(b, None, args)
}

/// [`brain`], with `BRAIN_CONFIG` naming `config` when given.
fn brain_with_config(b: &Brain, config: Option<&Path>, args: &[&str]) -> Run {
    let mut cmd: Command = b.command();
    let path = std::env::join_paths([bin_dir(), PathBuf::from("/usr/bin"), PathBuf::from("/bin")])
        .unwrap();
    cmd.env("PATH", path).args(args);
    if let Some(c) = config {
        cmd.env("BRAIN_CONFIG", c);
    }
    Run(cmd.output().unwrap())
}

fn skill(b: &Brain) -> PathBuf {
    b.home.join(".claude/skills/brain/SKILL.md")
}

fn unit(b: &Brain) -> PathBuf {
    b.home.join(".config/systemd/user/brain.service")
}

/// The report's row for `what` (`skill`, `brain`, ...) with its spacing collapsed:
/// `ok /home/x/.claude/skills/brain/SKILL.md`.
fn row(out: &str, what: &str) -> String {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(what))
        .unwrap_or_else(|| panic!("no {what} row in:\n{out}"));
    line.split_whitespace()
        .skip(1)
        .collect::<Vec<_>>()
        .join(" ")
}

fn ok(r: Run) -> String {
    assert_eq!(
        r.code(),
        0,
        "stdout:\n{}\nstderr:\n{}",
        r.stdout(),
        r.stderr()
    );
    r.stdout()
}

fn failed(r: Run) -> String {
    assert_eq!(
        r.code(),
        1,
        "stdout:\n{}\nstderr:\n{}",
        r.stdout(),
        r.stderr()
    );
    r.stdout()
}

/// A config named by BRAIN_CONFIG is what the MCP server must read too: its line carries
/// it, and the skill's commands are said to need it in the shell.
#[test]
fn a_config_named_by_brain_config_reaches_the_mcp_line() {
    let b = fresh();
    let config = b.path("cfg/my brain.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "").unwrap();
    let out = ok(brain_with_config(&b, Some(&config), &["install"]));
    let shown = format!("'BRAIN_CONFIG={}'", config.display());
    assert!(
        out.contains(&format!(
            "claude mcp add --scope user brain -e {shown} -- brain mcp"
        )),
        "{out}"
    );
    assert!(
        row(&out, "env").contains(&format!("export BRAIN_CONFIG='{}'", config.display())),
        "{out}"
    );
    assert!(
        out.contains("set root = "),
        "the file is the person's, and named: {out}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "");
}

#[test]
fn dry_run_says_what_it_would_do_and_changes_nothing() {
    let b = fresh();
    let out = ok(brain(&b, &["install", "--dry-run", "--autostart"]));
    assert!(
        out.starts_with("dry run: nothing will be changed\n"),
        "{out}"
    );
    for expect in [
        "would install",
        "would create",
        "would write",
        "claude mcp add --scope user brain -- brain mcp",
    ] {
        assert!(out.contains(expect), "{expect}: {out}");
    }
    assert!(
        !skill(&b).exists() && !b.root.exists() && !b.home.join(".config").exists(),
        "{out}"
    );
    assert!(!b.data.join("install.json").exists());
}

#[test]
fn install_sets_everything_up_once_and_check_agrees() {
    let b = fresh();
    let out = ok(brain(&b, &["install"]));
    assert_eq!(
        row(&out, "skill"),
        format!("installed {}", skill(&b).display())
    );
    assert!(row(&out, "brain").starts_with("created "), "{out}");
    assert!(
        out.contains("\n    claude mcp add --scope user brain -- brain mcp\n"),
        "{out}"
    );
    assert!(
        !out.lines().any(|l| l.starts_with("path ")),
        "brain is on PATH here: {out}"
    );
    assert_eq!(std::fs::read_to_string(skill(&b)).unwrap(), shipped_skill());
    for folder in ["lore", "idea", "research-link"] {
        assert!(b.root.join(folder).is_dir(), "{folder}");
    }
    // The brain and data folders and the model this install was given (here by BRAIN_DIR,
    // BRAIN_DATA_DIR and BRAIN_MODEL) are pinned in the config: the MCP server and the
    // skill's commands start without them. Every other setting stays commented out.
    let config = std::fs::read_to_string(b.config_file()).unwrap();
    let set: Vec<&str> = config
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let data = b.config().data_dir;
    assert_eq!(
        set,
        [
            format!("root = {:?}", b.root.display().to_string()),
            format!("data_dir = {:?}", data.display().to_string()),
            format!("model = {TEST_MODEL:?}"),
        ],
        "{config}"
    );
    assert!(
        row(&out, "config")
            .ends_with("(root, data_dir and model set to this brain's, the rest commented out)"),
        "{out}"
    );
    let without = b
        .command()
        .env_remove("BRAIN_DIR")
        .env_remove("BRAIN_DATA_DIR")
        .env_remove("BRAIN_MODEL")
        .args(["status", "--json"])
        .output()
        .unwrap();
    let without = Run(without);
    assert_eq!(without.code(), 0, "{}", without.stderr());
    assert_eq!(without.json()["root"], b.root.display().to_string());
    assert_eq!(without.json()["model"], TEST_MODEL, "{}", without.stdout());

    let check = ok(brain(&b, &["install", "--check"]));
    for (what, state) in [
        ("skill", "ok"),
        ("brain", "ok"),
        ("config", "ok"),
        ("path", "ok"),
        ("autostart", "off"),
        ("mcp", "off"),
        ("model", "off"),
    ] {
        assert!(
            row(&check, what).starts_with(state),
            "{what} {state}:\n{check}"
        );
    }

    // a second run changes nothing and says so
    std::fs::write(b.root.join("lore/mine.md"), "# mine\n").unwrap();
    let again = ok(brain(&b, &["install"]));
    assert!(row(&again, "skill").starts_with("up to date "), "{again}");
    assert!(row(&again, "brain").starts_with("exists "), "{again}");
    assert_eq!(
        std::fs::read_to_string(b.root.join("lore/mine.md")).unwrap(),
        "# mine\n"
    );
    assert!(!again.contains("set root ="), "{again}");
    // A config of the person's own that names another brain is kept, and said to need it.
    std::fs::write(b.config_file(), "# mine\n").unwrap();
    let mine = ok(brain(&b, &["install"]));
    assert!(
        mine.contains(&format!(
            "to do         set root = {:?}, data_dir = ",
            b.root.display().to_string()
        )),
        "{mine}"
    );
    assert_eq!(
        std::fs::read_to_string(b.config_file()).unwrap(),
        "# mine\n"
    );
    // and the brain it made is searchable at once
    assert!(brain(&b, &["search", "mine", "--mode", "bm25"])
        .stdout()
        .contains("lore/mine.md"));
}

/// A TOML config holds text: a brain folder whose path is not UTF-8 (Linux allows it) is not
/// pinned as some other path; the install says how to reach it instead.
#[cfg(target_os = "linux")]
#[test]
fn a_brain_folder_path_that_is_not_utf8_is_said_not_pinned_as_another() {
    use std::os::unix::ffi::OsStrExt;
    let b = fresh();
    let odd = b
        .root
        .with_file_name(std::ffi::OsStr::from_bytes(b"brain-\xff"));
    let r = Run(b
        .command()
        .env("BRAIN_DIR", &odd)
        .arg("install")
        .output()
        .unwrap());
    let out = r.stdout();
    assert_eq!(r.code(), 0, "{out}{}", r.stderr());
    assert!(
        out.contains("is not UTF-8, which a config file cannot hold: set BRAIN_DIR to it"),
        "{out}"
    );
    assert!(odd.join("lore").is_dir(), "{out}");
    let config = std::fs::read_to_string(b.config_file()).unwrap();
    assert!(
        !config.lines().any(|l| l.starts_with("root = ")),
        "{config}"
    );
    assert!(
        config.lines().any(|l| l.starts_with("data_dir = ")),
        "{config}"
    );
}

#[test]
fn an_empty_brain_folder_gets_the_default_types_and_a_used_one_is_left_alone() {
    // `mkdir ~/.brain` (or an empty clone) before the install: the same types as a new
    // folder, so that `brain new lore` works next.
    let b = Brain::new();
    std::fs::create_dir(b.root.join(".git")).unwrap();
    let out = ok(brain(&b, &["install"]));
    assert!(row(&out, "brain").starts_with("created "), "{out}");
    assert!(b.root.join("lore/SCHEMA.md").is_file(), "{out}");
    assert!(b.root.join(".git").is_dir());
    ok(brain(&b, &["new", "lore", "First lesson"]));

    // A folder of loose notes is the user's: nothing is added to it.
    let used = Brain::new();
    std::fs::write(used.root.join("loose.md"), "# loose\n").unwrap();
    let out = ok(brain(&used, &["install"]));
    assert!(row(&out, "brain").starts_with("exists "), "{out}");
    assert_eq!(walk(&used.root), vec![used.root.join("loose.md")]);
    let r = brain(&used, &["new", "lore", "x"]);
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr().contains("the brain has no types yet"),
        "{}",
        r.stderr()
    );
}

#[test]
fn an_edited_skill_is_kept_reported_and_replaced_only_with_force() {
    let b = Brain::new();
    ok(brain(&b, &["install"]));
    let edited = format!("{}\nAlways search twice.\n", shipped_skill());
    std::fs::write(skill(&b), &edited).unwrap();

    let check = failed(brain(&b, &["install", "--check"]));
    assert!(row(&check, "skill").starts_with("edited "), "{check}");
    let out = failed(brain(&b, &["install"]));
    assert!(
        row(&out, "skill").starts_with("kept ") && out.contains("--force"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(skill(&b)).unwrap(),
        edited,
        "never overwritten without --force"
    );
    let out = failed(brain(&b, &["uninstall"]));
    assert!(row(&out, "skill").starts_with("kept "), "{out}");
    assert!(skill(&b).exists());

    let out = ok(brain(&b, &["install", "--force"]));
    assert!(row(&out, "skill").starts_with("replaced "), "{out}");
    assert_eq!(std::fs::read_to_string(skill(&b)).unwrap(), shipped_skill());
    ok(brain(&b, &["install", "--check"]));
}

#[test]
fn a_skill_an_older_brain_wrote_is_updated_without_force() {
    let b = Brain::new();
    ok(brain(&b, &["install"]));
    // what an older brain would have left: its own skill, and its hash in the record
    let old = "---\nname: brain\ndescription: old\n---\nold\n";
    std::fs::write(skill(&b), old).unwrap();
    let record = b.data.join("install.json");
    let text = std::fs::read_to_string(&record).unwrap();
    let shipped_hash = hex::encode(Sha256::digest(shipped_skill().as_bytes()));
    let old_hash = hex::encode(Sha256::digest(old.as_bytes()));
    assert!(text.contains(&shipped_hash), "{text}");
    std::fs::write(&record, text.replace(&shipped_hash, &old_hash)).unwrap();

    let check = failed(brain(&b, &["install", "--check"]));
    assert!(row(&check, "skill").starts_with("outdated "), "{check}");
    let out = ok(brain(&b, &["install"]));
    assert!(row(&out, "skill").starts_with("updated "), "{out}");
    assert_eq!(std::fs::read_to_string(skill(&b)).unwrap(), shipped_skill());
}

#[test]
fn autostart_writes_a_user_unit_and_check_notices_drift() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let b = Brain::new();
    let out = ok(brain(&b, &["install", "--autostart"]));
    assert!(
        out.contains(
            "systemctl --user daemon-reload && systemctl --user enable --now brain.service"
        ),
        "{out}"
    );
    let text = std::fs::read_to_string(unit(&b)).unwrap();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_brain")).unwrap();
    assert!(
        text.contains(&format!(
            "ExecStart=\"{}\" \"--dir\" \"{}\" \"serve\"",
            exe.display(),
            b.root.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Environment=\"BRAIN_DATA_DIR={}\"",
            b.data.display()
        )),
        "{text}"
    );
    assert!(row(
        &ok(brain(&b, &["install", "--check", "--autostart"])),
        "autostart"
    )
    .starts_with("ok "));

    std::fs::write(
        unit(&b),
        text.replace("Restart=on-failure", "Restart=always"),
    )
    .unwrap();
    assert!(row(&failed(brain(&b, &["install", "--check"])), "autostart").starts_with("edited "));
    assert!(row(&failed(brain(&b, &["install", "--autostart"])), "autostart").starts_with("kept "));
    ok(brain(&b, &["install", "--autostart", "--force"]));
    assert_eq!(std::fs::read_to_string(unit(&b)).unwrap(), text);

    // --check --autostart requires it; plain --check does not
    std::fs::remove_file(unit(&b)).unwrap();
    assert!(row(
        &failed(brain(&b, &["install", "--check", "--autostart"])),
        "autostart"
    )
    .starts_with("missing "));
    ok(brain(&b, &["install", "--check"]));
}

#[test]
fn uninstall_reverses_install_and_leaves_the_notes_alone() {
    let b = Brain::example();
    ok(brain(&b, &["install", "--autostart"]));
    ok(brain(&b, &["index"]));
    // what `systemctl --user enable` leaves behind
    let wants = b.home.join(".config/systemd/user/default.target.wants");
    std::fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(unit(&b), wants.join("brain.service")).unwrap();
    let notes_before = walk(&b.root);
    let data_before: Vec<PathBuf> = walk(&b.data)
        .into_iter()
        .filter(|p| !p.ends_with("install.json"))
        .collect();

    let dry = ok(brain(&b, &["uninstall", "--dry-run"]));
    assert!(dry.contains("would remove") && skill(&b).exists(), "{dry}");

    let out = ok(brain(&b, &["uninstall"]));
    assert_eq!(
        row(&out, "skill"),
        format!("removed {}", skill(&b).display())
    );
    assert_eq!(row(&out, "notes"), format!("kept {}", b.root.display()));
    assert!(
        !skill(&b).exists() && !skill(&b).parent().unwrap().exists(),
        "the skill's folder goes too"
    );
    assert!(
        b.home.join(".claude/skills").is_dir(),
        "but nothing above it"
    );
    if cfg!(target_os = "linux") {
        assert!(
            !unit(&b).exists() && wants.join("brain.service").symlink_metadata().is_err(),
            "{out}"
        );
        assert!(
            out.contains("systemctl --user stop brain.service; systemctl --user daemon-reload"),
            "{out}"
        );
    }
    assert!(!b.data.join("install.json").exists());
    assert_eq!(walk(&b.root), notes_before, "notes untouched");
    let data_after: Vec<PathBuf> = walk(&b.data);
    assert_eq!(data_after, data_before, "index untouched");
    assert!(b.config_file().is_file(), "config kept");

    assert!(row(&failed(brain(&b, &["install", "--check"])), "skill").starts_with("missing "));
    let again = ok(brain(&b, &["uninstall"]));
    assert!(row(&again, "skill").starts_with("absent "), "{again}");
}

#[test]
fn without_brain_on_path_the_absolute_path_is_used_and_check_fails() {
    let b = Brain::new();
    let mut cmd = b.command();
    cmd.env("PATH", "/usr/bin:/bin").arg("install");
    let out = ok(Run(cmd.output().unwrap()));
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_brain")).unwrap();
    assert!(
        out.contains(&format!(
            "claude mcp add --scope user brain -- {} mcp",
            exe.display()
        )),
        "{out}"
    );
    assert!(
        row(&out, "path").starts_with("missing ") && out.contains("ln -s"),
        "{out}"
    );
    let mut cmd = b.command();
    cmd.env("PATH", "/usr/bin:/bin")
        .args(["install", "--check"]);
    assert!(row(&failed(Run(cmd.output().unwrap())), "path").starts_with("missing "));
}

#[test]
fn an_mcp_registration_is_seen_and_uninstall_says_how_to_undo_it() {
    let b = Brain::new();
    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"mcpServers": {"brain": {"command": "brain", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    let out = ok(brain(&b, &["install"]));
    assert!(
        row(&out, "mcp").starts_with("registered ") && !out.contains("claude mcp add"),
        "{out}"
    );
    assert!(row(&ok(brain(&b, &["install", "--check"])), "mcp").starts_with("ok "));
    // Judged by its own arguments, not by this shell's variables (which the server,
    // started by Claude Code, does not have).
    let mut cmd = b.command();
    cmd.env("BRAIN_LOG", "bogus==")
        .env("BRAIN_NO_DAEMON", "maybe")
        .args(["install", "--check"]);
    let check = Run(cmd.output().unwrap());
    assert!(
        row(&check.stdout(), "mcp").starts_with("ok "),
        "{}",
        check.stdout()
    );
    // Given another model in its env (which wins over the config file): its searches by
    // meaning would embed with a model this brain's vectors are not made with.
    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"mcpServers": {"brain": {"command": "brain", "args": ["mcp"], "env": {"BRAIN_MODEL": "nomic-embed-text-v1.5"}}}}"#,
    )
    .unwrap();
    let check = failed(brain(&b, &["install", "--check"]));
    assert!(
        row(&check, "mcp").starts_with("drifted ")
            && check.contains(&format!(
                "it is given BRAIN_MODEL=nomic-embed-text-v1.5, not this brain's {TEST_MODEL}"
            )),
        "{check}"
    );
    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"mcpServers": {"brain": {"command": "brain", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    let out = ok(brain(&b, &["uninstall"]));
    assert!(
        out.contains("claude mcp remove --scope user brain"),
        "{out}"
    );

    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"projects": {"/work/x": {"mcpServers": {"brain": {"command": "brain", "args": ["mcp"]}}}}}"#,
    )
    .unwrap();
    assert!(ok(brain(&b, &["install"])).contains("for /work/x only"));
    // Its remove line works only from that folder, and says so.
    assert!(ok(brain(&b, &["uninstall", "--dry-run"]))
        .contains("cd /work/x && claude mcp remove --scope local brain"));

    // A registration left by an older install, whose binary is gone: found by name, it
    // would start nothing.
    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"mcpServers": {"brain": {"command": "/nonexistent/old/brain", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    let check = failed(brain(&b, &["install", "--check"]));
    assert!(
        row(&check, "mcp").starts_with("drifted ") && check.contains("/nonexistent/old/brain"),
        "{check}"
    );
    let out = ok(brain(&b, &["install"]));
    assert!(
        out.contains("claude mcp remove --scope user brain")
            && out.contains("claude mcp add --scope user brain -- brain mcp"),
        "{out}"
    );

    // Registered under a name of the person's own: still brain's server, said so (it was
    // "off", inviting a second registration), and removed by that name.
    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"mcpServers": {"other": {"command": "npx", "args": ["x"]}, "notes": {"command": "brain", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    let check = ok(brain(&b, &["install", "--check"]));
    assert!(
        row(&check, "mcp").starts_with("ok ") && row(&check, "mcp").contains("(as notes)"),
        "{check}"
    );
    assert!(
        ok(brain(&b, &["uninstall", "--dry-run"])).contains("claude mcp remove --scope user notes")
    );
    // A server of that name running something else is not brain's.
    std::fs::write(
        b.home.join(".claude.json"),
        r#"{"mcpServers": {"notes": {"command": "brain", "args": ["search", "mcp"]}}}"#,
    )
    .unwrap();
    assert!(row(&ok(brain(&b, &["install", "--check"])), "mcp").starts_with("off "));
}

/// `--check` sees what install would set: a config that names another brain is drift; a
/// config broken by hand is reported by `--check` and does not stop `uninstall`.
#[test]
fn check_sees_a_config_for_another_brain_and_a_broken_one_does_not_block_uninstall() {
    let b = Brain::new();
    ok(brain(&b, &["install"]));
    ok(brain(&b, &["install", "--check"]));
    let config = b.home.join(".config/brain/config.toml");
    std::fs::write(&config, "root = \"/somewhere/else\"\n").unwrap();
    let check = failed(brain(&b, &["install", "--check"]));
    assert!(
        row(&check, "config").starts_with("drifted ") && check.contains("set root = "),
        "{check}"
    );
    // No file at all, for a brain that is not the default one: one row says both.
    std::fs::remove_file(&config).unwrap();
    let check = failed(brain(&b, &["install", "--check"]));
    let rows = check
        .lines()
        .filter(|l| l.split_whitespace().next() == Some("config"));
    assert_eq!(rows.count(), 1, "{check}");
    assert!(
        row(&check, "config").starts_with("none no config file (")
            && check.contains("'brain install' writes one that sets root = "),
        "{check}"
    );
    std::fs::write(&config, "exclude = [\"[x\"]\n").unwrap();
    let search = brain(&b, &["search", "x"]);
    assert_eq!(search.code(), 2, "{}", describe(&search));
    let check = failed(brain(&b, &["install", "--check"]));
    assert!(
        row(&check, "config").starts_with("broken ") && check.contains("exclude pattern"),
        "{check}"
    );
    // The model row is still about the model named (BRAIN_MODEL here), not the default
    // one, which it told to fetch.
    assert!(
        row(&check, "model").contains(crate::harness::TEST_MODEL)
            && !check.contains("nomic-embed-text"),
        "{check}"
    );
    let out = ok(brain(&b, &["uninstall"]));
    assert!(!skill(&b).exists(), "{out}");
    assert!(row(&out, "config").contains("exclude pattern"), "{out}");
    assert!(config.exists(), "the config is the person's");
}

/// Install writes the config `BRAIN_CONFIG` names when there is none yet, as it writes the
/// default one; a brain path that is a symlink to nowhere is refused before anything.
#[test]
fn install_writes_a_new_brain_config_file_and_refuses_a_link_to_nowhere() {
    let b = Brain::new();
    let config = b.path("cfg/new.toml");
    let out = ok(brain_with_config(&b, Some(&config), &["install"]));
    assert!(row(&out, "config").starts_with("wrote "), "{out}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(&format!("root = \"{}\"", b.root.display())),
        "{text}"
    );

    let b = fresh();
    std::os::unix::fs::symlink(b.path("nowhere"), &b.root).unwrap();
    for args in [&["install"][..], &["install", "--dry-run"]] {
        let out = brain(&b, args);
        assert_eq!(out.code(), 2, "{}", describe(&out));
        let err = out.stderr();
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains("a symlink to") && err.contains("nowhere"),
            "{err}"
        );
    }
    assert!(!skill(&b).exists());
    let check = failed(brain(&b, &["install", "--check"]));
    assert!(row(&check, "brain").starts_with("unusable "), "{check}");
}

#[test]
fn a_file_where_the_brain_should_be_is_refused_before_anything_is_written() {
    let b = fresh();
    std::fs::write(&b.root, "not a folder").unwrap();
    for args in [&["install"][..], &["install", "--dry-run"]] {
        let out = brain(&b, args);
        assert_eq!(out.code(), 2, "{}", describe(&out));
        let err = out.stderr();
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("not a directory"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&b.root).unwrap(), "not a folder");
    assert!(!skill(&b).exists());
    assert!(!b.home.join(".config/brain/config.toml").exists());
    // --check says what is wrong there, without promising what install refuses to do.
    let check = failed(brain(&b, &["install", "--check"]));
    assert!(check.contains("not a folder"), "{check}");
    assert!(!check.contains("creates it"), "{check}");
}

/// Files kept elsewhere stay where they are: a config that is a symlink to nowhere yet (a
/// dotfiles checkout to come) is not replaced, a symlinked skill is updated through its
/// link; a settings file that is a FIFO does not hang `--check`.
#[test]
fn symlinked_files_are_kept_as_links_and_a_fifo_does_not_hang_the_check() {
    let b = fresh();
    let config = b.home.join(".config/brain/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(b.home.join("dotfiles/brain.toml"), &config).unwrap();
    let kept = b.home.join("dotfiles/SKILL.md");
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    std::fs::create_dir_all(skill(&b).parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&kept, skill(&b)).unwrap();
    // BRAIN_CONFIG would name the link: the default path is read here.
    let r = brain(&b, &["install"]);
    assert!(
        r.stderr().contains("is a symlink to"),
        "a dangling config link is said: {}",
        r.stderr()
    );
    std::fs::remove_file(&config).unwrap();
    std::fs::write(b.home.join("dotfiles/brain.toml"), "").unwrap();
    std::os::unix::fs::symlink(b.home.join("dotfiles/brain.toml"), &config).unwrap();
    ok(brain(&b, &["install"]));
    assert!(
        config.symlink_metadata().unwrap().is_symlink(),
        "the config link was replaced"
    );
    assert!(
        skill(&b).symlink_metadata().unwrap().is_symlink(),
        "the skill link was replaced"
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), shipped_skill());

    let settings = b.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    crate::harness::mkfifo(&settings);
    let started = std::time::Instant::now();
    let r = brain(&b, &["install", "--check"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "--check hung on a FIFO"
    );
    assert!(r.stdout().contains("hook"), "{}", r.stdout());
}

/// Issue #15: the CLI inside Brain.app, linked onto PATH by `Install Command Line Tool...`,
/// installs a skill and an MCP line that reach that very binary: `brain` through the link,
/// or the bundle's own path when the link is not on PATH.
#[test]
fn the_cli_inside_an_app_bundle_installs_itself() {
    let b = fresh();
    let macos = b.home.join("Apps/Brain.app/Contents/MacOS");
    std::fs::create_dir_all(&macos).unwrap();
    let cli = macos.join("brain");
    // Copied by `cp`, not `std::fs::copy`: while this process holds the copy open for
    // writing, a child forked by another test thread inherits that descriptor until its
    // exec, and running the copy then fails with ETXTBSY ("Text file busy"; CI saw it).
    // In `cp` the writable descriptor lives in a process nobody forks from.
    let copied = Command::new("cp")
        .arg(env!("CARGO_BIN_EXE_brain"))
        .arg(&cli)
        .status()
        .unwrap();
    assert!(copied.success(), "cp failed: {copied}");
    let bin = b.home.join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&cli, bin.join("brain")).unwrap();

    // `program` with the brain's environment and `path` as PATH.
    let run = |program: &Path, path: &std::ffi::OsStr, args: &[&str]| {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .envs(
                b.command()
                    .get_envs()
                    .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
            )
            .env("PATH", path)
            .current_dir(&b.home)
            .args(args);
        Run(cmd.output().unwrap())
    };
    let path = std::env::join_paths([bin.clone(), "/usr/bin".into(), "/bin".into()]).unwrap();
    let out = ok(run(&bin.join("brain"), &path, &["install"]));
    assert!(
        out.contains("\n    claude mcp add --scope user brain -- brain mcp\n"),
        "{out}"
    );
    let check = ok(run(&bin.join("brain"), &path, &["install", "--check"]));
    assert!(row(&check, "path").starts_with("ok"), "{check}");

    // Without the link on PATH, the bundle's own CLI is named by its real path.
    let out = ok(run(&cli, "/usr/bin:/bin".as_ref(), &["install"]));
    let real = std::fs::canonicalize(&cli).unwrap();
    assert!(
        out.contains(&format!(
            "claude mcp add --scope user brain -- {} mcp",
            real.display()
        )),
        "{out}"
    );
}

/// A SKILL.md linked (by a dotfiles tool, or by mistake) to a note of the brain: `install
/// --force` wrote the skill into the note. And a `~/.claude.json` that is not JSON is not
/// "mcp off": whether brain is registered cannot be told.
#[test]
fn install_never_writes_a_note_through_a_link_and_an_unreadable_claude_json_is_said() {
    let b = fresh();
    ok(brain(&b, &["install"]));
    let note = b.write("lore/retry.md", "# Retry\n\nmine\n");
    std::fs::remove_file(skill(&b)).unwrap();
    std::os::unix::fs::symlink(&note, skill(&b)).unwrap();
    let r = brain(&b, &["install", "--force"]);
    assert_ne!(r.code(), 0, "{}", r.stdout());
    assert!(
        r.stderr()
            .contains("in the brain folder, where brain does not write it"),
        "{}",
        r.stderr()
    );
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "# Retry\n\nmine\n");

    std::fs::remove_file(skill(&b)).unwrap();
    ok(brain(&b, &["install"]));
    std::fs::write(b.home.join(".claude.json"), "{\"mcpServers\":").unwrap();
    let r = brain(&b, &["install", "--check"]);
    assert_eq!(r.code(), 1, "{}", r.stdout());
    assert!(
        row(&r.stdout(), "mcp").starts_with("unknown ") && r.stdout().contains("is not JSON"),
        "{}",
        r.stdout()
    );
}

#[test]
fn a_claude_config_dir_that_is_a_file_is_refused_before_anything_is_written() {
    let b = fresh();
    let file = b.home.join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let r = Run(b
        .command()
        .env("CLAUDE_CONFIG_DIR", &file)
        .args(["install"])
        .output()
        .unwrap());
    r.assert_refused("CLAUDE_CONFIG_DIR a file", "which is not a folder");
    assert!(!b.root.exists(), "the brain folder was made");
}
