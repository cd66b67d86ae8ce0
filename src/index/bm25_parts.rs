//! FTS5's BM25 of one phrase, computed from its parts instead of by `bm25()`.
//!
//! Scoring a common word with `bm25()` costs about a microsecond per matching note at 100k
//! notes, most of it not the formula: per row, FTS5 runs a statement against its docsize
//! table for the note's length. The warm backend, which scores one query word at a time
//! (see `search::term_scores`), instead asks FTS5 only for each match's weighted frequency
//! and takes the lengths from [`DocLengths`], read once per version of the notes. The
//! formula below is `fts5Bm25Function`'s, operation for operation, so the scores are FTS5's
//! to the last bit (tested against it; SQLite is compiled without fused multiply-adds, see
//! `.cargo/config.toml`, and so is Rust's arithmetic). About three times faster for a word
//! in half the notes.
//!
//! The frequencies come from one auxiliary function call, [`PHRASE_FREQUENCIES`], not one
//! per row: on the query's first row it walks every row of the phrase itself (FTS5's
//! `xQueryPhrase`, as `bm25()` does to count them), reading each row's position list: the
//! instances `bm25()` reads, in its order. A call per row spent as much in SQLite's
//! statement loop and in reading two columns of each row back as in FTS5 (a profile of
//! common words at 100k notes).

use std::ffi::{c_int, c_void, CStr};

use rusqlite::{ffi, Connection, OptionalExtension};

/// The auxiliary function: `brain_phrase_frequencies(notes_fts, w_title, w_tags, w_body)`,
/// called on the first row of a query of one phrase: every row the phrase matches, in id
/// order, with its weighted frequency (the sum over the row's instances of the phrase of
/// its column's weight: what `bm25()` calls the phrase frequency of the row), as one blob
/// of 16 bytes per row (the id, then the frequency, native-endian; see [`unpack`]).
pub(super) const PHRASE_FREQUENCIES: &CStr = c"brain_phrase_frequencies";

/// `bm25()`'s constants (FTS5 does not let them be changed).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Registers [`WEIGHTED_FREQUENCY`] on `conn` (each connection of an index has it).
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let failed = |rc: c_int, what: &str| {
        rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(format!("FTS5 {what}")))
    };
    // SAFETY: the handle is this open connection's, used on this thread only while the
    // borrow lasts; the statement is finalized on every path; `fts5(?1)` writes the API's
    // address into `api` (a pointer of the type the "fts5_api_ptr" tag promises), which
    // lives as long as the connection; the function and its name outlive the call.
    unsafe {
        let db = conn.handle();
        let mut stmt = std::ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            std::ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(rc, "is not available"));
        }
        let mut api: *mut ffi::fts5_api = std::ptr::null_mut();
        let mut rc = ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        if rc == ffi::SQLITE_OK {
            rc = ffi::sqlite3_step(stmt);
        }
        ffi::sqlite3_finalize(stmt);
        if rc != ffi::SQLITE_ROW || api.is_null() || (*api).iVersion < 2 {
            return Err(failed(rc, "API not found"));
        }
        let Some(create) = (*api).xCreateFunction else {
            return Err(failed(ffi::SQLITE_MISUSE, "cannot add functions"));
        };
        let rc = create(
            api,
            PHRASE_FREQUENCIES.as_ptr(),
            std::ptr::null_mut(),
            Some(phrase_frequencies),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(rc, "function not added"));
        }
    }
    Ok(())
}

/// The rows walked so far, and the column weights they are weighed with.
struct Walk {
    weights: Vec<f64>,
    /// 16 bytes per row: see [`PHRASE_FREQUENCIES`].
    packed: Vec<u8>,
}

/// [`PHRASE_FREQUENCIES`]. Only a query of one phrase has one frequency per row; any
/// other is an error.
unsafe extern "C" fn phrase_frequencies(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_weights: c_int,
    weights: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its own API table and cursor, valid for the call, and
    // `n_weights` values in `weights`. `walk` outlives `xQueryPhrase`, which hands it to
    // `visit` only during the call; the blob is copied by SQLite (`SQLITE_TRANSIENT`)
    // before `walk` is dropped.
    unsafe {
        let api = &*api;
        let (Some(phrases), Some(query)) = (api.xPhraseCount, api.xQueryPhrase) else {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
            return;
        };
        if phrases(fts) != 1 {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
            return;
        }
        let mut walk = Walk {
            weights: (0..n_weights.max(0) as usize)
                .map(|i| ffi::sqlite3_value_double(*weights.add(i)))
                .collect(),
            packed: Vec::new(),
        };
        let rc = query(fts, 0, (&raw mut walk).cast::<c_void>(), Some(visit));
        if rc != ffi::SQLITE_OK {
            ffi::sqlite3_result_error_code(ctx, rc);
            return;
        }
        let Ok(len) = c_int::try_from(walk.packed.len()) else {
            ffi::sqlite3_result_error_toobig(ctx);
            return;
        };
        ffi::sqlite3_result_blob(
            ctx,
            walk.packed.as_ptr().cast::<c_void>(),
            len,
            ffi::SQLITE_TRANSIENT(),
        );
    }
}

