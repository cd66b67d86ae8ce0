//! Search: the request and response types shared by the CLI, the socket and the app, and
//! the retrieval stages (BM25 now; semantic and fusion build on the same types).

pub mod bm25;
pub mod evidence;
pub mod fuse;
pub mod query;
pub mod semantic;
pub mod snippet;

use std::fmt;
use std::str::FromStr;

use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};

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

/// Restrictions on which notes may match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filters {
    /// Only notes of this type (case-insensitive).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only notes carrying this tag (case-insensitive, leading `#` ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl Filters {
    /// Appends `AND ...` clauses over the `notes n` alias and their arguments.
    pub(crate) fn push_sql(&self, sql: &mut String, args: &mut Vec<SqlValue>) {
        if let Some(kind) = &self.kind {
            args.push(SqlValue::Text(kind.clone()));
            sql.push_str(&format!(" AND n.type = ?{} COLLATE NOCASE", args.len()));
        }
        if let Some(tag) = &self.tag {
            args.push(SqlValue::Text(tag.trim_start_matches('#').to_string()));
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM json_each(n.tags) WHERE json_each.value = ?{} COLLATE NOCASE)",
                args.len()
            ));
        }
    }

    /// True when no filter is set.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none() && self.tag.is_none()
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
    /// This search's row in the recall log.
    pub recall_id: i64,
    /// One line for the person (e.g. why semantic search is off), printed on stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The ranking stages, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<serde_json::Value>,
}
