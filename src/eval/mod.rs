//! `brain eval`: retrieval quality per set, per query class and per mode (bm25, semantic,
//! hybrid, and plain RRF as the baseline), with hybrid's per-query wins and losses against
//! each. Each corpus becomes a brain of its own under `$BRAIN_DATA_DIR/eval/`, indexed and
//! embedded with the configured model once and reused.
//!
//! Judging is pooled: `--pool N` lists, for every query, the notes in any mode's top N that
//! nobody judged yet; they are judged (relevant or not) into the set's file, so that every
//! note a mode puts in the top 5 has a verdict (`unjudged_at_5` in the report says when
//! one does not).

pub mod corpus;
pub mod metrics;
pub mod report;
pub mod sets;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::engine::{Engine, Sketches};
use crate::error::{Error, Result};
use crate::search::{Fusion, Mode, SearchRequest};
use report::{ClassReport, EvalMode, QueryDetail, QueryRuns, Ranking, SetReport, VectorCheck};
use sets::{EvalQuery, Half, QuerySet};

/// What to evaluate.
#[derive(Debug, Clone, Default)]
pub struct EvalOptions {
    /// Set names (see [`sets::names`]); empty means every set whose corpus is found.
    pub sets: Vec<String>,
    /// Folders to look for corpora in before the defaults (see [`corpus::search_path`]).
    pub corpora: Vec<PathBuf>,
    /// Only the first N queries of each set.
    pub limit: Option<usize>,
    /// Index only the judged notes of the chosen queries plus about N others (a quick run).
    pub slice: Option<usize>,
    /// Only queries of this half.
    pub half: Option<Half>,
    /// Keep per-query ranks in the report.
    pub details: bool,
    /// List the unjudged notes in any mode's top N (for pooled judging).
    pub pool: Option<usize>,
    /// Write every hybrid query's explanation (top 100 of each list) here, one JSON
    /// object per line, for studying fusions offline.
    pub dump: Option<PathBuf>,
}

/// The whole evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The model used for semantic and hybrid, if installed.
    pub model: Option<String>,
    /// One entry per set evaluated.
    pub sets: Vec<SetReport>,
    /// Sets left out because their corpus was not found, with where it was looked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Unjudged notes to judge (with `--pool`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pool: Vec<PoolEntry>,
}

/// One query's notes that no judgment covers yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolEntry {
    /// The set.
    pub set: String,
    /// The query.
    pub query: String,
    /// Its class.
    pub class: String,
    /// Notes already judged relevant (context for the judge).
    pub relevant: Vec<String>,
    /// The unjudged notes, each with its title and the modes that ranked it.
    pub candidates: Vec<PoolCandidate>,
}

/// An unjudged note in a query's pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolCandidate {
    /// Relative to the corpus.
    pub path: String,
    /// The note's title.
    pub title: String,
    /// The modes that put it in their top N.
    pub modes: Vec<EvalMode>,
}

