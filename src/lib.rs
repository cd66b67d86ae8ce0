//! brain: local-first hybrid search over a folder of markdown notes.
//!
//! Three layers, each using only the ones below it:
//!
//! - **The core.** An [`Engine`] owns one brain root's resources: its settings
//!   ([`Config`]), its SQLite index (private: every SQL statement lives there) and, when
//!   installed, a pinned local embedding model ([`model`], [`embed`]) with the vector
//!   matrix it searches. It hands out scoped operations: sync, embed, [`Engine::search`]
//!   (whose stages live in [`search`]), read a note ([`passage`]), status.
//! - **The service.** [`service`] is the warm backend (`brain serve`, hosted by the app):
//!   an engine behind a Unix socket, kept fresh by a file watcher. Its [`Answerer`] is
//!   how every client asks: over the socket when a backend runs, in-process otherwise.
//! - **The shells**, thin: the `brain` CLI (and its MCP server), and the menu-bar app,
//!   whose window-free logic is in [`desktop`]. [`eval`] measures retrieval quality.
//!
//! ```no_run
//! use brain::{search::SearchRequest, Answerer, Config};
//! let config = Config::for_root("/home/me/.brain", "/tmp/brain-data");
//! let brain = Answerer::new(config, true);
//! for hit in brain.search(&SearchRequest::new("feature flag cleanup"))?.results {
//!     println!("{} {}", hit.path, hit.title);
//! }
//! # Ok::<(), brain::service::ServiceError>(())
//! ```
#![deny(missing_docs)]

mod cache_file;
pub mod config;
pub mod date;
pub mod desktop;
pub mod embed;
mod engine;
pub mod error;
pub mod eval;
pub mod file;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
mod index;
pub mod kb;
pub mod model;
pub mod note;
pub mod passage;
#[cfg(test)]
mod properties;
pub mod search;
pub mod service;
pub mod similar;
pub mod text;
pub mod usage;

pub use config::Config;
pub use engine::{
    Backlog, EmbedReport, Engine, Eta, JournalState, Sketches, Status, INLINE_EMBED_MAX,
    NO_MODEL_NOTICE,
};
pub use error::{Error, Result};
pub use index::{RecallTotals, Salvage, SyncOptions, SyncReport, SyncSummary};
pub use service::{Answerer, StatusReport};
