//! Chunk vectors: little-endian f32 BLOBs keyed by the chunk text's SHA-256, for the model
//! named in `meta.embed_model` (dimension in `meta.embed_dim`). A different model clears
//! them all; an unchanged chunk keeps its vector through renames and touches.

use rusqlite::{params, Connection, Transaction};

use super::set_meta;

/// A passage that needs a vector.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The chunk text's SHA-256 (the vector's key).
    pub hash: Vec<u8>,
    /// The text to embed.
    pub text: String,
}

/// The model and dimension the stored vectors belong to, if any.
pub fn stored_model(conn: &Connection) -> rusqlite::Result<Option<(String, usize)>> {
    let get = |k: &str| super::meta(conn, k);
    Ok(match (get("embed_model")?, get("embed_dim")?) {
        (Some(m), Some(d)) => d.parse().ok().map(|d| (m, d)),
        _ => None,
    })
}

/// Makes the stored vectors belong to `model`: when another model (or dimension) made
/// them, they are all deleted so everything is re-embedded. Returns true when it cleared.
pub fn claim_for_model(tx: &Transaction, model: &str, dim: usize) -> rusqlite::Result<bool> {
    let current = stored_model(tx)?;
    if current
        .as_ref()
        .is_some_and(|(m, d)| m == model && *d == dim)
    {
        return Ok(false);
    }
    tx.execute("DELETE FROM vectors", [])?;
    if current.is_some() {
        // A matrix file written before holds vectors that are gone: with a new identity
        // (`super::ensure_id` at the next open) it is never brought up to date again.
        tx.execute("DELETE FROM meta WHERE key = ?1", [super::INDEX_ID])?;
    }
    set_meta(tx, "embed_model", model)?;
    set_meta(tx, "embed_dim", &dim.to_string())?;
    bump_version(tx)?;
    Ok(current.is_some())
}

/// The newest passage row's id: passages written after it (by a sync during an embedding
/// pass) are [`pending`]'s first.
pub fn newest_chunk(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COALESCE(MAX(id), 0) FROM chunks", [], |r| r.get(0))
}

/// The passages whose text has no vector yet: one definition for every query of them.
macro_rules! without_vector {
    () => {
        "FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.hash = c.hash)"
    };
}

/// The order a pass takes pending texts in, after any written since it began.
macro_rules! shortest_first {
    () => {
        "length(MIN(c.text))"
    };
}

/// Distinct chunk texts without a vector: those of passages written after row `fresh_after`
/// first (a note saved during a long backlog is searchable by meaning after the batch in
/// progress, not after the whole backlog), then shortest first (the most passages, and so
/// the most notes, embedded soonest). Chunk ids only grow (`AUTOINCREMENT`).
pub fn pending(
    conn: &Connection,
    limit: usize,
    fresh_after: i64,
) -> rusqlite::Result<Vec<Pending>> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT c.hash, MIN(c.text) ",
        without_vector!(),
        " GROUP BY c.hash ORDER BY MAX(c.id) > ?2 DESC, ",
        shortest_first!(),
        " LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit as i64, fresh_after], |r| {
        Ok(Pending {
            hash: r.get(0)?,
            text: r.get(1)?,
        })
    })?;
    rows.collect()
}

/// The lengths, in bytes, of the distinct chunk texts without a vector, in the order
/// [`pending`] gives them to a pass that begins now (shortest first).
pub fn pending_lengths(conn: &Connection) -> rusqlite::Result<Vec<u64>> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT length(CAST(MIN(c.text) AS BLOB)) ",
        without_vector!(),
        " GROUP BY c.hash ORDER BY ",
        shortest_first!()
    ))?;
    let rows = stmt.query_map([], |r| r.get::<_, i64>(0))?;
    rows.map(|n| n.map(|n| n.max(0) as u64)).collect()
}

