//! Building blocks shared by the architectures: a packed batch, linear and layer-norm
//! layers, and attention.
//!
//! A batch is *packed*: the tokens of all texts are laid end to end in one `[tokens, hidden]`
//! matrix, so the dense layers (nearly all the work) never compute a padding token. Only
//! attention needs each text on its own; it runs per text, texts in parallel.

use std::sync::{Arc, OnceLock};

use candle_core::{DType, Device, Result, Tensor, D};
use candle_nn::VarBuilder;
use rayon::prelude::*;

use super::half::HalfMatrix;
use super::{ops, small};
use crate::model::verify::Bytes;

/// Texts laid end to end.
pub struct Packed {
    /// Token ids, `[tokens]`.
    pub ids: Tensor,
    /// Position of each token inside its text, `[tokens]`.
    pub positions: Tensor,
    /// `(start, len)` of each text.
    pub spans: Vec<(usize, usize)>,
}

impl Packed {
    /// Packs tokenised texts (each already truncated to the model's window).
    pub fn new(texts: &[Vec<u32>], device: &Device) -> Result<Packed> {
        let total: usize = texts.iter().map(Vec::len).sum();
        let mut ids = Vec::with_capacity(total);
        let mut positions = Vec::with_capacity(total);
        let mut spans = Vec::with_capacity(texts.len());
        for t in texts {
            spans.push((ids.len(), t.len()));
            ids.extend_from_slice(t);
            positions.extend(0..t.len() as u32);
        }
        Ok(Packed {
            ids: Tensor::from_vec(ids, total, device)?,
            positions: Tensor::from_vec(positions, total, device)?,
            spans,
        })
    }
}

/// A model's token-embedding table. When the checkpoint is a shared mapping, rows are read
/// from it in place: a query needs a dozen of its rows, and copying the whole table at load
/// (47 MB for MiniLM, 94 MB for nomic) cost a fifth of a search without a backend, and as
/// much anonymous memory in every process (the mapped pages are clean page cache, shared
/// and reclaimable). Otherwise (no shared mapping, or a dtype other than f32, f16 and bf16)
/// it is an ordinary tensor.
pub struct TokenTable {
    source: TableSource,
    rows: usize,
    width: usize,
}

enum TableSource {
    Tensor(Tensor),
    Mapped {
        bytes: Arc<Bytes>,
        /// Byte offset of row 0 in `bytes`.
        start: usize,
        dtype: safetensors::Dtype,
    },
}

impl TokenTable {
    /// Loads `NAME.weight`-style tensor `name` of `rows` x `width` under `vb`, in place
    /// from `shared` when that is the checkpoint `vb` reads and its dtype is f32, f16 or bf16.
    pub fn load(
        vb: &VarBuilder,
        name: &str,
        rows: usize,
        width: usize,
        shared: Option<&Arc<Bytes>>,
    ) -> Result<TokenTable> {
        if let Some(mapped) = shared.and_then(|b| Self::mapped(b, &vb.prefix(), name, rows, width))
        {
            return Ok(mapped);
        }
        Ok(TokenTable {
            source: TableSource::Tensor(vb.get((rows, width), name)?),
            rows,
            width,
        })
    }

    fn mapped(
        bytes: &Arc<Bytes>,
        prefix: &str,
        name: &str,
        rows: usize,
        width: usize,
    ) -> Option<TokenTable> {
        let full = match prefix {
            "" => name.to_string(),
            p => format!("{p}.{name}"),
        };
        let file = safetensors::SafeTensors::deserialize(bytes).ok()?;
        let view = file.tensor(&full).ok()?;
        let dtype = view.dtype();
        let size = match dtype {
            safetensors::Dtype::F32 => 4,
            safetensors::Dtype::F16 | safetensors::Dtype::BF16 => 2,
            _ => return None,
        };
        if view.shape() != [rows, width] || view.data().len() != rows * width * size {
            return None;
        }
        let start = view.data().as_ptr() as usize - bytes.as_ptr() as usize;
        Some(TokenTable {
            source: TableSource::Mapped {
                bytes: bytes.clone(),
                start,
                dtype,
            },
            rows,
            width,
        })
    }

