//! A stand-in embedder for benchmarks at scale: `stand-in-hash-DIM` (say
//! `BRAIN_MODEL=stand-in-hash-768`) hashes each word and word pair of a text to a signed
//! slot of a DIM-long vector and normalises it. It knows nothing of meaning; it exists so
//! `scripts/bench-scale.sh` can give a 100k-note brain real vectors of a real width in
//! seconds and measure the scan, the re-rank, the fusion and the backend's memory, where
//! embedding with a model on a CPU would take hours. Its vectors are stored under its own
//! name, so they never mix with a real model's; the benchmark's output says it was used.

use super::Embedder;
use crate::error::Result;

/// The model-name prefix that selects the stand-in.
pub const PREFIX: &str = crate::model::STAND_IN_PREFIX;

/// The widths a stand-in may have.
pub const WIDTHS: std::ops::RangeInclusive<usize> = crate::model::STAND_IN_WIDTHS;

/// The hashing embedder.
#[derive(Debug, Clone)]
pub struct StandIn {
    name: String,
    dim: usize,
}

impl StandIn {
    /// The stand-in `name` names (`stand-in-hash-768`), if it names one: a width of 8 to
    /// 4096.
    pub fn parse(name: &str) -> Option<StandIn> {
        let dim: usize = name.strip_prefix(PREFIX)?.parse().ok()?;
        WIDTHS.contains(&dim).then(|| StandIn {
            name: name.to_string(),
            dim,
        })
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut add = |key: &[&str], weight: f32| {
            let h = fnv1a(key);
            let slot = (h % self.dim as u64) as usize;
            v[slot] += if h >> 63 == 0 { weight } else { -weight };
        };
        for (i, w) in words.iter().enumerate() {
            add(&[w], 1.0);
            if let Some(next) = words.get(i + 1) {
                add(&[w, next], 0.5);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

/// FNV-1a over the words, with a separator between them.
fn fnv1a(words: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl Embedder for StandIn {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn device(&self) -> String {
        "cpu (stand-in)".into()
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed(t)).collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_its_own_names_and_unit_vectors_that_share_words() {
        assert!(StandIn::parse("all-minilm-l6-v2").is_none());
        assert!(StandIn::parse("stand-in-hash-2").is_none());
        assert!(StandIn::parse("stand-in-hash-x").is_none());
        let e = StandIn::parse("stand-in-hash-768").unwrap();
        assert_eq!(e.dim(), 768);
        let a = e.embed_query("extract a tar archive").unwrap();
        let b = e
            .embed_documents(&["how to extract a tar archive quickly"])
            .unwrap();
        let c = e.embed_query("kill a process by name").unwrap();
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert!(dot(&a, &b[0]) > dot(&a, &c));
        assert_eq!(e.embed_query("").unwrap(), vec![0.0; 768]);
    }
}
