//! Where the `brain` command is, for the tray's `Copy CLI Path` (the Claude skill and
//! shell aliases need an absolute path).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The name of the CLI binary.
pub const CLI_NAME: &str = "brain";

/// The first executable `brain` found: next to the app's own binary (a bundle that ships
/// the CLI), then on `path_var` (`PATH`), then in `~/.cargo/bin` (`cargo install`).
pub fn find(
    app_exe: Option<&Path>,
    path_var: Option<&OsStr>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    let beside = app_exe.and_then(Path::parent).map(Path::to_path_buf);
    let on_path = path_var
        .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
        .unwrap_or_default();
    let cargo = home.map(|h| h.join(".cargo").join("bin"));
    beside
        .into_iter()
        .chain(on_path)
        .chain(cargo)
        .map(|dir| dir.join(CLI_NAME))
        .find(|candidate| is_executable(candidate))
}

/// The CLI as this process would find it.
pub fn find_current() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    let path = std::env::var_os("PATH");
    find(exe.as_deref(), path.as_deref(), dirs::home_dir().as_deref())
}

/// Whether `path` is a file some user may run (a link followed): what a shell finds on PATH.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn touch(path: &Path, mode: u32) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn prefers_the_bundled_cli_then_path_then_cargo() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("Brain.app/Contents/MacOS/brain-app");
        let bin = dir.path().join("bin");
        let home = dir.path().join("home");
        let path_var = std::env::join_paths([dir.path().join("empty"), bin.clone()]).unwrap();
        let find_now = || find(Some(&app), Some(&path_var), Some(&home));

        assert_eq!(find_now(), None);
        touch(&home.join(".cargo/bin/brain"), 0o755);
        assert_eq!(find_now(), Some(home.join(".cargo/bin/brain")));
        touch(&bin.join("brain"), 0o644);
        assert_eq!(
            find_now(),
            Some(home.join(".cargo/bin/brain")),
            "a file that is not executable is skipped"
        );
        touch(&bin.join("brain"), 0o755);
        assert_eq!(find_now(), Some(bin.join("brain")));
        touch(&app.with_file_name("brain"), 0o755);
        assert_eq!(find_now(), Some(app.with_file_name("brain")));
    }
}