/// One row of the phrase, from `xQueryPhrase`: its id and weighted frequency onto the
/// [`Walk`] at `data`. The loop is `fts5Bm25Function`'s first, alone, over the phrase's
/// position list: `bm25()` reads the same instances, in the same (column, offset) order,
/// through `xInst`, whose per-row instance array (built for every phrase of a query, and
/// sorted) cost a tenth of a common word's walk; this query has one phrase, so its
/// position list is that array already.
unsafe extern "C" fn visit(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    data: *mut c_void,
) -> c_int {
    // SAFETY: FTS5 calls this with its own API table and a cursor on the row, valid for
    // the call, and the `Walk` that `phrase_frequencies` passed, alive and not otherwise
    // borrowed while `xQueryPhrase` runs. The iterator points into the cursor's position
    // list, read before the cursor moves.
    unsafe {
        let api = &*api;
        let walk = &mut *data.cast::<Walk>();
        let (Some(rowid), Some(first), Some(next)) =
            (api.xRowid, api.xPhraseFirst, api.xPhraseNext)
        else {
            return ffi::SQLITE_MISUSE;
        };
        let mut iter = ffi::Fts5PhraseIter {
            a: std::ptr::null(),
            b: std::ptr::null(),
        };
        let (mut column, mut offset) = (0, 0);
        let rc = first(fts, 0, &mut iter, &mut column, &mut offset);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let mut frequency = 0.0f64;
        while column >= 0 {
            frequency += usize::try_from(column)
                .ok()
                .and_then(|c| walk.weights.get(c))
                .copied()
                .unwrap_or(1.0);
            next(fts, &mut iter, &mut column, &mut offset);
        }
        walk.packed.extend_from_slice(&rowid(fts).to_ne_bytes());
        walk.packed.extend_from_slice(&frequency.to_ne_bytes());
        ffi::SQLITE_OK
    }
}

/// The rows of a [`PHRASE_FREQUENCIES`] blob: `None` when it is not one.
pub(super) fn unpack(blob: &[u8]) -> Option<Vec<(i64, f64)>> {
    if blob.len() % 16 != 0 {
        return None;
    }
    Some(
        blob.chunks_exact(16)
            .map(|row| {
                let (id, frequency) = row.split_at(8);
                (
                    i64::from_ne_bytes(id.try_into().unwrap_or_default()),
                    f64::from_ne_bytes(frequency.try_into().unwrap_or_default()),
                )
            })
            .collect(),
    )
}

/// Every note's length in tokens (all columns together, as `bm25()` reads it) and the
/// totals `bm25()` averages over: one version of the notes' full-text index.
#[derive(Debug)]
pub(crate) struct DocLengths {
    /// Note ids, ascending.
    ids: Vec<i64>,
    /// The length of the note at the same place in `ids`.
    lengths: Vec<u32>,
    /// FTS5's count of rows.
    rows: i64,
    /// FTS5's count of tokens in every row and column.
    tokens: i64,
}

impl DocLengths {
    /// Lengths from their parts (see [`DocLengths::parts`]); `None` unless they hang
    /// together as FTS5's do: one length per id, ids ascending, as many as FTS5's rows,
    /// summing to its tokens.
    pub(super) fn from_parts(
        ids: Vec<i64>,
        lengths: Vec<u32>,
        rows: i64,
        tokens: i64,
    ) -> Option<DocLengths> {
        let sum: i64 = lengths.iter().map(|&l| i64::from(l)).sum();
        let consistent = ids.len() == lengths.len()
            && i64::try_from(ids.len()).ok() == Some(rows)
            && sum == tokens
            && ids.windows(2).all(|w| w[0] < w[1]);
        consistent.then_some(DocLengths {
            ids,
            lengths,
            rows,
            tokens,
        })
    }

    /// The ids, their lengths, FTS5's rows and tokens.
    pub(super) fn parts(&self) -> (&[i64], &[u32], i64, i64) {
        (&self.ids, &self.lengths, self.rows, self.tokens)
    }

