//! `brain eval`: the retrieval evaluation tables (or, with `--pool`, what is left to judge).

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::eval::report::{EvalMode, ModeScore, QueryDetail, Versus};
use brain::eval::{self, EvalOptions};
use brain::Config;

use super::args::EvalArgs;

/// Runs `brain eval`.
pub fn run(config: Config, args: EvalArgs) -> Result<ExitCode> {
    let config_model = config.model.clone();
    let opts = EvalOptions {
        sets: args.sets,
        corpora: args.corpora,
        limit: args.limit,
        slice: args.slice,
        half: args.half,
        details: args.details,
        pool: args.pool,
        dump: args.dump,
    };
    let tty = io::stderr().is_terminal();
    let report = eval::run(&config, &opts, &mut |line| {
        if tty {
            let _ = write!(io::stderr(), "\r\x1b[K{line}");
        }
    })?;
    if tty {
        let _ = write!(io::stderr(), "\r\x1b[K");
    }
    for skipped in &report.skipped {
        writeln!(io::stderr(), "skipped {skipped}")?;
    }
    let mut out = io::stdout().lock();
    if opts.pool.is_some() {
        for entry in &report.pool {
            writeln!(out, "{}", serde_json::to_string(entry)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    match &report.model {
        Some(m) => writeln!(out, "model: {m}")?,
        // The configured model is the one asked for, whatever else is installed.
        None => writeln!(
            out,
            "model: {config_model} is not installed (bm25 only; run 'brain model fetch {config_model}' or 'brain model import {config_model} DIR', or set BRAIN_MODEL to an installed one)"
        )?,
    }
    for set in &report.sets {
        writeln!(out)?;
        writeln!(
            out,
            "{} ({} quer{}, {} notes)",
            set.name,
            set.queries,
            if set.queries == 1 { "y" } else { "ies" },
            set.notes
        )?;
        writeln!(
            out,
            "  {:<11} {:>4}  {:<9} {:>10} {:>10} {:>7} {:>8} {:>9} {:>7}",
            "class", "n", "mode", "recall@1", "recall@5", "MRR@10", "nDCG@10", "unjudged", "ms"
        )?;
        for c in &set.classes {
            rows(&mut out, &c.class, c.queries, &c.modes)?;
            versus(&mut out, &c.versus)?;
        }
        if set.classes.len() > 1 {
            rows(&mut out, "all", set.queries, &set.modes)?;
            versus(&mut out, &set.versus)?;
        }
        if let Some(v) = &set.vectors {
            writeln!(
                out,
                "  int8 vectors: the same semantic top 10 as an exact f32 scan on {}/{} queries ({} the same notes in any order)",
                v.same_top10, v.queries, v.same_set10
            )?;
            for q in &v.differ {
                writeln!(out, "    differs: {q:?}")?;
            }
        }
        for d in &set.details {
            detail(&mut out, d)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One row per mode: `13/60 .217` style counts and shares.
fn rows(out: &mut impl Write, class: &str, n: usize, modes: &[ModeScore]) -> io::Result<()> {
    for (i, m) in modes.iter().enumerate() {
        let (label, count) = match i {
            0 => (class.to_string(), n.to_string()),
            _ => (String::new(), String::new()),
        };
        writeln!(
            out,
            "  {label:<11} {count:>4}  {:<9} {:>4} {:.3} {:>4} {:.3} {:>7.3} {:>8.3} {:>9} {:>7.1}",
            m.mode.as_str(),
            m.hits_at_1,
            m.recall_at_1,
            m.hits_at_5,
            m.recall_at_5,
            m.mrr_at_10,
            m.ndcg_at_10,
            m.unjudged_at_5,
            m.median_ms
        )?;
    }
    Ok(())
}

/// `hybrid vs bm25: 20 better, 3 worse | vs semantic: ...`
fn versus(out: &mut impl Write, v: &[Versus]) -> io::Result<()> {
    if v.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = v
        .iter()
        .map(|v| format!("vs {} {}+ {}-", v.against.as_str(), v.better, v.worse))
        .collect();
    writeln!(
        out,
        "  {:<11}       hybrid per query: {}",
        "",
        parts.join(", ")
    )
}

/// `  [test paraphrase] how do i ...   bm25=- semantic=3 rrf=5 hybrid=2`
fn detail(out: &mut impl Write, d: &QueryDetail) -> io::Result<()> {
    let rank = |m: EvalMode| {
        d.first_relevant
            .iter()
            .find(|(mode, _)| *mode == m)
            .map(|(_, r)| r.map(|r| r.to_string()).unwrap_or_else(|| "-".into()))
    };
    let ranks: Vec<String> = EvalMode::ALL
        .into_iter()
        .filter_map(|m| rank(m).map(|r| format!("{}={r}", m.as_str())))
        .collect();
    let half = match d.half {
        brain::eval::sets::Half::Tune => "tune",
        brain::eval::sets::Half::Test => "test",
    };
    writeln!(
        out,
        "  [{half} {}] {:<72} {}",
        d.class,
        d.query,
        ranks.join(" ")
    )
}
