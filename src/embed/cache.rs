//! Repeated queries skip the model: the last [`QUERY_CACHE`] query vectors, by text. An
//! assistant asks the same question again across a session, the panel's history (Alt+Up)
//! replays past queries, and backspacing over a query re-asks its earlier prefixes; each
//! of those is ~10 ms of model time saved per call. Documents are never cached (each is
//! embedded once anyway, and its vector is stored).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

use super::Embedder;
use crate::error::Result;

/// Query vectors kept (384 or 768 floats each: at most ~800 KB).
pub const QUERY_CACHE: usize = 256;

/// An embedder whose query vectors are remembered.
pub struct CachedQueries {
    inner: Arc<dyn Embedder>,
    queries: Mutex<LruCache<String, Vec<f32>>>,
}

impl CachedQueries {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Embedder>) -> CachedQueries {
        CachedQueries {
            inner,
            queries: Mutex::new(LruCache::new(
                NonZeroUsize::new(QUERY_CACHE).unwrap_or(NonZeroUsize::MIN),
            )),
        }
    }
}

impl Embedder for CachedQueries {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn device(&self) -> String {
        self.inner.device()
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.inner.embed_documents(texts)
    }

    fn prepare_queries(&self) -> Result<()> {
        self.inner.prepare_queries()
    }

    fn embed_unstored(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.inner.embed_unstored(texts)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let cached = self
            .queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(text)
            .cloned();
        if let Some(v) = cached {
            return Ok(v);
        }
        // The model runs outside the lock: other queries are not held up meanwhile.
        let v = self.inner.embed_query(text)?;
        self.queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(text.to_string(), v.clone());
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::stand_in::StandIn;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(StandIn, AtomicUsize);

    impl Embedder for Counting {
        fn name(&self) -> &str {
            self.0.name()
        }
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn device(&self) -> String {
            self.0.device()
        }
        fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.0.embed_documents(texts)
        }
        fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.embed_query(text)
        }
    }

    #[test]
    fn a_repeated_query_runs_the_model_once_and_old_ones_are_dropped() {
        let inner = Arc::new(Counting(
            StandIn::parse("stand-in-hash-64").unwrap(),
            AtomicUsize::new(0),
        ));
        let cached = CachedQueries::new(inner.clone());
        let a = cached.embed_query("retry jitter").unwrap();
        assert_eq!(cached.embed_query("retry jitter").unwrap(), a);
        assert_eq!(inner.1.load(Ordering::Relaxed), 1);
        for i in 0..QUERY_CACHE {
            cached.embed_query(&format!("q{i}")).unwrap();
        }
        cached.embed_query("retry jitter").unwrap();
        assert_eq!(inner.1.load(Ordering::Relaxed), QUERY_CACHE + 2);
        cached.embed_documents(&["retry jitter"]).unwrap();
        assert_eq!(inner.1.load(Ordering::Relaxed), QUERY_CACHE + 2);
    }
}
