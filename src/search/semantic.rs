//! Semantic search: every passage vector in one contiguous row-major matrix, scored
//! against the query vector by dot product (vectors are normalised, so this is cosine
//! similarity). Below ~10^5 passages a brute-force scan beats any index.
//!
//! The matrix holds each vector as int8 with one f32 scale per row: a quarter of the memory
//! of f32 (100k passages x 768 dims: 77 MB instead of 307 MB) and a scan that reads a
//! quarter of the bytes. The approximation moves a cosine by about 0.002; the search
//! re-scores its best [`RERANK_ROWS`] rows with the exact f32 vectors from the index (see
//! `search::pipeline`), so the ranked list is the exact one (measured in the README).
//!
//! A note's score is its best passage's cosine blended with the whole note's
//! ([`NOTE_WEIGHT`]): the query against the mean of the note's passage vectors. The best
//! passage alone ranks a long note that mentions the topic once beside a short note that
//! is all about it; the whole note tells them apart. It costs nothing per row: the cosine
//! with the mean is the sum of the passages' scores (which the scan has) over the length of
//! their vector sum, computed only for the notes that can reach the list.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use rayon::prelude::*;

use super::codes::Codes;
use super::shortlist::{self, Shortlist};

/// Rows scored per parallel task: big enough that threading pays for itself.
const ROWS_PER_TASK: usize = 4096;

/// How many of the best rows by the int8 scan are scored again with exact vectors.
pub const RERANK_ROWS: usize = 256;

/// The whole note's share of a note's semantic score, beside its best passage's (see the
/// module's documentation). Chosen on the tune half of `eval/` (the README's Evaluation
/// section gives the figures).
pub const NOTE_WEIGHT: f32 = 0.2;

/// How many notes, best by their best passage, are scored as wholes for a ranked list of
/// up to this many. A heuristic, not a bound (a note's whole can score above its best
/// passage): the blend moves a note by a few places. `brain eval` checks the list against
/// an exact scan that blends every note.
const WHOLE_NOTE_DEPTH: usize = 200;

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
    /// The rows of each note, grouped: built on first use after the last change.
    by_note: OnceLock<RowsByNote>,
}

/// The rows of each note slot, as one array of rows grouped by slot.
#[derive(Debug, Default)]
struct RowsByNote {
    /// Slot `s`'s rows are `rows[start[s]..start[s + 1]]`.
    start: Vec<u32>,
    rows: Vec<u32>,
    /// Per slot, once asked for: the length of the sum of its rows' vectors (from their
    /// codes), which no query changes, so the warm backend works it out once per note.
    lengths: Vec<OnceLock<f32>>,
}

