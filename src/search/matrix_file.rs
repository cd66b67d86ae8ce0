//! The int8 matrix on disk, next to the index, so that a process without a backend (a
//! `brain search --no-daemon`, the CLI when the app is not running, a fresh `brain mcp`)
//! reads it in one go instead of rebuilding it from every vector in SQLite: at 100k
//! passages that rebuild was most of a cold search's 2.4 s. It is only a cache: it is
//! keyed by the model, its dimension and the index's vectors version (which moves with
//! every change to passages or vectors, from a random start in each new index), checked
//! whole by a CRC-32, written by rename, and any mismatch or damage means "rebuild from
//! SQLite", never an error.
//!
//! A file whose version is stale but whose model, dimension and index are right is still
//! mostly right: after an edit, [`read_stale`] gives it to be brought up to date row by
//! row (`Engine`'s semantic loading), which at 100k passages reads a few vectors instead
//! of all of them.
//!
//! Layout, little-endian: magic `BRAINMX2`, version `i64`, index id `i64` (see
//! `index::INDEX_ID`), dim `u32`, name length `u32`,
//! rows `u64`, the model name (padded to 8 bytes), codes (`rows * dim` i8, padded to 8),
//! scales (`rows` f32, padded to 8), chunk ids and note ids (`rows` i64 each), then the
//! CRC-32 of everything before it (`u32`).

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use super::codes::Codes;
use super::semantic::Matrix;
use crate::cache_file::{self, pad8, Cursor};

const MAGIC: &[u8; 8] = b"BRAINMX2";

/// What a matrix file must have been written for to be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key<'a> {
    /// The model's name.
    pub model: &'a str,
    /// Its vector length.
    pub dim: usize,
    /// The index's vectors version when the matrix was read from it.
    pub version: i64,
    /// The index's identity (`index::INDEX_ID`).
    pub index_id: i64,
}

/// The file's bytes for `matrix` read at `key`.
fn encode(matrix: &Matrix, key: Key<'_>) -> Vec<u8> {
    let (codes, scales, chunk_ids, note_ids) = matrix.parts();
    let rows = chunk_ids.len();
    let mut out = Vec::with_capacity(48 + key.model.len() + codes.len() + rows * 20 + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&key.version.to_le_bytes());
    out.extend_from_slice(&key.index_id.to_le_bytes());
    out.extend_from_slice(&(key.dim as u32).to_le_bytes());
    out.extend_from_slice(&(key.model.len() as u32).to_le_bytes());
    out.extend_from_slice(&(rows as u64).to_le_bytes());
    out.extend_from_slice(key.model.as_bytes());
    pad8(&mut out);
    out.extend(codes.iter().map(|&c| c as u8));
    pad8(&mut out);
    scales
        .iter()
        .for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
    pad8(&mut out);
    chunk_ids
        .iter()
        .for_each(|i| out.extend_from_slice(&i.to_le_bytes()));
    note_ids
        .iter()
        .for_each(|i| out.extend_from_slice(&i.to_le_bytes()));
    cache_file::seal(out)
}

/// A matrix file's parts, checked whole, with its codes still in the file's bytes.
struct Decoded {
    dim: usize,
    /// Where the codes lie in the file.
    codes: Range<usize>,
    scales: Vec<f32>,
    chunk_ids: Vec<i64>,
    note_ids: Vec<i64>,
}

impl Decoded {
    /// The matrix, its codes read from `codes` (the file's bytes at [`Decoded::codes`]).
    fn into_matrix(self, codes: Codes) -> Option<Matrix> {
        Matrix::from_parts(self.dim, codes, self.scales, self.chunk_ids, self.note_ids)
    }
}

