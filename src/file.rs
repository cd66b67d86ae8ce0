//! Reading a file that may not be what its name says: a note, a schema or an ignore file
//! can be a pipe or a device (a link to `/dev/zero`), and a reader must neither wait on it
//! forever nor read it until memory runs out. Below every other module: it imports none.

use std::path::Path;

/// The bytes of the regular file at `path` (a symlink followed), at most `max` of them,
/// opened so that a pipe cannot block: the file is opened non-blocking and checked as
/// opened, so one swapped for a FIFO after a `stat` is refused, not waited on forever.
pub(crate) fn read_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, _) = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The regular file at `path` (a symlink followed), open for reading, with its size; an
/// error of kind `InvalidInput` for anything else. Opened non-blocking, so a pipe is
/// refused at once instead of waited on, and checked as opened, not by an earlier `stat`.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a folder, a pipe or a device): replace it with a file",
        ));
    }
    Ok((file, meta.len()))
}

/// Makes a FIFO at `path`, for tests of files that would block a reader.
#[cfg(test)]
pub(crate) fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).expect("no NUL");
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}