    /// The rows of `ids`, end to end, as f32.
    pub fn gather(&self, ids: &[u32]) -> Result<Vec<f32>> {
        if let Some(&bad) = ids.iter().find(|&&id| id as usize >= self.rows) {
            candle_core::bail!("token id {bad} is outside the table of {} rows", self.rows)
        }
        match &self.source {
            TableSource::Tensor(t) => small::gather(t, ids, self.width),
            TableSource::Mapped {
                bytes,
                start,
                dtype,
            } => {
                let mut out = Vec::with_capacity(ids.len() * self.width);
                for &id in ids {
                    read_row(bytes, *start, *dtype, id as usize, self.width, &mut out);
                }
                Ok(out)
            }
        }
    }

    /// The rows of `ids` (`[tokens]`, u32) as a `[tokens, width]` tensor on `ids`'s device.
    pub fn select(&self, ids: &Tensor) -> Result<Tensor> {
        match &self.source {
            TableSource::Tensor(t) => t.index_select(ids, 0),
            TableSource::Mapped { .. } => {
                let list = ids.to_vec1::<u32>()?;
                let rows = self.gather(&list)?;
                Tensor::from_vec(rows, (list.len(), self.width), ids.device())
            }
        }
    }
}

/// Appends row `row` of a `width`-wide table at byte `start` of `bytes` to `out`, as f32
/// (safetensors stores little-endian; no alignment is assumed).
fn read_row(
    bytes: &[u8],
    start: usize,
    dtype: safetensors::Dtype,
    row: usize,
    width: usize,
    out: &mut Vec<f32>,
) {
    match dtype {
        safetensors::Dtype::F32 => {
            let at = start + row * width * 4;
            out.extend(
                bytes[at..at + width * 4]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        safetensors::Dtype::F16 => {
            let at = start + row * width * 2;
            out.extend(
                bytes[at..at + width * 2]
                    .chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()),
            );
        }
        _ => {
            let at = start + row * width * 2;
            out.extend(
                bytes[at..at + width * 2]
                    .chunks_exact(2)
                    .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()),
            );
        }
    }
}

/// `y = x W^T + b` on `[tokens, in]`. The weight is kept transposed, `[in, out]` and
/// contiguous: candle's batched product runs 2.3x faster from it than from the checkpoint's
/// `[out, in]` read through a transposed view. On the CPU a half-precision copy may be
/// added for the few-token pass ([`Linear::prepare_few`]).
pub struct Linear {
    weight_t: Tensor,
    bias: Option<Tensor>,
    few: OnceLock<FewLinear>,
}

/// What the few-token pass reads of a layer: its weight in f16 and its bias.
struct FewLinear {
    weight: HalfMatrix,
    bias: Option<Vec<f32>>,
}

impl Linear {
    /// Loads `NAME.weight` (`[out, in]`, and `NAME.bias` when `bias`).
    pub fn load(
        vb: &VarBuilder,
        name: &str,
        out: usize,
        input: usize,
        bias: bool,
    ) -> Result<Linear> {
        let vb = vb.pp(name);
        let weight_t = ops::transpose(&vb.get((out, input), "weight")?)?;
        let bias = if bias {
            Some(vb.get(out, "bias")?)
        } else {
            None
        };
        Ok(Linear {
            weight_t,
            bias,
            few: OnceLock::new(),
        })
    }

    /// Builds the half-precision copy the few-token pass reads (once).
    pub fn prepare_few(&self) -> Result<()> {
        if self.few.get().is_some() {
            return Ok(());
        }
        let (k, n) = self.weight_t.dims2()?;
        // Rows per output, as the checkpoint had them: candle's strided copy transposes.
        let rows = ops::transpose(&self.weight_t)?;
        let weight =
            small::with_f32(&rows, |w| HalfMatrix::from_rows(w, n, k))?.ok_or_else(|| {
                candle_core::Error::Msg("a weight is beyond half precision's range".into())
            })?;
        let bias = self
            .bias
            .as_ref()
            .map(|b| small::with_f32(b, <[f32]>::to_vec))
            .transpose()?;
        // A racing caller built the same thing; either copy will do.
        let _ = self.few.set(FewLinear { weight, bias });
        Ok(())
    }

    /// Bytes [`Linear::prepare_few`] would take.
    pub fn few_bytes(&self) -> Result<usize> {
        let (k, n) = self.weight_t.dims2()?;
        Ok(n * k * std::mem::size_of::<half::f16>())
    }

