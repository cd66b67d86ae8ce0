//! `brain eval`: retrieval quality per mode on judged query sets (Cranfield; tldr names;
//! tldr paraphrases). Each corpus becomes a brain of its own under
//! `$BRAIN_DATA_DIR/eval/`, indexed and embedded with the configured model once and reused.

pub mod metrics;
pub mod sets;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::search::{Mode, SearchRequest};
use crate::Engine;
use sets::{Corpus, QuerySet};

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Set names (see [`sets::SET_NAMES`]); empty means all.
    pub sets: Vec<String>,
    /// Folder holding `tldr/` and `cranfield/`.
    pub corpora: PathBuf,
    /// Only the first N queries of each set.
    pub limit: Option<usize>,
    /// Index only the judged notes of the chosen queries plus about N others (a quick run).
    pub slice: Option<usize>,
    /// Keep per-query ranks in the report.
    pub details: bool,
}

/// Scores of one mode on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeScore {
    /// The mode.
    pub mode: Mode,
    /// Share of queries with a relevant note first.
    pub recall_at_1: f64,
    /// Share of queries with a relevant note in the top 5.
    pub recall_at_5: f64,
    /// Mean nDCG over the top 10.
    pub ndcg_at_10: f64,
    /// Median in-process query time in milliseconds.
    pub median_ms: f64,
}

/// Where one query's first relevant note landed, per mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDetail {
    /// The query.
    pub query: String,
    /// Rank (1-based) of the first relevant note in bm25, semantic, hybrid order; None if
    /// not in the top 10.
    pub first_relevant: Vec<(Mode, Option<usize>)>,
}

/// Results on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetReport {
    /// Set name.
    pub name: String,
    /// Queries run.
    pub queries: usize,
    /// Notes in the evaluated brain.
    pub notes: u64,
    /// One row per mode.
    pub modes: Vec<ModeScore>,
    /// Per-query ranks (with `details`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<QueryDetail>,
}

/// The whole evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The model used for semantic and hybrid, if installed.
    pub model: Option<String>,
    /// One entry per set.
    pub sets: Vec<SetReport>,
}

