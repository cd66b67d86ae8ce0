//! Retrieval metrics with binary relevance.

use std::collections::HashSet;

/// Normalised discounted cumulative gain over the first `k` results.
pub fn ndcg_at(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, p)| relevant.contains(*p))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    if ideal == 0.0 {
        0.0
    } else {
        dcg / ideal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn ndcg() {
        let rel: HashSet<String> = ["b".to_string()].into();
        assert!((ndcg_at(&s(&["b"]), &rel, 10) - 1.0).abs() < 1e-12);
        assert!((ndcg_at(&s(&["a", "b"]), &rel, 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(ndcg_at(&s(&["a"]), &HashSet::new(), 10), 0.0);
    }
}
