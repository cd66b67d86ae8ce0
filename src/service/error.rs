//! What can go wrong between a client, the socket and the backend.

use std::path::PathBuf;

use super::protocol::{ErrorCode, Fault};

/// A failure to start, reach or use the warm backend.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Nothing is listening for this brain (no socket, or a stale one).
    #[error("no backend is running for this brain (socket {})", socket.display())]
    NotRunning {
        /// Where the socket was looked for.
        socket: PathBuf,
    },
    /// Another backend already serves this brain.
    #[error("brain serve is already running for {root} ({}socket {}); stop it first (the other commands already use it)", pid.map(|p| format!("pid {p}, ")).unwrap_or_default(), socket.display())]
    AlreadyRunning {
        /// The brain folder.
        root: String,
        /// The running backend's pid, when its lock file says.
        pid: Option<u32>,
        /// Its socket.
        socket: PathBuf,
    },
    /// A `brain index --rebuild` holds this brain's index: no backend, and no second
    /// rebuild, until it is done.
    #[error("brain index --rebuild is running for {root}{}; wait for it to finish, then retry", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Rebuilding {
        /// The brain folder.
        root: String,
        /// The rebuild's pid, when its lock file says.
        pid: Option<u32>,
    },
    /// The socket (or something in its place) belongs to another user: never talk to it,
    /// never remove it.
    #[error("{} is owned by uid {owner}, not by you (uid {me}); refusing to use it", path.display())]
    ForeignOwner {
        /// The socket or folder.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// The socket's folder or path cannot be used safely as it is.
    #[error("{}: {reason}", path.display())]
    Unsafe {
        /// The path involved.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The backend speaks another protocol version (it is from another brain release).
    #[error("the running backend speaks protocol {theirs}, this brain speaks {ours}; restart 'brain serve' (or the app)")]
    VersionMismatch {
        /// The backend's version.
        theirs: u32,
        /// Ours.
        ours: u32,
    },
    /// The backend answered with an error.
    #[error("{}", .0.message)]
    Remote(Fault),
    /// The connection ended or timed out before a whole answer arrived.
    #[error("the backend stopped answering: {0}")]
    Disconnected(String),
    /// A request longer than the backend reads (a draft of megabytes for `similar`): not
    /// sent, and answered in-process without a warning, since nothing is wrong.
    #[error("the request is {0} bytes, more than the backend reads in one line")]
    TooLarge(usize),
    /// The backend sent something that is not a response.
    #[error("the backend sent an unreadable response: {0}")]
    Protocol(String),
    /// A file or socket operation failed.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or socket involved.
        path: PathBuf,
        /// The operating system's error, said in the message (not a `source`, which a
        /// chained report would print a second time).
        cause: std::io::Error,
    },
    /// The engine failed while starting the backend.
    #[error(transparent)]
    Engine(#[from] crate::Error),
}

impl ServiceError {
    /// True when a client should quietly do the work itself: no backend, or one that
    /// cannot answer right now. Errors the backend reported about the request are not.
    pub fn is_unavailable(&self) -> bool {
        match self {
            ServiceError::NotRunning { .. }
            | ServiceError::ForeignOwner { .. }
            | ServiceError::Unsafe { .. }
            | ServiceError::VersionMismatch { .. }
            | ServiceError::Disconnected(_)
            | ServiceError::TooLarge(_)
            | ServiceError::Protocol(_)
            | ServiceError::Io { .. } => true,
            ServiceError::Remote(f) => matches!(
                f.code,
                ErrorCode::Busy
                    | ErrorCode::ShuttingDown
                    | ErrorCode::Internal
                    | ErrorCode::OtherSettings
            ),
            ServiceError::AlreadyRunning { .. }
            | ServiceError::Rebuilding { .. }
            | ServiceError::Engine(_) => false,
        }
    }

    /// True when falling back deserves a warning: something is there but is unusable.
    /// "Not running" is the ordinary case and stays silent.
    pub fn is_surprising(&self) -> bool {
        !matches!(
            self,
            ServiceError::NotRunning { .. } | ServiceError::TooLarge(_)
        )
    }

    /// The exit status for a command that fails with this error: the backend's for the
    /// errors it reports, 3 when another backend already runs, else 1 (2 for bad input).
    pub fn exit_code(&self) -> i32 {
        match self {
            ServiceError::Remote(f) => i32::from(f.exit),
            ServiceError::AlreadyRunning { .. } | ServiceError::Rebuilding { .. } => 3,
            // A socket path too long for the OS, or a file in the socket's place: settings
            // or leftovers a person fixes (XDG_RUNTIME_DIR), as a bad setting is.
            ServiceError::Unsafe { .. } => 2,
            ServiceError::Engine(e) => e.exit_code(),
            _ => 1,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ServiceError {
        ServiceError::Io {
            path: path.into(),
            cause: source,
        }
    }
}
