//! The warm backend: one long-lived process owns the engine (index, model, watcher) and
//! answers on a Unix socket, so a `brain` command costs milliseconds instead of a model load.
//!
//! Three roles, three entry points:
//!
//! - **Host** ([`Backend`]): `brain serve` and the menu-bar app both call
//!   [`Backend::start`]; it takes a lock (one backend per brain root), listens on
//!   [`socket_path`] (mode 0600, in a 0700 folder: `$XDG_RUNTIME_DIR/brain/`, else
//!   `$BRAIN_DATA_DIR/run/`), syncs and then watches the folder, and stops with
//!   [`Backend::shutdown`].
//! - **Client** ([`Client`]): the CLI, `brain get` and the MCP server connect, ask, and do
//!   the work in-process when [`ServiceError::is_unavailable`] says nobody can answer.
//! - **Protocol** ([`protocol`]): one JSON object per line each way, versioned, carrying the
//!   same types `--json` prints.
//!
//! ```no_run
//! use brain::service::{Backend, BackendOptions, Client};
//! use brain::{search::SearchRequest, Config};
//!
//! let config = Config::for_root("/home/me/.brain", "/home/me/.local/share/brain");
//! let backend = Backend::start(config.clone(), BackendOptions::default())?;
//! let hits = Client::connect(&config)?.search(&SearchRequest::new("flag cleanup"))?;
//! println!("{} results", hits.results.len());
//! backend.shutdown();
//! # Ok::<(), brain::service::ServiceError>(())
//! ```

mod answerer;
mod backend;
pub mod capture;
mod client;
mod cookies;
mod error;
mod framing;
mod handler;
mod indexer;
mod local;
mod location;
mod lock;
mod logfile;
mod open_files;
pub mod protocol;
mod rebuild;
mod server;
mod state;
mod watcher;

pub use answerer::{Answerer, FallbackNotice};
pub use backend::{Backend, BackendOptions};
pub use client::{Client, DEFAULT_TIMEOUT};
pub use error::ServiceError;
pub use location::{runtime_dir, socket_path};
pub use lock::backend_holder;
pub use logfile::{log_filter, RotatingLog};
pub use protocol::StatusReport;
pub use rebuild::{clear_abandoned, rebuild, BackendLock, Rebuilt};
pub use state::{BackendEvent, BackendStatus, Fallback, WatcherState};
