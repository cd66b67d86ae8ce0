//! `brain eval`: the retrieval evaluation table.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::eval::{self, EvalOptions};
use brain::Config;

use super::args::EvalArgs;

/// Runs `brain eval`.
pub fn run(config: Config, args: EvalArgs) -> Result<ExitCode> {
    let opts = EvalOptions {
        sets: args.sets,
        corpora: args.corpora.unwrap_or_else(eval::sets::default_corpora),
        limit: args.limit,
        slice: args.slice,
        details: args.details,
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
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    match &report.model {
        Some(m) => writeln!(out, "model: {m}")?,
        None => writeln!(
            out,
            "model: none installed (bm25 only; run 'brain model fetch')"
        )?,
    }
    writeln!(
        out,
        "{:<17} {:>7} {:>6}  {:<9} {:>9} {:>9} {:>8} {:>8}",
        "set", "queries", "notes", "mode", "recall@1", "recall@5", "nDCG@10", "ms/query"
    )?;
    for set in &report.sets {
        for m in &set.modes {
            writeln!(
                out,
                "{:<17} {:>7} {:>6}  {:<9} {:>9.3} {:>9.3} {:>8.3} {:>8.1}",
                set.name,
                set.queries,
                set.notes,
                m.mode.as_str(),
                m.recall_at_1,
                m.recall_at_5,
                m.ndcg_at_10,
                m.median_ms
            )?;
        }
        for d in &set.details {
            let ranks: Vec<String> = d
                .first_relevant
                .iter()
                .map(|(mode, r)| {
                    format!(
                        "{}={}",
                        mode.as_str(),
                        r.map(|r| r.to_string()).unwrap_or_else(|| "-".into())
                    )
                })
                .collect();
            writeln!(out, "    {:<70} {}", d.query, ranks.join(" "))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
