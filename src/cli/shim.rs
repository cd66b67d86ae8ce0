//! The CLI as a client of the warm backend: ask the socket first, and when nobody can
//! answer, say nothing (or warn, when something odd is in the way) and let the command do
//! the work in-process, exactly as it would without a backend.

use std::io::{self, Write};

use anyhow::Result;
use brain::service::protocol::{Op, Reply};
use brain::service::Client;
use brain::Config;

use super::args::DaemonArgs;

/// The backend's answer to `op`, or `None` when the command should work in-process.
/// An error the backend reports about the request itself is returned as the error.
pub fn ask(config: &Config, flags: &DaemonArgs, op: Op) -> Result<Option<Reply>> {
    if flags.no_daemon {
        return Ok(None);
    }
    let answer = Client::connect(config).and_then(|mut client| client.request(op));
    match answer {
        Ok(reply) => Ok(Some(reply)),
        Err(e) if e.is_unavailable() => {
            if e.is_surprising() {
                writeln!(io::stderr(), "warning: {e}; working in-process")?;
            }
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}
