//! Semantic search: every passage vector in one contiguous row-major matrix, scored
//! against the query vector by dot product (vectors are normalised, so this is cosine
//! similarity). Below ~10^5 passages a brute-force scan beats any index.
//!
//! The matrix holds each vector as int8 with one f32 scale per row: a quarter of the memory
//! of f32 (100k passages x 768 dims: 77 MB instead of 307 MB) and a scan that reads a
//! quarter of the bytes. The approximation moves a cosine by about 0.002; the search
//! re-scores its best [`RERANK_ROWS`] rows with the exact f32 vectors from the index (see
//! `search::pipeline`), so the ranked list is the exact one (measured in the README).

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::codes::Codes;
use super::shortlist::{self, Shortlist};

/// Rows scored per parallel task: big enough that threading pays for itself.
const ROWS_PER_TASK: usize = 4096;

/// How many of the best rows by the int8 scan are scored again with exact vectors.
pub const RERANK_ROWS: usize = 256;

/// All passage vectors of one model, loaded once, stored as int8.
#[derive(Debug, Default)]
pub struct Matrix {
    dim: usize,
    codes: Codes,
    /// Per row: the value one step of its codes stands for (`max |x| / 127`).
    scales: Vec<f32>,
    chunk_ids: Vec<i64>,
    note_ids: Vec<i64>,
    /// Per row: its note's slot, a dense index, so the best passage of every note is found
    /// with array writes instead of a hash map per query.
    slots: Vec<u32>,
    /// Note id -> slot.
    slot_of: HashMap<i64, u32>,
    /// A scratch row for decoding blobs.
    scratch: Vec<f32>,
    /// One-bit sketches of the rows, in a large brain's warm backend (see
    /// [`Matrix::with_shortlist`]).
    shortlist: Option<Shortlist>,
}

/// A note's best chunk for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SemHit {
    /// `notes.id`.
    pub note_id: i64,
    /// `chunks.id` of the best-scoring passage.
    pub chunk_id: i64,
    /// Cosine similarity of that passage.
    pub score: f32,
}

impl Matrix {
    /// An empty matrix for vectors of length `dim`.
    pub fn new(dim: usize) -> Matrix {
        Matrix {
            dim,
            ..Default::default()
        }
    }

    /// Adds one chunk's vector. Vectors of the wrong length are refused (returns false).
    pub fn push(&mut self, chunk_id: i64, note_id: i64, vector: &[f32]) -> bool {
        if vector.len() != self.dim {
            return false;
        }
        self.scales.push(quantize(vector, self.codes.to_mut()));
        self.push_ids(chunk_id, note_id);
        true
    }

    /// Adds row `row` of `other` (a matrix of the same dimension) as it is, codes and
    /// scale: what quantizing its vector again would give.
    pub(crate) fn push_row_of(&mut self, other: &Matrix, row: usize) {
        debug_assert_eq!(self.dim, other.dim);
        self.codes.to_mut().extend_from_slice(other.codes(row));
        self.scales.push(other.scales[row]);
        self.push_ids(other.chunk_ids[row], other.note_ids[row]);
    }

    fn push_ids(&mut self, chunk_id: i64, note_id: i64) {
        self.chunk_ids.push(chunk_id);
        self.note_ids.push(note_id);
        let next = self.slot_of.len() as u32;
        self.slots
            .push(*self.slot_of.entry(note_id).or_insert(next));
    }

    /// A matrix from the parts [`Matrix::parts`] gave (see [`super::matrix_file`]); `None`
    /// when their lengths disagree.
    pub(crate) fn from_parts(
        dim: usize,
        codes: Codes,
        scales: Vec<f32>,
        chunk_ids: Vec<i64>,
        note_ids: Vec<i64>,
    ) -> Option<Matrix> {
        let rows = chunk_ids.len();
        if note_ids.len() != rows || scales.len() != rows || codes.len() != rows.checked_mul(dim)? {
            return None;
        }
        let mut slot_of: HashMap<i64, u32> = HashMap::new();
        let slots = note_ids
            .iter()
            .map(|&n| {
                let next = slot_of.len() as u32;
                *slot_of.entry(n).or_insert(next)
            })
            .collect();
        Some(Matrix {
            dim,
            codes,
            scales,
            chunk_ids,
            note_ids,
            slots,
            slot_of,
            scratch: Vec::new(),
            shortlist: None,
        })
    }