    /// Applies the layer to `x`, rows of `in` values, in the few-token pass (see
    /// [`super::small`]); with the bias unless `bias` is false. `None` before
    /// [`Linear::prepare_few`].
    fn forward_small(&self, x: &[f32], bias: bool) -> Option<Vec<f32>> {
        let few = self.few.get()?;
        let b = few.bias.as_deref().filter(|_| bias);
        Some(few.weight.matmul(x, b))
    }

    /// [`Linear::forward_small`] with its bias, then `elementwise` over every output in
    /// the same parallel parts.
    fn forward_small_then(&self, x: &[f32], elementwise: fn(&mut [f32])) -> Option<Vec<f32>> {
        let few = self.few.get()?;
        Some(
            few.weight
                .matmul_then(x, few.bias.as_deref(), Some(elementwise)),
        )
    }

    /// Outputs of the layer.
    fn outputs_count(&self) -> Result<usize> {
        self.weight_t.dim(1)
    }

    /// Applies the layer.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = self.forward_no_bias(x)?;
        match &self.bias {
            Some(b) => y.broadcast_add(b),
            None => Ok(y),
        }
    }

    /// `x W^T` alone, for callers that add the bias in a fused pass.
    pub fn forward_no_bias(&self, x: &Tensor) -> Result<Tensor> {
        x.matmul(&self.weight_t)
    }

    /// The layer restricted to `len` output features from `start` (to split a fused
    /// projection stored in one checkpoint tensor).
    pub fn outputs(&self, start: usize, len: usize) -> Result<Linear> {
        Ok(Linear {
            weight_t: self.weight_t.narrow(1, start, len)?.contiguous()?,
            bias: self
                .bias
                .as_ref()
                .map(|b| b.narrow(0, start, len))
                .transpose()?,
            few: OnceLock::new(),
        })
    }
}

/// Stacks linear layers that read the same input into one, so one matrix product serves
/// all of them; each part's outputs are scaled by its factor (used to fold attention's
/// `1/sqrt(d)` into the query projection).
pub fn fuse(parts: &[(&Linear, f64)]) -> Result<Linear> {
    let weights = parts
        .iter()
        .map(|(l, s)| l.weight_t.affine(*s, 0.0))
        .collect::<Result<Vec<_>>>()?;
    let weight_t = Tensor::cat(&weights, 1)?;
    let bias = if parts.iter().all(|(l, _)| l.bias.is_some()) {
        let biases = parts
            .iter()
            .filter_map(|(l, s)| l.bias.as_ref().map(|b| b.affine(*s, 0.0)))
            .collect::<Result<Vec<_>>>()?;
        Some(Tensor::cat(&biases, 0)?)
    } else {
        None
    };
    Ok(Linear {
        weight_t,
        bias,
        few: OnceLock::new(),
    })
}

/// Layer normalisation over the last dimension.
pub struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    /// Loads `NAME.weight`/`NAME.bias` (or the `gamma`/`beta` of older BERT checkpoints).
    pub fn load(vb: &VarBuilder, name: &str, size: usize, eps: f64) -> Result<LayerNorm> {
        let vb = vb.pp(name);
        let (weight, bias) = match (vb.get(size, "weight"), vb.get(size, "bias")) {
            (Ok(w), Ok(b)) => (w, b),
            _ => (vb.get(size, "gamma")?, vb.get(size, "beta")?),
        };
        Ok(LayerNorm {
            weight,
            bias,
            eps: eps as f32,
        })
    }

    /// Applies the norm.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        candle_nn::ops::layer_norm(x, &self.weight, &self.bias, self.eps)
    }

    /// Applies the norm to rows on the CPU, in place.
    pub fn forward_small(&self, x: &mut [f32]) -> Result<()> {
        small::with_f32(&self.weight, |g| {
            small::with_f32(&self.bias, |b| small::layer_norm_rows(x, g, b, self.eps))
        })?
    }
}

/// Rotary position tables, `[positions, head_dim / 2]`.
pub struct Rotary {
    cos: Tensor,
    sin: Tensor,
}

