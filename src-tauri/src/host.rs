//! The engine the app serves from, and the one background thread that keeps its index
//! fresh (sync, then embed what is new), reporting what it does as an [`Activity`].

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use anyhow::Context;
use brain::desktop::status_line::Activity;
use brain::{Config, Engine};

/// Work for the background thread.
enum Job {
    /// Bring the index in line with the folder (a cheap stat walk when nothing changed).
    Sync,
    /// Stop after the job in hand.
    Stop,
}

/// One brain root, open and kept fresh.
pub struct Host {
    engine: Arc<Engine>,
    jobs: Sender<Job>,
}

impl Host {
    /// Opens the index for `config.root` and starts the background thread, which syncs at
    /// once; `report` hears every change of activity.
    pub fn start(config: Config, report: impl Fn(Activity) + Send + 'static) -> anyhow::Result<Host> {
        let engine = Arc::new(Engine::open(config).context("could not open the index")?);
        let (jobs, rx) = mpsc::channel();
        let worker = engine.clone();
        std::thread::Builder::new()
            .name("brain-indexer".into())
            .spawn(move || work(&worker, rx, &report))
            .context("could not start the indexing thread")?;
        let host = Host { engine, jobs };
        host.sync();
        Ok(host)
    }

    /// The engine, for searches and reads.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Asks for a sync (and embedding of what is new) in the background.
    pub fn sync(&self) {
        let _ = self.jobs.send(Job::Sync);
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.jobs.send(Job::Stop);
    }
}

fn work(engine: &Engine, rx: Receiver<Job>, report: &dyn Fn(Activity)) {
    while let Ok(job) = rx.recv() {
        if matches!(job, Job::Stop) {
            return;
        }
        // Requests that piled up while a sync ran are served by one more sync, not many.
        let mut stop = false;
        while let Ok(more) = rx.try_recv() {
            stop |= matches!(more, Job::Stop);
        }
        if stop {
            return;
        }
        report(Activity::Indexing);
        let outcome = engine.sync().map_err(anyhow::Error::from).and_then(|_| {
            engine
                .embed_pending_with(usize::MAX, &mut |done, total| report(Activity::Embedding { done, total }))
                .map_err(anyhow::Error::from)
        });
        match outcome {
            Ok(_) => report(Activity::Idle),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "indexing failed");
                report(Activity::Failed(format!("{e:#}")));
            }
        }
    }
}
