//! NomicBert (nomic-embed-text): rotary positions, fused QKV, SwiGLU MLP, post-norm blocks.
//! Reads the original nomic checkpoint layout; the hub's Python modelling code is never run.

use std::sync::Arc;

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;
use serde::Deserialize;

use super::layers::{fuse, Activation, Block, LayerNorm, Linear, Packed, Rotary, TokenTable};
use super::small::{self, Few};
use crate::model::verify::Bytes;

/// The fields of a nomic `config.json` this forward pass reads (the original key names).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Config {
    /// Vocabulary rows.
    pub vocab_size: usize,
    /// Width of every token vector.
    pub n_embd: usize,
    /// Attention heads per block.
    pub n_head: usize,
    /// Blocks.
    pub n_layer: usize,
    /// Width of the MLP.
    pub n_inner: usize,
    /// Longest input the rotary tables are built for.
    pub n_positions: usize,
    /// Rows of the token-type table (0: none).
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    /// Layer-norm epsilon.
    #[serde(default = "eps")]
    pub layer_norm_epsilon: f64,
    /// Share of each head that is rotated; only 1.0 is supported.
    #[serde(default = "one")]
    pub rotary_emb_fraction: f64,
    /// Rotary base frequency.
    #[serde(default = "base")]
    pub rotary_emb_base: f64,
    /// Only `false` (GPT-NeoX halves) is supported.
    #[serde(default)]
    pub rotary_emb_interleaved: bool,
    /// Dynamic NTK scaling; only `null` is supported.
    #[serde(default)]
    pub rotary_scaling_factor: Option<f64>,
    /// Bias on the QKV and output projections.
    #[serde(default)]
    pub qkv_proj_bias: bool,
    /// Bias on the two input projections of the MLP.
    #[serde(default)]
    pub mlp_fc1_bias: bool,
    /// Bias on the MLP's output projection.
    #[serde(default)]
    pub mlp_fc2_bias: bool,
    /// Only `swiglu` is supported.
    #[serde(default = "swiglu")]
    pub activation_function: String,
    /// Only `false` (post-norm) is supported.
    #[serde(default)]
    pub prenorm: bool,
}

fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn one() -> f64 {
    1.0
}
fn base() -> f64 {
    1000.0
}
fn swiglu() -> String {
    "swiglu".into()
}

/// A loaded NomicBert encoder.
pub struct NomicBert {
    word: TokenTable,
    token_type: Option<Tensor>,
    emb_norm: LayerNorm,
    blocks: Vec<Block>,
    rotary: Rotary,
    heads: usize,
}

