//! "Did I already write this?": the notes most like a draft (or a note of the brain), each
//! with a verdict (`duplicate` / `related`) and a reason a person can check, and the
//! clusters of near-duplicates across the whole brain.
//!
//! Cosine of the best passages alone cannot tell the same lesson again from the same tool's
//! other lesson (a related note's best passage is often as close as a duplicate's), so a
//! verdict weighs evidence from both sides of the pair ([`evidence`]): how much of the
//! draft the note covers passage by passage and how much of the note the draft covers,
//! the words and rare words they share, and how alike their titles are. The thresholds
//! ([`verdict`]) were calibrated on the judged drafts in `eval/drafts/` and
//! `eval/drafts-jaebradley/` (`eval/drafts-yutsuten/`, written after, is only reported).

mod between;
mod clusters;
mod draft;
mod evidence;
mod pipeline;
mod terms;
mod verdict;
mod words;

use serde::{Deserialize, Serialize};

pub(crate) use between::Remembered;
pub(crate) use clusters::find_clusters;
pub use draft::check as check_draft;
pub(crate) use draft::{Draft, DRAFT_NAME};
pub use evidence::PairEvidence;
pub(crate) use pipeline::{run, Vectors};
pub use verdict::{rule, Judged, Thresholds, KEYWORDS, MIN_DRAFT_WORDS, SEMANTIC};

/// The most results a similar request may ask for.
pub const MAX_TOP: usize = 50;

fn default_top() -> usize {
    5
}

fn yes() -> bool {
    true
}

/// What to compare: a draft's text, or a note of the brain (which is then never a result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Markdown not saved in the brain (frontmatter allowed).
    Text(String),
    /// A note of the brain, relative to its root.
    Path(String),
}

/// `brain similar`: the fields are a contract of the socket protocol and the MCP tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarRequest {
    /// The draft or the note.
    #[serde(flatten)]
    pub source: Source,
    /// How many candidates to return.
    #[serde(default = "default_top")]
    pub top: usize,
    /// Include each result's evidence.
    #[serde(default)]
    pub explain: bool,
    /// Sync the index with the folder first.
    #[serde(default = "yes")]
    pub sync: bool,
}

/// How a draft relates to a note, or to the whole brain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing in the brain is like it.
    New,
    /// About the same thing, another lesson: link it, do not merge it.
    Related,
    /// The same lesson again: edit that note instead of writing this one.
    Duplicate,
}

impl Verdict {
    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::New => "new",
            Verdict::Related => "related",
            Verdict::Duplicate => "duplicate",
        }
    }
}

/// One note like the draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarHit {
    /// Relative to the brain root.
    pub path: String,
    /// Absolute, to open it.
    pub abs_path: String,
    /// The note's title.
    pub title: String,
    /// The note's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// How much they share, 0..1: meaning and rare words (what `related` is judged on, and
    /// what orders the candidates after the duplicates).
    pub score: f64,
    /// How much they are the same note (what `duplicate` is judged on, and what orders the
    /// duplicates): shared words and meaning, and how far it stands out from the other
    /// candidates. 0..1.5 with a model, 0..1.35 without; absent from an older backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likeness: Option<f64>,
    /// `duplicate` or `related` (`new` for a candidate below both thresholds).
    pub verdict: Verdict,
    /// One line a person can check: what the two share.
    pub reason: String,
    /// The line of the note's passage that aligns best with the draft.
    pub line: u32,
    /// The numbers behind the verdict, with `--explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<PairEvidence>,
}

/// The answer to a [`SimilarRequest`]; `--json` prints this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarResponse {
    /// The draft's verdict: `duplicate` when its best match is one, else `related` when any
    /// is, else `new`.
    pub verdict: Verdict,
    /// The verdict as a line: `duplicate of lore/x.md`, `related to 2 notes`, `new: nothing
    /// like it`.
    pub summary: String,
    /// Duplicates first, by likeness; then the others by score.
    pub results: Vec<SimilarHit>,
    /// `semantic` (passages and words) or `keywords` (no model: words and titles only).
    pub mode: String,
    /// The thresholds that gave the verdicts ([`rule`]): a note of the brain is held to a
    /// stricter one than a draft.
    #[serde(default)]
    pub rule: String,
    /// Something the person should know (no model, pending passages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// Two or more notes that duplicate each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// The notes, relative to the root, sorted.
    pub paths: Vec<String>,
    /// What the closest pair of the cluster shares.
    pub reason: String,
}

/// `brain similar --all`; `--json` prints this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClustersResponse {
    /// Largest first.
    pub clusters: Vec<Cluster>,
    /// `semantic` or `keywords` (no model: notes whose titles are the same words, one
    /// holding half the other's words).
    pub mode: String,
    /// Something the person should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// How many clusters there were in all, when `--top` left some out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
}

impl ClustersResponse {
    /// Keeps the `n` largest clusters, recording how many there were when that drops some.
    pub fn shown(&mut self, n: usize) {
        if self.clusters.len() > n {
            self.total = Some(self.clusters.len());
            self.clusters.truncate(n);
        }
    }
}

/// The summary line for a verdict over `results`.
pub(crate) fn summary(verdict: Verdict, results: &[SimilarHit]) -> String {
    match verdict {
        Verdict::Duplicate => format!(
            "duplicate of {}",
            results.first().map(|h| h.path.as_str()).unwrap_or("?")
        ),
        Verdict::Related => {
            let n = results
                .iter()
                .filter(|h| h.verdict == Verdict::Related)
                .count();
            format!("related to {n} note{}", if n == 1 { "" } else { "s" })
        }
        Verdict::New => "new: nothing like it".into(),
    }
}
