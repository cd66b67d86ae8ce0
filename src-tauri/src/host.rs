//! The brain the app serves: the warm backend (`brain::service::Backend`: engine, socket,
//! watcher, embedder), so the `brain` CLI gets warm answers while the app runs. The panel
//! asks through an [`Answerer`] like every other client: the app's own backend when it is
//! the backend, or the `brain serve` that already serves this brain (in-process when that
//! one stops answering).

use anyhow::Context;
use brain::desktop::status_line::Activity;
use brain::passage::{NoteRef, Passage};
use brain::search::{SearchRequest, SearchResponse};
use brain::service::{Backend, BackendEvent, BackendOptions, ServiceError};
use brain::{Answerer, Config, StatusReport};
use tokio::sync::broadcast::error::RecvError;

/// One brain root, open and kept fresh.
pub struct Host {
    /// The backend the app runs, when it runs one (dropping it stops it).
    _backend: Option<Backend>,
    brain: Answerer,
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
                    brain: backend.answerer(),
                    _backend: Some(backend),
                    notice: None,
                })
            }
            Err(ServiceError::AlreadyRunning { pid, .. }) => {
                let who = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                Ok(Host {
                    _backend: None,
                    brain: Answerer::new(config, true),
                    notice: Some(format!(
                        "brain serve{who} already serves this brain; the app asks it"
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
        Ok(self.brain.search(req)?)
    }

    /// Counts, model and the backend's own state.
    pub fn status(&self) -> anyhow::Result<StatusReport> {
        Ok(self.brain.status()?)
    }

    /// Lines of a note, never outside the brain folder.
    pub fn get(&self, note: &NoteRef) -> anyhow::Result<Passage> {
        Ok(self.brain.get(note)?)
    }

    /// The answerer the panel's questions go through (for the capture and note context).
    pub fn answerer(&self) -> &Answerer {
        &self.brain
    }

    /// Syncs the folder now and waits for it.
    pub fn reindex(&self) -> anyhow::Result<()> {
        self.brain.reindex(false)?;
        Ok(())
    }
}

/// What the status line says about a backend event.
fn activity(event: &BackendEvent) -> Activity {
    match event {
        BackendEvent::SyncStarted { .. } => Activity::Indexing,
        BackendEvent::Failed { message } => Activity::Failed(message.clone()),
        BackendEvent::Embedding {
            done,
            total,
            eta_secs,
        } => Activity::Embedding {
            done: *done,
            total: *total,
            eta_secs: *eta_secs,
        },
        BackendEvent::Synced { .. } | BackendEvent::Embedded(_) | BackendEvent::Watcher(_) => {
            Activity::Idle
        }
    }
}
