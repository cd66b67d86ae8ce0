//! `Install Command Line Tool...`: a `brain` link on the person's PATH to the CLI that ships
//! inside the app (`Brain.app/Contents/MacOS/brain`, beside the app's own binary), in
//! `/usr/local/bin` when that folder takes it, else in `~/.local/bin`; and, at start-up, the
//! repair of such a link left dangling because the app was moved.
//!
//! Plain file-system code with every folder passed in, so all of it is tested on Linux; the
//! caller ([`crate::actions`]) supplies the real folders and the login shell's PATH.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use brain::desktop::cli_path::CLI_NAME;

/// Where the link may go, best first: `/usr/local/bin` (on every macOS PATH, through
/// `/etc/paths`), then `~/.local/bin` (created when missing).
pub fn link_dirs(home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("/usr/local/bin")];
    dirs.extend(home.map(|h| h.join(".local").join("bin")));
    dirs
}

/// The CLI that ships with the app: an executable `brain` beside the app's own binary.
pub fn bundled(app_exe: &Path) -> Option<PathBuf> {
    let cli = app_exe.parent()?.join(CLI_NAME);
    brain::desktop::cli_path::is_executable(&cli).then_some(cli)
}

/// Whether `path` is a file inside a macOS app bundle (`X.app/Contents/MacOS/file`).
pub fn in_app_bundle(path: &Path) -> bool {
    let parts: Vec<&OsStr> = path.iter().collect();
    matches!(
        parts.as_slice(),
        [.., app, contents, macos, _] if *contents == "Contents" && *macos == "MacOS"
            && Path::new(app).extension().is_some_and(|e| e == "app")
    )
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The link, `<folder>/brain`.
    pub link: PathBuf,
    /// What it points at.
    pub target: PathBuf,
    /// It already pointed there: nothing changed.
    pub unchanged: bool,
    /// The better folders that did not take the link, each with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Links `brain` to `target` in the first of `dirs` that takes it. A missing folder is
/// created only when it is the last choice (`~/.local/bin`). An existing `brain` link is
/// replaced (atomically) only when it is ours to replace: it points into an app bundle (an
/// older or moved Brain.app) or at nothing. Any other `brain` (a file, or a link to another
/// install such as Homebrew's `../Cellar/...`) is never touched.
pub fn install(target: &Path, dirs: &[PathBuf]) -> anyhow::Result<Installed> {
    let mut skipped = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let last = i + 1 == dirs.len();
        if !dir.is_dir() {
            if !last {
                skipped.push((dir.clone(), "it does not exist".to_string()));
                continue;
            }
            std::fs::create_dir_all(dir)
                .with_context(|| format!("could not create {}", dir.display()))?;
        }
        let link = dir.join(CLI_NAME);
        match std::fs::symlink_metadata(&link) {
            Ok(m) if m.file_type().is_symlink() => {
                let old = std::fs::read_link(&link).unwrap_or_default();
                if old == target {
                    return Ok(Installed {
                        link,
                        target: target.to_path_buf(),
                        unchanged: true,
                        skipped,
                    });
                }
                // Relative links resolve from the link's folder; `exists` follows them.
                let dangling = !link.exists();
                if !in_app_bundle(&old) && !dangling {
                    bail!(
                        "{} already links to {}, another brain; remove that link first to use the app's",
                        link.display(),
                        old.display()
                    );
                }
            }
            Ok(_) => bail!(
                "{} already exists and is not a link; remove it first (or keep using it)",
                link.display()
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| format!("could not look at {}", link.display()))
            }
        }
        match make_link(target, &link) {
            Ok(()) => {
                return Ok(Installed {
                    link,
                    target: target.to_path_buf(),
                    unchanged: false,
                    skipped,
                })
            }
            Err(e) if !last && e.kind() == io::ErrorKind::PermissionDenied => {
                skipped.push((dir.clone(), "it is not writable".to_string()));
            }
            Err(e) => return Err(e).with_context(|| format!("could not write {}", link.display())),
        }
    }
    bail!("no folder to put the link in")
}

/// At start-up, for an app running from a bundle: a `brain` link in `dirs` that points at
/// the CLI of an app bundle that is gone (the app was moved or renamed) is pointed at
/// `target` instead. Links to anything else, and links that still work, are left alone.
/// Returns the links repaired.
pub fn repair(target: &Path, dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut repaired = Vec::new();
    for dir in dirs {
        let link = dir.join(CLI_NAME);
        let Ok(old) = std::fs::read_link(&link) else {
            continue;
        };
        if old != target && in_app_bundle(&old) && !old.exists() {
            match make_link(target, &link) {
                Ok(()) => repaired.push(link),
                Err(e) => {
                    tracing::warn!(link = %link.display(), error = %e, "could not repair the CLI link")
                }
            }
        }
    }
    repaired
}

