//! The backend's log file, capped: past [`MAX_BYTES`] it is renamed `serve.log.1` (older ones
//! shift to `.2`, `.3`; the oldest is dropped) and a fresh file is started, so a backend that
//! runs for months keeps at most `(KEEP + 1) * MAX_BYTES` of logs.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A log file grows to this size before it is rotated.
pub const MAX_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept.
pub const KEEP: u32 = 3;

/// The log filter for a level asked for: at `info` (the backend's default), the file
/// watcher's own `info` lines are left out (one `rm -rf` of three folders wrote 273
/// "unable to remove watch descriptor" lines, most of the log); any other level or filter
/// is as given.
pub fn log_filter(level: &str) -> String {
    match level.trim() {
        info if info.eq_ignore_ascii_case("info") => "info,notify=warn".to_string(),
        other => other.to_string(),
    }
}

/// An append-only log file that rotates itself by size.
#[derive(Debug)]
pub struct RotatingLog {
    path: PathBuf,
    file: File,
    size: u64,
    max: u64,
    keep: u32,
}

impl RotatingLog {
    /// Opens (appending) the log at `path` with the default limits.
    pub fn open(path: &Path) -> io::Result<RotatingLog> {
        RotatingLog::with_limits(path, MAX_BYTES, KEEP)
    }

    /// [`RotatingLog::open`] with a size cap and a count of rotated files.
    pub fn with_limits(path: &Path, max: u64, keep: u32) -> io::Result<RotatingLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let size = file.metadata()?.len();
        let mut log = RotatingLog {
            path: path.to_path_buf(),
            file,
            size,
            max: max.max(1),
            keep,
        };
        if log.size >= log.max {
            log.rotate()?;
        }
        Ok(log)
    }

    fn numbered(&self, n: u32) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        if self.keep == 0 {
            let _ = std::fs::remove_file(&self.path);
        } else {
            let _ = std::fs::remove_file(self.numbered(self.keep));
            for n in (1..self.keep).rev() {
                let from = self.numbered(n);
                if from.exists() {
                    std::fs::rename(&from, self.numbered(n + 1))?;
                }
            }
            std::fs::rename(&self.path, self.numbered(1))?;
        }
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.size = 0;
        Ok(())
    }
}

impl Write for RotatingLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Whole records stay in one file: rotate before a write that would cross the cap.
        if self.size > 0 && self.size + buf.len() as u64 > self.max {
            self.rotate()?;
        }
        let n = self.file.write(buf)?;
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchers_info_lines_are_left_out_only_at_info() {
        assert_eq!(log_filter("info"), "info,notify=warn");
        assert_eq!(log_filter("INFO"), "info,notify=warn");
        assert_eq!(log_filter("debug"), "debug");
        assert_eq!(log_filter("brain=debug"), "brain=debug");
    }

    #[test]
    fn rotates_by_size_and_keeps_a_few() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.log");
        let mut log = RotatingLog::with_limits(&path, 100, 2).unwrap();
        for i in 0..10 {
            // One write per record, as the tracing formatter does: 41 bytes, two per file.
            log.write_all(format!("{i:0>40}\n").as_bytes()).unwrap();
        }
        log.flush().unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        assert!(read(&path).contains(&format!("{:0>40}", 9)));
        assert!(read(&path).len() <= 100);
        assert!(read(&dir.path().join("serve.log.1")).contains(&format!("{:0>40}", 7)));
        assert!(dir.path().join("serve.log.2").exists());
        assert!(!dir.path().join("serve.log.3").exists(), "only two kept");
        // A log already over the cap is rotated when opened.
        std::fs::write(&path, vec![b'x'; 150]).unwrap();
        let _ = RotatingLog::with_limits(&path, 100, 2).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }
}
