//! The forward pass for a few tokens on the CPU: a search query, run through the same
//! weights as the batched pass of [`super::layers`] but with plain loops over slices
//! instead of candle's operations, and with the matrix products over a half-precision copy
//! of the weights ([`super::half`]).
//!
//! Why: a query is 5 to 20 tokens, and for so few the work is small (MiniLM: ~0.1 GFLOP)
//! while every weight must still be read once. Through candle a query cost more than three
//! times ONNX Runtime's on the same machine: each of a pass's ~100 operations allocates its
//! output and wakes rayon's threads, and its matrix product packs the whole weight matrix
//! into a scratch copy before reading it. Here each product streams its weights once, and
//! everything else (attention over a few tokens, the norms, the activations) is a loop
//! over a few kilobytes, reusing the kernels of [`super::ops`]. Figures: the README's
//! performance table.
//!
//! Queries only: stored passage vectors always come from the batched f32 pass, so a
//! note's vector never depends on what it was embedded with. A query's vector is within
//! 2e-4 of the f32 one (cosine 0.9999998 at worst over the eval queries).

use std::sync::OnceLock;

use candle_core::{Result, Storage, Tensor};

/// Texts laid end to end, as plain token ids (the few-token pass's [`super::layers::Packed`]).
pub struct Few {
    /// Token ids.
    pub ids: Vec<u32>,
    /// Position of each token inside its text.
    pub positions: Vec<u32>,
    /// `(start, len)` of each text.
    pub spans: Vec<(usize, usize)>,
}

impl Few {
    /// Packs tokenised texts (each already truncated to the model's window).
    pub fn new(texts: &[Vec<u32>]) -> Few {
        let mut few = Few {
            ids: Vec::new(),
            positions: Vec::new(),
            spans: Vec::new(),
        };
        for t in texts {
            few.spans.push((few.ids.len(), t.len()));
            few.ids.extend_from_slice(t);
            few.positions.extend(0..t.len() as u32);
        }
        few
    }
}

/// The rows of `table` (`width` values each) for `ids`, end to end.
pub fn gather(table: &Tensor, ids: &[u32], width: usize) -> Result<Vec<f32>> {
    with_f32(table, |t| {
        let mut out = Vec::with_capacity(ids.len() * width);
        for &id in ids {
            let at = id as usize * width;
            match t.get(at..at + width) {
                Some(row) => out.extend_from_slice(row),
                None => candle_core::bail!("token id {id} is outside the table"),
            }
        }
        Ok(out)
    })?
}

/// Adds `row` to every `row.len()`-wide row of `x`.
pub fn add_to_rows(x: &mut [f32], row: &[f32]) {
    for r in x.chunks_exact_mut(row.len()) {
        r.iter_mut().zip(row).for_each(|(a, b)| *a += b);
    }
}

/// Calls `f` with the values of a contiguous f32 tensor on the CPU, read in place.
pub fn with_f32<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        candle_core::bail!("the few-token pass runs on the CPU only")
    };
    let data = cpu.as_slice::<f32>()?;
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("the few-token pass needs contiguous weights")
    };
    Ok(f(&data[start..end]))
}

/// Layer normalisation of each `gamma.len()`-wide row of `x`, in place.
pub fn layer_norm_rows(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = gamma.len();
    for row in x.chunks_exact_mut(n) {
        let mean = row.iter().sum::<f32>() / n as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((y, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *y = (*y - mean) * inv * g + b;
        }
    }
}

/// Rotates one head's `[len, dim]` rows by their positions (GPT-NeoX halves), with `cos`
/// and `sin` tables of `dim / 2` values per position.
pub fn rotate(head: &mut [f32], dim: usize, cos: &[f32], sin: &[f32]) {
    let half = dim / 2;
    for (pos, v) in head.chunks_exact_mut(dim).enumerate() {
        let (c, s) = (&cos[pos * half..][..half], &sin[pos * half..][..half]);
        let (a, b) = v.split_at_mut(half);
        for i in 0..half {
            let (x1, x2) = (a[i], b[i]);
            a[i] = x1 * c[i] - x2 * s[i];
            b[i] = x1 * s[i] + x2 * c[i];
        }
    }
}

/// Self-attention of the tokens `start..start + len` of `qkv` (rows of `[q | k | v]`, each
/// `heads * dim` wide, the query already scaled), written into the same rows of `ctx`.
/// `rotary` gives the `cos` and `sin` tables when positions are rotary. Heads run in
/// parallel ([`super::team`]).
#[allow(clippy::too_many_arguments)]
pub fn attention(
    qkv: &[f32],
    span: (usize, usize),
    heads: usize,
    dim: usize,
    rotary: Option<(&[f32], &[f32])>,
    ctx: &mut [f32],
) {
    let start = span.0;
    let hidden = heads * dim;
    let outs: Vec<OnceLock<Vec<f32>>> = (0..heads).map(|_| OnceLock::new()).collect();
    super::team::run(heads, &|h| {
        // Each head is run exactly once, so its slot is empty.
        let _ = outs[h].set(head(qkv, span, h, heads, dim, rotary));
    });
    for (h, out) in outs.iter().enumerate() {
        let out = out.get().expect("team::run runs every head");
        for (t, o) in out.chunks_exact(dim).enumerate() {
            ctx[(start + t) * hidden + h * dim..][..dim].copy_from_slice(o);
        }
    }
}

/// Head `h` of [`attention`]: its `[len, dim]` output.
fn head(
    qkv: &[f32],
    (start, len): (usize, usize),
    h: usize,
    heads: usize,
    dim: usize,
    rotary: Option<(&[f32], &[f32])>,
) -> Vec<f32> {
    let hidden = heads * dim;
    let mut q = vec![0f32; len * dim];
    let mut k = vec![0f32; len * dim];
    let mut v = vec![0f32; len * dim];
    for t in 0..len {
        let row = &qkv[(start + t) * 3 * hidden..][..3 * hidden];
        q[t * dim..][..dim].copy_from_slice(&row[h * dim..][..dim]);
        k[t * dim..][..dim].copy_from_slice(&row[hidden + h * dim..][..dim]);
        v[t * dim..][..dim].copy_from_slice(&row[2 * hidden + h * dim..][..dim]);
    }
    if let Some((cos, sin)) = rotary {
        rotate(&mut q, dim, cos, sin);
        rotate(&mut k, dim, cos, sin);
    }
    let mut scores = vec![0f32; len];
    let mut out = vec![0f32; len * dim];
    for (qt, o) in q.chunks_exact(dim).zip(out.chunks_exact_mut(dim)) {
        for (s, kj) in scores.iter_mut().zip(k.chunks_exact(dim)) {
            *s = qt.iter().zip(kj).map(|(a, b)| a * b).sum();
        }
        super::ops::softmax_row(&mut scores);
        for (&p, vj) in scores.iter().zip(v.chunks_exact(dim)) {
            o.iter_mut().zip(vj).for_each(|(o, x)| *o += p * x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_turns_pairs_of_halves() {
        // One position, dim 4: pairs (0, 2) and (1, 3) turn by their angles.
        let mut v = vec![1.0, 2.0, 3.0, 4.0];
        let (cos, sin) = ([0.0f32, 1.0], [1.0f32, 0.0]);
        rotate(&mut v, 4, &cos, &sin);
        assert_eq!(v, vec![-3.0, 2.0, 1.0, 4.0]);
    }
}