/// The passages (`chunks.id`) of note `note_id` that have a vector, in id order.
pub fn embedded_chunks(conn: &Connection, note_id: i64) -> rusqlite::Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id FROM chunks c WHERE c.note_id = ?1
           AND EXISTS (SELECT 1 FROM vectors v WHERE v.hash = c.hash) ORDER BY c.id",
    )?;
    let rows = stmt.query_map([note_id], |r| r.get(0))?;
    rows.collect()
}

/// How many distinct chunk texts have no vector: the [`recorded`] count when there is one
/// for the current version, else a scan of every passage.
pub fn pending_count(conn: &Connection) -> rusqlite::Result<u64> {
    if let Some(n) = recorded(conn)? {
        return Ok(n);
    }
    scan_pending(conn)
}

/// Scans for the pending count and returns it with the version read before the scan:
/// what [`record`] needs to store it safely.
pub fn count_pending(conn: &Connection) -> rusqlite::Result<(i64, u64)> {
    let before = version(conn)?;
    Ok((before, scan_pending(conn)?))
}

/// Counts the distinct chunk texts without a vector, always by a scan.
pub fn scan_pending(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row(
        concat!("SELECT COUNT(DISTINCT c.hash) ", without_vector!()),
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n as u64)
}

/// Stores vectors for `hashes` (same order).
pub fn store(tx: &Transaction, hashes: &[Vec<u8>], vectors: &[Vec<f32>]) -> rusqlite::Result<()> {
    let mut stmt =
        // The first vector stored for a text stays (two passes may embed the same text):
        // a matrix file that holds it stays right.
        tx.prepare_cached(
            "INSERT INTO vectors(hash, vec) VALUES (?1, ?2) ON CONFLICT(hash) DO NOTHING",
        )?;
    for (hash, vec) in hashes.iter().zip(vectors) {
        stmt.execute(params![hash, to_blob(vec)])?;
    }
    bump_version(tx)
}

/// Deletes the vectors no chunk refers to any more (notes deleted or edited) past the
/// number in use (and [`KEPT_UNUSED`]): only the excess goes, which ones arbitrary. A
/// brain whose notes all leave at once (a notes disk unmounted) keeps [`KEPT_UNUSED`] of
/// them; half its notes leaving keep all theirs. Kept, a note that leaves
/// and comes back unchanged (a folder moved out and back, a git branch switched and
/// switched back, a backup restored, a notes disk unmounted under the backend) finds its
/// passages' vectors still there instead of being embedded again, minutes of work; the
/// bound keeps the vectors at most about twice what the notes need. Searches never see
/// them: the matrix is the passages' vectors ([`for_each_vector`]).
pub fn collect_garbage(tx: &Transaction) -> rusqlite::Result<usize> {
    let (all, unused): (i64, i64) = tx.query_row(
        "SELECT count(*), count(*) FILTER (WHERE hash NOT IN (SELECT hash FROM chunks)) FROM vectors",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let excess = unused - (all - unused).max(KEPT_UNUSED);
    if excess <= 0 {
        return Ok(0);
    }
    // Which of them goes is arbitrary (the table keeps no age): the first by hash.
    tx.execute(
        "DELETE FROM vectors WHERE hash IN
           (SELECT hash FROM vectors WHERE hash NOT IN (SELECT hash FROM chunks) LIMIT ?1)",
        [excess],
    )
}

/// Unused vectors always kept, however few are in use: a small brain emptied and refilled.
const KEPT_UNUSED: i64 = 1000;

/// A counter that moves whenever chunks or vectors change, so a cached matrix knows when
/// it is stale without reloading anything.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    super::counter(conn, VERSION_KEY)
}

/// Where [`version`] is kept in `meta`.
const VERSION_KEY: &str = "vectors_version";