/// Runs the evaluation; `progress` receives one line per stage.
pub fn run(
    config: &Config,
    opts: &EvalOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<EvalReport> {
    let search = corpus::search_path(&opts.corpora);
    let explicit = !opts.sets.is_empty();
    let names: Vec<String> = if explicit {
        // A set named twice is measured once, where it was first named.
        let mut seen = std::collections::HashSet::new();
        opts.sets
            .iter()
            .filter(|s| seen.insert(s.as_str()))
            .cloned()
            .collect()
    } else {
        sets::names().into_iter().map(String::from).collect()
    };
    // No corpus at all is bad input, not an empty report (exit 0), and is said before
    // anything (the dump file) is written.
    let found_any = names
        .iter()
        .any(|name| sets::corpus_of(name).is_ok_and(|c| corpus::locate(c, &search).is_some()));
    if !explicit && !found_any {
        return Err(corpus::none_found(&search));
    }
    let mut report = EvalReport {
        model: None,
        sets: Vec::new(),
        skipped: Vec::new(),
        pool: Vec::new(),
    };
    let mut dump = match &opts.dump {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::InvalidInput(format!(
                    "--dump {}: its folder does not exist; create it, or name a file in a folder that does",
                    path.display()
                )),
                std::io::ErrorKind::IsADirectory => Error::InvalidInput(format!(
                    "--dump {}: a folder, not a file; name a file to write (in it: {}/dump.jsonl)",
                    path.display(),
                    path.display()
                )),
                _ => Error::io(path, e),
            })?,
        )),
        None => None,
    };
    for name in &names {
        let corpus = sets::corpus_of(name)?;
        let Some(found) = corpus::locate(corpus, &search) else {
            let looked: Vec<String> = search.iter().map(|p| p.display().to_string()).collect();
            let why = format!(
                "{name}: corpus {}/ not found in {}",
                corpus.dir_name(),
                looked.join(", ")
            );
            if explicit {
                return Err(Error::InvalidInput(format!(
                    "{why} (pass --corpora DIR or set BRAIN_CORPORA)"
                )));
            }
            report.skipped.push(why);
            continue;
        };
        let mut set = sets::load(name, &found)?;
        if let Some(half) = opts.half {
            set.queries.retain(|q| q.half == half);
        }
        if let Some(limit) = opts.limit {
            set.queries.truncate(limit);
        }
        let root = corpus::prepare(&config.data_dir.join("eval"), &found, &set, opts.slice)?;
        // The shortlist a large brain's backend searches with, at any size: its agreement
        // with an exact scan is measured on real queries (the vector check below).
        let engine = Engine::open(Config {
            root,
            exclude: Vec::new(),
            ..config.clone()
        })?
        .sketching(Sketches::Always);
        let semantic = index(&engine, &set, progress)?;
        if semantic {
            report.model = Some(config.model.clone());
        }
        check_judgements(&engine, &set)?;
        let runs = run_queries(
            &engine,
            &set,
            semantic,
            opts.pool.unwrap_or(0).max(10),
            progress,
        )?;
        if let Some(n) = opts.pool {
            report.pool.extend(pool(&engine, &set, &runs, n)?);
        }
        if let Some(out) = dump.as_mut() {
            dump_explain(&engine, &set, semantic, out)?;
        }
        let mut summary = summarise(&engine, &set, &runs, opts.details)?;
        if semantic {
            progress(&format!("{}: checking int8 vectors against f32", set.name));
            summary.vectors = Some(check_vectors(&engine, &set, &runs)?);
        }
        report.sets.push(summary);
    }
    if let Some(mut out) = dump {
        out.flush()
            .map_err(|e| Error::io(opts.dump.clone().unwrap_or_default(), e))?;
    }
    Ok(report)
}

/// Syncs and embeds a set's brain; true when semantic search can run on it.
fn index(engine: &Engine, set: &QuerySet, progress: &mut dyn FnMut(&str)) -> Result<bool> {
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
    Ok(engine.embedder()?.is_some() && embedded.pending == 0)
}

/// Every judged path must exist in the corpus: a typo in a query set would otherwise
/// quietly count as a miss.
fn check_judgements(engine: &Engine, set: &QuerySet) -> Result<()> {
    let known = engine.note_paths()?;
    for q in &set.queries {
        if let Some(missing) = q.relevant.iter().find(|p| !known.contains(*p)) {
            return Err(Error::InvalidInput(format!(
                "eval set {}: {missing:?}, judged relevant to {:?}, is not in the corpus",
                set.name, q.text
            )));
        }
    }
    Ok(())
}

