//! The brain the app serves: the warm backend (`brain::service::Backend`: engine, socket,
//! watcher, embedder), so the `brain` CLI gets warm answers while the app runs. When
//! another backend already serves this brain (`brain serve`), the app searches the same
//! index in-process instead and says so.

use std::sync::Arc;

use anyhow::Context;
use brain::desktop::status_line::Activity;
use brain::passage::{NoteRef, Passage};
use brain::search::{SearchRequest, SearchResponse};
use brain::service::{Backend, BackendEvent, BackendOptions, ServiceError};
use brain::{Config, Engine, Status};
use tokio::sync::broadcast::error::RecvError;

enum Serving {
    /// The app is the backend.
    Backend(Backend),
    /// Another process is; the app reads the index itself.
    InProcess(Arc<Engine>),
}

/// One brain root, open and kept fresh.
pub struct Host {
    serving: Serving,
    notice: Option<String>,
}

impl Host {
    /// Starts the backend for `config.root` (it syncs, then watches); `report` hears what
    /// it is doing, from a thread of its own.
    pub fn start(
        config: Config,
        report: impl Fn(Activity) + Send + 'static,
    ) -> anyhow::Result<Host> {
        match Backend::start(config.clone(), BackendOptions::default()) {
            Ok(backend) => {
                let mut events = backend.subscribe();
                std::thread::Builder::new()
                    .name("brain-app-events".into())
                    .spawn(move || loop {
                        match events.blocking_recv() {
                            Ok(event) => report(activity(&event)),
                            Err(RecvError::Lagged(_)) => continue,
                            Err(RecvError::Closed) => return,
                        }
                    })
                    .context("could not start the event thread")?;
                Ok(Host {
                    serving: Serving::Backend(backend),
                    notice: None,
                })
            }
            Err(ServiceError::AlreadyRunning { pid, .. }) => {
                let engine = Engine::open(config).context("could not open the index")?;
                let who = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                Ok(Host {
                    serving: Serving::InProcess(Arc::new(engine)),
                    notice: Some(format!(
                        "brain serve{who} already serves this brain; the app searches it directly"
                    )),
                })
            }
            Err(e) => Err(e).context("could not start brain's backend"),
        }
    }

    /// Why the app is not the backend, if it is not.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Searches as a socket client would be answered (syncing first only when the index
    /// is not known to be fresh).
    pub fn search(&self, req: &SearchRequest) -> anyhow::Result<SearchResponse> {
        Ok(match &self.serving {
            Serving::Backend(b) => b.search(req)?,
            Serving::InProcess(e) => e.search(req)?,
        })
    }

    /// Counts, model and (when the app is the backend) the backend's own state.
    pub fn status(&self) -> anyhow::Result<Status> {
        Ok(match &self.serving {
            Serving::Backend(b) => b.status()?,
            Serving::InProcess(e) => e.status()?,
        })
    }

    /// Lines of a note, never outside the brain folder.
    pub fn get(&self, note: &NoteRef) -> anyhow::Result<Passage> {
        Ok(self.engine().get(note)?)
    }

    /// Syncs the folder now and waits for it.
    pub fn reindex(&self) -> anyhow::Result<()> {
        match &self.serving {
            Serving::Backend(b) => b.reindex(false).map(drop)?,
            Serving::InProcess(e) => e.sync().map(drop)?,
        }
        Ok(())
    }

    fn engine(&self) -> &Arc<Engine> {
        match &self.serving {
            Serving::Backend(b) => b.engine(),
            Serving::InProcess(e) => e,
        }
    }
}

/// What the status line says about a backend event.
fn activity(event: &BackendEvent) -> Activity {
    match event {
        BackendEvent::SyncStarted { .. } => Activity::Indexing,
        BackendEvent::Failed { message } => Activity::Failed(message.clone()),
        BackendEvent::Synced { .. } | BackendEvent::Embedded(_) | BackendEvent::Watcher(_) => {
            Activity::Idle
        }
    }
}
