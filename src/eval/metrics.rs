//! Retrieval metrics with binary relevance.

use std::collections::HashSet;

/// 1.0 when a relevant item is among the first `k`, else 0.0 (recall@k as the eval table
/// reports it: the share of queries whose answer is found in the top k).
pub fn hit_at(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    f64::from(u8::from(
        ranked.iter().take(k).any(|p| relevant.contains(p)),
    ))
}

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
    fn hits_and_ndcg() {
        let rel: HashSet<String> = ["b".to_string()].into();
        assert_eq!(hit_at(&s(&["a", "b"]), &rel, 1), 0.0);
        assert_eq!(hit_at(&s(&["a", "b"]), &rel, 5), 1.0);
        assert!((ndcg_at(&s(&["b"]), &rel, 10) - 1.0).abs() < 1e-12);
        assert!((ndcg_at(&s(&["a", "b"]), &rel, 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(ndcg_at(&s(&["a"]), &HashSet::new(), 10), 0.0);
    }
}