impl NomicBert {
    /// Loads the weights (with or without a `nomic_bert.` prefix). `max_len` bounds the
    /// rotary tables to the longest input brain will send; the token table is read in place
    /// from `shared` when given (see [`TokenTable`]).
    pub fn load(
        vb: VarBuilder,
        c: &Config,
        max_len: usize,
        shared: Option<&Arc<Bytes>>,
    ) -> Result<NomicBert> {
        if c.rotary_emb_fraction != 1.0
            || c.rotary_emb_interleaved
            || c.rotary_scaling_factor.is_some()
            || c.activation_function != "swiglu"
            || c.prenorm
        {
            candle_core::bail!(
                "unsupported NomicBert variant (rotary_emb_fraction {}, interleaved {}, scaling {:?}, activation {:?}, prenorm {})",
                c.rotary_emb_fraction,
                c.rotary_emb_interleaved,
                c.rotary_scaling_factor,
                c.activation_function,
                c.prenorm
            )
        }
        if c.n_head == 0 || c.n_embd % c.n_head != 0 || (c.n_embd / c.n_head) % 2 != 0 {
            candle_core::bail!(
                "n_embd {} does not split into {} even-sized heads",
                c.n_embd,
                c.n_head
            )
        }
        let vb = if vb.contains_tensor("emb_ln.weight") {
            vb
        } else {
            vb.pp("nomic_bert")
        };
        let h = c.n_embd;
        let head_dim = h / c.n_head;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let blocks = (0..c.n_layer)
            .map(|i| {
                let l = vb.pp(format!("encoder.layers.{i}"));
                let wqkv = Linear::load(&l, "attn.Wqkv", 3 * h, h, c.qkv_proj_bias)?;
                // Fold 1/sqrt(head_dim) into the query outputs; rotary is linear, so it commutes.
                let (q, kv) = (wqkv.outputs(0, h)?, wqkv.outputs(h, 2 * h)?);
                let fc11 = Linear::load(&l, "mlp.fc11", c.n_inner, h, c.mlp_fc1_bias)?;
                let fc12 = Linear::load(&l, "mlp.fc12", c.n_inner, h, c.mlp_fc1_bias)?;
                Block::new(
                    fuse(&[(&q, scale), (&kv, 1.0)])?,
                    Linear::load(&l, "attn.out_proj", h, h, c.qkv_proj_bias)?,
                    LayerNorm::load(&l, "norm1", h, c.layer_norm_epsilon)?,
                    fuse(&[(&fc11, 1.0), (&fc12, 1.0)])?,
                    Linear::load(&l, "mlp.fc2", h, c.n_inner, c.mlp_fc2_bias)?,
                    LayerNorm::load(&l, "norm2", h, c.layer_norm_epsilon)?,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let emb = vb.pp("embeddings");
        let token_type = if c.type_vocab_size > 0 {
            Some(
                emb.get((c.type_vocab_size, h), "token_type_embeddings.weight")?
                    .get(0)?,
            )
        } else {
            None
        };
        Ok(NomicBert {
            word: TokenTable::load(&emb, "word_embeddings.weight", c.vocab_size, h, shared)?,
            token_type,
            emb_norm: LayerNorm::load(&vb, "emb_ln", h, c.layer_norm_epsilon)?,
            blocks,
            rotary: Rotary::new(
                head_dim,
                max_len.min(c.n_positions),
                c.rotary_emb_base,
                vb.device(),
            )?,
            heads: c.n_head,
        })
    }

    /// Longest input the rotary tables cover.
    pub fn max_positions(&self) -> usize {
        self.rotary.positions()
    }

    /// Token vectors of the packed texts, `[tokens, hidden]`.
    pub fn forward(&self, batch: &Packed) -> Result<Tensor> {
        let mut x = self.word.select(&batch.ids)?;
        if let Some(tt) = &self.token_type {
            x = x.broadcast_add(tt)?;
        }
        let mut x = self.emb_norm.forward(&x)?;
        for b in &self.blocks {
            x = b.forward(
                &x,
                &batch.spans,
                self.heads,
                Some(&self.rotary),
                Activation::SwiGlu,
            )?;
        }
        Ok(x)
    }

    /// Builds the half-precision weights of the few-token pass, once.
    pub fn prepare_few(&self) -> Result<()> {
        self.blocks.iter().try_for_each(Block::prepare_few)
    }

    /// Bytes [`Self::prepare_few`] would take.
    pub fn few_bytes(&self) -> Result<usize> {
        self.blocks.iter().map(Block::few_bytes).sum()
    }

    /// Token vectors of a few texts on the CPU without candle ([`super::small`]), rows of
    /// `hidden` values end to end; `None` when the model was loaded on a GPU.
    pub fn forward_small(&self, few: &Few) -> Result<Option<Vec<f32>>> {
        let mut x = self.word.gather(&few.ids)?;
        if let Some(tt) = &self.token_type {
            small::with_f32(tt, |tt| small::add_to_rows(&mut x, tt))?;
        }
        self.emb_norm.forward_small(&mut x)?;
        for b in &self.blocks {
            let rotary = Some(&self.rotary);
            if b.forward_small(&mut x, &few.spans, self.heads, rotary, Activation::SwiGlu)?
                .is_none()
            {
                return Ok(None);
            }
        }
        Ok(Some(x))
    }
}
