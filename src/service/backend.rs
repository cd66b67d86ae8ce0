//! The backend assembled in one place: lock, engine, socket, server, indexer, watcher and
//! embedder, started together and stopped together. `brain serve` and the app both call
//! [`Backend::start`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{broadcast, watch};

use super::cookies::Cookies;
use super::error::ServiceError;
use super::handler::Handler;
use super::indexer::{self, Indexer, Job, Wiring};
use super::location::{
    bind_socket, clear_stale_socket, ensure_private_dir, runtime_dir, socket_path,
};
use super::lock::{Holder, InstanceLock};
use super::server::{self, Limits};
use super::state::{BackendEvent, Live};
use super::Answerer;
use crate::engine::Sketches;
use crate::{Config, Engine};

/// How a backend runs.
#[derive(Debug, Clone)]
pub struct BackendOptions {
    /// Watch the folder and keep the index fresh (else searches sync first, as the CLI does).
    pub watch: bool,
    /// How long a client may take to send a request line or read an answer.
    pub client_timeout: Duration,
    /// Clients served at once.
    pub max_clients: usize,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions {
            watch: true,
            client_timeout: Duration::from_secs(60),
            max_clients: 256,
        }
    }
}

/// Threads that answer requests at once (each may hold an index connection).
const BLOCKING_THREADS: usize = 64;

/// How long stopping waits for a sync to reach the end of its batch; SQLite keeps the index
/// consistent even if it does not.
const STOP_WAIT: Duration = Duration::from_secs(30);

/// A running backend. Dropping it stops it (as [`Backend::shutdown`] does).
pub struct Backend {
    engine: Arc<Engine>,
    handler: Arc<Handler>,
    socket: PathBuf,
    events: broadcast::Sender<BackendEvent>,
    stop: Arc<AtomicBool>,
    jobs: Sender<Job>,
    /// Wakes the embedder (the handler holds a sender too, so the channel never closes
    /// while the backend lives: stopping wakes it to see `stop`).
    embed: SyncSender<()>,
    shutdown: watch::Sender<bool>,
    server: Option<JoinHandle<()>>,
    indexer: Option<JoinHandle<()>>,
    embedder: Option<JoinHandle<()>>,
    lock: Option<InstanceLock>,
}

