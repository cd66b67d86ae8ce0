//! The [`Embedder`] over a candle model: tokenise, pack by length, run the encoder, pool,
//! normalise.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;

use super::bert::{self, Bert};
use super::layers::Packed;
use super::nomic::{self, NomicBert};
use super::small::{self, Few};
use super::tokenize::TextTokenizer;
use super::{device, Embedder};
use crate::error::{Error, Result};
use crate::model::{Architecture, Pooling};

/// Queries of at most this many tokens take the few-token pass on the CPU
/// ([`super::small`]); a longer text (a pasted paragraph) goes through candle's batched
/// products, which are faster from about there.
const FEW_TOKENS: usize = 64;

/// The few-token pass's weights are not built yet.
const FEW_UNBUILT: u8 = 0;
/// They are built.
const FEW_READY: u8 = 1;
/// Building them failed.
const FEW_FAILED: u8 = 2;

/// The most memory the few-token pass's half-precision weights may take. MiniLM's take
/// 21 MB; nomic-embed-text's would take 226 MB beside its 547 MB of f32, so on a CPU its
/// queries stay with candle.
const FEW_BYTES: usize = 64 << 20;

/// Values in the widest activation of one forward pass (the MLP's): tokens per pass are
/// chosen so it stays near 24 MB. That is plenty for the matrix products to run at full
/// speed, and keeps every buffer under glibc's largest heap threshold (see
/// [`keep_freed_memory`]), so buffers are reused instead of faulted in afresh each pass.
const BATCH_VALUES: usize = 6 << 20;

/// What an embedder needs to know besides its files (from a manifest, or a test).
#[derive(Debug, Clone)]
pub struct Spec {
    /// Name reported by [`Embedder::name`].
    pub name: String,
    /// Which forward pass.
    pub architecture: Architecture,
    /// How token vectors are pooled.
    pub pooling: Pooling,
    /// Longest input, in tokens.
    pub max_tokens: usize,
    /// Prepended to queries.
    pub query_prefix: String,
    /// Prepended to documents.
    pub document_prefix: String,
    /// Matryoshka truncation: layer-norm, keep the first `dims` values, normalise.
    pub truncate_to: Option<usize>,
}

/// The three files a model is built from.
pub struct Files<'a> {
    /// `config.json`.
    pub config: &'a [u8],
    /// `tokenizer.json`.
    pub tokenizer: &'a [u8],
    /// `model.safetensors`.
    pub weights: &'a [u8],
    /// The bytes `weights` borrows, when they can be kept: the token table is then read
    /// in place instead of copied (see [`super::layers::TokenTable`]).
    pub shared_weights: Option<std::sync::Arc<crate::model::verify::Bytes>>,
}

enum Encoder {
    Bert(Bert),
    Nomic(NomicBert),
}

/// A candle model behind the [`Embedder`] trait.
pub struct LocalEmbedder {
    spec: Spec,
    hidden: usize,
    device: Device,
    tokenizer: TextTokenizer,
    encoder: Encoder,
    batch_tokens: usize,
    /// Whether queries may take the few-token pass (CPU, and the half-precision weights fit
    /// [`FEW_BYTES`]).
    few_allowed: bool,
    /// Where its weights stand: [`FEW_UNBUILT`], [`FEW_READY`] (built by
    /// [`Embedder::prepare_queries`] or a second text) or [`FEW_FAILED`] (never tried again).
    few: AtomicU8,
    /// Queries embedded so far, up to 2.
    queries: AtomicUsize,
    /// The mapped weights the token table reads in place, checked before each use.
    mapped: Option<std::sync::Arc<crate::model::verify::Bytes>>,
}