    /// The same matrix with one-bit sketches of its rows, when it holds at least
    /// [`shortlist::MIN_ROWS`] of them (or `any_size`, to measure the shortlist on a small
    /// corpus): a semantic search without filters then scores with int8 codes only the
    /// rows its sketch puts near the query, and every other row of the notes they belong
    /// to. For the warm backend: building the sketches reads every row once, as a scan does.
    pub(crate) fn with_shortlist(mut self, any_size: bool) -> Matrix {
        if self.is_empty() || (!any_size && self.len() < shortlist::MIN_ROWS) {
            return self;
        }
        let m = &self;
        let built = Shortlist::build(m.dim, &m.slots, m.slot_of.len(), |r, out| {
            let s = m.scales[r];
            out.iter_mut()
                .zip(m.codes(r))
                .for_each(|(o, &c)| *o = f32::from(c) * s);
        });
        self.shortlist = Some(built);
        self
    }

    /// The rows a search scores when the matrix has sketches: the nearest by sketch, then
    /// every row of each of their notes. `None` without sketches (score every row).
    pub(crate) fn shortlist(&self, query: &[f32]) -> Option<Vec<u32>> {
        let s = self.shortlist.as_ref()?;
        let keep = (self.len() / shortlist::KEEP_ONE_IN).max(RERANK_ROWS);
        let mut taken = vec![false; self.slot_of.len()];
        let mut rows = Vec::new();
        for r in s.nearest(query, keep) {
            let slot = self.slots[r as usize];
            if !std::mem::replace(&mut taken[slot as usize], true) {
                rows.extend_from_slice(s.rows_of(slot));
            }
        }
        Some(rows)
    }

    /// `query` as int8 codes with a scale, as every approximate score of it reads it.
    pub(crate) fn quantized(&self, query: &[f32]) -> Quantized {
        assert_eq!(query.len(), self.dim, "query vector length");
        let mut codes = Vec::with_capacity(self.dim);
        let scale = quantize(query, &mut codes);
        Quantized { codes, scale }
    }

    /// Like [`Matrix::scores`] for `rows` only (of the query `q`); every other row scores
    /// minus infinity.
    pub(crate) fn scores_of_rows(&self, q: &Quantized, rows: &[u32]) -> Vec<f32> {
        let found: Vec<f32> = rows
            .par_chunks(ROWS_PER_TASK / 4)
            .flat_map_iter(|chunk| {
                chunk.iter().enumerate().map(|(j, &r)| {
                    // The rows are far apart (about one in eight of the matrix), too far for
                    // the CPU to guess the next: ask for a later one while this one is scored.
                    if let Some(&ahead) = chunk.get(j + PREFETCH_AHEAD) {
                        prefetch(self.codes(ahead as usize));
                    }
                    let r = r as usize;
                    approx(self.codes(r), self.scales[r], q)
                })
            })
            .collect();
        let mut out = vec![f32::NEG_INFINITY; self.len()];
        for (&r, score) in rows.iter().zip(found) {
            out[r as usize] = score;
        }
        out
    }

    /// The same matrix holding its codes in its own memory, copied out of the matrix file
    /// when they were read in place: for a process that keeps the matrix for days (the
    /// warm backend), which should not depend on the file's pages staying readable.
    pub(crate) fn into_owned(mut self) -> Matrix {
        self.codes.to_mut();
        self
    }

    /// Codes, scales, chunk ids and note ids, row by row: what identifies the matrix.
    pub(crate) fn parts(&self) -> (&[i8], &[f32], &[i64], &[i64]) {
        (
            &self.codes[..],
            &self.scales,
            &self.chunk_ids,
            &self.note_ids,
        )
    }

    /// Adds a vector stored as little-endian bytes.
    pub fn push_blob(&mut self, chunk_id: i64, note_id: i64, blob: &[u8]) -> bool {
        if blob.len() != self.dim * 4 {
            return false;
        }
        let mut row = std::mem::take(&mut self.scratch);
        row.clear();
        crate::index::vectors::extend_from_blob(&mut row, blob);
        let ok = self.push(chunk_id, note_id, &row);
        self.scratch = row;
        ok
    }

