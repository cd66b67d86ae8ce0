//! Embedding models: a small trait the rest of brain sees, and candle implementations
//! behind it. Serving and search code never touch candle directly.
//!
//! [`load`] is the one way to get the configured model: it hashes every required file
//! against its pin (see [`crate::model`]) and builds the model from the very bytes it
//! hashed. [`is_installed`] is the cheap check to make before, so that search can fall back
//! to BM25 with a one-line notice.

mod bert;
mod cache;
mod device;
mod half;
mod layers;
mod local;
mod nomic;
mod ops;
mod small;
pub mod stand_in;
mod team;
mod tokenize;

use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::model::{self, ModelError};
pub use cache::CachedQueries;
pub use local::{Files, LocalEmbedder, Spec};

/// A loaded, verified embedding model. Vectors are L2-normalised, so a dot product is the
/// cosine similarity.
pub trait Embedder: Send + Sync {
    /// The manifest name (`all-minilm-l6-v2`, `nomic-embed-text-v1.5`).
    fn name(&self) -> &str;
    /// Length of every vector.
    fn dim(&self) -> usize;
    /// Where it runs (`cpu`, `metal`, `cuda:0`).
    fn device(&self) -> String;
    /// Embeds passages for storage (adds the model's document prefix, if any).
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// Embeds a search query (adds the model's query prefix, if any).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>>;
    /// Makes later queries faster at a one-time cost, for a process that will ask many
    /// (the backend calls it off the query path). Nothing by default.
    fn prepare_queries(&self) -> Result<()> {
        Ok(())
    }
    /// Embeds passages that are compared but never stored (a draft's, for `brain
    /// similar`), with the document prefix. Short ones may take the queries' few-token
    /// pass, within 2e-4 of [`Embedder::embed_documents`]; stored vectors never do, so a
    /// note's vector never depends on the path. By default the same as `embed_documents`.
    fn embed_unstored(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_documents(texts)
    }
    /// The share of `text`'s tokens the model does not know (0..=1): a query mostly of
    /// such tokens has a vector that says nothing of its meaning. 0 by default.
    fn unknown_share(&self, _text: &str) -> f32 {
        0.0
    }
}

/// `known` (one entry per text of `texts`, `None` where a vector is still needed) completed
/// in order by one call of `embed` on the texts still missing: what each layer that already
/// holds some of the vectors (stored passages, the draft cache, the few-token pass) does
/// with the rest. A text missing twice is embedded once: a draft that repeats a block (a
/// pasted section, a template) would otherwise pay the model for each copy.
pub(crate) fn fill_missing<T: AsRef<str>>(
    texts: &[T],
    known: Vec<Option<Vec<f32>>>,
    embed: impl FnOnce(&[&str]) -> Result<Vec<Vec<f32>>>,
) -> Result<Vec<Vec<f32>>> {
    debug_assert_eq!(texts.len(), known.len(), "one entry of `known` per text");
    let mut missing: Vec<&str> = Vec::new();
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    // For each text: where its vector is among the fresh ones, when it is missing.
    let slots: Vec<Option<usize>> = texts
        .iter()
        .zip(&known)
        .map(|(t, v)| {
            v.is_none().then(|| {
                *first.entry(t.as_ref()).or_insert_with(|| {
                    missing.push(t.as_ref());
                    missing.len() - 1
                })
            })
        })
        .collect();
    let fresh = if missing.is_empty() {
        Vec::new()
    } else {
        embed(&missing)?
    };
    if fresh.len() != missing.len() {
        return Err(Error::Embed(format!(
            "{} vectors returned for {} texts",
            fresh.len(),
            missing.len()
        )));
    }
    Ok(known
        .into_iter()
        .zip(slots)
        .map(|(v, slot)| {
            v.or_else(|| slot.and_then(|i| fresh.get(i).cloned()))
                .unwrap_or_default()
        })
        .collect())
}

/// Choices made when loading.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Matryoshka dimension: shorter vectors from a model trained for it (nomic: 512, 256,
    /// 128, 64). `None`: the model's full width.
    pub dims: Option<usize>,
    /// Where `dims` was given, for the error when the model does not make that width.
    pub dims_from: DimsFrom,
}

/// Where a vector width was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DimsFrom {
    /// `model_dims` in the config file.
    #[default]
    Config,
    /// `brain model embed --dims`.
    Flag,
}

/// Verifies and loads the configured model (`config.model`).
/// [`ModelError::NotInstalled`] (inside [`Error::Model`]) when it is not installed.
pub fn load(config: &Config) -> Result<Arc<dyn Embedder>> {
    let options = LoadOptions {
        dims: config.model_dims,
        dims_from: DimsFrom::Config,
    };
    load_with(config, &config.model, &options)
}

