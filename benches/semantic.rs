//! The semantic scan: one query against 100,000 synthetic passage vectors (384-d, as
//! all-MiniLM-L6-v2 makes, and 768-d, as nomic-embed-text does). Target: under 20 ms.
//! Side by side: the int8 matrix brain keeps, and the f32 scan it replaced (the same
//! parallel loop over f32 rows), so the speed-up is measured in one run.

use brain::search::Matrix;
use criterion::{criterion_group, criterion_main, Criterion};
use rayon::prelude::*;

/// A deterministic unit vector (xorshift noise; the values do not matter, the work does).
fn vector(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter_mut().for_each(|a| *a /= norm);
    v
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("semantic scan, 100k passages");
    for dim in [384, 768] {
        let mut matrix = Matrix::new(dim);
        for i in 0..100_000i64 {
            // About three passages per note, as in real brains.
            matrix.push(i, i / 3, &vector(i as u64 + 1, dim));
        }
        let query = vector(999_999, dim);
        group.bench_function(format!("{dim}-d int8, top 50 notes"), |b| {
            b.iter(|| matrix.top_notes(&query, 50, None))
        });
        group.bench_function(format!("{dim}-d int8, scores only"), |b| {
            b.iter(|| matrix.scores(&query))
        });
        let f32_rows: Vec<f32> = (0..100_000u64).flat_map(|i| vector(i + 1, dim)).collect();
        group.bench_function(format!("{dim}-d f32 (before), scores only"), |b| {
            b.iter(|| {
                let mut out = vec![0f32; 100_000];
                out.par_chunks_mut(4096)
                    .zip(f32_rows.par_chunks(dim * 4096))
                    .for_each(|(o, rows)| {
                        for (o, r) in o.iter_mut().zip(rows.chunks_exact(dim)) {
                            *o = brain::search::dot(r, &query);
                        }
                    });
                out
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
