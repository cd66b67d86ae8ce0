//! Core speed over the 7,426-page tldr corpus: cold index build, a sync with nothing to do,
//! and in-process BM25 queries. Whole-process figures come from `scripts/bench-cli.sh`.

use std::path::{Path, PathBuf};

use brain::search::{Mode, SearchRequest};
use brain::{Config, Engine};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/tldr")
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tldr");
    copy_dir(&corpus(), &root);

    let mut group = c.benchmark_group("index");
    group.sample_size(10);
    group.bench_function("cold build (7426 notes)", |b| {
        b.iter_batched(
            || {
                let data = tempfile::tempdir().unwrap();
                let engine = Engine::open(Config::for_root(&root, data.path())).unwrap();
                (data, engine)
            },
            |(data, engine)| {
                engine.sync().unwrap();
                (data, engine)
            },
            BatchSize::PerIteration,
        )
    });
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(Config::for_root(&root, data.path())).unwrap();
    engine.sync().unwrap();
    group.bench_function("no-change sync", |b| b.iter(|| engine.sync().unwrap()));
    group.finish();

    let mut group = c.benchmark_group("bm25");
    for query in [
        "git commit",
        "how do i undo the last commit",
        "compress files into an archive",
    ] {
        let mut req = SearchRequest::new(query);
        req.mode = Mode::Bm25;
        req.sync = false;
        group.bench_function(query, |b| b.iter(|| engine.search(&req).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
