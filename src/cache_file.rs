//! What brain's cache files beside the index have in common (`matrix.bin`, `lengths.bin`):
//! little-endian fields read front to back, arrays padded to 8 bytes, the CRC-32 of
//! everything before it at the end, and a file replaced whole by a rename, so that a
//! reader sees the old file or the new one, never a part. A cache that does not read back
//! whole is rebuilt by its owner, never trusted.

use std::io::Write;
use std::path::Path;

/// Pads `out` with zeros to the next multiple of 8 bytes.
pub(crate) fn pad8(out: &mut Vec<u8>) {
    out.resize(out.len().next_multiple_of(8), 0);
}

/// `out` with the CRC-32 of its bytes appended.
pub(crate) fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// A sealed file's body and the CRC-32 stored after it; `None` when it is too short to hold
/// one. Check the body with [`intact`] (after any cheaper check of its header).
pub(crate) fn unseal(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    bytes.split_at_checked(bytes.len().checked_sub(4)?)
}

/// Whether `body` has the CRC-32 `crc` (as [`unseal`] gives them).
pub(crate) fn intact(body: &[u8], crc: &[u8]) -> bool {
    crc32fast::hash(body).to_le_bytes() == crc
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed over it. Not
/// flushed to disk first, as [`crate::file::replace`] does: a cache is sealed with its
/// CRC, so one a crash cut short is found and rebuilt, and a flush of a large matrix on
/// every sync costs more than the rebuild it would save.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Earlier versions named theirs `.tmp` and six letters, as tempfile does by default,
    // then `.brain-`, six letters, `.tmp` (in the index's folder: no one else's files).
    crate::file::sweep_stale_temps(dir, |n| {
        crate::file::is_temp_name(n, ".tmp", 6, "")
            || crate::file::is_temp_name(n, ".brain-", 6, ".tmp")
    });
    let mut tmp = crate::file::temp_beside(path, dir, 0o600)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Reads fixed-size fields front to back; `None` past the end.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    /// How far it has read.
    pub at: usize,
}

impl<'a> Cursor<'a> {
    /// At the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Cursor<'a> {
        Cursor { bytes, at: 0 }
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    /// Past the padding to the next multiple of 8 bytes.
    pub fn skip_pad(&mut self) {
        self.at = self.at.next_multiple_of(8);
    }

    /// The next `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// The next `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// The next `i64`.
    pub fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// The next `n` `i64`s.
    pub fn i64s(&mut self, n: usize) -> Option<Vec<i64>> {
        self.array(n, i64::from_le_bytes)
    }

    /// The next `n` `u32`s.
    pub fn u32s(&mut self, n: usize) -> Option<Vec<u32>> {
        self.array(n, u32::from_le_bytes)
    }

    /// The next `n` values of `N` bytes each, each made by `from`.
    fn array<const N: usize, T>(&mut self, n: usize, from: fn([u8; N]) -> T) -> Option<Vec<T>> {
        let bytes = self.take(n.checked_mul(N)?)?;
        Some(
            bytes
                .chunks_exact(N)
                .map(|b| from(b.try_into().unwrap_or([0; N])))
                .collect(),
        )
    }

    /// Whether every byte was read.
    pub fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_and_a_sealed_file_checks() {
        let mut out = Vec::new();
        out.extend_from_slice(&7u32.to_le_bytes());
        pad8(&mut out);
        out.extend_from_slice(&(-3i64).to_le_bytes());
        out.extend_from_slice(&9u32.to_le_bytes());
        let sealed = seal(out);
        let (body, crc) = unseal(&sealed).unwrap();
        assert!(intact(body, crc));
        let mut c = Cursor::new(body);
        assert_eq!(c.u32(), Some(7));
        c.skip_pad();
        assert_eq!(c.i64s(1), Some(vec![-3]));
        assert_eq!(c.u32s(1), Some(vec![9]));
        assert!(c.at_end());
        assert_eq!(c.u32(), None, "past the end");
        let mut bad = sealed.clone();
        bad[0] ^= 1;
        let (body, crc) = unseal(&bad).unwrap();
        assert!(!intact(body, crc));
        assert!(unseal(&sealed[..3]).is_none());
    }
}