    /// Number of chunk vectors.
    pub fn len(&self) -> usize {
        self.chunk_ids.len()
    }

    /// True when there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.chunk_ids.is_empty()
    }

    /// Vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Bytes the vectors take in memory (codes and scales, and sketches when built).
    pub fn vector_bytes(&self) -> usize {
        self.codes.len()
            + self.scales.len() * 4
            + self.shortlist.as_ref().map_or(0, Shortlist::bytes)
    }

    /// The note of each row, in row order.
    pub fn note_ids(&self) -> &[i64] {
        &self.note_ids
    }

    /// The passage (`chunks.id`) of each row, in row order.
    pub fn chunk_ids(&self) -> &[i64] {
        &self.chunk_ids
    }

    fn codes(&self, i: usize) -> &[i8] {
        &self.codes[i * self.dim..(i + 1) * self.dim]
    }

    /// The (approximate) similarity of rows `a` and `b`.
    pub fn row_dot(&self, a: usize, b: usize) -> f32 {
        dot_i8(self.codes(a), self.codes(b)) as f32 * self.scales[a] * self.scales[b]
    }

    /// The approximate similarity of every chunk to `query`, in row order.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        let q = self.quantized(query);
        let mut out = vec![0f32; self.len()];
        let dim = self.dim;
        let rows = self.codes.par_chunks(dim * ROWS_PER_TASK);
        out.par_chunks_mut(ROWS_PER_TASK)
            .zip(rows)
            .zip(self.scales.par_chunks(ROWS_PER_TASK))
            .for_each(|((out, rows), scales)| {
                for ((o, row), s) in out.iter_mut().zip(rows.chunks_exact(dim)).zip(scales) {
                    *o = approx(row, *s, &q);
                }
            });
        out
    }

    /// The `n` best of `rows` by `scores`, in no particular order.
    pub(crate) fn best_rows_among(&self, scores: &[f32], rows: &[u32], n: usize) -> Vec<usize> {
        best_of(rows.iter().map(|&r| r as usize).collect(), scores, n)
    }

    /// The `n` best rows by `scores` among the allowed notes, in no particular order.
    pub fn best_rows(
        &self,
        scores: &[f32],
        n: usize,
        allowed: Option<&HashSet<i64>>,
    ) -> Vec<usize> {
        let rows: Vec<usize> = (0..self.len())
            .filter(|&i| allowed.is_none_or(|a| a.contains(&self.note_ids[i])))
            .collect();
        best_of(rows, scores, n)
    }

    /// The `limit` best notes by their best chunk, best first. `allowed` restricts notes
    /// (filters); `None` allows all. Approximate (no re-rank): for tests and tools.
    pub fn top_notes(
        &self,
        query: &[f32],
        limit: usize,
        allowed: Option<&HashSet<i64>>,
    ) -> Vec<SemHit> {
        self.note_scores(&self.scores(query), allowed).top(limit)
    }

    /// Every allowed note's best chunk by `scores` (one per row): the ranked list, and
    /// the similarity of any note the keyword list found deeper than the semantic list goes.
    pub fn note_scores(&self, scores: &[f32], allowed: Option<&HashSet<i64>>) -> NoteScores<'_> {
        let mut best: Vec<Option<(f32, u32)>> = vec![None; self.slot_of.len()];
        for (i, &score) in scores.iter().enumerate().take(self.len()) {
            if allowed.is_some_and(|a| !a.contains(&self.note_ids[i])) {
                continue;
            }
            keep_best(&mut best[self.slots[i] as usize], score, i as u32);
        }
        NoteScores {
            matrix: Some(self),
            best,
            query: None,
            touched: None,
        }
    }

    /// Like [`Matrix::note_scores`] over `rows` only (a shortlist holding every row of each
    /// note it holds), of the query `q`: a note outside it is scored when asked for (see
    /// [`NoteScores::get`]).
    pub(crate) fn note_scores_among(
        &self,
        scores: &[f32],
        rows: &[u32],
        q: Quantized,
    ) -> NoteScores<'_> {
        let mut best: Vec<Option<(f32, u32)>> = vec![None; self.slot_of.len()];
        let mut touched = Vec::new();
        for &r in rows {
            let s = self.slots[r as usize];
            if best[s as usize].is_none() {
                touched.push(s);
            }
            keep_best(&mut best[s as usize], scores[r as usize], r);
        }
        NoteScores {
            matrix: Some(self),
            best,
            query: Some(q),
            touched: Some(touched),
        }
    }
}

