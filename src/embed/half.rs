//! A weight matrix in half precision, and its product with a few rows of f32: the matrix
//! products of the few-token pass ([`super::small`]).
//!
//! Why half precision: for a query of a dozen tokens a product reads every weight once and
//! does only a dozen multiply-adds with it, so its time is the time to bring the weights in
//! from memory. As IEEE f16 they are half the bytes (MiniLM's 42 MB of f32 become 21 MB,
//! which also stays in a typical L3 cache from one query to the next), and f16 keeps 11
//! bits of mantissa: on 200 eval queries the vectors stay within 1.1e-4 of the f32 ones
//! (cosine 0.9999998 at worst), far below any difference a ranking sees.
//!
//! The product converts a few weight rows at a time to f32 in a scratch buffer that stays
//! in the L1 cache (with F16C on x86_64; elsewhere, Apple silicon included, with plain bit
//! operations the compiler vectorizes, exact for every finite half), then takes their dot
//! products with every input row there, in blocks whose partial sums stay in vector
//! registers (`pulp` compiles one generic kernel for AVX2, AVX-512 and NEON and picks at
//! run time). The outputs are split in parts run by [`super::team`].

use std::cell::RefCell;
use std::sync::OnceLock;

use half::f16;
use half::slice::HalfFloatSliceExt;
use pulp::{Simd, WithSimd};

use super::team;

/// Input rows multiplied together against the same weights.
const MR: usize = 4;

/// Weight rows converted to f32 at a time: with MiniLM's widest rows (1,536 inputs) 48 KB.
const CONVERTED_ROWS: usize = 8;

/// The fewest outputs worth a part of their own.
const MIN_TASK_OUTPUTS: usize = 32;

/// Parts per thread of the team.
const PARTS_PER_THREAD: usize = 4;

thread_local! {
    /// Each thread's converted weight rows and block of sums.
    static SCRATCH: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// A `[out, in]` weight matrix in f16.
pub struct HalfMatrix {
    /// Inputs per output (`in`).
    k: usize,
    /// Outputs (`out`).
    n: usize,
    data: Vec<f16>,
}

impl HalfMatrix {
    /// From `w`, `n` rows of `k` values (row-major `[out, in]`), rounded to the nearest half;
    /// `None` when a weight is beyond half precision's range (±65504), where the copy would
    /// hold infinities.
    pub fn from_rows(w: &[f32], n: usize, k: usize) -> Option<HalfMatrix> {
        assert_eq!(w.len(), n * k, "weight shape");
        let mut data = vec![f16::ZERO; n * k];
        data.convert_from_f32_slice(w);
        data.iter()
            .all(|h| h.is_finite())
            .then_some(HalfMatrix { k, n, data })
    }

    /// Bytes held.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.data.len() * 2
    }

    /// `x wᵀ (+ bias)` for `x` of whole rows of `in` values; rows of `out` values.
    pub fn matmul(&self, x: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
        self.matmul_then(x, bias, None)
    }

    /// [`HalfMatrix::matmul`], then `elementwise` over every output, inside the parallel
    /// parts (an activation such as GELU is otherwise a serial pass of its own).
    pub fn matmul_then(
        &self,
        x: &[f32],
        bias: Option<&[f32]>,
        elementwise: Option<fn(&mut [f32])>,
    ) -> Vec<f32> {
        let (k, n) = (self.k, self.n);
        assert!(k > 0 && x.len() % k == 0, "input rows of {k}");
        assert!(bias.is_none_or(|b| b.len() == n), "bias of {n}");
        let m = x.len() / k;
        if m == 0 || n == 0 {
            return Vec::new();
        }
        // Several parts per thread, claimed one at a time (see [`super::team`]): a thread
        // that starts late or runs slower takes fewer.
        let per = n
            .div_ceil(PARTS_PER_THREAD * team::threads())
            .max(MIN_TASK_OUTPUTS)
            .next_multiple_of(CONVERTED_ROWS);
        let parts: Vec<OnceLock<Vec<f32>>> =
            (0..n.div_ceil(per)).map(|_| OnceLock::new()).collect();
        team::run(parts.len(), &|t| {
            let (j0, j1) = (t * per, ((t + 1) * per).min(n));
            let mut out = vec![0f32; m * (j1 - j0)];
            // Reused from part to part: zeroing 48 KB per part cost a tenth of a query.
            SCRATCH.with_borrow_mut(|(rows, block)| {
                rows.resize(CONVERTED_ROWS * k, 0.0);
                block.resize(m * CONVERTED_ROWS, 0.0);
                for c0 in (j0..j1).step_by(CONVERTED_ROWS) {
                    let c1 = (c0 + CONVERTED_ROWS).min(j1);
                    let w = &mut rows[..(c1 - c0) * k];
                    widen(&self.data[c0 * k..c1 * k], w);
                    let block = &mut block[..m * (c1 - c0)];
                    pulp::Arch::new().dispatch(Dots {
                        x,
                        k,
                        w,
                        out: block,
                    });
                    let width = c1 - c0;
                    for (dst, src) in out.chunks_exact_mut(j1 - j0).zip(block.chunks_exact(width)) {
                        dst[c0 - j0..c1 - j0].copy_from_slice(src);
                    }
                }
            });
            if let Some(b) = bias {
                for row in out.chunks_exact_mut(j1 - j0) {
                    row.iter_mut().zip(&b[j0..j1]).for_each(|(y, b)| *y += b);
                }
            }
            if let Some(f) = elementwise {
                f(&mut out);
            }
            // Each part is run exactly once, so its slot is empty.
            let _ = parts[t].set(out);
        });
        let parts: Vec<&[f32]> = parts
            .iter()
            .map(|p| p.get().expect("team::run runs every part").as_slice())
            .collect();
        // Row by row, each part's stretch of the row appended.
        let mut y = Vec::with_capacity(m * n);
        for r in 0..m {
            for part in &parts {
                let width = part.len() / m;
                y.extend_from_slice(&part[r * width..(r + 1) * width]);
            }
        }
        y
    }
}

