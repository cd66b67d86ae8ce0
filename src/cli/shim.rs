//! The CLI as a client of the warm backend: one [`Answerer`] per command, which asks the
//! socket first and does the work in-process when nobody answers, saying so on stderr
//! only when something odd is in the way.

use std::io::{self, Write};

use brain::{Answerer, Config};

use super::args::DaemonArgs;

/// The answerer a command asks, as `--no-daemon` / `BRAIN_NO_DAEMON` say.
pub fn answerer(config: Config, flags: &DaemonArgs) -> Answerer {
    Answerer::new(config, !flags.no_daemon).on_fallback(|e| {
        let _ = writeln!(io::stderr(), "warning: {e}; working in-process");
    })
}