impl RowsByNote {
    fn build(slots: &[u32], slot_count: usize) -> RowsByNote {
        let mut start = vec![0u32; slot_count + 1];
        for &s in slots {
            start[s as usize + 1] += 1;
        }
        for i in 0..slot_count {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut rows = vec![0u32; slots.len()];
        for (r, &s) in slots.iter().enumerate() {
            rows[next[s as usize] as usize] = r as u32;
            next[s as usize] += 1;
        }
        let lengths = (0..slot_count).map(|_| OnceLock::new()).collect();
        RowsByNote {
            start,
            rows,
            lengths,
        }
    }

    fn of(&self, slot: u32) -> &[u32] {
        let s = slot as usize;
        match (self.start.get(s), self.start.get(s + 1)) {
            (Some(&a), Some(&b)) => &self.rows[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// A note's best chunk for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SemHit {
    /// `notes.id`.
    pub note_id: i64,
    /// `chunks.id` of the best-scoring passage.
    pub chunk_id: i64,
    /// The note's score: that passage's cosine similarity blended with the whole note's
    /// ([`NOTE_WEIGHT`]).
    pub score: f32,
    /// That passage's cosine similarity.
    pub passage: f32,
    /// The whole note's: the query's cosine with the mean of the note's passage vectors.
    pub whole: f32,
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
        self.by_note = OnceLock::new();
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
            by_note: OnceLock::new(),
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
        let built = Shortlist::build(m.dim, m.len(), |r, out| {
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
                rows.extend_from_slice(self.rows_of_slot(slot));
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

    /// Bytes the vectors take in memory: codes and scales, sketches when built, and the
    /// rows grouped by note once a search has grouped them.
    pub fn vector_bytes(&self) -> usize {
        self.codes.len()
            + self.scales.len() * 4
            + self.shortlist.as_ref().map_or(0, Shortlist::bytes)
            + self.by_note.get().map_or(0, |b| {
                (b.start.len() + b.rows.len()) * 4 + b.lengths.len() * 8
            })
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

    /// The rows of note `note` (`notes.id`), none when it has no vectors.
    pub fn rows_of_note(&self, note: i64) -> Vec<usize> {
        self.slot_of.get(&note).map_or_else(Vec::new, |&slot| {
            self.rows_of_slot(slot)
                .iter()
                .map(|&r| r as usize)
                .collect()
        })
    }

    /// The rows of note slot `slot`.
    fn rows_of_slot(&self, slot: u32) -> &[u32] {
        self.by_note().of(slot)
    }

    fn by_note(&self) -> &RowsByNote {
        self.by_note
            .get_or_init(|| RowsByNote::build(&self.slots, self.slot_of.len()))
    }

    /// The notes of `rows` (each once, as note slots) with every row of each, until
    /// `cap` rows are gathered: what the exact re-rank reads so that the notes it ranks
    /// are scored as wholes from exact vectors too.
    pub(crate) fn notes_of_rows(&self, rows: &[usize], cap: usize) -> Vec<(u32, &[u32])> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut taken = 0;
        for &r in rows {
            let slot = self.slots[r];
            if !seen.insert(slot) {
                continue;
            }
            let of = self.rows_of_slot(slot);
            if taken + of.len() > cap {
                continue;
            }
            taken += of.len();
            out.push((slot, of));
        }
        out
    }

    /// The length of the sum of note slot `slot`'s passage vectors: the cosine of a query
    /// with the note's mean vector is the sum of its passages' scores over this.
    fn sum_length(&self, slot: u32) -> f32 {
        match self.by_note().lengths.get(slot as usize) {
            Some(cached) => *cached.get_or_init(|| self.sum_length_of(slot)),
            None => 0.0,
        }
    }

    fn sum_length_of(&self, slot: u32) -> f32 {
        let rows = self.rows_of_slot(slot);
        if let [r] = rows {
            // One passage: the note is that passage (a unit vector, up to rounding).
            let r = *r as usize;
            return self
                .codes(r)
                .iter()
                .map(|&c| f32::from(c) * f32::from(c))
                .sum::<f32>()
                .sqrt()
                * self.scales[r];
        }
        let mut sum = vec![0f32; self.dim];
        for &r in rows {
            let r = r as usize;
            let s = self.scales[r];
            sum.iter_mut()
                .zip(self.codes(r))
                .for_each(|(o, &c)| *o += f32::from(c) * s);
        }
        sum.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    /// The (approximate) similarity of rows `a` and `b`.
    pub fn row_dot(&self, a: usize, b: usize) -> f32 {
        // The scales multiplied first: `row_dot(b, a)` is then the same bits, and a pair at
        // a threshold is on one side of it whichever note asks.
        dot_i8(self.codes(a), self.codes(b)) as f32 * (self.scales[a] * self.scales[b])
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
        let mut sums = vec![0f32; self.slot_of.len()];
        for (i, &score) in scores.iter().enumerate().take(self.len()) {
            if allowed.is_some_and(|a| !a.contains(&self.note_ids[i])) {
                continue;
            }
            let slot = self.slots[i] as usize;
            keep_best(&mut best[slot], score, i as u32);
            sums[slot] += score;
        }
        NoteScores {
            matrix: Some(self),
            best,
            sums,
            exact_lengths: HashMap::new(),
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
        let mut sums = vec![0f32; self.slot_of.len()];
        let mut touched = Vec::new();
        for &r in rows {
            let s = self.slots[r as usize];
            if best[s as usize].is_none() {
                touched.push(s);
            }
            keep_best(&mut best[s as usize], scores[r as usize], r);
            sums[s as usize] += scores[r as usize];
        }
        NoteScores {
            matrix: Some(self),
            best,
            sums,
            exact_lengths: HashMap::new(),
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

/// The best passage of every note for one query, and the note's score (see the module's
/// documentation).
#[derive(Debug, Default)]
pub struct NoteScores<'a> {
    matrix: Option<&'a Matrix>,
    /// Per note slot: the best passage's score and its row.
    best: Vec<Option<(f32, u32)>>,
    /// Per note slot: the sum of its passages' scores.
    sums: Vec<f32>,
    /// The length of the sum of a note's passage vectors, from exact vectors, for the
    /// notes the exact re-rank read whole; any other note's comes from its int8 codes.
    exact_lengths: HashMap<u32, f32>,
    /// The query's int8 codes and scale, when `best` holds only a shortlist's notes: any
    /// other note is scored from its rows when asked for.
    query: Option<Quantized>,
    /// The slots `best` holds a score for, when only a shortlist's: [`NoteScores::top`]
    /// then looks at those, not at every note.
    touched: Option<Vec<u32>>,
}

impl NoteScores<'_> {
    /// The note of `row`, scored: its best passage `best` (at `row`) blended with the whole
    /// note, whose passages' scores sum to `sum`.
    fn hit(&self, best: f32, sum: f32, row: u32) -> Option<SemHit> {
        let m = self.matrix?;
        let slot = m.slots[row as usize];
        let length = match self.exact_lengths.get(&slot) {
            Some(&l) => l,
            None => m.sum_length(slot),
        };
        let whole = if length > 0.0 { sum / length } else { 0.0 };
        Some(SemHit {
            note_id: m.note_ids[row as usize],
            chunk_id: m.chunk_ids[row as usize],
            score: (1.0 - NOTE_WEIGHT) * best + NOTE_WEIGHT * whole,
            passage: best,
            whole,
        })
    }

    /// The same scores, with the lengths of these notes' passage-vector sums (by note
    /// slot) computed from exact vectors.
    pub(crate) fn with_exact_lengths(mut self, lengths: HashMap<u32, f32>) -> Self {
        self.exact_lengths = lengths;
        self
    }

    /// The `limit` best notes, best first (ties by note id).
    pub fn top(&self, limit: usize) -> Vec<SemHit> {
        let Some(m) = self.matrix else {
            return Vec::new();
        };
        if limit == 0 {
            return Vec::new();
        }
        // By best passage first: only the notes near the top are scored as wholes.
        let scored = |s: u32| self.best[s as usize].map(|(score, row)| (score, s, row));
        let mut near: Vec<(f32, u32, u32)> = match &self.touched {
            Some(slots) => slots.iter().filter_map(|&s| scored(s)).collect(),
            None => (0..self.best.len() as u32).filter_map(scored).collect(),
        };
        let by_score = |a: &(f32, u32, u32), b: &(f32, u32, u32)| {
            b.0.total_cmp(&a.0)
                .then(m.note_ids[a.2 as usize].cmp(&m.note_ids[b.2 as usize]))
        };
        let depth = limit.max(WHOLE_NOTE_DEPTH);
        if near.len() > depth {
            near.select_nth_unstable_by(depth - 1, by_score);
            near.truncate(depth);
        }
        let order =
            |a: &SemHit, b: &SemHit| b.score.total_cmp(&a.score).then(a.note_id.cmp(&b.note_id));
        let blended = |near: &[(f32, u32, u32)]| {
            let mut hits: Vec<SemHit> = near
                .iter()
                .filter_map(|&(best, slot, row)| self.hit(best, self.sums[slot as usize], row))
                .collect();
            hits.sort_by(order);
            hits
        };
        // The first WHOLE_NOTE_DEPTH by best passage are blended and ordered among
        // themselves whatever the limit, the rest after them: a larger limit shows more
        // notes, and does not reorder the first ones.
        near.sort_by(by_score);
        let head = near.len().min(WHOLE_NOTE_DEPTH);
        let mut hits = blended(&near[..head]);
        if hits.len() < limit {
            hits.extend(blended(&near[head..]));
        }
        hits.truncate(limit);
        hits
    }

    /// Note `id`, scored, when it has a vector (and passes the filter).
    pub fn get(&self, id: i64) -> Option<SemHit> {
        let m = self.matrix?;
        let slot = *m.slot_of.get(&id)?;
        if let Some((score, row)) = *self.best.get(slot as usize)? {
            return self.hit(score, self.sums[slot as usize], row);
        }
        // Outside the shortlist: a note the keyword list found, scored as the scan would.
        let q = self.query.as_ref()?;
        m.shortlist.as_ref()?;
        let rows = m.rows_of_slot(slot);
        let (mut best, mut sum) = (None, 0f32);
        for &r in rows {
            let i = r as usize;
            let score = approx(m.codes(i), m.scales[i], q);
            keep_best(&mut best, score, r);
            sum += score;
        }
        let (score, row) = best?;
        self.hit(score, sum, row)
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
    fn a_larger_limit_shows_more_notes_and_keeps_the_first_in_their_order() {
        let mut m = Matrix::new(2);
        let mut chunk = 0;
        let mut push = |m: &mut Matrix, note: i64, v: [f32; 2]| {
            chunk += 1;
            assert!(m.push(chunk, note, &unit(&v)));
        };
        // WHOLE_NOTE_DEPTH notes of one passage at 0.90 to the query, and after them by
        // best passage, notes of two passages at 0.88 whose whole is the query itself:
        // blended, they score more (0.904 against 0.900).
        let y = |cos: f32| (1.0 - cos * cos).sqrt();
        for note in 0..WHOLE_NOTE_DEPTH as i64 {
            push(&mut m, note, [0.9, y(0.9)]);
        }
        for note in 1000..1100 {
            push(&mut m, note, [0.88, y(0.88)]);
            push(&mut m, note, [0.88, -y(0.88)]);
        }
        let q = unit(&[1.0, 0.0]);
        let ids = |limit: usize| -> Vec<i64> {
            m.top_notes(&q, limit, None)
                .iter()
                .map(|h| h.note_id)
                .collect()
        };
        let few = ids(10);
        assert_eq!(few, (0..10).collect::<Vec<i64>>());
        let all = ids(300);
        assert_eq!(all.len(), 300);
        assert_eq!(all[..10], few[..]);
    }

    #[test]
    fn a_note_all_about_the_query_outranks_one_that_mentions_it_once() {
        let mut m = Matrix::new(3);
        // Note 10: one passage on the query's topic among two on others.
        m.push(1, 10, &unit(&[1.0, 0.1, 0.0]));
        m.push(2, 10, &unit(&[0.0, 1.0, 0.0]));
        m.push(3, 10, &unit(&[0.0, 0.0, 1.0]));
        // Note 20: two passages on it, each a little less close than note 10's best.
        m.push(4, 20, &unit(&[1.0, 0.2, 0.0]));
        m.push(5, 20, &unit(&[1.0, 0.0, 0.2]));
        // Note 30: one passage, scored as that passage.
        m.push(6, 30, &unit(&[1.0, 0.5, 0.5]));
        let q = [1.0, 0.0, 0.0];
        let hits = m.top_notes(&q, 3, None);
        assert_eq!(
            hits.iter()
                .map(|h| (h.note_id, h.chunk_id))
                .collect::<Vec<_>>(),
            [(20, 4), (10, 1), (30, 6)],
            "{hits:?}"
        );
        let best_passage = dot(&unit(&[1.0, 0.5, 0.5]), &q);
        assert!((hits[2].score - best_passage).abs() < 0.01, "{hits:?}");
        // Asked for by id, a note scores as in the list.
        assert_eq!(m.note_scores(&m.scores(&q), None).get(10), Some(hits[1]));
    }

    #[test]
    fn rows_are_grouped_by_note_and_regrouped_after_a_push() {
        let mut m = Matrix::new(2);
        for (chunk, note) in [(1, 10), (2, 20), (3, 10), (4, 30)] {
            m.push(chunk, note, &unit(&[1.0, chunk as f32]));
        }
        assert_eq!(m.rows_of_slot(0), &[0, 2]);
        assert_eq!(m.rows_of_slot(1), &[1]);
        assert!(m.rows_of_slot(9).is_empty());
        m.push(5, 20, &unit(&[1.0, 5.0]));
        assert_eq!(m.rows_of_slot(1), &[1, 4]);
        assert_eq!(m.notes_of_rows(&[4, 0, 1], 10).len(), 2);
        // A note whose rows would pass the cap is left out, not cut.
        assert_eq!(m.notes_of_rows(&[0, 3], 2).len(), 1);
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