/// Each query in each mode: the top `depth` paths.
fn run_queries(
    engine: &Engine,
    set: &QuerySet,
    semantic: bool,
    depth: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<QueryRuns>> {
    let modes: Vec<EvalMode> = match semantic {
        true => EvalMode::ALL.to_vec(),
        false => vec![EvalMode::Bm25],
    };
    let mut out = Vec::with_capacity(set.queries.len());
    for (i, q) in set.queries.iter().enumerate() {
        progress(&format!(
            "{}: query {}/{}",
            set.name,
            i + 1,
            set.queries.len()
        ));
        let mut by_mode = BTreeMap::new();
        for &mode in &modes {
            let req = SearchRequest {
                mode: mode.mode(),
                top: depth,
                sync: false,
                ..SearchRequest::new(q.text.clone())
            };
            let fusion = match mode {
                EvalMode::Rrf => Fusion::Rrf,
                _ => Fusion::Default,
            };
            let started = Instant::now();
            let resp = engine.search_with(&req, fusion)?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let paths = resp.results.into_iter().map(|h| h.path).collect();
            by_mode.insert(mode, Ranking { paths, ms });
        }
        out.push(by_mode);
    }
    Ok(out)
}

/// The semantic list of every query (int8 scan, exact re-rank) against an exact f32 scan.
fn check_vectors(engine: &Engine, set: &QuerySet, runs: &[QueryRuns]) -> Result<VectorCheck> {
    let mut check = VectorCheck::default();
    for (q, run) in set.queries.iter().zip(runs) {
        let (Some(ranked), Some(exact)) = (
            run.get(&EvalMode::Semantic),
            engine.exact_semantic_top(&q.text, 10)?,
        ) else {
            continue;
        };
        let top: Vec<&String> = ranked.paths.iter().take(10).collect();
        let exact: Vec<&String> = exact.iter().collect();
        check.queries += 1;
        check.same_top10 += usize::from(top == exact);
        if top != exact {
            check.differ.push(q.text.clone());
        }
        let (mut a, mut b) = (top.clone(), exact.clone());
        a.sort();
        b.sort();
        check.same_set10 += usize::from(a == b);
    }
    Ok(check)
}

/// The per-set, per-class tables.
fn summarise(
    engine: &Engine,
    set: &QuerySet,
    runs: &[QueryRuns],
    details: bool,
) -> Result<SetReport> {
    let all: Vec<(&EvalQuery, &QueryRuns)> = set.queries.iter().zip(runs).collect();
    let mut classes: Vec<String> = set.queries.iter().map(|q| q.class.clone()).collect();
    classes.sort();
    classes.dedup();
    let classes = classes
        .into_iter()
        .map(|class| {
            let of: Vec<_> = all
                .iter()
                .copied()
                .filter(|(q, _)| q.class == class)
                .collect();
            ClassReport {
                queries: of.len(),
                modes: report::scores(&of),
                versus: report::versus(&of),
                class,
            }
        })
        .collect();
    let details = match details {
        true => all
            .iter()
            .map(|(q, by_mode)| QueryDetail {
                query: q.text.clone(),
                class: q.class.clone(),
                half: q.half,
                first_relevant: by_mode
                    .iter()
                    .map(|(m, r)| (*m, report::first_relevant(q, &r.paths)))
                    .collect(),
            })
            .collect(),
        false => Vec::new(),
    };
    Ok(SetReport {
        name: set.name.to_string(),
        queries: set.queries.len(),
        notes: engine.status()?.notes,
        modes: report::scores(&all),
        versus: report::versus(&all),
        classes,
        details,
        vectors: None,
    })
}

/// The unjudged notes in any mode's top `n`, per query.
fn pool(engine: &Engine, set: &QuerySet, runs: &[QueryRuns], n: usize) -> Result<Vec<PoolEntry>> {
    let mut out = Vec::new();
    for (q, by_mode) in set.queries.iter().zip(runs) {
        let mut found: BTreeMap<String, Vec<EvalMode>> = BTreeMap::new();
        for (mode, r) in by_mode {
            for p in r.paths.iter().take(n).filter(|p| !q.is_judged(p)) {
                found.entry(p.clone()).or_default().push(*mode);
            }
        }
        if found.is_empty() {
            continue;
        }
        let mut candidates = Vec::new();
        for (path, modes) in found {
            candidates.push(PoolCandidate {
                title: engine.note_title(&path)?.unwrap_or_default(),
                path,
                modes,
            });
        }
        let mut relevant: Vec<String> = q.relevant.iter().cloned().collect();
        relevant.sort();
        out.push(PoolEntry {
            set: set.name.to_string(),
            query: q.text.clone(),
            class: q.class.clone(),
            relevant,
            candidates,
        });
    }
    Ok(out)
}

/// One line per query: the query, its judgments, its terms' statistics, and every
/// candidate hybrid weighed (top 100 of each list) with both scores.
fn dump_explain(
    engine: &Engine,
    set: &QuerySet,
    semantic: bool,
    out: &mut impl Write,
) -> Result<()> {
    for q in &set.queries {
        let req = SearchRequest {
            mode: if semantic { Mode::Hybrid } else { Mode::Bm25 },
            top: 25,
            sync: false,
            explain: true,
            as_you_type: false,
            ..SearchRequest::new(q.text.clone())
        };
        let found = engine.find(&req, Fusion::Default, &mut Vec::new())?;
        let presence = engine.term_presence(&found)?;
        let mut candidates = Vec::with_capacity(found.candidates.len());
        for c in &found.candidates {
            let terms: Vec<bool> = presence.iter().map(|p| p.contains(&c.note_id)).collect();
            candidates.push(serde_json::json!({
                "path": engine.path_of(c.note_id)?, "bm25": c.bm25, "bm25_rank": c.bm25_rank,
                "cos": c.cos, "sem_rank": c.sem_rank, "exact": c.exact, "terms": terms,
            }));
        }
        let mut relevant: Vec<&String> = q.relevant.iter().collect();
        relevant.sort();
        let mut judged: Vec<&String> = q.judged.iter().collect();
        judged.sort();
        let terms = found
            .explain
            .as_ref()
            .and_then(|e| e.evidence.as_ref())
            .map(|e| &e.terms);
        let line = serde_json::json!({
            "set": set.name, "query": q.text, "class": q.class, "half": q.half,
            "relevant": relevant, "judged": judged, "notes": engine.status()?.notes,
            "terms": terms, "candidates": candidates,
        });
        writeln!(out, "{line}").map_err(|e| Error::io("eval dump", e))?;
    }
    Ok(())
}
