//! The semantic scan: one query against 100,000 synthetic passage vectors (384-d, as
//! all-MiniLM-L6-v2 makes, and 768-d, as nomic-embed-text does). Target: under 20 ms.

use brain::search::Matrix;
use criterion::{criterion_group, criterion_main, Criterion};

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
        group.bench_function(format!("{dim}-d, top 50 notes"), |b| {
            b.iter(|| matrix.top_notes(&query, 50, None))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