impl Backend {
    /// Starts serving `config.root`: takes the one-backend-per-root lock, opens the index,
    /// listens on the socket, then syncs and watches in the background. Returns once
    /// clients can connect; fails at once when another backend already serves this root.
    pub fn start(config: Config, options: BackendOptions) -> Result<Backend, ServiceError> {
        let root = config.root.to_string_lossy().into_owned();
        let socket = socket_path(&config);
        let lock = InstanceLock::for_backend(&config, Holder::Backend)?;
        // With the lock, no rebuild runs: a staging index beside this one is a killed one's.
        if let Err(e) = crate::index::rebuild::remove_abandoned(&config.index_path()) {
            tracing::warn!(error = %e, "a killed rebuild's leftovers could not be removed");
        }
        ensure_private_dir(&runtime_dir(&config))?;
        clear_stale_socket(&socket, &root)?;
        let engine = Arc::new(
            Engine::open(config)?
                .without_matrix_writes()
                .sketching(Sketches::Large)
                .remembering_terms(),
        );
        let listener = bind_socket(&socket)?;

        let live = Arc::new(Live::new(socket.clone(), options.watch));
        // In the index's folder: the notes folder is the person's, written only on request.
        let cookies = Arc::new(Cookies::new(
            engine.config().index_dir().join("watch-cookies"),
        ));
        let (events, _) = broadcast::channel(64);
        let stop = Arc::new(AtomicBool::new(false));
        let (jobs, rx) = mpsc::channel();
        let (embed, wake) = mpsc::sync_channel(1);
        let handler = Arc::new(Handler::new(
            engine.clone(),
            live.clone(),
            jobs.clone(),
            embed.clone(),
            cookies.clone(),
        ));
        let (shutdown, shutdown_rx) = watch::channel(false);

        let wanted = super::open_files::needed(options.max_clients, BLOCKING_THREADS);
        match super::open_files::raise_to(wanted) {
            Ok(Some(limit)) if limit < wanted => tracing::warn!(
                limit,
                wanted,
                "the open-file limit is below what the backend may need: clients past it wait (raise the hard limit: ulimit -Hn)"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "the open-file limit could not be raised"),
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(BLOCKING_THREADS)
            .thread_name("brain-serve")
            .enable_all()
            .build()
            .map_err(|e| ServiceError::io(&socket, e))?;
        let limits = Limits {
            client_timeout: options.client_timeout,
            max_clients: options.max_clients,
        };
        let server = {
            let handler = handler.clone();
            let socket_path = socket.clone();
            spawn("brain-server", move || {
                let served = runtime.block_on(async move {
                    let listener = tokio::net::UnixListener::from_std(listener)?;
                    server::serve(listener, &socket_path, handler, limits, shutdown_rx).await;
                    Ok::<(), std::io::Error>(())
                });
                if let Err(e) = served {
                    tracing::error!(error = %e, "the socket server could not run");
                }
                // Connections still open get a moment to finish their answer.
                runtime.shutdown_timeout(Duration::from_secs(2));
            })?
        };
        let wiring = Wiring {
            engine: engine.clone(),
            live: live.clone(),
            events: events.clone(),
            stop: stop.clone(),
            jobs: jobs.clone(),
            rx,
            embed: embed.clone(),
            watch: options.watch,
            cookies,
        };
        let indexer = spawn("brain-indexer", move || Indexer::new(wiring).run())?;
        let embedder = {
            let (engine, live, events, stop) =
                (engine.clone(), live.clone(), events.clone(), stop.clone());
            spawn("brain-embedder", move || {
                indexer::embed_loop(engine, live, events, wake, stop)
            })?
        };
        tracing::info!(root = %engine.config().root.display(), socket = %socket.display(), pid = std::process::id(), "backend started");
        Ok(Backend {
            engine,
            handler,
            socket,
            events,
            stop,
            jobs,
            embed,
            shutdown,
            server: Some(server),
            indexer: Some(indexer),
            embedder: Some(embedder),
            lock: Some(lock),
        })
    }

    /// Answers as socket clients are answered, without the socket: for the process that
    /// hosts the backend (the app).
    pub fn answerer(&self) -> Answerer {
        Answerer::hosted(self.engine.config().clone(), self.handler.clone())
    }

    /// The socket clients connect to.
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// Progress events (syncs, embedding, watcher changes), for a status line.
    pub fn subscribe(&self) -> broadcast::Receiver<BackendEvent> {
        self.events.subscribe()
    }

    /// Stops: no new clients, open ones finish their answer, a running sync stops after
    /// the batch in hand, then the socket is removed and the lock released.
    pub fn shutdown(mut self) {
        self.stop_all();
    }

    fn stop_all(&mut self) {
        if self.lock.is_none() {
            return;
        }
        tracing::info!("backend stopping");
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.jobs.send(Job::Stop);
        let _ = self.shutdown.send(true);
        if let Some(t) = self.server.take() {
            let _ = t.join();
        }
        if let Some(t) = self.indexer.take() {
            join_within(t, STOP_WAIT, "indexer");
        }
        // Woken to find `stop` set (a full channel means a wake-up is waiting already).
        let _ = self.embed.try_send(());
        if let Some(t) = self.embedder.take() {
            join_within(t, STOP_WAIT, "embedder");
        }
        // Before the lock goes: a successor may bind the same path right after.
        if let Err(e) = std::fs::remove_file(&self.socket) {
            tracing::warn!(error = %e, socket = %self.socket.display(), "could not remove the socket");
        }
        self.lock = None;
        tracing::info!("backend stopped");
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.stop_all();
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, ServiceError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| ServiceError::io(name, e))
}

/// Joins `thread`, or leaves it behind after `limit` (the process is exiting anyway).
fn join_within(thread: JoinHandle<()>, limit: Duration, what: &str) {
    let deadline = std::time::Instant::now() + limit;
    while !thread.is_finished() {
        if std::time::Instant::now() >= deadline {
            tracing::warn!("{what} did not stop within {limit:?}; leaving it");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = thread.join();
}