/// `src` widened to f32 into `dst` (of the same length).
fn widen(src: &[f16], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("f16c") && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU was just checked for every feature `widen_f16c` is compiled with.
        unsafe { widen_f16c(src, dst) };
        return;
    }
    widen_finite(src, dst);
}

/// [`widen`] without a conversion instruction, for the targets without F16C (Apple
/// silicon among them: `half`'s slice conversion calls a function per four values there,
/// which cost as much as the product it fed on x86). Exact for every finite half, normal
/// or subnormal, which is all a [`HalfMatrix`] holds: the half's exponent and mantissa
/// bits put where an f32's go read as a value 2^112 too small, and multiplying by a power
/// of two is exact. Plain integer and float operations, which the compiler vectorizes.
fn widen_finite(src: &[f16], dst: &mut [f32]) {
    assert_eq!(src.len(), dst.len(), "widen lengths");
    const TWO_TO_112: f32 = f32::from_bits((127 + 112) << 23);
    for (d, s) in dst.iter_mut().zip(src) {
        let h = u32::from(s.to_bits());
        let magnitude = f32::from_bits((h & 0x7fff) << 13) * TWO_TO_112;
        *d = f32::from_bits(magnitude.to_bits() | ((h & 0x8000) << 16));
    }
}

/// [`widen`] with F16C, eight values per instruction. (`half`'s own x86 path calls a
/// function per eight values, which cost as much as the product it fed.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn widen_f16c(src: &[f16], dst: &mut [f32]) {
    use std::arch::x86_64::{__m128i, _mm256_cvtph_ps, _mm256_storeu_ps, _mm_loadu_si128};
    assert_eq!(src.len(), dst.len(), "widen lengths");
    let whole = src.len() / 8 * 8;
    for at in (0..whole).step_by(8) {
        // SAFETY: `at + 8 <= whole <= len` for both slices; unaligned loads and stores.
        unsafe {
            let halves = _mm_loadu_si128(src.as_ptr().add(at).cast::<__m128i>());
            _mm256_storeu_ps(dst.as_mut_ptr().add(at), _mm256_cvtph_ps(halves));
        }
    }
    for (d, s) in dst[whole..].iter_mut().zip(&src[whole..]) {
        *d = s.to_f32();
    }
}

/// `out = x wᵀ` for a few converted weight rows `w` (`out`: `m` rows of `w.len() / k`).
struct Dots<'a> {
    x: &'a [f32],
    k: usize,
    w: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for Dots<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        // AVX2 has 16 vector registers: 4 x 2 sums and the 6 vectors each step loads.
        // AVX-512 and NEON have 32: 4 x 4 sums and 8 loads.
        if std::mem::size_of::<S::f32s>() == 32 {
            walk::<S, 2>(simd, self)
        } else {
            walk::<S, 4>(simd, self)
        }
    }
}

/// Every output, in blocks of [`MR`] input rows by `J` weight rows; ragged edges smaller.
#[inline(always)]
fn walk<S: Simd, const J: usize>(simd: S, d: Dots<'_>) {
    let Dots { x, k, w, out } = d;
    let m = x.len() / k;
    let n = w.len() / k;
    let mut j = 0;
    while j < n {
        let outputs = if n - j >= J { J } else { 1 };
        let wj = &w[j * k..];
        let mut r = 0;
        while r < m {
            let xr = &x[r * k..];
            let rows = MR.min(m - r);
            if outputs == J {
                match rows {
                    4 => put(block::<S, 4, J>(simd, xr, wj, k), out, r, j, n),
                    3 => put(block::<S, 3, J>(simd, xr, wj, k), out, r, j, n),
                    2 => put(block::<S, 2, J>(simd, xr, wj, k), out, r, j, n),
                    _ => put(block::<S, 1, J>(simd, xr, wj, k), out, r, j, n),
                }
            } else {
                for rr in 0..rows {
                    let [[sum]] = block::<S, 1, 1>(simd, &xr[rr * k..], wj, k);
                    out[(r + rr) * n + j] = sum;
                }
            }
            r += rows;
        }
        j += outputs;
    }
}