impl Rotary {
    /// Tables for `positions` positions of a `dim`-wide rotary embedding.
    pub fn new(dim: usize, positions: usize, base: f64, device: &Device) -> Result<Rotary> {
        let inv_freq: Vec<f32> = (0..dim / 2)
            .map(|i| (1.0 / base.powf(2.0 * i as f64 / dim as f64)) as f32)
            .collect();
        let inv_freq = Tensor::from_vec(inv_freq, (1, dim / 2), device)?;
        let t = Tensor::arange(0u32, positions as u32, device)?
            .to_dtype(DType::F32)?
            .reshape((positions, 1))?;
        let freqs = t.matmul(&inv_freq)?;
        Ok(Rotary {
            cos: freqs.cos()?,
            sin: freqs.sin()?,
        })
    }

    /// Rotates `[heads, len, head_dim]` (GPT-NeoX style: halves, not interleaved pairs).
    fn apply(&self, x: &Tensor) -> Result<Tensor> {
        let len = x.dim(1)?;
        let cos = self.cos.narrow(0, 0, len)?;
        let sin = self.sin.narrow(0, 0, len)?;
        candle_nn::rotary_emb::rope(&x.unsqueeze(0)?, &cos, &sin)?.squeeze(0)
    }

    /// Calls `f` with the `cos` and `sin` tables (`dim / 2` values per position).
    fn with_tables<R>(&self, f: impl FnOnce(&[f32], &[f32]) -> R) -> Result<R> {
        small::with_f32(&self.cos, |c| small::with_f32(&self.sin, |s| f(c, s)))?
    }

    /// How many positions the tables cover.
    pub fn positions(&self) -> usize {
        self.cos.dim(0).unwrap_or(0)
    }
}

/// One post-norm transformer block, the shape BERT and NomicBert share:
/// `x = norm1(x + out(attention(qkv(x))))`, then `x = norm2(x + down(act(up(x))))`.
pub struct Block {
    qkv: Linear,
    out: Linear,
    norm1: LayerNorm,
    up: Linear,
    down: Linear,
    norm2: LayerNorm,
    /// On the CPU: each "bias, residual, norm" tail as one fused pass.
    fused: Option<(ops::ResidualNorm, ops::ResidualNorm)>,
}

impl Block {
    /// Assembles a block: `qkv` fused with the query pre-scaled, `up` (for SwiGLU) with value
    /// and gate fused.
    pub fn new(
        qkv: Linear,
        out: Linear,
        norm1: LayerNorm,
        up: Linear,
        down: Linear,
        norm2: LayerNorm,
    ) -> Result<Block> {
        let fused = if qkv.weight_t.device().is_cpu() {
            Some((
                ops::ResidualNorm::new(out.bias.as_ref(), &norm1.weight, &norm1.bias, norm1.eps)?,
                ops::ResidualNorm::new(down.bias.as_ref(), &norm2.weight, &norm2.bias, norm2.eps)?,
            ))
        } else {
            None
        };
        Ok(Block {
            qkv,
            out,
            norm1,
            up,
            down,
            norm2,
            fused,
        })
    }

    /// Runs the block over packed texts.
    pub fn forward(
        &self,
        x: &Tensor,
        spans: &[(usize, usize)],
        heads: usize,
        rotary: Option<&Rotary>,
        act: Activation,
    ) -> Result<Tensor> {
        let ctx = attention(&self.qkv.forward(x)?, spans, heads, rotary)?;
        if let Some((tail1, tail2)) = &self.fused {
            let x = tail1.apply(self.out.forward_no_bias(&ctx)?, x)?;
            let mlp = act.tensor(&self.up.forward(&x)?)?;
            return tail2.apply(self.down.forward_no_bias(&mlp)?, &x);
        }
        let x = self.norm1.forward(&(self.out.forward(&ctx)? + x)?)?;
        let mlp = self.down.forward(&act.tensor(&self.up.forward(&x)?)?)?;
        self.norm2.forward(&(mlp + &x)?)
    }
}

/// The activation between a block's two MLP layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// Exact GELU (BERT).
    Gelu,
    /// SwiGLU over `[value | gate]` (NomicBert).
    SwiGlu,
}

impl Activation {
    /// The batched op over a tensor.
    pub fn tensor(self, x: &Tensor) -> Result<Tensor> {
        match self {
            Activation::Gelu => ops::gelu(x),
            Activation::SwiGlu => ops::swiglu(x),
        }
    }
}