impl LocalEmbedder {
    /// Builds a model from its files' bytes, on the best device here. The caller has verified
    /// the bytes ([`super::load`] does); this is also the way to run a model that has no
    /// manifest, such as a test checkpoint.
    pub fn from_files(spec: Spec, files: Files<'_>) -> Result<LocalEmbedder> {
        let device = device::select();
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            Error::Model(crate::model::ModelError::Load {
                model: spec.name.clone(),
                reason: format!("{what}: {e}"),
            })
        };
        let vb = VarBuilder::from_slice_safetensors(files.weights, DType::F32, &device)
            .map_err(|e| fail("model.safetensors", &e))?;
        keep_freed_memory();
        let (encoder, hidden, max_positions, widest) = match spec.architecture {
            Architecture::Bert => {
                let c: bert::Config =
                    serde_json::from_slice(files.config).map_err(|e| fail("config.json", &e))?;
                let m = Bert::load(vb, &c, files.shared_weights.as_ref())
                    .map_err(|e| fail("model.safetensors", &e))?;
                let max = m.max_positions;
                (Encoder::Bert(m), c.hidden_size, max, c.intermediate_size)
            }
            Architecture::NomicBert => {
                let c: nomic::Config =
                    serde_json::from_slice(files.config).map_err(|e| fail("config.json", &e))?;
                let m = NomicBert::load(vb, &c, spec.max_tokens, files.shared_weights.as_ref())
                    .map_err(|e| fail("model.safetensors", &e))?;
                let max = m.max_positions();
                (Encoder::Nomic(m), c.n_embd, max, 2 * c.n_inner)
            }
        };
        let batch_tokens =
            (BATCH_VALUES / widest.max(1)).clamp(max_positions.min(spec.max_tokens), 4096);
        if let Some(d) = spec.truncate_to {
            if d == 0 || d > hidden {
                return Err(Error::InvalidInput(format!(
                    "dimension {d} is outside 1..={hidden} for {}",
                    spec.name
                )));
            }
        }
        let tokenizer =
            TextTokenizer::from_bytes(files.tokenizer, spec.max_tokens.min(max_positions))
                .map_err(|e| fail("tokenizer.json", &e))?;
        let few_allowed = device.is_cpu()
            && few_bytes(&encoder).map_err(|e| fail("model.safetensors", &e))? <= FEW_BYTES;
        Ok(LocalEmbedder {
            spec,
            hidden,
            device,
            tokenizer,
            encoder,
            batch_tokens,
            few_allowed,
            few: AtomicU8::new(FEW_UNBUILT),
            queries: AtomicUsize::new(0),
            mapped: files.shared_weights.clone(),
        })
    }

    /// Refuses weights written to since they were verified (see
    /// [`crate::model::verify::Bytes::unchanged`]): one `fstat`, against embedding with
    /// bytes nobody hashed and storing those vectors for good.
    fn weights_unchanged(&self) -> Result<()> {
        match &self.mapped {
            Some(bytes) => Ok(bytes.unchanged(&self.spec.name)?),
            None => Ok(()),
        }
    }

    /// Embeds texts exactly as given (prefixes already applied), in input order.
    pub fn embed_raw(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.weights_unchanged()?;
        let ids = self.tokenizer.encode(texts).map_err(Error::Embed)?;
        // Similar lengths go together so the per-text attention work is balanced across
        // threads; packing means there is no padding to waste either way.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let mut out = vec![Vec::new(); ids.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < order.len()
                && (end == start || tokens + ids[order[end]].len() <= self.batch_tokens)
            {
                tokens += ids[order[end]].len();
                end += 1;
            }
            let batch: Vec<Vec<u32>> = order[start..end].iter().map(|&i| ids[i].clone()).collect();
            let vectors = self.run(&batch).map_err(|e| Error::Embed(e.to_string()))?;
            for (&i, v) in order[start..end].iter().zip(vectors) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }

    /// Builds the few-token pass's weights, when this model may have them (once; a
    /// failure is reported once, and queries keep candle's path from then on).
    fn prepare_few(&self) -> Result<()> {
        if !self.few_allowed || self.few.load(Ordering::Acquire) != FEW_UNBUILT {
            return Ok(());
        }
        self.weights_unchanged()?;
        let built = match &self.encoder {
            Encoder::Bert(m) => m.prepare_few(),
            Encoder::Nomic(m) => m.prepare_few(),
        };
        let state = if built.is_ok() { FEW_READY } else { FEW_FAILED };
        self.few.store(state, Ordering::Release);
        built.map_err(|e| Error::Embed(e.to_string()))
    }

    /// A text (its prefix applied) through the few-token pass, when this model has one and
    /// the text is short enough; `None` sends it through candle. The pass's weights cost
    /// about three queries to build, so a process builds them at its second text (or when
    /// asked ahead, [`Embedder::prepare_queries`]): a one-shot search does not pay for them.
    fn few_pass(&self, text: &str) -> Result<Option<Vec<f32>>> {
        if !self.few_allowed {
            return Ok(None);
        }
        self.weights_unchanged()?;
        if self.few.load(Ordering::Acquire) == FEW_UNBUILT {
            if self.queries.fetch_add(1, Ordering::Relaxed) == 0 {
                return Ok(None);
            }
            // The pass only saves time: if its weights cannot be built, candle answers.
            let _ = self.prepare_few();
        }
        if self.few.load(Ordering::Acquire) != FEW_READY {
            return Ok(None);
        }
        let ids = self
            .tokenizer
            .encode(&[text.to_string()])
            .map_err(Error::Embed)?;
        if ids.iter().map(Vec::len).sum::<usize>() > FEW_TOKENS {
            return Ok(None);
        }
        let few = Few::new(&ids);
        let hidden = match &self.encoder {
            Encoder::Bert(m) => m.forward_small(&few),
            Encoder::Nomic(m) => m.forward_small(&few),
        }
        .map_err(|e| Error::Embed(e.to_string()))?;
        Ok(hidden.map(|h| self.pool(&h, few.spans[0])))
    }

    fn run(&self, batch: &[Vec<u32>]) -> candle_core::Result<Vec<Vec<f32>>> {
        let packed = Packed::new(batch, &self.device)?;
        let hidden = match &self.encoder {
            Encoder::Bert(m) => m.forward(&packed)?,
            Encoder::Nomic(m) => m.forward(&packed)?,
        };
        let pooled = packed
            .spans
            .iter()
            .map(|&(start, len)| match self.spec.pooling {
                Pooling::Mean => hidden.narrow(0, start, len)?.mean(0),
                Pooling::Cls => hidden.get(start),
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        let mut pooled = Tensor::stack(&pooled, 0)?;
        if let Some(d) = self.spec.truncate_to.filter(|&d| d < self.hidden) {
            let ones = Tensor::ones(self.hidden, DType::F32, &self.device)?;
            let zeros = Tensor::zeros(self.hidden, DType::F32, &self.device)?;
            pooled = candle_nn::ops::layer_norm(&pooled, &ones, &zeros, 1e-5)?.narrow(1, 0, d)?;
        }
        let norm = pooled
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12, f64::MAX)?;
        pooled.broadcast_div(&norm)?.to_vec2::<f32>()
    }

    /// One text's vector from the few-token pass's rows (`hidden` values each): pooled,
    /// truncated (Matryoshka) and normalised as [`Self::run`]'s candle path does it.
    fn pool(&self, rows: &[f32], (start, len): (usize, usize)) -> Vec<f32> {
        let h = self.hidden;
        let rows = &rows[start * h..(start + len) * h];
        let mut v = match self.spec.pooling {
            Pooling::Mean => {
                let mut sum = vec![0f32; h];
                for row in rows.chunks_exact(h) {
                    sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
                }
                sum.iter_mut().for_each(|s| *s /= len.max(1) as f32);
                sum
            }
            Pooling::Cls => rows.get(..h).map(<[f32]>::to_vec).unwrap_or(vec![0.0; h]),
        };
        if let Some(d) = self.spec.truncate_to.filter(|&d| d < h) {
            small::layer_norm_rows(&mut v, &vec![1.0; h], &vec![0.0; h], 1e-5);
            v.truncate(d);
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }

    /// The encoder's output for each token of `text` (no prefix added, special tokens
    /// included), `[tokens][hidden]`: for checking against reference implementations.
    pub fn token_vectors(&self, text: &str) -> Result<Vec<Vec<f32>>> {
        let ids = self
            .tokenizer
            .encode(&[text.to_string()])
            .map_err(Error::Embed)?;
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let packed = Packed::new(&ids, &self.device)?;
            match &self.encoder {
                Encoder::Bert(m) => m.forward(&packed)?,
                Encoder::Nomic(m) => m.forward(&packed)?,
            }
            .to_vec2::<f32>()
        };
        run().map_err(|e| Error::Embed(e.to_string()))
    }

    /// The model's window, in tokens.
    pub fn max_tokens(&self) -> usize {
        self.tokenizer.max_tokens()
    }
}