/// Whether `dir` is one of the folders of `path` (a `PATH` value), symlinks resolved.
pub fn on_path(dir: &Path, path: &OsStr) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = real(dir);
    std::env::split_paths(path).any(|p| real(&p) == dir)
}

const MARK: &str = "__brain_path__";

/// The `PATH` a new terminal gets, asked of the person's login shell (`$SHELL -ilc`, which
/// reads `~/.zprofile`, `~/.zshrc` and the like): an app started from the Finder has only
/// launchd's short PATH. `None` when the shell does not answer within a few seconds.
pub fn login_path() -> Option<OsString> {
    let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty())?;
    let script = format!("printf '%s%s%s' {MARK} \"$PATH\" {MARK}");
    let mut child = Command::new(shell)
        .args(["-ilc", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).map(|_| out)
    });
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    parse_marked(&reader.join().ok()?.ok()?).map(OsString::from)
}

/// The text between the first two [`MARK`]s: rc files may print before and after it.
fn parse_marked(out: &str) -> Option<&str> {
    let (_, rest) = out.split_once(MARK)?;
    let (path, _) = rest.split_once(MARK)?;
    Some(path)
}

/// What to tell the person after [`install`]; `on_path` is whether the link's folder is on
/// the login shell's PATH (`None`: the shell did not say).
pub fn message(done: &Installed, on_path: Option<bool>) -> String {
    let mut lines = vec![format!(
        "{} {} → {}",
        if done.unchanged {
            "Already installed:"
        } else {
            "Installed"
        },
        done.link.display(),
        done.target.display()
    )];
    for (dir, why) in &done.skipped {
        lines.push(format!("(Not in {}: {why}.)", dir.display()));
    }
    let dir = done.link.parent().unwrap_or(Path::new("/"));
    match on_path {
        Some(true) => {}
        Some(false) => lines.push(format!(
            "{} is not on your PATH: add\n    export PATH=\"{}:$PATH\"\nto ~/.zshrc (or your shell's startup file) and open a new terminal.",
            dir.display(),
            dir.display()
        )),
        None => lines.push(format!(
            "Your shell did not say what its PATH is; make sure {} is on it.",
            dir.display()
        )),
    }
    lines.push(
        "Then run `brain install` in a terminal: the Claude Code skill and the MCP server.".into(),
    );
    lines.join("\n")
}

