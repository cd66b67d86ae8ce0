//! A one-bit sketch of every passage vector, for the warm backend of a large brain: the
//! rows nearest a query by Hamming distance are found from an eighth of the bytes of the int8
//! scan (a bit per dimension instead of a byte; 20 MB instead of 160 MB at 209k passages
//! x 768 dims), and only they are scored with their int8 codes. On this project's machines
//! that scan is bound by memory bandwidth, not arithmetic: a faster int8 loop gained
//! nothing, reading fewer bytes does.
//!
//! A bit is the sign of the dimension after the matrix's mean is taken away: embedding
//! models leave most dimensions off-centre, and signs of raw values would then say little.
//! The shortlist keeps an eighth of the rows, and then every row of each note it
//! touched, so a note's score (its best passage and its whole) is the full scan's.
//! Measured against an exact f32 scan on the eval's real queries (`brain eval` prints it
//! per set).

use rayon::prelude::*;

/// Below this many passages the int8 scan of every row takes about a millisecond and
/// needs no shortlist.
pub const MIN_ROWS: usize = 32_768;

/// Rows kept: one in this many, the closest in Hamming distance. Set on the eval's real
/// queries (MiniLM, the 330 queries of the four sets on the two notes corpora, the
/// shortlist forced on): the same semantic top 10 as an exact f32 scan for 317 at one in
/// 16, 328 at one in 8, all at one in 4 (before a note's score blended in the whole note;
/// since, over every set, 753 of 761 queries against 755). Larger brains need no larger share, as a query's nearest rows are a smaller
/// share of them; that is not measured with real vectors here.
pub(crate) const KEEP_ONE_IN: usize = 8;

/// Rows per parallel task of the Hamming scan.
const ROWS_PER_TASK: usize = 8192;

/// The sketches of a matrix's rows.
#[derive(Debug, Default)]
pub(crate) struct Shortlist {
    /// `u64` words per row.
    words: usize,
    /// Row after row, `words` each: bit `d` set when dimension `d` is above the mean.
    bits: Vec<u64>,
    /// The mean of every row, per dimension.
    mean: Vec<f32>,
}

impl Shortlist {
    /// Sketches `rows` vectors of length `dim`, row `r` given by `row(r, out)` (which fills
    /// `out` with its values).
    pub(crate) fn build(
        dim: usize,
        rows: usize,
        row: impl Fn(usize, &mut [f32]) + Sync,
    ) -> Shortlist {
        let words = dim.div_ceil(64);
        let mean = {
            let sums = (0..rows)
                .into_par_iter()
                .fold(
                    || (vec![0f64; dim], vec![0f32; dim]),
                    |(mut sum, mut buf), r| {
                        row(r, &mut buf);
                        sum.iter_mut()
                            .zip(&buf)
                            .for_each(|(s, x)| *s += f64::from(*x));
                        (sum, buf)
                    },
                )
                .map(|(sum, _)| sum)
                .reduce(
                    || vec![0f64; dim],
                    |mut a, b| {
                        a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                        a
                    },
                );
            let n = rows.max(1) as f64;
            sums.iter().map(|s| (s / n) as f32).collect::<Vec<f32>>()
        };
        let mut bits = vec![0u64; rows * words];
        bits.par_chunks_mut(words).enumerate().for_each_init(
            || vec![0f32; dim],
            |buf, (r, out)| {
                row(r, buf);
                sketch(buf, &mean, out);
            },
        );
        Shortlist { words, bits, mean }
    }

    /// Bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.bits.len() * 8 + self.mean.len() * 4
    }

    /// The `keep` rows nearest `query` by Hamming distance between sketches, in row order
    /// (of the rows at the cut-off distance, the first ones).
    pub(crate) fn nearest(&self, query: &[f32], keep: usize) -> Vec<u32> {
        let mut q = vec![0u64; self.words];
        sketch(query, &self.mean, &mut q);
        let mut distance = vec![0u16; self.bits.len() / self.words.max(1)];
        distance
            .par_chunks_mut(ROWS_PER_TASK)
            .zip(self.bits.par_chunks(self.words * ROWS_PER_TASK))
            .for_each(|(out, bits)| hamming(bits, &q, out));
        // Distances are small integers: count them, and the cut-off is where the counts
        // reach `keep`; no sort.
        let mut counts = vec![0usize; self.words * 64 + 1];
        for &d in &distance {
            counts[d as usize] += 1;
        }
        let mut cut = 0usize;
        let mut seen = 0usize;
        for (d, &c) in counts.iter().enumerate() {
            seen += c;
            cut = d;
            if seen >= keep {
                break;
            }
        }
        // Sketches of near-identical passages tie: the rows at the cut-off distance take
        // only the places left, so the rows scored after this stay bounded.
        let mut at_cut = keep.saturating_sub(seen - counts[cut]);
        let mut out = Vec::with_capacity(keep.min(distance.len()));
        for (r, &d) in distance.iter().enumerate() {
            let d = d as usize;
            if d < cut || (d == cut && at_cut > 0) {
                at_cut -= usize::from(d == cut);
                out.push(r as u32);
            }
        }
        out
    }
}

