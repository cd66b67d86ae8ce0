//! Semantic search: every chunk vector in one contiguous row-major matrix, scored against
//! the query vector by dot product (vectors are normalised, so this is cosine similarity).
//! Below ~10^5 chunks a brute-force scan beats any index, and it is exact.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

/// Rows scored per parallel task: big enough that threading pays for itself.
const ROWS_PER_TASK: usize = 4096;

/// All chunk vectors of one model, loaded once.
#[derive(Debug, Default)]
pub struct Matrix {
    dim: usize,
    data: Vec<f32>,
    chunk_ids: Vec<i64>,
    note_ids: Vec<i64>,
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
        self.data.extend_from_slice(vector);
        self.chunk_ids.push(chunk_id);
        self.note_ids.push(note_id);
        true
    }

    /// Adds a vector stored as little-endian bytes.
    pub fn push_blob(&mut self, chunk_id: i64, note_id: i64, blob: &[u8]) -> bool {
        if blob.len() != self.dim * 4 {
            return false;
        }
        let before = self.data.len();
        crate::index::vectors::extend_from_blob(&mut self.data, blob);
        debug_assert_eq!(self.data.len(), before + self.dim);
        self.chunk_ids.push(chunk_id);
        self.note_ids.push(note_id);
        true
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

    /// The note of each row, in row order.
    pub fn note_ids(&self) -> &[i64] {
        &self.note_ids
    }

    /// The passage (`chunks.id`) of each row, in row order.
    pub fn chunk_ids(&self) -> &[i64] {
        &self.chunk_ids
    }

    /// Row `i`'s vector.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The similarity of every chunk to `query`, in row order.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        assert_eq!(query.len(), self.dim, "query vector length");
        let mut out = vec![0f32; self.len()];
        let dim = self.dim;
        let rows = self.data.par_chunks(dim * ROWS_PER_TASK);
        out.par_chunks_mut(ROWS_PER_TASK)
            .zip(rows)
            .for_each(|(out, rows)| {
                for (o, row) in out.iter_mut().zip(rows.chunks_exact(dim)) {
                    *o = dot(row, query);
                }
            });
        out
    }

    /// The `limit` best notes by their best chunk, best first. `allowed` restricts notes
    /// (filters); `None` allows all.
    pub fn top_notes(
        &self,
        query: &[f32],
        limit: usize,
        allowed: Option<&HashSet<i64>>,
    ) -> Vec<SemHit> {
        self.note_scores(query, allowed).top(limit)
    }

    /// Every allowed note's best chunk for `query`: the ranked list, and the similarity of
    /// any note the keyword list found deeper than the semantic list goes.
    pub fn note_scores(&self, query: &[f32], allowed: Option<&HashSet<i64>>) -> NoteScores {
        let mut best: HashMap<i64, SemHit> = HashMap::new();
        if self.is_empty() {
            return NoteScores { best };
        }
        let scores = self.scores(query);
        for (i, &score) in scores.iter().enumerate() {
            let note_id = self.note_ids[i];
            if allowed.is_some_and(|a| !a.contains(&note_id)) {
                continue;
            }
            let hit = SemHit {
                note_id,
                chunk_id: self.chunk_ids[i],
                score,
            };
            best.entry(note_id)
                .and_modify(|b| {
                    if score > b.score {
                        *b = hit
                    }
                })
                .or_insert(hit);
        }
        NoteScores { best }
    }
}

/// The best passage of every note for one query.
#[derive(Debug, Default)]
pub struct NoteScores {
    best: HashMap<i64, SemHit>,
}

impl NoteScores {
    /// The `limit` best notes, best first (ties by note id).
    pub fn top(&self, limit: usize) -> Vec<SemHit> {
        let order =
            |a: &SemHit, b: &SemHit| b.score.total_cmp(&a.score).then(a.note_id.cmp(&b.note_id));
        let mut hits: Vec<SemHit> = self.best.values().copied().collect();
        if limit == 0 {
            return Vec::new();
        }
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits
    }

    /// Note `id`'s best passage, when it has a vector (and passes the filter).
    pub fn get(&self, id: i64) -> Option<SemHit> {
        self.best.get(&id).copied()
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
        assert_eq!(m.top_notes(&q, 5, Some(&only20))[0].note_id, 20);
        assert_eq!(m.top_notes(&q, 1, None).len(), 1);
    }

    #[test]
    fn parallel_scan_covers_every_row() {
        let mut m = Matrix::new(4);
        for i in 0..10_000 {
            m.push(i, i, &[i as f32, 0.0, 0.0, 1.0]);
        }
        let s = m.scores(&[1.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.len(), 10_000);
        assert!(s.iter().enumerate().all(|(i, &v)| v == i as f32));
    }
}