/// Bytes the few-token pass's weights would take.
fn few_bytes(encoder: &Encoder) -> candle_core::Result<usize> {
    match encoder {
        Encoder::Bert(m) => m.few_bytes(),
        Encoder::Nomic(m) => m.few_bytes(),
    }
}

/// Tells glibc to keep freed buffers of up to 32 MB (its maximum) in the heap instead of
/// returning them to the system. Each forward pass frees and reallocates the same large
/// activations; without this every one comes back as fresh pages that the kernel must
/// fault in and zero, which cost a tenth of the run time in profiles.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only changes allocator tuning parameters; it is called once,
            // before the large allocations it concerns.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
                libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
            }
        });
    }
}

impl Embedder for LocalEmbedder {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn dim(&self) -> usize {
        self.spec.truncate_to.unwrap_or(self.hidden)
    }

    fn device(&self) -> String {
        device::label(&self.device)
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let texts: Vec<String> = texts
            .iter()
            .map(|t| format!("{}{t}", self.spec.document_prefix))
            .collect();
        self.embed_raw(&texts)
    }

    fn prepare_queries(&self) -> Result<()> {
        self.prepare_few()
    }

    fn unknown_share(&self, text: &str) -> f32 {
        self.tokenizer.unknown_share(text)
    }

    fn embed_unstored(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let texts: Vec<String> = texts
            .iter()
            .map(|t| format!("{}{t}", self.spec.document_prefix))
            .collect();
        let mut out = Vec::with_capacity(texts.len());
        for t in &texts {
            out.push(self.few_pass(t)?);
        }
        // What the pass did not take (long passages, the first of a fresh process) goes
        // through candle in one batch.
        super::fill_missing(&texts, out, |rest| {
            self.embed_raw(&rest.iter().map(|t| t.to_string()).collect::<Vec<_>>())
        })
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let text = format!("{}{text}", self.spec.query_prefix);
        if let Some(v) = self.few_pass(&text)? {
            return Ok(v);
        }
        let mut v = self.embed_raw(&[text])?;
        v.pop()
            .ok_or_else(|| Error::Embed("no vector returned".into()))
    }
}
