//! Element-wise activations that candle runs on one thread on the CPU. Over a batch of
//! documents they touch tens of millions of values per layer, so on the CPU they run here,
//! split over rayon's threads; on a GPU candle's own kernels are used.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// Values per rayon task: large enough that scheduling costs nothing, small enough to share.
const CHUNK: usize = 16 * 1024;

/// Exact (erf) GELU, as BERT uses it.
pub fn gelu(x: &Tensor) -> Result<Tensor> {
    if x.device().is_cpu() {
        x.apply_op1_no_bwd(&Gelu)
    } else {
        x.gelu_erf()
    }
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

fn contiguous_f32<'a>(storage: &'a CpuStorage, layout: &Layout, op: &str) -> Result<&'a [f32]> {
    let data = storage.as_slice::<f32>()?;
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(&data[start..end]),
        None => candle_core::bail!("{op}: input must be contiguous"),
    }
}

struct Gelu;

impl CustomOp1 for Gelu {
    fn name(&self) -> &'static str {
        "brain-gelu"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let src = contiguous_f32(storage, layout, "gelu")?;
        let mut dst = vec![0f32; src.len()];
        dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| {
            for (d, &x) in d.iter_mut().zip(s) {
                *d = 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
            }
        });
        Ok((CpuStorage::F32(dst), layout.shape().clone()))
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
        let Some((&last, lead)) = dims.split_last() else { candle_core::bail!("swiglu: scalar input") };
        if last % 2 != 0 {
            candle_core::bail!("swiglu: last dimension {last} is odd")
        }
        let n = last / 2;
        let mut dst = vec![0f32; src.len() / 2];
        dst.par_chunks_mut(n).zip(src.par_chunks(last)).for_each(|(d, row)| {
            let (value, gate) = row.split_at(n);
            for ((d, &v), &g) in d.iter_mut().zip(value).zip(gate) {
                *d = v * g / (1.0 + (-g).exp());
            }
        });
        let mut out = lead.to_vec();
        out.push(n);
        Ok((CpuStorage::F32(dst), Shape::from(out)))
    }
}

/// The error function, Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, the size of
/// one f32 rounding step near 1), cheap enough to run on every activation.
#[inline]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [0.254_829_6, -0.284_496_74, 1.421_413_8, -1.453_152_1, 1.061_405_4];
    let ax = x.abs();
    let t = 1.0 / (1.0 + P * ax);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let y = 1.0 - poly * (-ax * ax).exp();
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn erf_is_accurate() {
        // Reference values of erf to 9 digits.
        for (x, want) in
            [(0.0f32, 0.0f32), (0.5, 0.520_499_9), (1.0, 0.842_700_8), (-2.0, -0.995_322_3), (4.0, 0.999_999_98)]
        {
            assert!((erf(x) - want).abs() < 3e-7, "erf({x}) = {} want {want}", erf(x));
        }
    }

    #[test]
    fn parallel_ops_match_candle() {
        let x = Tensor::arange(-50_000f32, 50_000f32, &Device::Cpu).unwrap().affine(1e-4, 0.0).unwrap();
        let x = x.reshape((100, 1000)).unwrap();
        let ours = gelu(&x).unwrap();
        let theirs = x.gelu_erf().unwrap();
        let diff = (ours - theirs).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(diff < 1e-6, "{diff}");

        let ours = swiglu(&x).unwrap();
        let value = x.narrow(1, 0, 500).unwrap();
        let gate = x.narrow(1, 500, 500).unwrap();
        let theirs = (value * candle_nn::ops::silu(&gate).unwrap()).unwrap();
        assert_eq!(ours.dims(), &[100, 500]);
        let diff = (ours - theirs).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(diff < 1e-5, "{diff}"); // values reach 25: a few f32 roundings
    }
}