    /// Reads them from FTS5's docsize table and its averages record, in `conn`'s current
    /// transaction. `None` when they do not agree (then only `bm25()` is to be trusted).
    pub(super) fn read(conn: &Connection) -> rusqlite::Result<Option<DocLengths>> {
        let Some((notes, tokens)) = totals(conn)? else {
            return Ok(None);
        };
        let (mut ids, mut lengths) = (Vec::new(), Vec::new());
        let mut stmt = conn.prepare_cached("SELECT id, sz FROM notes_fts_docsize ORDER BY id")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let sizes = row.get_ref(1)?.as_blob()?;
            let (mut at, mut length) = (0, 0u64);
            while at < sizes.len() {
                let Some(column) = varint(sizes, &mut at) else {
                    return Ok(None);
                };
                length += column;
            }
            let Ok(length) = u32::try_from(length) else {
                return Ok(None);
            };
            ids.push(id);
            lengths.push(length);
        }
        // The averages record and the lengths are kept by FTS5 in one transaction; should
        // they ever disagree, `bm25()` would not be computing what this does.
        Ok(DocLengths::from_parts(ids, lengths, notes, tokens))
    }

    /// BM25 scores (higher is better: `-bm25()`) of the notes a one-phrase query matched,
    /// from each match's weighted frequency (`hits`: note id and frequency, in id order, the
    /// query's every match). `None` when a hit is not among these lengths (they were read
    /// from another version of the notes).
    pub fn scores(&self, hits: &[(i64, f64)]) -> Option<Vec<(i64, f64)>> {
        if self.rows <= 0 {
            return hits.is_empty().then(Vec::new);
        }
        let avgdl = self.tokens as f64 / self.rows as f64;
        let n_hit = hits.len() as i64;
        let mut idf = (((self.rows - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
        if idf <= 0.0 {
            idf = 1e-6;
        }
        let mut at = 0;
        let mut out = Vec::with_capacity(hits.len());
        for &(id, frequency) in hits {
            at = self.position(id, at)?;
            let length = f64::from(self.lengths[at]);
            let mut score = 0.0;
            score += idf
                * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1.0 - B + B * length / avgdl)));
            // `bm25()` returns `-1.0 * score`, which the SQL negates again: both exact.
            out.push((id, score));
        }
        Some(out)
    }

    /// Where `id` is in `ids`, searching from `from` on (hits come in id order): galloping,
    /// so that a word in every note walks the list and a rare one jumps.
    fn position(&self, id: i64, from: usize) -> Option<usize> {
        let rest = self.ids.get(from..)?;
        let mut end = 1;
        while end < rest.len() && rest[end - 1] < id {
            end *= 2;
        }
        let end = end.min(rest.len());
        let found = rest[..end].binary_search(&id).ok()?;
        Some(from + found)
    }
}

/// FTS5's count of rows and of tokens in every row and column, from its averages record
/// (none yet: zero and zero); `None` when the record cannot be read as one.
pub(super) fn totals(conn: &Connection) -> rusqlite::Result<Option<(i64, i64)>> {
    let block: Option<Vec<u8>> = conn
        .prepare_cached("SELECT block FROM notes_fts_data WHERE id = 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    let Some(block) = block.filter(|b| !b.is_empty()) else {
        return Ok(Some((0, 0)));
    };
    let mut at = 0;
    let Some(rows) = varint(&block, &mut at) else {
        return Ok(None);
    };
    let mut tokens: i64 = 0;
    while at < block.len() {
        let Some(column) = varint(&block, &mut at) else {
            return Ok(None);
        };
        tokens = tokens.wrapping_add(column as i64);
    }
    Ok(Some((rows as i64, tokens)))
}

/// SQLite's variable-length integer at `bytes[*at..]` (big-endian groups of seven bits, a
/// set high bit meaning more follow; the ninth byte gives all eight), moving `at` past it.
fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    for i in 0..9 {
        let byte = *bytes.get(*at + i)?;
        if i == 8 {
            *at += 9;
            return Some((value << 8) | u64::from(byte));
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            *at += i + 1;
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_of_frequencies_unpacks_to_its_rows_and_nothing_else_does() {
        let mut blob = Vec::new();
        for (id, f) in [(3i64, 1.5f64), (9, 4.0)] {
            blob.extend_from_slice(&id.to_ne_bytes());
            blob.extend_from_slice(&f.to_ne_bytes());
        }
        assert_eq!(unpack(&blob), Some(vec![(3, 1.5), (9, 4.0)]));
        assert_eq!(unpack(&[]), Some(Vec::new()));
        assert_eq!(unpack(&blob[..20]), None);
    }

    #[test]
    fn varints_are_sqlites() {
        let read = |bytes: &[u8]| {
            let mut at = 0;
            varint(bytes, &mut at).map(|v| (v, at))
        };
        assert_eq!(read(&[0x05]), Some((5, 1)));
        assert_eq!(read(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(read(&[0x82, 0x80, 0x01]), Some((2 * 16384 + 1, 3)));
        assert_eq!(read(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(read(&[0x81]), None, "cut short");
        assert_eq!(read(&[]), None);
    }

    #[test]
    fn positions_are_found_from_anywhere_and_missing_ids_are_none() {
        let lengths = DocLengths {
            ids: (0..1000).map(|i| i * 3).collect(),
            lengths: vec![1; 1000],
            rows: 1000,
            tokens: 1000,
        };
        assert_eq!(lengths.position(0, 0), Some(0));
        assert_eq!(lengths.position(2997, 0), Some(999));
        assert_eq!(lengths.position(2997, 999), Some(999));
        assert_eq!(lengths.position(300, 5), Some(100));
        assert_eq!(lengths.position(301, 0), None);
        assert_eq!(lengths.position(3, 2), None, "behind the start");
        assert_eq!(lengths.scores(&[(3, 1.0), (4, 1.0)]), None);
    }
}