/// SwiGLU over rows of `width` values `[value | gate]` on the CPU: rows of `width / 2`.
fn swiglu_rows(x: &[f32], width: usize) -> Vec<f32> {
    let half = width / 2;
    let mut out = vec![0f32; x.len() / 2];
    for (d, row) in out.chunks_exact_mut(half).zip(x.chunks_exact(width)) {
        ops::swiglu_row(d, row);
    }
    out
}

impl Block {
    /// Builds the half-precision copies of the block's four matrices ([`super::half`]),
    /// once. Only for a block built on the CPU.
    pub fn prepare_few(&self) -> Result<()> {
        for l in [&self.qkv, &self.out, &self.up, &self.down] {
            l.prepare_few()?;
        }
        Ok(())
    }

    /// Bytes [`Block::prepare_few`] would take.
    pub fn few_bytes(&self) -> Result<usize> {
        [&self.qkv, &self.out, &self.up, &self.down]
            .into_iter()
            .map(Linear::few_bytes)
            .sum()
    }

    /// The block over a few tokens on the CPU, without candle ([`super::small`]): `x` holds
    /// the rows of every text of `spans`, `hidden` values each, and is replaced by the
    /// block's output. `None` when the block has no few-token copy (a GPU, a large model).
    pub fn forward_small(
        &self,
        x: &mut Vec<f32>,
        spans: &[(usize, usize)],
        heads: usize,
        rotary: Option<&Rotary>,
        act: Activation,
    ) -> Result<Option<()>> {
        let Some((tail1, tail2)) = &self.fused else {
            return Ok(None);
        };
        let hidden = self.out.outputs_count()?;
        let Some(qkv) = self.qkv.forward_small(x, true) else {
            return Ok(None);
        };
        let mut ctx = vec![0f32; x.len()];
        for &span in spans {
            match rotary {
                Some(r) => r.with_tables(|cos, sin| {
                    small::attention(
                        &qkv,
                        span,
                        heads,
                        hidden / heads,
                        Some((cos, sin)),
                        &mut ctx,
                    )
                })?,
                None => small::attention(&qkv, span, heads, hidden / heads, None, &mut ctx),
            }
        }
        let Some(mut y) = self.out.forward_small(&ctx, false) else {
            return Ok(None);
        };
        for (row, res) in y.chunks_exact_mut(hidden).zip(x.chunks_exact(hidden)) {
            tail1.apply_row(row, res);
        }
        let up_width = self.up.outputs_count()?;
        let mlp = match act {
            // Elementwise: applied inside the product's parts.
            Activation::Gelu => self.up.forward_small_then(&y, ops::gelu_slice),
            Activation::SwiGlu => self
                .up
                .forward_small(&y, true)
                .map(|up| swiglu_rows(&up, up_width)),
        };
        let Some(mlp) = mlp else {
            return Ok(None);
        };
        let Some(mut out) = self.down.forward_small(&mlp, false) else {
            return Ok(None);
        };
        for (row, res) in out.chunks_exact_mut(hidden).zip(y.chunks_exact(hidden)) {
            tail2.apply_row(row, res);
        }
        *x = out;
        Ok(Some(()))
    }
}

