//! `brain search`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use brain::search::{Filters, SearchRequest};
use brain::Config;

use super::args::{self, SearchArgs};
use super::paint::Paint;
use super::{print, shim};

/// Runs `brain search`.
pub fn run(config: Config, args: SearchArgs, paint: Paint) -> Result<ExitCode> {
    let mut filters = Filters {
        kind: args.kind,
        tag: args.tag,
        since: args.since,
        before: args.before,
        conditions: args.conditions,
    };
    // Refused here, before any backend is asked: "30d" means 30 days before today here.
    filters.resolve()?;
    filters.parsed_conditions()?;
    let query = args::restore_query(&args.query);
    // Said once the search ran: a refused one says only why.
    let hint = args::count_hint(&query);
    let request = SearchRequest {
        query,
        mode: args.mode,
        top: args::top(args.top, brain::search::MAX_TOP)?,
        filters,
        sync: !args.no_sync,
        explain: args.explain,
        as_you_type: false,
    };
    let mut response = shim::answerer(config, &args.daemon).search(&request)?;
    if let Some(hint) = &hint {
        writeln!(io::stderr(), "{hint}")?;
    }
    if let Some(notice) = &response.notice {
        writeln!(io::stderr(), "{notice}")?;
    }
    let mut out = io::stdout().lock();
    if args.json {
        // `notice` carries what stderr said, the hint too.
        response.notice = match (hint, response.notice.take()) {
            (Some(h), Some(n)) => Some(format!("{h}; {n}")),
            (h, n) => h.or(n),
        };
        writeln!(out, "{}", serde_json::to_string(&response)?)?;
    } else {
        if let Some(explain) = &response.explain {
            print::explain(&mut out, explain)?;
        }
        print::search(&mut out, &response, paint)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
