//! `brain mcp`: the Model Context Protocol over stdio, for Claude Code and other assistants.
//! It answers from the warm backend when one runs, in-process otherwise. stdout carries the
//! protocol and nothing else; logs go to stderr (Claude Code keeps them in its MCP log). The
//! server ends when the client closes stdin, or stops reading stdout.

mod in_flight;
mod render;
mod stdin;
mod stdout;
mod tools;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use brain::Config;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ServiceExt;
use tracing_subscriber::EnvFilter;

use super::args::McpArgs;
use tools::BrainTools;

/// The longest request line read. The protocol library drops a longer one with no reply
/// (it cannot know the id to answer), so the client waits out its own timeout; its 16 MiB
/// default would drop a draft the `similar` tool accepts (a 10 MB draft of accented or
/// CJK text, each character escaped as `\uXXXX`, is 20 MB of JSON). Room for a draft as
/// long as a note may be (`max_file_mb`), every byte escaped six times over, and the
/// request around it: the tool then refuses a draft over the limit in words.
fn max_line(max_file_bytes: u64) -> usize {
    usize::try_from(max_file_bytes)
        .unwrap_or(usize::MAX)
        .saturating_mul(6)
        .saturating_add(1 << 20)
        .max(rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH)
}

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
    let max_line = max_line(config.max_file_bytes);
    let served = runtime.block_on(async {
        let tools = BrainTools::new(super::shim::answerer(config, &args.daemon));
        let gone = std::sync::Arc::new(tokio::sync::Notify::new());
        let transport = AsyncRwTransport::new_server(
            stdin::repaired(tokio::io::stdin(), max_line, tools.in_flight()),
            stdout::watched(tokio::io::stdout(), gone.clone()),
        )
        .with_max_line_length(max_line);
        let service = match tools.serve(transport).await {
            Ok(service) => service,
            // The client left before the handshake (a probe, a `ping`, a cancelled start):
            // its end of the session, as when it closes stdin after one. Exit 1 with an
            // error there read as a server that failed to start.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(during)) => {
                tracing::debug!(%during, "the client closed stdin before the handshake");
                return Ok(());
            }
            Err(e) => return Err(anyhow::Error::new(e).context("MCP handshake")),
        };
        let session = service.cancellation_token();
        tokio::spawn(async move {
            gone.notified().await;
            tracing::debug!("the client stopped reading stdout: ending the session");
            session.cancel();
        });
        service.waiting().await.context("MCP session")?;
        Ok::<(), anyhow::Error>(())
    });
    // stdin is read on a blocking thread that may still be parked in read(); don't wait on it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served?;
    Ok(ExitCode::SUCCESS)
}
