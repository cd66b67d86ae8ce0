//! Embedding models: a small trait the rest of brain sees, and candle implementations
//! behind it. Serving and search code never touch candle directly.

use crate::error::Result;

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
}

use std::sync::Arc;

use crate::config::Config;
use crate::model::ModelError;

/// Whether the configured model's files are installed (no hashing: a cheap check).
pub fn is_installed(_config: &Config) -> bool {
    false
}

/// Verifies and loads the configured model.
pub fn load(config: &Config) -> Result<Arc<dyn Embedder>> {
    Err(ModelError::NotInstalled(config.model.clone()).into())
}