#[inline(always)]
fn put<const R: usize, const J: usize>(
    sums: [[f32; J]; R],
    out: &mut [f32],
    r: usize,
    j: usize,
    n: usize,
) {
    for (i, row) in sums.iter().enumerate() {
        out[(r + i) * n + j..][..J].copy_from_slice(row);
    }
}

/// Dot products of `R` rows of `x` with `J` rows of `w`, each `k` long from the slices'
/// starts. The `R * J` partial sums stay in vector registers while `k` runs, so each step
/// loads `R + J` vectors for `R * J` multiply-adds. (No closures in here: they would be
/// compiled without the dispatched instructions.)
#[inline(always)]
fn block<S: Simd, const R: usize, const J: usize>(
    simd: S,
    x: &[f32],
    w: &[f32],
    k: usize,
) -> [[f32; J]; R] {
    let mut xs: [&[S::f32s]; R] = [&[]; R];
    let mut x_tail: [&[f32]; R] = [&[]; R];
    for i in 0..R {
        (xs[i], x_tail[i]) = S::as_simd_f32s(&x[i * k..(i + 1) * k]);
    }
    let mut ws: [&[S::f32s]; J] = [&[]; J];
    let mut w_tail: [&[f32]; J] = [&[]; J];
    for j in 0..J {
        (ws[j], w_tail[j]) = S::as_simd_f32s(&w[j * k..(j + 1) * k]);
    }
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; J]; R];
    for step in 0..ws[0].len() {
        let mut wv = [zero; J];
        for j in 0..J {
            wv[j] = ws[j][step];
        }
        for i in 0..R {
            let xv = xs[i][step];
            for j in 0..J {
                acc[i][j] = simd.mul_add_f32s(xv, wv[j], acc[i][j]);
            }
        }
    }
    let mut sums = [[0f32; J]; R];
    for i in 0..R {
        for j in 0..J {
            let mut tail = 0f32;
            for (a, b) in x_tail[i].iter().zip(w_tail[j]) {
                tail += a * b;
            }
            sums[i][j] = simd.reduce_sum_f32s(acc[i][j]) + tail;
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[f32], k: usize, w: &[f32], n: usize) -> Vec<f32> {
        let m = x.len() / k;
        let mut y = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                y[i * n + j] = (0..k)
                    .map(|kk| x[i * k + kk] * f16::from_f32(w[j * k + kk]).to_f32())
                    .sum();
            }
        }
        y
    }

    #[test]
    fn the_product_matches_the_definition_at_every_edge() {
        // Rows of every remainder by 4; outputs in blocks, one by one, across conversion
        // chunks and tasks; inputs shorter than a vector, and vectors with a tail.
        for (m, k, n) in [
            (1, 3, 5),
            (2, 5, 17),
            (3, 8, 40),
            (4, 33, 128),
            (7, 64, 131),
            (13, 97, 70),
        ] {
            let x: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.731).sin()).collect();
            let w: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.377).cos() * 0.1).collect();
            let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
            let half = HalfMatrix::from_rows(&w, n, k).unwrap();
            let got = half.matmul(&x, Some(&bias));
            let mut want = naive(&x, k, &w, n);
            for row in want.chunks_exact_mut(n) {
                row.iter_mut().zip(&bias).for_each(|(y, b)| *y += b);
            }
            let diff = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-4, "{m}x{k}x{n}: {diff}");
            assert_eq!(half.bytes(), n * k * 2);
        }
    }

    #[test]
    fn widening_is_exact() {
        let halves: Vec<f16> = (0..1003u16)
            .map(|i| f16::from_bits(i.wrapping_mul(61)))
            .collect();
        let mut got = vec![0f32; halves.len()];
        widen(&halves, &mut got);
        for (h, g) in halves.iter().zip(&got) {
            assert!(h.to_f32() == *g || (h.is_nan() && g.is_nan()), "{h}");
        }
    }

    #[test]
    fn the_portable_widening_is_exact_for_every_finite_half() {
        let halves: Vec<f16> = (0..=u16::MAX)
            .map(f16::from_bits)
            .filter(|h| h.is_finite())
            .collect();
        let mut got = vec![0f32; halves.len()];
        widen_finite(&halves, &mut got);
        for (h, g) in halves.iter().zip(&got) {
            assert_eq!(
                h.to_f32().to_bits(),
                g.to_bits(),
                "{h} ({:#06x})",
                h.to_bits()
            );
        }
    }

    #[test]
    fn a_weight_beyond_half_range_refuses_the_copy() {
        assert!(HalfMatrix::from_rows(&[1.0, 7e4], 1, 2).is_none());
        assert!(HalfMatrix::from_rows(&[1.0, -65504.0], 1, 2).is_some());
    }

    #[test]
    fn weights_keep_eleven_bits() {
        let w: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.0137).sin() * 0.2).collect();
        let half = HalfMatrix::from_rows(&w, 1000, 1).unwrap();
        let got = half.matmul(&[1.0], None);
        for (g, w) in got.iter().zip(&w) {
            assert!((g - w).abs() <= w.abs() * 4.9e-4 + 6e-8, "{w} -> {g}");
        }
    }
}
