//! Element-wise work that dominates the CPU time once the matrix products are fast: the
//! attention softmax (one `exp` per score: hundreds of millions per 100 documents), GELU and
//! SwiGLU. Here they run split over rayon's threads, with an `exp` that the compiler can
//! vectorise (libm's is a scalar call), compiled twice: for AVX-512 when the CPU has it, and
//! for the baseline. On a GPU candle's own kernels are used.

use candle_core::{CpuStorage, CustomOp1, InplaceOp1, InplaceOp2, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// Values per rayon task: large enough that scheduling costs nothing, small enough to share.
const CHUNK: usize = 16 * 1024;

/// Exact (erf) GELU, as BERT uses it. On the CPU `x` is overwritten with the result (pass
/// only a temporary nobody else reads), saving an allocation as large as the MLP.
pub fn gelu(x: &Tensor) -> Result<Tensor> {
    if x.device().is_cpu() && x.is_contiguous() {
        x.inplace_op1(&Gelu)?;
        Ok(x.clone())
    } else {
        x.gelu_erf()
    }
}

/// The transpose of a 2-D tensor, contiguous. On the CPU the copy goes in square tiles
/// split over rayon's threads: candle's strided copy reads one column at a time, which at
/// load made transposing MiniLM's weights cost more than reading them (a tenth of a search
/// without a backend). Elsewhere candle copies.
pub fn transpose(w: &Tensor) -> Result<Tensor> {
    let (rows, cols) = w.dims2()?;
    if !w.device().is_cpu() || w.dtype() != candle_core::DType::F32 || !w.is_contiguous() {
        return w.t()?.contiguous();
    }
    let (storage, layout) = w.storage_and_layout();
    let candle_core::Storage::Cpu(cpu) = &*storage else {
        return w.t()?.contiguous();
    };
    let src = contiguous_f32(cpu, layout, "transpose")?;
    let out = transpose_slice(src, rows, cols);
    drop(storage);
    Tensor::from_vec(out, (cols, rows), w.device())
}

/// `src`, `rows` x `cols` row-major, as `cols` x `rows` row-major.
fn transpose_slice(src: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    const TILE: usize = 32;
    let mut out = vec![0.0f32; rows * cols];
    // Each task writes TILE whole output rows (TILE source columns): no two share a row.
    out.par_chunks_mut(TILE * rows)
        .enumerate()
        .for_each(|(block, dst)| {
            let c0 = block * TILE;
            let width = dst.len() / rows;
            for r0 in (0..rows).step_by(TILE) {
                for r in r0..(r0 + TILE).min(rows) {
                    let row = &src[r * cols + c0..r * cols + c0 + width];
                    for (c, &v) in row.iter().enumerate() {
                        dst[c * rows + r] = v;
                    }
                }
            }
        });
    out
}

/// SwiGLU over a fused projection: `x` is `[.., 2n]` holding `[value | gate]`; the result is
/// `[.., n]` with `value * silu(gate)`.
pub fn swiglu(x: &Tensor) -> Result<Tensor> {
    if x.device().is_cpu() {
        x.apply_op1_no_bwd(&SwiGlu)
    } else {
        let n = x.dim(candle_core::D::Minus1)? / 2;
        let value = x.narrow(candle_core::D::Minus1, 0, n)?;
        let gate = x.narrow(candle_core::D::Minus1, n, n)?;
        value * candle_nn::ops::silu(&gate)?
    }
}

/// Softmax over the last dimension. On the CPU `x` is overwritten with the result (pass only
/// a temporary nobody else reads): attention scores are the largest buffers of a pass.
pub fn softmax(x: &Tensor) -> Result<Tensor> {
    if x.device().is_cpu() && x.is_contiguous() {
        x.inplace_op1(&Softmax)?;
        Ok(x.clone())
    } else {
        candle_nn::ops::softmax_last_dim(x)
    }
}

/// `y <- layer_norm(y + bias + residual)`, the end of every post-norm sub-layer, fused into
/// one pass over the rows instead of three (bias add, residual add, norm). CPU only.
pub struct ResidualNorm {
    bias: Option<Vec<f32>>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl ResidualNorm {
    /// The fused op for a linear layer's `bias` followed by a layer norm.
    pub fn new(
        bias: Option<&Tensor>,
        gamma: &Tensor,
        beta: &Tensor,
        eps: f32,
    ) -> Result<ResidualNorm> {
        Ok(ResidualNorm {
            bias: bias.map(|b| b.to_vec1::<f32>()).transpose()?,
            gamma: gamma.to_vec1()?,
            beta: beta.to_vec1()?,
            eps,
        })
    }

    /// Applies it; `y` (a temporary) is overwritten and returned.
    pub fn apply(&self, y: Tensor, residual: &Tensor) -> Result<Tensor> {
        y.inplace_op2(residual, self)?;
        Ok(y)
    }
}

impl InplaceOp2 for ResidualNorm {
    fn name(&self) -> &'static str {
        "brain-residual-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<()> {
        let n = self.gamma.len();
        if l1.shape() != l2.shape() || l1.shape().dims().last() != Some(&n) {
            candle_core::bail!(
                "residual-norm: shapes {:?} and {:?} do not fit width {n}",
                l1.shape(),
                l2.shape()
            )
        }
        let (Some((a0, a1)), Some((b0, b1))) = (l1.contiguous_offsets(), l2.contiguous_offsets())
        else {
            candle_core::bail!("residual-norm: inputs must be contiguous")
        };
        let residual = &s2.as_slice::<f32>()?[b0..b1];
        let CpuStorage::F32(y) = s1 else {
            candle_core::bail!("residual-norm: f32 only")
        };
        let y = &mut y[a0..a1];
        y.par_chunks_mut(n)
            .zip(residual.par_chunks(n))
            .for_each(|(row, res)| self.apply_row(row, res));
        Ok(())
    }
}

impl ResidualNorm {
    /// `row <- layer_norm(row + bias + res)` for one token's row, on this thread (the
    /// few-token pass of [`super::small`] calls it row by row; candle's op, row-parallel).
    pub fn apply_row(&self, row: &mut [f32], res: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn wide(op: &ResidualNorm, row: &mut [f32], res: &[f32]) {
                op.row(row, res)
            }
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU was just checked for every feature `wide` is compiled with.
                return unsafe { wide(self, row, res) };
            }
        }
        self.row(row, res)
    }

    #[inline(always)]
    fn row(&self, row: &mut [f32], res: &[f32]) {
        match &self.bias {
            Some(b) => row
                .iter_mut()
                .zip(res)
                .zip(b)
                .for_each(|((y, r), b)| *y += r + b),
            None => row.iter_mut().zip(res).for_each(|(y, r)| *y += r),
        }
        let n = row.len() as f32;
        let mean = sum(row) / n;
        let mut partial = [0f32; 16];
        let mut chunks = row.chunks_exact(16);
        for c in &mut chunks {
            for (p, &v) in partial.iter_mut().zip(c) {
                *p += (v - mean) * (v - mean);
            }
        }
        let var = (partial.iter().sum::<f32>()
            + chunks
                .remainder()
                .iter()
                .map(|v| (v - mean) * (v - mean))
                .sum::<f32>())
            / n;
        let inv = 1.0 / (var + self.eps).sqrt();
        for ((y, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
            *y = (*y - mean) * inv * g + b;
        }
    }
}

