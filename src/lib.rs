//! brain: local-first hybrid search over a folder of markdown notes.
//!
//! The [`Engine`] owns one brain root: its SQLite index ([`index`]), keyword and semantic
//! search ([`search`]) and, when installed, a pinned local embedding model ([`model`],
//! [`embed`]). The `brain` CLI, the warm backend ([`service`]) and the menu-bar app are thin
//! shells over it.
//!
//! ```no_run
//! use brain::{Config, Engine, search::SearchRequest};
//! let engine = Engine::open(Config::for_root("/home/me/.brain", "/tmp/brain-data"))?;
//! engine.sync()?;
//! for hit in engine.search(&SearchRequest::new("feature flag cleanup"))?.results {
//!     println!("{} {}", hit.path, hit.title);
//! }
//! # Ok::<(), brain::Error>(())
//! ```
#![deny(missing_docs)]

pub mod config;
pub mod desktop;
pub mod embed;
mod engine;
pub mod error;
pub mod eval;
pub mod index;
pub mod model;
pub mod note;
pub mod passage;
pub mod search;
pub mod service;

pub use config::Config;
pub use engine::{EmbedReport, Engine, Status};
pub use error::{Error, Result};
