//! Search: the request and response types the CLI, the socket and the app share, and the
//! ranking pipeline (`pipeline.rs`) with its stages, a file each: query parsing
//! (`query.rs`), keyword search with exact evidence (`bm25.rs`), the semantic scan over a
//! [`Matrix`] (`semantic.rs`), per-query [`Evidence`] (`evidence.rs`), fusion (`fuse.rs`),
//! presentation (`present.rs`, `snippet.rs`) and the typed [`Explain`] (`explain.rs`).
//! The engine hands the pipeline a read transaction and, when a model is ready, the
//! embedder and the vector matrix; a ranking change touches only this folder.

mod bm25;
mod candidates;
mod codes;
mod evidence;
mod explain;
mod fuse;
pub(crate) mod matrix_file;
pub(crate) mod pipeline;
mod present;
pub(crate) mod query;
mod semantic;
mod shortlist;
mod snippet;
mod term_scores;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use crate::index::{Condition, Filters};
pub(crate) use bm25::WEIGHTS as BM25_WEIGHTS;
pub use bm25::{Exact, MARK_CLOSE, MARK_OPEN};
pub(crate) use candidates::term_presence;
pub use evidence::{Evidence, TermStat};
pub use explain::{Explain, FusedEntry, KeywordEntry, SemanticEntry};
pub use fuse::{Weights, K as RRF_K, MAX_ALPHA, UNKNOWN};
pub use pipeline::WhyEmpty;
pub use pipeline::MAX_QUERY_BYTES;
pub(crate) use pipeline::{empty_index_notice, run, validate, Found, Semantic};
pub(crate) use query::{is_stopword_word as is_stopword, term_expr};
pub(crate) use term_scores::TermScores;

/// Which fusion orders a hybrid search: the product's, or plain Reciprocal Rank Fusion
/// over the same two lists (the baseline `brain eval` measures the product against).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Fusion {
    /// The default hybrid ranking.
    #[default]
    Default,
    /// Plain RRF, k = [`RRF_K`].
    Rrf,
}
pub use crate::text::without_controls;
pub use semantic::{dot, Matrix, SemHit, NOTE_WEIGHT};
pub use shortlist::MIN_ROWS as SHORTLIST_MIN_ROWS;
pub use snippet::printable;

/// How to rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Keywords and meaning, fused. The default.
    #[default]
    Hybrid,
    /// Keywords only (FTS5 BM25).
    Bm25,
    /// Meaning only (embeddings).
    Semantic,
}

impl Mode {
    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Bm25 => "bm25",
            Mode::Semantic => "semantic",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "hybrid" => Ok(Mode::Hybrid),
            "bm25" | "keyword" | "keywords" => Ok(Mode::Bm25),
            "semantic" | "meaning" => Ok(Mode::Semantic),
            other => Err(format!(
                "unknown mode {other:?} (expected hybrid, bm25 or semantic)"
            )),
        }
    }
}

/// A search as asked by any client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchRequest {
    /// What the person typed.
    pub query: String,
    /// How to rank.
    #[serde(default)]
    pub mode: Mode,
    /// How many results at most.
    #[serde(default = "default_top")]
    pub top: usize,
    /// Type and tag restrictions.
    #[serde(flatten)]
    pub filters: Filters,
    /// Sync the index with the folder first (a cheap stat walk).
    #[serde(default = "yes")]
    pub sync: bool,
    /// Include the ranking stages in the response.
    #[serde(default)]
    pub explain: bool,
    /// Sent by search as you type (the panel): a search whose text extends or trims the
    /// one logged just before is that search being typed, and replaces its row in the
    /// recall log. Other clients' searches are each their own row, however close. Its last
    /// word, when no note holds it but some note holds a word it starts (`kuberne`), is
    /// searched as that start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub as_you_type: bool,
}

fn default_top() -> usize {
    DEFAULT_TOP
}

fn yes() -> bool {
    true
}

/// Results returned when `--top` is not given.
pub const DEFAULT_TOP: usize = 10;
/// The most results one search may ask for.
pub const MAX_TOP: usize = 1000;

impl SearchRequest {
    /// A request with the defaults: hybrid, top 10, no filters, sync first.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            query: query.into(),
            mode: Mode::default(),
            top: DEFAULT_TOP,
            filters: Filters::default(),
            sync: true,
            explain: false,
            as_you_type: false,
        }
    }
}

/// One result. Field names are a contract with scripts and the Claude skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// Path relative to the brain root.
    pub path: String,
    /// Absolute path on disk.
    pub abs_path: String,
    /// The note's type (collection).
    #[serde(rename = "type")]
    pub kind: String,
    /// The note's title.
    pub title: String,
    /// The note's tags.
    pub tags: Vec<String>,
    /// The note's date, `YYYY-MM-DD`: frontmatter `updated`, else `created`, else a date
    /// in its file name, else the file's modification day.
    #[serde(default)]
    pub date: String,
    /// A passage with matched words in «marks», on one line.
    pub snippet: String,
    /// The score of the mode that ranked it (BM25, cosine similarity, or fused).
    pub score: f64,
    /// 1-based rank in the keyword list, if it was there.
    pub bm25_rank: Option<u32>,
    /// 1-based rank in the semantic list, if it was there.
    pub sem_rank: Option<u32>,
    /// 1-based line of the matched passage in the file.
    pub line: u32,
}

/// The answer to a [`SearchRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    /// The query as asked.
    pub query: String,
    /// The mode that actually ranked the results (hybrid falls back to bm25 without a model).
    pub mode: Mode,
    /// Best first.
    pub results: Vec<Hit>,
    /// This search's row in the recall log; `None` (null) when it could not be written
    /// (a full disk, a read-only data dir: the results stand, a notice says why).
    pub recall_id: Option<i64>,
    /// One line for the person (e.g. why semantic search is off), printed on stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The ranking stages, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Box<Explain>>,
}