/// The parts in `bytes`, if they are a whole, undamaged file written at `key` (at any
/// vectors version with `any_version`).
fn decode(bytes: &[u8], key: Key<'_>, any_version: bool) -> Option<Decoded> {
    let (body, crc) = cache_file::unseal(bytes)?;
    let mut c = Cursor::new(body);
    if c.take(8)? != MAGIC {
        return None;
    }
    let version = c.u64()? as i64;
    let index_id = c.u64()? as i64;
    let dim = c.u32()? as usize;
    let name_len = c.u32()? as usize;
    let rows = usize::try_from(c.u64()?).ok()?;
    let model = c.take(name_len)?;
    // The key first: a stale file (the usual case after an edit) is not read through.
    // A stale file is older than the index; one from a later version belongs to an index
    // this one is not (an older copy restored from a backup reuses passage ids).
    let version_ok = version == key.version || (any_version && version < key.version);
    if !version_ok || index_id != key.index_id || dim != key.dim || model != key.model.as_bytes() {
        return None;
    }
    if !cache_file::intact(body, crc) {
        return None;
    }
    c.skip_pad();
    let start = c.at;
    c.take(rows.checked_mul(dim)?)?;
    let codes = start..c.at;
    c.skip_pad();
    let scales: Vec<f32> = c
        .take(rows.checked_mul(4)?)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    c.skip_pad();
    let chunk_ids = c.i64s(rows)?;
    let note_ids = c.i64s(rows)?;
    if !c.at_end() {
        return None;
    }
    Some(Decoded {
        dim,
        codes,
        scales,
        chunk_ids,
        note_ids,
    })
}

/// The matrix stored at `path` for `key`; `None` when there is none, or it was written for
/// another model, dimension or version, or it is damaged. Its codes are read in place from
/// the mapped file rather than copied out (see [`Codes`]).
pub fn read(path: &Path, key: Key<'_>) -> Option<Matrix> {
    read_as(path, key, false)
}

/// The matrix stored at `path` for `key`'s index, model and dimension, whatever vectors
/// version it was written at: after an edit most of its rows are still right. `None` when
/// there is none, or it is another index's, model's or dimension's, or damaged.
pub fn read_stale(path: &Path, key: Key<'_>) -> Option<Matrix> {
    read_as(path, key, true)
}

/// The length of a whole matrix file whose fixed header is `header` (the first 40 bytes):
/// what [`encode`] writes for that many rows, that dimension and that model name.
fn whole_len(header: &[u8; 40]) -> Option<u64> {
    let mut c = Cursor::new(header);
    c.take(8 + 8 + 8)?;
    let dim = u64::from(c.u32()?);
    let name_len = u64::from(c.u32()?);
    let rows = c.u64()?;
    let pad = |n: u64| n.next_multiple_of(8);
    let codes = pad(40 + name_len).checked_add(rows.checked_mul(dim)?)?;
    let scales = pad(codes).checked_add(rows.checked_mul(4)?)?;
    pad(scales)
        .checked_add(rows.checked_mul(16)?)?
        .checked_add(4)
}

fn read_as(path: &Path, key: Key<'_>, any_version: bool) -> Option<Matrix> {
    let mut file = std::fs::File::open(path).ok()?;
    // A file of another length than its header says is damaged: refused before it is
    // mapped and read in whole (a file grown to gigabytes stalled a search for seconds).
    let mut header = [0u8; 40];
    std::io::Read::read_exact(&mut file, &mut header).ok()?;
    if Some(file.metadata().ok()?.len()) != whole_len(&header) {
        return None;
    }
    // SAFETY: the mapping is read-only. brain never writes this file in place, only
    // replaces it by a rename (`write`), which leaves this mapping on the old file; only
    // another program truncating the file in brain's own data dir, or an I/O error of the
    // disk under it, could make a read fault (the warm backend copies the codes out at
    // once: see `Matrix::into_owned`).
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
    // `populate` is Linux's; elsewhere ask for the whole file to be read ahead.
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::WillNeed);
    let matrix = decode(&map, key, any_version).and_then(|d| {
        let range = d.codes.clone();
        d.into_matrix(Codes::Mapped {
            map: Arc::new(map),
            range,
        })
    });
    if matrix.is_none() {
        tracing::debug!(path = %path.display(), "matrix file is stale or damaged; rebuilding");
    }
    matrix
}