/// Verifies and loads the model `name` with `options`.
pub fn load_with(config: &Config, name: &str, options: &LoadOptions) -> Result<Arc<dyn Embedder>> {
    if let Some(stand_in) = stand_in::StandIn::parse(name) {
        return Ok(Arc::new(stand_in));
    }
    let manifest = model::manifest(name)?;
    check_dims(name, manifest, options.dims, options.dims_from)?;
    let store = config.models();
    // Present but wrong files are reported by verification below, not as "not installed".
    if !store.is_installed(name) && !store.install_dir(name).is_dir() {
        return Err(ModelError::NotInstalled(name.to_string()).into());
    }
    let (manifest, files) = store.open_verified(name)?;
    let get = |path: &str| {
        files.get(path).ok_or_else(|| {
            Error::Model(ModelError::Load {
                model: name.to_string(),
                reason: format!("{path} is not a required file"),
            })
        })
    };
    let spec = Spec {
        name: manifest.name.clone(),
        architecture: manifest.architecture,
        pooling: manifest.pooling,
        max_tokens: manifest.max_tokens,
        query_prefix: manifest.query_prefix.clone(),
        document_prefix: manifest.document_prefix.clone(),
        truncate_to: options.dims.filter(|&d| d != manifest.dims),
    };
    let files = Files {
        config: get("config.json")?,
        tokenizer: get("tokenizer.json")?,
        weights: get("model.safetensors")?,
        shared_weights: files.shared("model.safetensors"),
    };
    Ok(Arc::new(LocalEmbedder::from_files(spec, files)?))
}

/// Whether the configured model is installed (files present at their pinned sizes; no
/// hashing). `load` still verifies every hash.
pub fn is_installed(config: &Config) -> bool {
    stand_in::StandIn::parse(&config.model).is_some() || config.models().is_installed(&config.model)
}

/// Whether a search should load the configured model: it is installed, or its folder is
/// there with files that are not the pinned ones (a cut-short copy, a file edited in place),
/// which `load` then refuses naming the file, rather than search going on quietly without
/// meaning. A name that is no model brain knows is an error, not "not installed": fetching
/// it would fail too.
pub fn should_load(config: &Config) -> Result<bool> {
    if stand_in::StandIn::parse(&config.model).is_some() {
        return Ok(true);
    }
    model::manifest(&config.model)?;
    let store = config.models();
    Ok(store.is_installed(&config.model) || store.install_dir(&config.model).is_dir())
}

/// Refuses a configured model name that is no model brain knows (nor a stand-in), with the
/// error that names `brain model list`.
pub fn check_model_name(config: &Config) -> Result<()> {
    if stand_in::StandIn::parse(&config.model).is_none() {
        let manifest = model::manifest(&config.model)?;
        // A width the model does not make is as much a settings mistake as the name.
        check_dims(&config.model, manifest, config.model_dims, DimsFrom::Config)?;
    }
    Ok(())
}

/// Refuses a `model_dims` that `name` (whose pins are `manifest`) does not make.
fn check_dims(
    name: &str,
    manifest: &model::Manifest,
    dims: Option<usize>,
    from: DimsFrom,
) -> Result<()> {
    let Some(d) = dims else {
        return Ok(());
    };
    if d == manifest.dims || manifest.matryoshka_dims.contains(&d) {
        return Ok(());
    }
    let widths = match &manifest.matryoshka_dims[..] {
        [] => format!("only {}-d vectors", manifest.dims),
        shorter => format!(
            "{}-d vectors (or {})",
            manifest.dims,
            shorter
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(Error::InvalidInput(match from {
        DimsFrom::Config => format!(
            "model_dims = {d}: {name} makes {widths}; set model_dims in the config to one of them, or remove it"
        ),
        DimsFrom::Flag => format!(
            "--dims {d}: {name} makes {widths}; give one of them, or leave --dims out"
        ),
    }))
}

/// The device a model loaded now would run on (`cpu`, `metal`, `cuda:0`), without loading.
pub fn device_label() -> String {
    device::expected().label
}

pub use device::{expected as expected_device, Expected as ExpectedDevice};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_texts_are_embedded_once_each_and_put_back_in_order() {
        let texts = ["a", "b", "a", "c", "b"];
        let known = vec![None, None, None, Some(vec![9.0]), None];
        let mut asked = Vec::new();
        let got = fill_missing(&texts, known, |missing| {
            asked = missing.iter().map(|t| t.to_string()).collect();
            Ok(missing
                .iter()
                .map(|t| vec![t.len() as f32, t.as_bytes()[0] as f32])
                .collect())
        })
        .unwrap();
        assert_eq!(asked, ["a", "b"]);
        let (a, b) = (vec![1.0, 97.0], vec![1.0, 98.0]);
        assert_eq!(got, [a.clone(), b.clone(), a, vec![9.0], b]);
    }

    #[test]
    fn a_short_answer_from_the_model_is_an_error() {
        let e = fill_missing(&["a", "b"], vec![None, None], |_| Ok(vec![vec![1.0]]));
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("1 vectors returned for 2 texts"));
    }
}
