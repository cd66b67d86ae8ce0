//! The backend's limit on open files, raised when it starts to what it may hold at once.
//!
//! A socket per client slot; an index connection per thread answering, its file and
//! write-ahead log (SQLite keeps the index file's descriptor of a connection closed while
//! another connection of the process holds a lock on it, and gives it to the next one
//! opened, so a burst of requests leaves as many as it had connections at once); the
//! watcher, the log, the model files. A process started from a macOS shell or by launchd
//! gets a soft limit of 256, below the client slots alone: past it a client was never
//! accepted and waited out its timeout, with only `accept failed: Too many open files` in
//! the log. What is asked for (512 with the default 256 slots) stays far below macOS's
//! per-process ceiling (`OPEN_MAX`, 10,240), which a plain `setrlimit` may not pass.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Open files a backend with `max_clients` client slots and `blocking_threads` threads
/// answering them may hold: a socket per client, an index file and its write-ahead log per
/// thread, and a margin for the rest (refused clients' sockets among them).
pub fn needed(max_clients: usize, blocking_threads: usize) -> u64 {
    (max_clients + 2 * blocking_threads + 128) as u64
}

/// Raises this process's soft limit on open files to `wanted`, never above the hard limit
/// and never lowering it; the limit now in force (`None`: no limit).
pub fn raise_to(wanted: u64) -> std::io::Result<Option<u64>> {
    let Rlimit { current, maximum } = getrlimit(Resource::Nofile);
    let Some(soft) = current else {
        return Ok(None);
    };
    if soft >= wanted {
        return Ok(Some(soft));
    }
    let raised = maximum.map_or(wanted, |hard| hard.min(wanted));
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(raised),
            maximum,
        },
    )?;
    Ok(Some(raised))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_high_enough_is_left_as_it_is() {
        let before = getrlimit(Resource::Nofile);
        // Asking for less than the soft limit in force changes nothing (and never lowers it).
        assert_eq!(raise_to(1).unwrap(), before.current);
        assert_eq!(getrlimit(Resource::Nofile), before);
    }
}