/// The pending count recorded at the current [`version`], if any. Every change to
/// passages or vectors moves the version, so a record is never stale; it is how a
/// no-change `brain index` at 100k notes skips two scans of every passage.
pub fn recorded(conn: &Connection) -> rusqlite::Result<Option<u64>> {
    let at = super::meta(conn, "vectors_pending")?;
    let Some((v, n)) = at.as_deref().and_then(|a| a.split_once(' ')) else {
        return Ok(None);
    };
    match (v.parse::<i64>(), n.parse::<u64>()) {
        (Ok(v), Ok(n)) if v == version(conn)? => Ok(Some(n)),
        _ => Ok(None),
    }
}

/// Records `pending` as the count at version `expected`, if the version is still that:
/// `expected` is the version read before the count (plus one for each store since). Any
/// other value means another writer changed passages meanwhile, and the next one counts.
pub fn record(tx: &Transaction, expected: i64, pending: u64) -> rusqlite::Result<bool> {
    if version(tx)? != expected {
        return Ok(false);
    }
    set_meta(tx, "vectors_pending", &format!("{expected} {pending}"))?;
    Ok(true)
}

/// Drops the [`record`]: what a sync does in each batch that changes passages, before the
/// version moves at its end.
pub fn forget_record(tx: &Transaction) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM meta WHERE key = 'vectors_pending'")?
        .execute([])?;
    Ok(())
}

/// Moves [`version`] on (from a random start in a new index: the matrix file next to the
/// index, `search::matrix_file`, is keyed by it).
pub fn bump_version(conn: &Connection) -> rusqlite::Result<()> {
    super::bump_counter(conn, VERSION_KEY)
}

/// Bytes of the index file SQLite may map when the vectors are read (more than any brain's
/// index; SQLite clamps it to its compile-time limit).
const VECTORS_MMAP: u64 = 1 << 34;

/// Every chunk that has a vector: (chunk id, note id, vector), in chunk id order.
pub fn for_each_vector(
    conn: &Connection,
    mut f: impl FnMut(i64, i64, &[u8]),
) -> rusqlite::Result<()> {
    // Read the blobs through a memory map: with one `pread` per page, loading tldr's 8k
    // vectors was a third of a search without a backend (230 -> 158 ms). Only for this
    // read, then unmapped: the connection goes back to its pool, and a keyword search,
    // which touches few pages, gained nothing from the map. (The cost of a map: an I/O
    // error on the index file is a SIGBUS instead of an error; the data dir is local.)
    // Either pragma failing only loses the speed.
    let _ = conn.execute_batch(&format!("PRAGMA mmap_size = {VECTORS_MMAP};"));
    let read = read_vectors(conn, &mut f);
    let _ = conn.execute_batch("PRAGMA mmap_size = 0;");
    read
}

fn read_vectors(conn: &Connection, f: &mut impl FnMut(i64, i64, &[u8])) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.note_id, v.vec FROM chunks c JOIN vectors v ON v.hash = c.hash ORDER BY c.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let blob = row.get_ref(2)?.as_blob()?;
        f(row.get(0)?, row.get(1)?, blob);
    }
    Ok(())
}

/// The exact vectors of the passages `chunk_ids` (the ones that have one), for re-scoring
/// the best rows of an int8 scan.
pub fn of_chunks(
    conn: &Connection,
    chunk_ids: &[i64],
) -> rusqlite::Result<std::collections::HashMap<i64, Vec<f32>>> {
    let ids = serde_json::to_string(chunk_ids).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, v.vec FROM json_each(?1) j
         JOIN chunks c ON c.id = j.value JOIN vectors v ON v.hash = c.hash",
    )?;
    let mut rows = stmt.query([ids])?;
    let mut out = std::collections::HashMap::with_capacity(chunk_ids.len());
    while let Some(row) = rows.next()? {
        let mut v = Vec::new();
        if extend_from_blob(&mut v, row.get_ref(1)?.as_blob()?) {
            out.insert(row.get(0)?, v);
        }
    }
    Ok(out)
}