/// How many rows ahead [`Matrix::scores_of_rows`] asks for the codes it will read.
const PREFETCH_AHEAD: usize = 4;

/// Asks the CPU to start bringing `bytes` into its cache: a hint, on x86-64 only (Rust has
/// no stable prefetch for arm64, where this does nothing).
#[inline(always)]
fn prefetch(bytes: &[i8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch never faults and reads nothing; the address is in bounds.
        unsafe { std::arch::x86_64::_mm_prefetch(line.as_ptr(), std::arch::x86_64::_MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// A query's int8 codes and their scale (see [`Matrix::quantized`]).
#[derive(Debug, Clone)]
pub(crate) struct Quantized {
    codes: Vec<i8>,
    scale: f32,
}

/// The approximate dot product of a row (its codes and scale) with a query.
#[inline(always)]
fn approx(row: &[i8], scale: f32, q: &Quantized) -> f32 {
    dot_i8(row, &q.codes) as f32 * scale * q.scale
}

/// Makes `row` a note's best when it scores higher than the best so far: of equal rows, the
/// first seen stays (rows are seen in row order).
#[inline(always)]
fn keep_best(best: &mut Option<(f32, u32)>, score: f32, row: u32) {
    if best.is_none_or(|(b, _)| score > b) {
        *best = Some((score, row));
    }
}

/// The `n` best of `rows` by `scores`, in no particular order.
fn best_of(mut rows: Vec<usize>, scores: &[f32], n: usize) -> Vec<usize> {
    if rows.len() > n && n > 0 {
        rows.select_nth_unstable_by(n - 1, |&a, &b| scores[b].total_cmp(&scores[a]));
        rows.truncate(n);
    }
    rows
}

/// Appends `v` as int8 codes to `out` and returns the scale (`max |x| / 127`; 0 for a zero
/// vector, whose codes are all 0).
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.extend(std::iter::repeat_n(0i8, v.len()));
        return 0.0;
    }
    let inv = 127.0 / max;
    out.extend(
        v.iter()
            .map(|x| (x * inv).round().clamp(-127.0, 127.0) as i8),
    );
    max / 127.0
}

/// The best passage of every note for one query.
#[derive(Debug, Default)]
pub struct NoteScores<'a> {
    matrix: Option<&'a Matrix>,
    /// Per note slot: the best score and its row.
    best: Vec<Option<(f32, u32)>>,
    /// The query's int8 codes and scale, when `best` holds only a shortlist's notes: any
    /// other note is scored from its rows when asked for.
    query: Option<Quantized>,
    /// The slots `best` holds a score for, when only a shortlist's: [`NoteScores::top`]
    /// then looks at those, not at every note.
    touched: Option<Vec<u32>>,
}

impl NoteScores<'_> {
    fn hit(&self, score: f32, row: u32) -> Option<SemHit> {
        let m = self.matrix?;
        Some(SemHit {
            note_id: m.note_ids[row as usize],
            chunk_id: m.chunk_ids[row as usize],
            score,
        })
    }

    /// The `limit` best notes, best first (ties by note id).
    pub fn top(&self, limit: usize) -> Vec<SemHit> {
        if limit == 0 {
            return Vec::new();
        }
        let order =
            |a: &SemHit, b: &SemHit| b.score.total_cmp(&a.score).then(a.note_id.cmp(&b.note_id));
        let mut hits: Vec<SemHit> = match &self.touched {
            Some(slots) => slots
                .iter()
                .filter_map(|&s| self.best[s as usize])
                .filter_map(|(score, row)| self.hit(score, row))
                .collect(),
            None => self
                .best
                .iter()
                .flatten()
                .filter_map(|&(score, row)| self.hit(score, row))
                .collect(),
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits
    }

    /// Note `id`'s best passage, when it has a vector (and passes the filter).
    pub fn get(&self, id: i64) -> Option<SemHit> {
        let m = self.matrix?;
        let slot = *m.slot_of.get(&id)?;
        if let Some((score, row)) = *self.best.get(slot as usize)? {
            return self.hit(score, row);
        }
        // Outside the shortlist: a note the keyword list found, scored as the scan would.
        let q = self.query.as_ref()?;
        let rows = m.shortlist.as_ref()?.rows_of(slot);
        let mut best = None;
        for &r in rows {
            let i = r as usize;
            keep_best(&mut best, approx(m.codes(i), m.scales[i], q), r);
        }
        let (score, row) = best?;
        self.hit(score, row)
    }
}

/// Dot product. On x86_64 CPUs with AVX2 and FMA (nearly all since 2013) the same loop is
/// compiled a second time with those instructions enabled and picked at run time; the
/// portable build only assumes SSE2.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports the features this copy of the loop was compiled for.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_portable(a, b)
}

