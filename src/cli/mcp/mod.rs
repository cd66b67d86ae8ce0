//! `brain mcp`: the Model Context Protocol over stdio, for Claude Code and other assistants.
//! It answers from the warm backend when one runs, in-process otherwise. stdout carries the
//! protocol and nothing else; logs go to stderr (Claude Code keeps them in its MCP log). The
//! server ends when the client closes stdin.

mod render;
mod stdin;
mod tools;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use brain::Config;
use rmcp::ServiceExt;
use tracing_subscriber::EnvFilter;

use super::args::McpArgs;
use tools::BrainTools;

/// Runs `brain mcp` until the client hangs up.
pub fn run(config: Config, args: McpArgs) -> Result<ExitCode> {
    let level = match args.log_level.trim() {
        "" => "warn",
        level => level,
    };
    let filter = EnvFilter::try_new(level).map_err(|e| {
        brain::Error::InvalidInput(format!("--log-level {:?}: {e}", args.log_level))
    })?;
    // try_init: a second subscriber (tests, embedding) is not worth failing over.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();

    // One protocol thread is plenty: searches run on the blocking pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP server's runtime")?;
    let served = runtime.block_on(async {
        let tools = BrainTools::new(super::shim::answerer(config, &args.daemon));
        let service = tools
            .serve((stdin::repaired(tokio::io::stdin()), tokio::io::stdout()))
            .await
            .context("MCP handshake")?;
        service.waiting().await.context("MCP session")?;
        Ok::<(), anyhow::Error>(())
    });
    // stdin is read on a blocking thread that may still be parked in read(); don't wait on it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served?;
    Ok(ExitCode::SUCCESS)
}
