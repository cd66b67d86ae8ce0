//! Where the login item last pointed. The autostart plugin writes the app's path into the
//! login item when it is enabled; after the app is moved that path is stale and must be
//! written again. Writing it on every start instead would rewrite the LaunchAgent each
//! time, and macOS 13 and later may then tell the user "Background item added" at every
//! launch. So the path written last is kept in a small file in the data dir, and the item is
//! written again only when the running app's path differs.

use std::io;
use std::path::{Path, PathBuf};

/// The record's file name inside the data dir.
pub const FILE: &str = "login-item";

/// The record of the login item's path, kept in `data_dir`.
#[derive(Debug, Clone)]
pub struct LoginItemRecord {
    file: PathBuf,
}

impl LoginItemRecord {
    /// The record kept in `data_dir`.
    pub fn in_dir(data_dir: &Path) -> LoginItemRecord {
        LoginItemRecord {
            file: data_dir.join(FILE),
        }
    }

    /// Whether an enabled login item must be written again for the app at `exe`: true when
    /// the record names another path, or there is none (an item enabled before the record
    /// existed, or a record lost with the data dir: writing once more is harmless).
    pub fn is_stale(&self, exe: &Path) -> bool {
        match std::fs::read_to_string(&self.file) {
            Ok(recorded) => Path::new(recorded.trim_end_matches('\n')) != exe,
            Err(_) => true,
        }
    }

    /// Records that the login item now points at `exe`.
    pub fn remember(&self, exe: &Path) -> io::Result<()> {
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut text = exe.as_os_str().to_string_lossy().into_owned();
        text.push('\n');
        std::fs::write(&self.file, text)
    }

    /// Forgets the record (the login item was removed).
    pub fn forget(&self) -> io::Result<()> {
        match std::fs::remove_file(&self.file) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_until_remembered_then_stale_again_after_a_move() {
        let dir = tempfile::tempdir().unwrap();
        let record = LoginItemRecord::in_dir(&dir.path().join("data"));
        let here = Path::new("/Applications/Brain.app/Contents/MacOS/brain-app");
        let moved = Path::new("/Users/me/Apps/Brain.app/Contents/MacOS/brain-app");
        assert!(record.is_stale(here), "no record yet");
        record.remember(here).unwrap();
        assert!(!record.is_stale(here));
        assert!(record.is_stale(moved));
        record.remember(moved).unwrap();
        assert!(!record.is_stale(moved));
        record.forget().unwrap();
        record.forget().unwrap();
        assert!(record.is_stale(moved));
    }
}
