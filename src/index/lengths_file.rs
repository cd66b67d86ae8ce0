//! FTS5's note lengths on disk, next to the index (`lengths.bin`), so that a process
//! without a backend scores query words from them as the backend does (see
//! `index::bm25_parts`), instead of by `bm25()`, which looks each matching note's length
//! up in FTS5's docsize table, row by row. Reading the lengths from that table takes about
//! 15 ms at 100k notes; this file, about 1 MB there, takes a fraction of one.
//!
//! Only a cache: it is keyed by the index's identity and its notes version (brain's
//! counter and FTS5's structure record, which moves with every change to the full-text
//! index, also one made by an older brain), checked whole by a CRC-32, written by rename;
//! any mismatch or damage means "read them from FTS5", never an error, and never other
//! scores: the lengths are FTS5's own either way.
//!
//! Layout, little-endian: magic `BRAINLN1`, index id `i64`, counter `i64`, FTS5's rows
//! `i64` and tokens `i64`, notes `u64`, structure record length `u32`, the structure record
//! (padded to 8 bytes), note ids (`i64` each), lengths (`u32` each), then the CRC-32 of
//! everything before it (`u32`).

use std::path::Path;

use super::bm25_parts::DocLengths;
use crate::cache_file::{self, Cursor};

const MAGIC: &[u8; 8] = b"BRAINLN1";

/// What a lengths file must have been written at to be used.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key<'a> {
    /// The index's identity (`index::INDEX_ID`).
    pub index_id: i64,
    /// The notes version the lengths were read at: brain's counter and FTS5's structure
    /// record (see `Reader::notes_version`).
    pub version: (i64, &'a [u8]),
}

/// The file's bytes for `lengths` read at `key`.
fn encode(lengths: &DocLengths, key: Key<'_>) -> Vec<u8> {
    let (ids, lens, rows, tokens) = lengths.parts();
    let (counter, fts) = key.version;
    let mut out = Vec::with_capacity(56 + fts.len() + ids.len() * 12);
    out.extend_from_slice(MAGIC);
    for n in [key.index_id, counter, rows, tokens] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(&(ids.len() as u64).to_le_bytes());
    out.extend_from_slice(&(fts.len() as u32).to_le_bytes());
    out.extend_from_slice(fts);
    cache_file::pad8(&mut out);
    ids.iter()
        .for_each(|i| out.extend_from_slice(&i.to_le_bytes()));
    lens.iter()
        .for_each(|l| out.extend_from_slice(&l.to_le_bytes()));
    cache_file::seal(out)
}

/// The lengths in `bytes` when they were written at `key` and are whole.
fn decode(bytes: &[u8], key: Key<'_>) -> Option<DocLengths> {
    let (body, crc) = cache_file::unseal(bytes)?;
    if !cache_file::intact(body, crc) {
        return None;
    }
    let mut c = Cursor::new(body);
    if c.take(8)? != MAGIC {
        return None;
    }
    let (index_id, counter, rows, tokens) = (c.i64()?, c.i64()?, c.i64()?, c.i64()?);
    let notes = usize::try_from(c.u64()?).ok()?;
    let fts_len = c.u32()? as usize;
    let fts = c.take(fts_len)?;
    if (index_id, (counter, fts)) != (key.index_id, key.version) {
        return None;
    }
    c.skip_pad();
    let ids = c.i64s(notes)?;
    let lengths = c.u32s(notes)?;
    if !c.at_end() {
        return None;
    }
    DocLengths::from_parts(ids, lengths, rows, tokens)
}

/// The lengths in the file at `path` if it was written at `key` and is whole; `None` for
/// a missing, stale or damaged file.
pub(crate) fn read(path: &Path, key: Key<'_>) -> Option<DocLengths> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the mapping is read-only and lives only while it is decoded (copied out).
    // brain never writes this file in place, only replaces it by a rename (`write`), which
    // leaves this mapping on the old file; only another program truncating the file in
    // brain's own data dir, or an I/O error of the disk under it, could make a read fault.
    // Mapped rather than read: at 100k notes a copy of its megabyte is a tenth of a
    // millisecond more for every search without a backend.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
    let lengths = decode(&map, key);
    if lengths.is_none() {
        tracing::debug!(path = %path.display(), "lengths file is stale or damaged");
    }
    lengths
}

/// Writes `lengths` read at `key` to `path`, replacing the file whole.
pub(crate) fn write(path: &Path, lengths: &DocLengths, key: Key<'_>) -> std::io::Result<()> {
    cache_file::write(path, &encode(lengths, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths() -> DocLengths {
        DocLengths::from_parts(vec![1, 4, 9], vec![7, 0, 12], 3, 19).expect("consistent")
    }

    #[test]
    fn lengths_come_back_as_they_were_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lengths.bin");
        let key = Key {
            index_id: 42,
            version: (5, b"structure"),
        };
        write(&path, &lengths(), key).unwrap();
        let back = read(&path, key).expect("the same key");
        assert_eq!(back.parts(), lengths().parts());
        let empty = DocLengths::from_parts(Vec::new(), Vec::new(), 0, 0).unwrap();
        write(&path, &empty, key).unwrap();
        assert_eq!(read(&path, key).unwrap().parts(), empty.parts());
    }

    #[test]
    fn another_key_or_any_damage_means_reading_fts5_again() {
        let key = Key {
            index_id: 42,
            version: (5, b"structure"),
        };
        let bytes = encode(&lengths(), key);
        assert!(decode(&bytes, key).is_some());
        for other in [
            Key {
                index_id: 43,
                ..key
            },
            Key {
                version: (5, b"structurf"),
                ..key
            },
            Key {
                version: (6, b"structure"),
                ..key
            },
        ] {
            assert!(decode(&bytes, other).is_none());
        }
        for at in [0, 9, 60, bytes.len() - 9, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(decode(&bad, key).is_none(), "a flipped bit at {at}");
        }
        for cut in [0, 3, 4, 40, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], key).is_none(), "cut at {cut}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(read(&dir.path().join("missing.bin"), key).is_none());
    }
}