/// Stores `matrix` (read at `key`) at `path`, atomically: a reader sees the old file or
/// the new one, never a part.
pub fn write(path: &Path, matrix: &Matrix, key: Key<'_>) -> std::io::Result<()> {
    cache_file::write(path, &encode(matrix, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> Matrix {
        let mut m = Matrix::new(3);
        assert!(m.push(10, 1, &[0.5, -0.25, 1.0]));
        assert!(m.push(11, 1, &[0.0, 0.0, 0.0]));
        assert!(m.push(12, 7, &[-1.0, 0.5, 0.25]));
        m
    }

    const KEY: Key<'static> = Key {
        model: "all-minilm-l6-v2",
        dim: 3,
        version: 1 << 45,
        index_id: 77,
    };

    #[test]
    fn a_matrix_comes_back_as_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("matrix.bin");
        let m = matrix();
        write(&path, &m, KEY).unwrap();
        let back = read(&path, KEY).expect("read back");
        assert_eq!(back.parts(), m.parts());
        assert!(
            format!("{back:?}").contains("mapped"),
            "codes read in place"
        );
        let owned = read(&path, KEY).unwrap().into_owned();
        assert!(format!("{owned:?}").contains("owned"));
        assert_eq!(owned.parts(), m.parts());
        let q = [0.3, 0.1, -0.2];
        assert_eq!(back.top_notes(&q, 5, None), m.top_notes(&q, 5, None));
        // The header's length is the file's, for every size written.
        let header: [u8; 40] = encode(&m, KEY)[..40].try_into().unwrap();
        assert_eq!(whole_len(&header), Some(encode(&m, KEY).len() as u64));
        // A file grown past its length is refused before it is read.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|f| f.set_len(f.metadata()?.len() + (1 << 30)))
            .unwrap();
        assert!(read(&path, KEY).is_none());
        // An empty matrix too.
        write(&path, &Matrix::new(3), KEY).unwrap();
        assert!(read(&path, KEY).unwrap().is_empty());
        let header: [u8; 40] = encode(&Matrix::new(3), KEY)[..40].try_into().unwrap();
        assert_eq!(
            whole_len(&header),
            Some(std::fs::metadata(&path).unwrap().len())
        );
    }

    #[test]
    fn another_key_or_any_damage_means_rebuild() {
        let bytes = encode(&matrix(), KEY);
        assert!(decode(&bytes, KEY, false).is_some());
        for other in [
            Key {
                version: KEY.version + 1,
                ..KEY
            },
            Key { dim: 4, ..KEY },
            Key {
                index_id: 78,
                ..KEY
            },
            Key {
                model: "nomic-embed-text-v1.5",
                ..KEY
            },
        ] {
            assert!(decode(&bytes, other, false).is_none(), "{other:?}");
        }
        for at in [0, 9, 40, bytes.len() / 2, bytes.len() - 5, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            assert!(decode(&bad, KEY, false).is_none(), "flipped byte {at}");
        }
        for len in [0, 3, 4, 39, bytes.len() - 1] {
            assert!(decode(&bytes[..len], KEY, false).is_none(), "cut at {len}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(read(&dir.path().join("absent.bin"), KEY).is_none());
        // A stale version is still read as stale, for the same index, model and dimension.
        let path = dir.path().join("matrix.bin");
        write(&path, &matrix(), KEY).unwrap();
        let later = Key {
            version: KEY.version + 5,
            ..KEY
        };
        assert!(read(&path, later).is_none());
        assert_eq!(read_stale(&path, later).unwrap().parts(), matrix().parts());
        let earlier = Key {
            version: KEY.version - 1,
            ..KEY
        };
        assert!(
            read_stale(&path, earlier).is_none(),
            "a file newer than the index"
        );
        for other in [
            Key {
                index_id: 78,
                ..later
            },
            Key { dim: 4, ..later },
        ] {
            assert!(read_stale(&path, other).is_none(), "{other:?}");
        }
    }
}