fn make_link(target: &Path, link: &Path) -> io::Result<()> {
    let tmp = link.with_file_name(format!(".{CLI_NAME}.link-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, link).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_bundled_cli_is_the_one_beside_the_app() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("Brain.app/Contents/MacOS/brain-app");
        assert_eq!(bundled(&app), None);
        executable(&app.with_file_name("brain"));
        assert_eq!(bundled(&app), Some(app.with_file_name("brain")));
        assert!(in_app_bundle(&app.with_file_name("brain")));
        assert!(!in_app_bundle(Path::new("/home/me/target/debug/brain")));
        assert!(!in_app_bundle(Path::new(
            "/Applications/Brain/Contents/MacOS/brain"
        )));
    }

    #[test]
    fn installs_in_the_first_folder_that_takes_it_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let cli = dir.path().join("Brain.app/Contents/MacOS/brain");
        executable(&cli);
        let missing = dir.path().join("usr-local-bin");
        let local = dir.path().join("home/.local/bin");
        let dirs = [missing.clone(), local.clone()];

        let done = install(&cli, &dirs).unwrap();
        assert_eq!(
            done.link,
            local.join("brain"),
            "the missing folder is skipped"
        );
        assert_eq!(
            done.skipped,
            vec![(missing.clone(), "it does not exist".to_string())]
        );
        assert!(!done.unchanged);
        assert_eq!(std::fs::read_link(&done.link).unwrap(), cli);
        assert!(install(&cli, &dirs).unwrap().unchanged);

        std::fs::create_dir_all(&missing).unwrap();
        let done = install(&cli, &dirs).unwrap();
        assert_eq!(
            done.link,
            missing.join("brain"),
            "the better folder wins once it exists"
        );
        assert!(done.skipped.is_empty());
    }

    #[test]
    fn replaces_a_link_but_never_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let cli = dir.path().join("New.app/Contents/MacOS/brain");
        executable(&cli);
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("/nowhere/brain", bin.join("brain")).unwrap();
        let done = install(&cli, std::slice::from_ref(&bin)).unwrap();
        assert_eq!(std::fs::read_link(done.link).unwrap(), cli);

        std::fs::remove_file(bin.join("brain")).unwrap();
        std::fs::write(bin.join("brain"), "a real binary").unwrap();
        let err = install(&cli, std::slice::from_ref(&bin))
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a link"), "{err}");
        assert_eq!(
            std::fs::read_to_string(bin.join("brain")).unwrap(),
            "a real binary"
        );
        let leftovers: Vec<_> = std::fs::read_dir(&bin).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary link left behind");
    }

    #[test]
    fn a_link_to_another_install_is_kept_one_into_an_older_app_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let cli = dir.path().join("New.app/Contents/MacOS/brain");
        executable(&cli);
        let cellar = dir.path().join("Cellar/brain/0.1/bin/brain");
        executable(&cellar);
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(&cellar, bin.join("brain")).unwrap();
        let err = install(&cli, std::slice::from_ref(&bin))
            .unwrap_err()
            .to_string();
        assert!(err.contains("another brain"), "{err}");
        assert_eq!(std::fs::read_link(bin.join("brain")).unwrap(), cellar);

        let old = dir.path().join("Old.app/Contents/MacOS/brain");
        executable(&old);
        std::fs::remove_file(bin.join("brain")).unwrap();
        std::os::unix::fs::symlink(&old, bin.join("brain")).unwrap();
        let done = install(&cli, std::slice::from_ref(&bin)).unwrap();
        assert_eq!(std::fs::read_link(done.link).unwrap(), cli);
    }

    #[test]
    fn repairs_only_links_into_an_app_that_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let cli = dir.path().join("Apps/Brain.app/Contents/MacOS/brain");
        executable(&cli);
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for d in [&a, &b, &c] {
            std::fs::create_dir_all(d).unwrap();
        }
        let moved = dir.path().join("Old/Brain.app/Contents/MacOS/brain");
        std::os::unix::fs::symlink(&moved, a.join("brain")).unwrap();
        std::os::unix::fs::symlink("/opt/other/bin/brain", b.join("brain")).unwrap();
        let other = dir.path().join("Other.app/Contents/MacOS/brain");
        executable(&other);
        std::os::unix::fs::symlink(&other, c.join("brain")).unwrap();

        let repaired = repair(
            &cli,
            &[a.clone(), b.clone(), c.clone(), dir.path().join("none")],
        );
        assert_eq!(repaired, vec![a.join("brain")]);
        assert_eq!(std::fs::read_link(a.join("brain")).unwrap(), cli);
        assert_eq!(
            std::fs::read_link(b.join("brain")).unwrap(),
            Path::new("/opt/other/bin/brain")
        );
        assert_eq!(
            std::fs::read_link(c.join("brain")).unwrap(),
            other,
            "a working link stays"
        );
    }

    #[test]
    fn path_checks_and_the_shells_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([Path::new("/usr/bin"), dir.path()]).unwrap();
        assert!(on_path(dir.path(), &path));
        assert!(!on_path(&dir.path().join("x"), &path));
        assert_eq!(
            parse_marked("motd\n__brain_path__/usr/bin:/bin__brain_path__bye"),
            Some("/usr/bin:/bin")
        );
        assert_eq!(parse_marked("no marks"), None);
    }

    #[test]
    fn the_message_says_what_to_do_next() {
        let done = Installed {
            link: PathBuf::from("/Users/me/.local/bin/brain"),
            target: PathBuf::from("/Applications/Brain.app/Contents/MacOS/brain"),
            unchanged: false,
            skipped: vec![(PathBuf::from("/usr/local/bin"), "it is not writable".into())],
        };
        let text = message(&done, Some(false));
        assert!(text.starts_with(
            "Installed /Users/me/.local/bin/brain → /Applications/Brain.app/Contents/MacOS/brain"
        ));
        assert!(text.contains("(Not in /usr/local/bin: it is not writable.)"));
        assert!(text.contains("export PATH=\"/Users/me/.local/bin:$PATH\""));
        assert!(text.ends_with("the Claude Code skill and the MCP server."));
        assert!(!message(&done, Some(true)).contains("not on your PATH"));
    }
}
