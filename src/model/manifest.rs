//! The pinned manifests in `audit/`, compiled into the binary so that what a build trusts
//! is fixed when it is built: a manifest cannot be edited next to an installed model.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The manifests compiled into this build, as (file name, text).
const SOURCES: &[(&str, &str)] = &[
    (
        "nomic-embed-text-v1.5.toml",
        include_str!("../../audit/nomic-embed-text-v1.5.toml"),
    ),
    (
        "all-minilm-l6-v2.toml",
        include_str!("../../audit/all-minilm-l6-v2.toml"),
    ),
];

/// The network shape a model needs; each has its own forward pass in `embed/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Architecture {
    /// BERT and its close relatives (MiniLM, bge): absolute positions, GELU.
    Bert,
    /// NomicBert: rotary positions, SwiGLU, fused QKV.
    NomicBert,
}

/// How token vectors become one text vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// Average of the real (non-padding) tokens.
    Mean,
    /// The first token (`[CLS]`).
    Cls,
}

/// One pinned file of a model, at its hub-relative path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Path relative to the model folder, `/`-separated, as on the hub.
    pub path: String,
    /// Exact size in bytes.
    pub size: u64,
    /// Lowercase hex SHA-256.
    pub sha256: String,
    /// Whether loading needs it (required files are hashed before every load).
    #[serde(default)]
    pub required: bool,
    /// Whether the hub serves it at the pinned revision (`false`: only shipped by a
    /// redistribution, so fetch skips it and import takes it when present).
    #[serde(default = "yes")]
    pub hub: bool,
}

fn yes() -> bool {
    true
}

/// A pinned model: where it comes from, what it is, and the hash of every file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The name users type (`BRAIN_MODEL`, `brain model fetch NAME`).
    pub name: String,
    /// Hub repository, `owner/name`.
    pub repo: String,
    /// The hub commit every file is fetched at (40 hex digits, never a branch).
    pub revision: String,
    /// The upstream licence of the weights.
    pub license: String,
    /// Which forward pass runs it.
    pub architecture: Architecture,
    /// Length of the vectors it produces (before any Matryoshka truncation).
    pub dims: usize,
    /// Longest input in tokens, special tokens included; longer input is truncated.
    pub max_tokens: usize,
    /// How token vectors are pooled.
    pub pooling: Pooling,
    /// Prepended to every query.
    pub query_prefix: String,
    /// Prepended to every stored passage.
    pub document_prefix: String,
    /// Dimensions the model was trained to be truncated to (empty: none).
    pub matryoshka_dims: Vec<usize>,
    /// Who checked the pins.
    pub audited_by: String,
    /// When (`YYYY-MM-DD`).
    pub audited_at: String,
    /// What was and was not confirmed, and how.
    pub notes: String,
    /// Every pinned file.
    pub files: Vec<FileSpec>,
}

impl Manifest {
    /// Parses and checks one manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = toml::from_str(text).map_err(|e| e.message().to_string())?;
        m.check()?;
        Ok(m)
    }

    /// The files loading needs.
    pub fn required_files(&self) -> impl Iterator<Item = &FileSpec> {
        self.files.iter().filter(|f| f.required)
    }

    /// Total size of every pinned file, in bytes.
    pub fn total_size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The pinned file at `path`, if any.
    pub fn file(&self, path: &str) -> Option<&FileSpec> {
        self.files.iter().find(|f| f.path == path)
    }

    fn check(&self) -> Result<(), String> {
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if self.name.is_empty()
            || !self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
        {
            return Err(format!(
                "name {:?} must be non-empty ASCII letters, digits, '-', '.', '_'",
                self.name
            ));
        }
        if !hex(&self.revision, 40) {
            return Err(format!(
                "revision {:?} is not a 40-hex-digit commit",
                self.revision
            ));
        }
        if self.dims == 0 || self.max_tokens < 3 {
            return Err("dims and max_tokens must be positive".into());
        }
        if let Some(bad) = self
            .matryoshka_dims
            .iter()
            .find(|&&d| d == 0 || d > self.dims)
        {
            return Err(format!(
                "matryoshka dimension {bad} is outside 1..={}",
                self.dims
            ));
        }
        for f in &self.files {
            if !hex(&f.sha256, 64) {
                return Err(format!(
                    "{}: sha256 {:?} is not 64 lowercase hex digits",
                    f.path, f.sha256
                ));
            }
            let safe = !f.path.is_empty()
                && !f.path.starts_with('/')
                && f.path
                    .split('/')
                    .all(|part| !part.is_empty() && part != "." && part != "..")
                && !f.path.contains('\\');
            if !safe {
                return Err(format!(
                    "file path {:?} must be relative, '/'-separated, without '..'",
                    f.path
                ));
            }
        }
        for needed in ["model.safetensors", "config.json", "tokenizer.json"] {
            if !self.required_files().any(|f| f.path == needed) {
                return Err(format!("{needed} must be pinned as a required file"));
            }
        }
        Ok(())
    }
}

/// Every manifest compiled in, default model first.
pub fn all() -> &'static [Manifest] {
    static ALL: OnceLock<Vec<Manifest>> = OnceLock::new();
    ALL.get_or_init(|| {
        SOURCES
            .iter()
            // A broken manifest is a build defect that the unit tests catch; at run time
            // it is skipped rather than taking every other model down with it.
            .filter_map(|(file, text)| match Manifest::parse(text) {
                Ok(m) => Some(m),
                Err(e) => {
                    tracing::error!("audit/{file}: {e}");
                    None
                }
            })
            .collect()
    })
}

/// The manifest named `name`, if compiled in.
pub fn find(name: &str) -> Option<&'static Manifest> {
    all().iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compiled_manifest_parses_and_is_named_after_its_file() {
        for (file, text) in SOURCES {
            let m = Manifest::parse(text).unwrap_or_else(|e| panic!("audit/{file}: {e}"));
            assert_eq!(format!("{}.toml", m.name), *file);
        }
        assert_eq!(all().len(), SOURCES.len());
    }

    #[test]
    fn the_default_model_is_pinned() {
        let m = find(crate::config::DEFAULT_MODEL).unwrap();
        assert_eq!(m.architecture, Architecture::NomicBert);
        assert_eq!(
            m.file("model.safetensors").unwrap().sha256,
            "9e7d262b1fe5ea350782829496efa831901b77486bbde1cea54a4c822d010d5c"
        );
        assert_eq!(m.query_prefix, "search_query: ");
    }

    #[test]
    fn bad_manifests_are_refused_with_the_reason() {
        let good = SOURCES[1].1;
        let cases = [
            (
                good.replace("1110a243fdf4706b3f48f1d95db1a4f5529b4d41", "main"),
                "revision",
            ),
            (
                good.replace("path = \"vocab.txt\"", "path = \"../vocab.txt\""),
                "../vocab.txt",
            ),
            (good.replace("53aa51172d", "53AA51172D"), "sha256"),
            (good.replace("dims = 384", "dims = 384\nextra = 1"), "extra"),
            (
                good.replace("matryoshka_dims = []", "matryoshka_dims = [1024]"),
                "1024",
            ),
        ];
        for (text, needle) in cases {
            let err = Manifest::parse(&text).unwrap_err();
            assert!(err.contains(needle), "{needle}: {err}");
        }
    }
}
