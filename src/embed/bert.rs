//! BERT (MiniLM, bge and kin): absolute positions, post-norm blocks, GELU MLP.

use std::sync::Arc;

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;
use serde::Deserialize;

use super::layers::{fuse, Activation, Block, LayerNorm, Linear, Packed, TokenTable};
use super::small::{self, Few};
use crate::model::verify::Bytes;

/// The fields of a BERT `config.json` this forward pass reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Config {
    /// Vocabulary rows.
    pub vocab_size: usize,
    /// Width of every token vector.
    pub hidden_size: usize,
    /// Blocks.
    pub num_hidden_layers: usize,
    /// Attention heads per block.
    pub num_attention_heads: usize,
    /// Width of the MLP.
    pub intermediate_size: usize,
    /// Rows of the position table: the longest input.
    pub max_position_embeddings: usize,
    /// Rows of the token-type table.
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    /// Layer-norm epsilon.
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    /// MLP activation; only `gelu` (exact) is supported.
    #[serde(default = "gelu")]
    pub hidden_act: String,
    /// Only `absolute` is supported.
    #[serde(default = "absolute")]
    pub position_embedding_type: String,
}

fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn gelu() -> String {
    "gelu".into()
}
fn absolute() -> String {
    "absolute".into()
}

/// A loaded BERT encoder.
pub struct Bert {
    word: TokenTable,
    position: Tensor,
    token_type: Tensor,
    emb_norm: LayerNorm,
    blocks: Vec<Block>,
    heads: usize,
    /// Longest input the position table allows.
    pub max_positions: usize,
}

impl Bert {
    /// Loads the weights (with or without a `bert.` prefix); the token table is read in place
    /// from `shared` when given (see [`TokenTable`]).
    pub fn load(vb: VarBuilder, c: &Config, shared: Option<&Arc<Bytes>>) -> Result<Bert> {
        if c.hidden_act != "gelu" || c.position_embedding_type != "absolute" {
            candle_core::bail!(
                "unsupported BERT variant (hidden_act {:?}, position_embedding_type {:?})",
                c.hidden_act,
                c.position_embedding_type
            )
        }
        if c.num_attention_heads == 0 || c.hidden_size % c.num_attention_heads != 0 {
            candle_core::bail!(
                "hidden_size {} is not a multiple of {} heads",
                c.hidden_size,
                c.num_attention_heads
            )
        }
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let h = c.hidden_size;
        let emb = vb.pp("embeddings");
        let scale = 1.0 / ((h / c.num_attention_heads) as f64).sqrt();
        let blocks = (0..c.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let att = l.pp("attention");
                let q = Linear::load(&att, "self.query", h, h, true)?;
                let k = Linear::load(&att, "self.key", h, h, true)?;
                let v = Linear::load(&att, "self.value", h, h, true)?;
                Block::new(
                    fuse(&[(&q, scale), (&k, 1.0), (&v, 1.0)])?,
                    Linear::load(&att, "output.dense", h, h, true)?,
                    LayerNorm::load(&att, "output.LayerNorm", h, c.layer_norm_eps)?,
                    Linear::load(&l, "intermediate.dense", c.intermediate_size, h, true)?,
                    Linear::load(&l, "output.dense", h, c.intermediate_size, true)?,
                    LayerNorm::load(&l, "output.LayerNorm", h, c.layer_norm_eps)?,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            word: TokenTable::load(&emb, "word_embeddings.weight", c.vocab_size, h, shared)?,
            position: emb.get((c.max_position_embeddings, h), "position_embeddings.weight")?,
            token_type: emb
                .get((c.type_vocab_size, h), "token_type_embeddings.weight")?
                .get(0)?,
            emb_norm: LayerNorm::load(&emb, "LayerNorm", h, c.layer_norm_eps)?,
            blocks,
            heads: c.num_attention_heads,
            max_positions: c.max_position_embeddings,
        })
    }

    /// Token vectors of the packed texts, `[tokens, hidden]`.
    pub fn forward(&self, batch: &Packed) -> Result<Tensor> {
        // Every text is a single segment, so the token type is row 0 for all tokens.
        let x = self.word.select(&batch.ids)?;
        let x = (x + self.position.index_select(&batch.positions, 0)?)?
            .broadcast_add(&self.token_type)?;
        let mut x = self.emb_norm.forward(&x)?;
        for b in &self.blocks {
            x = b.forward(&x, &batch.spans, self.heads, None, Activation::Gelu)?;
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
        let h = self.hidden();
        let mut x = self.word.gather(&few.ids)?;
        let positions = small::gather(&self.position, &few.positions, h)?;
        x.iter_mut().zip(&positions).for_each(|(a, b)| *a += b);
        small::with_f32(&self.token_type, |tt| small::add_to_rows(&mut x, tt))?;
        self.emb_norm.forward_small(&mut x)?;
        for b in &self.blocks {
            if b.forward_small(&mut x, &few.spans, self.heads, None, Activation::Gelu)?
                .is_none()
            {
                return Ok(None);
            }
        }
        Ok(Some(x))
    }

    fn hidden(&self) -> usize {
        self.token_type.dims().last().copied().unwrap_or(0)
    }
}
