//! Repeated queries skip the model: the last [`QUERY_CACHE`] query vectors, by text. An
//! assistant asks the same question again across a session, the panel's history (Alt+Up)
//! replays past queries, and backspacing over a query re-asks its earlier prefixes; each
//! of those is ~10 ms of model time saved per call. So do a draft's passages
//! ([`Embedder::embed_unstored`], the last [`DRAFT_CACHE`]): a draft is checked again as
//! it grows (`brain similar -` before and after an edit), and only the passages that
//! changed need the model; a 30-line draft's passages are most of a check's time. Stored
//! documents are never cached (each is embedded once anyway, and its vector is stored).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

use super::Embedder;
use crate::error::Result;

/// Query vectors kept (384 or 768 floats each: at most ~800 KB).
pub const QUERY_CACHE: usize = 256;

/// Draft passage vectors kept (at most ~200 KB of 768-float vectors).
pub const DRAFT_CACHE: usize = 64;

/// An embedder whose query and draft passage vectors are remembered.
pub struct CachedQueries {
    inner: Arc<dyn Embedder>,
    queries: Mutex<LruCache<String, Vec<f32>>>,
    drafts: Mutex<LruCache<String, Vec<f32>>>,
}

fn lru(n: usize) -> Mutex<LruCache<String, Vec<f32>>> {
    Mutex::new(LruCache::new(
        NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN),
    ))
}

impl CachedQueries {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Embedder>) -> CachedQueries {
        CachedQueries {
            inner,
            queries: lru(QUERY_CACHE),
            drafts: lru(DRAFT_CACHE),
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

    fn unknown_share(&self, text: &str) -> f32 {
        self.inner.unknown_share(text)
    }

    fn embed_unstored(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let known: Vec<Option<Vec<f32>>> = {
            let mut drafts = self.drafts.lock().unwrap_or_else(|e| e.into_inner());
            texts.iter().map(|t| drafts.get(*t).cloned()).collect()
        };
        // The model runs outside the lock, on the missing passages only, in one call.
        super::fill_missing(texts, known, |missing| {
            let embedded = self.inner.embed_unstored(missing)?;
            let mut drafts = self.drafts.lock().unwrap_or_else(|e| e.into_inner());
            for (text, vector) in missing.iter().zip(&embedded) {
                drafts.put(text.to_string(), vector.clone());
            }
            Ok(embedded)
        })
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

    /// The stand-in, counting query calls (`.1`) and draft passages embedded (`.2`).
    struct Counting(StandIn, AtomicUsize, AtomicUsize);

    fn counting() -> Arc<Counting> {
        Arc::new(Counting(
            StandIn::parse("stand-in-hash-64").unwrap(),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        ))
    }

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
        fn embed_unstored(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.2.fetch_add(texts.len(), Ordering::Relaxed);
            self.0.embed_unstored(texts)
        }
    }

    #[test]
    fn a_repeated_query_runs_the_model_once_and_old_ones_are_dropped() {
        let inner = counting();
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

    #[test]
    fn a_grown_draft_embeds_only_its_new_passages_in_order() {
        let inner = counting();
        let cached = CachedQueries::new(inner.clone());
        let first = cached.embed_unstored(&["intro", "body"]).unwrap();
        assert_eq!(inner.2.load(Ordering::Relaxed), 2);
        let grown = cached
            .embed_unstored(&["intro", "new part", "body"])
            .unwrap();
        assert_eq!(inner.2.load(Ordering::Relaxed), 3, "only the new passage");
        assert_eq!(grown[0], first[0]);
        assert_eq!(grown[2], first[1]);
        assert_eq!(grown[1], inner.0.embed_unstored(&["new part"]).unwrap()[0]);
        // Drafts and queries are kept apart: a query of the same text still runs.
        cached.embed_query("intro").unwrap();
        assert_eq!(inner.1.load(Ordering::Relaxed), 1);
        for i in 0..DRAFT_CACHE {
            cached.embed_unstored(&[&format!("p{i}")]).unwrap();
        }
        cached.embed_unstored(&["intro"]).unwrap();
        assert_eq!(
            inner.2.load(Ordering::Relaxed),
            3 + DRAFT_CACHE + 1,
            "evicted"
        );
    }
}