/// Sets bit `d` of `out` when `v[d]` is above `mean[d]`. Each word is built without a
/// branch: half the bits are set, at random, and a branch per dimension mispredicted so
/// often that it was most of sketching a matrix.
fn sketch(v: &[f32], mean: &[f32], out: &mut [u64]) {
    out.iter_mut().for_each(|w| *w = 0);
    for ((word, v), mean) in out.iter_mut().zip(v.chunks(64)).zip(mean.chunks(64)) {
        *word = v
            .iter()
            .zip(mean)
            .enumerate()
            .fold(0, |w, (i, (x, m))| w | (u64::from(x > m) << i));
    }
}

/// The Hamming distance from `q` of each row of `bits` (`q.len()` words a row) into `out`.
/// On x86_64 compiled a second time with the `popcnt` instruction, picked at run time (the
/// portable build counts bits with shifts); on Apple Silicon counting bits is one NEON
/// instruction in any build.
fn hamming(bits: &[u64], q: &[u64], out: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU supports the feature this copy of the loop was compiled for.
            return unsafe { hamming_popcnt(bits, q, out) };
        }
    }
    hamming_portable(bits, q, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn hamming_popcnt(bits: &[u64], q: &[u64], out: &mut [u16]) {
    hamming_portable(bits, q, out)
}

#[inline(always)]
fn hamming_portable(bits: &[u64], q: &[u64], out: &mut [u16]) {
    for (o, row) in out.iter_mut().zip(bits.chunks_exact(q.len().max(1))) {
        *o = row
            .iter()
            .zip(q)
            .map(|(a, b)| (a ^ b).count_ones() as u16)
            .sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_keeps_the_closest_rows_and_all_ties_at_the_cut() {
        // Four rows of 2 dims around a mean of 0: signs (+,+), (+,-), (-,+), (-,-).
        let rows = [[1.0f32, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]];
        let s = Shortlist::build(2, 4, |r, out| out.copy_from_slice(&rows[r]));
        assert_eq!(s.nearest(&[0.5, 0.5], 1), vec![0]);
        // Rows 1 and 2 are both one bit away: the first of them takes the place left.
        assert_eq!(s.nearest(&[0.5, 0.5], 2), vec![0, 1]);
        assert_eq!(s.nearest(&[0.5, 0.5], 3), vec![0, 1, 2]);
        assert_eq!(s.nearest(&[-0.5, -0.5], 4).len(), 4);
    }

    #[test]
    fn bits_are_signs_around_the_mean() {
        // Every row is far above 0 in dimension 0: around the mean the sign still splits.
        let rows = [[10.0f32, 0.0], [12.0, 0.0], [8.0, 0.0], [11.0, 0.0]];
        let s = Shortlist::build(2, 4, |r, out| out.copy_from_slice(&rows[r]));
        assert_eq!(
            s.bits.iter().map(|w| w & 1).collect::<Vec<_>>(),
            vec![0, 1, 0, 1]
        );
    }

    #[test]
    fn sketch_sets_exactly_the_dimensions_above_the_mean_across_words() {
        let dim: usize = 150;
        let v: Vec<f32> = (0..dim).map(|d| ((d * 37) % 11) as f32 - 5.0).collect();
        let mean: Vec<f32> = (0..dim).map(|d| ((d * 13) % 7) as f32 - 3.0).collect();
        let mut out = vec![u64::MAX; dim.div_ceil(64)];
        sketch(&v, &mean, &mut out);
        for d in 0..dim {
            assert_eq!(
                out[d / 64] >> (d % 64) & 1 == 1,
                v[d] > mean[d],
                "dimension {d}"
            );
        }
        // Bits past the last dimension stay clear.
        assert_eq!(out[2] >> (dim - 128), 0);
    }

    #[test]
    fn hamming_counts_differing_bits_across_words() {
        let bits = [u64::MAX, 0, 0, 1];
        let mut out = [0u16; 2];
        hamming(&bits, &[0, 0], &mut out);
        assert_eq!(out, [64, 1]);
    }
}
