//! Where the socket lives and who may use it. One socket per brain root (and data dir), in
//! a folder only its user can enter; a socket or folder owned by someone else is never
//! used, never removed.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::ServiceError;
use crate::config::Config;

/// The longest socket path the kernel accepts (`sun_path` less its terminating NUL; macOS
/// has 104 bytes, Linux 108).
const MAX_SOCKET_PATH: usize = 103;

/// The folder holding brain's sockets: `$XDG_RUNTIME_DIR/brain` when that names an
/// existing folder (a per-user tmpfs on Linux; a stale value after `su` names none) outside
/// the brain folder, else `run/` in the data dir (which is never inside it). brain writes
/// into the notes folder only when asked to: a socket folder there would be one more.
pub fn runtime_dir(config: &Config) -> PathBuf {
    runtime_dir_from(
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        config,
    )
}

/// [`runtime_dir`] for `XDG_RUNTIME_DIR` = `xdg`.
fn runtime_dir_from(xdg: Option<PathBuf>, config: &Config) -> PathBuf {
    let among_notes = |dir: &Path| match (fs::canonicalize(dir), fs::canonicalize(&config.root)) {
        (Ok(dir), Ok(root)) => dir.starts_with(root),
        _ => false,
    };
    match xdg {
        Some(dir) if dir.is_absolute() && dir.is_dir() && !among_notes(&dir) => dir.join("brain"),
        _ => config.data_dir.join("run"),
    }
}

/// The socket of the backend serving `config.root`: named after the root folder plus a
/// hash of its index folder, so each (data dir, root) pair has its own.
pub fn socket_path(config: &Config) -> PathBuf {
    socket_path_in(&runtime_dir(config), config)
}

/// [`socket_path`] in the folder `dir`. The hash alone tells roots apart; the folder's name
/// is there for a person listing the folder, so it gets the bytes the kernel's limit
/// leaves (a macOS data dir is 46 bytes and the user's name before `run/`, and a folder
/// named in Cyrillic or Chinese takes two or three bytes a letter), and none when the
/// limit leaves none.
fn socket_path_in(dir: &Path, config: &Config) -> PathBuf {
    let index_dir = config.index_dir();
    let digest = Sha256::digest(index_dir.to_string_lossy().as_bytes());
    let hash = &hex::encode(digest)[..12];
    // The separator before the name, then `-`, the hash and `.sock`.
    let fixed = 1 + 1 + hash.len() + ".sock".len();
    // 32 characters, as before the limit was counted (a socket's name is a contract between
    // a backend and the clients of another version), then what the limit leaves.
    let room = MAX_SOCKET_PATH.saturating_sub(dir.as_os_str().len() + fixed);
    let stem: String = index_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|n| {
            n.rsplit_once('-')
                .map(|(stem, _)| stem.chars().take(32).collect())
        })
        .unwrap_or_else(|| "root".into());
    match crate::text::cut_at_char(&stem, room) {
        "" => dir.join(format!("{hash}.sock")),
        name => dir.join(format!("{name}-{hash}.sock")),
    }
}

/// The lock file that makes one backend per index: next to the index itself.
pub fn lock_path(config: &Config) -> PathBuf {
    config.index_dir().join("backend.lock")
}

pub use crate::file::my_uid;

/// Creates `dir` (mode 0700) when missing and checks that it is a real folder owned by
/// this user and closed to others; a folder of ours left open is closed.
pub fn ensure_private_dir(dir: &Path) -> Result<(), ServiceError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| ServiceError::io(dir, e))?;
    let meta = fs::symlink_metadata(dir).map_err(|e| ServiceError::io(dir, e))?;
    if !meta.file_type().is_dir() {
        return Err(ServiceError::Unsafe {
            path: dir.into(),
            reason: "not a folder (a symlink?)".into(),
        });
    }
    check_owner(dir, &meta)?;
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| ServiceError::io(dir, e))?;
    }
    Ok(())
}

