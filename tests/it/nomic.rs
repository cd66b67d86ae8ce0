//! NomicBert: a tiny random checkpoint in the original nomic layout, compared with
//! transformers' native NomicBertModel (scripts/gen_golden.py); and, when
//! BRAIN_NOMIC_DIR names a folder with the real weights, published reference values.

use std::path::Path;

use crate::harness::*;
use brain::embed::{Embedder, Files, LocalEmbedder, Spec};
use brain::model::{Architecture, Pooling};

fn tiny(truncate_to: Option<usize>) -> LocalEmbedder {
    let dir = fixture("tiny-nomic");
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let (config, tokenizer, weights) = (
        read("config.json"),
        read("tokenizer.json"),
        read("model.safetensors"),
    );
    let spec = Spec {
        name: "tiny-nomic".into(),
        architecture: Architecture::NomicBert,
        pooling: Pooling::Mean,
        max_tokens: 512,
        query_prefix: "search_query: ".into(),
        document_prefix: "search_document: ".into(),
        truncate_to,
    };
    LocalEmbedder::from_files(
        spec,
        Files {
            config: &config,
            tokenizer: &tokenizer,
            weights: &weights,
            shared_weights: None,
        },
    )
    .unwrap()
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tiny_nomic_matches_transformers_with_prefixes() {
    let golden = read_json(&fixture("tiny_nomic_golden.json"));
    let model = tiny(None);
    let docs = strings(&golden["documents"]);
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    for (i, (got, want)) in model
        .embed_documents(&refs)
        .unwrap()
        .iter()
        .zip(vectors(&golden["document_vectors"]))
        .enumerate()
    {
        let d = max_diff(got, &want);
        assert!(d < 1e-5, "document {i}: max diff {d}");
    }
    // Queries after the first take the few-token pass (f16 weights): within 2e-4.
    for (q, want) in strings(&golden["queries"])
        .iter()
        .zip(vectors(&golden["query_vectors"]))
    {
        let d = max_diff(&model.embed_query(q).unwrap(), &want);
        assert!(d < 2e-4, "query {q:?}: max diff {d}");
    }
}

#[test]
fn tiny_nomic_matryoshka_matches_transformers() {
    let golden = read_json(&fixture("tiny_nomic_golden.json"));
    let dims = golden["matryoshka_dims"].as_u64().unwrap() as usize;
    let model = tiny(Some(dims));
    assert_eq!(model.dim(), dims);
    let docs = strings(&golden["documents"]);
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    for (got, want) in model
        .embed_documents(&refs)
        .unwrap()
        .iter()
        .zip(vectors(&golden["matryoshka_document_vectors"]))
    {
        assert!(max_diff(got, &want) < 1e-5);
    }
}

/// Opt-in (ignored unless asked for): the real nomic-embed-text-v1.5 files in BRAIN_NOMIC_DIR (hub layout). Checks the
/// pins, then token vectors against the values published in transformers' own test of this
/// model ("Plants create oxygen.", hidden states [1..4, 1..4], tolerance 1e-3).
#[test]
#[ignore = "needs the real nomic-embed-text-v1.5 files: BRAIN_NOMIC_DIR=DIR cargo test -- --ignored real_nomic"]
fn real_nomic_weights_match_published_values() {
    let dir = std::env::var_os("BRAIN_NOMIC_DIR")
        .expect("BRAIN_NOMIC_DIR must name a folder with the real nomic-embed-text-v1.5 files");
    let b = Brain::new();
    b.ok(&[
        "model",
        "import",
        "nomic-embed-text-v1.5",
        Path::new(&dir).to_str().unwrap(),
    ]);
    let mut config = b.config();
    config.model = "nomic-embed-text-v1.5".into();
    let (_, files) = config
        .models()
        .open_verified("nomic-embed-text-v1.5")
        .unwrap();
    let spec = Spec {
        name: "nomic-embed-text-v1.5".into(),
        architecture: Architecture::NomicBert,
        pooling: Pooling::Mean,
        max_tokens: 512,
        query_prefix: String::new(),
        document_prefix: String::new(),
        truncate_to: None,
    };
    let get = |p: &str| files.get(p).unwrap();
    let model = LocalEmbedder::from_files(
        spec,
        Files {
            config: get("config.json"),
            tokenizer: get("tokenizer.json"),
            weights: get("model.safetensors"),
            shared_weights: files.shared("model.safetensors"),
        },
    )
    .unwrap();
    let tokens = model.token_vectors("Plants create oxygen.").unwrap();
    let want = [
        [1.7039f32, -4.5610, 1.5236],
        [1.8685, -3.6936, 1.6641],
        [0.53303, -4.2081, 2.3375],
    ];
    for (i, row) in want.iter().enumerate() {
        let got = &tokens[i + 1][1..4];
        assert!(
            max_diff(got, row) < 1e-3,
            "token {}: {got:?} vs {row:?}",
            i + 1
        );
    }
    let v = embed_full(&config);
    assert_eq!(v.len(), 768);
}

fn embed_full(config: &brain::Config) -> Vec<f32> {
    brain::embed::load(config)
        .unwrap()
        .embed_query("what is a transformer")
        .unwrap()
}