/// Sixteen independent accumulators so the loop vectorises and pipelines; plain `+=` of a
/// product (not `mul_add`, which without FMA in the target is a slow library call).
#[inline(always)]
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0f32; LANES];
    let n = a.len().min(b.len());
    let (ca, ra) = a[..n].split_at(n / LANES * LANES);
    let (cb, rb) = b[..n].split_at(ca.len());
    for (x, y) in ca.chunks_exact(LANES).zip(cb.chunks_exact(LANES)) {
        for k in 0..LANES {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Dot product of int8 codes, exact in i32 (384 or 768 products of at most 127^2 fit many
/// times over). Compiled twice on x86_64 like [`dot`]; on Apple Silicon the portable loop
/// vectorises with NEON.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports the features this copy of the loop was compiled for.
            return unsafe { dot_i8_avx2(a, b) };
        }
    }
    dot_i8_portable(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_portable(a, b)
}

/// Products widened to i16 (exact: 127 x 127 < 2^15), summed in 32 i32 lanes.
#[inline(always)]
fn dot_i8_portable(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 32;
    let mut acc = [0i32; LANES];
    let n = a.len().min(b.len());
    let (ca, ra) = a[..n].split_at(n / LANES * LANES);
    let (cb, rb) = b[..n].split_at(ca.len());
    for (x, y) in ca.chunks_exact(LANES).zip(cb.chunks_exact(LANES)) {
        for k in 0..LANES {
            acc[k] += i32::from(i16::from(x[k]) * i16::from(y[k]));
        }
    }
    let tail: i32 = ra
        .iter()
        .zip(rb)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    acc.iter().sum::<i32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn dot_matches_naive_for_odd_lengths() {
        for len in [1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "len {len}");
        }
    }

    #[test]
    fn best_chunk_per_note_and_filters() {
        let mut m = Matrix::new(2);
        assert!(m.push(1, 10, &unit(&[1.0, 0.0])));
        assert!(m.push(2, 10, &unit(&[0.0, 1.0])));
        assert!(m.push(3, 20, &unit(&[1.0, 1.0])));
        assert!(!m.push(4, 30, &[1.0]));
        let q = unit(&[0.0, 1.0]);
        let hits = m.top_notes(&q, 5, None);
        assert_eq!(
            hits.iter()
                .map(|h| (h.note_id, h.chunk_id))
                .collect::<Vec<_>>(),
            vec![(10, 2), (20, 3)]
        );
        let only20: HashSet<i64> = [20].into();
        let scores = m.scores(&q);
        assert_eq!(m.best_rows(&scores, 1, None), [1]);
        assert_eq!(m.best_rows(&scores, 1, Some(&only20)), [2]);
        assert_eq!(m.top_notes(&q, 5, Some(&only20))[0].note_id, 20);
        assert_eq!(m.top_notes(&q, 1, None).len(), 1);
    }

    #[test]
    fn int8_scores_are_close_to_exact_and_a_quarter_of_the_memory() {
        let dim = 384;
        let mut m = Matrix::new(dim);
        let rows: Vec<Vec<f32>> = (0..200)
            .map(|r| {
                unit(
                    &(0..dim)
                        .map(|i| ((i * 7 + r * 13) as f32 * 0.61).sin())
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        for (i, r) in rows.iter().enumerate() {
            m.push(i as i64, i as i64, r);
        }
        let q = unit(&(0..dim).map(|i| (i as f32 * 0.3).cos()).collect::<Vec<_>>());
        let approx = m.scores(&q);
        for (r, a) in rows.iter().zip(&approx) {
            assert!((dot(r, &q) - a).abs() < 0.01, "{} vs {a}", dot(r, &q));
        }
        assert!((m.row_dot(3, 4) - dot(&rows[3], &rows[4])).abs() < 0.01);
        assert_eq!(m.vector_bytes(), 200 * (dim + 4));
        assert!(m.vector_bytes() * 100 <= 200 * dim * 4 * 26);
        let mut zero = Matrix::new(2);
        zero.push(1, 1, &[0.0, 0.0]);
        assert_eq!(zero.scores(&[1.0, 0.0]), [0.0]);
    }

    #[test]
    fn dot_i8_matches_naive_for_odd_lengths() {
        for len in [1, 31, 32, 33, 384, 385] {
            let a: Vec<i8> = (0..len).map(|i: i32| ((i * 37) % 255) as i8).collect();
            let b: Vec<i8> = (0..len)
                .map(|i: i32| (127 - (i * 11) % 255) as i8)
                .collect();
            let naive: i32 = a.iter().zip(&b).map(|(&x, &y)| x as i32 * y as i32).sum();
            assert_eq!(dot_i8(&a, &b), naive, "len {len}");
        }
    }

    /// Unit vectors in clusters (topics), two or three passages a note, as in a brain.
    fn clustered(dim: usize, rows: usize, seed: u64) -> Vec<(i64, Vec<f32>)> {
        let mut x = seed | 1;
        let mut noise = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        let topics: Vec<Vec<f32>> = (0..200)
            .map(|_| (0..dim).map(|_| noise()).collect())
            .collect();
        (0..rows)
            .map(|r| {
                let t = &topics[r % topics.len()];
                // An offset shared by every vector, as real models leave them off-centre.
                let v: Vec<f32> = t.iter().map(|c| c + 0.8 * noise() + 0.5).collect();
                ((r / 3 + r % 2) as i64, unit(&v))
            })
            .collect()
    }

    #[test]
    fn shortlist_finds_the_same_top_notes_and_scores_any_note_asked_for() {
        let dim = 128;
        let mut m = Matrix::new(dim);
        let rows = clustered(dim, 6000, 7);
        for (i, (note, v)) in rows.iter().enumerate() {
            m.push(i as i64, *note, v);
        }
        assert!(
            m.shortlist(&rows[0].1).is_none(),
            "no sketches below MIN_ROWS"
        );
        let m = m.with_shortlist(true);
        let (mut same, queries) = (0, 100);
        for q in 0..queries {
            // A query near a passage, not on it.
            let (_, base) = &rows[q * 59 % rows.len()];
            let query = unit(
                &base
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x + 0.05 * ((i * q) as f32).sin())
                    .collect::<Vec<_>>(),
            );
            let full = m.note_scores(&m.scores(&query), None);
            let short = m.shortlist(&query).expect("sketches built");
            assert!(short.len() < rows.len() / 2, "{} rows scored", short.len());
            let q = m.quantized(&query);
            let partial = m.note_scores_among(&m.scores_of_rows(&q, &short), &short, q);
            same += usize::from(full.top(10) == partial.top(10));
            // A note outside the shortlist is scored from its rows, as the full scan does.
            for note in [0i64, 500, 1999] {
                assert_eq!(partial.get(note), full.get(note), "note {note}");
            }
        }
        assert!(same >= 97, "same top 10 for {same} of {queries} queries");
    }

    #[test]
    fn parallel_scan_covers_every_row() {
        let mut m = Matrix::new(4);
        for i in 0..10_000 {
            m.push(i, i, &[i as f32, 0.0, 0.0, 1.0]);
        }
        let s = m.scores(&[1.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.len(), 10_000);
        // Each row is exact here: its largest component is the one the query reads.
        assert!(s
            .iter()
            .enumerate()
            .all(|(i, &v)| (v - i as f32).abs() <= i as f32 * 1e-5));
    }
}