/// Sum with sixteen partial sums, so the compiler keeps it in vector registers.
#[inline(always)]
fn sum(v: &[f32]) -> f32 {
    let mut partial = [0f32; 16];
    let mut chunks = v.chunks_exact(16);
    for c in &mut chunks {
        for (p, &x) in partial.iter_mut().zip(c) {
            *p += x;
        }
    }
    partial.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

fn contiguous_f32_mut<'a>(
    storage: &'a mut CpuStorage,
    layout: &Layout,
    op: &str,
) -> Result<&'a mut [f32]> {
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("{op}: input must be contiguous")
    };
    match storage {
        CpuStorage::F32(v) => Ok(&mut v[start..end]),
        _ => candle_core::bail!("{op}: f32 only"),
    }
}

fn contiguous_f32<'a>(storage: &'a CpuStorage, layout: &Layout, op: &str) -> Result<&'a [f32]> {
    let data = storage.as_slice::<f32>()?;
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&data[start..end]),
        None => candle_core::bail!("{op}: input must be contiguous"),
    }
}

/// Runs `kernel` with the CPU's widest vector instructions enabled where that is safe.
macro_rules! dispatch {
    ($kernel:ident($($arg:ident),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn wide($($arg: dispatch!(@ty $arg)),*) {
                $kernel($($arg),*)
            }
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU was just checked for every feature `wide` is compiled with.
                unsafe { wide($($arg),*) }
            } else {
                $kernel($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $kernel($($arg),*)
        }
    }};
    // Kernels take their output first (`d` or `row`) and, optionally, an input `s` or `row`.
    (@ty d) => { &mut [f32] };
    (@ty s) => { &[f32] };
    (@ty row) => { &[f32] };
}