/// Runs the evaluation; `progress` receives one line per stage.
pub fn run(
    config: &Config,
    opts: &EvalOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<EvalReport> {
    if !opts.corpora.is_dir() {
        return Err(Error::InvalidInput(format!(
            "corpora folder {} not found (pass --corpora DIR or set BRAIN_CORPORA)",
            opts.corpora.display()
        )));
    }
    let names: Vec<String> = if opts.sets.is_empty() {
        sets::SET_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        opts.sets.clone()
    };
    let mut chosen = Vec::new();
    for name in &names {
        let mut set = sets::load(name, &opts.corpora)?;
        if let Some(limit) = opts.limit {
            set.queries.truncate(limit);
        }
        chosen.push(set);
    }
    let mut model = None;
    let mut reports = Vec::new();
    for set in &chosen {
        let root = prepare_corpus(config, opts, set)?;
        let engine = Engine::open(Config {
            root,
            exclude: Vec::new(),
            ..config.clone()
        })?;
        progress(&format!("{}: indexing", set.name));
        engine.sync()?;
        let started = Instant::now();
        let embedded = engine.embed_pending_with(usize::MAX, &mut |done, total| {
            progress(&format!("{}: embedding {done}/{total} passages", set.name));
            true
        })?;
        if embedded.embedded > 0 {
            let secs = started.elapsed().as_secs_f64();
            progress(&format!(
                "{}: embedded {} passages in {secs:.1} s ({:.1}/s)",
                set.name,
                embedded.embedded,
                embedded.embedded as f64 / secs
            ));
        }
        let semantic = engine.embedder()?.is_some() && embedded.pending == 0;
        if semantic {
            model = embedded.model.clone();
        }
        check_judgements(&engine, set)?;
        reports.push(evaluate(&engine, set, semantic, opts.details)?);
    }
    Ok(EvalReport {
        model,
        sets: reports,
    })
}

/// Every judged path must exist in the corpus: a typo in a query set would otherwise
/// quietly count as a miss.
fn check_judgements(engine: &Engine, set: &QuerySet) -> Result<()> {
    let known = engine.note_paths()?;
    for q in &set.queries {
        if !q.relevant.iter().any(|p| known.contains(p)) {
            return Err(Error::InvalidInput(format!(
                "eval set {}: no judged note of {:?} is in the corpus ({:?})",
                set.name, q.text, q.relevant
            )));
        }
    }
    Ok(())
}

fn evaluate(engine: &Engine, set: &QuerySet, semantic: bool, details: bool) -> Result<SetReport> {
    let modes: Vec<Mode> = if semantic {
        vec![Mode::Bm25, Mode::Semantic, Mode::Hybrid]
    } else {
        vec![Mode::Bm25]
    };
    let mut scores = Vec::new();
    let mut ranks: Vec<Vec<(Mode, Option<usize>)>> = vec![Vec::new(); set.queries.len()];
    for &mode in &modes {
        let (mut r1, mut r5, mut ndcg) = (0.0, 0.0, 0.0);
        let mut times = Vec::with_capacity(set.queries.len());
        for (i, q) in set.queries.iter().enumerate() {
            let req = SearchRequest {
                mode,
                top: 10,
                sync: false,
                ..SearchRequest::new(q.text.clone())
            };
            let started = Instant::now();
            let resp = engine.search(&req)?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            let ranked: Vec<String> = resp.results.into_iter().map(|h| h.path).collect();
            r1 += metrics::hit_at(&ranked, &q.relevant, 1);
            r5 += metrics::hit_at(&ranked, &q.relevant, 5);
            ndcg += metrics::ndcg_at(&ranked, &q.relevant, 10);
            ranks[i].push((
                mode,
                ranked
                    .iter()
                    .position(|p| q.relevant.contains(p))
                    .map(|p| p + 1),
            ));
        }
        let n = set.queries.len().max(1) as f64;
        times.sort_by(f64::total_cmp);
        scores.push(ModeScore {
            mode,
            recall_at_1: r1 / n,
            recall_at_5: r5 / n,
            ndcg_at_10: ndcg / n,
            median_ms: times.get(times.len() / 2).copied().unwrap_or(0.0),
        });
    }
    let details = if details {
        set.queries
            .iter()
            .zip(ranks)
            .map(|(q, first_relevant)| QueryDetail {
                query: q.text.clone(),
                first_relevant,
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(SetReport {
        name: set.name.to_string(),
        queries: set.queries.len(),
        notes: engine.status()?.notes,
        modes: scores,
        details,
    })
}

/// The notes folder for a set's corpus, created under `$BRAIN_DATA_DIR/eval/` on first use.
fn prepare_corpus(config: &Config, opts: &EvalOptions, set: &QuerySet) -> Result<PathBuf> {
    let base = config.data_dir.join("eval");
    let name = match opts.slice {
        Some(n) => format!(
            "{}-{}-slice{n}-q{}",
            set.corpus.dir_name(),
            set.name,
            set.queries.len()
        ),
        None => set.corpus.dir_name().to_string(),
    };
    let dest = base.join(name);
    match set.corpus {
        Corpus::Cranfield => {
            let full = base.join("cranfield");
            sets::write_cranfield_notes(&opts.corpora, &full)?;
            match opts.slice {
                None => Ok(full),
                Some(n) => slice_into(&full, &dest, set, n),
            }
        }
        Corpus::Tldr => {
            let src = opts.corpora.join("tldr");
            match opts.slice {
                None => {
                    copy_once(&src, &dest)?;
                    Ok(dest)
                }
                Some(n) => slice_into(&src, &dest, set, n),
            }
        }
    }
}

fn copy_once(src: &Path, dest: &Path) -> Result<()> {
    let marker = dest.join(".complete");
    if marker.exists() {
        return Ok(());
    }
    for rel in list_md(src)? {
        copy_file(src, dest, &rel)?;
    }
    std::fs::write(&marker, "").map_err(|e| Error::io(&marker, e))
}

/// Copies the judged notes plus an even spread of about `n` others.
fn slice_into(src: &Path, dest: &Path, set: &QuerySet, n: usize) -> Result<PathBuf> {
    let marker = dest.join(".complete");
    if marker.exists() {
        return Ok(dest.to_path_buf());
    }
    let all = list_md(src)?;
    let judged: HashSet<&String> = set.queries.iter().flat_map(|q| q.relevant.iter()).collect();
    let step = (all.len() / n.max(1)).max(1);
    for (i, rel) in all.iter().enumerate() {
        if judged.contains(rel) || i % step == 0 {
            copy_file(src, dest, rel)?;
        }
    }
    std::fs::write(&marker, "").map_err(|e| Error::io(&marker, e))?;
    Ok(dest.to_path_buf())
}

fn copy_file(src: &Path, dest: &Path, rel: &str) -> Result<()> {
    let to = dest.join(rel);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    std::fs::copy(src.join(rel), &to)
        .map(|_| ())
        .map_err(|e| Error::io(&to, e))
}

/// Every `*.md` under `root`, relative and sorted.
fn list_md(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                if let Some(rel) = crate::index::walk::relative(root, &path) {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}