/// Every passage as `(chunks.id, note_id)`, in chunk id order, without its text or vector:
/// what a stale matrix is brought up to date against. Within one index a passage id
/// always names the same text (edits delete passages and insert new ones, and ids are
/// never reused), so a row the matrix already has is still right.
pub fn passage_rows(conn: &Connection) -> rusqlite::Result<Vec<(i64, i64)>> {
    let mut stmt = conn.prepare_cached("SELECT id, note_id FROM chunks")?;
    let mut rows: Vec<(i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    rows.sort_unstable();
    Ok(rows)
}

/// f32 -> little-endian bytes.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes -> f32s, appended to `out`. Returns false when the length is not a
/// whole number of floats.
pub fn extend_from_blob(out: &mut Vec<f32>, blob: &[u8]) -> bool {
    if blob.len() % 4 != 0 {
        return false;
    }
    out.extend(
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_round_trip() {
        let v = vec![1.0f32, -2.5, f32::MIN_POSITIVE];
        let mut back = Vec::new();
        assert!(extend_from_blob(&mut back, &to_blob(&v)));
        assert_eq!(back, v);
        assert!(!extend_from_blob(&mut back, &[1, 2, 3]));
    }

    #[test]
    fn unused_vectors_are_kept_until_they_outnumber_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let index = crate::index::Index::open(&dir.path().join("brain.sqlite")).unwrap();
        let add = |from: u32, n: u32| {
            index
                .write(|tx| {
                    let hashes: Vec<Vec<u8>> =
                        (from..from + n).map(|i| i.to_be_bytes().to_vec()).collect();
                    let vecs = vec![vec![1.0f32; 4]; hashes.len()];
                    store(tx, &hashes, &vecs)
                })
                .unwrap()
        };
        let collect = || index.write(collect_garbage).unwrap();
        let count = || -> i64 {
            index
                .conn()
                .unwrap()
                .query_row("SELECT count(*) FROM vectors", [], |r| r.get(0))
                .unwrap()
        };
        add(0, KEPT_UNUSED as u32);
        assert_eq!(collect(), 0);
        assert_eq!(count(), KEPT_UNUSED);
        add(KEPT_UNUSED as u32, 5);
        assert_eq!(collect(), 5, "only the excess goes");
        assert_eq!(count(), KEPT_UNUSED);
    }

    #[test]
    fn an_index_has_an_identity_until_its_vectors_are_cleared_and_a_new_one_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("brain.sqlite");
        let id = |index: &crate::index::Index| {
            super::super::counter(&index.conn().unwrap(), super::super::INDEX_ID).unwrap()
        };
        let claim = |index: &crate::index::Index, model: &str| {
            index
                .write(|tx| claim_for_model(tx, model, 4).map(|_| ()))
                .unwrap()
        };
        let index = crate::index::Index::open(&path).unwrap();
        let first = id(&index);
        assert!(first > 0, "set when opened");
        claim(&index, "a");
        assert_eq!(id(&index), first, "the first model had no vectors to clear");
        claim(&index, "a");
        assert_eq!(id(&index), first, "the same model keeps its vectors");
        claim(&index, "b");
        assert_eq!(
            id(&index),
            0,
            "another model clears the vectors and the identity"
        );
        let index = crate::index::Index::open(&path).unwrap();
        let second = id(&index);
        assert!(second > 0 && second != first, "a new one at the next open");
    }

    #[test]
    fn versions_start_at_random_and_then_count() {
        let start = |conn: &Connection| {
            conn.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                .unwrap();
            assert_eq!(
                version(conn).unwrap(),
                0,
                "no version before the first change"
            );
            bump_version(conn).unwrap();
            version(conn).unwrap()
        };
        let a = Connection::open_in_memory().unwrap();
        let b = Connection::open_in_memory().unwrap();
        let (va, vb) = (start(&a), start(&b));
        assert!((1..=1 << 52).contains(&va) && vb >= 1, "{va} {vb}");
        assert_ne!(va, vb, "two new indexes share a version");
        bump_version(&a).unwrap();
        assert_eq!(version(&a).unwrap(), va + 1);
    }
}