/// Exact GELU of `d` in place, on this thread (for the few values of a short query).
pub fn gelu_slice(d: &mut [f32]) {
    dispatch!(gelu_kernel(d))
}

/// `d = value * silu(gate)` for one row `[value | gate]` (`row` is twice `d`'s length).
pub fn swiglu_row(d: &mut [f32], row: &[f32]) {
    dispatch!(swiglu_kernel(d, row))
}

/// Softmax of one row in place, on this thread.
pub fn softmax_row(d: &mut [f32]) {
    dispatch!(softmax_kernel(d))
}

struct Gelu;

impl InplaceOp1 for Gelu {
    fn name(&self) -> &'static str {
        "brain-gelu"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let data = contiguous_f32_mut(storage, layout, "gelu")?;
        data.par_chunks_mut(CHUNK)
            .for_each(|d| dispatch!(gelu_kernel(d)));
        Ok(())
    }
}

#[inline(always)]
fn gelu_kernel(d: &mut [f32]) {
    for x in d.iter_mut() {
        *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

struct SwiGlu;

impl CustomOp1 for SwiGlu {
    fn name(&self) -> &'static str {
        "brain-swiglu"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let src = contiguous_f32(storage, layout, "swiglu")?;
        let dims = layout.shape().dims();
        let Some((&last, lead)) = dims.split_last() else {
            candle_core::bail!("swiglu: scalar input")
        };
        if last % 2 != 0 {
            candle_core::bail!("swiglu: last dimension {last} is odd")
        }
        let n = last / 2;
        let mut dst = vec![0f32; src.len() / 2];
        dst.par_chunks_mut(n)
            .zip(src.par_chunks(last))
            .for_each(|(d, row)| dispatch!(swiglu_kernel(d, row)));
        let mut out = lead.to_vec();
        out.push(n);
        Ok((CpuStorage::F32(dst), Shape::from(out)))
    }
}

/// `d = value * silu(gate)` for one row `[value | gate]`.
#[inline(always)]
fn swiglu_kernel(d: &mut [f32], row: &[f32]) {
    let (value, gate) = row.split_at(d.len());
    for ((d, &v), &g) in d.iter_mut().zip(value).zip(gate) {
        *d = v * g / (1.0 + exp(-g));
    }
}

struct Softmax;

impl InplaceOp1 for Softmax {
    fn name(&self) -> &'static str {
        "brain-softmax"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let n = layout.shape().dims().last().copied().unwrap_or(1).max(1);
        let data = contiguous_f32_mut(storage, layout, "softmax")?;
        let rows_per_task = (CHUNK / n).max(1);
        data.par_chunks_mut(n * rows_per_task).for_each(|d| {
            for d in d.chunks_mut(n) {
                dispatch!(softmax_kernel(d))
            }
        });
        Ok(())
    }
}

/// Softmax of one row, in place.
#[inline(always)]
fn softmax_kernel(d: &mut [f32]) {
    let max = d.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for x in d.iter_mut() {
        *x = exp(*x - max);
    }
    let inv = 1.0 / sum(d);
    for x in d.iter_mut() {
        *x *= inv;
    }
}

/// `e^x` for f32 in straight-line arithmetic the compiler can vectorise: `x = k ln2 + r`
/// with `|r| <= ln2 / 2`, `e^r` by its Taylor series to degree 7 (relative error below
/// 2e-8 there, under f32's own rounding), and `2^k` built in the exponent bits.
/// Inputs below -87 give 0 and above 88 give `f32::MAX`-scale values, like `f32::exp`.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split in two so that k * LN2_HI is exact.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer without a branch.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let k = (x * LOG2E + ROUND) - ROUND;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    p * f32::from_bits(((k as i32 + 127) as u32) << 23)
}