/// Makes `path` free for a new socket: nothing there, or a stale socket of ours (nobody
/// answers on it) which is removed. A live socket means another backend serves it.
pub fn clear_stale_socket(path: &Path, root: &str) -> Result<(), ServiceError> {
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(ServiceError::Unsafe {
            path: path.into(),
            reason: format!("socket path is longer than {MAX_SOCKET_PATH} bytes; set XDG_RUNTIME_DIR to a shorter folder"),
        });
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ServiceError::io(path, e)),
    };
    check_owner(path, &meta)?;
    if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) {
        return Err(ServiceError::Unsafe {
            path: path.into(),
            reason: "exists and is not a socket; remove it".into(),
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(ServiceError::AlreadyRunning {
            root: root.into(),
            pid: None,
            socket: path.into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            tracing::info!(socket = %path.display(), "removing a stale socket left by a backend that did not stop cleanly");
            fs::remove_file(path).map_err(|e| ServiceError::io(path, e))
        }
        Err(e) => Err(ServiceError::io(path, e)),
    }
}

/// Checks that `path` (described by `meta`, from `lstat`) belongs to this user.
pub fn check_owner(path: &Path, meta: &fs::Metadata) -> Result<(), ServiceError> {
    let me = my_uid();
    if meta.uid() != me {
        return Err(ServiceError::ForeignOwner {
            path: path.into(),
            owner: meta.uid(),
            me,
        });
    }
    Ok(())
}

/// Binds the socket and closes it to everyone but its owner.
pub(crate) fn bind_socket(path: &Path) -> Result<std::os::unix::net::UnixListener, ServiceError> {
    let listener =
        std::os::unix::net::UnixListener::bind(path).map_err(|e| ServiceError::io(path, e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| ServiceError::io(path, e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| ServiceError::io(path, e))?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_names_differ_per_root_and_data_dir_and_stay_short() {
        let a = socket_path(&Config::for_root("/notes/a", "/data"));
        let b = socket_path(&Config::for_root("/notes/b", "/data"));
        let c = socket_path(&Config::for_root("/notes/a", "/other"));
        assert!(a != b && a != c && b != c);
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("a-") && name.ends_with(".sock"), "{name}");
        let long = socket_path(&Config::for_root(
            format!("/notes/{}", "x".repeat(200)),
            "/d",
        ));
        assert!(long.file_name().unwrap().len() < 60, "{}", long.display());
    }

    #[test]
    fn the_folder_name_gives_way_to_the_socket_length_limit() {
        // A macOS data dir: `/Users/<name>/Library/Application Support/brain/run`.
        let run = Path::new("/Users/christopher/Library/Application Support/brain/run");
        let fits = |root: &str| {
            let path = socket_path_in(run, &Config::for_root(root, "/d"));
            assert!(
                path.as_os_str().len() <= MAX_SOCKET_PATH,
                "{} is {} bytes",
                path.display(),
                path.as_os_str().len()
            );
            path.file_name().unwrap().to_string_lossy().into_owned()
        };
        let cyrillic = fits("/n/Заметки-по-инженерии-и-архитектуре");
        assert!(cyrillic.starts_with("Заметки_"), "{cyrillic}");
        fits("/n/engineering-notes-of-christopher-2026");
        fits("/n/工程笔记和架构设计的想法与教训");
        // A folder that leaves no room for a name: the hash alone.
        let deep = Path::new("/").join("r".repeat(84));
        let name = socket_path_in(&deep, &Config::for_root("/n/notes", "/d"));
        assert_eq!(name.file_name().unwrap().len(), 12 + ".sock".len());
        assert_eq!(name.as_os_str().len(), MAX_SOCKET_PATH);
    }

    #[test]
    fn the_runtime_folder_is_never_among_the_notes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("notes");
        let run = dir.path().join("run");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir(&run).unwrap();
        let config = Config::for_root(&root, dir.path().join("data"));
        assert_eq!(
            runtime_dir_from(Some(run.clone()), &config),
            run.join("brain")
        );
        for among in [root.clone(), root.join("sub")] {
            assert_eq!(
                runtime_dir_from(Some(among), &config),
                dir.path().join("data/run")
            );
        }
        assert_eq!(runtime_dir_from(None, &config), dir.path().join("data/run"));
    }

    #[test]
    fn private_dir_is_created_closed_and_reclosed() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("a/run");
        ensure_private_dir(&run).unwrap();
        assert_eq!(fs::metadata(&run).unwrap().mode() & 0o777, 0o700);
        fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&run).unwrap();
        assert_eq!(fs::metadata(&run).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn stale_sockets_go_and_other_files_stay() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s.sock");
        drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
        clear_stale_socket(&sock, "/r").unwrap();
        assert!(!sock.exists());
        let live = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert!(matches!(
            clear_stale_socket(&sock, "/r"),
            Err(ServiceError::AlreadyRunning { .. })
        ));
        drop(live);
        fs::remove_file(&sock).unwrap();
        fs::write(&sock, "x").unwrap();
        let err = clear_stale_socket(&sock, "/r").unwrap_err();
        assert!(matches!(err, ServiceError::Unsafe { .. }));
        assert_eq!(err.exit_code(), 2, "a leftover a person removes: {err}");
        assert!(sock.exists());
    }
}