/// Self-attention over packed texts: `qkv` is `[tokens, 3 * hidden]` (query already scaled
/// by `1/sqrt(head_dim)`); returns the attended values, `[tokens, hidden]`.
pub fn attention(
    qkv: &Tensor,
    spans: &[(usize, usize)],
    heads: usize,
    rotary: Option<&Rotary>,
) -> Result<Tensor> {
    let hidden = qkv.dim(D::Minus1)? / 3;
    let head_dim = hidden / heads;
    let one = |&(start, len): &(usize, usize)| -> Result<Tensor> {
        // [len, 3, heads, head_dim] -> [3, heads, len, head_dim]
        let part = qkv
            .narrow(0, start, len)?
            .reshape((len, 3, heads, head_dim))?
            .permute((1, 2, 0, 3))?
            .contiguous()?;
        let (mut q, mut k, v) = (part.get(0)?, part.get(1)?, part.get(2)?);
        if let Some(r) = rotary {
            q = r.apply(&q)?;
            k = r.apply(&k)?;
        }
        let scores = q.matmul(&k.t()?)?;
        let probs = ops::softmax(&scores)?;
        probs.matmul(&v)?.transpose(0, 1)?.reshape((len, hidden))
    };
    let parts: Vec<Tensor> = if qkv.device().is_cpu() {
        spans.par_iter().map(one).collect::<Result<_>>()?
    } else {
        spans.iter().map(one).collect::<Result<_>>()?
    };
    Tensor::cat(&parts, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkpoint holding `emb.word.weight` (5 x 3) in `dtype`, as bytes.
    fn checkpoint(dtype: safetensors::Dtype) -> (Vec<f32>, Vec<u8>) {
        let values: Vec<f32> = (0..15).map(|i| i as f32 * 0.25 - 1.0).collect();
        let data: Vec<u8> = match dtype {
            safetensors::Dtype::F16 => values
                .iter()
                .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
                .collect(),
            _ => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        };
        let view = safetensors::tensor::TensorView::new(dtype, vec![5, 3], &data).unwrap();
        let bytes = safetensors::serialize([("emb.word.weight", view)], None).unwrap();
        (values, bytes)
    }

    #[test]
    fn a_mapped_token_table_reads_the_rows_a_copied_one_does() {
        for dtype in [safetensors::Dtype::F32, safetensors::Dtype::F16] {
            let (values, bytes) = checkpoint(dtype);
            let shared = Arc::new(Bytes::Owned(bytes));
            let vb = VarBuilder::from_slice_safetensors(&shared, DType::F32, &Device::Cpu)
                .unwrap()
                .pp("emb");
            let mapped = TokenTable::load(&vb, "word.weight", 5, 3, Some(&shared)).unwrap();
            assert!(matches!(mapped.source, TableSource::Mapped { .. }));
            let copied = TokenTable::load(&vb, "word.weight", 5, 3, None).unwrap();
            assert!(matches!(copied.source, TableSource::Tensor(_)));
            let ids = [4u32, 0, 2, 2];
            let want: Vec<f32> = ids
                .iter()
                .flat_map(|&i| values[i as usize * 3..i as usize * 3 + 3].to_vec())
                .collect();
            assert_eq!(mapped.gather(&ids).unwrap(), want, "{dtype:?}");
            assert_eq!(copied.gather(&ids).unwrap(), want, "{dtype:?}");
            let t = Tensor::new(&ids, &Device::Cpu).unwrap();
            assert_eq!(
                mapped.select(&t).unwrap().to_vec2::<f32>().unwrap(),
                copied.select(&t).unwrap().to_vec2::<f32>().unwrap()
            );
            assert!(mapped.gather(&[5]).is_err(), "row 5 of 5 is outside");
        }
    }

    #[test]
    fn a_token_table_of_another_shape_is_copied_or_refused() {
        let (_, bytes) = checkpoint(safetensors::Dtype::F32);
        let shared = Arc::new(Bytes::Owned(bytes));
        let vb = VarBuilder::from_slice_safetensors(&shared, DType::F32, &Device::Cpu)
            .unwrap()
            .pp("emb");
        // The mapping is not used for a shape the file does not have; candle then refuses.
        assert!(TokenTable::load(&vb, "word.weight", 3, 5, Some(&shared)).is_err());
    }

    #[test]
    fn packing_lays_texts_end_to_end() {
        let p = Packed::new(&[vec![5, 6, 7], vec![8], vec![9, 10]], &Device::Cpu).unwrap();
        assert_eq!(p.spans, vec![(0, 3), (3, 1), (4, 2)]);
        assert_eq!(
            p.positions.to_vec1::<u32>().unwrap(),
            vec![0, 1, 2, 0, 0, 1]
        );
    }

    #[test]
    fn packed_attention_equals_attention_per_text() {
        let dev = Device::Cpu;
        let qkv = Tensor::randn(0f32, 1.0, (7, 3 * 8), &dev).unwrap();
        let rot = Rotary::new(4, 16, 1000.0, &dev).unwrap();
        let both = attention(&qkv, &[(0, 4), (4, 3)], 2, Some(&rot)).unwrap();
        let first = attention(&qkv.narrow(0, 0, 4).unwrap(), &[(0, 4)], 2, Some(&rot)).unwrap();
        let diff = (both.narrow(0, 0, 4).unwrap() - first)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-6);
    }
}