/// The error function, Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, the size of
/// one f32 rounding step near 1), cheap enough to run on every activation.
#[inline(always)]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_8,
        -1.453_152_1,
        1.061_405_4,
    ];
    let ax = x.abs();
    let t = 1.0 / (1.0 + P * ax);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let y = 1.0 - poly * exp(-ax * ax);
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_matches_candle_on_ragged_shapes() {
        for (rows, cols) in [(1, 1), (3, 70), (33, 31), (64, 97)] {
            let data: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 7.0).collect();
            let w = Tensor::from_vec(data, (rows, cols), &candle_core::Device::Cpu).unwrap();
            let ours = transpose(&w).unwrap();
            let theirs = w.t().unwrap().contiguous().unwrap();
            assert_eq!(ours.dims(), &[cols, rows]);
            assert_eq!(
                ours.to_vec2::<f32>().unwrap(),
                theirs.to_vec2::<f32>().unwrap()
            );
        }
    }
    use candle_core::Device;

    fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    }

    #[test]
    fn exp_is_accurate_to_a_few_ulps() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let (ours, std) = (exp(x), x.exp());
            assert!(
                ((ours - std) / std).abs() < 4e-7,
                "exp({x}) = {ours}, std {std}"
            );
            x += 0.013;
        }
        assert_eq!(exp(-1000.0), exp(-87.0));
        assert!(exp(-87.0) > 0.0 && exp(-87.0) < 1e-37);
    }

    #[test]
    fn erf_is_accurate() {
        // Reference values of erf to 9 digits.
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
            (4.0, 0.999_999_98),
        ] {
            assert!(
                (erf(x) - want).abs() < 3e-7,
                "erf({x}) = {} want {want}",
                erf(x)
            );
        }
    }

    #[test]
    fn parallel_ops_match_candle() {
        let x = Tensor::arange(-50_000f32, 50_000f32, &Device::Cpu)
            .unwrap()
            .affine(1e-4, 0.0)
            .unwrap();
        let x = x.reshape((100, 1000)).unwrap();
        assert!(max_diff(&gelu(&x.copy().unwrap()).unwrap(), &x.gelu_erf().unwrap()) < 1e-6);

        let value = x.narrow(1, 0, 500).unwrap();
        let gate = x.narrow(1, 500, 500).unwrap();
        let theirs = (value * candle_nn::ops::silu(&gate).unwrap()).unwrap();
        let ours = swiglu(&x).unwrap();
        assert_eq!(ours.dims(), &[100, 500]);
        assert!(
            max_diff(&ours, &theirs) < 1e-5,
            "values reach 25: a few f32 roundings"
        );

        let scores = Tensor::randn(0f32, 4.0, (3, 7, 37), &Device::Cpu).unwrap();
        let want = candle_nn::ops::softmax_last_dim(&scores).unwrap();
        assert!(max_diff(&softmax(&scores.copy().unwrap()).unwrap(), &want) < 1e-6);

        let (y, res) = (
            Tensor::randn(0f32, 1.0, (5, 40), &Device::Cpu).unwrap(),
            Tensor::randn(0f32, 1.0, (5, 40), &Device::Cpu).unwrap(),
        );
        let (bias, gamma, beta) = (
            Tensor::randn(0f32, 1.0, 40, &Device::Cpu).unwrap(),
            Tensor::randn(1f32, 0.1, 40, &Device::Cpu).unwrap(),
            Tensor::randn(0f32, 0.1, 40, &Device::Cpu).unwrap(),
        );
        let want = candle_nn::ops::layer_norm(
            &(y.broadcast_add(&bias).unwrap() + &res).unwrap(),
            &gamma,
            &beta,
            1e-12,
        )
        .unwrap();
        let op = ResidualNorm::new(Some(&bias), &gamma, &beta, 1e-12).unwrap();
        assert!(max_diff(&op.apply(y.copy().unwrap(), &res).unwrap(), &want) < 1e-5);
    }
}
